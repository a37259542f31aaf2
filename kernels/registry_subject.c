/* lowp_kernel_subject -- a registry kernel and its parameters as a measurement-pipeline subject */

/*
 * Parameters: "key=value,..." (lib/check/subject.h). Keys (each at most
 * once, only those the kernel's entry lists; kernels/cpu/kcfg.h says what
 * each means):
 *   acc=FORMAT  order=recursive|pairwise|blocked:B|splitk:S|kahan|fma
 *   round=MODE  prod=exact|acc|FORMAT  compute=FORMAT
 *   variant=onepass|twopass|welford  model=SPEC  promote=N|off
 *   exp=libm|cr (softmax_naive, softmax_stable: the exp model)
 *   acc=FORMAT|compute (softmax_naive, softmax_stable, layernorm: the format
 *   their reductions accumulate in; default compute, the compute format)
 *   comm=FORMAT and order=ring|tree (allreduce: lib/amp/allreduce.h)
 *   scale=div|rsqrt (layernorm: divide by the standard deviation, or
 *   multiply by its reciprocal), clamp=on|off (layernorm: the one-pass
 *   variance clamped at 0, or the formula's own value)
 *   threads=N (gemm_sgemm, gemm_dgemm: OpenBLAS's thread count, default 1)
 *   lanes=L (gemm_lanes: SIMD lanes, a power of two up to 1024, default 32)
 *   device=auto|cpu|gpu (entries with a GPU kernel: kernels/gpu/gpu_kernels.h;
 *   their model=auto, the default, is the GPU's own preset)
 * A format or model spec that itself holds commas is written with ';'
 * ("acc=p=11;emin=-14;emax=15", "model=b=16;F=25;align=rtz"); model's value
 * also runs on over following items that are not kernel keys, so
 * "model=b=16,F=25,align=rtz" reads as one model spec.
 */

#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r */

#include "check/subject.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm_tc.h"
#include "cpu/kcfg.h"
#include "format/number.h"
#include "gpu/gemm_gpu.h"
#include "gpu/gpu_kernels.h"
#include "registry.h"
#include "status.h"
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

typedef struct {
  const lowp_kernel_t *k;
  lowp_kcfg_t cfg;
} kctx_t;

static const char *const all_keys[] = {"acc", "order", "round", "prod", "compute",
                                       "variant", "model", "promote", "device", "exp",
                                       "comm", "scale", "clamp", "threads", "lanes"};
#define NKEYS (sizeof all_keys / sizeof all_keys[0])

static int key_index(const char *key, size_t len) {
  size_t i;
  for (i = 0; i < NKEYS; i++)
    if (strlen(all_keys[i]) == len && !strncmp(all_keys[i], key, len)) return (int)i;
  return -1;
}

/* key listed in the entry's comma-separated keys? */
static int entry_takes(const lowp_kernel_t *k, const char *key) {
  const char *s = k->keys;
  size_t n = strlen(key);
  while (*s) {
    const char *e = strchr(s, ',');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (l == n && !strncmp(s, key, n)) return 1;
    if (!e) break;
    s = e + 1;
  }
  return 0;
}

/* a copy of v with ';' as ',' (specs that hold commas) */
static void semis(char *dst, size_t len, const char *v) {
  size_t i;
  for (i = 0; v[i] && i + 1 < len; i++) dst[i] = v[i] == ';' ? ',' : v[i];
  dst[i] = '\0';
}

static int set_err(char *err, size_t errlen, int st, const char *fmt, const char *a,
                   const char *b) {
  lowp_errf(err, errlen, 0, fmt, a, b);
  return st;
}

/* exp=libm|cr: the exp model of the softmax kernels */
static int apply_exp(lowp_kcfg_t *c, const char *val, char *err, size_t errlen) {
  if (!strcmp(val, "libm")) c->exp_cr = 0;
  else if (!strcmp(val, "cr")) c->exp_cr = 1;
  else return set_err(err, errlen, LOWP_EINVAL, "exp=%s: expected libm or cr%s", val, "");
  return LOWP_OK;
}

/* scale=div|rsqrt: how layernorm applies the standard deviation */
static int apply_scale(lowp_kcfg_t *c, const char *val, char *err, size_t errlen) {
  if (!strcmp(val, "div")) c->ln_rsqrt = 0;
  else if (!strcmp(val, "rsqrt")) c->ln_rsqrt = 1;
  else return set_err(err, errlen, LOWP_EINVAL, "scale=%s: expected div or rsqrt%s", val, "");
  return LOWP_OK;
}

/* clamp=on|off: layernorm's one-pass variance clamped at 0 or not */
static int apply_clamp(lowp_kcfg_t *c, const char *val, char *err, size_t errlen) {
  if (!strcmp(val, "on")) c->ln_raw = 0;
  else if (!strcmp(val, "off")) c->ln_raw = 1;
  else return set_err(err, errlen, LOWP_EINVAL, "clamp=%s: expected on or off%s", val, "");
  return LOWP_OK;
}

/* Apply one key=value to the configuration; values[] records the raw text
   of acc/order/round/prod (combined after all keys are read). */
static int apply(kctx_t *x, int key, const char *val, char *err, size_t errlen) {
  lowp_kcfg_t *c = &x->cfg;
  char buf[256], e2[200];
  switch (key) {
  case 4: /* compute */
    semis(buf, sizeof buf, val);
    if (lowp_format_parse(&c->compute, buf, e2, sizeof e2))
      return set_err(err, errlen, LOWP_EINVAL, "compute=%s: %s", val, e2);
    /* binary64 operations rounded to F are F's correctly rounded operations
       only for p <= 25 (kernels/cpu/kcfg.h), or F = fp64 itself */
    if (!(c->compute.precision <= 25 || !memcmp(&c->compute, &LOWP_FMT_FP64, sizeof c->compute)))
      return set_err(err, errlen, LOWP_EINVAL,
                     "compute=%s: a compute format needs at most 25 significand bits, or fp64%s",
                     val, "");
    return LOWP_OK;
  case 5: /* variant */
    if (!strcmp(val, "twopass")) c->variant = LOWP_LN_TWOPASS;
    else if (!strcmp(val, "onepass")) c->variant = LOWP_LN_ONEPASS;
    else if (!strcmp(val, "welford")) c->variant = LOWP_LN_WELFORD;
    else
      return set_err(err, errlen, LOWP_EINVAL,
                     "variant=%s: expected onepass, twopass or welford%s", val, "");
    return LOWP_OK;
  case 6: /* model */
    semis(c->model, sizeof c->model, val);
    if (strlen(val) >= sizeof c->model)
      return set_err(err, errlen, LOWP_EINVAL, "model=%.40s...: too long%s", val, "");
    return LOWP_OK;
  case 7: /* promote */
    if (!strcmp(val, "off")) c->promote = 0;
    else {
      long long v;
      if (lowp_parse_int(&v, val, 1, 1LL << 30))
        return set_err(err, errlen, LOWP_EINVAL,
                       "promote=%s: expected off or a count of products in [1, 2^30]%s", val, "");
      c->promote = (long)v;
    }
    return LOWP_OK;
  case 8: /* device */
    if (!strcmp(val, "auto")) c->device = LOWP_DEVICE_AUTO;
    else if (!strcmp(val, "cpu")) c->device = LOWP_DEVICE_CPU;
    else if (!strcmp(val, "gpu")) c->device = LOWP_DEVICE_GPU;
    else
      return set_err(err, errlen, LOWP_EINVAL, "device=%s: expected auto, cpu or gpu%s", val, "");
    return LOWP_OK;
  case 9: /* exp */
    return apply_exp(c, val, err, errlen);
  case 10: /* comm */
    semis(buf, sizeof buf, val);
    if (lowp_format_parse(&c->comm, buf, e2, sizeof e2))
      return set_err(err, errlen, LOWP_EINVAL, "comm=%s: %s", val, e2);
    return LOWP_OK;
  case 11: /* scale */
    return apply_scale(c, val, err, errlen);
  case 12: /* clamp */
    return apply_clamp(c, val, err, errlen);
  case 13: /* threads (OpenBLAS entries) */
    {
      long long v;
      if (lowp_parse_int(&v, val, 1, 64))
        return set_err(err, errlen, LOWP_EINVAL, "threads=%s: expected a thread count in [1, 64]%s", val, "");
      c->threads = (int)v;
    }
    return LOWP_OK;
  case 14: /* lanes (gemm_lanes) */
    {
      long long v;
      if (lowp_parse_int(&v, val, 1, 1024) || (v & (v - 1)))
        return set_err(err, errlen, LOWP_EINVAL, "lanes=%s: expected a power of two in [1, 1024]%s", val, "");
      c->lanes = (int)v;
    }
    return LOWP_OK;
  default:
    return LOWP_OK; /* acc, order, round, prod: combined in finish() */
  }
}

/* allreduce: acc= a format, order= ring or tree (its own orders, not lowp_accum's) */
static int finish_allreduce(lowp_kcfg_t *c, const char *acc, const char *order, char *err,
                            size_t errlen) {
  char buf[256], e2[200];
  c->acc.acc = LOWP_FMT_FP32;
  if (acc) {
    semis(buf, sizeof buf, acc);
    if (lowp_format_parse(&c->acc.acc, buf, e2, sizeof e2))
      return set_err(err, errlen, LOWP_EINVAL, "acc=%s: %s", acc, e2);
  }
  if (!order || !strcmp(order, "ring")) c->reduce = 0;
  else if (!strcmp(order, "tree")) c->reduce = 1;
  else return set_err(err, errlen, LOWP_EINVAL, "order=%s: expected ring or tree%s", order, "");
  return LOWP_OK;
}

/* softmax, layernorm: acc=FORMAT, the format their reductions accumulate in
   (acc=compute, the default: the compute format). At most 25 bits unless it is compute
   itself: kernels/cpu/kcfg.h says why. */
static int finish_racc(lowp_kcfg_t *c, const char *acc, char *err, size_t errlen) {
  char buf[256], e2[200];
  c->racc = c->compute;
  if (!acc || !strcmp(acc, "compute")) return LOWP_OK;
  semis(buf, sizeof buf, acc);
  if (lowp_format_parse(&c->racc, buf, e2, sizeof e2) || lowp_accum_format_check(&c->racc, e2, sizeof e2))
    return set_err(err, errlen, LOWP_EINVAL, "acc=%s: %s", acc, e2);
  if (c->racc.precision > 25 && memcmp(&c->racc, &c->compute, sizeof c->racc))
    return set_err(err, errlen, LOWP_EINVAL,
                   "acc=%s: an accumulation format needs at most 25 significand bits, or to equal "
                   "compute%s", acc, "");
  return LOWP_OK;
}

/* acc, order, round and prod together into cfg.acc / have_prod / prod */
static int finish(kctx_t *x, const char *acc, const char *order, const char *rnd,
                  const char *prod, char *err, size_t errlen) {
  lowp_kcfg_t *c = &x->cfg;
  char buf[256], e2[200];
  lowp_format_t af = LOWP_FMT_FP32;
  lowp_rounding_t r = LOWP_RND_NE;
  int fma = 1;
  if (rnd) {
    if (lowp_rounding_parse(&r, rnd) != LOWP_OK)
      return set_err(err, errlen, LOWP_EINVAL,
                     "round=%s: expected rne, rna, rtz, rup, rdn, rto or sr%s", rnd, "");
    c->rnd = r;
  }
  if (x->k->op == LOWP_OP_CAST) return LOWP_OK;
  if (entry_takes(x->k, "comm")) return finish_allreduce(c, acc, order, err, errlen);
  if (entry_takes(x->k, "compute")) return finish_racc(c, acc, err, errlen);
  if (!entry_takes(x->k, "acc")) return LOWP_OK;
  if (acc) {
    semis(buf, sizeof buf, acc);
    if (lowp_format_parse(&af, buf, e2, sizeof e2))
      return set_err(err, errlen, LOWP_EINVAL, "acc=%s: %s", acc, e2);
    if (lowp_accum_format_check(&af, e2, sizeof e2))
      return set_err(err, errlen, LOWP_EINVAL, "acc=%s: %s", acc, e2);
  }
  if (lowp_accum_parse(&c->acc, order ? order : "recursive", e2, sizeof e2))
    return set_err(err, errlen, LOWP_EINVAL, "order=%s: %s", order ? order : "", e2);
  if (order && !strcmp(order, "fma") && prod && strcmp(prod, "exact"))
    return set_err(err, errlen, LOWP_EINVAL, "order=fma has exact products: drop prod=%s%s",
                   prod, "");
  if (prod && strcmp(prod, "exact")) {
    lowp_format_t pf;
    if (!strcmp(prod, "acc")) pf = af;
    else {
      semis(buf, sizeof buf, prod);
      if (lowp_format_parse(&pf, buf, e2, sizeof e2))
        return set_err(err, errlen, LOWP_EINVAL, "prod=%s: %s", prod, e2);
    }
    if (!memcmp(&pf, &af, sizeof pf)) fma = 0; /* products rounded to acc: any order */
    else if (c->acc.order != LOWP_ACC_RECURSIVE)
      return set_err(err, errlen, LOWP_EINVAL,
                     "prod=%s: products in a format other than acc need order=recursive (%s)",
                     prod, "or prod=acc");
    else {
      c->have_prod = 1;
      c->prod = pf;
    }
  }
  c->acc.acc = af;
  c->acc.rnd = r;
  c->acc.fma = c->have_prod ? 1 : fma;
  if (lowp_accum_validate(&c->acc, e2, sizeof e2))
    return set_err(err, errlen, LOWP_EINVAL, "accumulation: %s%s", e2, "");
  return LOWP_OK;
}

static int parse(kctx_t *x, const char *params, char *err, size_t errlen) {
  char *text, *item, *save = NULL, vals[NKEYS][256];
  int seen[NKEYS] = {0}, st = LOWP_OK, i;
  x->cfg.compute = LOWP_FMT_FP32;
  x->cfg.rnd = LOWP_RND_NE;
  x->cfg.variant = LOWP_LN_TWOPASS;
  x->cfg.promote = -1;
  x->cfg.threads = 1;
  x->cfg.lanes = 32;
  x->cfg.device = LOWP_DEVICE_AUTO;
  x->cfg.comm = LOWP_FMT_FP32;
  /* entries with a GPU kernel default to the GPU's own preset */
  snprintf(x->cfg.model, sizeof x->cfg.model, "%s", entry_takes(x->k, "device") ? "auto" : "h100");
  text = strdup(params ? params : "");
  if (!text) return LOWP_ENOMEM;
  for (item = strtok_r(text, ",", &save); item && !st; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    int k;
    if (!eq || eq == item || !eq[1]) {
      st = set_err(err, errlen, LOWP_EINVAL, "parameter '%s' is not key=value%s", item, "");
      break;
    }
    k = key_index(item, (size_t)(eq - item));
    if (k < 0 || !entry_takes(x->k, all_keys[k])) {
      *eq = '\0';
      lowp_errf(err, errlen, 0, "kernel '%s' takes no parameter '%s' (it takes: %s)", x->k->name,
                item, x->k->keys[0] ? x->k->keys : "none");
      st = LOWP_EINVAL;
      break;
    }
    if (seen[k]) {
      st = set_err(err, errlen, LOWP_EINVAL, "parameter '%s' given twice%s", all_keys[k], "");
      break;
    }
    seen[k] = 1;
    snprintf(vals[k], sizeof vals[k], "%s", eq + 1);
    if (!strcmp(all_keys[k], "model")) {
      /* the model spec runs on over items that are not kernel keys */
      char *nx;
      while (save && *save) {
        char *ne = strchr(save, '='), *nc = strchr(save, ',');
        size_t kl = ne && (!nc || ne < nc) ? (size_t)(ne - save) : 0;
        if (kl && key_index(save, kl) >= 0) break;
        nx = strtok_r(NULL, ",", &save);
        if (!nx) break;
        if (strlen(vals[k]) + strlen(nx) + 2 >= sizeof vals[k]) break;
        strcat(vals[k], ",");
        strcat(vals[k], nx);
      }
    }
    st = apply(x, k, vals[k], err, errlen);
  }
  free(text);
  if (st) return st;
  for (i = 0; i < (int)NKEYS; i++)
    if (!seen[i]) vals[i][0] = '\0';
  return finish(x, seen[0] ? vals[0] : NULL, seen[1] ? vals[1] : NULL, seen[2] ? vals[2] : NULL,
                seen[3] ? vals[3] : NULL, err, errlen);
}

static int kernel_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                      const lowp_problem_t *p, char *err, size_t errlen) {
  const kctx_t *x = s->ctx;
  if (!p || !p->op || p->op->id != x->k->op) {
    lowp_errf(err, errlen, 0, "kernel '%s' computes %s, not %s", x->k->name,
              lowp_op_get(x->k->op)->name, p && p->op ? p->op->name : "?");
    return LOWP_EUNSUPPORTED;
  }
  return x->k->run(&x->cfg, out, in, p, err, errlen);
}

static void kernel_release(lowp_subject_t *s) {
  free(s->ctx);
  s->ctx = NULL;
}

/* ----------------------------------------------------------- public API */

int lowp_kernel_subject_open(lowp_subject_t *s, const char *name, const char *params,
                             char *err, size_t errlen) {
  const lowp_kernel_t *k;
  kctx_t *x;
  int st;
  if (err && errlen) err[0] = '\0';
  if (!s || !name) return LOWP_EINVAL;
  memset(s, 0, sizeof *s);
  k = lowp_kernel_find(name);
  if (!k) {
    if (err && errlen) {
      size_t i, n;
      lowp_errf(err, errlen, 0, "unknown kernel '%.64s' (known:", name); /* the name escaped: one line */
      n = strlen(err);
      for (i = 0; lowp_kernel_at(i) && n < errlen; i++)
        n += (size_t)snprintf(err + n, errlen - n, " %s", lowp_kernel_at(i)->name);
      if (n < errlen) snprintf(err + n, errlen - n, ")");
    }
    return LOWP_EINVAL;
  }
  x = calloc(1, sizeof *x);
  if (!x) return LOWP_ENOMEM;
  x->k = k;
  st = parse(x, params, err, errlen);
  if (st) {
    if (err && errlen && st != LOWP_ENOMEM) {
      char tmp[512];
      snprintf(tmp, sizeof tmp, "kernel %s: %s", name, err);
      lowp_errf(err, errlen, 0, "%s", tmp);
    }
    free(x);
    return st;
  }
  snprintf(s->name, sizeof s->name, "kernel %.64s%s%.160s%s", name, params && *params ? "[" : "",
           params ? params : "", params && *params ? "]" : "");
  s->kind = "kernel";
  s->run = kernel_run;
  s->ctx = x;
  s->release = kernel_release;
  if (entry_takes(k, "acc") && !entry_takes(k, "comm") && !entry_takes(k, "compute")) {
    s->has_accum = 1;
    s->accum = x->cfg.acc;
    s->prod = x->cfg.have_prod ? &x->cfg.prod : NULL;
  }
  /* row kernels: every step in compute, the row sum left to right in acc
     (kernels/cpu/softmax_kernel.c, norm_kernel.c) */
  if (entry_takes(k, "compute") && entry_takes(k, "acc") && k->op != LOWP_OP_GEMM &&
      !entry_takes(k, "comm")) {
    s->has_compute = 1;
    s->compute = x->cfg.compute;
    s->has_accum = 1;
    memset(&s->accum, 0, sizeof s->accum);
    s->accum.order = LOWP_ACC_RECURSIVE;
    s->accum.acc = x->cfg.racc;
    s->accum.rnd = LOWP_RND_NE;
    s->accum.fma = 1;
  }
  return LOWP_OK;
}

/* key=FORMAT: its name, or its spec with ';' for ',' (semis() turns them back) */
static size_t put_format(char *buf, size_t len, size_t used, const char *key,
                         const lowp_format_t *f) {
  char spec[200];
  size_t i;
  int n;
  if (!f || used >= len) return used;
  if (f->name && lowp_format_by_name(f->name)) {
    snprintf(spec, sizeof spec, "%s", f->name);
  } else {
    if (lowp_format_spec_str(spec, sizeof spec, f)) spec[0] = '\0';
    for (i = 0; spec[i]; i++)
      if (spec[i] == ',') spec[i] = ';';
  }
  n = snprintf(buf + used, len - used, "%s%s=%s", used ? "," : "", key, spec);
  return n < 0 ? used : used + (size_t)n;
}

int lowp_kernel_subject_open_args(lowp_subject_t *s, const char *name,
                                  const lowp_kernel_args_t *a, const lowp_problem_t *p,
                                  char *err, size_t errlen) {
  static const char *const orders[] = {"recursive", "pairwise", "blocked", "splitk", "kahan"};
  char params[1024];
  size_t used = 0;
  int st;
  params[0] = '\0';
  if (!s || !name) return LOWP_EINVAL;
  if (a) {
    used = put_format(params, sizeof params, used, "compute", a->compute);
    used = put_format(params, sizeof params, used, "acc", a->acc);
    used = put_format(params, sizeof params, used, "prod", a->prod);
    if (a->has_order && used < sizeof params) {
      int n;
      if ((unsigned)a->order > LOWP_ACC_KAHAN) return LOWP_EINVAL;
      if (a->order == LOWP_ACC_BLOCKED || a->order == LOWP_ACC_SPLITK)
        n = snprintf(params + used, sizeof params - used, "%sorder=%s:%zu", used ? "," : "",
                     orders[a->order], a->block);
      else
        n = snprintf(params + used, sizeof params - used, "%sorder=%s", used ? "," : "",
                     orders[a->order]);
      if (n > 0) used += (size_t)n;
    }
    if (a->exp_cr && used < sizeof params) {
      int n = snprintf(params + used, sizeof params - used, "%sexp=cr", used ? "," : "");
      if (n > 0) used += (size_t)n;
    }
    if (a->extra && a->extra[0] && used < sizeof params) {
      int n = snprintf(params + used, sizeof params - used, "%s%s", used ? "," : "", a->extra);
      if (n > 0) used += (size_t)n;
    }
    if (used >= sizeof params) return set_err(err, errlen, LOWP_EINVAL, "kernel %s: parameters "
                                              "too long%s", name, "");
  }
  if ((st = lowp_kernel_subject_open(s, name, params, err, errlen))) return st;
  if (p && (st = lowp_kernel_subject_bind(s, p, err, errlen))) lowp_subject_close(s);
  return st;
}

int lowp_kernel_subject_bind(lowp_subject_t *s, const lowp_problem_t *p, char *err,
                             size_t errlen) {
  kctx_t *x;
  int st;
  if (!s || !s->ctx || s->run != kernel_run || !p || !p->op) return LOWP_EINVAL;
  x = s->ctx;
  if (p->op->id != x->k->op) {
    lowp_errf(err, errlen, 0, "kernel '%s' computes %s, not %s (kernels for %s:", x->k->name,
              lowp_op_get(x->k->op)->name, p->op->name, p->op->name);
    if (err && errlen) {
      size_t i, n = strlen(err);
      for (i = 0; lowp_kernel_at(i) && n < errlen; i++)
        if (lowp_kernel_at(i)->op == p->op->id)
          n += (size_t)snprintf(err + n, errlen - n, " %s", lowp_kernel_at(i)->name);
      if (n < errlen) snprintf(err + n, errlen - n, ")");
    }
    return LOWP_EUNSUPPORTED;
  }
  if (x->k->op == LOWP_OP_GEMM && entry_takes(x->k, "model") && entry_takes(x->k, "device")) {
    /* a GPU GEMM: the model its GPU kernel must equal (kernels/gpu/gpu_kernels.h) */
    char e2[300];
    lowp_gemm_tc_cfg_t tc;
    st = lowp_gpu_gemm_model(&tc, x->k->name, &x->cfg, &p->in[0], &p->out, e2, sizeof e2);
    if (st == LOWP_EUNSUPPORTED && !strncmp(x->k->name, "gemm_cublas", 11) &&
        lowp_gemm_cublas_variant(&p->in[0], &p->out, !strcmp(x->k->name, "gemm_cublas_fastacc"))) {
      /* cuBLAS computes these formats without tensor cores (fp32: FMAs on
         the CUDA cores): no model to equal; the GPU runs, lowp reveal finds
         its order, and the CPU side (device=cpu) says it has no twin */
      return LOWP_OK;
    }
    if (st) {
      lowp_errf(err, errlen, 0, "kernel %s: model '%s': %s", x->k->name, x->cfg.model, e2);
      return st == LOWP_EINVAL ? LOWP_EINVAL : LOWP_EUNSUPPORTED;
    }
    s->model = tc.model;
    s->has_model = 1;
  }
  if (x->k->op == LOWP_OP_GEMM && !strcmp(x->k->name, "gemm_tc")) {
    char e2[300];
    st = lowp_tc_model_get(&s->model, x->cfg.model, &p->in[0], &p->out, e2, sizeof e2);
    if (st) {
      lowp_errf(err, errlen, 0, "kernel gemm_tc: model '%s': %s", x->cfg.model, e2);
      return st == LOWP_EINVAL ? LOWP_EINVAL : LOWP_EUNSUPPORTED;
    }
    if (x->cfg.promote >= 0) {
      /* the promotion interval is the model's (lowp_gemm_tc_config checks it
         against the block size when the kernel runs) */
      lowp_gemm_tc_cfg_t tc;
      st = lowp_gemm_tc_config(&tc, x->cfg.model, x->cfg.promote, &p->in[0], &p->out, e2,
                               sizeof e2);
      if (st) {
        lowp_errf(err, errlen, 0, "kernel gemm_tc: %s", e2);
        return LOWP_EINVAL;
      }
      s->model = tc.model;
    }
    s->has_model = 1;
  }
  return LOWP_OK;
}
