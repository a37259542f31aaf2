# cli_harness.bash -- what every tests/cli/*.sh shares; sourced, not a test (the
# ctest glob takes *.sh). A script runs as `bash tests/cli/NAME.sh PATH/TO/lowp`
# from any folder; after `. "$(dirname "$0")/cli_harness.bash"` it has:
#   LOWP   the lowp binary, as an absolute path (empty when the script takes none)
#   SRC    the source tree's root
#   T      a fresh scratch folder, removed at exit (write bits restored first)
#   ok, bad MESSAGE, skip MESSAGE (exit 77), finish NAME (the closing line
#   "NAME: N passed, N failed" and the exit status)
#   expect_exit2 NAME PATTERN CMD...: exit status 2, nothing on stdout, and a
#   stderr of one line that contains PATTERN
#   bg_run DIR CMD..., bg_wait: cases that mostly wait, side by side (tests/common/side_by_side.bash)
set -u
# one date for every run of the script: results.json's "environment" names the UTC day (tools/env.c), and
# runs compared byte for byte must not straddle midnight
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date +%s)}
LOWP=${1:-}
case $LOWP in "" | /*) ;; *) LOWP=$PWD/$LOWP ;; esac
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
T=$(mktemp -d)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
# python3 is Debian's (/usr/bin/python3: the test command installs python3-jsonschema and python3-numpy for
# it) for the script and everything it starts, where it exists: a python3 first on PATH may be another
# interpreter, and a pyenv shim costs 0.39 s a start against 0.03 s (its bash scripts; 2 x 228 starts in
# the default run, about 60 s of the run's CPU on the 2-core machine)
if [ -x /usr/bin/python3 ]; then
  mkdir "$T/.py" && ln -s /usr/bin/python3 "$T/.py/python3" && PATH=$T/.py:$PATH
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; exit 77; }
finish() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
}
. "$SRC/tests/common/side_by_side.bash"
expect_exit2() {
  local name=$1 pat=$2 rc errl nerr
  shift 2
  "$@" >"$T/.out" 2>"$T/.err"
  rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2 ($(head -3 "$T/.err"))"; return; fi
  if [ -s "$T/.out" ]; then bad "$name: printed on stdout: $(head -c 200 "$T/.out")"; return; fi
  if ! grep -q -- "$pat" "$T/.err"; then bad "$name: stderr lacks '$pat': $(cat "$T/.err")"; return; fi
  # its lines as wc -l counts them (newlines), read by the shell: no process
  mapfile errl <"$T/.err"
  nerr=${#errl[@]}
  [ "$nerr" -gt 0 ] && [[ ${errl[-1]} != *$'\n' ]] && nerr=$((nerr - 1))
  if [ "$nerr" -ne 1 ]; then bad "$name: not one line: $(cat "$T/.err")"; return; fi
  ok
}

# One `lowp report --quick --no-svg` for the tests that read a whole quick report (outputs, report_render,
# plot_keys): ctest makes it once, as the fixture report_quick (cli_report_quick, in the folder
# LOWP_REPORT_QUICK names), and the tests that require it read it (a test that changes it works on a
# copy); a script run alone makes its own. Its folder's name is hostile (quotes, $(...), backquotes,
# ;|&, a newline): report writes under any name. After quick_report: QR the report's folder, QR_ERR
# its stderr, QR_RC its exit status.
QR_NAME=$'R e\'p"o$(touch INJECTED3) `touch INJECTED4`;|&\n'
quick_report_make() { # quick_report_make BASE: run the report into BASE/$QR_NAME
  rm -rf "$1" && mkdir -p "$1" || return 1
  # two experiments at a time, each in its own process (cli_report_jobs compares --jobs 1 with it)
  "$LOWP" report --quick --no-svg --jobs 2 --out "$1/$QR_NAME" >"$1/out" 2>"$1/err"
  echo $? >"$1/rc"
}
quick_report() {
  local base=${LOWP_REPORT_QUICK:-}
  if [ -z "$base" ] || [ ! -s "$base/rc" ]; then
    base=$T/quick-report
    quick_report_make "$base"
  fi
  QR="$base/$QR_NAME"
  QR_ERR="$base/err"
  QR_RC=$(cat "$base/rc")
}
