#!/bin/bash
# check.sh -- lowp check under mpirun -np 2 and -np 3 (label mpi): the checks
# are spread over the ranks and rank 0 writes; the report lines, --json (but
# the wall times), --junit (but the times) and an updated baseline are the
# one-process run's, for passing checks (tests/data/check/kernels.json) and a
# failing one (the example plugin's planted kernel: exit 1 either way); more
# ranks than checks, and a rank that cannot read the spec: exit 2, one
# message, nothing written.
# Run: bash tests/mpi/mpi_check.sh path/to/lowp path/to/mpiexec   (skips: exit 77 without MPI)
set -u
LOWP=${1:?usage: check.sh path/to/lowp path/to/mpiexec}
MPIEXEC=${2:-none}
FAILS_OUT=bad.json
. "$(dirname "${BASH_SOURCE[0]}")/mpi_harness.bash"
notime() { grep -v '"time_' "$1" | sed 's/ time="[0-9.]*"//g'; }

SPEC=tests/data/check/kernels.json
"$LOWP" check "$SPEC" --json "$T/j1" --junit "$T/x1" >"$T/o1" 2>/dev/null; rc1=$?
for np in 2 3; do
  rm -f "$T/jN" "$T/xN"
  MPI -np $np "$LOWP" check "$SPEC" --json "$T/jN" --junit "$T/xN" >"$T/oN" 2>"$T/eN"; rc=$?
  if [ $rc -ne $rc1 ]; then bad "kernels.json -np $np: exit $rc, one process $rc1: $(head -3 "$T/eN")"; continue; fi
  cmp -s "$T/o1" "$T/oN" || { bad "kernels.json -np $np: report lines differ"; continue; }
  diff <(notime "$T/j1") <(notime "$T/jN") >/dev/null || { bad "kernels.json -np $np: --json differs"; continue; }
  diff <(notime "$T/x1") <(notime "$T/xN") >/dev/null || { bad "kernels.json -np $np: --junit differs"; continue; }
  ok
done

# the example plugin: one check passes, the planted one fails (exit 1);
# --update-baseline rewrites the baseline the same way
PLUG=$(dirname "$LOWP")/plugins/example_kernels.so
if [ -f "$PLUG" ]; then
  for d in one two; do
    mkdir -p "$T/$d" && cp examples/check/precision.json examples/check/precision.baseline.json "$PLUG" "$T/$d/"
  done
  (cd "$T/one" && "$LOWP" check precision.json --update-baseline >../b1 2>/dev/null); r1=$?
  (cd "$T/two" && MPI -np 2 "$LOWP" check precision.json --update-baseline >../b2 2>/dev/null); r2=$?
  if [ $r1 -eq 1 ] && [ $r2 -eq 1 ] && cmp -s "$T/b1" "$T/b2" &&
     cmp -s "$T/one/precision.baseline.json" "$T/two/precision.baseline.json"; then ok
  else bad "example plugin -np 2: exit $r1/$r2, or lines or baseline differ"; fi
else
  bad "no example plugin at $PLUG"
fi

job; fails_bg "more ranks than checks" "3 MPI ranks for 2 checks" \
  -np 3 "$LOWP" check "$T/one/precision.json" --json "$J/bad.json"
job; fails_bg "rank 1 cannot read the spec" "nothere.json" \
  -np 1 "$LOWP" check "$SPEC" --json "$J/bad.json" : -np 1 "$LOWP" check "$T/nothere.json" --json "$J/bad.json"
fails_wait

echo "mpi check: $pass passed, $fail failed"
[ $fail -eq 0 ]
