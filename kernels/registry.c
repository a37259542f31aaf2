/* lowp_registry -- the kernels lowp can measure: name -> operation, parameters, CPU kernel, GPU kernel */

#include "registry.h"

#include <string.h>

#include "cpu/allreduce_kernel.h"
#include "cpu/elementwise.h"
#include "cpu/gemm_blas.h"
#include "cpu/gemm_acc.h"
#include "cpu/gemm_lanes.h"
#include "cpu/gemm_tc.h"
#include "cpu/norm_kernel.h"
#include "cpu/reduce.h"
#include "cpu/softmax_kernel.h"
#include "gpu/gpu_kernels.h"

#ifdef LOWP_HAVE_CUDA
#define CAST_GPU 1 /* kernels/cuda/cvt.cu */
#else
#define CAST_GPU 0
#endif

/* entries with a kernel in kernels/cuda (kernels/gpu/gpu_kernels.h): built with CUDA */
#define GPU_BUILT CAST_GPU

#define ACC_KEYS "acc,order,round,prod"
#define ACC_DEF "acc=fp32,order=recursive,round=rne,prod=exact"

static const lowp_kernel_t table[] = {
    {"cast", LOWP_OP_CAST, "round", "round=rne",
     "round each value to the output format in a mode (lib/format)", lowp_kernel_cast, NULL, CAST_GPU},
    {"sum_acc", LOWP_OP_SUM, "acc,order,round", "acc=fp32,order=recursive,round=rne",
     "each row summed in acc in an order (recursive pairwise blocked:B splitk:S kahan)",
     lowp_kernel_sum_acc, NULL, 0},
    {"allreduce", LOWP_OP_SUM, "comm,acc,order", "comm=fp32,acc=fp32,order=ring",
     "each row = one gradient element on W workers: cast to comm, summed in acc, order ring "
     "(NCCL reduce-scatter) or tree (lib/amp/allreduce.h)",
     lowp_kernel_allreduce, NULL, 0},
    {"dot_acc", LOWP_OP_DOT, ACC_KEYS, ACC_DEF,
     "dot product accumulated in acc in an order; products exact (FMA) or rounded",
     lowp_kernel_dot_acc, NULL, 0},
    {"gemv_acc", LOWP_OP_GEMV, ACC_KEYS, ACC_DEF, "y = A x, one accumulated dot per row",
     lowp_kernel_gemv_acc, NULL, 0},
    {"gemm_acc", LOWP_OP_GEMM, ACC_KEYS, ACC_DEF,
     "C = A B (batched), one accumulated dot per output element", lowp_kernel_gemm_acc,
     lowp_gemm_acc_ref, 0},
    {"gemm_tc", LOWP_OP_GEMM, "model,promote", "model=h100",
     "C = A B (batched) on a tensor-core block-FMA model (lib/model/tc.h)", lowp_kernel_gemm_tc,
     lowp_gemm_tc_ref, 0},
    {"gemm_sgemm", LOWP_OP_GEMM, "threads", "threads=1",
     "C = A B (batched) by OpenBLAS cblas_sgemm, fp32, threads=N (its own blocked order)",
     lowp_kernel_gemm_sgemm, NULL, 0},
    {"gemm_dgemm", LOWP_OP_GEMM, "threads", "threads=1",
     "C = A B (batched) by OpenBLAS cblas_dgemm, fp64, threads=N (its own blocked order)",
     lowp_kernel_gemm_dgemm, NULL, 0},
    {"gemm_lanes", LOWP_OP_GEMM, "acc,lanes", "acc=fp32,lanes=32",
     "C = A B (batched), a SIMD dot product: lanes= FMA chains over every L-th product, then a "
     "halving tree, each addition in acc (issue 32's kernel; acc=fp16 its planted bug)",
     lowp_kernel_gemm_lanes, NULL, 0},
    {"softmax_naive", LOWP_OP_SOFTMAX, "compute,exp,acc", "compute=fp32,exp=libm,acc=compute",
     "softmax without max subtraction, every operation in compute (exp: libm or cr), the sum in acc",
     lowp_kernel_softmax_naive, NULL, 0},
    {"softmax_stable", LOWP_OP_SOFTMAX, "compute,exp,acc", "compute=fp32,exp=libm,acc=compute",
     "softmax with max subtraction, every operation in compute (exp: libm or cr), the sum in acc",
     lowp_kernel_softmax_stable, NULL, 0},
    {"logsoftmax", LOWP_OP_LOGSOFTMAX, "compute,acc", "compute=fp32,acc=compute",
     "x - max - log(sum exp(x - max)), in compute, the sum in acc", lowp_kernel_logsoftmax,
     NULL, 0},
    {"logsumexp", LOWP_OP_LOGSUMEXP, "compute,acc", "compute=fp32,acc=compute",
     "max + log(sum exp(x - max)), in compute, the sum in acc", lowp_kernel_logsumexp, NULL, 0},
    {"layernorm", LOWP_OP_LAYERNORM, "compute,variant,scale,clamp,acc",
     "compute=fp32,variant=twopass,scale=div,clamp=on,acc=compute",
     "layer norm (variant onepass | twopass | welford; scale div | rsqrt; clamp on | off), "
     "statistics in acc, normalisation in compute",
     lowp_kernel_layernorm, NULL, 0},
    {"rmsnorm", LOWP_OP_RMSNORM, "compute,acc", "compute=fp32,acc=compute",
     "RMS norm, the mean square in acc, the normalisation in compute", lowp_kernel_rmsnorm,
     NULL, 0},
    {"xent", LOWP_OP_XENT, "compute,acc", "compute=fp32,acc=compute",
     "cross-entropy logsumexp(row) - row[target], per row or the mean, in compute, sums in acc",
     lowp_kernel_xent, NULL, 0},
    {"exp", LOWP_OP_EXP, "compute", "compute=fp32", "libm exp, rounded to compute",
     lowp_kernel_exp, NULL, 0},
    {"log", LOWP_OP_LOG, "compute", "compute=fp32", "libm log, rounded to compute",
     lowp_kernel_log, NULL, 0},
    {"tanh", LOWP_OP_TANH, "compute", "compute=fp32", "libm tanh, rounded to compute",
     lowp_kernel_tanh, NULL, 0},
    {"gelu", LOWP_OP_GELU, "compute", "compute=fp32", "GELU, erf form, rounded to compute",
     lowp_kernel_gelu, NULL, 0},
    {"gelu_tanh", LOWP_OP_GELU, "compute", "compute=fp32",
     "GELU, tanh approximation (Hendrycks & Gimpel 2016), rounded to compute",
     lowp_kernel_gelu_tanh, NULL, 0},
    /* GPU kernels and their CPU twins (kernels/gpu/gpu_kernels.h; device=auto|cpu|gpu) */
    {"sum_tree", LOWP_OP_SUM, "compute,device", "compute=fp32,device=auto",
     "each row summed in compute in the GPU's warp-shuffle tree (kernels/common/karith.h)",
     lowp_kernel_sum_tree, NULL, GPU_BUILT},
    {"softmax_naive_tree", LOWP_OP_SOFTMAX, "device", "device=auto",
     "softmax without max subtraction, fp32, the GPU's tree (kernels/common/karith.h)",
     lowp_kernel_softmax_naive_tree, NULL, GPU_BUILT},
    {"softmax_stable_tree", LOWP_OP_SOFTMAX, "device", "device=auto",
     "softmax with max subtraction, fp32, the GPU's tree (kernels/common/karith.h)",
     lowp_kernel_softmax_stable_tree, NULL, GPU_BUILT},
    {"layernorm_tree", LOWP_OP_LAYERNORM, "variant,device", "variant=twopass,device=auto",
     "layer norm (onepass | twopass | welford), fp32, the GPU's tree (kernels/common/karith.h)",
     lowp_kernel_layernorm_tree, NULL, GPU_BUILT},
    {"xent_tree", LOWP_OP_XENT, "device", "device=auto",
     "cross-entropy log(sum exp(x - max)) - (x[t] - max), fp32, the GPU's tree",
     lowp_kernel_xent_tree, NULL, GPU_BUILT},
    {"gemm_cublas", LOWP_OP_GEMM, "model,promote,device", "model=auto,device=auto",
     "cuBLASLt GEMM (tf32, fp16, fp16 acc16, bf16, e4m3); twin: the GPU's tensor-core model",
     lowp_kernel_gemm_cublas, NULL, GPU_BUILT},
    {"gemm_cublas_fastacc", LOWP_OP_GEMM, "model,promote,device", "model=auto,device=auto",
     "cuBLASLt e4m3 GEMM with CUBLASLT_MATMUL_DESC_FAST_ACCUM; twin: the tensor-core model",
     lowp_kernel_gemm_cublas_fastacc, NULL, GPU_BUILT},
    {"gemm_mma", LOWP_OP_GEMM, "model,device", "model=auto,device=auto",
     "lowp's mma.sync GEMM (fp16, bf16, tf32, e4m3, e5m2), k in order; twin: gemm_tc, promote=0",
     lowp_kernel_gemm_mma, NULL, GPU_BUILT},
    {NULL, LOWP_OP_CAST, NULL, NULL, NULL, NULL, NULL, 0} /* sentinel */
};

const lowp_kernel_t *lowp_kernel_at(size_t i) {
  size_t n = sizeof table / sizeof table[0] - 1;
  return i < n ? &table[i] : NULL;
}

const lowp_kernel_t *lowp_kernel_find(const char *name) {
  size_t i;
  if (!name) return NULL;
  for (i = 0; table[i].name; i++)
    if (!strcmp(table[i].name, name)) return &table[i];
  return NULL;
}
