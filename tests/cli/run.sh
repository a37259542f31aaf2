#!/usr/bin/env bash
# cli_run -- lowp run / list / report: outputs, atomic folders, and every bad-usage exit.
# Run: bash tests/cli/run.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

# expect_exit2 NAME CMD...: exit status 2, one message on stderr naming the problem, nothing on stdout
expect_exit2() {
  local name="$1" pattern="$2"; shift 2
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2"; return; fi
  if [ -s "$T/out" ]; then bad "$name: printed on stdout"; return; fi
  grep -q -- "$pattern" "$T/err" || { bad "$name: stderr lacks '$pattern': $(cat "$T/err")"; return; }
  ok
}

# list shows every experiment with a question
"$LOWP" list >"$T/list" && grep -q '^formats .*?$' "$T/list" && ok || bad "list"

# a run writes results.json (with header, seed), summary.md, CSV and plots, and no temporary folder
"$LOWP" run formats --out "$T/f" >"$T/runout" 2>&1 || bad "run formats exit"
for f in results.json summary.md values.csv density.csv values.png values.svg density.png density_zoom.png; do
  [ -s "$T/f/$f" ] && ok || bad "run formats: missing $f"
done
grep -q '"seed"' "$T/f/results.json" && grep -q '"git_revision"' "$T/f/results.json" && ok || bad "header in results.json"
head -1 "$T/runout" | grep -q '^# lowp run formats' && ok || bad "run header printed first"
ls -d "$T"/f.tmp.* >/dev/null 2>&1 && bad "temporary folder left behind" || ok

# the revision's git takes no lock in the source tree: lowp's children die with it (SIGKILL), and a git killed
# while it refreshed the index left .git/index.lock behind, failing the user's next commit. A git on PATH
# that records its arguments, then runs the real one: the same revision, asked without optional locks
REALGIT=$(command -v git || true)
if [ -n "$REALGIT" ]; then
  mkdir -p "$T/gitlog"
  printf '#!/bin/sh\necho "$*" >>"%s"\nexec "%s" "$@"\n' "$T/gitlog/args" "$REALGIT" >"$T/gitlog/git"
  chmod +x "$T/gitlog/git"
  PATH="$T/gitlog:$PATH" "$LOWP" run formats --quick --out "$T/gl" >/dev/null 2>&1 &&
    grep -q -- '--no-optional-locks .*describe' "$T/gitlog/args" && ! grep -v -- '--no-optional-locks' "$T/gitlog/args" &&
    [ "$(sed -n 's/.*"git_revision": *"\([^"]*\)".*/\1/p' "$T/gl/results.json" | head -1)" = \
      "$(sed -n 's/.*"git_revision": *"\([^"]*\)".*/\1/p' "$T/f/results.json" | head -1)" ] &&
    ok || bad "git asked with optional locks, or another revision: $(cat "$T/gitlog/args" 2>/dev/null)"
else ok; fi # no git on PATH: lowp asks none

# same seed, same bytes
"$LOWP" run formats --out "$T/g" >/dev/null 2>&1
cmp -s "$T/f/results.json" "$T/g/results.json" && cmp -s "$T/f/values.csv" "$T/g/values.csv" && ok || bad "rerun differs"

# bad usage: exit 2, one message, and no output folder or temporary left behind
expect_exit2 "unknown experiment" "unknown experiment 'nosuch'" "$LOWP" run nosuch
expect_exit2 "unknown parameter" "unknown parameter 'bogus'" "$LOWP" run formats --bogus=1 --out "$T/h"
[ -e "$T/h" ] && bad "folder created for a bad parameter" || ok
expect_exit2 "bad parameter value" "unknown format name 'fp99'" "$LOWP" run formats --formats=fp16,fp99 --out "$T/i"
ls -d "$T"/i* >/dev/null 2>&1 && bad "output left after a bad value" || ok
expect_exit2 "not key=value" "unexpected argument" "$LOWP" run formats positional
expect_exit2 "bad seed" "malformed --seed" "$LOWP" run formats --seed=abc
mkdir -p "$T/ro" && chmod 555 "$T/ro"
if [ "$(id -u)" -ne 0 ]; then
  expect_exit2 "unwritable output" "cannot" "$LOWP" run formats --out "$T/ro/x"
fi
touch "$T/file"
expect_exit2 "output under a file" "cannot" "$LOWP" run formats --out "$T/file/x"
expect_exit2 "unknown command" "unknown command" "$LOWP" nosuchcommand
expect_exit2 "report bad option" "unknown option" "$LOWP" report --bogus
expect_exit2 "list bad option" "unknown option" "$LOWP" list --bogus

# texts follow the parameters: the question, results.json and summary.md name the run's interval
"$LOWP" run dynamic-range --lo=1e-6 --hi=1e6 --quick --out "$T/dr" >"$T/dr.out" 2>&1 &&
  grep -q "question: Of values .* over \[1e-6, 1e6\]" "$T/dr.out" &&
  grep -q '"question":.*\[1e-6, 1e6\]' "$T/dr/results.json" &&
  grep -q 'log-uniform on \[1e-6, 1e6\]' "$T/dr/results.json" &&
  ! grep -q '1e-8, 1e8' "$T/dr/results.json" "$T/dr/summary.md" && ok || bad "texts do not follow --lo/--hi"
# the formats answer gives bf16's own range and fp32's beside it
"$LOWP" run formats --quick --out "$T/fm" >/dev/null 2>&1 &&
  grep -q "bf16 keeps fp32's exponent range, 78.6 decades with p=8 (fp32: 83.4" "$T/fm/summary.md" && ok || bad "formats answer"

# huge pages (tools/thp.c): where the kernel gives them on request and glibc knows the tunable, run starts
# again with tools/thp.h's LOWP_THP_TUNABLES (glibc.malloc.hugetlb=1 and freed memory kept), and the
# manifest says so; LOWP_THP=0 does not; the results are the same
thp_want=0
grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null &&
  [ "$(getconf GNU_LIBC_VERSION | awk '{split($2, v, "."); print (v[1] > 2 || (v[1] == 2 && v[2] >= 35))}')" = 1 ] &&
  thp_want=1
env -u GLIBC_TUNABLES -u OPENBLAS_THREAD_TIMEOUT "$LOWP" run loss-scaling --quick --out "$T/thp1" >/dev/null 2>&1 &&
  env -u GLIBC_TUNABLES LOWP_THP=0 "$LOWP" run loss-scaling --quick --out "$T/thp0" >/dev/null 2>&1 || bad "thp runs"
thp_got=0
thp_tun=$(sed -n 's/^ *"\(glibc[.]malloc[^"]*\)".*/\1/p' "$SRC/tools/thp.h")
[ -n "$thp_tun" ] || bad "no LOWP_THP_TUNABLES in tools/thp.h"
grep -qF "\"glibc_tunables\":	\"$thp_tun\"" "$T/thp1/results.json" && thp_got=1
[ $thp_got = $thp_want ] && grep -q '"glibc_tunables":.*""' "$T/thp0/results.json" && ok ||
  bad "glibc.malloc.hugetlb: wanted $thp_want, got $thp_got (LOWP_THP=0: $(grep glibc_tunables "$T/thp0/results.json"))"
diff <(grep -v '"glibc_tunables"\|"seconds"\|"wall' "$T/thp1/results.json") \
  <(grep -v '"glibc_tunables"\|"seconds"\|"wall' "$T/thp0/results.json") >/dev/null && ok ||
  bad "results differ with huge pages"
# a user's own tunables are kept, and the hugetlb one is not added twice
GLIBC_TUNABLES=glibc.malloc.hugetlb=0 OPENBLAS_THREAD_TIMEOUT=10 "$LOWP" run loss-scaling --quick --out "$T/thp2" \
  >/dev/null 2>&1 &&
  grep -q '"glibc_tunables":.*"glibc.malloc.hugetlb=0"' "$T/thp2/results.json" && ok || bad "user's hugetlb=0 not kept"
# OpenBLAS's idle threads sleep after 2^4 cycles (tools/lowp.c), unless the user said otherwise; the manifest says
grep -q '"thread_timeout":.*"4"' "$T/thp1/results.json" && grep -q '"thread_timeout":.*"10"' "$T/thp2/results.json" &&
  ok || bad "OPENBLAS_THREAD_TIMEOUT: $(grep -h thread_timeout "$T/thp1/results.json" "$T/thp2/results.json")"

echo "cli_run: $pass passed, $fail failed"
[ $fail -eq 0 ]
