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

echo "tol: $pass passed, $fail failed"
[ $fail -eq 0 ]
