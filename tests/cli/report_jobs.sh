#!/usr/bin/env bash
# report_jobs.sh -- `lowp report --jobs N`: the experiments run N at a time, each in its own process,
# and the report is the same as one made with --jobs 1 (one after another, in lowp's own process):
# every file byte for byte but the rows the experiments declare timing- or environment-dependent
# (`lowp report --diff`: "expected" only, exit 0), index.html byte for byte, and the same standard
# output in the same order (the temporary folder's name masked). It compares --jobs 1 with the
# fixture report_quick (--jobs 2; cli_harness.bash quick_report), so it costs one quick report
# (about 85 s of CPU): label long. Run: bash tests/cli/report_jobs.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
quick_report # QR (made with --jobs 2), QR_ERR, QR_RC
mkdir -p "$T/j1"
J1="$T/j1/$QR_NAME" # the same hostile name as the fixture's: the same printed lines
"$LOWP" report --quick --no-svg --jobs 1 --out "$J1" >"$T/out1" 2>"$T/err1"; rc=$?
[ "$rc" -eq "$QR_RC" ] && [ "$rc" -le 1 ] && ok || bad "exit $rc with --jobs 1, $QR_RC with --jobs 2: $(tail -3 "$T/err1")"
cmp -s "$J1/index.html" "$QR/index.html" && ok || bad "index.html differs between --jobs 1 and 2"
"$LOWP" report --diff "$QR" --out "$J1" >"$T/diff" 2>&1; rc=$?
[ "$rc" -eq 0 ] && grep -q ', 0 with unexpected differences$' "$T/diff" && ok ||
  bad "report --diff between --jobs 1 and 2: exit $rc: $(grep -i unexpected "$T/diff" | head -5)"
# files the experiments do not declare environment-dependent: the same bytes
n=0
while IFS= read -r -d '' f; do
  rel=${f#"$J1"/}
  grep -q "expected: *${rel#*/}:" <(sed -n "/^${rel%%/*}:/,/^[^ ]/p" "$T/diff") && continue
  n=$((n + 1))
  cmp -s "$f" "$QR/$rel" || bad "$rel differs between --jobs 1 and 2"
done < <(find "$J1" -type f -print0)
[ "$n" -gt 50 ] && ok || bad "only $n files compared"
# the standard output: the same lines in the same order (only the temporary folder's name differs)
# (the name holds a newline: the first line of each path goes, the rest is masked from .tmp.PID.N)
mask() { sed -E '/^(results|report): /d; s#^.*\.tmp\.[0-9]+\.[0-9]+/#TMP/#' "$1"; }
# experiments whose printed lines carry a measured time (amp-speedup's step, fp8-quantization's
# "evaluated ... in N s") differ there; everything else must match line for line
filt() { mask "$1" | grep -v -E ' in [0-9.]+ s|^Measured on this CPU'; }
diff <(filt "$T/out1") <(filt "${QR_ERR%/err}/out") >"$T/odiff" && ok || bad "stdout differs: $(head -8 "$T/odiff")"
[ "$(grep -c '^results: ' "$T/out1")" -eq "$("$LOWP" list | grep -c .)" ] && ok || bad "not one results line per experiment"
# progress: one "started" and one "took" line per experiment with --jobs 2
[ "$(grep -c '^lowp report: \[[0-9]*/[0-9]*\] .* started$' "$QR_ERR")" -eq "$("$LOWP" list | grep -c .)" ] &&
  [ "$(grep -c '^lowp report: \[[0-9]*/[0-9]*\] .* took [0-9.]* s$' "$QR_ERR")" -eq "$("$LOWP" list | grep -c .)" ] && ok ||
  bad "progress lines: $(head -5 "$QR_ERR")"
finish report_jobs
