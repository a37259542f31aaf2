#!/usr/bin/env bash
# amp_experiments.sh -- allreduce-precision, fp8-scaling and gradscaler-dynamics: the quick runs' files
# and the facts they state, recomputed from their CSVs with awk (no lowp code)
# Run: ctest --test-dir build -R cli_amp_experiments   (or: bash tests/cli/amp_experiments.sh build/lowp)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
[ -n "$LOWP" ] || skip "usage: amp_experiments.sh PATH/TO/lowp"
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok; else bad "$what"; fi
}

for e in allreduce-precision fp8-scaling gradscaler-dynamics; do
  check "$e: quick run exits 0" "$LOWP" run "$e" --quick --out "$T/$e" >"$T/$e.log" 2>&1
done

# ------------------------------------------------------------ allreduce-precision
A=$T/allreduce-precision
for f in allreduce.csv allreduce.png allreduce_tree.png feedback.csv results.json summary.md; do
  check "allreduce: wrote $f" test -s "$A/$f"
done
# every measured curve "KEY ORDER" has a bound "KEY bound ORDER" at every W, and the bound is >= the
# measured error there (inf: a vacuous bound, k u >= 1, also >= it)
out=$(awk -F, 'NR > 1 {
    n = split($1, w, " "); order = w[n]; key = ""; isb = 0
    for (i = 1; i < n; i++) { if (w[i] == "bound") { isb = 1; continue } key = key (key == "" ? "" : " ") w[i] }
    if (isb) b[key SUBSEP order SUBSEP $2] = $3; else { m[key SUBSEP order SUBSEP $2] = $3; curves[key SUBSEP order] = 1 }
  }
  END {
    nc = 0
    for (k in m) {
      if (!(k in b)) { print "no bound for " k; continue }
      if (b[k] != "inf" && b[k] + 0 < m[k] + 0) print "bound " b[k] " < measured " m[k] " at " k
    }
    for (c in curves) nc++
    print "curves " nc
  }' "$A/allreduce.csv")
check "allreduce: every curve has its bound, each >= the measured error ($out)" test "$out" = "curves 10"
# the growth exponents the summary states: each seed's least-squares slope of log err on log W (from
# allreduce_seeds.csv), their mean and t-based 95% half-width (t_{0.975, seeds-1} from a table), recomputed here
check "allreduce: every seed's errors in allreduce_seeds.csv" \
  awk -F, 'NR == 1 { ok = $0 == "curve,order,W,seed,rel_err,bound,abs_sum_over_sum_norm_ratio" } NR > 1 { s[$4] = 1 }
           END { n = 0; for (k in s) n++; exit !(ok && n >= 3) }' "$A/allreduce_seeds.csv"
for key in "fp16" "bf16" "fp32"; do
  for o in ring tree; do
    want=$(awk -F, -v k="$key" -v o=$o '$1 == k && $2 == o { d = $4; x = log($3); y = log($5)
        sx[d] += x; sy[d] += y; sxx[d] += x * x; sxy[d] += x * y; c[d]++ }
      END { split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131", t, " ")
        n = 0; for (d in c) { sl[n++] = (c[d] * sxy[d] - sx[d] * sy[d]) / (c[d] * sxx[d] - sx[d] * sx[d]); m += sl[n - 1] }
        m /= n; for (i = 0; i < n; i++) v += (sl[i] - m) ^ 2 / (n - 1)
        printf "%.2f +- %.2f", m, t[n - 1] * sqrt(v / n) }' "$A/allreduce_seeds.csv")
    col=$([ $o = ring ] && echo 4 || echo 5)
    got=$(awk -F'|' -v k=" $key " -v c=$col '$2 == k { sub(/^ /, "", $c); sub(/ \[.*$/, "", $c); print $c }' "$A/summary.md")
    check "allreduce: $key $o growth exponent $got = $want (awk fit over the seeds)" test "$got" = "$want"
  done
done
# the means and ranges in allreduce.csv are those of the seeds
check "allreduce: allreduce.csv's mean, min and max are the seeds' (allreduce_seeds.csv)" awk -F, '
  FNR == 1 { f++; next }
  f == 1 { k = $1 " " $2 SUBSEP $3; s[k] += $5; c[k]++; if (!(k in lo) || $5 < lo[k]) lo[k] = $5; if (!(k in hi) || $5 > hi[k]) hi[k] = $5 }
  f == 2 && $1 !~ / bound / { k = $1 SUBSEP $2; n++
    if (!(k in c) || c[k] != $6 || abs(s[k] / c[k] / $3 - 1) > 1e-5 || abs(lo[k] / $4 - 1) > 1e-5 || abs(hi[k] / $5 - 1) > 1e-5) bad++ }
  function abs(x) { return x < 0 ? -x : x }
  END { exit bad || n == 0 }' "$A/allreduce_seeds.csv" "$A/allreduce.csv"
# NCCL's per-hop fp16 rounding loses more than a fp32 sum of the same fp16 values at the largest W
last=$(awk -F, 'NR > 1 && $2 + 0 > m { m = $2 + 0 } END { print m }' "$A/allreduce.csv")
check "allreduce: fp16 per hop worse than fp16 sent + fp32 sum at W = $last" awk -F, -v W="$last" '
  $2 == W && $1 == "fp16 ring" { a = $3 } $2 == W && $1 == "fp16 send + fp32 sum ring" { b = $3 }
  END { exit !(a + 0 > b + 0 && b + 0 > 0) }' "$A/allreduce.csv"
check "allreduce: the answer cites NCCL's __hadd and Higham & Mary" grep -q '__hadd.*Higham & Mary 2019' "$A/results.json"

# ------------------------------------------------------------------ fp8-scaling
F=$T/fp8-scaling
for f in delayed.csv delayed.png delayed_clipped.png recipes.csv recipes.png; do
  check "fp8: wrote $f" test -s "$F/$f"
done
check "fp8: delayed.csv has the clipped columns" grep -qx 'step,recipe,mean_rel_err,saturated,clipped,n,clipped_pct' "$F/delayed.csv"
# the recount (clipped of n) equals lib/amp's saturated fraction and clipped_pct, row by row
out=$(awk -F, 'NR > 1 { r++; f = $5 / $6
    if ((f == 0) != ($4 == 0) || (f > 0 && (f / $4 > 1.00001 || $4 / f > 1.00001))) print "row " NR ": " $4 " vs " f
    if (($7 == 0) != (f == 0) || (f > 0 && (100 * f / $7 > 1.00001 || $7 / (100 * f) > 1.00001))) print "pct row " NR }
  END { print "rows " r }' "$F/delayed.csv")
check "fp8: clipped / n = saturated = clipped_pct / 100 ($out)" test "$out" = "rows 36"
# current scaling maps the tensor's amax to the format's max: it never clips; delayed scaling clips at
# the spike (step steps/2 = 6 in the quick run) and at step 0 (TE's initial scale 1)
check "fp8: current scaling never clips" awk -F, 'NR > 1 && $2 == "current" && $5 != 0 { exit 1 }' "$F/delayed.csv"
check "fp8: delayed scaling clips at step 0 and at the spike step 6" awk -F, '
  NR > 1 && $2 == "delayed" && ($1 == 0 || $1 == 6) && $5 > 0 { n++ } END { exit n != 2 }' "$F/delayed.csv"
check "fp8: recipes.png is drawn with points only" bash -c "! grep -q 'with linespoints' '$F/recipes.gp' && grep -q 'with points' '$F/recipes.gp'"
# the answer's means and t-based 95% intervals over the training runs, re-derived from seeds.csv; run 0's X
# numbers are the table's (recipes.csv: X per tensor and per channel, e4m3)
check "fp8: the answer's means and intervals are seeds.csv's, run 0 is the tables' run" /usr/bin/python3 -c '
import csv, json, math, sys
f = sys.argv[1]
rows = list(csv.DictReader(open(f + "/seeds.csv")))
n = len(rows)
t = {2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}[n - 1]
r = json.load(open(f + "/results.json"))["results"]
for key in ("x_err_per_tensor", "x_err_per_channel", "dw_err_per_tensor", "dw_err_mxfp8"):
    v = [float(x[key]) for x in rows]
    m = sum(v) / n
    h = t * math.sqrt(sum((y - m) ** 2 for y in v) / (n - 1) / n)
    k = r["key_numbers"][key]
    assert n >= 3 and k["seeds"] == n and abs(k["value"] / m - 1) < 1e-12 and abs(k["ci95"] / h - 1) < 1e-3, (key, k, m, h)
    assert "%.3g +- %.2g" % (m, h) in r["answer"], (key, m, h)
d = [float(x["x_err_per_tensor"]) - float(x["x_err_per_channel"]) for x in rows]
assert all(abs(float(x["x_err_per_tensor_minus_per_channel"]) - y) < 1e-15 for x, y in zip(rows, d))
x0 = {x["recipe"]: float(x["mean_rel_err"]) for x in csv.DictReader(open(f + "/recipes.csv")) if x["tensor"].startswith("X ")}
assert abs(x0["per tensor (current) e4m3"] / float(rows[0]["x_err_per_tensor"]) - 1) < 1e-5, x0
assert abs(x0["per channel e4m3"] / float(rows[0]["x_err_per_channel"]) - 1) < 1e-5, x0
' "$F"
check "fp8: no 'flushed' in the summary (e4m3 rounds to zero; it has subnormals)" bash -c "! grep -qi flush '$F/summary.md'"

# ------------------------------------------------------------ gradscaler-dynamics
G=$T/gradscaler-dynamics
for f in scale.csv scale.png zeroed.csv zeroed.png sweep.csv; do
  check "gradscaler: wrote $f" test -s "$G/$f"
done
check "gradscaler: sweep.csv has the run's values and 8 moved points" test "$(tail -n +2 "$G/sweep.csv" | wc -l)" -eq 9
# each finding's verdict follows from the row's numbers
check "gradscaler: sweep verdicts follow from the numbers" awk -F, 'NR > 1 {
    f1 = $3 > 0 ? ($4 * 10 <= $3 ? "holds" : "fails") : "n/a"
    f2 = ($1 == "burst_len" && $2 == 0) ? "n/a" : (($5 < 1 && $7 > $8) ? "holds" : "fails")
    if (f1 != $9 || f2 != $10) { print "row " NR ": " $9 "/" $10 " want " f1 "/" f2; bad = 1 } }
  END { exit bad }' "$G/sweep.csv"
# a NaN step halves PyTorch's scale with no lower clamp: after L NaN steps the scale is 2^-L times the
# scale before (the burst_len 0 row); Genesis's is that, clamped at 1
check "gradscaler: burst of L steps = scale * 2^-L (PyTorch), max(that, 1) (Genesis)" awk -F, '
  $1 == "burst_len" && $2 == 0 { s0 = $5 } $1 == "burst_len" && $2 > 0 { L[$2] = $5; G[$2] = $6 }
  END { n = 0
    for (l in L) { want = s0 * 2 ^ -l; g = want > 1 ? want : 1; n++
      if (L[l] / want > 1.00001 || want / L[l] > 1.00001 || G[l] / g > 1.00001 || g / G[l] > 1.00001) exit 1 }
    exit n != 2 }' "$G/sweep.csv"
# the headline's 95% interval (from the steps' successive differences) agrees within 3x with the same estimate
# made independently from zeroed.csv's windows before the burst (window means, successive differences)
check "gradscaler: the headline's interval matches one re-derived from zeroed.csv's windows" /usr/bin/python3 -c '
import csv, json, math, sys
g = sys.argv[1]
r = json.load(open(g + "/results.json"))["results"]
k = r["key_numbers"]["zero_no_scaling"]
assert 0 < k["ci95"] < k["value"] and "95% interval" in r["answer"], k
burst0 = 0.7 * 3000
w = [float(x["frac_zero"]) for x in csv.DictReader(open(g + "/zeroed.csv")) if x["policy"] == "none" and int(x["step"]) <= burst0]
K = len(w)
ssd = sum((w[i + 1] - w[i]) ** 2 for i in range(K - 1))
half = 1.96 * math.sqrt(K * ssd / (2 * (K - 1))) / K * 100
mean = sum(w) / K * 100
assert abs(mean - k["value"]) < 0.05 and half / 3 < k["ci95"] < half * 3, (mean, half, k)
' "$G"
check "gradscaler: the answer says where the findings hold" grep -q 'Sweep (sweep.csv): finding 1' "$G/results.json"
# scale.png: the smallest scale is a labelled tick (the tics start there), not the clipped lower edge
min=$(awk -F, 'NR > 1 && $2 != "none" && (m == "" || $3 + 0 < m) { m = $3 + 0 } END { printf "%.17g", m }' "$G/scale.csv")
check "gradscaler: scale.gp's tics start at the smallest scale $min, inside the y range" awk -v m="$min" '
  /^set ytics [0-9.e+-]+, 8$/ { sub(/,.*/, "", $3); t = ($3 + 0 == m + 0) }
  /^set yrange/ { split(substr($3, 2), r, ":"); lo = r[1] + 0 }
  END { exit !(t && lo < m + 0) }' "$G/scale.gp"
# (the first-exception lines name IEEE 754's kinds, underflow_subnormal / underflow_zero: tiny and
# inexact, README "Floating-point exceptions"; they are the one other place the word may appear)
check "gradscaler: no 'underflow' or 'flushed' in the summary but the document's quoted claim" bash -c \
  "! grep -v 'document 001' '$G/summary.md' | grep -v '^First exception' | grep -qiE 'underflow|flushed'"

finish amp_experiments.sh
