#!/usr/bin/env bash
# plot_keys.sh -- no plot's key box covers its data (tools/plot_check.py: each gnuplot script rendered with
# its key filled and without it, the plot area held fixed); the checker itself catches a key over a curve.
# Run: bash tests/cli/plot_keys.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot missing"

# the checker: a key inside the plot over a curve is found; the same key outside is not
mkdir -p "$T/k"
printf 'x,y\n' >"$T/k/d.csv"
for i in $(seq 0 40); do echo "$i,$i" >>"$T/k/d.csv"; done
mk() { # mk NAME KEYSPEC
  cat >"$T/k/$1.gp" <<EOG
if (!exists("term")) term = 'png'
if (term eq 'png') { set terminal pngcairo size 600,400; set output '$1.png.tmp' }
set datafile separator ','
set key $2 box
plot 'd.csv' using 1:2 with lines lw 3 lc rgb '#1b9e77' title "a long key entry over the curve"
EOG
}
mk inside "inside top right"
python3 "$SRC/tools/plot_check.py" "$T/k" >"$T/o1" 2>&1
[ $? -eq 1 ] && grep -q 'KEY COVERS DATA: .*inside.png' "$T/o1" && ok || bad "a key over the curve not found: $(cat "$T/o1")"
rm "$T/k/inside.gp"
mk outside "outside right top"
python3 "$SRC/tools/plot_check.py" "$T/k" >"$T/o2" 2>&1 && grep -q '1 plots checked, 0 with a key over data' "$T/o2" && ok ||
  bad "a key in the margin reported: $(cat "$T/o2")"
python3 "$SRC/tools/plot_check.py" "$T/nosuch" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "a missing folder is not exit 2"

# --captions: a key entry whose filter selects no drawable point, and a caption naming a style the script
# lacks, are found; the same plot with its curve drawn and its caption true passes
mkdir -p "$T/c"
printf 'series,x,y\na,1,1\na,2,4\nb,1,0\nb,2,0\n' >"$T/c/d.csv"
mkc() { # mkc CAPTION SECOND-FILTER
  cat >"$T/c/p.gp" <<EOG
set logscale y 10
plot 'd.csv' using 2:(strcol(1) eq "a" ? \$3 : NaN) with linespoints lc rgb '#1b9e77' lw 2 title "a" noenhanced, \\
     'd.csv' using 2:(strcol(1) eq "$2" ? \$3 : NaN) with lines lc rgb '#444444' lw 2 dt 2 title "second" noenhanced
EOG
  printf '{"results": {"plots": [{"file": "p.png", "caption": "%s"}]}}\n' "$1" >"$T/c/results.json"
}
mkc "a, and its bound dotted" b
python3 "$SRC/tools/plot_check.py" --captions "$T/c" >"$T/c1" 2>&1
[ $? -eq 1 ] && grep -q 'CURVE NOT DRAWN: .*p.png: key entry "second"' "$T/c1" &&
  grep -q 'CAPTION NAMES A STYLE NOT DRAWN: .*says dotted' "$T/c1" && ok ||
  bad "--captions missed a curve with no point on the log axis or a caption's dotted: $(cat "$T/c1")"
mkc "a, and the grey dashed second" a
python3 "$SRC/tools/plot_check.py" --captions "$T/c" >"$T/c2" 2>&1 && grep -q '1 plots checked, 0 problems' "$T/c2" && ok ||
  bad "--captions flagged a true caption: $(cat "$T/c2")"

# lowp's plots (quick settings): error-growth's 15, and the experiments with keys over curves before
# (their folders in the fixture's quick report, copied: the checker renders beside each script)
quick_report
[ "$QR_RC" -le 1 ] || bad "report --quick: exit $QR_RC"
mkdir -p "$T/r"
for e in error-growth formats dynamic-range gradscaler-dynamics allreduce-precision loss-scaling; do
  cp -r "$QR/$e" "$T/r/$e" || bad "no $e in the quick report"
done
python3 "$SRC/tools/plot_check.py" "$T/r" >"$T/o3" 2>&1 && ok || bad "$(grep -v '^ok' "$T/o3")"
grep -q ' 0 with a key over data' "$T/o3" && [ "$(grep -o '[0-9]* plots checked' "$T/o3" | cut -d' ' -f1)" -ge 25 ] && ok ||
  bad "fewer than 25 plots checked: $(tail -1 "$T/o3")"

# and every key entry of theirs draws a point, every style their captions name is drawn
python3 "$SRC/tools/plot_check.py" --captions "$T/r" >"$T/o4" 2>&1 && ok || bad "$(cat "$T/o4")"
grep -q ' 0 problems' "$T/o4" && [ "$(grep -o '[0-9]* plots checked' "$T/o4" | cut -d' ' -f1)" -ge 25 ] && ok ||
  bad "captions: fewer than 25 plots checked: $(tail -1 "$T/o4")"

finish plot_keys
