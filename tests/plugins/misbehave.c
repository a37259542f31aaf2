/* misbehave -- a test plugin whose kernels crash, abort, exit, hang or fail */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "lowp_plugin.h"

static int segv(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  raise(SIGSEGV);
  return 0;
}
static int abrt(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  abort();
}
static int quit(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  exit(3);
}
static int hang(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  for (;;) pause();
  return 0;
}
static int fail(void *const *o, const void *const *i, const lowp_plugin_dims_t *d) {
  (void)o; (void)i; (void)d;
  return 5;
}

LOWP_PLUGIN_EXPORT const uint32_t lowp_plugin_abi_version = LOWP_PLUGIN_ABI_VERSION;
static const lowp_plugin_kernel_t table[] = {
    {"segv", "gemm", {"fp16", "fp16"}, "fp32", segv}, {"abrt", "gemm", {"fp16", "fp16"}, "fp32", abrt},
    {"quit", "gemm", {"fp16", "fp16"}, "fp32", quit}, {"hang", "gemm", {"fp16", "fp16"}, "fp32", hang},
    {"fail", "gemm", {"fp16", "fp16"}, "fp32", fail}};
LOWP_PLUGIN_EXPORT const lowp_plugin_kernel_t *lowp_plugin_kernels(size_t *count) {
  *count = sizeof table / sizeof table[0];
  return table;
}
