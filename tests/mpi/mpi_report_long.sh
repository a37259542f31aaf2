#!/bin/bash
# report_long.sh -- lowp report --quick under mpirun -np 2 and -np 3 (labels
# mpi and long: a few minutes here): the ranks run whole experiments and send
# their folders to rank 0; the report folder is byte-identical to the
# one-process run. More ranks than experiments: exit 2, one message.
# Run: bash tests/mpi/mpi_report_long.sh path/to/lowp path/to/mpiexec   (skips: exit 77 without MPI)
set -u
LOWP=${1:?usage: report_long.sh path/to/lowp path/to/mpiexec}
MPIEXEC=${2:-none}
MPI_TIMEOUT=900
. "$(dirname "${BASH_SOURCE[0]}")/mpi_harness.bash"

"$LOWP" report --quick --out "$T/one" >/dev/null 2>"$T/e1"; rc1=$?
for np in 2 3; do
  rm -rf "$T/many"
  MPI -np $np "$LOWP" report --quick --out "$T/many" >/dev/null 2>"$T/eN"; rc=$?
  if [ $rc -ne $rc1 ]; then bad "-np $np: exit $rc, one process $rc1: $(tail -3 "$T/eN")"; continue; fi
  # measured times differ from run to run: amp-speedup's kernels (experiments/amp_speedup.c names the
  # files) and order-revelation's timing.csv; every other file must be the same bytes
  for d in one many; do
    rm -f "$T/$d"/amp-speedup/{timing.json,cpu_kernels.csv,gpu_kernels.csv,summary.md} "$T/$d"/order-revelation/timing.csv
  done
  if diff -r "$T/one" "$T/many" >"$T/d"; then
    ok
  else
    bad "-np $np: folders differ: $(diff -rq "$T/one" "$T/many" | head -8)"
  fi
done
# issue 30: a failure on one side of the exchange of folders (rank 0 cannot write one, or a rank
# cannot read its own: LOWP_FAULT=report-exchange:R) ends every rank, once, without a hang (the
# other ranks' sends are still received)
for r in 0 2; do
  rm -rf "$T/many"
  LOWP_FAULT=report-exchange:$r MPI -np 3 -x LOWP_FAULT "$LOWP" report --quick --out "$T/many" >/dev/null 2>"$T/eN"; rc=$?
  [ $rc -eq 2 ] && [ "$(grep -vc '^lowp report: \[' "$T/eN")" -eq 1 ] && ok ||
    bad "-np 3, the exchange fails on rank $r: exit $rc: $(grep -v '^lowp report: \[' "$T/eN" | head -3)"
done
n=$("$LOWP" list | wc -l)
MPI -np $((n + 1)) "$LOWP" report --quick --out "$T/bad" >/dev/null 2>"$T/err"; rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "MPI ranks for $n experiments" "$T/err" &&
   [ ! -e "$T/bad" ]; then ok
else bad "more ranks than experiments: exit $rc: $(cat "$T/err")"; fi
echo "mpi report: $pass passed, $fail failed"
[ $fail -eq 0 ]
