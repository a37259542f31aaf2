#!/bin/bash
# plugin_misbehave.sh -- lowp check against plugins that misbehave (issue 19): kernels that write
# past or before their output, into their read-only inputs (directly or after mprotect), return
# -424242, die by SIGPIPE or SIGUSR1, flood their output, leave processes behind (after a
# return, a timeout or Ctrl-C), call exit(0) or quick_exit; libraries whose constructor exits,
# crashes or hangs, whose table function crashes or whose table holds a bad name pointer;
# LOWP_PLUGIN_TIMEOUT and the spec's "timeout" strictly parsed; a 200-deep chain of sessions
# (kernel or constructor) and a kernel that stops itself (issue 30). Each fails its own check naming
# what the kernel did (the others run, JUnit/JSON written), or, for a library that cannot be
# loaded, exit 2 with one message and nothing written.
# Run: bash tests/cli/plugin_misbehave.sh path/to/lowp   (needs a C compiler: cc, or $CC)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
CC=${CC:-cc}
# on the way out, a failed test's leftovers (the kernels' children write their pids)
export MIS_DIR=$T
command -v "$CC" >/dev/null || { echo "FAIL: no C compiler ($CC) to build the test plugins"; exit 1; }

P=$T # the test plugins (cases run side by side below have a T of their own)
build() { # NAME [-DFLAG]
  "$CC" -shared -fPIC -O1 -I"$SRC/include" ${2:-} "$SRC/tests/cli/plugins/misbehave2.c" -o "$P/$1.so" -lm ||
    { echo "FAIL: cannot build $1.so"; exit 1; }
}
# the seven libraries compiled side by side (each a compiler run of about 0.4 s)
build mis & b_pids=$!
for v in LOAD_EXIT LOAD_SEGV LOAD_HANG TABLE_CRASH BAD_NAME CHAIN_CTOR; do build "$v" "-D$v" & b_pids="$b_pids $!"; done
# and the program each link of the chains below runs (misbehave2.c, next_link: a small process to fork),
# linked statically where the C library allows (no dynamic loader at each of the 1200 starts: 1.0 s of
# CPU a 200-deep chain against 1.6 s on the 2-core machine)
{ "$CC" -O1 -static -I"$SRC/include" -DCHAIN_MAIN "$SRC/tests/cli/plugins/misbehave2.c" -o "$P/chainlink" -lm 2>/dev/null ||
    "$CC" -O1 -I"$SRC/include" -DCHAIN_MAIN "$SRC/tests/cli/plugins/misbehave2.c" -o "$P/chainlink" -lm ||
    { echo "FAIL: cannot build chainlink"; exit 1; }; } & b_pids="$b_pids $!"
for b in $b_pids; do wait "$b" || exit 1; done
export MIS_CHAIN_EXE=$P/chainlink

check() { # KERNEL [LIB] [EXTRA-SUBJECT-JSON] [M N K [NAME]]: one check of that kernel
  printf '{ "name": "%s", "op": "gemm", "subject": { "plugin": "%s", "kernel": "%s"%s }, "shape": { "m": %s, "n": %s, "k": %s }, "rules": [ { "max_ulp": 64 } ] }' \
    "${7:-$1}" "$P/${2:-mis}.so" "$1" "${3:-}" "${4:-2}" "${5:-2}" "${6:-4}"
}
spec() { # FILE CHECK-JSON...
  local f=$1; shift
  { printf '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ '
    local first=1 c
    for c in "$@"; do [ $first -eq 1 ] || printf ', '; printf '%s' "$c"; first=0; done
    printf ' ] }\n'; } >"$f"
}
# alive_pid PID: running (a zombie whose reaper is slow counts as ended): the state letter of
# /proc/PID/stat (after the name in parentheses) read by the shell itself, no process: this is asked
# hundreds of times (every link of the chains below), and an awk per question was most of this
# script's CPU
alive_pid() {
  local st=
  { read -r st </proc/"$1"/stat; } 2>/dev/null || [ -n "$st" ] || return 1
  st=${st##*) }
  st=${st%% *}
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
# alive NAME: the process whose pid is in $T/NAME.pid is running
alive() {
  local pid=
  [ -s "$T/$1.pid" ] || return 1
  read -r pid <"$T/$1.pid" || [ -n "$pid" ] || return 1
  alive_pid "$pid"
}
# outlives NAME: still running 0.3 s from now (polled: ended sooner, it returns at once)
outlives() {
  local i=0
  while [ $i -lt 15 ]; do alive "$1" || return 1; sleep 0.02; i=$((i + 1)); done
  alive "$1"
}

# ------------- a chain of 200 processes, each in a new session and the parent of the next,
# started by a kernel or by its library's constructor (issue 30): none outlives lowp, whatever
# the containment (the default walk, or LOWP_CONTAIN=pidns), and the published files stay
# what lowp wrote although every link tries to overwrite them 3 s after it started
chain_case() { # LABEL LIB KERNEL WANT-PIDS [ENV=VALUE...]
  local label=$1 lib=$2 kern=$3 want=$4 p left=0 n; shift 4
  rm -f "$T"/chain.* "$T/ch.xml" "$T/ch.json"
  spec "$T/ch.spec.json" "$(check "$kern" "$lib")"
  env "$@" MIS_DIR="$T" MIS_TARGETS="$T/ch.xml:$T/ch.json" "$LOWP" check "$T/ch.spec.json" --junit "$T/ch.xml" \
    --json "$T/ch.json" >"$T/o" 2>"$T/e"; local rc=$?
  [ $rc -eq 0 ] && ok || bad "$label: exit $rc, want 0: $(head -c 600 "$T/o" "$T/e")"
  n=$(wc -l <"$T/chain.pids" 2>/dev/null || echo 0)
  [ "$n" -ge "$want" ] && ok || bad "$label: $n links of the chain started, want $want"
  for p in $(cat "$T/chain.pids" 2>/dev/null); do alive_pid "$p" && left=$((left + 1)); done
  [ $left -eq 0 ] && ok || bad "$label: $left of $n processes of the chain outlived lowp"
  cp "$T/ch.xml" "$T/ch.xml.0" && cp "$T/ch.json" "$T/ch.json.0" || bad "$label: nothing published"
  sleep 4 # longer than the links' sleep: a survivor would have written by now
  cmp -s "$T/ch.xml" "$T/ch.xml.0" && cmp -s "$T/ch.json" "$T/ch.json.0" &&
    ! grep -q overwritten "$T/ch.xml" "$T/ch.json" && ok || bad "$label: a published file was overwritten"
  grep -q "^PASS $kern " "$T/o" && ok || bad "$label: the check did not pass: $(head -c 600 "$T/o")"
}
# the four cases side by side (bg_run, each in a folder of its own, its MIS_DIR), started first: each
# mostly waits (the links' 3 s, then 4 s), while the rest of this script runs; bg_wait at the end
bg_run "$T/chain1" chain_case "a kernel's 200-deep setsid chain" mis chain 200
bg_run "$T/chain2" chain_case "a kernel's 200-deep setsid chain, LOWP_CONTAIN=pidns" mis chain 200 LOWP_CONTAIN=pidns
bg_run "$T/chain3" chain_case "a constructor's 200-deep setsid chain" CHAIN_CTOR honest 400
bg_run "$T/chain4" chain_case "a constructor's 200-deep setsid chain, LOWP_CONTAIN=pidns" CHAIN_CTOR honest 400 LOWP_CONTAIN=pidns

# ------------------------------------------------- kernels: each fails its own check
spec "$T/run.json" "$(check honest)" "$(check honest mis '' 16 16 64 honest_big)" "$(check past1)" "$(check pastpage)" \
  "$(check before)" "$(check wrin)" "$(check sneakin)" "$(check magic)" "$(check spipe)" \
  "$(check susr1)" "$(check flood)" "$(check quit0)" "$(check qquit)" "$(check daemonize)" "$(check escape)" "$(check beforein)" \
  "$(check pasta5)"
start=$(date +%s)
"$LOWP" check "$T/run.json" --junit "$T/run.xml" --json "$T/run.res.json" 2>"$T/e" | cat >"$T/o"
rc=${PIPESTATUS[0]}
took=$(( $(date +%s) - start ))
[ $rc -eq 1 ] && ok || bad "misbehaving kernels: exit $rc, want 1: $(head -c 2000 "$T/o" "$T/e")"
[ $took -lt 60 ] && ok || bad "lowp check | cat took $took s: a kernel's child held the pipe"
for pat in "^PASS honest " \
  "^FAIL past1 .*plugin kernel past1 wrote past the end of its output C (1 bytes after it changed)" \
  "^FAIL pasta5 .*plugin kernel pasta5 wrote past the end of its output C (" \
  "^FAIL pastpage .*plugin kernel pastpage crashed (SIGSEGV): it wrote past the end of its output C" \
  "^FAIL before .*plugin kernel before wrote before the start of its output C (4 bytes before it)" \
  "^FAIL wrin .*plugin kernel wrin crashed (SIGSEGV): it wrote into its input B, which is read-only" \
  "^FAIL beforein .*plugin kernel beforein crashed (SIGSEGV): it wrote before the start of its input A, which is read-only" \
  "^FAIL sneakin .*plugin kernel sneakin overwrote its input A (byte 0 of 16 changed), which is read-only" \
  "^FAIL magic .*plugin kernel magic returned error -424242" \
  "^FAIL spipe .*plugin kernel spipe was killed by signal SIGPIPE" \
  "^FAIL susr1 .*plugin kernel susr1 was killed by signal SIGUSR1" \
  "^FAIL flood .*plugin kernel flood returned error 7; it wrote 10000024 bytes of output, ending '.*the last words of flood'" \
  "^FAIL quit0 .*plugin kernel quit0 exited with status 0 (it called exit) instead of returning" \
  "^FAIL qquit .*plugin kernel qquit exited with status 0 (it called exit) instead of returning" \
  "^PASS daemonize " "^PASS escape "; do
  grep -q -- "$pat" "$T/o" && ok || bad "no '$pat' in: $(head -c 3000 "$T/o")"
done
grep -q '^PASS honest_big ' "$T/o" && ok || bad "the honest kernel (16x16x64: 64-byte multiples) did not pass"
# the flood stays the kernel's: lowp's report holds a bounded tail of it
sz=$(cat "$T/o" "$T/e" | wc -c)
[ "$sz" -lt 20000 ] && ok || bad "the kernel's 10 MB flood reached lowp's output ($sz bytes)"
/usr/bin/python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); n = len(d.getElementsByTagName('failure')) + len(d.getElementsByTagName('error')); assert n == 13, n" "$T/run.xml" \
  && ok || bad "JUnit: 13 failures expected: $(head -c 600 "$T/run.xml")"
[ -s "$T/run.res.json" ] && ok || bad "JSON result not written"
outlives daemonize && bad "the kernel's child outlived lowp" || ok
[ -s "$T/escape.pid" ] && ok || bad "the daemon (setsid) of kernel escape did not start"
outlives escape && bad "the daemon (setsid, double fork) of a kernel outlived its call" || ok

# ------------------------------------- a timeout (the spec's) ends the kernel's group
spec "$T/to.json" "$(check forkhang mis ', "timeout": 1')" "$(check escapehang mis ', "timeout": 1')" "$(check honest)"
start=$(date +%s)
"$LOWP" check "$T/to.json" >"$T/o" 2>"$T/e"; rc=$?
took=$(( $(date +%s) - start ))
[ $rc -eq 1 ] && ok || bad "timeout: exit $rc, want 1: $(cat "$T/o" "$T/e")"
grep -q "^FAIL forkhang .*did not finish in 1 s (killed; the check's \"timeout\" or LOWP_PLUGIN_TIMEOUT sets the limit)" "$T/o" && ok || bad "timeout message: $(cat "$T/o")"
[ $took -lt 30 ] && ok || bad "the spec's timeout of 1 s took $took s"
outlives forkhang && bad "the hanging kernel's child outlived the timeout" || ok
outlives escapehang && bad "the hanging kernel's daemon (setsid) outlived the timeout" || ok

# ------------------- Ctrl-C: lowp exits 130, the group is gone; and so for every other
# terminating signal (issue 30: SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM left the kernel's processes)
ulimit -c 0 # SIGQUIT is raised again after the cleanup: no core file
for sig in INT:130:interrupted QUIT:131:"killed by SIGQUIT" USR1:138:"killed by SIGUSR1" \
           USR2:140:"killed by SIGUSR2" ALRM:142:"killed by SIGALRM" XCPU:152:"killed by SIGXCPU"; do
  IFS=: read -r name want says <<<"$sig"
  for k in forkhang escapehang; do
    rm -f "$T/$k.pid"
    spec "$T/int.json" "$(check $k)"
    "$LOWP" check "$T/int.json" >"$T/o" 2>"$T/e" &
    lp=$!
    for _ in $(seq 100); do [ -s "$T/$k.pid" ] && break; sleep 0.1; done
    [ -s "$T/$k.pid" ] || bad "$k: its child did not start"
    kill -"$name" $lp; wait $lp; rc=$?
    [ $rc -eq "$want" ] && ok || bad "SIG$name during plugin kernel $k: exit $rc, want $want"
    grep -q "^lowp: $says.*; children stopped, temporary files removed, nothing published$" "$T/e" &&
      [ "$(wc -l <"$T/e")" -eq 1 ] && ok || bad "SIG$name during plugin kernel $k: message $(cat "$T/e")"
    outlives $k && bad "the child of kernel $k outlived lowp's SIG$name" || ok
  done
done

# ---------------- a kernel that stops itself is killed and reported at once (issue 30)
for mode in tree pidns; do
  spec "$T/stop.json" "$(check stopme)" "$(check honest)"
  start=$(date +%s)
  LOWP_CONTAIN=$mode timeout 120 "$LOWP" check "$T/stop.json" >"$T/o" 2>"$T/e"; rc=$?
  took=$(( $(date +%s) - start ))
  [ $rc -eq 1 ] && ok || bad "stopme ($mode): exit $rc, want 1: $(cat "$T/o" "$T/e")"
  [ $took -lt 30 ] && ok || bad "stopme ($mode): took $took s (the time limit is 600 s)"
  grep -q "^FAIL stopme .*plugin kernel stopme stopped itself (SIGSTOP; killed at once" "$T/o" && ok ||
    bad "stopme ($mode): $(cat "$T/o")"
done

# ---------------------------------------------- libraries that misbehave when loaded
expect2() { # NAME PATTERN CMD...: exit 2, one message matching PATTERN, no output written
  local name=$1 pat=$2; shift 2
  rm -f "$T/out.xml" "$T/out.json"
  "$@" >"$T/o" 2>"$T/e"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2 ($(head -c 300 "$T/o" "$T/e"))"; return; fi
  grep -q -- "$pat" "$T/e" || { bad "$name: message lacks '$pat': $(cat "$T/e")"; return; }
  [ "$(wc -l <"$T/e")" -eq 1 ] || { bad "$name: not one message: $(cat "$T/e")"; return; }
  [ -e "$T/out.xml" ] || [ -e "$T/out.json" ] && { bad "$name: an output was written"; return; }
  [ -s "$T/o" ] && { bad "$name: wrote to stdout: $(head -c 300 "$T/o")"; return; }
  ok
}
for v in LOAD_EXIT LOAD_SEGV LOAD_HANG TABLE_CRASH BAD_NAME; do spec "$T/$v.json" "$(check honest "$v")"; done
expect2 "constructor calls exit(0)" "loading it and reading its table exited with status 0 (it called exit)" \
  "$LOWP" check "$T/LOAD_EXIT.json" --junit "$T/out.xml" --json "$T/out.json"
expect2 "constructor crashes" "loading it and reading its table crashed (SIGSEGV)" \
  "$LOWP" check "$T/LOAD_SEGV.json" --junit "$T/out.xml"
expect2 "constructor hangs" "loading it and reading its table did not finish in 1 s (killed)" \
  env LOWP_PLUGIN_TIMEOUT=1 "$LOWP" check "$T/LOAD_HANG.json" --junit "$T/out.xml"
expect2 "table function crashes" "loading it and reading its table crashed (SIGSEGV)" \
  "$LOWP" check "$T/TABLE_CRASH.json" --json "$T/out.json"
expect2 "bad name pointer in the table" "loading it and reading its table crashed (SIGSEGV)" \
  "$LOWP" check "$T/BAD_NAME.json" --junit "$T/out.xml"

# ------------------------------------------------------ time limits, strictly parsed
spec "$T/one.json" "$(check honest)"
for v in abc 0 -5 nan inf " 3" 5s "" 0x10 1e10 "3 "; do
  expect2 "LOWP_PLUGIN_TIMEOUT='$v'" "LOWP_PLUGIN_TIMEOUT='$v' is not a time limit" \
    env LOWP_PLUGIN_TIMEOUT="$v" "$LOWP" check "$T/one.json" --junit "$T/out.xml"
done
LOWP_PLUGIN_TIMEOUT=2.5 "$LOWP" check "$T/one.json" >"$T/o" 2>&1 && grep -q "^PASS honest" "$T/o" && ok ||
  bad "LOWP_PLUGIN_TIMEOUT=2.5 refused: $(cat "$T/o")"
for v in 0 -1 '"5"' 1e10 null; do
  spec "$T/bt.json" "$(check honest mis ", \"timeout\": $v")"
  expect2 "spec timeout $v" '"timeout" must be a number of seconds > 0 and at most 1e9' \
    "$LOWP" check "$T/bt.json" --junit "$T/out.xml"
done

bg_wait # the chains
echo "cli plugin_misbehave: $pass passed, $fail failed"
[ $fail -eq 0 ]
