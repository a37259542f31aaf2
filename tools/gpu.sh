#!/usr/bin/env bash
# gpu.sh -- everything lowp measures on an NVIDIA GPU, in one report: reports/gpu/<gpu-name>/
#
# On a machine with an NVIDIA GPU (nvidia-smi -L lists one) it
#   1. builds lowp for that GPU (CMAKE_CUDA_ARCHITECTURES=native) in build-gpu/
#   2. runs the GPU tests (ctest -L cuda): the row kernels and the mma.sync
#      GEMMs against their CPU twins bit for bit, cuBLAS against the GPU's
#      tensor-core model, the cvt instructions, the exact GEMM on cuBLAS
#   3. lowp probe, and lowp probe --capture (tensor-core vectors of this GPU)
#   4. lowp check of every GPU registry entry against its CPU twin (bitexact)
#   5. lowp run amp-speedup
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
# Usage: bash tools/gpu.sh [--out DIR] [--jobs N] [--help]
#   --out DIR   the report folder (default reports/gpu/<gpu-name>)
#   --jobs N    build parallelism (default: the number of CPUs)
# Environment: LOWP_NVIDIA_SMI (default nvidia-smi) names the nvidia-smi to
# ask (the tests point it elsewhere to play a machine without a GPU).
# Exit status: 0 every step that exists passed (or no GPU); 1 a step failed;
# 2 bad usage.
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
SMI=${LOWP_NVIDIA_SMI:-nvidia-smi}
OUT=
JOBS=$(nproc 2>/dev/null || echo 2)

usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; }
die2() { echo "gpu.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --help | -h) usage; exit 0 ;;
    --out) [ $# -ge 2 ] || die2 "--out needs a folder"; OUT=$2; shift 2 ;;
    --out=*) OUT=${1#--out=}; shift ;;
    --jobs) [ $# -ge 2 ] || die2 "--jobs needs a number"; JOBS=$2; shift 2 ;;
    --jobs=*) JOBS=${1#--jobs=}; shift ;;
    *) die2 "unknown option '$1' (see tools/gpu.sh --help)" ;;
  esac
done
case $JOBS in '' | *[!0-9]* | 0) die2 "--jobs: expected a positive integer, not '$JOBS'" ;; esac
[ -z "$OUT" ] || case $OUT in */) OUT=${OUT%/} ;; esac

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
BUILD=$SRC/build-gpu
LOWP=$BUILD/lowp

# ------------------------------------------------------------------- steps
# step NAME CMD...: run, keep stdout+stderr in NAME.txt, record status and time
STEPS=()
FAILED=0
step() {
  local name=$1; shift
  local t0 t1 rc
  t0=$(date +%s)
  echo "== $name: $*" >&2
  { echo "\$ $*"; "$@"; } >"$TMP/$name.txt" 2>&1
  rc=$?
  t1=$(date +%s)
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
has_cmd() { "$LOWP" "$@" --help >/dev/null 2>&1; }

DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
REV=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)

step build-configure cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLOWP_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=native
step build cmake --build "$BUILD" -j "$JOBS"
if [ -x "$LOWP" ] && [ -x "$BUILD/tgemm_gpu" ]; then
step ctest-cuda ctest --test-dir "$BUILD" -L cuda --output-on-failure -V
# the cuBLAS and mma GEMMs against this GPU's tensor-core model (also in ctest-cuda)
step gemm-models "$BUILD/tgemm_gpu"

if has_cmd probe; then
  step probe "$LOWP" probe
  step probe-capture "$LOWP" probe --capture "$TMP/capture"
else
  missing probe "this lowp has no 'probe' command"
  missing probe-capture "this lowp has no 'probe' command"
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
      "shape": { "m": 64, "n": 64, "k": 1024 }, "rules": [ { "bound": "model" }, { "bitexact": { "kernel": "gemm_cublas", "params": "device=cpu" } } ] }
  ] }
EOF
step check-gpu-kernels "$LOWP" check "$TMP/gpu-check.json"

if has_cmd run amp-speedup; then
  step amp-speedup "$LOWP" run amp-speedup --out "$TMP/amp-speedup"
else
  missing amp-speedup "this lowp has no experiment 'amp-speedup'"
fi
else
  echo "gpu.sh: the build failed (see build.txt in the report); nothing else ran" >&2
  FAILED=1
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
  echo "| host | $(uname -srm) |"
  echo
  echo "| step | command | exit status | time |"
  echo "|---|---|---|---|"
  printf '%s\n' "${STEPS[@]}"
  echo
  echo "Each step's output is in STEP.txt."
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
