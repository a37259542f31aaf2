#!/bin/bash
# tol.sh -- lowp tol: the derived rtol/atol (text and JSON, --key value and --key=value),
# values against the formulas of docs/tolerances.md, a vacuous bound reported (exit 0), and
# bad input (unknown op, format, method, k, confidence, scale, option): exit 2, one message.
# Run: bash tests/cli/tol.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

"$LOWP" tol --help >"$T/o" 2>&1 && grep -q "usage: lowp tol" "$T/o" && ok || bad "--help"
"$LOWP" tol dot --k 1024 --input fp16 --acc fp32 --out fp16 >"$T/o" 2>&1 && ok || bad "text: $(cat "$T/o")"
grep -q "rtol = 0.000488281" "$T/o" && grep -q "gamma_1024" "$T/o" && grep -q "assert_close(actual, expected" "$T/o" \
  && grep -q "Higham" "$T/o" && ok || bad "text content: $(cat "$T/o")"
# the same with --key=value, as JSON: rtol = u_out = 2^-11, atol = (1 + u_out) gamma_k(u32) k
"$LOWP" tol dot --k=1024 --input=fp16 --acc=fp32 --out=fp16 --json >"$T/j" 2>&1 && ok || bad "json: $(cat "$T/j")"
/usr/bin/python3 - "$T/j" <<'PY' && ok || bad "json values: $(cat "$T/j")"
import json, sys
j = json.load(open(sys.argv[1]))
u32, k = 2.0 ** -24, 1024
g = k * u32 / (1 - k * u32)
assert j["rtol"] == 2.0 ** -11, j
assert abs(j["atol"] - (1 + 2.0 ** -11) * g * k) < 1e-15, j
assert j["vacuous"] is False and j["confidence"] == "worst case"
PY
# probabilistic: smaller than the worst case; pairwise: smaller still
w=$("$LOWP" tol dot --k 65536 --input bf16 --acc bf16 --out bf16 --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['vacuous'])")
[ "$w" = "True" ] && ok || bad "bf16 accumulation of 65536 terms must be vacuous"
"$LOWP" tol dot --k 65536 --input bf16 --acc bf16 --out bf16 >"$T/o" 2>&1 && grep -q "no tolerance: the bound is vacuous" "$T/o" \
  && ok || bad "vacuous text: $(cat "$T/o")"
p=$("$LOWP" tol gemm --k 4096 --input fp16 --acc fp16 --out fp16 --confidence 0.99 --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['bound_acc'])")
q=$("$LOWP" tol gemm --k 4096 --input fp16 --acc fp16 --out fp16 --confidence 0.99 --method pairwise --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['bound_acc'])")
/usr/bin/python3 -c "assert 0 < $q < $p < 1" && ok || bad "pairwise $q < recursive $p"
"$LOWP" tol gemm --k 4096 --input e4m3 --out fp32 --method model:h100,promote=128 >"$T/o" 2>&1 && grep -q "tensor-core model" "$T/o" \
  && ok || bad "model: $(cat "$T/o")"
"$LOWP" tol softmax --k 4096 --input bf16 --acc fp32 --out bf16 >"$T/o" 2>&1 && grep -q "softmax" "$T/o" && ok || bad "softmax"

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

# block-scaled (issue 33): the model's bound, N d / (1 - N d): mxf4nvf4 at k = 4096 is
# 64 x (5 x 2^-35 (1 + 2^-23) + 2^-23) / (1 - ...) = 7.639e-06
out=$("$LOWP" tol gemm --k 4096 --input mxfp4 --method model:b200,kind=mxf4nvf4 --json)
if echo "$out" | grep -q '"bound":[[:space:]]*7.6387661' && echo "$out" | grep -q '"input":[[:space:]]*"mxfp4"'; then ok; else bad "tol block-scaled mxf4nvf4: $out"; fi
expect2 "zero=emin has no bound" "no bound" gemm --k 64 --input mxfp8_e4m3 --method model:b200,kind=mxf8f6f4,zero=emin

echo "tol: $pass passed, $fail failed"
[ $fail -eq 0 ]
