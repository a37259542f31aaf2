#!/usr/bin/env bash
# experiments.sh -- the exercise experiments' quick runs: files written, same seed -> same bytes, bad values -> 2
# Run: ctest --test-dir build -R cli_experiments   (or: bash tests/cli/experiments.sh build/lowp)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
tmp=$T
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}

# name and the files its quick run must write (plots as PNG and SVG)
declare -A files=(
  [loss-scaling]="thresholds.csv heatmap.csv heatmap.png heatmap.svg slice.png slice.svg"
  [dynamic-range]="fractions.csv thresholds.csv uniform.png uniform.svg loguniform.png loguniform.svg"
  [softmax-overflow]="threshold_vs_n.csv threshold_vs_n.png threshold_vs_n.svg"
  [claims]="claims.csv"
  # exits 1 if a finite variance exceeds its rigorous bound (lowp_bound_variance)
  [autocast-policy]="ops.csv variance.csv ops.png variance.png variance.svg variance_low.png variance_low.svg"
)
if "$LOWP" list | grep -q '^matmul-precision '; then
  files[matmul-precision]="errors.csv growth.csv bounds.csv growth.png growth.svg backward.png growth_tc.png"
fi

# determinism: the second run of the same seed is the shared quick report's (fixture report_quick,
# cli_harness.bash: quick_report; the default seed, 2 threads, another process), so that each quick run
# is made once per ctest run instead of twice here
quick_report
prov_free() { grep -v -E '^[[:space:]]*"(git_revision|git_dirty|date_utc)":' "$1"; }
for e in "${!files[@]}"; do
  check "$e: quick run exits 0" env OMP_NUM_THREADS=1 "$LOWP" run "$e" --quick --out "$tmp/$e.1" > "$tmp/$e.log" 2>&1
  for f in results.json summary.md ${files[$e]}; do
    check "$e: wrote $f" test -s "$tmp/$e.1/$f"
  done
  check "$e: results.json has an answer" grep -q '"answer"' "$tmp/$e.1/results.json"
  # the same seed gives the same bytes (results and data; images are gnuplot's), whatever the thread count;
  # in results.json but for the lines that name the source tree and the day (git_revision, git_dirty,
  # date_utc: a file edited, or midnight passed, since the fixture ran is no change of the results)
  check "$e: the quick report has $e" test -s "$QR/$e/results.json"
  check "$e: results.json identical for the same seed" cmp -s <(prov_free "$tmp/$e.1/results.json") \
    <(prov_free "$QR/$e/results.json")
  for f in $(cd "$tmp/$e.1" && ls *.csv); do
    check "$e: $f identical for the same seed" cmp -s "$tmp/$e.1/$f" "$QR/$e/$f"
  done
  # an unknown parameter is rejected with status 2 and nothing is written
  "$LOWP" run "$e" --nosuchkey=1 --out "$tmp/$e.bad" > /dev/null 2>&1
  check "$e: unknown parameter exits 2" test $? -eq 2
  check "$e: no folder after a bad run" test ! -e "$tmp/$e.bad"
done

# variance.png: a two-pass error of 0 against the stored fp16/bf16 data is not 0 against the unrounded data
# (the rounding of the data), and the fp32-statistics plot draws both and a bound for every data format
v="$tmp/autocast-policy.1/variance.csv"
check "autocast-policy: variance.csv has the error against the unrounded data" \
  awk -F, 'NR == 1 { ok = $8 == "rel_err_vs_unrounded" } END { exit !ok }' "$v"
check "autocast-policy: a two-pass error of 0 is > 0 against the unrounded data" \
  awk -F, '$1 ~ /^(fp16|bf16) two-pass fp32 stats$/ && $3 == 0 { z++; if (!($8 > 0)) bad++ } END { exit !(z > 0 && !bad) }' "$v"
for t in "bound, one-pass, bf16 data" "bound, Welford, fp32 data" "fp16 data, two-pass, vs unrounded data"; do
  check "autocast-policy: variance.png draws '$t'" grep -qF "title \"$t\"" "$tmp/autocast-policy.1/variance.gp"
done

echo "experiments.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
