#!/usr/bin/env bash
# report_render.sh -- `lowp report --quick` builds index.html, every image it names exists, and headless Chromium renders it
# The page's checks run always; the screenshot is skipped (said so) when chromium is not installed (Debian
# package `chromium`).
# Run: ctest --test-dir build -R cli_report_render   (or: bash tests/cli/report_render.sh build/lowp)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
tmp=$T
check() {
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}

# --no-svg, as the committed reference report is made: PNG plots only, and every folder's marker lists only
# the files that are there (the SVGs it once listed were not committed). The report is the fixture's
# (cli_harness.bash, quick_report), read here, never changed.
quick_report
ln -s "$QR" "$tmp/r"
rc=$QR_RC
check "lowp report --quick exits 0 or 1 (got $rc; see the log below)" test "$rc" -le 1
[ "$rc" -le 1 ] || tail -20 "$QR_ERR"
check "index.html written" test -s "$tmp/r/index.html"
check "--no-svg: no SVG written" test -z "$(find "$tmp/r/" -name '*.svg' | head -1)"
check "--no-svg: PNG plots kept" test -n "$(find "$tmp/r/" -name '*.png' | head -1)"
missing=0
for m in "$tmp"/r/.lowp-output "$tmp"/r/*/.lowp-output; do
  d=$(dirname "$m")
  while read -r f; do
    [ -e "$d/$f" ] || { echo "  $m lists $f, which is not there"; missing=$((missing + 1)); }
  done < <(sed -n '3,$p' "$m")
done
check "every file a .lowp-output lists is there" test "$missing" -eq 0

# every experiment has its section, and every image the page names exists
while read -r name _; do
  [ -n "$name" ] || continue
  check "section for $name" grep -q "<section id=\"$name\">" "$tmp/r/index.html"
done < <("$LOWP" list)
for img in $(grep -o '<img src="[^"]*"' "$tmp/r/index.html" | sed 's/<img src="//; s/"$//'); do
  check "image $img exists and is non-empty" test -s "$tmp/r/$img"
done

# the document's structure: document 004's six exercises, each pointing at the sections that answer it
# (exercise 5 at amp-speedup when this build has it, else a "needs a GPU" note); the claims ledger with
# its verdict categories and counts, and the documents' own words; every section opens with its answer
page="$tmp/r/index.html"
check "the exercises section" grep -q '<section id="exercises">' "$page"
for k in 1 2 3 4 5 6; do
  check "exercise $k listed" grep -q "<li id=\"exercise-$k\">" "$page"
done
if "$LOWP" list | grep -q '^amp-speedup '; then
  check "exercise 5 points at amp-speedup" grep -q '<li id="exercise-5">.*<a href="#amp-speedup">' "$page"
else
  check "exercise 5 says it needs a GPU" grep -q '<li id="exercise-5">.*class="mid needs-gpu">Needs a GPU' "$page"
fi
check "exercise 4 points at softmax-overflow" grep -q '<li id="exercise-4">.*<a href="#softmax-overflow">' "$page"
# every experiment an exercise names carries its key numbers in the row, read from its results.json
# (results.key_numbers, or for an experiment without them the columns tools/cmd_report.c names): at least
# one number each; exercise 5 (amp-speedup, when built) one per GPU, so more than one
check "each exercise row carries key numbers for each experiment it names" python3 -c '
import re, sys
page = open(sys.argv[1]).read()
for k in range(1, 7):
    li = re.search(r"<li id=\"exercise-%d\">(.*?)</li>" % k, page, re.S).group(1)
    parts = li.split("<br><a href=\"#")[1:]
    if not parts:
        assert k == 5 and "needs-gpu" in li, (k, li[:200])
        continue
    for p in parts:
        m = re.search(r"<span class=\"keys\">Key numbers: ([^<]*)</span>", p)
        assert m and re.search(r"[0-9]", m.group(1)) and "none in its results" not in m.group(1), (k, p[:300])
        if k == 5:
            assert m.group(1).count("; ") >= 1, ("exercise 5: one GPU only", m.group(1))
        if p.startswith("matmul-precision"):
            for f in ("cpu-fp32", "cpu-fp16", "cpu-bf16", "openblas-sgemm"):
                assert f + " max |C - exact|" in m.group(1), (f, m.group(1))
        if p.startswith("loss-scaling"):
            assert "smallest loss scale making 1e-06 normal" in m.group(1), m.group(1)
' "$page"
# no key-number slot is empty ("speedup over FP32 , time saved" or a "-" for a missing value), and no
# exercise's prose is cut inside a parenthesis or bracket (e.g. at "(Markidis et al.")
check "no empty key-number slot and no prose cut at an unbalanced parenthesis" python3 -c '
import html, re, sys
page = open(sys.argv[1]).read()
for k in range(1, 7):
    li = re.search(r"<li id=\"exercise-%d\">(.*?)</li>" % k, page, re.S).group(1)
    for p in li.split("<br><a href=\"#")[1:]:
        name = p.split("\"", 1)[0]
        m = re.search(r"</a>: (.*?)(?: <span class=\"keys\">Key numbers: (.*?)</span>|$)", p, re.S)
        prose, keys = html.unescape(m.group(1)), html.unescape(m.group(2) or "")
        assert prose.count("(") == prose.count(")") and prose.count("[") == prose.count("]"), (k, name, prose[-120:])
        for slot in re.split(r"[;,] ", keys.rstrip(".")):
            assert slot.strip() and not re.search(r"(\s|:)$", slot) and not re.search(r":\s*-$", slot), (k, name, slot, keys[:300])
' "$page"
check "matmul-precision links reports/pytorch-cpu (relative to the report's folder)" \
  grep -q '<p class="files">See also: <a href="../pytorch-cpu/README.md">' "$page"
check "the claims ledger" grep -q '<section id="claims-ledger">' "$page"
for cat in "holds" "holds with a qualification" "arithmetic re-checked" "wrong" "inconsistent within the document" \
  "ambiguous" "not checkable here"; do
  check "category '$cat' with a count" grep -q "<tr><td class=\"t [a-z]*\">$cat</td><td>[0-9][0-9]*</td>" "$page"
done
# each category in its verdict colour (the table is the legend): its own for "arithmetic re-checked"
check "the legend colours 'arithmetic re-checked' on its own" grep -q '<tr><td class="t arith">arithmetic re-checked</td>' "$page"
check "and 'wrong' as the verdicts are" grep -q '<tr><td class="t bad">wrong</td>' "$page"
ncl=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["claims"]))' experiments/claims.json 2>/dev/null || echo 0)
sum=$(sed -n '/<table class="categories">/,/<\/table>/p' "$page" | grep -o '</td><td>[0-9]*</td>' | grep -o '[0-9]*' | paste -sd+ | bc)
check "the category counts add up to the $ncl claims (got $sum)" test "$sum" = "$ncl"
check "the document's words beside the verdicts" grep -q "<th>the document's words</th>" "$page"
check "a quote verbatim (escaped) in the page" grep -q 'x_int = x_int &amp; 0xFFFF0000' "$page"
check "texts carry the run's parameter values, no {lo}/{hi} placeholders" bash -c "! grep -q '{lo}\\|{hi}' '$page'"
check "no script in the page" bash -c "! grep -qi '<script' '$page'"
while read -r name _; do
  [ -n "$name" ] || continue
  check "section $name opens with its answer" bash -c "grep -A3 '<section id=\"$name\">' '$page' | sed -n 4p | grep -q '^<p class=\"answer\"><b>Answer.</b>'"
done < <("$LOWP" list)

# the environment section: the first experiment's manifest (CPU, OpenBLAS core, libraries, compiler flags,
# revision) and what another experiment's manifest adds, named with it (claims runs numpy); one revision
for item in cpu.model cpu.isa_flags openblas.core libraries.mpfr libraries.gmp libraries.glibc compile_flags gnuplot \
  git_revision git_dirty date_utc; do
  check "the environment table lists $item" grep -q "<tr><td class=\"t\">$item</td>" "$page"
done
check "the environment table lists numpy as claims' alone" grep -q '<tr><td class="t">numpy (claims only)</td>' "$page"
check "one revision for the whole report (or said that it is not)" grep -q '<p class="\(ok\|bad\)">Revisions: ' "$page"

# headless render: a 1200 x 3000 screenshot of the top of the page
if [ -z "$CHROMIUM" ]; then
  echo "report_render.sh: the screenshot skipped: chromium is not installed (apt-get install chromium)"
  echo "report_render.sh: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
fi
shot="$tmp/shot.png"
timeout 180 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$tmp/profile" \
  --hide-scrollbars --screenshot="$shot" --window-size=1200,3000 "file://$tmp/r/index.html" \
  > "$tmp/chromium.log" 2>&1
check "chromium wrote a screenshot" test -s "$shot"
if [ -s "$shot" ]; then
  sig=$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')
  check "the screenshot is a PNG" test "$sig" = "89504e470d0a1a0a"
  w=$(od -An -tu1 -j16 -N4 "$shot" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
  h=$(od -An -tu1 -j20 -N4 "$shot" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
  check "the screenshot is 1200 x 3000 (got ${w} x ${h})" test "$w" -eq 1200 -a "$h" -eq 3000
  # a blank page compresses to a few KB; text, tables and plots do not
  size=$(stat -c %s "$shot")
  check "the screenshot is not blank ($size bytes)" test "$size" -gt 60000
  [ -n "${LOWP_KEEP_SCREENSHOT:-}" ] && cp "$shot" "$LOWP_KEEP_SCREENSHOT"
fi

echo "report_render.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
