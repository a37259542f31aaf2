#!/usr/bin/env bash
# lowp tests -- install what is missing, build, run the test suite; prints each phase's time.
# Run: bash tools/test.sh            (labels unit, cli, numpy: minutes; GPU tests skip without a GPU;
#                                     with CI set, as .ci/run does, also label mpi and the asan pass below)
#      LOWP_TEST_LABEL=asan bash tools/test.sh   (only the sanitizer pass: a second build under
#                                     ASan+UBSan with clang, labels unit and cli, 20 s of each fuzzer)
#      LOWP_TEST_LABEL=long bash tools/test.sh   (the exhaustive suites)
#      LOWP_TEST_LABEL=torch bash tools/test.sh  (PyTorch's CPU kernels and the Python module with torch)
#      LOWP_TEST_LABEL=mpi bash tools/test.sh    (only the mpi label: mpirun -np 2 and 3; CI runs it after
#                                     the default labels: its jobs mostly wait on mpirun, below)
#      LOWP_TEST_LABEL=avx2cpu bash tools/test.sh (the fast-path tests and every experiment's quick run on an
#                                     emulated CPU with AVX2 alone: QEMU user mode, qemu-user; CI runs it too)
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
phase_t=$T0
# phase NAME: print how long the previous phase took, and the total so far
phase() {
  local now; now=$(date +%s)
  echo "lowp tests: $1 ($(( now - phase_t )) s; $(( now - T0 )) s in all)" >&2
  phase_t=$now
}
LABEL="${LOWP_TEST_LABEL:-}"
# the tests' own packages (chromium renders the report, python3's for the Python module and the numpy
# checks, netpbm's pngtopnm for tools/plot_check.py); label torch adds PyTorch's CPU kernels
# (Debian's python3-torch, large)
TEST_PKGS="chromium python3 python3-jsonschema python3-numpy python3-pytest time netpbm"
[ "$LABEL" = torch ] && TEST_PKGS="$TEST_PKGS python3-torch"
# what only CI and some labels use: clang (the sanitizer pass, after the first build's tests: it
# installs beside the build), Open MPI (label mpi, and long's mpi_report_long; tools/setup.sh installs
# it with the build's packages: CMake must find it before the build). A newcomer's run installs
# neither: about 45 packages fewer on a fresh machine
ASAN_PKGS=""
WITH_MPI=0
if [ -n "${CI:-}" ] || [ "$LABEL" = asan ]; then ASAN_PKGS="clang"; fi
# label avx2cpu's emulator (tests/avx2cpu/qemu.sh): QEMU's user mode (a 12 MB download)
if [ -n "${CI:-}" ] || [ "$LABEL" = avx2cpu ]; then ASAN_PKGS="$ASAN_PKGS qemu-user"; fi
if [ -n "${CI:-}" ] || [ "$LABEL" = mpi ] || [ "$LABEL" = long ]; then WITH_MPI=1; fi
export LOWP_WITH_MPI=$WITH_MPI

asan_pass() {
  # sanitizers and fuzzing: a second build (build-asan) under ASan+UBSan
  # (UBSan fatal), with clang where present so that the libFuzzer harnesses
  # (label fuzz, a short run of each) build there too; then unit, cli, fuzz.
  # The GPU code is left out there (LOWP_CUDA=OFF): the first build compiles
  # it, and sanitizers check host code. So is MPI (LOWP_MPI=OFF: the build
  # without it is checked there; the mpi label runs on the first build).
  local labels
  if command -v clang >/dev/null; then
    CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release \
      -DLOWP_SANITIZE=ON -DLOWP_FUZZ=ON -DLOWP_CUDA=OFF -DLOWP_MPI=OFF >&2
    labels='^(unit|cli|fuzz)$'
  else
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DLOWP_SANITIZE=ON -DLOWP_CUDA=OFF -DLOWP_MPI=OFF >&2
    labels='^(unit|cli)$'
  fi
  cmake --build build-asan -j"$(nproc)" >&2
  phase "asan build done"
  # intercept_tls_get_addr=0: clang 14's LeakSanitizer reads a bogus dynamic-TLS range of OpenBLAS's
  # threads and its tracer dies ('Tracer caught signal 11', exit 1 after a clean run: matmul-precision with
  # OPENBLAS_CORETYPE=Haswell); google/sanitizers#1267, fixed in LLVM by D147459 (clang 17). Leaks are
  # still detected.
  ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 ctest --test-dir build-asan -L "$labels" \
    --output-on-failure -j"$(nproc)"
  phase "asan tests done (labels $labels)"
}

if [ "$LABEL" = asan ]; then
  LOWP_SETUP_BUILD=0 LOWP_EXTRA_PKGS="$ASAN_PKGS $TEST_PKGS" bash tools/setup.sh
  phase "set-up done"
  asan_pass
  exit 0
fi
# the build's packages first; then what lowp runs (gnuplot, Fashion-MNIST), the tests' own and clang
# install while the build compiles (tools/setup.sh: the build uses none of them, CMake looks for none):
# on a fresh machine their download and unpacking overlap it
LOWP_LATE_PKGS="$ASAN_PKGS $TEST_PKGS" bash tools/setup.sh build
phase "build done (the tests' packages installed beside it)"
if [ -n "$LABEL" ]; then
  ctest --test-dir build -L "$LABEL" --output-on-failure -j"$(nproc)"
  phase "label $LABEL done"
  exit 0
fi
ctest --test-dir build -LE 'long|fuzz|torch|mpi|avx2cpu' --output-on-failure -j"$(nproc)"
phase "default labels unit, cli, numpy done"
# CI (.ci/run runs this script with CI=true) adds label mpi and the sanitizer and fuzz pass. The mpi
# tests (tests/mpi/) are a longer suite that mostly waits: their wall times summed 170 s for 75 s of CPU
# on 2 cores, since every mpirun job starts in about 0.5 s and one whose rank fails waits 1 s more
# before the others are stopped (README, "Test labels")
if [ -n "${CI:-}" ]; then
  ctest --test-dir build -L mpi -LE long --output-on-failure -j"$(nproc)"
  phase "label mpi done"
  ctest --test-dir build -L avx2cpu --output-on-failure -j"$(nproc)"
  phase "label avx2cpu done"
  asan_pass
fi
echo "lowp tests: all passed in $(( $(date +%s) - T0 )) s" >&2
