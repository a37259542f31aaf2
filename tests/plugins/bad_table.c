/* bad_table -- a test plugin whose table names an operation lowp does not know */
#include "lowp_plugin.h"
static int k(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) { (void)o; (void)i; (void)d; return 0; }
LOWP_PLUGIN_EXPORT const uint32_t lowp_plugin_abi_version = LOWP_PLUGIN_ABI_VERSION;
static const lowp_plugin_kernel_t table[] = {{"k", "gemm", {"fp16", "fp16"}, "fp32", k},
                                             {"m", "matmul", {"fp16", "fp16"}, "fp32", k}};
LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count) { *count = 2; return table; }
