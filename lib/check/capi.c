/* lowp_capi -- the flat C API for the Python binding (lib/check/capi.h) */

#define _POSIX_C_SOURCE 200809L

#include "check/capi.h"
#include "format/bsformat.h"
#include "model/bsmma.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/pipeline.h"
#include "check/result_json.h"
#include "check/spec.h"
#include "check/tol.h"
#include "io/escape.h"
#include "status.h"

#define ITEM(o, key) cJSON_GetObjectItemCaseSensitive(o, key)

static int bad(char *err, size_t errlen, int st, const char *fmt, const char *a) {
  lowp_errf(err, errlen, 0, fmt, a ? a : "");
  return st;
}

static int get_format(lowp_format_t *f, const cJSON *j, const char *key, const char *dflt,
                      char *err, size_t errlen) {
  const char *name = cJSON_IsString(j) ? j->valuestring : dflt;
  const lowp_format_t *b;
  char e[200];
  if (!name) return bad(err, errlen, LOWP_EINVAL, "\"%s\": a format name is needed", key);
  b = name ? lowp_format_by_name(name) : NULL;
  if (b) {
    *f = *b;
    return LOWP_OK;
  }
  if (lowp_format_parse(f, name, e, sizeof e)) {
    /* the name escaped (lowp_errf): one line whatever it holds */
    return lowp_errf(err, errlen, LOWP_EFORMAT, "\"%s\": unknown format '%s' (%s)", key, name, e);
  }
  return LOWP_OK;
}

/* the keys of a check's description that lowp_spec_desc_parse leaves to us */
static const char *const desc_keys[] = {"shapes", "out_shapes", "ref_shapes", "order", "acc",
                                        "model", "prob", "subject", "reference", "absent",
                                        "prequantized", NULL};

/* a shape: an array of at most 4 integers in [0, 2^30] (a spec's sizes are
   at most 2^30 too) */
static int get_shape(size_t *sh, int *nd, const cJSON *s, const char *what, char *err,
                     size_t errlen) {
  const cJSON *x;
  *nd = 0;
  if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) > LOWP_OP_MAXDIM)
    return bad(err, errlen, LOWP_ESHAPE, "%s: a shape is an array of at most 4 sizes", what);
  cJSON_ArrayForEach(x, s) {
    if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 1073741824.0) ||
        x->valuedouble != floor(x->valuedouble))
      return bad(err, errlen, LOWP_ESHAPE, "%s: sizes are integers in [0, 2^30]", what);
    sh[(*nd)++] = (size_t)x->valuedouble;
  }
  return LOWP_OK;
}

/* "shapes": [[..], ..] of the inputs -> p->dims (lowp_op_dims_infer) */
static int dims_from_shapes(lowp_problem_t *p, const cJSON *shapes, char *err, size_t errlen) {
  size_t sh[LOWP_OP_MAXIO][LOWP_OP_MAXDIM];
  const size_t *sp[LOWP_OP_MAXIO];
  int nd[LOWP_OP_MAXIO], i, st;
  if (!cJSON_IsArray(shapes) || cJSON_GetArraySize(shapes) != p->op->n_in)
    return bad(err, errlen, LOWP_ESHAPE, "%s: give \"dims\" or the shape of every input",
               p->op->name);
  for (i = 0; i < p->op->n_in; i++) {
    sp[i] = sh[i];
    if ((st = get_shape(sh[i], &nd[i], cJSON_GetArrayItem(shapes, i), p->op->in_names[i], err,
                        errlen)))
      return st;
  }
  return lowp_op_dims_infer(p, sp, nd, err, errlen);
}

/* The description as JSON text: parsed as strictly as a spec file (valid
   UTF-8, no NUL, no NaN/Infinity, nothing after the value) and then by the
   spec's own parser of a check (lowp_spec_desc_parse), so that Python
   refuses what lowp check refuses; then the problem: op, dims (or the
   input shapes), formats, eps, reduction. need_rules: lowp_capi_check. */
int lowp__capi_desc(cJSON **d, lowp_spec_check_t *ck, lowp_problem_t *p, const char *desc,
                    int need_rules, const char *const *keys, char *err, size_t errlen) {
  const cJSON *j;
  int i, st;
  memset(p, 0, sizeof *p);
  memset(ck, 0, sizeof *ck);
  if ((st = lowp_spec_json(d, desc, strlen(desc), err, errlen))) return st;
  if ((st = lowp_spec_desc_parse(ck, *d, keys ? keys : desc_keys, need_rules, err, errlen))) return st;
  if (lowp_problem_init(p, ck->op)) /* the documented defaults, then the description's */
    return bad(err, errlen, LOWP_EINVAL, "%sunknown operation", "");
  for (i = 0; i < 2; i++) {
    static const char *const nk[] = {"subject", "reference"};
    if ((j = ITEM(*d, nk[i])) && (st = lowp_spec_name_check(j, nk[i], err, errlen))) return st;
  }
  j = ITEM(*d, "prob");
  if (j && !(cJSON_IsNumber(j) && j->valuedouble > 0 && j->valuedouble < 1))
    return bad(err, errlen, LOWP_EINVAL, "%s\"prob\" must be a number in (0, 1), the "
               "probability the probabilistic bound holds with", "");
  for (i = 0; i < 3; i++) {
    static const char *const sk[] = {"order", "acc", "model"};
    if ((j = ITEM(*d, sk[i])) && !cJSON_IsString(j))
      return bad(err, errlen, LOWP_EINVAL, "\"%s\" must be a string", sk[i]);
  }
  p->op = ck->op;
  p->eps = ck->eps;
  p->reduction_mean = ck->reduction_mean;
  p->dims = ck->dims;
  if (!ck->has_shape && (st = dims_from_shapes(p, ITEM(*d, "shapes"), err, errlen))) return st;
  if (ck->conv_revealed)
    return bad(err, errlen, LOWP_EINVAL, "%s\"convert\": \"revealed\" needs a kernel lowp can call: "
               "pass the conversions lowp.reveal found (its result's \"convert\"), or name them", "");
  for (i = 0; i < p->op->n_in; i++) {
    p->in[i] = ck->n_in_formats ? ck->in[i] : LOWP_FMT_FP64;
    p->has_conv[i] = ck->has_conv[i], p->conv[i] = ck->conv[i], p->conv_rnd[i] = ck->conv_rnd[i];
    p->has_bin[i] = ck->n_in_formats && ck->has_bin[i], p->bin[i] = ck->bin[i];
  }
  p->out = ck->has_out ? ck->out : p->in[0];
  if ((j = ITEM(*d, "absent"))) {
    const cJSON *it;
    if (!cJSON_IsArray(j))
      return bad(err, errlen, LOWP_EINVAL, "%s\"absent\" must be an array of output numbers", "");
    cJSON_ArrayForEach(it, j)
      if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
          !(it->valuedouble >= 1 && it->valuedouble < p->op->n_out)) {
        lowp_errf(err, errlen, 0, "\"absent\": %s has no output %g that may be absent (the "
                  "first output is always needed)", p->op->name,
                  cJSON_IsNumber(it) ? it->valuedouble : NAN);
        return LOWP_EINVAL;
      }
  }
  return LOWP_OK;
}

static int desc_parse(cJSON **d, lowp_spec_check_t *ck, lowp_problem_t *p, const char *desc,
                      int need_rules, char *err, size_t errlen) {
  return lowp__capi_desc(d, ck, p, desc, need_rules, NULL, err, errlen);
}

static void shape_str(char *buf, size_t len, const size_t *sh, int nd) {
  size_t u = 0;
  int k;
  buf[0] = '\0';
  for (k = 0; k < nd && u < len; k++)
    u += (size_t)snprintf(buf + u, len - u, "%s%zu", k ? ", " : "", sh[k]);
}

/* The shapes of the caller's arrays ("shapes", "out_shapes", "ref_shapes")
   against the problem's, element counts included: a pointer the caller gives
   is read for exactly lowp_op_shape's count, so every one given needs its
   shape and every shape must fit (lowp_op_shape_matches: leading axes of
   size 1 aside, equal; a transposed array is refused). */
static int arrays_check(const lowp_problem_t *p, const cJSON *d, const double *const *in,
                        const double *const *out, const double *const *ref, int shapes_only,
                        char *err, size_t errlen) {
  static const char *const keys[] = {"shapes", "out_shapes", "ref_shapes"};
  static const double *const given[LOWP_OP_MAXIO] = {(const double *)keys, (const double *)keys,
                                                     (const double *)keys, (const double *)keys};
  int g, i;
  for (g = 0; g < 3; g++) {
    const double *const *arr = g == 0 ? in : g == 1 ? out : ref;
    const cJSON *list = ITEM(d, keys[g]);
    int n = g == 0 ? p->op->n_in : p->op->n_out, base = g == 0 ? 0 : p->op->n_in;
    if (shapes_only) {
      /* lowp_capi_shapes: no arrays, the shapes the caller will give */
      if (!list) continue;
      arr = given;
    }
    if (!arr) {
      if (list) return bad(err, errlen, LOWP_EINVAL, "\"%s\" given without its arrays", keys[g]);
      continue;
    }
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != n) {
      lowp_errf(err, errlen, 0, "\"%s\": the shape of each of the %d %s (null for one not "
                "given) is needed", keys[g], n, g == 0 ? "inputs" : "outputs");
      return LOWP_ESHAPE;
    }
    for (i = 0; i < n; i++) {
      const cJSON *s = cJSON_GetArrayItem(list, i);
      const char *name = g == 0 ? p->op->in_names[i] : p->op->out_names[i];
      size_t sh[LOWP_OP_MAXDIM], want[LOWP_OP_MAXDIM], c;
      int nd, wn, st, need = g == 0 || i == 0;
      char got[96], exp[96];
      if (shapes_only && cJSON_IsNull(s) && !need) continue;
      if (cJSON_IsNull(s) && !arr[i] && !need) continue;
      if (cJSON_IsNull(s) || !arr[i]) {
        lowp_errf(err, errlen, 0, "%s%s %s: %s", g == 2 ? "reference " : "",
                  g == 0 ? "input" : "output", name,
                  !arr[i] && cJSON_IsNull(s) ? "is needed"
                  : !arr[i] ? "a shape but no array" : "an array but no shape");
        return LOWP_EINVAL;
      }
      if ((st = get_shape(sh, &nd, s, name, err, errlen))) return st;
      if (lowp_op_shape_matches(p, base + i, sh, nd)) continue;
      (void)lowp_op_shape(p, base + i, want, &wn, &c);
      shape_str(got, sizeof got, sh, nd);
      shape_str(exp, sizeof exp, want, wn);
      lowp_errf(err, errlen, 0, "%s%s has shape [%s]; the problem needs shape [%s]",
                g == 2 ? "reference " : "", name, got, exp);
      return LOWP_ESHAPE;
    }
  }
  return LOWP_OK;
}

/* "order"/"acc" -> an accumulation; "model" -> a tensor-core model */
static int desc_method(lowp_subject_t *s, const cJSON *d, const lowp_problem_t *p,
                       const char *acc_default, char *err, size_t errlen) {
  const cJSON *o = ITEM(d, "order"), *a = ITEM(d, "acc"), *m = ITEM(d, "model");
  char e[200];
  int st;
  if (cJSON_IsString(m)) {
    st = lowp_tc_model_get(&s->model, m->valuestring, &p->in[0], &p->out, e, sizeof e);
    if (st) {
      lowp_errf(err, errlen, 0, "model '%s': %s", m->valuestring, e);
      return st;
    }
    s->has_model = 1;
    return LOWP_OK;
  }
  if (!cJSON_IsString(o) && !cJSON_IsString(a) && !acc_default) return LOWP_OK;
  if (lowp_accum_parse(&s->accum, cJSON_IsString(o) ? o->valuestring : "recursive", e, sizeof e)) {
    lowp_errf(err, errlen, 0, "order: %s", e);
    return LOWP_EINVAL;
  }
  if ((st = get_format(&s->accum.acc, a, "acc", acc_default ? acc_default : p->out.name, err,
                       errlen)))
    return st;
  if (lowp_accum_validate(&s->accum, e, sizeof e)) {
    lowp_errf(err, errlen, 0, "accumulation: %s", e);
    return LOWP_EINVAL;
  }
  s->has_accum = 1;
  return LOWP_OK;
}

/* ------------------------------------------------------ the arrays subject */

static int arrays_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                      const lowp_problem_t *p, char *err, size_t errlen) {
  const double *const *src = (const double *const *)s->ctx;
  int j;
  (void)in;
  (void)err;
  (void)errlen;
  for (j = 0; j < p->op->n_out; j++) {
    size_t shape[LOWP_OP_MAXDIM], c;
    int nd;
    if (lowp_op_shape(p, p->op->n_in + j, shape, &nd, &c)) return LOWP_EINVAL;
    if (src[j]) memcpy(out[j], src[j], c * sizeof(double));
  }
  return LOWP_OK;
}

static void arrays_subject(lowp_subject_t *s, const char *name, const double *const *outs,
                           const lowp_problem_t *p, const cJSON *absent) {
  int j;
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->kind = "arrays";
  s->run = arrays_run;
  s->ctx = (void *)(size_t)outs;
  for (j = 1; j < p->op->n_out; j++)
    if (!outs[j]) s->absent |= 1u << j;
  if (cJSON_IsArray(absent)) {
    const cJSON *it;
    cJSON_ArrayForEach(it, absent)
      if (cJSON_IsNumber(it) && it->valueint > 0 && it->valueint < p->op->n_out)
        s->absent |= 1u << it->valueint;
  }
}

/* ------------------------------------------------------------------ rules */

/* models named in bound rules; a vacuous bound refused unless accepted */
static int rules_prepare(lowp_spec_rule_t *ru, int n, const lowp_problem_t *p,
                         const lowp_subject_t *s, char *err, size_t errlen) {
  int i, st;
  char e[200];
  for (i = 0; i < n; i++) {
    lowp_rule_t *r = &ru[i].rule;
    lowp_check_bound_t b;
    if (ru[i].twin || ru[i].tree) {
      lowp_errf(err, errlen, 0, "rule %d: %s needs a kernel lowp can call: use lowp check, or "
                "lowp.reveal(fn, ...) and its twin", i + 1,
                ru[i].twin ? "a twin rule (vs_twin)" : "a revealed or given tree");
      return LOWP_EPARSE;
    }
    if (r->kind != LOWP_RULE_BOUND) continue;
    if (ru[i].model) {
      st = lowp_tc_model_get(&r->model, ru[i].model, &p->in[0], &p->out, e, sizeof e);
      if (st) {
        lowp_errf(err, errlen, 0, "rule %d: model '%s': %s", i + 1, ru[i].model, e);
        return st;
      }
      r->has_model = 1;
    }
    if (p->op->kind != LOWP_OPKIND_SUMPROD) continue; /* eval says why */
    st = lowp_check_rule_bound(&b, r, p, s, 0);
    if (!st && isinf(b.value) && !r->vacuous_ok) {
      lowp_errf(err, errlen, 0, "rule %d: the bound %s is vacuous for k = %zu: the rule could "
                "never fail (say \"accept_vacuous\": true to keep it)", i + 1, b.name,
                p->op->id == LOWP_OP_SUM ? p->dims.n : p->dims.k);
      return LOWP_EPARSE;
    }
  }
  return LOWP_OK;
}

static int eval_rules(lowp_verdict_t *v, lowp_spec_rule_t *ru, int n,
                      const lowp_check_result_t *r, const lowp_check_result_t *ref,
                      const lowp_subject_t *s, char *err, size_t errlen) {
  int i, st;
  for (i = 0; i < n; i++) {
    lowp_rule_t rule = ru[i].rule;
    if (ru[i].has_ref) {
      if (!ref)
        return bad(err, errlen, LOWP_EINVAL, "a %s rule needs the reference's outputs "
                   "(reference=...)", rule.kind == LOWP_RULE_BITEXACT ? "bitexact" : "vs_reference");
      rule.other = ref;
    }
    st = lowp_check_rule_eval(&v[i], &rule, r, s);
    if (st) {
      lowp_errf(err, errlen, 0, "rule %d: %s", i + 1, v[i].msg);
      return st == LOWP_EUNSUPPORTED ? LOWP_EPARSE : st;
    }
  }
  return LOWP_OK;
}

/* "mismatch": elements outside rtol/atol (assert_close's "Mismatched
   elements"), under the first rtol/atol rule's tolerance or PyTorch's
   defaults for the output format */
static void add_mismatch(cJSON *res, const lowp_check_result_t *r, const lowp_spec_rule_t *ru,
                         int n) {
  double rt = 0, at = 0, worst;
  size_t cnt, total;
  int i, pt = 1;
  cJSON *m = cJSON_CreateObject();
  for (i = 0; i < n; i++)
    if (ru[i].rule.kind == LOWP_RULE_TOL || ru[i].rule.kind == LOWP_RULE_MISMATCH) {
      pt = ru[i].rule.pytorch;
      rt = ru[i].rule.rtol;
      at = ru[i].rule.atol;
      break;
    }
  if (pt) lowp_check_pytorch_tol(&rt, &at, &r->problem.out);
  cnt = lowp_check_mismatch(r, rt, at, &total, &worst, NULL, NULL);
  cJSON_AddNumberToObject(m, "count", (double)cnt);
  cJSON_AddNumberToObject(m, "total", (double)total);
  lowp_json_num(m, "rtol", rt);
  lowp_json_num(m, "atol", at);
  lowp_json_num(m, "worst_ratio", worst);
  cJSON_AddItemToObject(res, "mismatch", m);
}

static int measure(lowp_check_result_t *r, const lowp_problem_t *p, const lowp_subject_t *s,
                   const lowp_check_inputs_t *in, double prob, char *err, size_t errlen) {
  lowp_check_opts_t o;
  memset(&o, 0, sizeof o);
  o.prob = prob;
  return lowp_check_measure(r, p, s, in, &o, err, errlen);
}

/* Every value the caller gives must be a value of its declared format (as
   lowp check refuses a file whose values are not values of the check's
   "in"): an fp64 array declared fp16 that holds 0.1 is refused, whatever it
   is, before any work. Index inputs (xent's target) hold integers: the
   pipeline checks them. outputs = 0: the outputs' values are left to an
   {"in_format": N} rule, which counts them. A reference's outputs are
   another subject's (a wider reference implementation's, say): its own
   errors are what vs_reference compares with, so they are not refused. */
/* "prequantized": the inputs (numbers) of a block-scaled format whose arrays
   are already the dequantized values of their elements and scales (Python's
   BlockQuantized); the other block-scaled inputs are fp32 data that the
   format's rule quantizes. A bit mask in *mask. */
static int prequantized(unsigned *mask, const lowp_problem_t *p, const cJSON *d, char *err, size_t errlen) {
  const cJSON *j = ITEM(d, "prequantized"), *it;
  *mask = 0;
  if (!j) return LOWP_OK;
  if (!cJSON_IsArray(j))
    return bad(err, errlen, LOWP_EINVAL, "%s\"prequantized\" must be an array of input numbers", "");
  cJSON_ArrayForEach(it, j) {
    int k;
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || !(it->valuedouble >= 0) ||
        it->valuedouble >= p->op->n_in)
      return bad(err, errlen, LOWP_EINVAL, "%s\"prequantized\": not an input number", "");
    k = (int)it->valuedouble;
    if (!p->has_bin[k])
      return bad(err, errlen, LOWP_EINVAL, "\"prequantized\": input %s's format is not block-scaled",
                 p->op->in_names[k]);
    *mask |= 1u << k;
  }
  return LOWP_OK;
}

/* block-scaled inputs not prequantized: their fp32 data quantized by the
   format's rule (lowp_check_bs_qdq), the data kept for the split */
static int quantize_inputs(lowp_check_inputs_t *inp, const lowp_problem_t *p, unsigned pre) {
  int i, st = LOWP_OK;
  for (i = 0; i < p->op->n_in && !st; i++) {
    if (!p->has_bin[i] || (pre >> i & 1u)) continue;
    inp->data[i] = inp->x[i];
    inp->x[i] = malloc((inp->count[i] + 1) * sizeof *inp->x[i]);
    st = inp->x[i] ? lowp_check_bs_qdq(inp->x[i], inp->data[i], inp->count[i], p, i) : LOWP_ENOMEM;
  }
  return st;
}

/* how many of x[0..n) (NaN aside) are not values of f; *first the first */
static int arrays_in_format(const lowp_problem_t *p, const double *const *in,
                            const double *const *out, int outputs, unsigned pre, char *err, size_t errlen) {
  int g, i;
  for (g = 0; g < 2; g++) {
    const double *const *arr = g == 0 ? in : out;
    int n = g == 0 ? p->op->n_in : p->op->n_out;
    for (i = 0; arr && i < n; i++) {
      const lowp_format_t *f = g == 0 ? &p->in[i] : &p->out;
      size_t sh[LOWP_OP_MAXDIM], c, bad_n, first;
      int nd;
      if (!arr[i] || (g == 0 && p->op->in_index[i]) || (g > 0 && !outputs)) continue;
      if (g == 0 && (pre >> i & 1u)) continue; /* exact dequantized values, checked by the caller */
      if (lowp_op_shape(p, (g == 0 ? 0 : p->op->n_in) + i, sh, &nd, &c)) return LOWP_EINVAL;
      if ((bad_n = lowp_format_count_not_in(f, arr[i], c, &first))) {
        lowp_errf(err, errlen, 0, "%s %s: %zu values are not %s values (the first: element "
                  "%zu = %.17g): declare the format they are in",
                  g == 0 ? "input" : "output", g == 0 ? p->op->in_names[i] : p->op->out_names[i],
                  bad_n, f->name ? f->name : "custom-format", first, arr[i][first]);
        return LOWP_EFORMAT;
      }
    }
  }
  return LOWP_OK;
}

int lowp_capi_check(char **json, const char *desc, const double *const *in,
                    const double *const *out, const double *const *ref, char *err,
                    size_t errlen) {
  cJSON *d = NULL, *res = NULL;
  lowp_spec_check_t ck;
  lowp_problem_t p;
  lowp_subject_t s, rs;
  lowp_check_inputs_t inp;
  lowp_check_result_t r, rr;
  lowp_spec_rule_t *ru;
  lowp_verdict_t *v = NULL;
  int n, st, i;
  unsigned pre = 0;
  const cJSON *jn;
  double prob;
  if (err && errlen) err[0] = '\0';
  if (!json || !desc || !in || !out) return LOWP_EINVAL;
  *json = NULL;
  memset(&inp, 0, sizeof inp);
  memset(&r, 0, sizeof r);
  memset(&rr, 0, sizeof rr);
  if ((st = desc_parse(&d, &ck, &p, desc, 1, err, errlen))) goto done;
  if (!ck.n_in_formats) {
    st = bad(err, errlen, LOWP_EINVAL, "%s\"in\": the inputs' formats are needed", "");
    goto done;
  }
  if ((st = arrays_check(&p, d, in, out, ref, 0, err, errlen))) goto done;
  ru = ck.rules;
  n = ck.n_rules;
  /* outputs outside their format are refused, unless an in_format rule asks
     to count them */
  for (i = 0; i < n && ru[i].rule.kind != LOWP_RULE_IN_FORMAT; i++) {}
  if ((st = prequantized(&pre, &p, d, err, errlen))) goto done;
  if ((st = arrays_in_format(&p, in, out, i == n, pre, err, errlen))) goto done;
  jn = ITEM(d, "prob");
  prob = jn ? jn->valuedouble : 0.99;
  /* the description's probability is that of every prob bound naming none */
  for (i = 0; i < n; i++)
    if (ru[i].rule.kind == LOWP_RULE_BOUND && !(ru[i].rule.prob > 0)) ru[i].rule.prob = prob;
  jn = ITEM(d, "subject");
  arrays_subject(&s, jn ? jn->valuestring : "arrays", out, &p, ITEM(d, "absent"));
  if ((st = desc_method(&s, d, &p, NULL, err, errlen))) goto done;
  jn = ITEM(d, "reference");
  arrays_subject(&rs, jn ? jn->valuestring : "reference", ref ? ref : out, &p, ITEM(d, "absent"));
  if ((st = rules_prepare(ru, n, &p, &s, err, errlen))) goto done;
  if ((st = lowp_check_inputs_copy(&inp, &p, in, NULL)) || (st = quantize_inputs(&inp, &p, pre))) {
    bad(err, errlen, st, "inputs: %s", lowp_status_str(st));
    goto done;
  }
  if ((st = measure(&r, &p, &s, &inp, prob, err, errlen))) goto done;
  if (ref && (st = measure(&rr, &p, &rs, &inp, prob, err, errlen))) goto done;
  v = calloc(n ? (size_t)n : 1, sizeof *v);
  if (!v) { st = LOWP_ENOMEM; goto done; }
  if ((st = eval_rules(v, ru, n, &r, ref ? &rr : NULL, &s, err, errlen))) goto done;
  res = lowp_check_result_json(&r, &inp, v, n);
  add_mismatch(res, &r, ru, n);
  if (ref) {
    cJSON *m = cJSON_CreateObject();
    int k;
    for (k = 0; k < LOWP_METRIC_COUNT; k++)
      lowp_json_num(m, lowp_metric_name((lowp_metric_t)k),
                    lowp_metric_value(&rr, (lowp_metric_t)k));
    cJSON_AddItemToObject(res, "reference_metrics", m);
  }
  *json = cJSON_PrintUnformatted(res);
  st = *json ? LOWP_OK : LOWP_ENOMEM;
done:
  cJSON_Delete(res);
  cJSON_Delete(d);
  free(v);
  lowp_spec_check_free(&ck);
  lowp_check_result_free(&r);
  lowp_check_result_free(&rr);
  lowp_check_inputs_free(&inp);
  return st;
}

/* a problem description (JSON text) parsed as lowp_capi_check parses it
   (desc_parse: the spec's own validator), without rules */
int lowp_capi_shapes(char **json, const char *desc, char *err, size_t errlen) {
  cJSON *d = NULL, *o, *ins, *outs, *shapes, *index;
  lowp_spec_check_t ck;
  lowp_problem_t p;
  int i, st;
  if (err && errlen) err[0] = '\0';
  if (!json || !desc) return LOWP_EINVAL;
  *json = NULL;
  st = desc_parse(&d, &ck, &p, desc, 0, err, errlen);
  if (!st) st = arrays_check(&p, d, NULL, NULL, NULL, 1, err, errlen);
  if (!st && ck.n_in_formats) {
    lowp_subject_t s;
    memset(&s, 0, sizeof s);
    st = desc_method(&s, d, &p, NULL, err, errlen); /* order/acc/model refused here too */
  }
  lowp_spec_check_free(&ck);
  cJSON_Delete(d);
  if (st) return st;
  o = cJSON_CreateObject();
  ins = cJSON_AddArrayToObject(o, "inputs");
  outs = cJSON_AddArrayToObject(o, "outputs");
  shapes = cJSON_AddArrayToObject(o, "shapes");
  index = cJSON_AddArrayToObject(o, "index"); /* inputs of integer indices (xent's target) */
  for (i = 0; i < p.op->n_in; i++) cJSON_AddItemToArray(index, cJSON_CreateBool(p.op->in_index[i]));
  for (i = 0; i < p.op->n_in + p.op->n_out; i++) {
    size_t shape[LOWP_OP_MAXDIM], c;
    int nd, k;
    cJSON *sh = cJSON_CreateArray();
    if ((st = lowp_op_shape(&p, i, shape, &nd, &c))) {
      cJSON_Delete(sh);
      cJSON_Delete(o);
      return bad(err, errlen, st, "%sbad sizes", "");
    }
    for (k = 0; k < nd; k++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)shape[k]));
    cJSON_AddItemToArray(shapes, sh);
    cJSON_AddItemToArray(i < p.op->n_in ? ins : outs, cJSON_CreateString(
        i < p.op->n_in ? p.op->in_names[i] : p.op->out_names[i - p.op->n_in]));
  }
  *json = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return *json ? LOWP_OK : LOWP_ENOMEM;
}

/* a tensor-core model preset's name before the first ',' */
static int is_preset(const char *spec) {
  char name[64];
  size_t n = strcspn(spec, ",");
  if (n >= sizeof name) return 0;
  memcpy(name, spec, n);
  name[n] = '\0';
  return lowp_tc_preset_find(name) != NULL;
}

/* issue 31's fields: "confidence": "worst" (or "worst": true), "risk" (the
   whole test's false-failure probability), "numel" (outputs compared),
   "compute" (row operations' per-element format) */
static int tol_query_risk(lowp_tol_query_t *q, const cJSON *d, char *err, size_t errlen) {
  const cJSON *j = ITEM(d, "confidence");
  int st;
  if (cJSON_IsString(j)) {
    if (strcmp(j->valuestring, "worst"))
      return bad(err, errlen, LOWP_EINVAL, "\"confidence\" is a probability in (0, 1) or "
                 "\"worst\", not '%s'", j->valuestring);
    q->worst = 1;
  }
  if (cJSON_IsTrue(ITEM(d, "worst"))) q->worst = 1;
  j = ITEM(d, "risk");
  if (cJSON_IsNumber(j)) {
    if (!(j->valuedouble > 0 && j->valuedouble < 1))
      return bad(err, errlen, LOWP_EINVAL, "%s\"risk\" must lie in (0, 1)", "");
    q->risk = j->valuedouble;
  }
  j = ITEM(d, "numel");
  if (cJSON_IsNumber(j)) {
    if (!(j->valuedouble >= 1) || !isfinite(j->valuedouble))
      return bad(err, errlen, LOWP_EINVAL, "%s\"numel\" must be a number >= 1", "");
    q->numel = j->valuedouble;
  }
  j = ITEM(d, "compute");
  if (cJSON_IsString(j)) {
    if ((st = get_format(&q->compute, j, "compute", NULL, err, errlen))) return st;
    q->has_compute = 1;
  }
  return LOWP_OK;
}

static int tol_query_common(lowp_tol_query_t *q, const cJSON *d, char *err, size_t errlen);

/* data: a data-aware query (lowp_capi_tol_data), whose problem keys
   (shapes, dims, in, eps, reduction) tol_problem reads */
static int tol_query(lowp_tol_query_t *q, const cJSON *d, int data, char *err, size_t errlen) {
  const cJSON *j = ITEM(d, "op"), *m = ITEM(d, "method");
  lowp_problem_t p;
  lowp_subject_t s;
  cJSON *md;
  int st;
  static const char *const keys[] = {"op",    "k",     "input", "acc",     "out",
                                     "method", "confidence", "scale", "worst", "risk",
                                     "numel", "compute", NULL};
  static const char *const data_keys[] = {"shapes", "dims", "in", "eps", "reduction", NULL};
  const cJSON *it;
  memset(q, 0, sizeof *q);
  for (it = d->child; it; it = it->next) {
    const cJSON *jt;
    int i, ok = 0;
    for (i = 0; keys[i]; i++) ok |= !strcmp(keys[i], it->string);
    for (i = 0; data && data_keys[i]; i++) ok |= 2 * !strcmp(data_keys[i], it->string);
    if (!ok)
      return bad(err, errlen, LOWP_EINVAL, "unknown key '%s' (op, k, input, acc, out, method, "
                 "confidence, scale, worst, risk, numel, compute)", it->string);
    for (jt = d->child; jt != it; jt = jt->next)
      if (!strcmp(jt->string, it->string))
        return bad(err, errlen, LOWP_EINVAL, "'%s' given twice", it->string);
    if (ok & 2) continue; /* tol_problem's */
    if (!strcmp(it->string, "worst") ? !cJSON_IsBool(it)
        : (cJSON_IsNull(it) || (strcmp(it->string, "k") && strcmp(it->string, "confidence") &&
                                strcmp(it->string, "scale") && strcmp(it->string, "risk") &&
                                strcmp(it->string, "numel") && !cJSON_IsString(it))))
      return bad(err, errlen, LOWP_EINVAL, !strcmp(it->string, "worst")
                 ? "\"%s\" must be a boolean" : "\"%s\" must be a string", it->string);
  }
  if (!cJSON_IsString(j)) return bad(err, errlen, LOWP_EINVAL, "%s\"op\" is needed", "");
  q->op = lowp_op_by_name(j->valuestring);
  if (!q->op) return bad(err, errlen, LOWP_EINVAL, "unknown operation '%s'", j->valuestring);
  j = ITEM(d, "k");
  if (!cJSON_IsNumber(j) || !(j->valuedouble >= 1) || j->valuedouble > 1099511627776.0 ||
      j->valuedouble != floor(j->valuedouble))
    return bad(err, errlen, LOWP_EINVAL, "%s\"k\" must be an integer in [1, 2^40]", "");
  q->k = (size_t)j->valuedouble;
  j = ITEM(d, "input");
  if (cJSON_IsString(j) && lowp_bsformat_parse(&q->bs, j->valuestring, NULL, 0) == LOWP_OK) {
    /* block-scaled inputs: a dequantized value holds the element's and the
       scale's significand bits; the products' exactness follows from that */
    q->has_bs = 1;
    q->in = q->bs.elem;
    q->in.precision = q->bs.elem.precision + q->bs.scale.precision - 1;
    if ((st = get_format(&q->out, ITEM(d, "out"), "out", "fp32", err, errlen))) return st;
  } else {
    if ((st = get_format(&q->in, ITEM(d, "input"), "input", "fp32", err, errlen))) return st;
    if ((st = get_format(&q->out, ITEM(d, "out"), "out", q->in.name ? q->in.name : "fp32", err,
                         errlen)))
      return st;
  }
  if (cJSON_IsString(m) && !strncmp(m->valuestring, "model:", 6) && strstr(m->valuestring, "kind=")) {
    lowp_bsmma_model_t bm;
    if ((st = lowp_bsmma_get(&bm, m->valuestring + 6, err, errlen))) return st;
    q->has_bsmodel = 1;
    q->bsmodel = bm.p;
    q->accum.acc = LOWP_FMT_FP32;
    return tol_query_common(q, d, err, errlen);
  }
  /* the method: an order (with "acc") or "model:PRESET[,key=value]" */
  memset(&p, 0, sizeof p);
  p.op = q->op;
  p.in[0] = p.in[1] = q->in;
  p.out = q->out;
  memset(&s, 0, sizeof s);
  md = cJSON_CreateObject();
  if (cJSON_IsString(m) && !strncmp(m->valuestring, "model:", 6))
    cJSON_AddStringToObject(md, "model", m->valuestring + 6);
  else if (cJSON_IsString(m) && is_preset(m->valuestring)) /* "h100", "h100,promote=128" */
    cJSON_AddStringToObject(md, "model", m->valuestring);
  else if (cJSON_IsString(m))
    cJSON_AddStringToObject(md, "order", m->valuestring);
  if (cJSON_IsString(ITEM(d, "acc"))) cJSON_AddStringToObject(md, "acc", ITEM(d, "acc")->valuestring);
  st = desc_method(&s, md, &p, "fp32", err, errlen);
  cJSON_Delete(md);
  if (st) return st;
  if (s.has_model && q->op->id != LOWP_OP_DOT && q->op->id != LOWP_OP_GEMV &&
      q->op->id != LOWP_OP_GEMM)
    return bad(err, errlen, LOWP_EINVAL, "a tensor-core model computes products (dot, gemv, "
               "gemm), not %s: give an order (recursive, pairwise, blocked:B, splitk:S, kahan) "
               "and the accumulation format instead", q->op->name);
  q->accum = s.accum;
  q->has_model = s.has_model;
  q->model = s.model;
  return tol_query_common(q, d, err, errlen);
}

/* the keys every method shares: "confidence" (a number; "worst" is
   tol_query_risk's), "scale", then tol_query_risk's */
static int tol_query_common(lowp_tol_query_t *q, const cJSON *d, char *err, size_t errlen) {
  const cJSON *j = ITEM(d, "confidence");
  if (j && !cJSON_IsString(j)) { /* "worst": tol_query_risk */
    if (!cJSON_IsNumber(j) || !(j->valuedouble > 0 && j->valuedouble <= 1))
      return bad(err, errlen, LOWP_EINVAL, "%s\"confidence\" must be a number in (0, 1] "
                 "(1: the worst case)", "");
    q->confidence = j->valuedouble >= 1 ? 0 : j->valuedouble;
  }
  j = ITEM(d, "scale");
  if (j) {
    if (!cJSON_IsNumber(j))
      return bad(err, errlen, LOWP_EINVAL, "%s\"scale\" must be a finite number > 0", "");
    if (!(j->valuedouble > 0) || !isfinite(j->valuedouble))
      return bad(err, errlen, LOWP_EINVAL, "%s\"scale\" must be a finite number > 0", "");
    q->scale = j->valuedouble;
  }
  return tol_query_risk(q, d, err, errlen);
}

/* the query's text parsed as strictly as a spec (lowp_spec_json: no NaN,
   no NUL, valid UTF-8): an object */
static int tol_json(cJSON **d, const char *query, char *err, size_t errlen) {
  int st = lowp_spec_json(d, query, strlen(query), err, errlen);
  if (st) return st;
  if (!cJSON_IsObject(*d)) {
    cJSON_Delete(*d);
    *d = NULL;
    return bad(err, errlen, LOWP_EPARSE, "%sthe query is not a JSON object", "");
  }
  return LOWP_OK;
}

cJSON *lowp_tol_json(const lowp_tol_t *t, const lowp_tol_query_t *q) {
  cJSON *o = cJSON_CreateObject();
  lowp_json_num(o, "rtol", t->rtol);
  lowp_json_num(o, "atol", t->atol);
  lowp_json_num(o, "bound", t->bound);
  lowp_json_num(o, "bound_acc", t->bound_acc);
  lowp_json_num(o, "rtol_same_sign", t->rtol_same_sign);
  cJSON_AddBoolToObject(o, "vacuous", t->vacuous);
  cJSON_AddStringToObject(o, "bound_name", t->bound_name);
  cJSON_AddStringToObject(o, "explanation", t->why);
  cJSON_AddStringToObject(o, "op", q->op->name);
  cJSON_AddNumberToObject(o, "k", (double)q->k);
  cJSON_AddStringToObject(o, "input", q->has_bs ? q->bs.name : q->in.name ? q->in.name : "custom");
  cJSON_AddStringToObject(o, "acc", q->has_model ? "model" : (q->accum.acc.name ? q->accum.acc.name : "custom"));
  cJSON_AddStringToObject(o, "out", q->out.name ? q->out.name : "custom");
  if (t->probabilistic) lowp_json_num(o, "confidence", t->confidence);
  else cJSON_AddStringToObject(o, "confidence", "worst case");
  lowp_json_num(o, "scale", q->scale > 0 ? q->scale : 1);
  cJSON_AddBoolToObject(o, "probabilistic", t->probabilistic);
  lowp_json_num(o, "risk", t->risk);
  lowp_json_num(o, "numel", t->numel);
  cJSON_AddStringToObject(o, "not_probabilistic", t->not_prob);
  lowp_json_num(o, "beta", t->beta);
  lowp_json_num(o, "atol_floor", t->atol_floor);
  cJSON_AddStringToObject(o, "compute", q->has_compute && q->compute.name ? q->compute.name
                          : (q->in.name ? q->in.name : "custom"));
  return o;
}

int lowp_capi_tol(char **json, const char *query, char *err, size_t errlen) {
  cJSON *d, *o;
  lowp_tol_query_t q;
  lowp_tol_t t;
  int st;
  if (err && errlen) err[0] = '\0';
  if (!json || !query) return LOWP_EINVAL;
  *json = NULL;
  if ((st = tol_json(&d, query, err, errlen))) return st;
  st = tol_query(&q, d, 0, err, errlen);
  cJSON_Delete(d);
  if (st) return st;
  if ((st = lowp_tol(&t, &q, err, errlen))) return st;
  o = lowp_tol_json(&t, &q);
  *json = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return *json ? LOWP_OK : LOWP_ENOMEM;
}

/* a size in a tol query's "dims": absent 1; an integer in [1, 2^48], else 0 */
static size_t get_size(const cJSON *o, const char *key) {
  const cJSON *j = ITEM(o, key);
  if (!j) return 1;
  if (!cJSON_IsNumber(j) || !(j->valuedouble >= 1 && j->valuedouble <= 281474976710656.0) ||
      j->valuedouble != floor(j->valuedouble))
    return 0;
  return (size_t)j->valuedouble;
}

/* the problem of a data-aware tolerance query (lowp_capi_tol_data): op, dims
   (or shapes), in, out, eps, reduction, from lowp_problem_init's defaults;
   the query's other keys were validated by tol_query */
static int tol_problem(lowp_problem_t *p, const cJSON *d, char *err, size_t errlen) {
  const cJSON *j = ITEM(d, "op"), *in = ITEM(d, "in"), *dims = ITEM(d, "dims");
  int i, st;
  memset(p, 0, sizeof *p);
  if (!cJSON_IsString(j)) return bad(err, errlen, LOWP_EINVAL, "%s\"op\" is needed", "");
  if (lowp_problem_init(p, lowp_op_by_name(j->valuestring)))
    return bad(err, errlen, LOWP_EINVAL, "unknown operation '%s'", j->valuestring);
  p->dims.batch = get_size(dims, "batch");
  p->dims.m = get_size(dims, "m");
  p->dims.n = get_size(dims, "n");
  p->dims.k = get_size(dims, "k");
  if (!p->dims.batch || !p->dims.m || !p->dims.n || !p->dims.k)
    return bad(err, errlen, LOWP_EINVAL, "%s\"dims\": sizes are integers in [1, 2^48]", "");
  if (!cJSON_IsObject(dims) && (st = dims_from_shapes(p, ITEM(d, "shapes"), err, errlen)))
    return st;
  for (i = 0; i < p->op->n_in; i++) {
    const cJSON *f = cJSON_IsArray(in) ? cJSON_GetArrayItem(in, i) : in;
    if (p->op->in_index[i]) { p->in[i] = LOWP_FMT_FP64; continue; }
    if ((st = get_format(&p->in[i], f, "in", NULL, err, errlen))) return st;
  }
  if ((st = get_format(&p->out, ITEM(d, "out"), "out", p->in[0].name, err, errlen))) return st;
  if ((j = ITEM(d, "eps"))) {
    if (!cJSON_IsNumber(j) || !(j->valuedouble > 0) || !isfinite(j->valuedouble))
      return bad(err, errlen, LOWP_EINVAL, "%s\"eps\" must be a finite number > 0", "");
    p->eps = j->valuedouble;
  }
  j = ITEM(d, "reduction");
  if (j && !(cJSON_IsString(j) && (!strcmp(j->valuestring, "mean") || !strcmp(j->valuestring, "none"))))
    return bad(err, errlen, LOWP_EINVAL, "%s\"reduction\" is \"none\" or \"mean\"", "");
  p->reduction_mean = cJSON_IsString(j) && !strcmp(j->valuestring, "mean");
  return LOWP_OK;
}

int lowp_capi_tol_data(char **json, const char *query, const double *const *in, double *atol,
                       double *rtol, size_t count, char *err, size_t errlen) {
  cJSON *d, *o;
  lowp_tol_query_t q;
  lowp_problem_t p;
  lowp_tol_t t;
  size_t shape[LOWP_OP_MAXDIM], want;
  int st, nd;
  if (err && errlen) err[0] = '\0';
  if (!json || !query || !in || !atol) return LOWP_EINVAL;
  *json = NULL;
  if ((st = tol_json(&d, query, err, errlen))) return st;
  if (!cJSON_IsNumber(ITEM(d, "k"))) cJSON_AddNumberToObject(d, "k", 1); /* from the shapes */
  if (!ITEM(d, "in") && cJSON_IsString(ITEM(d, "input")))
    cJSON_AddStringToObject(d, "in", ITEM(d, "input")->valuestring);
  st = tol_query(&q, d, 1, err, errlen);
  if (!st) st = tol_problem(&p, d, err, errlen);
  cJSON_Delete(d);
  if (st) return st;
  if (p.reduction_mean)
    return bad(err, errlen, LOWP_EUNSUPPORTED, "%sno tolerance derivation for xent's mean "
               "(reduction none only)", "");
  if ((st = lowp_op_shape(&p, p.op->n_in, shape, &nd, &want))) return st;
  if (want != count)
    return bad(err, errlen, LOWP_ESHAPE, "%s: the tolerance arrays have the wrong size", "");
  if ((st = arrays_in_format(&p, in, NULL, 0, 0, err, errlen))) return st;
  q.eps = p.eps; /* layernorm's rows: mean |x_i| / sqrt(var + eps) */
  if ((st = lowp_tol_data(&t, atol, rtol, &q, &p.dims, in, err, errlen))) return st;
  q.k = p.op->id == LOWP_OP_GEMM || p.op->id == LOWP_OP_GEMV || p.op->id == LOWP_OP_DOT
            ? p.dims.k : p.dims.n;
  o = lowp_tol_json(&t, &q);
  cJSON_AddBoolToObject(o, "data_aware", 1);
  *json = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return *json ? LOWP_OK : LOWP_ENOMEM;
}

int lowp_capi_exact(const char *desc, const double *const *in, double *out, size_t count,
                    char *err, size_t errlen) {
  lowp_problem_t p;
  lowp_spec_check_t ck;
  cJSON *d = NULL;
  size_t shape[LOWP_OP_MAXDIM], want;
  double *outs[LOWP_OP_MAXIO] = {0};
  int st, nd, j, to_out;
  if (err && errlen) err[0] = '\0';
  if (!desc || !in || !out) return LOWP_EINVAL;
  st = desc_parse(&d, &ck, &p, desc, 0, err, errlen);
  to_out = !st && ck.has_out; /* "out" given: rounded once to it, else to binary64 */
  lowp_spec_check_free(&ck);
  cJSON_Delete(d);
  if (st) return st;
  if ((st = lowp_op_shape(&p, p.op->n_in, shape, &nd, &want))) return st;
  if (want != count)
    return bad(err, errlen, LOWP_ESHAPE, "%s: the output array has the wrong size", "");
  if ((st = arrays_in_format(&p, in, NULL, 0, 0, err, errlen))) return st;
  outs[0] = out;
  for (j = 1; j < p.op->n_out; j++) {
    size_t c;
    if ((st = lowp_op_shape(&p, p.op->n_in + j, shape, &nd, &c))) break;
    if (!(outs[j] = malloc((c ? c : 1) * sizeof(double)))) { st = LOWP_ENOMEM; break; }
  }
  if (!st) st = lowp_op_exact(outs, NULL, in, &p, to_out ? &p.out : &LOWP_FMT_FP64, LOWP_RND_NE);
  for (j = 1; j < p.op->n_out; j++) free(outs[j]);
  if (st) return bad(err, errlen, st, "exact reference: %s", lowp_status_str(st));
  return LOWP_OK;
}

int lowp_capi_in_format(size_t *n_bad, size_t *first, const char *format, const double *x,
                        size_t n, char *err, size_t errlen) {
  lowp_format_t f;
  int st;
  if (err && errlen) err[0] = '\0';
  if (!n_bad || !first || !format || (!x && n)) return LOWP_EINVAL;
  if ((st = get_format(&f, NULL, "format", format, err, errlen))) return st;
  *n_bad = lowp_format_count_not_in(&f, x, n, first);
  return LOWP_OK;
}

int lowp_capi_tol_query(lowp_tol_query_t *q, const char *query, char *err, size_t errlen) {
  cJSON *d;
  int st;
  if (err && errlen) err[0] = '\0';
  if (!q || !query) return LOWP_EINVAL;
  if ((st = tol_json(&d, query, err, errlen))) return st;
  st = tol_query(q, d, 0, err, errlen);
  cJSON_Delete(d);
  return st;
}

int lowp_capi_decode(double *out, const void *bits, size_t n, int width, const char *format,
                     char *err, size_t errlen) {
  lowp_format_t f;
  size_t i;
  int st;
  if (!out || (!bits && n) || (width != 1 && width != 2 && width != 4)) return LOWP_EINVAL;
  if ((st = get_format(&f, NULL, "format", format, err, errlen))) return st;
  {
    /* the smallest container of the format's bits must be the given width:
       fp16 bits in uint16, e4m3 (and 4-bit formats) in uint8, fp32 in uint32 */
    int nbits = f.has_sign + f.ebits + f.precision - 1;
    int want = nbits <= 8 ? 1 : nbits <= 16 ? 2 : nbits <= 32 ? 4 : 8;
    if (want != width) {
      lowp_errf(err, errlen, 0, "%s bit patterns (%d bits) are held in %d-byte integers, not "
                "%d-byte ones", format, nbits, want, width);
      return LOWP_EFORMAT;
    }
  }
  for (i = 0; i < n; i++) {
    uint64_t b = width == 1 ? ((const uint8_t *)bits)[i]
               : width == 2 ? ((const uint16_t *)bits)[i] : ((const uint32_t *)bits)[i];
    if ((st = lowp_decode(&out[i], b, &f))) {
      lowp_errf(err, errlen, 0, "bit pattern 0x%llx is not a %s value",
                (unsigned long long)b, format);
      return st;
    }
  }
  return LOWP_OK;
}

void lowp_capi_free(char *p) { cJSON_free(p); }
