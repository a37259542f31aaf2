#!/usr/bin/env bash
# lowp report -- install what is missing, build, run every experiment into reports/out/index.html.
# reports/out/ is not tracked: a run never dirties the checkout. The committed reference run,
# reports/latest/, is refreshed on purpose, from a clean tree (so its header names a clean
# revision): build/lowp report --out reports/latest --no-svg && git add reports/latest
# Run: bash tools/report.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
# (what only a built lowp runs, gnuplot and Fashion-MNIST, installs while it compiles: tools/setup.sh)
bash tools/setup.sh build lowp_cli
T1=$(date +%s)
echo "lowp report: set-up and build took $(( T1 - T0 )) s" >&2
rc=0
./build/lowp report --out reports/out "$@" || rc=$?
T2=$(date +%s)
echo "lowp report: experiments and report took $(( T2 - T1 )) s; $(( T2 - T0 )) s in all (exit $rc)" >&2
exit $rc
