#!/usr/bin/env bash
# check_block.sh -- lowp check with block-scaled input formats ("in": "mxfp8_e4m3", "int8_b32", specs)
#
# The pipeline draws fp32 data, quantizes it by the format's rule and gives
# the subject the dequantized values; the exact reference is theirs, and the
# data's quantization error shows as the input part of the split.
# Run: bash tests/cli/check_block.sh build/lowp
. "$(dirname "$0")/cli_harness.bash"
cat >"$T/spec.json" <<'JSON'
{ "lowp_check": 1,
  "checks": [
    { "name": "mx_gemm", "op": "gemm", "in": "mxfp8_e4m3", "out": "fp32",
      "subject": { "kernel": "gemm_acc", "params": "acc=fp32" },
      "shape": { "m": 16, "n": 16, "k": 256 }, "inputs": { "dist": "normal", "seed": 1 },
      "rules": [ { "bound": "gamma", "order": "recursive", "acc": "fp32" } ] },
    { "name": "q8_gemm", "op": "gemm", "in": ["int8_b32", "int8_b32:absmax"], "out": "fp32",
      "subject": { "kernel": "gemm_acc", "params": "acc=fp32" },
      "shape": { "m": 8, "n": 8, "k": 512 }, "inputs": { "dist": "normal", "seed": 2 },
      "rules": [ { "bound": "gamma", "order": "recursive", "acc": "fp32" } ] }
  ] }
JSON
if "$LOWP" check "$T/spec.json" --json "$T/out.json" >"$T/stdout" 2>&1; then ok; else bad "block-scaled spec failed: $(cat "$T/stdout")"; fi
if grep -q '"mxfp8_e4m3"' "$T/out.json" && grep -q '"int8_b32"' "$T/out.json"; then ok; else bad "the JSON names the block formats"; fi
# the quantization error is the input part of the split (large), the compute part small
if grep -Eq 'input [0-9.e+]+ \+ compute' "$T/stdout"; then ok; else bad "no split in: $(head -2 "$T/stdout")"; fi
sed 's/"in": "mxfp8_e4m3"/"in": "elem=e4m3,scale=e8m0,block=0"/' "$T/spec.json" >"$T/bad.json"
expect_exit2 "bad block spec" "block '0'" "$LOWP" check "$T/bad.json"
sed 's/"in": "mxfp8_e4m3"/"in": "mxfp8_e4m3:nvfp4"/' "$T/spec.json" >"$T/bad2.json"
expect_exit2 "rule without tensor scale" "nvfp4 rule" "$LOWP" check "$T/bad2.json"
finish check_block
