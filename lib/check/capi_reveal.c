/* lowp_capi_reveal -- the flat C API of revelation and twins, for the Python binding (a callable probed through a callback) */

/*
 * Python's lowp.reveal(fn, ...) hands lowp a C function pointer (a ctypes
 * CFUNCTYPE wrapping the user's callable): lowp's subject calls it with
 * binary64 arrays (its own probes: the FPRev +M/-M/units rows, conversion
 * and precision probes, random validation inputs), the binding converts them
 * to the callable's dtypes, calls it, and writes its outputs back as
 * binary64. Everything else is lowp_reveal's (lib/check/reveal.h), so a
 * Python kernel is revealed exactly as a plugin is.
 */

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/capi.h"
#include "check/plugin.h"
#include "check/reveal.h"
#include "check/spec.h"
#include "status.h"
#include "io/escape.h"

#define ITEM(o, key) cJSON_GetObjectItemCaseSensitive(o, key)

typedef struct {
  lowp_capi_fn fn;
  void *ctx;
} cb_t;

static int cb_run(const lowp_subject_t *s, double *const *out, const double *const *in, const lowp_problem_t *p,
                  char *err, size_t errlen) {
  const cb_t *c = s->ctx;
  size_t dims[4] = {p->dims.batch, p->dims.m, p->dims.n, p->dims.k};
  if (c->fn(c->ctx, out, in, dims) == 0) return LOWP_OK;
  lowp_errf(err, errlen, 0, "the kernel (a callback) failed");
  return LOWP_EIO;
}

/* the problem of desc (sum, dot, gemv, gemm only), with the reveal keys */
static int problem(cJSON **d, lowp_problem_t *p, const char *desc, char *err, size_t errlen) {
  static const char *const keys[] = {"shapes", "seed", "validate", "max_elems", NULL};
  lowp_spec_check_t ck;
  int st = lowp__capi_desc(d, &ck, p, desc, 0, keys, err, errlen), i, conv = 0;
  for (i = 0; i < LOWP_OP_MAXIO; i++) conv |= ck.has_conv[i];
  lowp_spec_check_free(&ck);
  if (st) return st;
  if (conv) {
    lowp_errf(err, errlen, 0, "\"convert\": revelation finds conversions itself");
    return LOWP_EINVAL;
  }
  if (p->op->kind != LOWP_OPKIND_SUMPROD) {
    lowp_errf(err, errlen, 0, "reveal: %s is not a sum of products (sum, dot, gemv, gemm)", p->op->name);
    return LOWP_EUNSUPPORTED;
  }
  return LOWP_OK;
}

/* a count key: an integer in [lo, hi], or absent (*v unchanged) */
static int count_key(size_t *v, const cJSON *d, const char *key, double lo, double hi, char *err, size_t errlen) {
  const cJSON *j = ITEM(d, key);
  if (!j) return LOWP_OK;
  if (!cJSON_IsNumber(j) || j->valuedouble < lo || j->valuedouble > hi ||
      j->valuedouble != (double)(size_t)j->valuedouble) {
    lowp_errf(err, errlen, 0, "\"%s\" must be an integer in [%.0f, %.0f]", key, lo, hi);
    return LOWP_EINVAL;
  }
  *v = (size_t)j->valuedouble;
  return LOWP_OK;
}

/* the subject a reveal call probes: a callback, or a plugin kernel */
typedef struct {
  cb_t cb;
  const char *path, *kernel; /* a plugin when path */
} src_t;

static int open_subject(lowp_subject_t *s, const src_t *src, const lowp_problem_t *p, char *err, size_t errlen) {
  memset(s, 0, sizeof *s);
  if (src->path) return lowp_plugin_subject_open_ex(s, src->path, src->kernel, 0, p, err, errlen);
  snprintf(s->name, sizeof s->name, "python callable");
  s->kind = "callable";
  s->run = cb_run;
  s->ctx = (void *)&src->cb;
  return LOWP_OK;
}

static int reveal_src(char **json, const char *desc, const src_t *src, char *err, size_t errlen) {
  cJSON *d = NULL;
  lowp_problem_t p;
  lowp_subject_t s;
  lowp_reveal_opts_t o;
  lowp_reveal_t r;
  size_t seed = 1;
  int st;
  if (err && errlen) err[0] = '\0';
  if (!json || !desc) return LOWP_EINVAL;
  *json = NULL;
  memset(&o, 0, sizeof o);
  o.max_elems = (size_t)1 << 22;
  st = problem(&d, &p, desc, err, errlen);
  if (!st) st = count_key(&seed, d, "seed", 0, 9007199254740992.0, err, errlen);
  if (!st) st = count_key(&o.validate, d, "validate", 1, 1e9, err, errlen);
  if (!st) st = count_key(&o.max_elems, d, "max_elems", 1024, 1e12, err, errlen);
  cJSON_Delete(d);
  if (st) return st;
  o.seed = seed;
  p.dims.batch = 1;
  if ((st = open_subject(&s, src, &p, err, errlen))) return st;
  st = lowp_reveal(&r, &s, &p, &o, err, errlen);
  if (!st) {
    st = lowp_reveal_to_json(json, &r, &p);
    lowp_reveal_free(&r);
  }
  if (src->path) lowp_subject_close(&s);
  return st;
}

int lowp_capi_reveal(char **json, const char *desc, lowp_capi_fn fn, void *ctx, char *err, size_t errlen) {
  src_t src;
  if (!fn) return LOWP_EINVAL;
  memset(&src, 0, sizeof src);
  src.cb.fn = fn;
  src.cb.ctx = ctx;
  return reveal_src(json, desc, &src, err, errlen);
}

int lowp_capi_reveal_plugin(char **json, const char *desc, const char *path, const char *kernel, char *err,
                            size_t errlen) {
  src_t src;
  if (!path || !path[0]) {
    lowp_errf(err, errlen, 0, "a plugin library path is needed");
    return LOWP_EINVAL;
  }
  memset(&src, 0, sizeof src);
  src.path = path;
  src.kernel = kernel && kernel[0] ? kernel : NULL;
  return reveal_src(json, desc, &src, err, errlen);
}

int lowp_capi_twin(double *out, size_t count, const char *reveal_json, const char *desc,
                   const double *const *in, char *err, size_t errlen) {
  cJSON *d = NULL;
  lowp_problem_t p;
  lowp_reveal_t r;
  size_t shape[LOWP_OP_MAXDIM], c, k;
  int nd, st;
  if (err && errlen) err[0] = '\0';
  if (!out || !reveal_json || !desc || !in) return LOWP_EINVAL;
  st = problem(&d, &p, desc, err, errlen);
  cJSON_Delete(d);
  if (st) return st;
  if ((st = lowp_op_shape(&p, p.op->n_in, shape, &nd, &c))) return st;
  if (c != count) {
    lowp_errf(err, errlen, 0, "the output holds %zu values, the problem %zu", count, c);
    return LOWP_ESHAPE;
  }
  for (k = 0; k < (size_t)p.op->n_in; k++)
    if (!in[k]) {
      lowp_errf(err, errlen, 0, "input %s is missing", p.op->in_names[k]);
      return LOWP_EINVAL;
    }
  if ((st = lowp_reveal_from_json(&r, reveal_json, err, errlen))) return st;
  st = lowp_reveal_twin(out, &r, in, &p);
  if (st == LOWP_EINVAL && err && errlen)
    lowp_errf(err, errlen, 0, "the twin does not fit: revealed for K = %zu and %zu x %zu outputs per batch entry%s", r.K,
              r.rows, r.cols, r.deterministic ? " (every class needs a tree)" : ", nondeterministic: no tree");
  lowp_reveal_free(&r);
  return st;
}
