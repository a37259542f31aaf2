#!/usr/bin/env bash
# run-next.sh -- prepared for the second lent-GPU call of 2026-11-30 and NOT run (no machine was lent again): the fixes after run 1 (docs/gpu.md "Left to confirm")
# Carried with the checkout: .gpucarry/pack.tar.xz holds build-gpu/ (lowp, tsass, the cuda-label tests,
# built here for sm_90: cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DLOWP_CUDA=ON
# -DCMAKE_CUDA_ARCHITECTURES=90 -DLOWP_MPI=OFF) and gpu-deps/usr/lib (MPFR, GMP, cJSON, OpenBLAS and
# theirs from Debian 12). Results go to /tmp/res, packed into $OUT/res.tgz after every phase.
set -u
T0=$(date +%s)
LIMIT=${1:-500}
R=$(pwd)
RES=/tmp/res
mkdir -p "$RES"
pack() { tar czf "$OUT/res.tgz" -C "$RES" . 2>/dev/null; }
left() { echo $((LIMIT - ($(date +%s) - T0))); }
tar xJf .gpucarry/pack.tar.xz || { echo "cannot unpack"; exit 1; }
# the build names /work/main (its tests' source and build folders): the copy here answers to it
if [ "$R" != /work/main ]; then
  if [ -e /work/main ]; then echo "/work/main exists and is not this copy ($R)"; else mkdir -p /work && ln -s "$R" /work/main; fi
fi
cd /work/main || exit 1
export PATH=/usr/local/cuda/bin:$PATH
T3=x86_64-linux-gnu
export LD_LIBRARY_PATH=/work/main/gpu-deps/usr/lib/$T3${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "copy at: $R"
  echo "lowp revision: $(cat .gpucarry/REV 2>/dev/null) (prebuilt build-gpu)"
  uname -a
  nvidia-smi
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm,memory.total --format=csv
  nvcc --version | tail -2
  echo "cuBLASLt candidates:"
  ls -la /usr/local/cuda/lib64/libcublasLt.so* 2>&1 | head -5
  find /usr/local /opt /usr/lib -name 'libcublasLt.so*' 2>/dev/null | head -5
  echo "ldd lowp:"
  ldd build-gpu/lowp | grep -v 'vdso\|ld-linux'
} >"$RES/env.txt" 2>&1
# cuBLASLt: the build's path, else its soname on the loader's path (add the one found)
if ! [ -e /usr/local/cuda/lib64/libcublasLt.so.13 ]; then
  d=$(find /usr/local /opt /usr/lib -name 'libcublasLt.so.13*' 2>/dev/null | head -1)
  [ -n "$d" ] && export LD_LIBRARY_PATH=$(dirname "$d"):$LD_LIBRARY_PATH && echo "cuBLASLt from $(dirname "$d")" >>"$RES/env.txt"
fi
build-gpu/lowp probe --device-info >"$RES/device-info.txt" 2>&1
echo "device-info exit $?" >>"$RES/device-info.txt"
pack

# 1. treveal_gpu: every cuBLASLt variant's trees at 64 x 32, K = 256, validated bit for bit
ts=$(date +%s)
timeout 150 build-gpu/treveal_gpu >"$RES/treveal_gpu.txt" 2>&1
echo "treveal_gpu exit $? in $(($(date +%s) - ts)) s" >>"$RES/treveal_gpu.txt"
pack

# 2. lowp reveal --save: fp32 (CUDA cores, K = 4096), and bf16 at 37 x 21 x 70 (the shape where
#    cuBLASLt's algorithm 24 differed from the tensor-core model in the first run)
for v in "fp32 fp32 64,32,4096" "bf16 fp32 37,21,70" "fp16 fp32 37,21,70" "fp32 fp32 37,21,70"; do
  set -- $v
  [ "$(left)" -gt 300 ] || break
  ts=$(date +%s)
  f=reveal-cublas-$1-$2-$(echo "$3" | tr , x)
  timeout 60 build-gpu/lowp reveal --kernel gemm_cublas --params device=gpu --in "$1" --out "$2" \
    --shape "$3" --save "$RES/$f.json" >"$RES/$f.txt" 2>&1
  echo "exit $? in $(($(date +%s) - ts)) s" >>"$RES/$f.txt"
  pack
done

# 3. tools/gpu.sh with what is left (it publishes its report even when the time runs out)
L=$(($(left) - 15))
if [ "$L" -gt 30 ]; then
  LOWP_DEPS=/work/main/gpu-deps bash tools/gpu.sh --prebuilt build-gpu --time-limit "$L" --out "$RES/report" \
    >"$RES/gpu-sh.txt" 2>&1
  echo "gpu.sh exit $?" >>"$RES/gpu-sh.txt"
fi
echo "total $(($(date +%s) - T0)) s" >>"$RES/env.txt"
pack
