#!/bin/bash
# check_field.sh -- lowp check without false comfort, and the rules the field uses:
# parametrised checks (shapes x seeds, each case named in JUnit; a dropped odd-k element caught
# only at odd k), vacuous bound rules refused unless accepted, a crashing plugin as a JUnit
# <error>, --dump of failing checks as .npy, plugins found beside the binary and overridden
# with --plugin-dir, sqnr_db/cosine/mismatch rules and vs_reference's floor, JSON bounds of a
# plugin's gamma rule, the worst element of each rule's own metric.
# Run: bash tests/cli/check_field.sh path/to/lowp   (plugins in BUILD/plugins/)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
PLUG=$(dirname "$LOWP")/plugins
[ -e "$PLUG/example_kernels.so" ] || { echo "FAIL: $PLUG/example_kernels.so not built"; exit 1; }
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "python3-numpy missing: skipped"; exit 77; }
cd "$T" || exit 1

# --- the README's example, as written, from the repository root of a fresh build
(cd "$SRC" && "$LOWP" check examples/check/precision.json --junit "$T/ex.xml" >"$T/o" 2>"$T/e"); rc=$?
[ $rc -eq 1 ] && grep -q "^1 of 2 checks passed" o && ok || bad "README example: exit $rc: $(cat o e)"

# --- parametrised checks: 8 cases, the odd-k drop caught at k = 127 only
"$LOWP" check "$SRC/examples/check/params.json" --junit p.xml --json p.json >o 2>e; rc=$?
[ $rc -eq 1 ] && grep -q "^6 of 8 checks passed" o && ok || bad "params: exit $rc: $(cat o e)"
/usr/bin/python3 - <<'PY' && ok || bad "params JUnit/JSON"
import json, xml.etree.ElementTree as ET
cases = {c.get("name"): c for c in ET.parse("p.xml").getroot().iter("testcase")}
assert len(cases) == 8, cases.keys()
for s in (1, 2):
    assert cases["drop_odd[m=16,n=16,k=127,seed=%d]" % s].find("failure") is not None
    assert cases["drop_odd[m=16,n=16,k=128,seed=%d]" % s].find("failure") is None
    assert cases["honest[m=16,n=16,k=127,seed=%d]" % s].find("failure") is None
r = json.load(open("p.json"))
names = [c["name"] for c in r["checks"]]
assert names[0] == "honest[m=16,n=16,k=127,seed=1]" and len(names) == 8, names
# the plugin declares no method: the gamma rule's bound is in "bounds" all the same
assert r["checks"][0]["bounds"]["gamma"]["vacuous"] is False
assert r["checks"][0]["rules"][0]["worst"]["index"].startswith("C[")
PY
# bad parametrisations: exit 2, one message
cat >bad1.json <<'EOF'
{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [
  { "name": "x", "op": "gemm", "subject": { "kernel": "gemm_acc" }, "shape": [], "rules": [ { "max_ulp": 1 } ] } ] }
EOF
"$LOWP" check bad1.json >o 2>e; rc=$?
[ $rc -eq 2 ] && grep -q "empty list of shapes" e && ok || bad "empty shape list: exit $rc: $(cat e)"
sed 's/"shape": \[\]/"shape": [ 3 ]/' bad1.json >bad2.json
"$LOWP" check bad2.json >o 2>e; rc=$?
[ $rc -eq 2 ] && grep -q '"shape"\[0\] must be an object' e && ok || bad "shape list item: exit $rc: $(cat e)"

# --- a vacuous bound is an error of the spec unless accepted
cat >vac.json <<'EOF'
{ "lowp_check": 1, "defaults": { "in": "bf16", "out": "fp32" }, "checks": [
  { "name": "v", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp32" },
    "shape": { "m": 4, "n": 4, "k": 1024 },
    "rules": [ { "bound": "gamma", "order": "recursive", "acc": "bf16" } ] } ] }
EOF
"$LOWP" check vac.json --junit v.xml >o 2>e; rc=$?
[ $rc -eq 2 ] && grep -q "vacuous for k = 1024" e && grep -q "accept_vacuous" e && [ ! -e v.xml ] \
  && ok || bad "vacuous rule: exit $rc: $(cat o e)"
sed 's/"acc": "bf16" }/"acc": "bf16", "accept_vacuous": true }/' vac.json >vac_ok.json
"$LOWP" check vac_ok.json >o 2>e; rc=$?
[ $rc -eq 0 ] && grep -q "bound vacuous" o && ok || bad "accepted vacuous rule: exit $rc: $(cat o e)"

# --- a crash is a JUnit <error>, not a precision failure
cat >crash.json <<EOF
{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [
  { "name": "segv", "op": "gemm", "subject": { "plugin": "$PLUG/misbehave.so", "kernel": "segv" },
    "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 100 } ] },
  { "name": "planted", "op": "gemm", "subject": { "plugin": "example_kernels.so", "kernel": "gemm_f16_planted" },
    "shape": { "m": 8, "n": 8, "k": 512 }, "rules": [ { "bound": "gamma", "order": "recursive", "acc": "fp32" } ] } ] }
EOF
"$LOWP" check crash.json --junit c.xml --dump dump >o 2>e; rc=$?
[ $rc -eq 1 ] && ok || bad "crash spec: exit $rc: $(cat o e)"
/usr/bin/python3 - <<'PY' && ok || bad "crash JUnit: $(cat c.xml)"
import xml.etree.ElementTree as ET
root = ET.parse("c.xml").getroot()
assert root.get("errors") == "1" and root.get("failures") == "1", root.attrib
cases = {c.get("name"): c for c in root.iter("testcase")}
assert cases["segv"].find("error") is not None and cases["segv"].find("failure") is None
assert "SIGSEGV" in cases["segv"].find("error").get("message")
assert cases["planted"].find("failure") is not None
PY
# --dump: the failing measured check's inputs, output and exact reference
/usr/bin/python3 - <<'PY' && ok || bad "--dump: $(ls -R dump)"
import numpy as np, os
d = "dump/planted"
A, B = np.load(d + "/A.npy"), np.load(d + "/B.npy")
got, exact = np.load(d + "/C.got.npy"), np.load(d + "/C.exact.npy")
assert A.shape == (8, 512) and B.shape == (512, 8) and got.shape == exact.shape == (8, 8)
# the exact reference is the product of the dumped inputs (fp16 values: fp64 is within 1e-12)
assert np.allclose(exact, A @ B, rtol=1e-12, atol=1e-12)
assert np.abs(got - exact).max() > 1e-3          # the planted fp16 accumulator
assert "FAIL" in open(d + "/README.txt").read()
assert not os.path.exists("dump/segv")            # nothing measured, nothing dumped
PY
"$LOWP" check crash.json --dump dump >o 2>e; rc=$?
[ $rc -eq 2 ] && grep -q "not empty" e && ok || bad "--dump into a non-empty folder: exit $rc: $(cat e)"
# names that become the same folder name ("a/b" and "a_b"; ".." and "check"): each failed check its own
# folder (the second was written over the first, with no message)
P='"op": "gemm", "subject": { "plugin": "example_kernels.so", "kernel": "gemm_f16_planted" }, "shape": { "m": 8, "n": 8, "k": 512 }, "rules": [ { "bound": "gamma", "order": "recursive", "acc": "fp32" } ]'
printf '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ { "name": "a/b", %s }, { "name": "a_b", %s }, { "name": "..", %s }, { "name": "check", %s } ] }' "$P" "$P" "$P" "$P" >same.json
"$LOWP" check same.json --dump dump2 >o 2>e; rc=$?
[ $rc -eq 1 ] && [ "$(ls dump2 | tr '\n' ' ')" = "a_b a_b-2 check check-2 " ] &&
  [ "$(cat dump2/*/README.txt | grep -c "^lowp check --dump: check '\(a/b\|a_b\|\.\.\|check\)' (gemm) failed")" -eq 4 ] &&
  [ "$(cat dump2/*/README.txt | grep "^lowp check --dump: check" | sort -u | wc -l)" -eq 4 ] && ok ||
  bad "--dump, names that collide: exit $rc: $(ls dump2; cat e)"

# --- --plugin-dir overrides the spec's path; a missing plugin is still one message
mkdir -p alt && cp "$PLUG/example_kernels.so" alt/
sed 's#"plugin": "example_kernels.so"#"plugin": "/nonexistent/example_kernels.so"#' crash.json >moved.json
"$LOWP" check moved.json --only planted --plugin-dir alt >o 2>e; rc=$?
[ $rc -eq 1 ] && grep -q "^FAIL planted" o && ok || bad "--plugin-dir: exit $rc: $(cat o e)"
sed 's#"plugin": "example_kernels.so"#"plugin": "/nonexistent/nothere.so"#' crash.json >moved2.json
"$LOWP" check moved2.json --only planted --plugin-dir=alt >o 2>e; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <e)" -eq 1 ] && ok || bad "missing plugin: exit $rc: $(cat e)"
# a plugin found in a folder whose name is not UTF-8: its kernel's name would make JUnit XML and
# JSON that do not parse; refused before any work (exit 2, one line), nothing written
bad8=$(printf 'alt\377')
mkdir -p "$bad8" && cp "$PLUG/example_kernels.so" "$bad8/"
rm -f nonutf8.xml
"$LOWP" check moved.json --only planted --plugin-dir "$bad8" --junit nonutf8.xml >o 2>e; rc=$?
[ $rc -eq 2 ] && grep -q "not UTF-8" e && [ "$(wc -l <e)" -eq 1 ] && [ ! -e nonutf8.xml ] && ok ||
  bad "plugin name not UTF-8: exit $rc: $(cat e)"

# --- the rules of the field, on a registry kernel (fp16 vs fp32 accumulation)
cat >field.json <<'EOF'
{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp16" }, "checks": [
  { "name": "good", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp32" },
    "shape": { "m": 16, "n": 16, "k": 2048 },
    "rules": [ { "sqnr_db": 50 }, { "cosine": 0.99999 }, { "mismatch": 0, "assert_close": "pytorch" },
               { "vs_reference": { "kernel": "gemm_acc", "params": "acc=fp32" }, "factor": 2, "floor": 1e-5 } ] },
  { "name": "bad", "op": "gemm", "subject": { "kernel": "gemm_acc", "params": "acc=fp16" },
    "shape": { "m": 16, "n": 16, "k": 2048 },
    "rules": [ { "sqnr_db": 50 }, { "mismatch": "1%", "rtol": 1e-3, "atol": 1e-5 },
               { "vs_reference": { "kernel": "gemm_acc", "params": "acc=fp32" }, "factor": 2, "floor": 1e-5 } ] } ] }
EOF
"$LOWP" check field.json --json f.json >o 2>e; rc=$?
[ $rc -eq 1 ] && grep -q "^PASS good  " o && grep -q "^FAIL bad  " o && ok || bad "field rules: exit $rc: $(cat o e)"
grep -q "rule 1 failed: SQNR .* dB < gate 50 dB (margin -" o && grep -q "rule 2 failed: mismatched elements: [0-9]*/256" o \
  && grep -q "rule 3 failed: .* + floor 1e-05" o && ok || bad "field rule messages: $(cat o)"
/usr/bin/python3 - <<'PY' && ok || bad "field JSON"
import json
r = {c["name"]: c for c in json.load(open("f.json"))["checks"]}
g = r["good"]
assert g["outputs"][0]["sqnr_db"] > 50 and g["outputs"][0]["cosine"] > 0.99999
assert [x["rule"] for x in g["rules"]] == ["sqnr_db", "cosine", "mismatch", "vs_reference max_abs"]
assert all(x["pass"] for x in g["rules"])
PY
for rule in '{ "sqnr_db": "x" }' '{ "cosine": 2 }' '{ "mismatch": "5", "rtol": 1 }' '{ "mismatch": 3 }' \
            '{ "mismatch": 3, "assert_close": "pytorch", "rtol": 1 }' '{ "bound": "gamma", "accept_vacuous": 1 }'; do
  sed "s#{ \"sqnr_db\": 50 }, { \"cosine\": 0.99999 }#$rule#" field.json >badrule.json
  "$LOWP" check badrule.json >o 2>e; rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <e)" -eq 1 ] && grep -q "rule 1" e && ok || bad "bad rule $rule: exit $rc: $(cat e)"
done

echo "check_field: $pass passed, $fail failed"
[ $fail -eq 0 ]
