#!/usr/bin/env bash
# lowp tests -- install what is missing, build, run the default test suite.
# Run: bash tools/test.sh            (labels unit, cli, mpi; GPU tests skip without a GPU)
#      LOWP_TEST_LABEL=long bash tools/test.sh   (the exhaustive suites)
#      LOWP_TEST_LABEL=torch bash tools/test.sh  (PyTorch's CPU kernels under lowp check)
#      LOWP_TEST_LABEL=mpi bash tools/test.sh    (only the mpi label: mpirun -np 2 and 3, under a minute; also in the default run)
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRA="chromium python3 python3-jsonschema python3-numpy clang"
# label torch measures PyTorch's CPU kernels: Debian's python3-torch (large)
[ "${LOWP_TEST_LABEL:-}" = torch ] && EXTRA="$EXTRA python3-torch"
LOWP_EXTRA_PKGS="$EXTRA" bash tools/setup.sh build
if [ -n "${LOWP_TEST_LABEL:-}" ]; then
  exec ctest --test-dir build -L "$LOWP_TEST_LABEL" --output-on-failure -j"$(nproc)"
fi
ctest --test-dir build -LE 'long|fuzz|torch' --output-on-failure -j"$(nproc)"

# ---- sanitizers and fuzzing: a second build (build-asan) under ASan+UBSan
# (UBSan fatal), with clang where present so that the libFuzzer harnesses
# (label fuzz, a short run of each) build there too; then unit, cli, fuzz.
# The GPU code is left out there (LOWP_CUDA=OFF): the first build compiles
# it, and sanitizers check host code. So is MPI (LOWP_MPI=OFF: the build
# without it is checked there; the mpi label runs on the first build).
if command -v clang >/dev/null; then
  CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release \
    -DLOWP_SANITIZE=ON -DLOWP_FUZZ=ON -DLOWP_CUDA=OFF -DLOWP_MPI=OFF >&2
  LABELS='^(unit|cli|fuzz)$'
else
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DLOWP_SANITIZE=ON -DLOWP_CUDA=OFF -DLOWP_MPI=OFF >&2
  LABELS='^(unit|cli)$'
fi
cmake --build build-asan -j"$(nproc)" >&2
ASAN_OPTIONS=detect_leaks=1 exec ctest --test-dir build-asan -L "$LABELS" \
  --output-on-failure -j"$(nproc)"
