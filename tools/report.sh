#!/usr/bin/env bash
# lowp report -- install what is missing, build, run every experiment into reports/latest/index.html.
# Run: bash tools/report.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh build
./build/lowp report --out reports/latest "$@"
