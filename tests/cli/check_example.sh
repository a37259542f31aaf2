#!/bin/bash
# check_example.sh -- lowp check on plugins: the example (examples/check/) passes its honest
# kernel and catches the planted fp16 accumulator; every way a plugin can fail: a file that is
# not a library, no ABI version, another version, a malformed table, no such kernel or
# operation, formats that differ (exit 2 before any work, one message, no output), and kernels
# that crash, abort, exit, hang or return an error (that check fails naming it; the others run).
# Run: bash tests/cli/check_example.sh path/to/lowp   (the plugins are in BUILD/plugins/)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
PLUG=$(dirname "$LOWP")/plugins
[ -e "$PLUG/example_kernels.so" ] || { echo "FAIL: $PLUG/example_kernels.so not built"; exit 1; }

expect_fail() { # NAME PATTERN CMD...: exit 2, one line matching PATTERN, no output file
  local name=$1 pat=$2; shift 2
  rm -f "$T/out.xml" "$T/out.json"
  "$@" >"$T/o" 2>"$T/e"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2 ($(head -c 300 "$T/e"))"; return; fi
  grep -q -- "$pat" "$T/e" || { bad "$name: message lacks '$pat': $(cat "$T/e")"; return; }
  [ "$(wc -l <"$T/e")" -eq 1 ] || { bad "$name: not one message: $(cat "$T/e")"; return; }
  [ -e "$T/out.xml" ] || [ -e "$T/out.json" ] && { bad "$name: an output was written"; return; }
  ok
}

# ------------------------------------------------ the example, as a user runs it
cp "$SRC/examples/check/precision.json" "$SRC/examples/check/precision.baseline.json" "$T/"
cp "$PLUG/example_kernels.so" "$T/"
cd "$T" || exit 1
"$LOWP" check precision.json --junit "$T/ex.xml" --json "$T/ex.json" >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 1 ] && ok || bad "example: exit $rc, want 1: $(cat "$T/o" "$T/e")"
grep -q "^PASS gemm_f16_f32acc " "$T/o" && ok || bad "honest kernel did not pass: $(cat "$T/o")"
grep -q "^FAIL gemm_f16_planted  gamma bound .* > .*" "$T/o" && ok || bad "planted bug not caught: $(cat "$T/o")"
grep -q "rule 1 failed: backward error .* > .* gamma_1024 (recursive" "$T/o" && ok || bad "failure lacks the limit: $(cat "$T/o")"
grep -q "rule 2 failed: max_abs .* > .* 2 x the reference" "$T/o" && ok || bad "vs_reference not reported: $(cat "$T/o")"
/usr/bin/python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert len(d.getElementsByTagName('failure')) == 1" "$T/ex.xml" && ok || bad "JUnit of the example"
# the example's own build command works
if command -v cc >/dev/null; then
  (cd "$T" && cc -shared -fPIC -O2 -ffp-contract=off -I"$SRC/include" "$SRC/examples/check/example_kernels.c" -o own.so) &&
    sed -e 's/example_kernels.so/own.so/' -e 's/precision.baseline.json/own.baseline.json/' precision.json >own.json &&
    "$LOWP" check own.json --only gemm_f16_f32acc --update-baseline >"$T/own.out" 2>&1 &&
    grep -q "^PASS gemm_f16_f32acc " "$T/own.out" && ok || bad "the README's build command: $(cat "$T/own.out")"
fi

# ---------------------------------------------------- plugins that cannot be used
spec() { # NAME PLUGIN KERNEL-JSON-or-null [OP]
  printf '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ { "name": "c", "op": "%s", "subject": { "plugin": "%s"%s }, "shape": { "m": 4, "n": 4, "k": 16 }, "rules": [ { "max_ulp": 100 } ] } ] }\n' \
    "${4:-gemm}" "$2" "$3" >"$T/$1.json"
}
printf 'not an ELF file\n' >"$T/junk.so"
spec junk "$T/junk.so" ""
expect_fail "not a library" "cannot load plugin: .*junk.so" "$LOWP" check "$T/junk.json" --junit "$T/out.xml"
spec missing "$T/nonexistent.so" ""
expect_fail "missing library" "cannot load plugin" "$LOWP" check "$T/missing.json" --junit "$T/out.xml"
spec nover "$PLUG/bad_noversion.so" ""
expect_fail "no version symbol" "exports no lowp_plugin_abi_version" "$LOWP" check "$T/nover.json" --junit "$T/out.xml"
spec ver "$PLUG/bad_version.so" ""
expect_fail "another ABI version" "built for plugin ABI version 99; this lowp reads version 1" "$LOWP" check "$T/ver.json" --junit "$T/out.xml"
spec tab "$PLUG/bad_table.so" ""
expect_fail "malformed table" "malformed table: kernel 'm': unknown operation 'matmul'" "$LOWP" check "$T/tab.json" --junit "$T/out.xml"
spec nok "$PLUG/example_kernels.so" ', "kernel": "gemm_nope"'
expect_fail "no such kernel" "has no kernel 'gemm_nope' (it has: gemm_f16_f32acc (gemm), gemm_f16_planted (gemm))" "$LOWP" check "$T/nok.json" --junit "$T/out.xml"
spec amb "$PLUG/example_kernels.so" ""
expect_fail "kernel not named, two candidates" "more than one kernel for gemm: name one" "$LOWP" check "$T/amb.json" --junit "$T/out.xml"
printf '{ "lowp_check": 1, "checks": [ { "name": "c", "op": "softmax", "in": "fp16", "out": "fp32", "subject": { "plugin": "%s" }, "shape": { "m": 4, "n": 4 }, "rules": [ { "max_ulp": 1 } ] } ] }\n' "$PLUG/example_kernels.so" >"$T/op.json"
expect_fail "operation not implemented" "has no kernel for softmax" "$LOWP" check "$T/op.json" --junit "$T/out.xml"
printf '{ "lowp_check": 1, "checks": [ { "name": "c", "op": "gemm", "in": "bf16", "out": "fp32", "subject": { "plugin": "%s", "kernel": "gemm_f16_f32acc" }, "shape": { "m": 4, "n": 4, "k": 8 }, "rules": [ { "max_ulp": 1 } ] } ] }\n' "$PLUG/example_kernels.so" >"$T/fmt.json"
expect_fail "formats not implemented" "kernel 'gemm_f16_f32acc' takes fp16 for A, the check gives bf16" "$LOWP" check "$T/fmt.json" --junit "$T/out.xml"

# ------------------------------------------- kernels that misbehave while running
cat >"$T/mis.json" <<JSON
{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" },
  "checks": [
    { "name": "segv", "op": "gemm", "subject": { "plugin": "$PLUG/misbehave.so", "kernel": "segv" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 100 } ] },
    { "name": "abrt", "op": "gemm", "subject": { "plugin": "$PLUG/misbehave.so", "kernel": "abrt" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 100 } ] },
    { "name": "quit", "op": "gemm", "subject": { "plugin": "$PLUG/misbehave.so", "kernel": "quit" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 100 } ] },
    { "name": "fail", "op": "gemm", "subject": { "plugin": "$PLUG/misbehave.so", "kernel": "fail" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 100 } ] },
    { "name": "hang", "op": "gemm", "subject": { "plugin": "$PLUG/misbehave.so", "kernel": "hang" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 100 } ] },
    { "name": "honest", "op": "gemm", "subject": { "plugin": "$PLUG/example_kernels.so", "kernel": "gemm_f16_f32acc" }, "shape": { "m": 8, "n": 8, "k": 64 }, "rules": [ { "bound": "gamma", "order": "recursive", "acc": "fp32" } ] }
  ] }
JSON
LOWP_PLUGIN_TIMEOUT=1 "$LOWP" check "$T/mis.json" --json "$T/mis.res.json" >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 1 ] && ok || bad "misbehaving kernels: exit $rc, want 1: $(cat "$T/o" "$T/e")"
for pat in "segv.*crashed (SIGSEGV)" "abrt.*crashed (SIGABRT)" "quit.*exited with status 3" \
           "fail.*returned error 5" "hang.*did not finish in 1 s" "^PASS honest "; do
  grep -q -- "$pat" "$T/o" && ok || bad "misbehaving kernels: no '$pat' in: $(cat "$T/o")"
done
[ -s "$T/mis.res.json" ] && ok || bad "JSON result not written after kernel failures"
sleep 0.2; pgrep -f "$T/mis.json" >/dev/null 2>&1 && bad "a plugin process was left running" || ok

echo "cli check_example: $pass passed, $fail failed"
[ $fail -eq 0 ]
