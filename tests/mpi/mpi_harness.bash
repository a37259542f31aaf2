# mpi_harness.bash -- what every tests/mpi/*.sh shares; sourced, not a test (the
# ctest glob takes *.sh). Set MPIEXEC (the script's second argument) before
# sourcing, and optionally MPI_TIMEOUT (seconds per mpirun, default 300) and
# FAILS_OUT (the name in $T of the output that fails() must find absent).
# fails_bg runs fails() side by side with others (see below).
# Skips (exit 77) in a build without MPI. Open MPI refuses root and more
# ranks than cores unless told: --allow-run-as-root --oversubscribe (and the
# two OMPI_ALLOW_RUN_AS_ROOT variables for its helper processes).
if [ "$MPIEXEC" = none ] || ! command -v "$MPIEXEC" >/dev/null; then
  echo "SKIP: lowp built without MPI (or no mpiexec)"; exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# a rank waiting for another (in a collective, or for rank 0's reading) yields its core instead of
# spinning on it: the ranks and the other tests of a -j2 run share 2 cores (mpi_gemm: 3.8 s of CPU
# with this, 5.4 s without, same results)
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
# one date for every run of the script: results.json's "environment" names the UTC day (tools/env.c), and
# runs compared byte for byte must not straddle midnight
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date +%s)}
MPI() { timeout "${MPI_TIMEOUT:-300}" "$MPIEXEC" -q --allow-run-as-root --oversubscribe "$@"; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# fails NAME PATTERN MPIARGS...: exit 2, one line on stderr with PATTERN,
# and nothing at $T/$FAILS_OUT
fails() {
  local name=$1 pat=$2; shift 2
  rm -rf "$T/${FAILS_OUT:?}"
  MPI "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2 ($(head -3 "$T/err"))"; return; fi
  if ! grep -q -- "$pat" "$T/err"; then bad "$name: message lacks '$pat': $(cat "$T/err")"; return; fi
  if [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "$name: not one message: $(cat "$T/err")"; return; fi
  if [ -e "$T/$FAILS_OUT" ]; then bad "$name: an output was written"; return; fi
  ok
}

# A failing job mostly waits: when its first rank exits nonzero, mpirun waits odls_base_sigkill_timeout
# (1 s) before it kills the ranks still there (mpi_faults: 57 s of wall for 7.6 s of CPU, one job after
# another). So the failing jobs of a script run side by side (tests/common/side_by_side.bash):
#   job; fails_bg NAME PATTERN MPIARGS...   (job makes a fresh folder $J; MPIARGS name their outputs
#                                           in $J, where fails() looks for $FAILS_OUT)
#   FAILS_IN=FILE fails_bg ...              (FILE through a pipe on mpirun's standard input, a job
#                                           that runs at once, alone: three such jobs side by side
#                                           once ended with exit 132 and no message, at load 11, not
#                                           understood; a pipeline `cat FILE | fails ...` would count
#                                           in a subshell)
#   fails_wait                              (waits for them; adds their counts and messages)
. "$(dirname "${BASH_SOURCE[0]}")/../common/side_by_side.bash"
# One at a time unless BG_MAX says otherwise: the exit 132 above was never explained, and a test CI
# runs must not fail by chance; the jobs still get folders of their own and every count is kept.
BG_MAX=${BG_MAX:-1}
bg_k=0
job() { bg_k=$((bg_k + 1)); J=$T/job$bg_k; }
fails_piped() { fails "$@" < <(cat "$FAILS_IN"); }
fails_bg() {
  if [ -n "${FAILS_IN:-}" ]; then
    local t=$T
    mkdir -p "$J" && T=$J && fails_piped "$@"
    T=$t
  else
    bg_run "$J" fails "$@"
  fi
}
fails_wait() { bg_wait; }
