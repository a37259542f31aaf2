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
# packages; CMake finds it at the next configure). When this script builds, what
# only a built lowp runs (gnuplot, its font, Fashion-MNIST: 76 packages and 82 MB
# on a fresh Debian 12), and LOWP_LATE_PKGS (tools/test.sh: the tests' own), install
# while the build compiles: the build needs none of them.
BUILD_DEPS="build-essential cmake pkg-config libmpfr-dev libgmp-dev librandom123-dev
      libcjson-dev nettle-dev libopenblas-dev git zlib1g-dev ninja-build"
RUN_DEPS="gnuplot-nox fonts-dejavu-core dataset-fashion-mnist"
# (Open MPI with the build's: CMake must find it before the build)
[ "${LOWP_WITH_MPI:-0}" = 1 ] && BUILD_DEPS="$BUILD_DEPS libopenmpi-dev openmpi-bin"
LATE="$RUN_DEPS ${LOWP_LATE_PKGS:-}"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
UPDATED=0
# install_pkgs PKG...: the missing ones (one `apt-get update` per run of this script)
install_pkgs() {
  local p missing="" t_apt
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -n "$missing" ] || return 0
  echo "lowp setup: installing:$missing" >&2
  # a package installation that was interrupted (a killed apt-get) leaves
  # dpkg refusing every later one until it is finished: finish it first
  if [ -n "$($SUDO dpkg --audit 2>/dev/null)" ]; then
    echo "lowp setup: finishing an interrupted package installation (dpkg --configure -a)" >&2
    DEBIAN_FRONTEND=noninteractive $SUDO dpkg --configure -a >&2
  fi
  t_apt=$(date +%s)
  if [ "$UPDATED" = 0 ]; then
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
    UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >&2
  echo "lowp setup: packages installed in $(( $(date +%s) - t_apt )) s" >&2
}

# LOWP_SETUP_BUILD=0: packages only, all of them (tools/test.sh's asan pass and tools/gpu.sh build elsewhere)
if [ "${LOWP_SETUP_BUILD:-1}" = 0 ]; then
  install_pkgs $BUILD_DEPS ${LOWP_EXTRA_PKGS:-} $LATE
  exit 0
fi
install_pkgs $BUILD_DEPS ${LOWP_EXTRA_PKGS:-}
# the late packages beside the build (their own log, shown when both are done; the build's
# `apt-get update` done above is not done again there); a failed build waits for them too
latelog=$(mktemp)
( install_pkgs $LATE ) >"$latelog" 2>&1 &
latepid=$!
trap 'wait "$latepid" 2>/dev/null || true; rm -f "$latelog"' EXIT
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
lrc=0
wait "$latepid" || lrc=$?
cat "$latelog" >&2
if [ "$lrc" -ne 0 ]; then
  echo "lowp setup: installing the packages beside the build ($LATE) failed (exit $lrc)" >&2
  exit "$lrc"
fi
