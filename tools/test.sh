#!/usr/bin/env bash
# lowp tests -- install what is missing, build, run the default test suite.
# Run: bash tools/test.sh            (labels unit + cli; GPU tests skip without a GPU)
#      LOWP_TEST_LABEL=long bash tools/test.sh   (the exhaustive suites)
set -euo pipefail
cd "$(dirname "$0")/.."
LOWP_EXTRA_PKGS="chromium python3" bash tools/setup.sh build
if [ -n "${LOWP_TEST_LABEL:-}" ]; then
  exec ctest --test-dir build -L "$LOWP_TEST_LABEL" --output-on-failure -j"$(nproc)"
fi
exec ctest --test-dir build -LE long --output-on-failure -j"$(nproc)"
