#!/bin/bash
# gemm.sh -- lowp gemm under mpirun -np 2 and -np 3 (label mpi): the exact C
# (--out-exact) and the measured numbers byte-identical to the one-process
# run, for seeded inputs (each rank generates its rows), .npy inputs (read by
# every rank), uneven row blocks, a tensor-core model and an accumulation
# order; and the job failures: more ranks than rows, a rank that cannot read
# its input, mixed builds, a bad output path -- each exit 2, one message, no
# output file, no hang (every mpirun runs under `timeout`).
# Open MPI in a container runs as root and with more ranks than cores only
# with --allow-run-as-root --oversubscribe (or the environment below).
# Run: bash tests/mpi/mpi_gemm.sh path/to/lowp path/to/mpiexec   (skips: exit 77 without MPI)
set -u
LOWP=${1:?usage: gemm.sh path/to/lowp path/to/mpiexec}
MPIEXEC=${2:-none}
MPI_TIMEOUT=120
FAILS_OUT=bad.npy
. "$(dirname "${BASH_SOURCE[0]}")/mpi_harness.bash"
export OMP_NUM_THREADS=1

# the JSON without the wall times and the output file name
strip() { grep -v '"time_\|"out_exact"' "$1"; }

# same NAME ARGS...: one process, then -np 2 and -np 3; C and JSON compared
same() {
  local name=$1; shift
  "$LOWP" gemm "$@" --json --out-exact "$T/c1.npy" >"$T/j1" 2>"$T/e1" ||
    { bad "$name: one process failed: $(cat "$T/e1")"; return; }
  for np in 2 3; do
    rm -f "$T/cN.npy"
    if ! MPI -np $np "$LOWP" gemm "$@" --json --out-exact "$T/cN.npy" >"$T/jN" 2>"$T/eN"; then
      bad "$name: -np $np failed: $(cat "$T/eN")"; continue
    fi
    if ! cmp -s "$T/c1.npy" "$T/cN.npy"; then bad "$name: -np $np: exact C differs"; continue; fi
    if ! diff <(strip "$T/j1") <(strip "$T/jN") >/dev/null; then
      bad "$name: -np $np: measured numbers differ"; continue
    fi
    if [ -s "$T/eN" ]; then bad "$name: -np $np printed on stderr: $(cat "$T/eN")"; continue; fi
    ok
  done
}

same "seeded, 7 rows over 2 and 3 ranks (uneven)" --m 7 --n 13 --k 200 --seed 11
# the thread count inside the ranks does not matter either (2 ranks x 2 threads)
"$LOWP" gemm --m 9 --n 8 --k 100 --seed 6 --out-exact "$T/t1.npy" >/dev/null 2>&1 &&
  OMP_NUM_THREADS=2 MPI -np 2 "$LOWP" gemm --m 9 --n 8 --k 100 --seed 6 --threads 2 \
    --out-exact "$T/t2.npy" >/dev/null 2>&1 && cmp -s "$T/t1.npy" "$T/t2.npy" && ok ||
  bad "2 ranks x 2 threads: exact C differs from one process of one thread"
same "seeded bf16/bf16 uniform" --m 24 --n 5 --k 333 --in bf16 --acc bf16 --dist uniform11 --seed 3
same "cancel (whole inputs on every rank)" --m 8 --n 6 --k 64 --in e4m3 --acc fp16 --dist cancel
same "tensor-core model" --m 10 --n 7 --k 100 --model h100 --in e4m3 --seed 2
same "order kahan" --m 9 --n 4 --k 120 --order kahan --acc bf16 --seed 4

# .npy inputs, read by every rank: A and B are exact results written by lowp itself
"$LOWP" gemm --m 11 --n 17 --k 40 --seed 8 --out-exact "$T/A.npy" >/dev/null &&
  "$LOWP" gemm --m 17 --n 6 --k 30 --seed 9 --dist uniform01 --out-exact "$T/B.npy" >/dev/null ||
  bad "making .npy inputs"
same ".npy inputs (rounded to bf16)" --a "$T/A.npy" --b "$T/B.npy" --in bf16 --acc fp32

# the single process of an MPI build is the plain program (no MPI_Init)
"$LOWP" gemm --m 3 --n 3 --k 3 >/dev/null 2>"$T/e" && [ ! -s "$T/e" ] && ok ||
  bad "plain run of the MPI build: $(cat "$T/e")"

"$LOWP" gemm --m 1 --n 5 --k 3 --out-exact "$T/A1.npy" >/dev/null &&
  "$LOWP" gemm --m 5 --n 4 --k 3 --out-exact "$T/B1.npy" >/dev/null || bad "making A1, B1"
# the jobs that fail run side by side (fails_bg, tests/mpi/mpi_harness.bash), outputs in their own $J
job; fails_bg "more ranks than rows" "3 MPI ranks for 2 rows" \
  -np 3 "$LOWP" gemm --m 2 --n 5 --k 5 --out-exact "$J/bad.npy"
job; fails_bg "more ranks than rows (.npy)" "3 MPI ranks for 1 rows" \
  -np 3 "$LOWP" gemm --a "$T/A1.npy" --b "$T/B1.npy" --out-exact "$J/bad.npy"
# rank 1 (of 2, and of 3) cannot read its input: A is missing on its "node"
job; fails_bg "rank 1 cannot read --a" "nothere.npy: cannot open" \
  -np 1 "$LOWP" gemm --a "$T/A.npy" --b "$T/B.npy" --out-exact "$J/bad.npy" : \
  -np 1 "$LOWP" gemm --a "$T/nothere.npy" --b "$T/B.npy" --out-exact "$J/bad.npy"
job; fails_bg "rank 2 of 3 cannot read --b" "nothere.npy: cannot open" \
  -np 2 "$LOWP" gemm --a "$T/A.npy" --b "$T/B.npy" --out-exact "$J/bad.npy" : \
  -np 1 "$LOWP" gemm --a "$T/A.npy" --b "$T/nothere.npy" --out-exact "$J/bad.npy"
job; fails_bg "every rank fails: one message" "unknown option '--bogus'" \
  -np 3 "$LOWP" gemm --m 5 --n 5 --k 5 --bogus
job; fails_bg "mixed builds" "mixed builds in one MPI job" \
  -np 1 env LOWP_PAR_BUILD_ID=lowp-0.0-other "$LOWP" gemm --m 5 --n 5 --k 5 --out-exact "$J/bad.npy" : \
  -np 2 "$LOWP" gemm --m 5 --n 5 --k 5 --out-exact "$J/bad.npy"
job; fails_bg "unwritable output (rank 0 checks it)" "cannot create a file" \
  -np 2 "$LOWP" gemm --m 5 --n 5 --k 5 --out-exact "$J/nofolder/bad.npy"
job; fails_bg "a command that runs as one process" "runs as one process" -np 2 "$LOWP" formats
fails_wait

echo "mpi gemm: $pass passed, $fail failed"
[ $fail -eq 0 ]
