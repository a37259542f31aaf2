#!/usr/bin/env bash
# cli_tensor_core_models -- `lowp run tensor-core-models`: every captured row matches; a
# corrupted row is caught (exit 1); a bad folder is bad usage (exit 2).
# Run: bash tests/cli/tensor_core_models.sh build/lowp   (from the source root)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

"$LOWP" run tensor-core-models --quick --out "$T/a" >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && ok || bad "exit status on the vendored vectors: $(tail -3 "$T/err")"
grep -q '"rows_matching":[[:space:]]*34000' "$T/a/results.json" && ok || bad "34000 matching rows"
[ -s "$T/a/matches.csv" ] && [ -s "$T/a/summary.md" ] && ok || bad "outputs"

# flip the last bit of one GPU result: that file must now fail, and the run exit 1
mkdir -p "$T/v"
cp -r tests/data/tensor-core-vectors/H100 "$T/v/"
f="$T/v/H100/fp16/d_H100_fp32.txt"
awk 'NR==7 { $0 = substr($0, 1, 31) (substr($0, 32, 1) == "0" ? "1" : "0") } { print }' "$f" > "$f.new" && mv "$f.new" "$f"
"$LOWP" run tensor-core-models --quick --vectors="$T/v" --out "$T/b" >/dev/null 2>&1
[ $? -eq 1 ] && ok || bad "a corrupted row must give exit 1"
grep -q '^H100,fp16,fp32,h100,1000,999,1,6,' "$T/b/matches.csv" && ok || bad "mismatch not reported at row 6: $(grep fp16,fp32 "$T/b/matches.csv")"

# a GPU without preset is reported, and --map gives it one
mkdir -p "$T/w" && cp -r tests/data/tensor-core-vectors/A100 "$T/w/GA100X"
for f in "$T"/w/GA100X/*/*_A100_*.txt; do mv "$f" "${f/_A100_/_GA100X_}"; done
"$LOWP" run tensor-core-models --quick --vectors="$T/w" --map="GA100X=a100" --out "$T/c" >/dev/null 2>&1
[ $? -eq 0 ] && grep -q '"rows_matching":[[:space:]]*4000' "$T/c/results.json" && ok || bad "--map"

# lowp's own H200 captures (mma.sync, tests/data/tensor-core-vectors-h200): every row on h100mma,
# one instruction and 32 chained ones; the wgmma datapath of h100 misses the fp8 rows with fp32 output
H2=tests/data/tensor-core-vectors-h200
"$LOWP" run tensor-core-models --quick --vectors="$H2/single" --czero= --out "$T/h1" >/dev/null 2>&1
[ $? -eq 0 ] && grep -q '"rows_matching":[[:space:]]*8000' "$T/h1/results.json" && ok || bad "H200 single rows on h100mma"
"$LOWP" run tensor-core-models --quick --vectors="$H2/chained" --czero= --out "$T/h2" >/dev/null 2>&1
[ $? -eq 0 ] && grep -q '"rows_matching":[[:space:]]*200' "$T/h2/results.json" && ok || bad "H200 chained rows on h100mma"
"$LOWP" run tensor-core-models --quick --vectors="$H2/single" --czero= --map="H100MMA=h100" --out "$T/h3" >/dev/null 2>&1
[ $? -eq 1 ] && grep -q '^H100MMA,E4M3,fp32,h100,1000,0,' "$T/h3/matches.csv" &&
  grep -q '^H100MMA,E4M3,fp16,h100,1000,1000,' "$T/h3/matches.csv" && ok || bad "h100 (wgmma) must miss the H200 fp8 fp32 rows"

"$LOWP" run tensor-core-models --vectors="$T/none" --out "$T/d" >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "missing folder must be exit 2"
mkdir -p "$T/empty/X/fp16"
"$LOWP" run tensor-core-models --vectors="$T/empty" --out "$T/e" >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "a folder with no vector files must be exit 2"

echo "cli_tensor_core_models: $pass passed, $fail failed"
[ $fail -eq 0 ]
