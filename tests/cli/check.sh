#!/bin/bash
# check.sh -- command-line tests of `lowp check`: a spec over registry kernels
# passes; a planted precision bug fails with a message naming the check, the
# error and the limit; JUnit XML (parsed by Python's XML parser) and JSON
# results; --only, --update-baseline and baseline mismatches; the spec from
# stdin; --key=value forms; --help; determinism across thread counts; every
# kind of bad spec or input: exit 2, one message, no JUnit/JSON file left;
# the JSON Schema (docs/check-spec.schema.json) agrees with the parser.
# Run: bash tests/cli/check.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

# expect_fail NAME PATTERN CMD...: exit 2, PATTERN in stderr, one line, and
# no JUnit/JSON file left ($T/out.xml, $T/out.json)
expect_fail() {
  local name=$1 pat=$2; shift 2
  rm -f "$T/out.xml" "$T/out.json"
  "$@" >"$T/o" 2>"$T/e"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2 ($(head -c 300 "$T/e"))"; return; fi
  if ! grep -qi -- "$pat" "$T/e"; then bad "$name: message lacks '$pat': $(cat "$T/e")"; return; fi
  if [ "$(wc -l <"$T/e")" -ne 1 ]; then bad "$name: not exactly one message: $(cat "$T/e")"; return; fi
  if [ -e "$T/out.xml" ] || [ -e "$T/out.json" ]; then bad "$name: an output file was left"; return; fi
  if ls "$T"/*.tmp.* >/dev/null 2>&1; then bad "$name: a temporary file was left"; return; fi
  ok
}

# ------------------------------------------------------------ the specs
cat >"$T/good.json" <<'EOF'
{ "lowp_check": 1,
  "comment": "registry kernels that keep their promises",
  "baseline": "good.baseline.json",
  "defaults": { "in": "fp16", "out": "fp32" },
  "checks": [
    { "name": "gemm_fp32_pairwise", "op": "gemm",
      "subject": { "kernel": "gemm_acc", "params": "acc=fp32,order=pairwise" },
      "shape": { "m": 24, "n": 16, "k": 300 }, "inputs": { "dist": "normal", "seed": 7 },
      "rules": [ { "bound": "gamma" }, { "bound": "prob" }, { "nan_inf": "match" },
                 { "baseline": "max_bwd", "growth": 1.5 } ] },
    { "name": "gemm_fp32_recursive", "op": "gemm",
      "subject": { "kernel": "gemm_acc", "params": { "acc": "fp32" } },
      "shape": { "m": 8, "n": 8, "k": 1000 }, "inputs": { "dist": "uniform01", "seed": 3 },
      "rules": [ { "bound": "gamma", "fraction": 0.5, "order": "recursive", "acc": "fp32" },
                 { "max_ulp": 64 }, { "assert_close": "pytorch" } ] },
    { "name": "tc_h100", "op": "gemm",
      "subject": { "kernel": "gemm_tc", "params": "model=h100" },
      "shape": { "m": 8, "n": 8, "k": 256 },
      "rules": [ { "bound": "model", "model": "h100" },
                 { "bitexact": { "kernel": "gemm_tc", "params": "model=h100" } } ] }
  ] }
EOF
# the planted bug: fp16 accumulation where fp32 was promised
cat >"$T/planted.json" <<'EOF'
{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" },
  "checks": [
    { "name": "honest", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp32" },
      "shape": { "m": 8, "n": 8, "k": 512 },
      "rules": [ { "bound": "gamma", "order": "recursive", "acc": "fp32" } ] },
    { "name": "fp16_accumulation", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp16" },
      "shape": { "m": 8, "n": 8, "k": 512 },
      "rules": [ { "bound": "gamma", "order": "recursive", "acc": "fp32" },
                 { "vs_reference": { "kernel": "gemm_acc", "params": "acc=fp32" }, "factor": 2 } ] }
  ] }
EOF

# ------------------------------------------------------- normal operation
cd "$T" || exit 1
# a build without kernel subjects (kernels/registry_subject.c) runs only the parts
# that need none (spec parsing, bad input found before any subject opens)
HAVE_K=1
if "$LOWP" check planted.json --only honest 2>&1 | grep -q "this build has no kernel subjects"; then
  HAVE_K=0; echo "note: this build has no kernel subjects: their parts are skipped"
fi
kexpect_fail() { if [ $HAVE_K = 1 ]; then expect_fail "$@"; fi; }
if [ $HAVE_K = 1 ]; then
if "$LOWP" check good.json --update-baseline >"$T/o" 2>"$T/e" && [ -s good.baseline.json ] &&
   grep -q "baseline: gemm_fp32_pairwise: new entry" "$T/o"; then ok
else bad "first --update-baseline: $(cat "$T/o" "$T/e")"; fi
if "$LOWP" check good.json --junit "$T/good.xml" --json "$T/good.res.json" >"$T/o" 2>"$T/e"; then ok
else bad "good spec: exit $?: $(cat "$T/o" "$T/e")"; fi
[ "$(grep -c '^PASS ' "$T/o")" -eq 3 ] && ok || bad "three PASS lines: $(cat "$T/o")"
grep -q "^PASS gemm_fp32_pairwise .*(.*%).*worst C\[" "$T/o" && ok || bad "line with percent and worst element: $(cat "$T/o")"
grep -q "compute .* ulp" "$T/o" && grep -q "input .* + compute" "$T/o" && ok || bad "input/compute split missing"
[ -s "$T/e" ] && bad "stderr not empty: $(cat "$T/e")" || ok
if /usr/bin/python3 - "$T/good.xml" "$T/good.res.json" <<'PY'
import sys, json, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == 'testsuites'
cases = root.findall('./testsuite/testcase')
assert len(cases) == 3 and not root.findall('.//failure'), ET.tostring(root)
r = json.load(open(sys.argv[2]))
assert r['passed'] == 3 and r['failed'] == 0
c = r['checks'][0]
assert c['verdict'] == 'pass' and c['metrics']['max_bwd'] > 0
assert c['bounds']['gamma']['vacuous'] is False and 0 < c['bounds']['gamma']['used'] <= 1
assert c['bounds']['gamma']['name'].startswith('gamma_9 (pairwise')
o = c['outputs'][0]
assert o['ulp_input'] >= 0 and o['ulp_compute'] >= 0 and 'index' in o['worst'], o
assert all(x['pass'] for x in c['rules'])
tc = r['checks'][2]
assert tc['rules'][1]['rule'] == 'bitexact' and tc['rules'][1]['measured'] == 0
PY
then ok; else bad "JUnit or JSON of the good spec"; fi

# the planted failure: exit 1; the message names the check, the error and the limit
"$LOWP" check planted.json --junit "$T/p.xml" --json "$T/p.json" >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 1 ] && ok || bad "planted failure: exit $rc, want 1"
grep -q "^PASS honest" "$T/o" && ok || bad "the honest kernel passes: $(cat "$T/o")"
if grep -q "^FAIL fp16_accumulation .*gamma bound [0-9.e+-]* > [0-9.e+-]*" "$T/o" &&
   grep -q "rule 1 failed: backward error .* > .* gamma_512" "$T/o" &&
   grep -q "rule 2 failed: max_abs .* > .* = 2 x the reference" "$T/o"; then ok
else bad "planted failure message: $(cat "$T/o")"; fi
if /usr/bin/python3 - "$T/p.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
f = root.findall('.//testcase/failure')
assert len(f) == 1 and 'backward error' in f[0].get('message'), ET.tostring(root)
assert root.find('testsuite').get('failures') == '1'
PY
then ok; else bad "JUnit of the planted failure"; fi

# issue 19: names with markup and characters beyond ASCII give JUnit and
# JSON that parse, the names kept; a failing check's message too
cat >"$T/uni.json" <<'EOF'
{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" },
  "checks": [ { "name": "a<b>&'\"c \u00e9\u20ac\ud83d\ude00 \u0085", "op": "dot",
                "subject": { "kernel": "dot_acc", "params": "acc=fp16" }, "shape": { "k": 4096 },
                "rules": [ { "max_ulp": 0.001 } ] } ] }
EOF
"$LOWP" check "$T/uni.json" --junit "$T/uni.xml" --json "$T/uni.res.json" >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 1 ] && ok || bad "unicode names: exit $rc, want 1: $(cat "$T/e")"
if /usr/bin/python3 - "$T/uni.xml" "$T/uni.res.json" <<'PY'
import sys, json, xml.etree.ElementTree as ET
name = "a<b>&'\"c \u00e9\u20ac\U0001F600 \u0085"
root = ET.parse(sys.argv[1]).getroot()
c = root.find('./testsuite/testcase')
assert c.get('name') == name and c.find('failure') is not None, ET.tostring(root)
r = json.loads(open(sys.argv[2], 'rb').read().decode('utf-8'))
assert r['checks'][0]['name'] == name
PY
then ok; else bad "JUnit or JSON with unicode names"; fi

# issue 19: all outputs of a run published together or not at all: the
# JSON cannot be written (a file size limit stands for a full disk), so
# neither the baseline nor the JUnit file is replaced
cat >"$T/one.json" <<'EOF'
{ "lowp_check": 1, "baseline": "one.base.json", "defaults": { "in": "fp16", "out": "fp32" },
  "checks": [ { "name": "one", "op": "dot", "subject": { "kernel": "dot_acc" }, "shape": { "k": 64 },
                "rules": [ { "max_ulp": 64 } ] } ] }
EOF
"$LOWP" check "$T/one.json" --update-baseline >/dev/null 2>&1 || bad "one.json --update-baseline"
ino=$(stat -c %i "$T/one.base.json")
rm -f "$T/lim.xml" "$T/lim.json"
# (each file fits in stdio's buffer: the JSON, over the limit, fails at the final flush)
(trap '' XFSZ; ulimit -f 1; exec "$LOWP" check "$T/one.json" --update-baseline --junit "$T/lim.xml" --json "$T/lim.json") >"$T/o" 2>"$T/e"; rc=$?
if [ $rc -eq 2 ] && [ "$(stat -c %i "$T/one.base.json")" = "$ino" ] && [ ! -e "$T/lim.xml" ] && [ ! -e "$T/lim.json" ] &&
   ! ls "$T"/*.tmp.* >/dev/null 2>&1 && grep -q "none written" "$T/e"; then ok
else bad "partial publication: exit $rc, $(cat "$T/e")"; fi

# --only, and the = forms
"$LOWP" check planted.json --only=honest --json="$T/only.json" >"$T/o" 2>"$T/e" && ok || bad "--only honest: exit $?"
[ "$(grep -c -E '^(PASS|FAIL) ' "$T/o")" -eq 1 ] && ok || bad "--only ran more than one check"
"$LOWP" check planted.json --only fp16_accumulation >"$T/o" 2>&1; [ $? -eq 1 ] && ok || bad "--only the failing check: exit 1"
expect_fail "--only unknown" "no check of that name" "$LOWP" check planted.json --only nope --junit "$T/out.xml"

# the spec from stdin (paths relative to the current folder)
if "$LOWP" check - --only honest <planted.json >"$T/o" 2>"$T/e" && grep -q "^PASS honest" "$T/o"; then ok
else bad "spec from stdin: $(cat "$T/e")"; fi

# --help, --list-ops
"$LOWP" check --help >"$T/o" 2>&1 && grep -q "update-baseline" "$T/o" && ok || bad "--help"
"$LOWP" check --list-ops >"$T/o" 2>&1 && grep -q "^layernorm" "$T/o" && [ "$(sed -n '1,16p' "$T/o" | grep -c .)" -eq 16 ] && ok || bad "--list-ops"
# every registry kernel is listed with its operation and defaults
if [ $HAVE_K = 1 ]; then
  for k in cast sum_acc allreduce dot_acc gemv_acc gemm_acc gemm_tc softmax_naive softmax_stable logsoftmax \
           logsumexp layernorm rmsnorm xent exp log tanh gelu gelu_tanh; do
    grep -q "^$k " "$T/o" || { bad "--list-ops lacks kernel $k"; break; }
  done
  ok
fi

# determinism: the same JSON whatever the thread count (times aside)
"$LOWP" check good.json --threads 1 --json "$T/t1.json" >/dev/null 2>&1
"$LOWP" check good.json --threads=2 --json "$T/t2.json" >/dev/null 2>&1
if diff <(grep -v '"time_' "$T/t1.json") <(grep -v '"time_' "$T/t2.json") >/dev/null; then ok
else bad "results depend on the thread count"; fi

# Ctrl-C (SIGINT) or SIGTERM during the work: nothing is published. The work must outlast the wait
# on any machine: Kahan's sum in fp16 (no vector path) takes 37 s of wall on 2 Zen 5 cores; the plain
# recursive fp16 product of this shape took 1.7 s and sometimes finished (and published) before the
# signal, failing this check on a quiet machine
cat >"$T/slow.json" <<'EOF2'
{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" },
  "checks": [ { "name": "slow", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp16,order=kahan" },
                "shape": { "m": 1024, "n": 1024, "k": 1024 }, "rules": [ { "max_ulp": 1e9 } ] } ] }
EOF2
for sig in INT TERM; do
  rm -f "$T/sig.xml" "$T/sig.json"
  # (a background job of a script ignores SIGINT: restore the default first)
  /usr/bin/python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$LOWP" check "$T/slow.json" --junit "$T/sig.xml" --json "$T/sig.json" >/dev/null 2>&1 &
  pid=$!
  sleep 0.5
  kill -$sig $pid 2>/dev/null
  wait $pid; rc=$?
  if [ $rc -ne 0 ] && [ ! -e "$T/sig.xml" ] && [ ! -e "$T/sig.json" ] && ! ls "$T"/sig.*.tmp.* >/dev/null 2>&1; then ok
  else bad "SIG$sig during the work: exit $rc, files: $(ls "$T"/sig.* 2>/dev/null)"; fi
done

# ------------------------------------------------------------- baselines
cp good.baseline.json "$T/base.orig"
"$LOWP" check good.json --update-baseline >"$T/o" 2>&1 && grep -q "gemm_fp32_pairwise: unchanged" "$T/o" && ok ||
  bad "second --update-baseline says unchanged: $(cat "$T/o")"
# another lowp version
sed 's/"lowp_version":[^,]*/"lowp_version": "0.0.1"/' "$T/base.orig" >good.baseline.json
expect_fail "baseline of another version" "written by lowp 0.0.1" "$LOWP" check good.json --junit "$T/out.xml" --json "$T/out.json"
# a check defined differently (another shape)
cp "$T/base.orig" good.baseline.json
sed 's/"m": 24/"m": 25/' good.json >changed.json
expect_fail "baseline for another definition" "check 'gemm_fp32_pairwise' (checks\[0\]) is defined differently" "$LOWP" check changed.json --junit "$T/out.xml"
# a baseline holding a check the spec lacks
/usr/bin/python3 -c "
import json; b=json.load(open('$T/base.orig')); b['checks']['stranger']=b['checks']['tc_h100']
json.dump(b, open('good.baseline.json','w'))"
expect_fail "baseline for another spec" "holds check 'stranger'" "$LOWP" check good.json --json "$T/out.json"
# a baseline without the check
/usr/bin/python3 -c "
import json; b=json.load(open('$T/base.orig')); del b['checks']['gemm_fp32_pairwise']
json.dump(b, open('good.baseline.json','w'))"
expect_fail "baseline lacks the check" "no entry for check 'gemm_fp32_pairwise'" "$LOWP" check good.json
echo '{"checks": [1, 2' >good.baseline.json
expect_fail "corrupt baseline" "not a lowp baseline file" "$LOWP" check good.json --junit "$T/out.xml"
if "$LOWP" check good.json --update-baseline >"$T/o" 2>&1 && grep -q "new entry" "$T/o"; then ok
else bad "--update-baseline replaces a corrupt baseline: $(cat "$T/o")"; fi
rm -f good.baseline.json
expect_fail "no baseline file" "run lowp check --update-baseline" "$LOWP" check good.json --junit "$T/out.xml"
# a regression against the stored value: pretend the old error was smaller
/usr/bin/python3 -c "
import json; b=json.load(open('$T/base.orig')); b['checks']['gemm_fp32_pairwise']['metrics']['max_bwd'] /= 4
json.dump(b, open('good.baseline.json','w'))"
"$LOWP" check good.json --only gemm_fp32_pairwise >"$T/o" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "rule 4 failed: max_bwd .* > .* = 1.5 x baseline" "$T/o" && ok || bad "baseline regression caught (exit $rc): $(cat "$T/o")"
"$LOWP" check good.json --update-baseline --only gemm_fp32_pairwise >"$T/o" 2>&1 &&
  grep -q "gemm_fp32_pairwise: max_bwd .* -> " "$T/o" && ok || bad "--update-baseline says what changed: $(cat "$T/o")"
"$LOWP" check good.json >/dev/null 2>&1 && ok || bad "after the update the spec passes"

  # one check per operation over every kind of plain CPU kernel (the spec
  # in the repository), and an approximation caught: gelu's tanh form
  # measured against the exact GELU fails a 1-ulp rule
  if "$LOWP" check "$SRC/tests/data/check/kernels.json" >"$T/k.out" 2>"$T/k.err" &&
     grep -q "^17 of 17 checks passed" "$T/k.out"; then ok; else bad "kernels.json: $(cat "$T/k.out" "$T/k.err")"; fi
  printf '{ "lowp_check": 1, "checks": [ { "name": "gt", "op": "gelu", "in": "fp32", "out": "fp32", "subject": { "kernel": "gelu_tanh" }, "shape": { "m": 4, "n": 256 }, "rules": [ { "max_ulp": 1 } ] } ] }' >"$T/gt.json"
  "$LOWP" check "$T/gt.json" >"$T/gt.out" 2>&1; rc=$?
  [ $rc -eq 1 ] && grep -q "^FAIL gt  max_ulp .* > 1 " "$T/gt.out" && ok || bad "gelu_tanh vs exact GELU: exit $rc $(cat "$T/gt.out")"
fi # HAVE_K

# ------------------------------------------------------------- bad input
spec() { # spec NAME CHECK-JSON: a one-check spec in $T/NAME.json
  printf '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ %s ] }\n' "$2" >"$T/$1.json"
}
G='"name": "c", "op": "gemm", "subject": { "kernel": "gemm_acc" }, "shape": { "m": 2, "n": 2, "k": 4 }'
printf '{ "lowp_check": 1, "checks": [ ' >"$T/trunc.json"
expect_fail "invalid JSON" "not valid JSON" "$LOWP" check "$T/trunc.json" --junit "$T/out.xml" --json "$T/out.json"
spec op '{ "name": "c", "op": "matmul", "subject": { "kernel": "gemm_acc" }, "rules": [ { "max_ulp": 1 } ] }'
expect_fail "unknown op" "check 'c' (checks\[0\]): unknown op 'matmul'" "$LOWP" check "$T/op.json" --junit "$T/out.xml" --json "$T/out.json"
spec fmt "{ $G, \"out\": \"fp19\", \"rules\": [ { \"max_ulp\": 1 } ] }"
expect_fail "unknown format" "unknown format 'fp19'" "$LOWP" check "$T/fmt.json" --junit "$T/out.xml"
spec rule "{ $G, \"rules\": [ { \"max_ulp\": 1 }, { \"maxulp\": 2 } ] }"
expect_fail "unknown rule" "rule 2: unknown rule 'maxulp'" "$LOWP" check "$T/rule.json" --json "$T/out.json"
spec kern '{ "name": "c", "op": "gemm", "subject": { "kernel": "gemm_nope" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 1 } ] }'
expect_fail "unknown kernel" "check 'c' (checks\[0\]): subject: .*gemm_nope" "$LOWP" check "$T/kern.json" --junit "$T/out.xml"
spec num "{ $G, \"rules\": [ { \"max_ulp\": \"four\" } ] }"
expect_fail "number as a string" "must be a number" "$LOWP" check "$T/num.json" --junit "$T/out.xml"
spec dup "{ $G, \"rules\": [ { \"max_ulp\": 1 } ] }, { $G, \"rules\": [ { \"max_ulp\": 1 } ] }"
expect_fail "duplicate check names" "duplicate check name" "$LOWP" check "$T/dup.json" --junit "$T/out.xml"
spec model "{ $G, \"rules\": [ { \"bound\": \"model\", \"model\": \"z80\" } ] }"
kexpect_fail "unknown model" "model 'z80'" "$LOWP" check "$T/model.json" --junit "$T/out.xml"
spec kprob "{ $G, \"rules\": [ { \"bound\": \"prob\", \"order\": \"kahan\", \"acc\": \"fp32\" } ] }"
kexpect_fail "no probabilistic Kahan bound" "rule 1: no probabilistic bound is known" "$LOWP" check "$T/kprob.json" --junit "$T/out.xml"
spec smb '{ "name": "c", "op": "softmax", "subject": { "kernel": "softmax_stable" }, "shape": { "n": 8 }, "rules": [ { "bound": "gamma", "order": "recursive" } ] }'
kexpect_fail "bound on softmax" "sums of products" "$LOWP" check "$T/smb.json" --junit "$T/out.xml"
spec kop '{ "name": "c", "op": "softmax", "subject": { "kernel": "gemm_acc" }, "shape": { "n": 8 }, "rules": [ { "max_ulp": 4 } ] }'
kexpect_fail "kernel of another operation" "kernel 'gemm_acc' computes gemm, not softmax (kernels for softmax: softmax_naive softmax_stable softmax_naive_tree softmax_stable_tree)" "$LOWP" check "$T/kop.json" --junit "$T/out.xml"
spec kpar '{ "name": "c", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp32,compute=fp16" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 4 } ] }'
kexpect_fail "parameter the kernel does not take" "takes no parameter 'compute' (it takes: acc,order,round,prod)" "$LOWP" check "$T/kpar.json" --junit "$T/out.xml"
spec kdup '{ "name": "c", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp32,acc=fp16" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 4 } ] }'
kexpect_fail "parameter given twice" "parameter 'acc' given twice" "$LOWP" check "$T/kdup.json" --junit "$T/out.xml"
spec kord '{ "name": "c", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "order=zigzag" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 4 } ] }'
kexpect_fail "unknown order" "order=zigzag" "$LOWP" check "$T/kord.json" --junit "$T/out.xml"
spec ktc '{ "name": "c", "op": "gemm", "in": "fp64", "subject": { "kernel": "gemm_tc", "params": "model=h100" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 4 } ] }'
kexpect_fail "tensor-core model without that datapath" "kernel gemm_tc: model 'h100'" "$LOWP" check "$T/ktc.json" --junit "$T/out.xml"
spec nof "{ \"name\": \"c\", \"op\": \"gemm\", \"subject\": { \"kernel\": \"gemm_acc\" }, \"inputs\": { \"files\": [ \"$T/missing.npy\", \"$T/missing2.npy\" ] }, \"rules\": [ { \"max_ulp\": 1 } ] }"
expect_fail "missing input file" "inputs.files\[0\] .*missing.npy: cannot open" "$LOWP" check "$T/nof.json" --junit "$T/out.xml"
/usr/bin/python3 -c "
import numpy as np
np.save('$T/A.npy', np.ones((3, 4), np.float16)); np.save('$T/B.npy', np.ones((5, 2), np.float16))" 2>/dev/null
if [ -s "$T/A.npy" ]; then
  spec shp "{ \"name\": \"c\", \"op\": \"gemm\", \"subject\": { \"kernel\": \"gemm_acc\" }, \"inputs\": { \"files\": [ \"A.npy\", \"B.npy\" ] }, \"rules\": [ { \"max_ulp\": 1 } ] }"
  expect_fail "input shapes disagree" "A's columns (4) must equal B's rows (5)" "$LOWP" check "$T/shp.json" --junit "$T/out.xml"
  # and files that agree are measured
  /usr/bin/python3 -c "
import numpy as np
np.save('$T/B.npy', np.arange(8, dtype=np.float16).reshape(4, 2))"
  if [ $HAVE_K = 1 ]; then
    if "$LOWP" check "$T/shp.json" >"$T/o" 2>"$T/e" && grep -q "^PASS c" "$T/o"; then ok; else bad "gemm from .npy files: $(cat "$T/o" "$T/e")"; fi
    # no formats named: they follow the files (fp16 in, and so fp16 out)
    printf '{ "lowp_check": 1, "checks": [ { "name": "f", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp32" }, "inputs": { "files": [ "A.npy", "B.npy" ] }, "rules": [ { "max_ulp": 1 } ] } ] }' >"$T/nofmt.json"
    if "$LOWP" check "$T/nofmt.json" --json "$T/nofmt.res.json" >"$T/o" 2>"$T/e" &&
       /usr/bin/python3 -c "
import json; c=json.load(open('$T/nofmt.res.json'))['checks'][0]
assert c['in'] == ['fp16', 'fp16'] and c['out'] == 'fp16', c"; then ok; else bad "formats from the files: $(cat "$T/o" "$T/e")"; fi
  fi
fi
spec huge '{ "name": "c", "op": "gemm", "subject": { "kernel": "gemm_acc" }, "shape": { "m": 1000000, "n": 1000000, "k": 4 }, "rules": [ { "max_ulp": 1 } ] }'
kexpect_fail "impossible size" "check 'c' (checks\[0\]): the sizes .* need .* GiB" "$LOWP" check "$T/huge.json" --junit "$T/out.xml" --json "$T/out.json"
spec ok1 "{ $G, \"rules\": [ { \"max_ulp\": 1000 } ] }"
kexpect_fail "unwritable --junit" "--junit '/nonexistent-dir/j.xml': cannot create a file in folder" "$LOWP" check "$T/ok1.json" --junit /nonexistent-dir/j.xml --json "$T/out.json"
kexpect_fail "unwritable --json" "--json '/nonexistent-dir/r.json': cannot create a file in folder" "$LOWP" check "$T/ok1.json" --junit "$T/out.xml" --json /nonexistent-dir/r.json
mkdir -p "$T/adir"
kexpect_fail "--junit is a folder" "--junit '$T/adir' is a folder; lowp writes only to a new or a regular file" "$LOWP" check "$T/ok1.json" --junit "$T/adir" --json "$T/out.json"
kexpect_fail "--json is /dev/null" "is a device; lowp writes only to a new or a regular file" "$LOWP" check "$T/ok1.json" --json /dev/null
expect_fail "spec is a folder" "read error" "$LOWP" check "$T/adir" --junit "$T/out.xml"
expect_fail "missing spec" "cannot open" "$LOWP" check "$T/none.json" --junit "$T/out.xml"
expect_fail "unknown option" "unknown option '--bogus'" "$LOWP" check "$T/ok1.json" --bogus
expect_fail "no spec" "give a spec" "$LOWP" check
kexpect_fail "--update-baseline without a baseline" "names no \"baseline\"" "$LOWP" check "$T/ok1.json" --update-baseline
expect_fail "bad --threads" "threads" "$LOWP" check "$T/ok1.json" --threads 0

# lowp bench check (small): validates its subject, then times
if "$LOWP" bench check --size 48 --checks 3 >"$T/o" 2>"$T/e" && grep -q " 0 of 7680 elements differ" "$T/o" &&
   grep -q "48^3 fp16 GEMM" "$T/o"; then ok; else bad "bench check: $(cat "$T/o" "$T/e")"; fi
if [ $HAVE_K = 1 ]; then grep -q "spec of 3 small checks .*all passed" "$T/o" && ok || bad "bench check's spec: $(cat "$T/o")"; fi
"$LOWP" bench check --bogus >/dev/null 2>"$T/e"; [ $? -eq 2 ] && grep -q "unknown or incomplete option" "$T/e" && ok || bad "bench check --bogus"
"$LOWP" bench check --help >/dev/null 2>&1 && ok || bad "bench check --help"

# ---------------------------------------- the schema agrees with the parser
if /usr/bin/python3 -c "import jsonschema" 2>/dev/null; then
  if /usr/bin/python3 - "$SRC/docs/check-spec.schema.json" "$T" <<'PY'
import json, sys, glob, os, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
t = sys.argv[2]
good = ['good.json', 'planted.json', 'ok1.json', 'shp.json', 'changed.json']
badf = ['op.json', 'rule.json', 'num.json']
for g in good:
    p = os.path.join(t, g)
    if os.path.exists(p):
        errs = list(v.iter_errors(json.load(open(p))))
        assert not errs, (g, errs[0].message)
for b in badf:
    assert list(v.iter_errors(json.load(open(os.path.join(t, b))))), b + ' should not validate'
# the example specs shown in the README
src = os.path.dirname(os.path.dirname(sys.argv[1]))
text = open(os.path.join(src, 'README.md')).read()
for block in text.split('```json\n')[1:]:
    block = block.split('```')[0]
    if '"lowp_check"' in block:
        errs = list(v.iter_errors(json.loads(block)))
        assert not errs, ('README example', errs[0].message)
PY
  then ok; else bad "schema vs parser"; fi
else
  bad "python3-jsonschema missing (tools/test.sh installs it): the schema cannot be compared with the parser"
fi
# and every example spec in the repository validates against the parser
for s in "$SRC"/examples/check/*.json; do
  [ -e "$s" ] || continue
  grep -q '"lowp_check"' "$s" || continue
  case "$s" in *bad*) continue ;; esac
  if /usr/bin/python3 -c "import jsonschema" 2>/dev/null; then
    /usr/bin/python3 -c "
import json, jsonschema, sys
jsonschema.validate(json.load(open('$s')), json.load(open('$SRC/docs/check-spec.schema.json')), cls=jsonschema.Draft202012Validator)" 2>"$T/e" && ok || bad "$s does not validate against the schema: $(tail -1 "$T/e")"
  fi
done

echo "cli check: $pass passed, $fail failed"
[ $fail -eq 0 ]
