#!/bin/bash
# fpx_experiments.sh -- the experiments' first exception ("first_exceptions" in results.json, "First
# exception" lines in summary.md) at places planted through their parameters:
#   loss-scaling: gradients 1e-3, 1e-2, 3e-8, 1e-9 and a loss of 1000: the first underflow is element 2
#     (3e-8 becomes a subnormal) at S = 2^0; the first overflow the loss at S = 2^7 (128000 > 65519);
#   gradscaler-dynamics: a NaN-loss burst starting at step floor(0.25 * 400) = 100: every policy's first
#     non-finite is nan_propagated there, element 0; with gradients of exactly +-1 PyTorch's initial scale
#     65536 overflows fp16 at step 0, element 0, and no scaling never overflows;
#   master-weights: SGD with lr 10 diverges; the reported step s of fp16-rn is checked by rerunning with
#     s and s + 1 training steps: the loss after s updates is finite, after s + 1 it is not;
#   softmax-overflow: fp16 with the sum in fp32 overflows in exp at element 0 (inherent); e4m3 with the
#     sum in e4m3 in an addition (spurious: the exact running sum is below 448);
#   fp8-scaling: delayed scaling starts with scale 1 and saturates at step 0; current scaling never does.
# Run: bash tests/cli/fpx_experiments.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

PY=/usr/bin/python3
# first CONTEXT_SUBSTRING FILE: the first_exceptions entry whose context contains the substring, as JSON
first() {
  "$PY" - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))["results"]["first_exceptions"]
m = [e for e in d if sys.argv[1] in e["context"]]
assert len(m) == 1, (sys.argv[1], [e["context"] for e in d])
print(json.dumps(m[0]))
PY
}
# expect JSON PYTHON_CONDITION (on e)
expect() {
  "$PY" -c "import json, sys; e = json.loads(sys.argv[1]); assert $2, e" "$1" 2>"$T/err" && ok \
    || bad "$3: $1 $(tail -1 "$T/err")"
}

"$LOWP" run loss-scaling --quick --grads 1e-3,1e-2,3e-8,1e-9 --loss=1000 --out "$T/ls" >/dev/null 2>&1 \
  && ok || bad "loss-scaling run"
j=$(first "underflow" "$T/ls/results.json")
expect "$j" 'e["found"] and e["step"] == 0 and e["element"] == 2 and e["kind"] == "underflow_subnormal" and e["op"] == "mul" and e["inherent"] is True' "loss-scaling first underflow"
j=$(first "overflow" "$T/ls/results.json")
expect "$j" 'e["step"] == 7 and e["element"] == 4 and e["kind"] == "overflow_inf" and e["exact"] == 128000' "loss-scaling first overflow"
grep -q "^First exception (fp16, the same products, overflow): overflow_inf in mul at step 7, element 4" "$T/ls/summary.md" \
  && ok || bad "loss-scaling summary line"

"$LOWP" run gradscaler-dynamics --quick --steps 400 --burst_at 0.25 --burst_len 5 --spike_prob 0 --mu0 -3 \
  --sigma 0.5 --sweep_n 0 --out "$T/gs" >/dev/null 2>&1 && ok || bad "gradscaler run (burst)"
for pol in none pytorch genesis mlx mlx-py; do
  j=$(first "$pol: S g rounded to fp16, first non-finite" "$T/gs/results.json")
  expect "$j" 'e["step"] == 100 and e["element"] == 0 and e["kind"] == "nan_propagated"' "gradscaler $pol burst"
done
"$LOWP" run gradscaler-dynamics --quick --steps 50 --mu0 0 --sigma 0 --drift 0 --spike_prob 0 --burst_len 0 \
  --sweep_n 0 --out "$T/gs1" >/dev/null 2>&1 && ok || bad "gradscaler run (g = +-1)"
j=$(first "pytorch: S g rounded to fp16, first non-finite" "$T/gs1/results.json")
expect "$j" 'e["step"] == 0 and e["element"] == 0 and e["kind"] == "overflow_inf" and e["counts"]["overflow_inf"] >= 1' "gradscaler pytorch overflow at step 0"
j=$(first "none: S g rounded to fp16, first non-finite" "$T/gs1/results.json")
expect "$j" 'not e["found"]' "gradscaler none never overflows"

"$LOWP" run master-weights --quick --lr 10 --train_steps 40 --out "$T/mw" >/dev/null 2>&1 && ok || bad "master-weights run"
j=$(first "SGD, fp16-rn: first non-finite" "$T/mw/results.json")
expect "$j" 'e["found"] and e["kind"].startswith("overflow") and e["element"] is not None' "master-weights diverges"
s=$("$PY" -c "import json, sys; print(json.loads(sys.argv[1])['step'])" "$j")
# the loss after the last of N steps (training.csv's row at step N), fp16-rn
last_loss() { awk -F, -v n="$1" '$1 == n && $2 == "fp16-rn" { print $3 }' "$2/training.csv"; }
for n in "$s" $((s + 1)); do
  "$LOWP" run master-weights --quick --lr 10 --train_steps "$n" --out "$T/mw$n" >/dev/null 2>&1 || bad "rerun $n"
done
"$PY" -c "import math, sys; assert math.isfinite(float(sys.argv[1])) and not math.isfinite(float(sys.argv[2]))" \
  "$(last_loss "$s" "$T/mw$s")" "$(last_loss $((s + 1)) "$T/mw$((s + 1))")" \
  && ok || bad "master-weights: step $s is not where the weights first become non-finite"

# softmax-overflow and fp8-scaling with their quick defaults: the runs of the shared quick report (fixture
# report_quick, cli_harness.bash: quick_report; the same bytes as a run of their own, cli_experiments),
# read here instead of made again
quick_report
[ -s "$QR/softmax-overflow/results.json" ] && ok || bad "softmax-overflow: not in the quick report"
j=$(first "fp16, sum in fp32" "$QR/softmax-overflow/results.json")
expect "$j" 'e["op"] == "exp" and e["element"] == 0 and e["kind"] == "overflow_inf" and e["inherent"] is True and e["step"] is None' "softmax fp16 exp"
j=$(first "e4m3, sum in e4m3" "$QR/softmax-overflow/results.json")
expect "$j" 'e["op"] == "add" and e["k"] == e["element"] and e["kind"] == "overflow_nan" and e["spurious"] is True' "softmax e4m3 sum spurious"

[ -s "$QR/fp8-scaling/results.json" ] && ok || bad "fp8-scaling: not in the quick report"
j=$(first "delayed scaling, the input" "$QR/fp8-scaling/results.json")
expect "$j" 'e["step"] == 0 and e["kind"] == "saturation" and e["op"] == "mul"' "fp8 delayed saturates at step 0"
j=$(first "current scaling, the input" "$QR/fp8-scaling/results.json")
expect "$j" 'not e["found"]' "fp8 current scaling never saturates"

finish fpx_experiments.sh
