#!/usr/bin/env bash
# cli_gemm_model -- lowp gemm/dot with --model, --promote and --order: effects and bad usage.
# Run: bash tests/cli/gemm_model.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
expect_exit2() {
  local name="$1" pattern="$2"; shift 2
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  [ $rc -eq 2 ] || { bad "$name: exit $rc, want 2"; return; }
  [ -s "$T/out" ] && { bad "$name: printed on stdout"; return; }
  grep -q -- "$pattern" "$T/err" && ok || bad "$name: stderr lacks '$pattern': $(cat "$T/err")"
}
maxabs() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"]["max_abs"])' "$1"; }

# the H100 fp8 model at K=4096 on [0,1] data: promotion every 128 must cut the
# error by more than 10x (DeepSeek-V3 report, sec. 3.3.2, reports ~2% -> small)
"$LOWP" gemm --m 8 --n 8 --k 4096 --in e4m3 --acc fp32 --dist uniform01 --model h100 --json > "$T/np.json" || bad "h100 fp8 run"
"$LOWP" gemm --m 8 --n 8 --k 4096 --in e4m3 --acc fp32 --dist uniform01 --model h100 --promote 128 --json > "$T/p.json" || bad "h100 fp8 promote run"
python3 - "$T/np.json" "$T/p.json" <<'PY' && ok || bad "promotion does not reduce the error 10x"
import json, sys
a = json.load(open(sys.argv[1]))["errors"]["max_rel"]; b = json.load(open(sys.argv[2]))["errors"]["max_rel"]
sys.exit(0 if a > 10 * b else 1)
PY
# a parameter string equal to a preset gives the same numbers as the preset
"$LOWP" gemm --m 8 --n 8 --k 512 --in fp16 --acc fp32 --dist uniform01 --model h100 --json > "$T/a.json"
"$LOWP" gemm --m 8 --n 8 --k 512 --in fp16 --acc fp32 --dist uniform01 --model "b=16,F=25,align=rtz,out=rtz" --json > "$T/b.json"
[ "$(maxabs "$T/a.json")" = "$(maxabs "$T/b.json")" ] && ok || bad "preset vs parameters differ"
grep -q '"model":.*"h100"' "$T/a.json" && ok || bad "json lacks the model"
# an order other than recursive changes the fp16 sum of 2^16 uniform terms, and pairwise is better
"$LOWP" dot --n 65536 --in fp16 --acc fp16 --dist uniform01 --json > "$T/r.json"
"$LOWP" dot --n 65536 --in fp16 --acc fp16 --dist uniform01 --order pairwise --json > "$T/pw.json"
python3 - "$T/r.json" "$T/pw.json" <<'PY' && ok || bad "pairwise fp16 not more accurate than recursive"
import json, sys
r = json.load(open(sys.argv[1]))["errors"]["max_rel"]; p = json.load(open(sys.argv[2]))["errors"]["max_rel"]
sys.exit(0 if p < r / 10 else 1)
PY

expect_exit2 "unknown model" "--model h999" "$LOWP" gemm --m 2 --n 2 --k 2 --model h999
expect_exit2 "promote without model" "--promote needs --model" "$LOWP" gemm --m 2 --n 2 --k 2 --promote 128
expect_exit2 "bad promote" "--promote" "$LOWP" gemm --m 2 --n 2 --k 2 --model h100 --promote x
expect_exit2 "model with prod" "do not combine" "$LOWP" gemm --m 2 --n 2 --k 2 --model h100 --prod fp16
expect_exit2 "model with order" "do not combine" "$LOWP" gemm --m 2 --n 2 --k 2 --model h100 --order pairwise
expect_exit2 "model with round" "do not combine" "$LOWP" gemm --m 2 --n 2 --k 2 --model h100 --round rtz
expect_exit2 "model with bf16 output" "--model h100" "$LOWP" gemm --m 2 --n 2 --k 2 --model h100 --acc bf16
expect_exit2 "bad order" "--order" "$LOWP" dot --n 4 --order sideways
expect_exit2 "order with other prod" "--prod" "$LOWP" dot --n 4 --acc fp32 --order pairwise --prod fp16

# block-scaled model (issue 33): lowp gemm --model b200,kind=mxf8f6f4 --quant mxfp8:rceil
out=$("$LOWP" gemm --m 8 --n 8 --k 256 --model b200,kind=mxf8f6f4 --quant mxfp8:rceil --json)
if echo "$out" | grep -q '"model":[[:space:]]*"b200,kind=mxf8f6f4"' && echo "$out" | grep -q '"in":[[:space:]]*"mxfp8_e4m3"'; then ok; else bad "gemm --quant mxfp8:rceil --json: $out"; fi
if "$LOWP" gemm --m 8 --n 8 --k 256 --model sm120,kind=mxf4nvf4 --quant mxfp4 | grep -q 'K=64,group=16,F=35'; then ok; else bad "gemm sm120 mxf4nvf4 names its parameters"; fi

# nvfp4 (issue 33 item 2): e2m1 elements, ue4m3 block scales, the per-tensor scales in the epilogue; its
# backward error within the bound lowp tol derives for it (the model's, plus the epilogue's two roundings)
js=$("$LOWP" gemm --m 24 --n 24 --k 2048 --model b200,kind=mxf4nvf4 --quant nvfp4 --json)
tb=$("$LOWP" tol gemm --k 2048 --input nvfp4 --method model:b200,kind=mxf4nvf4 --json)
if /usr/bin/python3 -c "
import json, sys
g, t = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert g['in'] == 'nvfp4' and g['errors']['n_special'] == 0, g
assert 0 < g['errors']['max_backward'] <= t['bound'], (g['errors'], t['bound'])
assert 'epilogue' in t['bound_name'], t" "$js" "$tb"; then ok; else bad "gemm --quant nvfp4: $js $tb"; fi
for q in mxfp4 nvfp4; do
  "$LOWP" gemm --m 8 --n 8 --k 256 --model sm120,kind=mxf4nvf4 --quant $q >/dev/null && ok || bad "sm120 mxf4nvf4 --quant $q"
done
expect_exit2 "nvfp4 on kind=mxf8f6f4" "kind=mxf8f6f4 takes ue8m0 scales a block of 32" \
  "$LOWP" gemm --m 4 --n 4 --k 64 --model b200,kind=mxf8f6f4 --quant nvfp4
expect_exit2 "mxfp8 on kind=mxf4nvf4" "kind=mxf4nvf4 takes e2m1 elements" \
  "$LOWP" gemm --m 4 --n 4 --k 64 --model b200,kind=mxf4nvf4 --quant mxfp8_e4m3
expect_exit2 "integers on the model" "not integers" "$LOWP" gemm --m 4 --n 4 --k 64 --model b200,kind=mxf4nvf4 --quant int8_b32

echo "cli_gemm_model: $pass passed, $fail failed"
[ $fail -eq 0 ]
