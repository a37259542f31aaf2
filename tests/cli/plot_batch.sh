#!/usr/bin/env bash
# cli_plot_batch -- `lowp run` draws all its plots with one gnuplot (lib/io/plot.c, lowp_plot_flush), the
# same bytes as a gnuplot of their own each, and falls back to one gnuplot a plot when that one fails.
#
# A stand-in gnuplot on PATH counts its starts and runs the real one: a run of master-weights (3 plots,
# two images each) starts gnuplot once to draw (and asks its --version, not counted). Every image
# equals the one the plot's own script gives in a gnuplot of its own (term='png' and term='svg', as
# BASE.gp's header says).
# A stand-in that fails whenever it is given more than one script: the run still exits 0 with every
# image, the same bytes, through one gnuplot a terminal a plot, and leaves no temporary or log.
# Run: bash tests/cli/plot_batch.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish

[ -x "$LOWP" ] || skip "no lowp binary"
GP=$(command -v gnuplot) || skip "no gnuplot"
mkdir -p "$T/count" "$T/fails"
printf '#!/bin/sh\n[ "$1" = --version ] || echo x >>"%s/starts"\nexec "%s" "$@"\n' "$T" "$GP" >"$T/count/gnuplot"
printf '#!/bin/sh\n[ "$1" = --version ] || echo x >>"%s/starts"\nn=0\nfor a; do case $a in *.gp) n=$((n + 1)) ;; esac; done\n[ $n -gt 1 ] && exit 1\nexec "%s" "$@"\n' \
  "$T" "$GP" >"$T/fails/gnuplot"
chmod +x "$T/count/gnuplot" "$T/fails/gnuplot"
RUN=("$LOWP" run master-weights --quick --seed 5)

PATH="$T/count:$PATH" "${RUN[@]}" --out "$T/one" >/dev/null 2>"$T/err" && ok || bad "run: $(cat "$T/err")"
n=$(ls "$T/one"/*.gp 2>/dev/null | wc -l)
starts=$(wc -l <"$T/starts")
[ "$n" -ge 2 ] && [ "$starts" -eq 1 ] && ok || bad "$n plots drew with $starts gnuplot starts, want 1"
same=0
for gp in "$T/one"/*.gp; do
  b=$(basename "$gp" .gp)
  for term in png svg; do
    (cd "$T/one" && "$GP" -e "term='$term'" "$b.gp" && cmp -s "$b.$term.tmp" "$b.$term" && rm "$b.$term.tmp") &&
      same=$((same + 1)) || bad "$b.$term differs from its own gnuplot's"
  done
done
[ "$same" -eq $((2 * n)) ] && ok || bad "$same of $((2 * n)) images as their own gnuplot draws them"

rm -f "$T/starts"
PATH="$T/fails:$PATH" "${RUN[@]}" --out "$T/two" >/dev/null 2>"$T/err" && ok || bad "run, batch fails: $(cat "$T/err")"
starts=$(wc -l <"$T/starts")
[ "$starts" -eq $((1 + 2 * n)) ] && ok || bad "batch refused: $starts gnuplot starts, want $((1 + 2 * n))"
left=$(ls "$T/two" | grep -E '\.tmp$|\.log$')
[ -z "$left" ] && ok || bad "left after the fallback: $left"
for gp in "$T/one"/*.gp; do
  b=$(basename "$gp" .gp)
  cmp -s "$T/one/$b.png" "$T/two/$b.png" && cmp -s "$T/one/$b.svg" "$T/two/$b.svg" && ok ||
    bad "$b: the fallback's images differ from the batch's"
done
finish cli_plot_batch
