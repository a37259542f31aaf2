/* treveal_gpu -- cuBLASLt's summation trees revealed on the GPU (lowp_reveal on gemm_cublas, device=gpu) */

/*
 * Label cuda: skips (exit 77) without a CUDA build or a device. For every
 * cuBLASLt variant of kernels/cuda/gemm_cublas.cu the device has (fp32,
 * tf32, fp16 with fp32 and fp16 accumulation, bf16, e4m3): lowp_reveal on
 * the registry entry gemm_cublas (device=gpu) at M x N = 64 x 32 and K =
 * 256 (e4m3: K = 32, what its range lets the probes absorb). Asserted: the
 * subject is deterministic, every position class gets a tree whose twin
 * reproduces cuBLASLt bit for bit on the validation outputs, and the
 * algorithm is pinned (cuBLASLt's heuristic, without split-K, gives the
 * same algorithm for a single call as for the revelation's batched calls:
 * lowp_gemm_cublas_algo before and after). Reported, not asserted (no GPU
 * has confirmed it yet: docs/gpu.md): whether the revealed tree has the
 * shape of the tensor-core model's tree (model/tree.h lowp_tree_from_tc of
 * the device's preset), and the arithmetic found. tools/gpu.sh runs this
 * test and saves `lowp reveal --kernel gemm_cublas` files when a GPU is lent.
 * Run: ctest --test-dir build -L cuda -R treveal_gpu --output-on-failure
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/reveal.h"
#include "check/subject.h"
#include "common/cvt.h"
#include "cpu/gemm_tc.h"
#include "gpu/gemm_gpu.h"
#include "gpu/gpu_kernels.h"
#include "model/tree.h"
#include "status.h"
#include "testutil.h"

static void problem(lowp_problem_t *p, size_t m, size_t n, size_t k, const lowp_format_t *in,
                    const lowp_format_t *out) {
  memset(p, 0, sizeof *p);
  lowp_problem_init(p, lowp_op_by_name("gemm"));
  p->dims.batch = 1;
  p->dims.m = m;
  p->dims.n = n;
  p->dims.k = k;
  p->in[0] = *in;
  p->in[1] = *in;
  p->out = *out;
}

/* the shape of the tensor-core model's tree for the variant, compared with class 0's */
static void vs_model(const lowp_reveal_t *r, const char *preset, const lowp_format_t *in,
                     const lowp_format_t *out, size_t k) {
  lowp_kcfg_t kc;
  lowp_gemm_tc_cfg_t tc;
  lowp_tree_t t;
  char err[300];
  size_t where = 0, c;
  memset(&kc, 0, sizeof kc);
  snprintf(kc.model, sizeof kc.model, "%s", preset);
  kc.promote = -1;
  if (lowp_gpu_gemm_model(&tc, "gemm_cublas", &kc, in, out, err, sizeof err) != LOWP_OK ||
      lowp_tree_from_tc(&t, k, &tc.model, in, out) != LOWP_OK) {
    printf("    no tensor-core model tree to compare (%s)\n", err);
    return;
  }
  for (c = 0; c < r->n_classes; c++)
    if (r->classes[c].has_tree)
      printf("    class %zu vs the %s model's tree: %s (UNVALIDATED model: reported, not asserted)\n", c, preset,
             lowp_tree_same(&r->classes[c].tree, &t, 1, &where) ? "same shape" : "differs");
  lowp_tree_free(&t);
}

int main(void) {
  char preset[32], name[256];
  int major = 0, minor = 0, v;
  lowp_test_start("treveal_gpu");
  if (lowp_cuda_device_count() == 0) lowp_test_skip("no CUDA device (or a build without CUDA)");
  lowp_cuda_device_info(name, sizeof name, &major, &minor);
  lowp_gpu_preset(preset, sizeof preset);
  printf("device %s (sm_%d%d), tensor-core preset %s\n", name, major, minor, preset);
  for (v = 1; v <= LOWP_CUBLAS_VARIANTS; v++) {
    const lowp_format_t *in, *out;
    const char *vn;
    lowp_subject_t s;
    lowp_problem_t p;
    lowp_reveal_t r;
    lowp_reveal_opts_t o;
    char err[400] = "", algo0[300], algo1[300], params[64];
    size_t c, k;
    int st;
    lowp_gemm_cublas_info(v, &in, &out, &vn);
    if (v >= 6 && major * 10 + minor < 89) continue; /* e4m3 */
    k = in->precision <= 4 ? 32 : 256;
    problem(&p, 64, 32, k, in, out);
    snprintf(params, sizeof params, "device=gpu");
    st = lowp_kernel_subject_open(&s, v == 7 ? "gemm_cublas_fastacc" : "gemm_cublas", params, err, sizeof err);
    if (!st) st = lowp_kernel_subject_bind(&s, &p, err, sizeof err);
    if (!lowp_test_check(st == LOWP_OK, "%s: open: %s", vn, err)) continue;
    { /* one plain call: the algorithm cuBLASLt's heuristic gives this shape */
      double *a = calloc(64 * k, sizeof *a), *b = calloc(k * 32, sizeof *b), *d = calloc(64 * 32, sizeof *d);
      const double *inp[2];
      double *outp[1];
      inp[0] = a; inp[1] = b; outp[0] = d;
      st = a && b && d ? s.run(&s, outp, inp, &p, err, sizeof err) : LOWP_ENOMEM;
      free(a); free(b); free(d);
      lowp_gemm_cublas_algo(algo0, sizeof algo0);
    }
    if (st == LOWP_EUNSUPPORTED) { printf("  %s: not on this device (%s)\n", vn, err); lowp_subject_close(&s); continue; }
    memset(&o, 0, sizeof o);
    o.seed = lowp_test_seed();
    o.validate = 4000;
    st = lowp_reveal(&r, &s, &p, &o, err, sizeof err);
    lowp_gemm_cublas_algo(algo1, sizeof algo1);
    if (!lowp_test_check(st == LOWP_OK, "%s: reveal: %s (%s)", vn, lowp_status_str(st), err)) {
      lowp_subject_close(&s);
      continue;
    }
    printf("  %s 64x32x%zu: %s\n    algorithm: %s\n", vn, k, r.msg, algo1);
    lowp_test_check(!strcmp(algo0, algo1), "%s: the algorithm changed during the revelation (%s, then %s)", vn,
                    algo0, algo1);
    lowp_test_check(r.deterministic, "%s: nondeterministic (%s)", vn, r.msg);
    for (c = 0; c < r.n_classes; c++) {
      const lowp_reveal_class_t *cl = &r.classes[c];
      char buf[200];
      if (cl->has_tree) lowp_tree_str(buf, sizeof buf, &cl->tree);
      printf("    class %zu (%zu positions): %s; %s; %zu outputs bit-exact\n", c, cl->n_pos,
             cl->has_tree ? buf : cl->note, cl->has_tree ? cl->arith : "-", cl->validated);
      lowp_test_check(cl->has_tree && cl->mismatched == 0, "%s class %zu: no validated tree: %s", vn, c, cl->note);
    }
    vs_model(&r, preset, in, out, k);
    lowp_reveal_free(&r);
    lowp_subject_close(&s);
  }
  return lowp_test_end();
}
