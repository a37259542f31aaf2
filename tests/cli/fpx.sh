#!/bin/bash
# fpx.sh -- lowp fpx scan / outputs and lowp gemm --fpx: the kinds and first indices of planted
# exceptions in saved tensors (text and JSON, --key value and --key=value), --fail-on's exit
# status, the black-box output scan, and a GEMM whose accumulation overflows.
# Run: bash tests/cli/fpx.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

/usr/bin/python3 -c "import numpy" 2>/dev/null || skip "numpy is not installed"
/usr/bin/python3 - "$T" <<'PY'
import numpy as np, sys
d = sys.argv[1]
x = np.full(1000, 0.75, dtype=np.float32)
x[417] = 1000.0   # overflows e4m3 (448) -> NaN without saturation
x[600] = 2000.0
x[123] = 1e-4     # below e4m3's smallest subnormal 2^-9 / 2: becomes zero
x[900] = np.nan
np.save(d + "/t.npy", x)
np.save(d + "/clean.npy", np.linspace(0.5, 400, 1000).astype(np.float32))
np.save(d + "/y.npy", np.array([[1.0, 2.0], [np.inf, np.nan]]))
np.save(d + "/a.npy", np.array([[1.0, 2.0], [3.0, 4.0]]))
np.save(d + "/b.npy", np.array([[1.0, np.nan], [3.0, 4.0]]))
PY
"$LOWP" fpx --help >"$T/o" 2>&1 && grep -q "usage: lowp fpx" "$T/o" && ok || bad "--help"
"$LOWP" fpx scan "$T/t.npy" --format e4m3 >"$T/o" 2>&1 && ok || bad "scan text: $(cat "$T/o")"
grep -q "overflow_nan *2" "$T/o" && grep -q "first: x\[417\]" "$T/o" && grep -q "underflow_zero *1" "$T/o" \
  && grep -q "first: x\[123\]" "$T/o" && grep -q "first exceptional index 123" "$T/o" && ok || bad "scan content: $(cat "$T/o")"
"$LOWP" fpx scan "$T/t.npy" --format=e4m3 --sat --json >"$T/j" 2>&1 && ok || bad "scan json: $(cat "$T/j")"
/usr/bin/python3 - "$T/j" <<'PY' && ok || bad "scan json values: $(cat "$T/j")"
import json, sys
j = json.load(open(sys.argv[1]))
k = j["trace"]["kinds"]
assert k["saturation"]["count"] == 2 and k["saturation"]["first"]["i"] == 417, k
assert k["underflow_zero"]["first"]["i"] == 123 and k["nan_propagated"]["first"]["i"] == 900, k
assert j["trace"]["first"] == "underflow_zero" and j["first_bad"] == 123 and j["nan_in"] == 1, j
assert sum(j["exponents"]["counts"]) == 999 and j["emax"] == 8, j
PY
# the histogram's end bins hold everything beyond them: 2000 (2^10) lies in e4m3's top bin, 2^(emax + 2) = 2^10;
# 1e6 (2^19) in fp16's, 2^17: ">= 17", not "17" (before, the top bin read as an exponent)
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.array([1.0, 1e6, 1e-9]))" "$T/h.npy"
"$LOWP" fpx scan "$T/h.npy" --format fp16 >"$T/o" 2>&1; grep -q '^    >=    17            1  above the range' "$T/o" \
  && grep -q '^    <=   -25            1  below the normals' "$T/o" && ok || bad "scan histogram ends: $(cat "$T/o")"
"$LOWP" fpx scan "$T/t.npy" --format e4m3 --fail-on overflow >/dev/null 2>&1; [ $? -eq 1 ] && ok || bad "--fail-on overflow must exit 1"
"$LOWP" fpx scan "$T/clean.npy" --format e4m3 --fail-on all >"$T/o" 2>&1 && grep -q "exceptions: none" "$T/o" \
  && ok || bad "clean tensor: $(cat "$T/o")"
"$LOWP" fpx outputs "$T/y.npy" --inputs "$T/a.npy,$T/b.npy" >"$T/o" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "index 2" "$T/o" && grep -q "b.npy: already exceptional" "$T/o" && grep -q "a.npy: finite" "$T/o" \
  && ok || bad "outputs: exit $rc: $(cat "$T/o")"
"$LOWP" fpx outputs "$T/a.npy" --json >"$T/o" 2>&1 && grep -q '"first": -1' "$T/o" && ok || bad "outputs clean: $(cat "$T/o")"
# an infinity where no input holds one is produced (overflow) even when an input holds a NaN (a
# NaN propagates as NaN); before, a NaN input made it "infinity (an input held one)", kinds [],
# and lowp check --fpx "infinity from an infinite input". Without --inputs no cause is claimed
/usr/bin/python3 - "$T" <<'PY'
import numpy as np, sys
d = sys.argv[1]
A = np.ones((2, 4), np.float32); A[1, 0] = np.nan
B = np.ones((4, 2), np.float32)
C = (A @ B).astype(np.float32); C[0, 1] = np.inf
np.save(d + "/na.npy", A); np.save(d + "/nb.npy", B); np.save(d + "/nc.npy", C)
np.save(d + "/ninf.npy", np.array([1.0, np.inf]))
PY
"$LOWP" fpx outputs "$T/nc.npy" --inputs "$T/na.npy,$T/nb.npy" --json >"$T/o" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q '"first": 1, "kinds": \["overflow_inf"\], "inputs_exceptional": \[true, false\]' "$T/o" \
  && ok || bad "outputs inf beside a NaN input, json: exit $rc: $(cat "$T/o")"
"$LOWP" fpx outputs "$T/nc.npy" --inputs "$T/na.npy,$T/nb.npy" >"$T/o" 2>&1
grep -q "index 1: infinity, and no input held an infinity (produced: overflow)" "$T/o" \
  && ok || bad "outputs inf beside a NaN input, text: $(cat "$T/o")"
"$LOWP" fpx outputs "$T/nc.npy" >"$T/o" 2>&1
grep -q "index 1: infinity (no --inputs given" "$T/o" && ok || bad "outputs without --inputs: $(cat "$T/o")"
"$LOWP" fpx outputs "$T/nc.npy" --inputs "$T/ninf.npy" >"$T/o" 2>&1
grep -q "index 1: infinity (an input held one" "$T/o" && ok || bad "outputs inf propagated: $(cat "$T/o")"
cat >"$T/specn.json" <<EOF2
{ "lowp_check": 1, "checks": [
  { "name": "g", "op": "gemm", "subject": { "tensors": { "inputs": [ { "path": "$T/na.npy" }, { "path": "$T/nb.npy" } ],
    "outputs": [ "$T/nc.npy" ] } }, "rules": [ { "nan_inf": "match" } ] } ] }
EOF2
"$LOWP" check "$T/specn.json" --fpx >"$T/o" 2>&1
grep -q "fpx: first NaN/inf output C\[0\]\[1\] (overflow_inf; spurious" "$T/o" && ok || bad "check --fpx inf beside a NaN input: $(cat "$T/o")"
# a GEMM accumulating in fp16 over large values: the first overflow of each output is an fma
"$LOWP" gemm --m 4 --n 4 --k 256 --in fp16 --acc fp16 --dist loguniform:1:5000 --fpx --json >"$T/j" 2>&1 && ok || bad "gemm --fpx: $(cat "$T/j")"
/usr/bin/python3 - "$T/j" <<'PY' && ok || bad "gemm --fpx values: $(cat "$T/j")"
import json, sys
f = json.load(open(sys.argv[1]))["fpx"]
e = f["kinds"]["overflow_inf"]
assert f["first"] == "overflow_inf" and e["count"] == 16 and e["first"]["i"] == 0 and e["first"]["j"] == 0, f
assert e["first"]["op"] == "fma" and e["first"]["result"] == "inf" and e["inherent"] == 16, f
PY
"$LOWP" gemm --m 4 --n 4 --k 256 --in fp16 --acc fp16 --model h100 --dist loguniform:1:5000 --fpx >"$T/o" 2>&1 \
  && grep -q "bfma" "$T/o" && ok || bad "gemm --model --fpx: $(cat "$T/o")"
# lowp check --fpx: a saved softmax with a planted NaN at y[2][5] (inputs finite, exact finite:
# produced, spurious), in text, JSON and JUnit properties; a clean check reports none
/usr/bin/python3 - "$T" <<'PY'
import numpy as np, sys
d = sys.argv[1]
x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
e = np.exp(x.astype(np.float64)); y = (e / e.sum(1, keepdims=True)).astype(np.float32)
np.save(d + "/sx.npy", x); np.save(d + "/sy_ok.npy", y)
y[2, 5] = np.nan; np.save(d + "/sy.npy", y)
PY
cat >"$T/spec.json" <<EOF2
{ "lowp_check": 1, "checks": [
  { "name": "planted", "op": "softmax", "subject": { "tensors": { "inputs": [ { "path": "$T/sx.npy" } ], "outputs": [ "$T/sy.npy" ] } },
    "rules": [ { "nan_inf": "match" } ] },
  { "name": "clean", "op": "softmax", "subject": { "tensors": { "inputs": [ { "path": "$T/sx.npy" } ], "outputs": [ "$T/sy_ok.npy" ] } },
    "rules": [ { "max_ulp": 4 } ] } ] }
EOF2
"$LOWP" check "$T/spec.json" --fpx --json "$T/r.json" --junit "$T/r.xml" >"$T/o" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "fpx: first NaN/inf output y\[2\]\[5\] (invalid; spurious" "$T/o" \
  && grep -q "fpx: no NaN or infinity" "$T/o" && ok || bad "check --fpx text: exit $rc: $(cat "$T/o")"
/usr/bin/python3 - "$T/r.json" <<'PY' && ok || bad "check --fpx json: $(cat "$T/r.json")"
import json, sys
c = json.load(open(sys.argv[1]))["checks"]
f = c[0]["fpx"]
assert f["first"] == 37 and f["at"] == "y[2][5]" and f["kinds"] == ["invalid"] and f["inherent"] is False, f
assert f["inputs_exceptional"] == [False] and c[1]["fpx"]["first"] == -1, c
PY
grep -q '<property name="fpx.first" value="37"/>' "$T/r.xml" && grep -q '<property name="fpx.first" value="-1"/>' "$T/r.xml" \
  && ok || bad "check --fpx junit: $(cat "$T/r.xml")"
# the rule {"no_exceptions": [...]}: the planted NaN fails it with the kind and index; the clean
# softmax passes; an unknown kind is bad input
cat >"$T/spec2.json" <<EOF2
{ "lowp_check": 1, "checks": [
  { "name": "planted", "op": "softmax", "subject": { "tensors": { "inputs": [ { "path": "$T/sx.npy" } ], "outputs": [ "$T/sy.npy" ] } },
    "rules": [ { "no_exceptions": ["invalid", "overflow"] } ] },
  { "name": "clean", "op": "softmax", "subject": { "tensors": { "inputs": [ { "path": "$T/sx.npy" } ], "outputs": [ "$T/sy_ok.npy" ] } },
    "rules": [ { "no_exceptions": ["all"] } ] } ] }
EOF2
"$LOWP" check "$T/spec2.json" >"$T/o" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "FAIL planted" "$T/o" && grep -q "first at y\[2\]\[5\] (invalid)" "$T/o" && grep -q "PASS clean" "$T/o" \
  && ok || bad "no_exceptions rule: exit $rc: $(cat "$T/o")"
sed 's/"all"/"bogus"/' "$T/spec2.json" >"$T/spec3.json"
expect_exit2 "no_exceptions bogus kind" "unknown exception kind bogus" "$LOWP" check "$T/spec3.json"
# lowp bench fpx validates before it times: traced and untraced bits agree (no timing judged here)
"$LOWP" bench fpx --n 16 --reps 1 >"$T/o" 2>&1 && [ "$(grep -c "same bits" "$T/o")" -eq 3 ] && ! grep -q "DIFFER" "$T/o" \
  && ok || bad "bench fpx: $(cat "$T/o")"
finish fpx
