#!/bin/bash
# exhaustive.sh -- the exhaustive suite tround_fast_exhaustive sharded over
# MPI ranks (label mpi), on a sample of its chunks (LOWP_EXHAUSTIVE_CHUNKS):
# -np 2 and -np 3 agree with one process; a mismatch planted on one rank
# (LOWP_EXHAUSTIVE_INJECT) is reported with its input and the job exits 1.
# Run: bash tests/mpi/mpi_exhaustive.sh path/to/lowp path/to/mpiexec path/to/tround_fast_exhaustive
set -u
MPIEXEC=${2:-none}
EXH=${3:?usage: exhaustive.sh path/to/lowp path/to/mpiexec path/to/tround_fast_exhaustive}
. "$(dirname "${BASH_SOURCE[0]}")/mpi_harness.bash"
export OMP_NUM_THREADS=1
export LOWP_EXHAUSTIVE_CHUNKS=8

"$EXH" e4m3 fp16 >"$T/one" 2>&1 || bad "one process failed: $(cat "$T/one")"
for np in 2 3; do
  if ! MPI -np $np "$EXH" e4m3 fp16 >"$T/many" 2>&1; then bad "-np $np failed: $(cat "$T/many")"; continue; fi
  # the verdict lines, but for the rank count
  if diff <(grep 'rne:' "$T/one" | sed 's/over [0-9]* rank(s)//') \
          <(grep 'rne:' "$T/many" | sed 's/over [0-9]* rank(s)//') >/dev/null &&
     [ "$(grep -c 'all inputs agree' "$T/many")" -eq 2 ]; then ok
  else bad "-np $np: verdicts differ: $(cat "$T/many")"; fi
done

# input 0x3f800005 is in chunk 5: rank 1 of 2, rank 2 of 3
for np in 2 3; do
  LOWP_EXHAUSTIVE_INJECT=0x3f800005 MPI -np $np "$EXH" e4m3 >"$T/inj" 2>&1; rc=$?
  if [ $rc -ne 1 ]; then bad "-np $np planted mismatch: exit $rc, want 1: $(cat "$T/inj")"; continue; fi
  if grep -q 'x = 0x3f800005' "$T/inj" && grep -q 'MISMATCH' "$T/inj" &&
     grep -q '1 of the inputs checked differ' "$T/inj"; then ok
  else bad "-np $np planted mismatch not reported with its input: $(cat "$T/inj")"; fi
done

echo "mpi exhaustive: $pass passed, $fail failed"
[ $fail -eq 0 ]
