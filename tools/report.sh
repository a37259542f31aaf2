#!/usr/bin/env bash
# lowp report -- install what is missing, build, run every experiment into reports/out/index.html.
# reports/out/ is not tracked: a run never dirties the checkout. The committed reference run,
# reports/latest/, is refreshed on purpose, from a clean tree (so its header names a clean
# revision): build/lowp report --out reports/latest --no-svg && git add reports/latest
# Run: bash tools/report.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
# the build's packages first, then what lowp runs (gnuplot, its font, Fashion-MNIST) installs while
# lowp compiles; one `apt-get update` for both (tools/setup.sh, LOWP_APT_STAMP)
LOWP_APT_STAMP=$(mktemp)
pkglog=$(mktemp)
export LOWP_APT_STAMP
trap 'rm -f "$LOWP_APT_STAMP" "$pkglog"' EXIT
LOWP_SETUP_BUILD=0 LOWP_SETUP_PART=build bash tools/setup.sh
LOWP_SETUP_BUILD=0 LOWP_SETUP_PART=run bash tools/setup.sh >"$pkglog" 2>&1 &
pkgpid=$!
LOWP_SETUP_PART=build bash tools/setup.sh build lowp_cli || { rc=$?; wait "$pkgpid" || true; exit "$rc"; }
prc=0
wait "$pkgpid" || prc=$?
cat "$pkglog" >&2
[ "$prc" -eq 0 ] || { echo "lowp report: installing lowp's run-time packages failed (exit $prc)" >&2; exit "$prc"; }
T1=$(date +%s)
echo "lowp report: set-up and build took $(( T1 - T0 )) s" >&2
rc=0
./build/lowp report --out reports/out "$@" || rc=$?
T2=$(date +%s)
echo "lowp report: experiments and report took $(( T2 - T1 )) s; $(( T2 - T0 )) s in all (exit $rc)" >&2
exit $rc
