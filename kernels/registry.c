/* lowp_registry -- the kernels lowp can measure: name -> CPU twin, GPU kernel */

#include "registry.h"

#include <string.h>

#include "cpu/gemm_acc.h"
#include "cpu/gemm_tc.h"

/* Filled as kernels land; unfilled GPU slots fall back to the CPU twin. */
static const lowp_kernel_t table[] = {
    {"gemm_acc", lowp_gemm_acc_ref, NULL,
     "GEMM accumulating in a lowp format, recursive order (cfg: lowp_gemm_acc_cfg_t, kernels/cpu/gemm_acc.h)"},
    {"gemm_tc", lowp_gemm_tc_ref, NULL,
     "GEMM on a tensor-core block-FMA model (cfg: lowp_gemm_tc_cfg_t, kernels/cpu/gemm_tc.h)"},
    {NULL, NULL, NULL, NULL} /* sentinel */
};

const lowp_kernel_t *lowp_kernel_at(size_t i) {
  size_t n = sizeof table / sizeof table[0] - 1;
  return i < n ? &table[i] : NULL;
}

const lowp_kernel_t *lowp_kernel_find(const char *name) {
  size_t i;
  for (i = 0; table[i].name; i++)
    if (!strcmp(table[i].name, name)) return &table[i];
  return NULL;
}
