#!/usr/bin/env bash
# cli_probe -- `lowp probe`: the probes recover every preset from its model,
# and vectors captured from a model replay 100% through `lowp run
# tensor-core-models` (a flipped bit does not); no GPU is a clear exit 2.
# Run: bash tests/cli/probe.sh build/lowp   (from the source root)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

"$LOWP" probe --help >"$T/h" 2>&1 && grep -q -- '--device' "$T/h" && ok || bad "--help"

# no --device: the GPU; without one, exit 2 and a pointer to --device model:
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  "$LOWP" probe >"$T/o" 2>"$T/e"
  [ $? -eq 2 ] && [ ! -s "$T/o" ] && [ "$(wc -l <"$T/e")" -eq 1 ] && grep -q 'device model:' "$T/e" &&
    ok || bad "no GPU: want exit 2 and one line naming --device model: ($(cat "$T/e"))"
  # --device-info: exit 2 with the CUDA runtime's own reason (or "built without CUDA")
  "$LOWP" probe --device-info >"$T/o" 2>"$T/e"
  [ $? -eq 2 ] && [ ! -s "$T/o" ] && [ "$(wc -l <"$T/e")" -eq 1 ] &&
    grep -Eq 'can use no GPU: (cudaGetDeviceCount: .*\(cuda[A-Za-z]+\)|this lowp was built without CUDA)' "$T/e" &&
    ok || bad "--device-info without a GPU: want exit 2 and the runtime's error ($(cat "$T/e"))"
fi

presets="v100 a100 a2 ada l40s h100 h200 h100mma b200"
for p in $presets; do
  # every datapath of the preset, both outputs: every item matches
  "$LOWP" probe --device "model:$p" --json >"$T/$p.json" 2>"$T/$p.err"
  rc=$?
  python3 - "$T/$p.json" "$p" <<'PY' && [ $rc -eq 0 ] && ok || bad "probe model:$p (exit $rc): $(head -c 300 "$T/$p.err")"
import json, sys
d = json.load(open(sys.argv[1]))
rs = d["results"]
assert d["differences"] == 0, d["differences"]
assert rs and all(r["match"] is True for r in rs), [r["differences"] for r in rs]
# the keys a script reads are present in every result
keys = {"in", "out", "b", "F", "align", "late_c", "out_frac", "out_rounding", "c_rounding",
        "interleave", "model", "preset_model", "match", "promote", "monotone_trials"}
assert all(keys <= set(r) for r in rs)
PY
  # capture from the model, replay through the presets: 100%
  "$LOWP" probe --device "model:$p" --capture "$T/cap_$p" --rows 150 --seed 7 >/dev/null 2>"$T/e"
  [ $? -eq 0 ] && [ -f "$T/cap_$p/.lowp-output" ] || bad "capture $p: $(cat "$T/e")"
  "$LOWP" run tensor-core-models --quick --vectors="$T/cap_$p" --czero= --out "$T/r_$p" >/dev/null 2>"$T/e"
  rc=$?
  # every file: rows == match, and as many rows as captured
  awk -F, -v want=150 '$1 ~ /^#/ || $1 == "gpu" { next } { files++; if ($5 != want || $6 != $5) bad = 1 }
                       END { exit (bad || files < 2) }' "$T/r_$p/matches.csv" && [ $rc -eq 0 ] && ok ||
    bad "replay $p (exit $rc): $(grep -v '^#' "$T/r_$p/matches.csv" | head -4 | tr '\n' '|')"
done

# chained rows (--k): fp8 rows of 256 products (8 instructions of 32, C != 0 from the second on), rounded up to
# whole instructions (--k 250 -> 256), replayed bit for bit through the h100 preset; C files are not all zero
"$LOWP" probe --device model:h100 --in e4m3 --k 250 --capture "$T/chain" --rows 40 >/dev/null 2>"$T/e"
[ $? -eq 0 ] && [ "$(awk '{print NF; exit}' "$T/chain/H100/E4M3/a_H100_E4M3.txt")" = 256 ] &&
  grep -q 1 "$T/chain/H100/E4M3/c_H100_fp32.txt" && ok || bad "chained capture: $(cat "$T/e")"
"$LOWP" run tensor-core-models --quick --vectors="$T/chain" --czero= --out "$T/rchain" >/dev/null 2>&1 &&
  awk -F, '$1 ~ /^#/ || $1 == "gpu" { next } { files++; if ($5 != 40 || $6 != $5) bad = 1 } END { exit (bad || files < 1) }' \
    "$T/rchain/matches.csv" && ok || bad "chained rows not replayed bit for bit"

# same seed, same bytes
"$LOWP" probe --device model:b200 --in e5m2 --capture "$T/again" --rows 150 --seed 7 >/dev/null 2>&1
cmp -s "$T/again/B200/E5M2/d_B200_fp32.txt" "$T/cap_b200/B200/E5M2/d_B200_fp32.txt" && ok || bad "capture not reproducible"

# a parameter string: folder MODEL, replayed with --map; a flipped bit is caught
spec='b=8,F=22,align=rne,out=rne'
"$LOWP" probe --device "model:$spec" --in fp16,bf16 --capture "$T/capm" --rows 100 >/dev/null 2>"$T/e"
[ $? -eq 0 ] && [ -f "$T/capm/MODEL/fp16/d_MODEL_fp32.txt" ] && ok || bad "capture of parameters: $(cat "$T/e")"
"$LOWP" run tensor-core-models --quick --vectors="$T/capm" --map="MODEL=$spec" --out "$T/rm" >/dev/null 2>&1
[ $? -eq 0 ] && ok || bad "replay of the parameter capture"
f="$T/capm/MODEL/fp16/d_MODEL_fp32.txt"
awk 'NR==3 { $0 = substr($0, 1, 31) (substr($0, 32, 1) == "0" ? "1" : "0") } { print }' "$f" >"$f.new" && mv "$f.new" "$f"
"$LOWP" run tensor-core-models --quick --vectors="$T/capm" --map="MODEL=$spec" --out "$T/rm2" >/dev/null 2>&1
[ $? -eq 1 ] && ok || bad "a flipped captured bit must fail the replay"

# the probes tell the B200 fp8 fix from the earlier model (blocks rne): exit 1, item named
"$LOWP" probe --device 'model:b200,out=rne' --in e5m2 --out fp32 >"$T/o" 2>&1
[ $? -eq 0 ] && grep -q 'block result rounding rne' "$T/o" && ok || bad "b200,out=rne: $(grep rounding "$T/o")"
"$LOWP" probe --device model:b200 --in e5m2 --out fp32 >"$T/o" 2>&1
grep -q 'block result rounding rtz' "$T/o" && grep -q 'rounding with c       rne' "$T/o" && ok ||
  bad "b200: $(grep rounding "$T/o")"

# block-scaled probes (issue 33): F and the group size of the block-scaled models
if "$LOWP" probe --device model:b200,kind=mxf4nvf4 | grep -q 'F      35' &&
  "$LOWP" probe --device model:b200,kind=mxf4nvf4 | grep -q 'group  16 products'; then ok; else bad "probe b200 mxf4nvf4"; fi
out=$("$LOWP" probe --device model:sm120,kind=mxf8f6f4,F=27 --json)
if echo "$out" | grep -q '"F":[[:space:]]*27' && echo "$out" | grep -q '"group":[[:space:]]*1,' && echo "$out" | grep -q '"match":[[:space:]]*true'; then ok; else bad "probe sm120 mxf8f6f4 F=27: $out"; fi

echo "cli_probe: $pass passed, $fail failed"
[ $fail -eq 0 ]
