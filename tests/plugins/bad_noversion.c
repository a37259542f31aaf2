/* bad_noversion -- a test plugin without the ABI version symbol */
#include "lowp_plugin.h"
static int k(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) { (void)o; (void)i; (void)d; return 0; }
static const lowp_plugin_kernel_t table[] = {{"k", "gemm", {"fp16", "fp16"}, "fp32", k}};
LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count) { *count = 1; return table; }
