#!/bin/bash
# check_numpy.sh -- lowp check on tensors NumPy computed (a subject no one here wrote): fp16/fp32
# matmul and sums, a bf16 matmul as <u2 bit patterns, a float64 cross-entropy with <i8 targets;
# and bad tensor files (missing, wrong shape, raw bits without a format, integers as values).
# Skips (77) only when Debian's python3-numpy is missing (tools/test.sh installs it).
# Run: bash tests/cli/check_numpy.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "python3-numpy missing: skipped"; exit 77; }
/usr/bin/python3 "$SRC/tests/numpy/make_numpy.py" "$T" || { echo "FAIL: make_numpy.py"; exit 1; }
cp "$SRC/tests/numpy/numpy_spec.json" "$T/spec.json"
cd "$T" || exit 1

"$LOWP" check spec.json --json res.json >o 2>e; rc=$?
[ $rc -eq 0 ] && grep -q "^7 of 7 checks passed" o && ok || bad "numpy spec: exit $rc: $(cat o e)"
# what lowp measured about NumPy: fp16 matmul within one ulp of the exact product
/usr/bin/python3 -c "
import json
c = [c for c in json.load(open('res.json'))['checks'] if c['name'] == 'np_matmul_f16'][0]
u = [r for r in c['rules'] if r['rule'] == 'max_ulp'][0]
assert c['verdict'] == 'pass' and u['pass'] and u['measured'] <= 1, c['rules']" \
  && ok || bad "np fp16 matmul not within 1 ulp: $(grep np_matmul_f16 o)"
/usr/bin/python3 - res.json <<'PY' && ok || bad "JSON result"
import json, sys
r = json.load(open(sys.argv[1]))
checks = {c["name"]: c for c in r["checks"]}
assert set(checks) == {"np_matmul_f16", "np_matmul_f32", "np_sum_f16", "np_sum_f32", "np_matmul_bf16_bits", "np_layernorm_y_only", "np_xent_f64"}, checks.keys()
ln = {o["name"]: o for o in checks["np_layernorm_y_only"]["outputs"]}
assert ln["mean"] == {"name": "mean", "absent": True} and ln["var"]["absent"] and "max_ulp" in ln["y"], ln
assert all(c["verdict"] == "pass" for c in checks.values()), [c["verdict"] for c in checks.values()]
assert r["passed"] == 7 and r["failed"] == 0
PY

expect_fail() { # NAME PATTERN SPEC-JSON
  printf '%s\n' "$3" >bad.json
  rm -f out.xml
  "$LOWP" check bad.json --junit out.xml >o 2>e; local rc=$?
  if [ $rc -ne 2 ]; then bad "$1: exit $rc, want 2: $(cat o e)"; return; fi
  grep -q -- "$2" e || { bad "$1: message lacks '$2': $(cat e)"; return; }
  [ "$(wc -l <e)" -eq 1 ] || { bad "$1: not one message: $(cat e)"; return; }
  [ -e out.xml ] && { bad "$1: JUnit written"; return; }
  ok
}
H='{ "lowp_check": 1, "checks": [ { "name": "t", "op": "gemm", "subject": { "tensors": '
R=' }, "rules": [ { "max_ulp": 1 } ] } ] }'
expect_fail "missing file" "nothere.npy: cannot open" "$H"'{ "inputs": [ { "path": "nothere.npy" }, { "path": "B16.npy" } ], "outputs": [ { "path": "C16.npy" } ] }'"$R"
expect_fail "output of another shape" "C has shape (32, 10), the inputs give C (32, 24)" "$H"'{ "inputs": [ { "path": "A16.npy" }, { "path": "B16.npy" } ], "outputs": [ { "path": "C16_bad.npy" } ] }'"$R"
expect_fail "inner sizes disagree" "A's columns (256) must equal B's rows (512)" "$H"'{ "inputs": [ { "path": "A16.npy" }, { "path": "B32.npy" } ], "outputs": [ { "path": "C16.npy" } ] }'"$R"
expect_fail "raw bits without a format" "need \"format\"" "$H"'{ "inputs": [ { "path": "Abf.npy" }, { "path": "Bbf.npy" } ], "outputs": [ { "path": "Cbf.npy" } ] }'"$R"
expect_fail "integers as values" "integers, but gemm's A holds values" "$H"'{ "inputs": [ { "path": "target.npy" }, { "path": "B16.npy" } ], "outputs": [ { "path": "C16.npy" } ] }'"$R"
expect_fail "values not of the named format" "is not a bf16 value" "$H"'{ "inputs": [ { "path": "A32.npy", "format": "bf16" }, { "path": "B32.npy" } ], "outputs": [ { "path": "C32.npy" } ] }'"$R"
expect_fail "more outputs than the operation has" "2 output files for gemm, which has 1 output" "$H"'{ "inputs": [ { "path": "A16.npy" }, { "path": "B16.npy" } ], "outputs": [ { "path": "C16.npy" }, { "path": "C16.npy" } ] }'"$R"
printf 'junk' >junk.npy
expect_fail "not a .npy file" "junk.npy: not a .npy file" "$H"'{ "inputs": [ { "path": "junk.npy" }, { "path": "B16.npy" } ], "outputs": [ { "path": "C16.npy" } ] }'"$R"

# issue 30: vs_reference fails closed when the reference's error is infinite. The
# reference accumulates in fp16 (gemm_acc acc=fp16) on inputs in [1e2, 6e4]: it overflows,
# its max_abs is inf, and 2 x inf must not pass an all-NaN or an all-zero output.
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(1)
np.save('Abig.npy', rng.uniform(1e2, 6e4, (4, 64)).astype(np.float16))
np.save('Bbig.npy', rng.uniform(1e2, 6e4, (64, 4)).astype(np.float16))
np.save('Czero.npy', np.zeros((4, 4), np.float32))
np.save('Cnan.npy', np.full((4, 4), np.nan, np.float32))"
for o in Czero Cnan; do
  cat >vsinf.json <<EOF
{ "lowp_check": 1, "checks": [ { "name": "vs_inf", "op": "gemm", "out": "fp32",
  "subject": { "tensors": { "inputs": [ { "path": "Abig.npy" }, { "path": "Bbig.npy" } ], "outputs": [ { "path": "$o.npy" } ] } },
  "rules": [ { "vs_reference": { "kernel": "gemm_acc", "params": "acc=fp16" }, "factor": 2 } ] } ] }
EOF
  rm -f vs.xml
  "$LOWP" check vsinf.json --junit vs.xml >o 2>e; rc=$?
  if grep -q "this build has no kernel subjects" e; then echo "note: no kernel subjects: vs_reference $o not run"; continue; fi
  [ $rc -eq 1 ] && grep -q "^0 of 1 checks passed" o && grep -q "fails closed: the limit is infinite" o \
    && grep -q "the reference's max_abs is inf" o && grep -q 'failures="1"' vs.xml && ok \
    || bad "vs_reference with an infinite reference error, output $o: exit $rc: $(cat o e)"
done

# a cast whose exact result is a power of two (1.0) and which returns the value below it (one
# step off: 1 - 2^-8 in bf16) is not correctly rounded: max_ulp 0.5 must fail it. The ulp of
# bf16 at 1.0 is 2^-7 above and 2^-8 below; counted in the spacing above, the error read 0.5
# ulp and passed.
/usr/bin/python3 -c "
import numpy as np
x = np.array([[1.0, 2.0, 0.375, 1.5]], np.float32)
y = x.copy(); y[0, 0] = 1 - 2**-8
np.save('p2x.npy', x); np.save('p2y.npy', y); np.save('p2ok.npy', x)"
for o in p2y p2ok; do
  cat >p2.json <<EOF
{ "lowp_check": 1, "checks": [ { "name": "cast_bf16", "op": "cast", "in": "fp32", "out": "bf16",
  "subject": { "tensors": { "inputs": [ { "path": "p2x.npy" } ], "outputs": [ { "path": "$o.npy" } ] } },
  "rules": [ { "max_ulp": 0.5 } ] } ] }
EOF
  "$LOWP" check p2.json >o 2>e; rc=$?
  if [ $o = p2y ]; then
    [ $rc -eq 1 ] && grep -q "max_ulp 1 > 0.5 (ulps of bf16) at y\[0\]\[0\]" o && ok \
      || bad "pred(1.0) as the bf16 cast of 1.0: exit $rc: $(cat o e)"
  else
    [ $rc -eq 0 ] && grep -q "max_ulp 0 <= 0.5" o && ok || bad "exact cast: exit $rc: $(cat o e)"
  fi
done

# a row operation's bound rule is derived from the inputs, so lowp check cannot refuse a vacuous
# one before measuring (as it does a sum of products'): softmax in bf16 of rows up to +-500 has
# none (exp(2 x 500 x 2^-8) - 1 > 1). The rule could never fail: it fails closed unless it says
# "accept_vacuous" (it passed, exit 0, "bound vacuous").
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(1)
np.save('smz.npy', (rng.uniform(-1, 1, (2, 64)) * 500).astype(np.float32))"
for acc in '' ', "accept_vacuous": true'; do
  cat >smv.json <<EOF
{ "lowp_check": 1, "checks": [ { "name": "sm", "op": "softmax", "in": "fp32", "out": "fp32",
  "subject": { "kernel": "softmax_stable", "params": "compute=bf16,acc=fp32" },
  "shape": { "m": 2, "n": 64 }, "inputs": { "files": [ "smz.npy" ] },
  "rules": [ { "bound": "gamma"$acc } ] } ] }
EOF
  "$LOWP" check smv.json >o 2>e; rc=$?
  if grep -q "this build has no kernel subjects" e; then echo "note: no kernel subjects: vacuous row bound not run"; break; fi
  if [ -z "$acc" ]; then
    [ $rc -eq 1 ] && grep -q "fails closed: the limit is infinite (the worst-case bound of softmax .* is vacuous on these inputs: the rule could never fail" o && ok \
      || bad "vacuous row bound, not accepted: exit $rc: $(cat o e)"
  else
    [ $rc -eq 0 ] && grep -q "bound vacuous" o && ok || bad "vacuous row bound, accepted: exit $rc: $(cat o e)"
  fi
done

# a row operation's bound when the kernel returns a NaN where the exact result has none: the naive
# softmax computing in fp16 (exp(20) overflows: inf / inf) fails the rule with that cause, at that
# element (it named a bound that "applies to sums of products, not to softmax", measured 0 <= 0)
/usr/bin/python3 -c "
import numpy as np
np.save('smnan.npy', np.array([[1, 2, 20, 3], [0.5, 0.1, 0.2, 0.3]], dtype=np.float32))"
for b in gamma prob; do
  cat >smn.json <<EOF
{ "lowp_check": 1, "checks": [ { "name": "sm", "op": "softmax", "in": "fp32", "out": "fp32",
  "subject": { "kernel": "softmax_naive", "params": "compute=fp16,acc=fp32" },
  "shape": { "m": 2, "n": 4 }, "inputs": { "files": [ "smnan.npy" ] },
  "rules": [ { "bound": "$b" } ] } ] }
EOF
  "$LOWP" check smn.json >o 2>e; rc=$?
  if grep -q "this build has no kernel subjects" e; then echo "note: no kernel subjects: NaN row bound not run"; break; fi
  [ $rc -eq 1 ] && grep -q "FAIL sm  $b bound inf > 1" o &&
    grep -q "1 NaN/inf class mismatches, beyond any bound; first at y\[0\]\[2\]: got -\?nan, exact 1" o && ok \
    || bad "$b row bound, NaN output: exit $rc: $(cat o e)"
done

# A saved output under a check that names "out" must hold values of it, as the inputs must: NumPy's
# fp32 product of fp16 matrices declared "out": "fp16" passed max_ulp 0.5 (its values finer than
# any fp16 kernel's), with only a note. Now refused (exit 2) unless an in_format rule counts them.
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(4)
A = rng.standard_normal((8, 64)).astype(np.float16); B = rng.standard_normal((64, 8)).astype(np.float16)
np.save('oA.npy', A); np.save('oB.npy', B)
np.save('oC32.npy', (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32))" || bad "making oA/oB/oC32"
O='{ "lowp_check": 1, "checks": [ { "name": "o", "op": "gemm", "out": "fp16", "subject": { "tensors": { "inputs": [ { "path": "oA.npy" }, { "path": "oB.npy" } ], "outputs": [ { "path": "oC32.npy" } ] } }, "rules": '
expect_fail "fp32 output declared fp16" 'output C: element 0 = .* is not a fp16 value (the check' "$O"'[ { "max_ulp": 0.5 } ] } ] }'
printf '%s\n' "$O"'[ { "max_ulp": 0.5 }, { "in_format": 0 } ] } ] }' >o.json
"$LOWP" check o.json >o 2>e; rc=$?
[ $rc -eq 1 ] && grep -q "rule 2 failed: 64 output values are not fp16 values" o && ok \
  || bad "in_format counts an fp32 output declared fp16: exit $rc: $(cat o e)"
printf '%s\n' "$O"'[ { "max_ulp": 0.5 }, { "in_format": 64 } ] } ] }' >o.json
"$LOWP" check o.json >o 2>e && ok || bad "in_format 64 lets 64 fp32 outputs through: $(cat o e)"

# An exact result just off an fp32 midpoint: x . w = 1 + 2^-24 + 2^-80, whose binary64 rounding is
# the midpoint 1 + 2^-24 itself. 1 + 2^-23 is its correct rounding (0.5 - 2^-57 ulp off); 1 is not
# (0.5 + 2^-57 ulp), yet both measured 0.5 against the binary64 midpoint and passed max_ulp 0.5.
# A true tie (x . w = 1 + 2^-24 exactly) keeps both neighbours at 0.5.
/usr/bin/python3 -c "
import numpy as np
np.save('mx.npy', np.array([1.0, 2.0**-24, 2.0**-40], np.float32)); np.save('mw.npy', np.array([1.0, 1.0, 2.0**-40], np.float32))
np.save('tx.npy', np.array([1.0, 2.0**-24], np.float32)); np.save('tw.npy', np.array([1.0, 1.0], np.float32))
np.save('y1.npy', np.array([1.0], np.float32)); np.save('y2.npy', np.array([1.0 + 2.0**-23], np.float32))" || bad "making mx/mw"
mid() { # X W Y: exit status of a max_ulp 0.5 check of dot(X, W) = Y
  printf '{ "lowp_check": 1, "checks": [ { "name": "m", "op": "dot", "subject": { "tensors": { "inputs": [ { "path": "%s" }, { "path": "%s" } ], "outputs": [ { "path": "%s" } ] } }, "rules": [ { "max_ulp": 0.5 } ] } ] }\n' "$1" "$2" "$3" >m.json
  "$LOWP" check m.json >o 2>e
}
mid mx.npy mw.npy y1.npy; rc=$?
[ $rc -eq 1 ] && grep -q "rule 1 failed: max_ulp" o && ok || bad "1 for 1 + 2^-24 + 2^-80 (not correctly rounded): exit $rc: $(cat o e)"
mid mx.npy mw.npy y2.npy && ok || bad "1 + 2^-23 for 1 + 2^-24 + 2^-80 (correctly rounded): $(cat o e)"
mid tx.npy tw.npy y1.npy && ok || bad "1 for the tie 1 + 2^-24: $(cat o e)"
mid tx.npy tw.npy y2.npy && ok || bad "1 + 2^-23 for the tie 1 + 2^-24: $(cat o e)"

# Without "out" the output format is the first output file's: layernorm's fp32 mean beside an fp16 y
# (as PyTorch's half layer_norm returns them) was measured in fp16 ulps, a mean 2e-4 off (1700 fp32
# ulps) passing max_ulp 1 with only a note. Refused now, unless an in_format rule counts them.
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(2)
x = (rng.standard_normal((4, 32)) + 3).astype(np.float16); xd = x.astype(np.float64)
m = xd.mean(-1); v = xd.var(-1)
np.save('hx.npy', x); np.save('hy.npy', ((xd - m[:, None]) / np.sqrt(v[:, None] + 1e-5)).astype(np.float16))
np.save('hmean.npy', (m * (1 + 2e-4)).astype(np.float32)); np.save('hvar.npy', v.astype(np.float32))" || bad "making hx/hy"
H='{ "lowp_check": 1, "checks": [ { "name": "h", "op": "layernorm", "eps": 1e-5, "subject": { "tensors": { "inputs": [ { "path": "hx.npy" } ], "outputs": [ "hy.npy", "hmean.npy", "hvar.npy" ] } }, "rules": '
expect_fail "fp32 mean beside an fp16 y" 'output mean: element 0 = .* is not a fp16 value (the output format, from the first output file)' "$H"'[ { "max_ulp": 1 } ] } ] }'

# an fp64 output: its exact result rounded to binary64 is itself a rounding, and an output on the
# other side of it was measured up to half an ulp low. x . w = 1 + 1.4 2^-52 (Fraction: the output
# 1 is 1.4 ulp off, 1 + 2^-52 0.4, 1 + 2^-51 0.6): 1 passed max_ulp 1 as "1 ulp" and the correctly
# rounded 1 + 2^-52 read 0. The same in a GEMM wider than one tile of the exact reference (1,100
# columns: 1,024 and 76), the wrong output in the second tile, then none.
/usr/bin/python3 -c "
import numpy as np
np.save('fa.npy', np.array([1.0, 2.0**-52])); np.save('fb.npy', np.array([1.0, 1.4]))
for n, v in (('f0', 1.0), ('f1', 1.0 + 2.0**-52), ('f2', 1.0 + 2.0**-51)): np.save(n + '.npy', np.array([v]))
B = np.ones((2, 1100)); B[1, :] = 1.4
C = np.full((1, 1100), 1.0 + 2.0**-52); np.save('gc_ok.npy', C); C[0, 1090] = 1.0; np.save('gc_bad.npy', C)
np.save('ga.npy', np.array([[1.0, 2.0**-52]])); np.save('gb.npy', B)"
# OP A B OUT LIMIT VERDICT ULP WORST: one fp64 check of the saved output OUT
for c in "dot fa fb f0 1 FAIL 1.4 y" "dot fa fb f1 0.5 PASS 0.4 y" "dot fa fb f2 1 PASS 0.6 y" \
         "gemm ga gb gc_bad 1 FAIL 1.4 C\[0\]\[1090\]" "gemm ga gb gc_ok 0.5 PASS 0.4 C"; do
  set -- $c
  cat >f64.json <<EOF
{ "lowp_check": 1, "checks": [ { "name": "c", "op": "$1", "in": "fp64", "out": "fp64",
  "subject": { "tensors": { "inputs": [ "$2.npy", "$3.npy" ], "outputs": [ "$4.npy" ] } },
  "rules": [ { "max_ulp": $5 } ] } ] }
EOF
  "$LOWP" check f64.json >o 2>e
  grep -q "^$6 c  max_ulp $7 [<>]=\? $5 .* worst $8.* (compute $7 ulp)" o && ok || bad "fp64 $1 output $4: $(cat o e)"
done

# overflow under a declared directed rounding: an fp16 sum 256 x 255.875 + 1 x 26 = 65530 rounds to
# inf to nearest but to 65504 toward zero (IEEE 754-2019, 7.4), which is what an honest fp16 rtz
# accumulator returns. A bound rule declaring rnd=rtz failed it as "backward error inf" (a NaN/inf
# class mismatch against the rne rounding); now that element is measured: 26 / 65530 = 0.0003968.
# A wrong finite output (60000) is measured too (0.08439); rne, or rdn at +65530, still fail it as a
# mismatch; toward +inf, 256 x 255.875 + 1 x 6 = 65510 rounds to inf, which rne does not.
/usr/bin/python3 -c "
import numpy as np
np.save('oa.npy', np.array([[256, 1]], dtype=np.float16)); np.save('ona.npy', np.array([[-256, -1]], dtype=np.float16))
np.save('ob26.npy', np.array([[255.875], [26]], dtype=np.float16)); np.save('ob6.npy', np.array([[255.875], [6]], dtype=np.float16))
for n, v in (('omax', 65504), ('onmax', -65504), ('o6e4', 60000), ('oinf', np.inf)): np.save(n + '.npy', np.array([[v]], dtype=np.float16))"
# A B OUT RND VERDICT BOUND
for c in "oa ob26 omax rtz PASS 0.0003968" "oa ob26 omax rdn PASS 0.0003968" "oa ob26 omax rne FAIL inf" \
         "oa ob26 omax rup FAIL inf" "oa ob26 o6e4 rtz FAIL 0.08439" "oa ob26 o6e4 rne FAIL inf" \
         "ona ob26 onmax rup PASS 0.0003968" "ona ob26 onmax rdn FAIL inf" "oa ob6 oinf rup PASS 0" \
         "oa ob6 oinf rtz FAIL inf" "oa ob6 oinf rne FAIL inf"; do
  set -- $c
  cat >ovf.json <<EOF
{ "lowp_check": 1, "checks": [ { "name": "c", "op": "gemm", "in": "fp16", "out": "fp16",
  "subject": { "tensors": { "inputs": [ "$1.npy", "$2.npy" ], "outputs": [ "$3.npy" ] } },
  "rules": [ { "bound": "gamma", "order": "recursive,acc=fp16,rnd=$4" } ] } ] }
EOF
  "$LOWP" check ovf.json >o 2>e
  grep -q "^$5 c  gamma bound $6 " o && ok || bad "overflow $3 under rnd=$4: want $5 $6: $(cat o e)"
done

echo "cli check_numpy: $pass passed, $fail failed"
[ $fail -eq 0 ]
