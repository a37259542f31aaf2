#!/usr/bin/env bash
# report_quick.sh -- the fixture report_quick: one `lowp report --quick --no-svg` into a folder with a
# hostile name (cli_harness.bash, quick_report), which cli_outputs, cli_report_render and cli_plot_keys
# read instead of each running the whole quick report again; here: it exits 0 or 1, writes index.html
# and every experiment's folder, and no part of the name ran as a command.
# Run: bash tests/cli/report_quick.sh build/lowp   (ctest: LOWP_REPORT_QUICK names the folder to fill)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
base=${LOWP_REPORT_QUICK:-$T/quick-report}
quick_report_make "$base" || bad "cannot make $base"
rc=$(cat "$base/rc")
R="$base/$QR_NAME"
[ "$rc" -le 1 ] && [ -s "$R/index.html" ] && ok || bad "report --quick: exit $rc, $(tail -3 "$base/err")"
while read -r name _; do
  [ -n "$name" ] || continue
  [ -s "$R/$name/results.json" ] && ok || bad "no $name/results.json"
done < <("$LOWP" list)
[ -z "$(find "$base" "$PWD" / -maxdepth 1 -name 'INJECTED*' 2>/dev/null)" ] && ok || bad "the folder's name ran a command"
finish report_quick
