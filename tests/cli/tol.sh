#!/bin/bash
# tol.sh -- lowp tol: the derived rtol/atol (text and JSON, --key value and --key=value),
# values against the formulas of docs/tolerances.md, a vacuous bound reported (exit 0), and
# bad input (unknown op, format, method, k, confidence, scale, option): exit 2, one message.
# Run: bash tests/cli/tol.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

"$LOWP" tol --help >"$T/o" 2>&1 && grep -q "usage: lowp tol" "$T/o" && ok || bad "--help"
"$LOWP" tol dot --k 1024 --input fp16 --acc fp32 --out fp16 --confidence worst >"$T/o" 2>&1 && ok || bad "text: $(cat "$T/o")"
grep -q "rtol = 0.000488281" "$T/o" && grep -q "gamma_1024" "$T/o" && grep -q "assert_close(actual, expected" "$T/o" \
  && grep -q "Higham" "$T/o" && ok || bad "text content: $(cat "$T/o")"
# the same with --key=value, as JSON: rtol = u_out = 2^-11, atol = (1 + u_out) gamma_k(u32) k
"$LOWP" tol dot --k=1024 --input=fp16 --acc=fp32 --out=fp16 --confidence=worst --json >"$T/j" 2>&1 && ok || bad "json: $(cat "$T/j")"
/usr/bin/python3 - "$T/j" <<'PY' && ok || bad "json values: $(cat "$T/j")"
import json, sys
j = json.load(open(sys.argv[1]))
u32, k = 2.0 ** -24, 1024
g = k * u32 / (1 - k * u32)
assert j["rtol"] == 2.0 ** -11, j
floor = 2.0 ** -25 + k * 2.0 ** -150   # half fp16's subnormal spacing, k of fp32's
assert abs(j["atol"] - ((1 + 2.0 ** -11) * g * k + floor)) < 1e-15, j
assert j["vacuous"] is False and j["confidence"] == "worst case"
PY
# probabilistic: smaller than the worst case; pairwise: smaller still
w=$("$LOWP" tol dot --k 65536 --input bf16 --acc bf16 --out bf16 --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['vacuous'])")
[ "$w" = "True" ] && ok || bad "bf16 accumulation of 65536 terms must be vacuous"
"$LOWP" tol dot --k 65536 --input bf16 --acc bf16 --out bf16 >"$T/o" 2>&1 && grep -q "no tolerance: the bound is vacuous" "$T/o" \
  && ok || bad "vacuous text: $(cat "$T/o")"
p=$("$LOWP" tol gemm --k 4096 --input fp16 --acc fp32 --out fp16 --confidence 0.99 --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['bound_acc'])")
q=$("$LOWP" tol gemm --k 4096 --input fp16 --acc fp32 --out fp16 --confidence 0.99 --method pairwise --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['bound_acc'])")
/usr/bin/python3 -c "assert 0 < $q < $p < 1" && ok || bad "pairwise $q < recursive $p"
"$LOWP" tol gemm --k 4096 --input e4m3 --out fp32 --method model:h100,promote=128 >"$T/o" 2>&1 && grep -q "tensor-core model" "$T/o" \
  && ok || bad "model: $(cat "$T/o")"
"$LOWP" tol softmax --k 4096 --input bf16 --acc fp32 --out bf16 >"$T/o" 2>&1 && grep -q "softmax" "$T/o" && ok || bad "softmax"
# the default: probabilistic, its risk stated; refused (with the reason) for a narrow accumulator
"$LOWP" tol gemm --k 4096 --input fp16 --acc fp32 --out fp16 --json >"$T/j" 2>&1 && /usr/bin/python3 - "$T/j" <<'PY' && ok || bad "default risk: $(cat "$T/j")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["probabilistic"] is True and j["risk"] == 1e-6 and j["numel"] == 2 ** 24, j
assert "fails this test with probability <= 1e-06" in j["explanation"]
PY
"$LOWP" tol dot --k 256 --input fp16 --acc fp16 --out fp16 >"$T/o" 2>&1 && grep -q "not probabilistic: k u_acc" "$T/o" \
  && ok || bad "refusal text: $(cat "$T/o")"
# data-aware: --a/--b, atol per element from each sum |a_i b_i|, saved as .npy
/usr/bin/python3 -c "
import numpy as np
r = np.random.default_rng(1)
np.save('$T/a.npy', r.standard_normal((3, 200)).astype(np.float16))
np.save('$T/b.npy', r.standard_normal((200, 2)).astype(np.float16))
np.save('$T/x.npy', r.standard_normal((4, 64)).astype(np.float16))"
"$LOWP" tol gemm --a "$T/a.npy" --b "$T/b.npy" --input fp16 --acc fp32 --out fp16 --save-atol "$T/atol.npy" >"$T/o" 2>&1 \
  && grep -q "on the inputs (6 outputs)" "$T/o" && ok || bad "data-aware: $(cat "$T/o")"
/usr/bin/python3 -c "
import numpy as np
a, b, t = np.load('$T/a.npy'), np.load('$T/b.npy'), np.load('$T/atol.npy')
s = np.abs(a.astype(float)) @ np.abs(b.astype(float))
assert t.shape == (3, 2) and np.all(t >= 5.0e-6 * s) and np.all(t <= 1e-4 * s), (t, s)" && ok || bad "saved atol"
# without --input the files' dtypes are the formats (<f2: fp16), the same tolerance
"$LOWP" tol gemm --a "$T/a.npy" --b "$T/b.npy" --acc fp32 --save-atol "$T/atol2.npy" >"$T/o" 2>&1 \
  && /usr/bin/python3 -c "
import numpy as np
assert np.array_equal(np.load('$T/atol.npy'), np.load('$T/atol2.npy'))" && ok || bad "formats from dtypes: $(cat "$T/o")"
# values that are not values of the declared format: refused (exit 2, one line)
/usr/bin/python3 -c "
import numpy as np
np.save('$T/a64.npy', np.full((3, 200), 0.1))"
"$LOWP" tol gemm --a "$T/a64.npy" --b "$T/b.npy" --input fp16 >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && [ ! -s "$T/o" ] && grep -q "input A: 600 values are not fp16 values" "$T/e" && ok ||
  bad "fp64 values declared fp16: exit $rc $(cat "$T/e")"
"$LOWP" tol softmax --a "$T/x.npy" --input fp16 --acc fp32 --out fp16 --json >"$T/o" 2>&1 \
  && grep -q '"data_aware":' "$T/o" && ok || bad "row op data-aware: $(cat "$T/o")"
"$LOWP" tol logsumexp --k 1024 --input fp16 --compute fp16 --acc fp32 --out fp16 >"$T/o" 2>&1 \
  && grep -q "computed in fp16" "$T/o" && grep -q "summed in fp32" "$T/o" && ok || bad "compute/acc: $(cat "$T/o")"
# row operations in the pipeline: lowp's row kernels declare compute and acc, and the bound
# rules of lowp check use the tolerance derived for them (fp16 compute, fp32 row sum)
( cd "$T" && /usr/bin/python3 -c "
import numpy as np
np.save('xr.npy', (np.random.default_rng(3).standard_normal((16, 512)) * 3).astype(np.float16))" )
cat >"$T/rows.json" <<'JSON'
{"lowp_check": 1, "checks": [
 {"name": "lse", "op": "logsumexp", "in": "fp16", "out": "fp16", "subject": {"kernel": "logsumexp",
  "params": "compute=fp16,acc=fp32"}, "shape": {"m": 16, "n": 512}, "inputs": {"files": ["xr.npy"]},
  "rules": [{"bound": "gamma"}, {"bound": "prob"}]},
 {"name": "rms", "op": "rmsnorm", "in": "fp16", "out": "fp16", "subject": {"kernel": "rmsnorm",
  "params": "compute=fp16,acc=fp32"}, "shape": {"m": 16, "n": 512}, "inputs": {"files": ["xr.npy"]},
  "rules": [{"bound": "gamma"}, {"bound": "prob"}]}]}
JSON
( cd "$T" && "$LOWP" check rows.json --json rows.out.json >"$T/o" 2>&1 ) && grep -q "2 of 2 checks passed" "$T/o" \
  && grep -q '"probabilistic bound of logsumexp (compute fp16, acc fp32)' "$T/rows.out.json" && ok \
  || bad "row bounds: $(cat "$T/o")"

expect2() { # NAME PATTERN ARGS...
  local name=$1 pat=$2; shift 2
  "$LOWP" tol "$@" >"$T/o" 2>"$T/e"; local rc=$?
  [ $rc -eq 2 ] && [ ! -s "$T/o" ] && [ "$(wc -l <"$T/e")" -eq 1 ] && grep -q "$pat" "$T/e" && ok \
    || bad "$name: exit $rc: $(cat "$T/o" "$T/e")"
}
expect2 "no op" "give an operation" --k 4
expect2 "no k" "reduction length" dot
expect2 "k 0" "out of range" dot --k 0
expect2 "unknown op" "unknown operation 'dott'" dott --k 4
expect2 "no derivation" "no tolerance derivation" exp --k 4
expect2 "bad format" "unknown format" dot --k 4 --input fp17
expect2 "bad method" "order" dot --k 4 --method sideways
expect2 "bad model" "model" dot --k 4 --method model:nosuchgpu
expect2 "model + confidence" "worst case" gemm --k 64 --input fp16 --out fp32 --method model:h100 --confidence 0.9
expect2 "confidence 1.5" "confidence" dot --k 4 --confidence 1.5
expect2 "scale -1" "scale" dot --k 4 --scale -1
expect2 "unknown option" "unknown option" dot --k 4 --frobnicate
expect2 "two ops" "one operation" dot gemm --k 4
expect2 "missing value" "needs an argument" dot --k
# issue 30: repeated options (either spelling), kahan with a confidence, sum with a model
expect2 "k twice" "option --k given twice" dot --k 64 --k 65
expect2 "k twice, = spelling" "option --k given twice" dot --k 64 --k=64
expect2 "method twice" "option --method given twice" dot --k 4 --method pairwise --method=recursive
expect2 "json twice" "option --json given twice" dot --k 4 --json --json
expect2 "kahan + confidence" "no probabilistic bound for this method" dot --k 64 --method kahan --confidence 0.9
expect2 "sum with a model" "computes products" sum --k 64 --input fp16 --method model:h100
expect2 "softmax with a model" "computes products" softmax --k 64 --input fp16 --method model:h100
expect2 "scale nan" "scale" dot --k 4 --scale nan

# issue 30: every number printed is finite and >= 0, or the result is vacuous: the
# derivations that broke down (negative rtol/atol, atol = inf) say vacuous
for c in "softmax --k 125 --input fp16 --acc bf16" "layernorm --k 89 --input bf16 --acc bf16" \
         "rmsnorm --k 8388607" "dot --k 64 --scale 1e308" "logsumexp --k 300 --input bf16 --acc bf16"; do
  # shellcheck disable=SC2086
  "$LOWP" tol $c --json >"$T/j" 2>&1 && /usr/bin/python3 - "$T/j" <<'PY' && ok || bad "$c: $(cat "$T/j")"
import json, math, sys
j = json.load(open(sys.argv[1]), parse_constant=float)
num = [j[k] for k in ("rtol", "atol", "bound", "bound_acc", "rtol_same_sign")]
num = [float(x) if isinstance(x, str) else x for x in num]
assert j["vacuous"] is True, j
assert all(x == math.inf for x in num[:3]), j
PY
  # shellcheck disable=SC2086
  "$LOWP" tol $c >"$T/o" 2>&1 && grep -q "no tolerance: the bound is vacuous" "$T/o" && ! grep -qE "(rtol|atol) = -" "$T/o" \
    && ok || bad "$c text: $(cat "$T/o")"
done
# vacuous never goes back to a tolerance as k grows, and no tolerance ever falls
# (splitk:S at k = jS + 1 included): a sweep through the CLI
/usr/bin/python3 - "$LOWP" <<'PY' && ok || bad "monotone sweep"
import json, math, subprocess, sys
for args in (["softmax", "--input", "fp16", "--acc", "bf16"], ["dot", "--input", "fp16", "--acc", "fp16",
             "--method", "splitk:16"], ["layernorm", "--input", "bf16", "--acc", "bf16"]):
    vac, prev = False, None
    for k in [1, 2, 3, 16, 17, 32, 33, 48, 49, 64, 65, 88, 89, 90, 124, 125, 126, 1000, 100000]:
        j = json.loads(subprocess.run([sys.argv[1], "tol"] + args + ["--k", str(k), "--json"], check=True,
                                      capture_output=True, text=True).stdout, parse_constant=float)
        assert not (vac and not j["vacuous"]), (args, k)
        if not j["vacuous"]:
            assert j["rtol"] >= 0 and j["atol"] >= 0 and math.isfinite(j["atol"]), (args, k, j)
            if prev:
                assert j["rtol"] >= prev["rtol"] and j["atol"] >= prev["atol"], (args, k, prev, j)
            prev = j
        vac |= j["vacuous"]
PY
"$LOWP" tol dot --k 65 --input fp16 --acc fp16 --method splitk:64 >"$T/o" 2>&1 && grep -q "the bound at k = 64, larger (monotone in k)" "$T/o" \
  && ok || bad "splitk monotone named: $(cat "$T/o")"
expect2 "b without a" "needs --a" gemm --b "$T/b.npy"
expect2 "save without inputs" "needs the inputs" gemm --k 4 --save-atol "$T/s.npy"
expect2 "missing file" "cannot read" gemm --a "$T/nosuch.npy" --b "$T/b.npy"
expect2 "shapes" "" gemm --a "$T/a.npy" --b "$T/a.npy"
expect2 "risk 2" "risk" dot --k 4 --risk 2
expect2 "numel 0" "out of range" dot --k 4 --numel 0
expect2 "bad compute" "unknown format" softmax --k 4 --compute fp17

# block-scaled (issue 33): the model's bound, N d / (1 - N d): mxf4nvf4 at k = 4096 is
# 64 x (5 x 2^-35 (1 + 2^-23) + 2^-23) / (1 - ...) = 7.639e-06
out=$("$LOWP" tol gemm --k 4096 --input mxfp4 --method model:b200,kind=mxf4nvf4 --json)
if echo "$out" | grep -q '"bound":[[:space:]]*7.6387661' && echo "$out" | grep -q '"input":[[:space:]]*"mxfp4"'; then ok; else bad "tol block-scaled mxf4nvf4: $out"; fi
expect2 "zero=emin has no bound" "no bound" gemm --k 64 --input mxfp8_e4m3 --method model:b200,kind=mxf8f6f4,zero=emin

# files of different dtypes without --input: the output's format follows the wider (it followed A alone)
/usr/bin/python3 -c "
import numpy as np, sys; np.save(sys.argv[1], np.ones((2, 4), np.float16)); np.save(sys.argv[2], np.full((4, 3), 0.1))" \
  "$T/a16.npy" "$T/b64.npy"
out=$("$LOWP" tol gemm --a "$T/a16.npy" --b "$T/b64.npy" --json 2>&1)
if echo "$out" | grep -q '"input":[[:space:]]*"fp64"' && echo "$out" | grep -q '"out":[[:space:]]*"fp64"'; then ok
else bad "tol, an <f2 A and an <f8 B: $out"; fi

echo "tol: $pass passed, $fail failed"
[ $fail -eq 0 ]
