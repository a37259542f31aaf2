#!/usr/bin/env bash
# lowp report -- install what is missing, build, run every experiment into reports/out/index.html.
# reports/out/ is not tracked: a run never dirties the checkout. The committed reference run,
# reports/latest/, is refreshed on purpose, from a clean tree (so its header names a clean
# revision): build/lowp report --out reports/latest && git add reports/latest
# Run: bash tools/report.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh build
./build/lowp report --out reports/out "$@"
