#!/usr/bin/env bash
# gpu.sh -- everything lowp measures on an NVIDIA GPU, in one report: reports/gpu/<gpu-name>/
#
# On a machine with an NVIDIA GPU (nvidia-smi -L lists one) it
#   0. installs the Debian packages lowp needs (tools/setup.sh, the README's
#      install step, without its build), or takes them from a carried folder
#      (LOWP_DEPS, see below) on a machine without a package registry
#   1. builds lowp for that GPU in build-gpu/ (CMAKE_CUDA_ARCHITECTURES from
#      the compute capability nvidia-smi reports: 9.0 -> 90), and decodes the
#      machine code the CPU twins assume for that architecture (tsass)
#   2. asks the CUDA runtime which GPU it can use (lowp probe --device-info);
#      if it can use none (a driver older than this CUDA needs), it stops here,
#      loudly, with the runtime's error: the GPU tests would all skip
#   3. runs the GPU tests (ctest -L cuda): the row kernels and the mma.sync
#      GEMMs against their CPU twins bit for bit, cuBLAS against the GPU's
#      tensor-core model, the cvt instructions, the exact GEMM on cuBLAS
#      (and cuBLASLt's summation trees, revealed: lowp reveal --kernel gemm_cublas)
#   4. lowp probe, and lowp probe --capture (tensor-core vectors of this GPU)
#      with their replay against the model; on fp8 GPUs (8.9+) also chained
#      fp8 rows (--k 1024: 32 instructions, the running sum as C != 0) and
#      their replay
#   5. lowp check of every GPU registry entry against its CPU twin (bitexact;
#      cuBLAS against the model's error bound, and fp16 and fp32 cuBLAS
#      against the bound of their revealed trees and those trees' twins,
#      bit for bit: "order": "revealed", "vs_twin")
#   6. lowp run amp-speedup: the layer timed with cuBLAS beside the roofline's
#      prediction for this GPU's datasheet row (index.md quotes the result)
# and writes each command's output, its exit status and the time it took,
# with the date, the GPU, the driver and the CUDA version, under
# reports/gpu/<gpu-name>/ (index.md lists it all). A command this lowp does
# not have (lowp probe, amp-speedup in older trees) is recorded as missing,
# not as a failure. The report folder is written beside its destination and
# renamed into place at the end; a failed or interrupted run leaves the old
# one as it was.
#
# Without a GPU it says so and exits 0, having changed nothing.
#
# Usage: bash tools/gpu.sh [--out DIR] [--jobs N] [--prebuilt DIR] [--time-limit S]
#                         [--ctest-exclude RE] [--dry-run] [--help]
#        bash tools/gpu.sh --fetch-deps DIR
#   --out DIR         the report folder (default reports/gpu/<gpu-name>)
#   --jobs N          build parallelism (default: the number of CPUs)
#   --prebuilt DIR    no installation and no build: DIR is a build folder made
#                     elsewhere for this GPU's architecture (cmake -S . -B DIR
#                     -DLOWP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 on a machine
#                     with the packages, docs/gpu.md), carried here with the
#                     checkout at the same absolute path (its tests name it);
#                     the libraries it links come from the system or LOWP_DEPS.
#                     Saves the build's minutes on a lent GPU.
#   --ctest-exclude RE  ctest -E RE in the ctest-cuda step (a test that already
#                     passed on this GPU, to spend a short lease elsewhere)
#   --time-limit S    the steps share S seconds (a lent GPU's minutes): each
#                     is stopped (timeout(1), exit status 124, a failure) when
#                     they run out, and a step that would start after that is
#                     recorded as not run; the report is still published
#                     (default: no limit)
#   --dry-run         run every step's command line with the commands stubbed
#                     (each records what it would run and succeeds), so that
#                     the plumbing runs without a GPU, a build or a package;
#                     also LOWP_GPU_DRYRUN=1
#   --fetch-deps DIR  on a machine WITH a package registry: apt-get download
#                     the libraries lowp needs (and theirs) and dpkg -x them
#                     into DIR; carry DIR to the GPU machine with the checkout
#                     and run there with LOWP_DEPS=DIR (docs/gpu.md)
# Environment: LOWP_NVIDIA_SMI (default nvidia-smi) names the nvidia-smi to
# ask (the tests point it elsewhere to play a machine with or without a GPU);
# LOWP_DEPS=DIR a folder made by --fetch-deps: no installation, the build
# finds the libraries there; LOWP_GPU_DRYRUN_FAIL=STEP in a dry run makes
# that step fail (the tests check what follows), LOWP_GPU_DRYRUN_HANG=STEP
# makes it hang (until --time-limit stops it).
# Exit status: 0 every step that exists passed (or no GPU); 1 a step failed
# (or the CUDA runtime cannot use the GPU); 2 bad usage.
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
SMI=${LOWP_NVIDIA_SMI:-nvidia-smi}
OUT=
JOBS=$(nproc 2>/dev/null || echo 2)
DRY=${LOWP_GPU_DRYRUN:-0}
FETCH=
PREBUILT=
TIME_LIMIT=
CTEST_EXCLUDE=
# the libraries lowp links and the library packages they need (Debian 12
# names; tools/setup.sh installs the -dev ones with the rest); the C library,
# the compiler with its OpenMP runtime, CMake and zlib's runtime are taken to
# be on any CUDA machine
DEPS_PKGS="libmpfr-dev libmpfr6 libgmp-dev libgmp10 libgmpxx4ldbl librandom123-dev libcjson-dev libcjson1
           nettle-dev libnettle8
           libopenblas-dev libopenblas0 libopenblas-pthread-dev libopenblas0-pthread libgfortran5
           libquadmath0 zlib1g-dev"

usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; }
die2() { echo "gpu.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --help | -h) usage; exit 0 ;;
    --out) [ $# -ge 2 ] || die2 "--out needs a folder"; OUT=$2; shift 2 ;;
    --out=*) OUT=${1#--out=}; shift ;;
    --jobs) [ $# -ge 2 ] || die2 "--jobs needs a number"; JOBS=$2; shift 2 ;;
    --jobs=*) JOBS=${1#--jobs=}; shift ;;
    --dry-run) DRY=1; shift ;;
    --prebuilt) [ $# -ge 2 ] || die2 "--prebuilt needs a build folder"; PREBUILT=$2; shift 2 ;;
    --prebuilt=*) PREBUILT=${1#--prebuilt=}; [ -n "$PREBUILT" ] || die2 "--prebuilt needs a build folder"; shift ;;
    --ctest-exclude) [ $# -ge 2 ] || die2 "--ctest-exclude needs a regular expression"; CTEST_EXCLUDE=$2; shift 2 ;;
    --ctest-exclude=*) CTEST_EXCLUDE=${1#--ctest-exclude=}; [ -n "$CTEST_EXCLUDE" ] || die2 "--ctest-exclude needs a regular expression"; shift ;;
    --time-limit) [ $# -ge 2 ] || die2 "--time-limit needs a number of seconds"; TIME_LIMIT=$2; shift 2 ;;
    --time-limit=*) TIME_LIMIT=${1#--time-limit=}; shift ;;
    --fetch-deps) [ $# -ge 2 ] || die2 "--fetch-deps needs a folder"; FETCH=$2; shift 2 ;;
    --fetch-deps=*) FETCH=${1#--fetch-deps=}; [ -n "$FETCH" ] || die2 "--fetch-deps needs a folder"; shift ;;
    *) die2 "unknown option '$1' (see tools/gpu.sh --help)" ;;
  esac
done
case $JOBS in '' | *[!0-9]* | 0) die2 "--jobs: expected a positive integer, not '$JOBS'" ;; esac
[ -z "$TIME_LIMIT" ] || case $TIME_LIMIT in *[!0-9]* | 0) die2 "--time-limit: expected a positive number of seconds, not '$TIME_LIMIT'" ;; esac
T_END=
[ -z "$TIME_LIMIT" ] || T_END=$((${EPOCHSECONDS:-$(date +%s)} + TIME_LIMIT))
if [ -n "$PREBUILT" ]; then
  [ -d "$PREBUILT" ] || die2 "--prebuilt: $PREBUILT is not a folder"
  PREBUILT=$(cd "$PREBUILT" && pwd)
  [ "$DRY" = 1 ] || [ -x "$PREBUILT/lowp" ] || die2 "--prebuilt: $PREBUILT has no lowp (not a lowp build folder)"
fi
[ -z "$OUT" ] || case $OUT in */) OUT=${OUT%/} ;; esac
case $DRY in 0 | 1) ;; *) die2 "LOWP_GPU_DRYRUN: expected 0 or 1, not '$DRY'" ;; esac

# ------------------------------------------ --fetch-deps: the carried folder
# apt-get download each package of DEPS_PKGS and dpkg -x it into DIR; then
# the links the packages' install scripts would make (OpenBLAS is chosen by
# Debian's alternatives), and no static libraries or documentation. DIR/usr
# holds include/, lib/<triplet>/ and the pkg-config files (about 50 MiB);
# LOWP_DEPS=DIR points the build there.
if [ -n "$FETCH" ]; then
  [ ! -e "$FETCH" ] || [ -z "$(ls -A "$FETCH" 2>/dev/null)" ] || die2 "--fetch-deps: $FETCH exists and is not empty"
  command -v apt-get >/dev/null && command -v dpkg >/dev/null || die2 "--fetch-deps needs apt-get and dpkg"
  mkdir -p "$FETCH/debs" || die2 "cannot create $FETCH"
  # shellcheck disable=SC2086
  (cd "$FETCH/debs" && apt-get download $DEPS_PKGS) >&2 || { echo "gpu.sh: apt-get download failed (apt-get update first?)" >&2; exit 1; }
  for d in "$FETCH"/debs/*.deb; do dpkg -x "$d" "$FETCH" || { echo "gpu.sh: dpkg -x $d failed" >&2; exit 1; }; done
  rm -rf "$FETCH/debs" "$FETCH/usr/share/doc" "$FETCH/usr/share/man"
  find "$FETCH" \( -name '*.a' -o -name 'liblapack*' \) \( -type f -o -type l \) -delete
  T3=$(ls "$FETCH/usr/lib" | grep -- '-linux-gnu$' | head -n 1)
  ln -s "openblas-pthread/libopenblas.so" "$FETCH/usr/lib/$T3/libopenblas.so"
  ln -s "openblas-pthread/libopenblas.so.0" "$FETCH/usr/lib/$T3/libopenblas.so.0"
  ln -s "$T3/openblas-pthread" "$FETCH/usr/include/openblas"
  PK=$DEPS_PKGS
  echo "gpu.sh: $(echo "$PK" | wc -w) packages unpacked into $FETCH ($(du -sh "$FETCH" | cut -f1)); carry it and run LOWP_DEPS=$FETCH bash tools/gpu.sh"
  exit 0
fi

# ------------------------------------------------------------ is there a GPU?
GPUS=$("$SMI" -L 2>/dev/null | grep '^GPU ' || true)
if [ -z "$GPUS" ]; then
  echo "gpu.sh: no NVIDIA GPU here ('$SMI -L' lists none): nothing to do, nothing changed"
  exit 0
fi

GPU_NAME=$("$SMI" --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$GPU_NAME" ] || GPU_NAME=$(echo "$GPUS" | head -n 1 | sed -e 's/^GPU [0-9]*: //' -e 's/ (UUID.*//')
DRIVER=$("$SMI" --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
CC=$("$SMI" --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
SLUG=$(echo "$GPU_NAME" | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9._-]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
[ -n "$SLUG" ] || SLUG=unknown-gpu
[ -n "$OUT" ] || OUT=$SRC/reports/gpu/$SLUG
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
if [ -e "$OUT" ] && [ ! -f "$OUT/.gpu-report" ]; then
  [ -d "$OUT" ] && [ -z "$(ls -A "$OUT")" ] || die2 "$OUT exists and is not a gpu.sh report: refusing to replace it"
fi
mkdir -p "$(dirname "$OUT")" || die2 "cannot create $(dirname "$OUT")"
TMP=$OUT.tmp.$$
rm -rf "$TMP"
mkdir "$TMP" || die2 "cannot write beside $OUT"
trap 'rm -rf "$TMP"; exit 130' INT
trap 'rm -rf "$TMP"; exit 143' TERM
NVCC=${CUDACXX:-/usr/local/cuda/bin/nvcc}
CUDA_VERSION=$("$NVCC" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -n 1)
BUILD=${PREBUILT:-$SRC/build-gpu}
LOWP=$BUILD/lowp
# the architecture to build for: the compute capability nvidia-smi reports
# ("9.0" -> 90); CMake's 'native' needs CMake 3.24, lowp asks for 3.20
ARCH=$(echo "$CC" | tr -d '. ')
case $ARCH in
  [1-9][0-9] | [1-9][0-9][0-9]) ARCH_OPT=-DCMAKE_CUDA_ARCHITECTURES=$ARCH ;;
  *) ARCH_OPT=; echo "gpu.sh: nvidia-smi gives no compute capability ('$CC'): building lowp's default architectures" >&2 ;;
esac
# the carried libraries (--fetch-deps) instead of an installation
DEPS_OPT=
if [ -n "${LOWP_DEPS:-}" ]; then
  [ -d "$LOWP_DEPS/usr/include" ] || die2 "LOWP_DEPS=$LOWP_DEPS is not a folder made by --fetch-deps (no usr/include)"
  DEPS=$(cd "$LOWP_DEPS" && pwd)
  TRIPLET=$(ls "$DEPS/usr/lib" | grep -- '-linux-gnu$' | head -n 1)
  export CPATH="$DEPS/usr/include${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$DEPS/usr/lib/$TRIPLET${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$DEPS/usr/lib/$TRIPLET${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # the .pc files say prefix=/usr: the sysroot puts DEPS in front
  export PKG_CONFIG_LIBDIR="$DEPS/usr/lib/$TRIPLET/pkgconfig:$DEPS/usr/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$DEPS"
  DEPS_OPT=-DCMAKE_PREFIX_PATH=$DEPS/usr
fi

# ------------------------------------------------------------------- steps
# step NAME CMD...: run, keep stdout+stderr in NAME.txt, record status and time
# (a dry run records the command line and succeeds, or fails for the step
# LOWP_GPU_DRYRUN_FAIL names)
STEPS=()
FAILED=0
stub() {
  echo "dry-run: $*"
  [ "$DRYSTEP" != "${LOWP_GPU_DRYRUN_FAIL:-}" ] || { echo "dry-run: $DRYSTEP fails as asked"; return 1; }
  if [ "$DRYSTEP" = "${LOWP_GPU_DRYRUN_HANG:-}" ]; then
    echo "dry-run: $DRYSTEP hangs as asked"
    if [ -n "$T_END" ]; then timeout $((T_END - ${EPOCHSECONDS:-$(date +%s)})) sleep 100000; else sleep 100000; fi
  fi
}
step() {
  local name=$1; shift
  local t0 t1 rc
  t0=${EPOCHSECONDS:-$(date +%s)}
  if [ -n "$T_END" ] && [ "$t0" -ge "$T_END" ]; then
    STEPS+=("| $name | \`$*\` | not run | --time-limit $TIME_LIMIT s spent |")
    echo "== $name: not run: --time-limit $TIME_LIMIT s spent" >&2
    FAILED=1
    return 124
  fi
  echo "== $name: $*" >&2
  if [ "$DRY" = 1 ]; then
    DRYSTEP=$name
    { echo "\$ $*"; stub "$@"; } >"$TMP/$name.txt" 2>&1
  elif [ -n "$T_END" ]; then
    { echo "\$ $*"; timeout $((T_END - t0)) "$@"; } >"$TMP/$name.txt" 2>&1
  else
    { echo "\$ $*"; "$@"; } >"$TMP/$name.txt" 2>&1
  fi
  rc=$?
  t1=${EPOCHSECONDS:-$(date +%s)}
  [ $rc -ne 124 ] || [ -z "$T_END" ] || echo "gpu.sh: $name stopped: --time-limit $TIME_LIMIT s spent" >>"$TMP/$name.txt"
  STEPS+=("| $name | \`$*\` | $rc | $((t1 - t0)) s |")
  [ $rc -eq 0 ] || FAILED=1
  return $rc
}
# missing NAME WHY: a step this lowp cannot run
missing() {
  STEPS+=("| $1 | (not run) | missing | $2 |")
  echo "== $1: missing: $2" >&2
}
# has_cmd ARGS...: 0 if 'lowp ARGS --help' works (the command exists)
has_cmd() { [ "$DRY" = 1 ] || "$LOWP" "$@" --help >/dev/null 2>&1; }

DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
REV=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)

if [ -n "$PREBUILT" ]; then
  missing install "prebuilt: $PREBUILT was built elsewhere"
  missing build-configure "prebuilt: $PREBUILT was built elsewhere"
  missing build "prebuilt: $PREBUILT was built elsewhere"
else
  if [ -n "$DEPS_OPT" ]; then
    missing install "the libraries come from LOWP_DEPS=$LOWP_DEPS"
  else
    step install env LOWP_SETUP_BUILD=0 bash "$SRC/tools/setup.sh"
  fi
  # shellcheck disable=SC2086
  step build-configure cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLOWP_CUDA=ON $ARCH_OPT $DEPS_OPT
  step build cmake --build "$BUILD" -j "$JOBS"
fi
# the machine code the twins assume, for the architecture just built (tests/tsass.c)
if [ -n "$ARCH_OPT" ]; then
  step sass env LOWP_SASS_ARCHS="$ARCH" "$BUILD/tsass"
fi
RUNTIME_OK=0
if [ "$DRY" = 1 ] || { [ -x "$LOWP" ] && [ -x "$BUILD/tgemm_gpu" ]; }; then
  if step device "$LOWP" probe --device-info; then
    RUNTIME_OK=1
  else
    echo "gpu.sh: nvidia-smi lists $GPU_NAME, but the CUDA runtime of this build cannot use it:" >&2
    sed -e '1d' -e 's/^/  /' "$TMP/device.txt" >&2
    echo "gpu.sh: (CUDA ${CUDA_VERSION:-?}, driver ${DRIVER:-?}; CUDA 13 needs driver R580 or newer): no GPU step ran" >&2
  fi
else
  echo "gpu.sh: the build failed (see build.txt in the report); nothing else ran" >&2
  FAILED=1
fi
if [ $RUNTIME_OK = 1 ]; then
if [ -n "$CTEST_EXCLUDE" ]; then
  step ctest-cuda ctest --test-dir "$BUILD" -L cuda -E "$CTEST_EXCLUDE" --output-on-failure -V
else
  step ctest-cuda ctest --test-dir "$BUILD" -L cuda --output-on-failure -V
fi
# the cuBLAS and mma GEMMs against this GPU's tensor-core model (also in ctest-cuda)
step gemm-models "$BUILD/tgemm_gpu"
# cuBLASLt's summation trees revealed from the GPU (issue 32; treveal_gpu in ctest-cuda asserts them at K = 256):
# fp16 in, fp32 out, K = 4096, every position class with its tree and its bit-exact twin, as JSON
if has_cmd reveal; then
  step reveal-cublas "$LOWP" reveal --kernel gemm_cublas --params device=gpu --in fp16 --shape 64,32,4096 --json
else
  missing reveal-cublas "this lowp has no 'reveal' command"
fi

if has_cmd probe; then
  step probe "$LOWP" probe
  step probe-capture "$LOWP" probe --capture "$TMP/capture"
  # the captured rows (mma.sync; the folder is named after the preset of that instruction, Hopper's h100mma)
  # replayed through the models: every row bit for bit
  step replay-capture "$LOWP" run tensor-core-models --vectors="$TMP/capture" --czero= --out "$TMP/replay-capture"
  # fp8 rows of 1024 products: 32 chained mma instructions, each after the first adding the running sum as its
  # C (C != 0), which the vendored H100 fp8 rows (one instruction, C = 0) never show; the error-growth and
  # matmul-precision fp8 tensor-core numbers beyond k = 32 rest on the model there ("model extrapolation"),
  # and the replay says whether the model reproduces the GPU on them. fp8 tensor cores: compute capability 8.9+.
  if [ "${ARCH:-0}" -ge 89 ] 2>/dev/null; then
    step probe-capture-chained "$LOWP" probe --in e4m3,e5m2 --out fp32 --k 1024 --rows 200 --capture "$TMP/capture-chained"
    step replay-chained "$LOWP" run tensor-core-models --vectors="$TMP/capture-chained" --czero= --out "$TMP/replay-chained"
  else
    missing probe-capture-chained "no fp8 tensor cores (compute capability ${CC:-unknown} < 8.9)"
    missing replay-chained "no fp8 tensor cores (compute capability ${CC:-unknown} < 8.9)"
  fi
else
  missing probe "this lowp has no 'probe' command"
  missing probe-capture "this lowp has no 'probe' command"
  missing replay-capture "this lowp has no 'probe' command"
  missing probe-capture-chained "this lowp has no 'probe' command"
  missing replay-chained "this lowp has no 'probe' command"
fi

# every GPU registry entry on the GPU, held bit for bit to its CPU twin
cat >"$TMP/gpu-check.json" <<'EOF'
{ "lowp_check": 1,
  "comment": "written by tools/gpu.sh: GPU kernels (device=gpu) against their CPU twins (device=cpu)",
  "defaults": { "in": "fp32", "out": "fp32" },
  "checks": [
    { "name": "sum_tree_fp16", "op": "sum", "subject": { "kernel": "sum_tree", "params": "compute=fp16,device=gpu" },
      "shape": { "m": 8, "n": 5000 }, "rules": [ { "bitexact": { "kernel": "sum_tree", "params": "compute=fp16,device=cpu" } } ] },
    { "name": "softmax_naive_tree", "op": "softmax", "subject": { "kernel": "softmax_naive_tree", "params": "device=gpu" },
      "shape": { "m": 8, "n": 3000 }, "rules": [ { "bitexact": { "kernel": "softmax_naive_tree", "params": "device=cpu" } } ] },
    { "name": "softmax_stable_tree", "op": "softmax", "subject": { "kernel": "softmax_stable_tree", "params": "device=gpu" },
      "shape": { "m": 8, "n": 3000 }, "rules": [ { "bitexact": { "kernel": "softmax_stable_tree", "params": "device=cpu" } } ] },
    { "name": "layernorm_welford", "op": "layernorm", "subject": { "kernel": "layernorm_tree", "params": "variant=welford,device=gpu" },
      "shape": { "m": 8, "n": 3000 }, "rules": [ { "bitexact": { "kernel": "layernorm_tree", "params": "variant=welford,device=cpu" } } ] },
    { "name": "xent_tree", "op": "xent", "subject": { "kernel": "xent_tree", "params": "device=gpu" },
      "shape": { "m": 8, "n": 3000 }, "rules": [ { "bitexact": { "kernel": "xent_tree", "params": "device=cpu" } } ] },
    { "name": "gemm_mma_fp16", "op": "gemm", "in": "fp16", "subject": { "kernel": "gemm_mma", "params": "device=gpu" },
      "shape": { "m": 64, "n": 64, "k": 1024 }, "rules": [ { "bound": "model" }, { "bitexact": { "kernel": "gemm_mma", "params": "device=cpu" } } ] },
    { "name": "gemm_cublas_bf16", "op": "gemm", "in": "bf16", "subject": { "kernel": "gemm_cublas", "params": "device=gpu" },
      "shape": { "m": 64, "n": 64, "k": 1024 }, "rules": [ { "bound": "model" } ] },
    { "name": "gemm_cublas_fp16_revealed", "op": "gemm", "in": "fp16", "subject": { "kernel": "gemm_cublas", "params": "device=gpu" },
      "shape": { "m": 64, "n": 64, "k": 4096 }, "rules": [ { "bound": "gamma", "order": "revealed" }, { "vs_twin": true, "order": "revealed" } ] },
    { "name": "gemm_cublas_fp32_revealed", "op": "gemm", "in": "fp32", "subject": { "kernel": "gemm_cublas", "params": "device=gpu" },
      "shape": { "m": 64, "n": 64, "k": 1024 }, "rules": [ { "bound": "gamma", "order": "revealed" }, { "vs_twin": true, "order": "revealed" } ] }
  ] }
EOF
step check-gpu-kernels "$LOWP" check "$TMP/gpu-check.json"

if has_cmd run amp-speedup; then
  step amp-speedup "$LOWP" run amp-speedup --out "$TMP/amp-speedup"
else
  missing amp-speedup "this lowp has no experiment 'amp-speedup'"
fi
fi

# ------------------------------------------------------------------ index
{
  echo "# lowp on $GPU_NAME"
  echo
  echo "generated by tools/gpu.sh, do not edit"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| date (UTC) | $DATE |"
  echo "| GPU | $GPU_NAME (compute capability ${CC:-?}) |"
  echo "| all GPUs | $(echo "$GPUS" | sed 's/ (UUID[^)]*)//' | tr '\n' ';' | sed 's/;$//') |"
  echo "| driver | ${DRIVER:-?} |"
  echo "| CUDA (nvcc) | ${CUDA_VERSION:-?} |"
  echo "| lowp revision | $REV |"
  [ -z "$PREBUILT" ] || echo "| build | prebuilt elsewhere: $PREBUILT (CUDA architectures $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$PREBUILT/CMakeCache.txt" 2>/dev/null)) |"
  [ -z "$TIME_LIMIT" ] || echo "| time limit | $TIME_LIMIT s for every step together |"
  echo "| host | $(uname -srm) |"
  [ "$DRY" = 0 ] || echo "| mode | DRY RUN: every command stubbed, nothing built or measured |"
  echo
  echo "| step | command | exit status | time |"
  echo "|---|---|---|---|"
  printf '%s\n' "${STEPS[@]}"
  echo
  echo "Each step's output is in STEP.txt."
  # amp-speedup's GPU measurement beside its prediction (the experiment sets
  # the cuBLAS timings against the roofline of this GPU's datasheet row)
  if [ -f "$TMP/amp-speedup/summary.md" ]; then
    echo
    echo "## amp-speedup: measured on this GPU against the prediction"
    echo
    grep -h '^\*\*Measured (GPU)\.\*\*\|^\*\*GPU\.\*\*' "$TMP/amp-speedup/summary.md" || echo "(no GPU measurement in amp-speedup/summary.md)"
    echo
    echo "Per kernel: amp-speedup/gpu_kernels.csv; numbers: amp-speedup/timing.json (\"gpu\")."
  fi
} >"$TMP/index.md"
echo "tools/gpu.sh" >"$TMP/.gpu-report"

# ------------------------------------------------------------ publish
if [ -e "$OUT" ]; then
  mv "$OUT" "$OUT.old.$$" && mv "$TMP" "$OUT" && rm -rf "$OUT.old.$$"
else
  mv "$TMP" "$OUT"
fi
trap - INT TERM
echo "gpu.sh: report in $OUT ($( [ $FAILED -eq 0 ] && echo "every step passed" || echo "a step FAILED: see index.md"))"
exit $FAILED
