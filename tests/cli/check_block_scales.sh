#!/bin/bash
# check_block_scales.sh -- lowp check on block-scaled tensors saved with companion scales
# (issue 33): MXFP8 elements as values and codes with e8m0 scales as codes and values (.npy),
# the scales also in cuBLAS's 128x4 tiled layout, NVFP4 as packed nibbles with ue4m3 scales and
# an fp32 tensor scale (.safetensors); all written by NumPy alone (tests/numpy/make_block_scales.py).
# The honest outputs pass at max_ulp 1; outputs with the scales' layout misread or the nibbles
# swapped fail; every mismatch of shape, layout or format is one message and exit 2.
# Run: bash tests/cli/check_block_scales.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
/usr/bin/python3 -c "import numpy" 2>/dev/null || skip "python3-numpy missing"
/usr/bin/python3 "$SRC/tests/numpy/make_block_scales.py" "$T" || { echo "FAIL: make_block_scales.py"; exit 1; }
cp "$SRC/tests/numpy/block_scales_spec.json" "$T/spec.json"
cd "$T" || exit 1

"$LOWP" check spec.json --json res.json >o 2>e; rc=$?
[ $rc -eq 0 ] && grep -q "^4 of 4 checks passed" o && ok || bad "honest outputs: exit $rc: $(cat o e)"
/usr/bin/python3 - res.json <<'PY' && ok || bad "JSON result: the inputs' formats"
import json, sys
r = {c["name"]: c for c in json.load(open(sys.argv[1]))["checks"]}
assert r["mxfp8"]["in"] == ["mxfp8_e4m3", "mxfp8_e4m3"] and r["nvfp4"]["in"] == ["nvfp4", "nvfp4"], r["nvfp4"]["in"]
assert all(c["verdict"] == "pass" for c in r.values())
rs = [x for x in r["by_rule"]["rules"] if x["rule"] == "sqnr_db"][0]
assert 20 < rs["measured"] < 40, rs
PY

# the planted bugs: scales read transposed; nibbles read high first
/usr/bin/python3 - <<'PY'
import json
s = json.load(open("spec.json"))
s["checks"] = [s["checks"][0], s["checks"][2]]
s["checks"][0]["subject"]["tensors"]["outputs"] = ["mx_C_badlayout.npy"]
s["checks"][1]["subject"]["tensors"]["outputs"] = ["nv_C_nibbles.npy"]
json.dump(s, open("bugs.json", "w"))
PY
"$LOWP" check bugs.json >o 2>e; rc=$?
[ $rc -eq 1 ] && grep -q "^FAIL mxfp8 " o && grep -q "^FAIL nvfp4 " o && grep -q "^0 of 2 checks passed" o \
  && ok || bad "planted layout and nibble bugs not caught: exit $rc: $(cat o e)"

# bad companions: one message, exit 2, nothing written
one() { # NAME PATTERN INPUT-A-JSON [IN-FORMAT]
  printf '{ "lowp_check": 1, "checks": [ { "name": "t", "op": "gemm", "in": "%s", "out": "fp32", "subject": { "tensors": { "inputs": [ %s, { "path": "mx_Bt_q.npy", "scales": "mx_Bt_s.npy" } ], "outputs": [ "mx_C.npy" ] } }, "rules": [ { "max_ulp": 1 } ] } ] }\n' \
    "${4:-mxfp8_e4m3}" "$3" >bad.json
  expect_exit2 "$1" "$2" "$LOWP" check bad.json --json bad_out.json
  [ -e bad_out.json ] && bad "$1: JSON written"
}
one "scales of another shape" "scales of shape (16, 2), but 16 rows of 3 blocks of 32 need (16, 3)" \
  '{ "path": "mx_A_q.npy", "scales": "mx_A_s_short.npy" }'
one "scale values not e8m0" "= 3 is not a mxfp8_e4m3 scale value" '{ "path": "mx_A_q.npy", "scales": "mx_A_s_notpow2.npy" }'
one "element values not e4m3" "element 0 = 0.30000001192092896 is not a mxfp8_e4m3 element value" \
  '{ "path": "mx_A_q_not_e4m3.npy", "scales": "mx_A_s.npy" }'
one "2-byte codes for 1-byte scales" "2-byte codes, but mxfp8_e4m3 scales take 1 byte" \
  '{ "path": "mx_A_q.npy", "scales": "mx_A_s_u2.npy" }'
one "compact scales read as 128x4" "the 128x4 layout of 16 x 3 scales needs 512" \
  '{ "path": "mx_A_q.npy", "scales": "mx_A_s.npy", "scale_layout": "128x4" }'
one "an unknown layout" "is not a layout (compact, 128x4)" \
  '{ "path": "mx_A_q.npy", "scales": "mx_A_s.npy", "scale_layout": "rowmajor" }'
one "a tensor scale for mxfp8" "\"tensor_scale\" given, but mxfp8_e4m3 has no per-tensor scale" \
  '{ "path": "mx_A_q.npy", "scales": "mx_A_s.npy", "tensor_scale": 2 }'
one "a tensor scale without scales" "\"tensor_scale\" and \"scale_layout\" go with \"scales\"" \
  '{ "path": "mx_A_q.npy", "tensor_scale": 2 }'
one "a tensor scale not fp32" "must be a positive finite fp32 number" \
  '{ "path": "mx_A_q.npy", "scales": "mx_A_s.npy", "tensor_scale": 0.1 }'
one "nvfp4 without its tensor scale" "nvfp4 needs \"tensor_scale\"" \
  '{ "path": "nv.safetensors", "tensor": "a", "scales": { "path": "nv.safetensors", "tensor": "a_scale" } }' nvfp4
one "scales with a format that is not block-scaled" "is not a block-scaled format" \
  '{ "path": "mx_A_q.npy", "scales": "mx_A_s.npy" }' fp32
one "a missing scale file" "nothere.npy: cannot open" '{ "path": "mx_A_q.npy", "scales": "nothere.npy" }'
one "scales that name a missing tensor" "no tensor named 'nope'" \
  '{ "path": "mx_A_q.npy", "scales": { "path": "nv.safetensors", "tensor": "nope" } }'
finish check_block_scales
