#!/usr/bin/env bash
# cli_error_growth -- `lowp run error-growth --quick`: outputs exist and the effects hold.
# Run: bash tests/cli/error_growth.sh build/lowp   (from the source root)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot missing: skip"; exit 77; }

start=$(date +%s)
OMP_NUM_THREADS=1 "$LOWP" run error-growth --quick --out "$T/eg" >"$T/out" 2>"$T/err"
rc=$?
secs=$(( $(date +%s) - start ))
[ $rc -eq 0 ] && ok || bad "exit $rc: $(tail -5 "$T/err")"
echo "--quick took ${secs}s of wall time (not asserted: times belong in lowp bench, not in tests)"

# files: results, summary, bounds, and per format/data the CSV, PNG and SVG
for f in results.json summary.md bounds.csv sum_uniform01.png sum_uniform11.svg \
         dot_fp16_uniform01.csv dot_fp16_uniform01.png dot_fp16_uniform01.svg dot_fp16_uniform11.png \
         dot_fp16_normal.png dot_e4m3_uniform01.png gemm_fp16_uniform01.png gemm_e4m3_uniform01.csv; do
  [ -s "$T/eg/$f" ] && ok || bad "missing $f"
done

# the four effects and the bound check are confirmed (none refuted, none unmeasured)
n=$(grep -o '"verdict":[[:space:]]*"confirmed"' "$T/eg/results.json" | wc -l)
[ "$n" -eq 6 ] && ok || bad "expected 6 confirmed verdicts, got $n: $(grep -o '"verdict":[^,}]*' "$T/eg/results.json" | tr '\n' ' ')"

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
         <(awk -F, '$1=="TC h100: bound" {print $2","$3}' "$T/eg/bounds_dot_fp16_uniform01.csv" | sort) |
  awk -F, '{ if ($2 > $3) bad=1 } END { exit bad || NR < 3 }' && ok || bad "TC h100 above its own model bound (or nothing compared)"
awk -F, 'NR>2 && !($3 > 0 && $3 < 1) {bad=1} END {exit bad || NR < 3}' "$T/eg/bounds_dot_e4m3_uniform01.csv" && ok \
  || bad "bounds_dot_e4m3_uniform01.csv draws a vacuous bound"
grep -q '"dot fp16 fp16 FMA chain":[[:space:]]*"vacuous' "$T/eg/results.json" && ok || bad "fp16 FMA chain's bound not reported vacuous"
grep -q '"dot e4m3 TC h100 + fp32 every 128":[[:space:]]*"[0-9.e+-]* at .*tensor-core model' "$T/eg/results.json" && ok \
  || bad "promoted fp8 curve lacks its tensor-core model bound"

# every drawn deterministic bound holds over its own curve's data: each "MODEL: bound" row of
# bounds_OP_FMT.csv is >= the max error (column 4: max over the trials) of MODEL at that size in
# every data file of that operation and format (all distributions); many points compared
for bf in "$T"/eg/bounds_*_*_*.csv; do
  rest=$(basename "$bf" .csv); rest=${rest#bounds_}; op=${rest%%_*}; dist=${rest##*_}
  if [ "$op" = sum ]; then data=("$T/eg/sum_$dist.csv"); else data=("$T/eg/$rest.csv"); fi
  awk -F, 'FNR == NR { if ($1 ~ /: bound$/) { m = $1; sub(/: bound$/, "", m); b[m "," $2] = $3 } next }
           FNR > 2 && (($1 "," $2) in b) { n++; if (!($4 + 0 <= b[$1 "," $2] + 0)) { bad++; print FILENAME ": " $1 " at " $2 ": " $4 " > " b[$1 "," $2] } }
           END { print n + 0 > "/dev/stderr"; exit bad > 0 || n < 10 }' "$bf" "${data[@]}" 2>"$T/nb" &&
    ok || bad "$bf: a drawn bound below its curve's max error, or fewer than 10 points compared ($(cat "$T/nb"))"
done

# probabilistic bounds: checked against every trial (a verdict with the trial sums counted), cut where
# the sum stagnates: the fp16 recursive sum of [0,1] data (errs 0.75 at n = 16384, all summands lost
# beyond s = 2048) has no probabilistic bound drawn from n = 1024 on, and the plot says where it is cut
awk -F, '$1 == "fp16 recursive: prob. bound" && $2 >= 1024 {bad = 1} $1 == "fp16 recursive: prob. bound" {n++}
         END {exit bad || n == 0}' "$T/eg/bounds_sum_fp32_uniform01.csv" && ok || bad "fp16 recursive sum: prob. bound drawn where it stagnates"
grep -q 'fp16 recursive: prob. bound cut\\nfrom n = 1024 (stagnation)' "$T/eg/sum_uniform01.gp" && ok || bad "sum_uniform01 does not say where the prob. bound is cut"
grep -q '"claim":[[:space:]]*"every drawn probabilistic bound' "$T/eg/results.json" && ok || bad "no verdict on the probabilistic bounds"
# every drawn probabilistic bound point: max error over its trials above it at most in a few points
# (P >= 0.99 per sum; the run has none), recomputed from the CSVs
for bf in "$T"/eg/bounds_*_*_*.csv; do
  rest=$(basename "$bf" .csv); rest=${rest#bounds_}; op=${rest%%_*}; dist=${rest##*_}
  if [ "$op" = sum ]; then data="$T/eg/sum_$dist.csv"; else data="$T/eg/$rest.csv"; fi
  awk -F, 'FNR == NR { if ($1 ~ /: prob. bound$/) { m = $1; sub(/: prob. bound$/, "", m); b[m "," $2] = $3 } next }
           FNR > 2 && (($1 "," $2) in b) { if (!($4 + 0 <= b[$1 "," $2] + 0)) { bad++; print FILENAME ": " $1 " at " $2 } }
           END { exit bad > 0 }' "$bf" "$data" >"$T/pb" && ok || bad "a drawn probabilistic bound below its curve: $(cat "$T/pb")"
done
# checks.csv: every drawn bound against every trial, one row per point; the verdicts' and the answer's counts
# are its columns' sums (recomputed here and compared with results.json's key numbers)
ck="$T/eg/checks.csv"
sed -n 2p "$ck" | grep -qx 'op,format,data,model,size,trials,bound_kind,basis,bound,max_error,trials_over,stagnating_steps_max,sqrt_size,cut_by_stagnation,overflow,checked' &&
  ok || bad "checks.csv header: $(sed -n 2p "$ck")"
key() { tr -d ' \t\n' < "$T/eg/results.json" | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }
sums=$(awk -F, 'NR > 2 && $7 == "deterministic" && $16 == 1 { p++; t += $6; o += $11; v += $11 > 0 }
                NR > 2 && $7 == "probabilistic" && $16 == 1 { pp++; pt += $6; po += $11 }
                NR > 2 && $14 == 1 { cp++; ct += $6; co += $11 }
                NR > 2 && $8 == "heuristic" && $15 == 0 { hp++; ht += $6; ho += $11 }
                END { printf "%d %d %d %d %d %d %d %d %d %d %d %d %d", p, v, t, o, pp, pt, po, cp, ct, co, hp, ht, ho }' "$ck")
want="$(key bound_points_checked) $(key bound_points_violated) $(key bound_trials_checked) $(key bound_trials_exceeding)"
want="$want $(key prob_bound_points_checked) $(key prob_bound_trial_sums_checked) $(key prob_bound_trial_sums_exceeding)"
want="$want $(key prob_bound_points_cut_by_stagnation) $(key prob_bound_cut_trials) $(key prob_bound_cut_trials_exceeding_uncut)"
want="$want $(key heuristic_bound_points) $(key heuristic_bound_trials) $(key heuristic_bound_trials_exceeding)"
[ "$sums" = "$want" ] && ok || bad "checks.csv sums ($sums) differ from results.json's key numbers ($want)"
grep -q "exceeded by $(key prob_bound_trial_sums_exceeding) of $(key prob_bound_trial_sums_checked) trial sums at $(key prob_bound_points_checked) points" \
  "$T/eg/summary.md" && ok || bad "the answer's probabilistic counts are not checks.csv's"
# every probabilistic row: checked exactly where it is not cut (cut: the stagnating steps exceed sqrt(size)),
# heuristic rows never checked, every row's trials equal to the curve CSV's trials column
awk -F, 'NR > 2 && $7 == "probabilistic" && $15 == 0 { c = ($12 != "" && $12 + 0 > $13 + 0); if (c != $14 || $16 != !c) bad++ }
         NR > 2 && $8 == "heuristic" && $16 != 0 { bad++ } NR > 2 { n++ } END { exit bad > 0 || n < 100 }' "$ck" &&
  ok || bad "checks.csv: cut/checked columns disagree with the stagnation counts, or a heuristic row is checked"
# the referee's case: fp16 recursive sums of [0,1] at n = 16384 err 0.75 in every trial, over the uncut probabilistic
# bound 0.414 in every trial: that row is cut by stagnation and not checked
awk -F, '$1 == "sum" && $3 == "uniform01" && $4 == "fp16 recursive" && $5 == 16384 && $7 == "probabilistic" {
           f = 1; if (!($11 == $6 && $14 == 1 && $16 == 0 && $10 > $9)) bad = 1 } END { exit bad || !f }' "$ck" &&
  ok || bad "fp16 recursive sum at n = 16384: not every trial over the uncut bound, or not cut"
# every drawn bound point of the plots has its row (same bound value)
for bf in "$T"/eg/bounds_*_*_*.csv; do
  rest=$(basename "$bf" .csv); rest=${rest#bounds_}; op=${rest%%_*}; dist=${rest##*_}; fm=${rest#*_}; fm=${fm%_*}
  awk -F, -v op="$op" -v fm="$fm" -v d="$dist" 'FNR == NR { if (FNR > 2 && $1 == op && $3 == d && ($1 == "sum" || $2 == fm))
             r[$4 ": " ($7 == "probabilistic" ? "prob. bound" : $8 == "heuristic" ? "heuristic bound" : "bound") "," $5] = $9; next }
           FNR > 2 { n++; if (!(($1 "," $2) in r) || r[$1 "," $2] != $3) { bad++; print $1 " at " $2 } }
           END { exit bad > 0 || n == 0 }' "$ck" "$bf" >"$T/ckm" && ok || bad "$bf: drawn bound points missing from checks.csv: $(head -3 "$T/ckm")"
done
# Kahan's bound is heuristic: labelled so, never a plain "bound", and withdrawn (not "vacuous") in fp16 from n = 256
grep -q '^fp16 Kahan: heuristic bound,' "$T/eg/bounds_sum_fp32_uniform01.csv" && ok || bad "fp16 Kahan bound not labelled heuristic"
grep -q '^fp[0-9]* Kahan: bound,' "$T"/eg/bounds_sum_*.csv && bad "a Kahan bound drawn as a plain bound" || ok
grep -q 'fp16 Kahan: heuristic bound\\nwithdrawn from n = 256 (n u > 0.1)' "$T/eg/sum_uniform01.gp" && ok || bad "fp16 Kahan: withdrawal not said"
grep -q 'Kahan: its bound is' "$T/eg/sum_uniform01.gp" && bad "fp16 Kahan's bound called vacuous" || ok

# every point states its trial count, and the cheap small sizes get more trials than the largest
awk -F, 'FNR == 2 { if ($5 != "trials") bad = 1 } FNR > 2 { if (!($5 >= 1)) bad = 1 }
         END { exit bad }' "$T"/eg/dot_*.csv "$T"/eg/sum_*.csv "$T"/eg/gemm_*.csv && ok || bad "a CSV lacks the trials column"
awk -F, '$1 == "fp32 FMA chain" { if (!first) first = $5; last = $5 } END { exit !(first > last) }' \
  "$T/eg/dot_fp16_uniform01.csv" && ok || bad "no more trials at small n than at the largest"

# growth: slopes carry 95% intervals; the fp16 FMA chain's stagnation on [0,1] is detected as
# saturation and left out of its fit; a fit never spans a saturated size
grep -q '"sum fp32 uniform01 fp32 recursive":{"segments":\[{"from":16,"to":[0-9]*,"sizes":[0-9]*,"slope":[-0-9.e]*,"ci95_half":' \
  <(tr -d '\n\t' < "$T/eg/results.json") && ok || bad "fp32 recursive sum: no fit with an interval over n = 16..65536"
tr -d '\n\t' < "$T/eg/results.json" | grep -o '"dot fp16 uniform01 fp16 FMA chain":{[^}]*}[^}]*}' |
  grep -q '"saturated_from":[0-9]' && ok || bad "fp16 FMA chain's saturation not detected"
grep -q 'fp16 FMA chain | .*saturated (mean error >= 0.5) from n = ' "$T/eg/summary.md" && ok || bad "summary does not say where the fp16 FMA chain saturates"

# coinciding curves are marked: where two models give the same mean at every size (fp8 b200 and
# fp32 blocked 32 here: products exact, 16-term fp32 blocks), the later one's key says so
if awk -F, '$1 == "fp32 blocked 32" { a[$2] = $3 } $1 == "TC b200" { b[$2] = $3 }
            END { for (k in a) { n++; if (a[k] != b[k]) exit 1 } exit n == 0 }' "$T/eg/dot_e4m3_uniform01.csv"; then
  grep -q 'TC b200 (= fp32 blocked 32)' "$T/eg/dot_e4m3_uniform01.gp" && ok || bad "coinciding TC b200 not marked in the key"
else
  bad "TC b200 and fp32 blocked 32 no longer coincide on e4m3 [0,1]: update this check"
fi
grep -q 'fp32 pairwise (= ' "$T/eg/dot_fp16_uniform01.gp" && bad "a curve marked coinciding that does not" || ok

# block-scaled GEMMs (issue 33 item 5): curves for mxfp8_e4m3, mxfp4 and nvfp4, each model only on the operands
# its instruction takes, each drawn with the bound `lowp tol` gives for it (recomputed here with lowp tol at
# every k of the CSV), every drawn bound above the curve's max error (the bounds loop above covers these files)
for f in gemm_mxfp8_e4m3_uniform01.png gemm_mxfp4_normal.csv gemm_nvfp4_uniform11.svg bounds_gemm_nvfp4_uniform01.csv; do
  [ -s "$T/eg/$f" ] && ok || bad "missing $f"
done
grep -q '^TC b200 kind=mxf4nvf4,' "$T/eg/gemm_mxfp8_e4m3_uniform01.csv" && bad "kind=mxf4nvf4 run on mxfp8 operands" || ok
grep -q '^TC b200 kind=mxf8f6f4,' "$T/eg/gemm_nvfp4_uniform01.csv" && bad "kind=mxf8f6f4 run on nvfp4 operands" || ok
for fm in "mxfp8_e4m3 b200,kind=mxf8f6f4" "mxfp4 b200,kind=mxf8f6f4" "mxfp4 b200,kind=mxf4nvf4" "nvfp4 b200,kind=mxf4nvf4"; do
  set -- $fm
  lab="TC ${2//,/ }: bound"
  rows=$(awk -F, -v l="$lab" '$1 == l {print $2 " " $3}' "$T/eg/bounds_gemm_$1_uniform01.csv")
  [ "$(echo "$rows" | grep -c .)" -ge 5 ] || bad "$1 on $2: fewer than 5 bound points ($rows)"
  while read -r k b; do
    [ -n "$k" ] || continue
    t=$("$LOWP" tol gemm --k "$k" --input "$1" --out fp32 --method "model:$2" --json | tr -d ' \t\n' |
        sed -n 's/.*"bound":\([-0-9.e+]*\).*/\1/p')
    awk -v a="$b" -v t="$t" 'BEGIN { exit !(t > 0 && a / t > 0.999999 && a / t < 1.000001) }' ||
      { bad "$1 on $2 at k = $k: drawn bound $b, lowp tol gives $t"; break; }
  done <<<"$rows"
  ok
done
# nvfp4 on the model: the error is measured (> 0) and below the bound; mxfp4's elements and power-of-two scales
# make every sum short enough to be exact in fp32 at these k (error 0 on every model)
awk -F, '$1 == "TC b200 kind=mxf4nvf4" && $3 > 0 {n++} END {exit n < 3}' "$T/eg/gemm_nvfp4_uniform01.csv" && ok ||
  bad "nvfp4 on kind=mxf4nvf4: no measured error"
awk -F, 'FNR > 2 && $3 != 0 {bad = 1} END {exit bad}' "$T/eg/gemm_mxfp4_uniform01.csv" && ok ||
  bad "mxfp4 on [0,1] not exact at the quick sizes: update this check"
tr -d '\n\t ' < "$T/eg/results.json" | grep -q '"block_scaled":\[{"format":"mxfp8_e4m3","data":"uniform01","model":"TCb200kind=mxf8f6f4"' &&
  ok || bad "results.json lacks the block-scaled rows"
grep -q '"block_scaled_worst_max_over_bound":[[:space:]]*0\.' "$T/eg/results.json" && ok || bad "a block-scaled point above its bound"

# same seed, same bytes, whatever the thread count: the run above (1 thread) against the quick report's
# error-growth, made with 2 threads by `lowp report`'s child (the fixture report_quick, whose test sets
# OMP_NUM_THREADS=2), or, alone, against a run of its own with 2 threads
if [ -n "${LOWP_REPORT_QUICK:-}" ] && [ "$(cat "$LOWP_REPORT_QUICK/rc" 2>/dev/null)" = 0 ]; then
  EG2=$LOWP_REPORT_QUICK/$QR_NAME/error-growth
else
  EG2=$T/eg2
  OMP_NUM_THREADS=2 "$LOWP" run error-growth --quick --out "$EG2" >/dev/null 2>&1
fi
n=0
for f in "$T"/eg/*.csv; do
  n=$((n + 1))
  cmp -s "$f" "$EG2/${f##*/}" && ok || bad "${f##*/} differs between 1 thread and 2"
done
[ $n -ge 40 ] && ok || bad "only $n CSV files compared"

# bad parameters exit 2
"$LOWP" run error-growth --models="bogus" --out "$T/bad" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "bad model not exit 2"
"$LOWP" run error-growth --formats=fp99 --out "$T/bad" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "bad format not exit 2"
"$LOWP" run error-growth --bs_formats=mxfp9 --out "$T/bad" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "bad bs format not exit 2"
"$LOWP" run error-growth --bs_models='tc:h100' --out "$T/bad" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "tc: in bs_models not exit 2"

echo "cli_error_growth: $pass passed, $fail failed (quick run ${secs}s)"
[ $fail -eq 0 ]
