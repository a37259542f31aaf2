#!/usr/bin/env bash
# lowp setup -- install the Debian packages lowp needs (only the missing ones), then build.
# Run: bash tools/setup.sh [build-dir] [target...]   (root, or sudo available)
#      with targets, only those are built (tools/report.sh builds lowp_cli alone)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
[ $# -gt 0 ] && shift
TARGETS=("$@")

# What lowp uses (docs/design.md, "Dependencies"): compiler and build, MPFR/GMP
# (exact arithmetic), Random123 (counter-based RNG), cJSON, gnuplot (plots)
# with a font, OpenBLAS (exact GEMM sliced path, required), zlib and Fashion-MNIST
# (exercise 6). LOWP_EXTRA_PKGS adds more (the tests add clang for the sanitizer
# pass). Open MPI (lowp under mpirun, docs/scale.md) is
# optional: LOWP_WITH_MPI=1 installs it (libopenmpi-dev openmpi-bin, about 35
# packages; CMake finds it at the next configure). LOWP_SETUP_PKGS replaces the
# whole list. LOWP_SETUP_PART=build takes only what the build needs, =run only
# what the built lowp runs (gnuplot, its font, Fashion-MNIST: 76 packages and 82 MB
# on a fresh Debian 12 that the build does not wait for): tools/report.sh and
# tools/test.sh install the second part while the build compiles.
BUILD_DEPS="build-essential cmake pkg-config libmpfr-dev libgmp-dev librandom123-dev
      libcjson-dev nettle-dev libopenblas-dev git zlib1g-dev ninja-build"
RUN_DEPS="gnuplot-nox fonts-dejavu-core dataset-fashion-mnist"
# (Open MPI with the build's: CMake must find it before the build)
[ "${LOWP_WITH_MPI:-0}" = 1 ] && BUILD_DEPS="$BUILD_DEPS libopenmpi-dev openmpi-bin"
case "${LOWP_SETUP_PART:-}" in
build) PKGS=$BUILD_DEPS ;;
run) PKGS=$RUN_DEPS ;;
'') PKGS="$BUILD_DEPS $RUN_DEPS" ;;
*) echo "lowp setup: LOWP_SETUP_PART is build, run or empty, not '$LOWP_SETUP_PART'" >&2; exit 2 ;;
esac
PKGS="$PKGS ${LOWP_EXTRA_PKGS:-}"
[ -n "${LOWP_SETUP_PKGS:-}" ] && PKGS="$LOWP_SETUP_PKGS"

missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "lowp setup: installing:$missing" >&2
  # a package installation that was interrupted (a killed apt-get) leaves
  # dpkg refusing every later one until it is finished: finish it first
  if [ -n "$($SUDO dpkg --audit 2>/dev/null)" ]; then
    echo "lowp setup: finishing an interrupted package installation (dpkg --configure -a)" >&2
    DEBIAN_FRONTEND=noninteractive $SUDO dpkg --configure -a >&2
  fi
  t_apt=$(date +%s)
  # LOWP_APT_STAMP=FILE: one `apt-get update` per run of the caller (tools/test.sh installs in two
  # steps): skipped when FILE is non-empty, and FILE written after it
  if [ -z "${LOWP_APT_STAMP:-}" ] || [ ! -s "$LOWP_APT_STAMP" ]; then
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
    [ -z "${LOWP_APT_STAMP:-}" ] || echo updated >"$LOWP_APT_STAMP"
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >&2
  echo "lowp setup: packages installed in $(( $(date +%s) - t_apt )) s" >&2
fi

# LOWP_SETUP_BUILD=0: packages only (tools/test.sh's asan pass and tools/gpu.sh build elsewhere)
[ "${LOWP_SETUP_BUILD:-1}" = 0 ] && exit 0
t_build=$(date +%s)
echo "lowp setup: building in $BUILD/${TARGETS[*]:+ (${TARGETS[*]})}" >&2
# Ninja for a new build folder (a folder keeps the generator it was made with): it compiles a
# target's files while the libraries it links are still being built, and starts fewer processes
# than make: a fresh build on 2 cores took 143 s against make's 167 s (272 s of CPU against 314).
GEN=()
if command -v ninja >/dev/null &&
   { [ ! -f "$BUILD/CMakeCache.txt" ] || grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$BUILD/CMakeCache.txt"; }; then
  GEN=(-G Ninja)
fi
cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release >&2
if [ ${#TARGETS[@]} -gt 0 ]; then
  cmake --build "$BUILD" -j"$(nproc)" --target "${TARGETS[@]}" >&2
else
  cmake --build "$BUILD" -j"$(nproc)" >&2
fi
echo "lowp setup: built in $(( $(date +%s) - t_build )) s" >&2
