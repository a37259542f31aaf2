#!/usr/bin/env bash
# cli_error_growth -- `lowp run error-growth --quick`: outputs exist and the effects hold.
# Run: bash tests/cli/error_growth.sh build/lowp   (from the source root)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot missing: skip"; exit 77; }

start=$(date +%s)
OMP_NUM_THREADS=2 "$LOWP" run error-growth --quick --out "$T/eg" >"$T/out" 2>"$T/err"
rc=$?
secs=$(( $(date +%s) - start ))
[ $rc -eq 0 ] && ok || bad "exit $rc: $(tail -5 "$T/err")"
[ $secs -lt 60 ] && ok || bad "--quick took ${secs}s (limit 60)"

# files: results, summary, bounds, and per format/data the CSV, PNG and SVG
for f in results.json summary.md bounds.csv sum_uniform01.png sum_uniform11.svg \
         dot_fp16_uniform01.csv dot_fp16_uniform01.png dot_fp16_uniform01.svg dot_fp16_uniform11.png \
         dot_fp16_normal.png dot_e4m3_uniform01.png gemm_fp16_uniform01.png gemm_e4m3_uniform01.csv; do
  [ -s "$T/eg/$f" ] && ok || bad "missing $f"
done

# the four effects are confirmed (none refuted, none unmeasured)
n=$(grep -o '"verdict":[[:space:]]*"confirmed"' "$T/eg/results.json" | wc -l)
[ "$n" -eq 4 ] && ok || bad "expected 4 confirmed verdicts, got $n: $(grep -o '"verdict":[^,}]*' "$T/eg/results.json" | tr '\n' ' ')"

# independent check of one number: the h100 fp8 error at the largest size without promotion
# exceeds the one with promotion (read back from the CSV the plot was made from)
awk -F, '$1=="TC h100" {a=$3} $1=="TC h100 + fp32 every 128" {b=$3} END {exit !(a > 10*b)}' \
  "$T/eg/dot_e4m3_uniform01.csv" && ok || bad "fp8 promotion effect not visible in dot_e4m3_uniform01.csv"

# bounds: the measured fp32 FMA-chain error stays below gamma_n at every n
join -t, <(awk -F, '$1=="fp32 FMA chain" {print $2","$3}' "$T/eg/dot_fp16_uniform01.csv" | sort) \
         <(awk -F, 'NR>2 {print $1","$2}' "$T/eg/bounds.csv" | sort) |
  awk -F, '{ if ($2 > $3) bad=1 } END { exit bad || NR == 0 }' && ok || bad "fp32 error above gamma_n (or nothing compared)"

# each curve has the bound of its own method (the pipeline's): the tensor-core
# curve stays below its own model bound where that bound is drawn, no drawn
# bound is >= 1 (vacuous ones are left out), and the fp16 FMA chain's gamma_n
# is reported vacuous at the largest n
join -t, <(awk -F, '$1=="TC h100" {print $2","$3}' "$T/eg/dot_fp16_uniform01.csv" | sort) \
         <(awk -F, '$1=="TC h100: bound" {print $2","$3}' "$T/eg/bounds_dot_fp16.csv" | sort) |
  awk -F, '{ if ($2 > $3) bad=1 } END { exit bad || NR < 3 }' && ok || bad "TC h100 above its own model bound (or nothing compared)"
awk -F, 'NR>2 && !($3 > 0 && $3 < 1) {bad=1} END {exit bad || NR < 3}' "$T/eg/bounds_dot_e4m3.csv" && ok \
  || bad "bounds_dot_e4m3.csv draws a vacuous bound"
grep -q '"dot fp16 fp16 FMA chain":[[:space:]]*"vacuous' "$T/eg/results.json" && ok || bad "fp16 FMA chain's bound not reported vacuous"
grep -q '"dot e4m3 TC h100 + fp32 every 128":[[:space:]]*"[0-9.e+-]* at .*tensor-core model' "$T/eg/results.json" && ok \
  || bad "promoted fp8 curve lacks its tensor-core model bound"

# same seed, same bytes, whatever the thread count
OMP_NUM_THREADS=1 "$LOWP" run error-growth --quick --out "$T/eg2" >/dev/null 2>&1
for f in dot_fp16_uniform01.csv dot_e4m3_normal.csv sum_uniform11.csv gemm_fp16_uniform01.csv; do
  cmp -s "$T/eg/$f" "$T/eg2/$f" && ok || bad "$f differs between 2 threads and 1"
done

# bad parameters exit 2
"$LOWP" run error-growth --models="bogus" --out "$T/bad" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "bad model not exit 2"
"$LOWP" run error-growth --formats=fp99 --out "$T/bad" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "bad format not exit 2"

echo "cli_error_growth: $pass passed, $fail failed (quick run ${secs}s)"
[ $fail -eq 0 ]
