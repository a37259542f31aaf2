/* lowp_tensor_subject -- tensors a framework saved (.npy, .safetensors) as a pipeline subject */

/*
 * The inputs and the framework's outputs are read once, when the subject
 * opens: .npy (<f2 <f4 <f8; <u2 and |u1 raw bits of a format the reference
 * names; <i4 <i8 class indices) or .safetensors (BF16 F16 F32 F64 F8_E4M3
 * F8_E5M2; I32 I64 indices), told apart by their first bytes. The data
 * decide what the check leaves open: an fp32 file is fp32 data, the dims
 * come from the input shapes (lowp_op_dims_infer), the output format from
 * the first output. Where the check names a format, every value of the
 * file must be a value of it (a file of fp32 numbers that are bf16 values
 * can be checked as bf16). Running the subject returns the saved outputs.
 */

#include "check/subject.h"
#include "check/pipeline.h"
#include "check/tensors_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "io/escape.h"
#include "status.h"

/* ------------------------------------------------------ private helpers */

typedef struct {
  int n_in, n_out;
  double *in[LOWP_OP_MAXIO], *out[LOWP_OP_MAXIO];
  double *data[LOWP_OP_MAXIO]; /* a block-scaled input quantized by its rule: the file's values */
  size_t in_count[LOWP_OP_MAXIO], out_count[LOWP_OP_MAXIO];
} tctx_t;

/* one tensor read: values, shape, the format its dtype means (or NULL for
   indices) */
typedef struct {
  double *v;
  size_t shape[LOWP_OP_MAXDIM + 4], count;
  int ndim, index;
  lowp_format_t fmt;
} loaded_t;


const char *lowp_tensor_npy_msg(int st) {
  switch (st) {
  case LOWP_EFILE: return "not a .npy file, or its header is corrupt or its data truncated";
  case LOWP_EUNSUPPORTED: return "a .npy dtype or layout lowp does not read (<f2 <f4 <f8 <u2 |u1 <i4 <i8, C order)";
  case LOWP_EIO: return "cannot open or read it";
  case LOWP_ENOMEM: return "the array would not fit in memory";
  case LOWP_EINVAL: return "raw bits (<u2, |u1) need \"format\" naming a format of that width, and every pattern must be a value of it";
  case LOWP_ERANGE: return "an integer beyond 2^53";
  default: return lowp_status_str(st);
  }
}

void lowp_tensor_label(char *out, size_t len, const char *path, const char *tensor) {
  if (tensor) snprintf(out, len, "%.200s[%.60s]", path, tensor);
  else snprintf(out, len, "%.200s", path);
}

/* "file" or "file[tensor]" for messages */
static void label(char *out, size_t len, const lowp_tensor_ref_t *r) {
  lowp_tensor_label(out, len, r->path, r->tensor);
}

int lowp_tensor_is_safetensors(const char *path) {
  FILE *f = lowp_fopen_regular(path); /* a FIFO would block here, and be read twice (io/atomic.h) */
  unsigned char b[9];
  size_t got;
  if (!f) return 0;
  got = fread(b, 1, sizeof b, f);
  fclose(f);
  /* .npy files start with \x93NUMPY; safetensors with a length then '{' */
  return got == 9 && b[8] == '{' && b[0] != 0x93;
}

static int load(loaded_t *L, const lowp_tensor_ref_t *r, char *err, size_t errlen) {
  char lab[300], e2[300];
  lowp_format_t named;
  int st, have_named = 0;
  memset(L, 0, sizeof *L);
  label(lab, sizeof lab, r);
  if (r->format) {
    if (lowp_format_parse(&named, r->format, e2, sizeof e2))
      return lowp_errf(err, errlen, LOWP_EINVAL, "%s: format '%.40s': %s", lab, r->format, e2);
    have_named = 1;
  }
  if (lowp_tensor_is_safetensors(r->path)) {
    lowp_st_tensor_t info;
    st = lowp_st_read(r->path, r->tensor, &info, &L->v, 0, e2, sizeof e2);
    if (st) return lowp_errf(err, errlen, st, "%s: %s", lab, e2);
    L->ndim = info.ndim;
    memcpy(L->shape, info.shape, sizeof info.shape);
    L->count = info.count;
    if (lowp_st_format(info.dtype)) L->fmt = *lowp_st_format(info.dtype);
    else L->index = 1;
  } else {
    lowp_npy_info_t info;
    if (r->tensor)
      return lowp_errf(err, errlen, LOWP_EINVAL, "%s: a tensor name is given but %s is not a .safetensors file",
                    lab, r->path);
    st = lowp_npy_read(r->path, &info, &L->v, have_named ? &named : NULL, 0);
    if (st) return lowp_errf(err, errlen, st, "%s: %s", lab, lowp_tensor_npy_msg(st));
    L->ndim = info.ndim;
    memcpy(L->shape, info.shape, sizeof info.shape);
    L->count = info.count;
    switch (info.dtype) {
    case LOWP_NPY_F2: L->fmt = LOWP_FMT_FP16; break;
    case LOWP_NPY_F4: L->fmt = LOWP_FMT_FP32; break;
    case LOWP_NPY_F8: L->fmt = LOWP_FMT_FP64; break;
    case LOWP_NPY_U1:
    case LOWP_NPY_U2: L->fmt = named; break;
    default: L->index = 1;
    }
  }
  if (have_named && !L->index) {
    /* the values must be values of the format the check names */
    size_t i;
    for (i = 0; i < L->count; i++) {
      double y;
      if (isnan(L->v[i])) continue;
      lowp_round_f64(&y, L->v[i], &named, NULL, LOWP_RND_NE);
      if (y != L->v[i]) {
        st = lowp_errf(err, errlen, LOWP_EINVAL, "%s: element %zu = %.17g is not a %s value", lab, i, L->v[i],
                    named.name ? named.name : r->format);
        free(L->v);
        L->v = NULL;
        return st;
      }
    }
    L->fmt = named;
  }
  return LOWP_OK;
}

static int tensor_run(const lowp_subject_t *s, double *const *out, const double *const *in,
                      const lowp_problem_t *p, char *err, size_t errlen) {
  const tctx_t *x = s->ctx;
  int j;
  size_t sh[LOWP_OP_MAXDIM], cnt;
  int nd;
  (void)in;
  for (j = 0; j < x->n_out; j++) {
    if (s->absent & (1u << j)) continue;
    if (lowp_op_shape(p, p->op->n_in + j, sh, &nd, &cnt) || cnt != x->out_count[j])
      return lowp_errf(err, errlen, LOWP_ESHAPE, "saved output %d has %zu values, the problem %zu", j,
                    x->out_count[j], cnt);
    if (x->out[j]) memcpy(out[j], x->out[j], cnt * sizeof *out[j]);
  }
  return LOWP_OK;
}

static void tensor_release(lowp_subject_t *s) {
  tctx_t *x = s->ctx;
  int j;
  if (!x) return;
  for (j = 0; j < LOWP_OP_MAXIO; j++) {
    free(x->in[j]);
    free(x->out[j]);
    free(x->data[j]);
  }
  free(x);
  s->ctx = NULL;
}

/* ----------------------------------------------------------- public API */

int lowp_tensor_subject_open(lowp_subject_t *s, const lowp_tensor_ref_t *inputs,
                             const lowp_tensor_ref_t *outputs, lowp_problem_t *p, char *err,
                             size_t errlen) {
  const lowp_op_t *op;
  loaded_t L;
  tctx_t *x;
  const size_t *shapes[LOWP_OP_MAXIO];
  size_t shp[LOWP_OP_MAXIO][LOWP_OP_MAXDIM + 4];
  int ndims[LOWP_OP_MAXIO], i, st = LOWP_OK;
  char lab[300];
  if (err && errlen) err[0] = '\0';
  if (!s || !inputs || !outputs || !p || !p->op) return LOWP_EINVAL;
  memset(s, 0, sizeof *s);
  op = p->op;
  s->absent = 0;
  x = calloc(1, sizeof *x);
  if (!x) return LOWP_ENOMEM;
  x->n_in = op->n_in;
  x->n_out = op->n_out;
  s->ctx = x;
  s->release = tensor_release;
  for (i = 0; i < op->n_in && !st; i++) {
    label(lab, sizeof lab, &inputs[i]);
    if (inputs[i].scales_path) { /* block-scaled, with companion scales */
      if (!p->has_bin[i] || op->in_index[i]) {
        st = lowp_errf(err, errlen, LOWP_EINVAL, "%s: \"scales\" names a companion scale tensor, but the check's "
                       "\"in\" for %s's %s is not a block-scaled format (\"mxfp8_e4m3\", \"nvfp4\", ...)", lab,
                       op->name, op->in_names[i]);
        break;
      }
      st = lowp_tensor_bs_load(&x->in[i], shp[i], &ndims[i], &x->in_count[i], &inputs[i], &p->bin[i],
                               op->id == LOWP_OP_GEMM && i == 1, err, errlen);
      if (!st && ndims[i] > LOWP_OP_MAXDIM)
        st = lowp_errf(err, errlen, LOWP_ESHAPE, "%s: %d dimensions, %s's %s has at most %d", lab, ndims[i],
                       op->name, op->in_names[i], LOWP_OP_MAXDIM);
      shapes[i] = shp[i];
      continue;
    }
    if (inputs[i].tensor_scale > 0 || inputs[i].ts_path || inputs[i].scale_layout) {
      st = lowp_errf(err, errlen, LOWP_EINVAL, "%s: \"tensor_scale\" and \"scale_layout\" go with \"scales\"",
                     lab);
      break;
    }
    st = load(&L, &inputs[i], err, errlen);
    if (st) break;
    if (L.ndim > LOWP_OP_MAXDIM) {
      st = lowp_errf(err, errlen, LOWP_ESHAPE, "%s: %d dimensions, %s's %s has at most %d", lab, L.ndim,
                  op->name, op->in_names[i], LOWP_OP_MAXDIM);
      free(L.v);
      break;
    }
    x->in[i] = L.v;
    x->in_count[i] = L.count;
    memcpy(shp[i], L.shape, sizeof shp[i]);
    shapes[i] = shp[i];
    ndims[i] = L.ndim;
    if (op->in_index[i]) {
      size_t k;
      for (k = 0; k < L.count; k++)
        if (!(L.v[k] >= 0) || L.v[k] != floor(L.v[k])) {
          st = lowp_errf(err, errlen, LOWP_EINVAL, "%s: %s[%zu] = %g is not a class index", lab,
                      op->in_names[i], k, L.v[k]);
          break;
        }
      p->in[i] = LOWP_FMT_FP64;
      continue;
    }
    if (L.index) {
      st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: integers, but %s's %s holds values (save floats)",
                  lab, op->name, op->in_names[i]);
      break;
    }
    if (!p->in[i].name) p->in[i] = L.fmt;
    else if (memcmp(&p->in[i], &L.fmt, sizeof L.fmt) && !inputs[i].format) {
      /* the check names another format: the file's values must be values of it */
      size_t k;
      for (k = 0; k < L.count && !st; k++) {
        double y;
        if (isnan(L.v[k])) continue;
        lowp_round_f64(&y, L.v[k], &p->in[i], NULL, LOWP_RND_NE);
        if (y != L.v[k])
          st = lowp_errf(err, errlen, LOWP_EINVAL, "%s: element %zu = %.17g is not a %s value (the check's \"in\")",
                      lab, k, L.v[k], p->in[i].name);
      }
    }
  }
  if (!st) {
    p->dims.batch = p->dims.m = p->dims.n = p->dims.k = 1;
    st = lowp_op_dims_infer(p, shapes, ndims, err, errlen);
  }
  if (!st) st = lowp_tensor_check_indices(p, (const double *const *)x->in, err, errlen);
  /* a block-scaled input without scales: the file's fp32 data quantized by
     the format's rule, as generated inputs are */
  for (i = 0; i < op->n_in && !st; i++) {
    if (!p->has_bin[i] || op->in_index[i] || inputs[i].scales_path) continue;
    x->data[i] = x->in[i];
    x->in[i] = malloc((x->in_count[i] + 1) * sizeof *x->in[i]);
    st = x->in[i] ? lowp_check_bs_qdq(x->in[i], x->data[i], x->in_count[i], p, i) : LOWP_ENOMEM;
    if (st) {
      label(lab, sizeof lab, &inputs[i]);
      st = lowp_errf(err, errlen, st, "%s: quantizing to %s: %s", lab, p->bin[i].name, lowp_status_str(st));
    }
  }
  for (i = 0; i < op->n_out && !st; i++) {
    size_t sh[LOWP_OP_MAXDIM], cnt;
    int nd;
    if (!outputs[i].path) {
      if (i == 0) st = lowp_errf(err, errlen, LOWP_EINVAL, "tensors: no file for %s", op->out_names[0]);
      else s->absent |= 1u << i; /* not saved: left out of the measurement */
      continue;
    }
    label(lab, sizeof lab, &outputs[i]);
    st = load(&L, &outputs[i], err, errlen);
    if (st) break;
    x->out[i] = L.v;
    x->out_count[i] = L.count;
    if (L.index) {
      st = lowp_errf(err, errlen, LOWP_EUNSUPPORTED, "%s: integers, but %s's %s holds values", lab, op->name,
                  op->out_names[i]);
      break;
    }
    if (L.ndim > LOWP_OP_MAXDIM || !lowp_op_shape_matches(p, op->n_in + i, L.shape, L.ndim)) {
      char want[80] = "", got[80] = "";
      size_t u = 0;
      int d;
      lowp_op_shape(p, op->n_in + i, sh, &nd, &cnt);
      for (d = 0; d < nd; d++) u += (size_t)snprintf(want + u, sizeof want - u, "%s%zu", d ? ", " : "", sh[d]);
      for (u = 0, d = 0; d < L.ndim && d < 8; d++) u += (size_t)snprintf(got + u, sizeof got - u, "%s%zu", d ? ", " : "", L.shape[d]);
      st = lowp_errf(err, errlen, LOWP_ESHAPE, "%s: %s has shape (%s), the inputs give %s (%s)", lab,
                  op->out_names[i], got, op->out_names[i], want);
      break;
    }
    if (i == 0 && !p->out.name) p->out = L.fmt;
  }
  if (st) {
    lowp_subject_close(s);
    return st;
  }
  snprintf(s->name, sizeof s->name, "tensors %.200s", outputs[0].path);
  s->kind = "tensors";
  s->run = tensor_run;
  return LOWP_OK;
}

int lowp_tensor_check_indices(const lowp_problem_t *p, const double *const *in, char *err,
                              size_t errlen) {
  int i;
  if (!p || !p->op || !in) return LOWP_EINVAL;
  for (i = 0; i < p->op->n_in; i++) {
    size_t sh[LOWP_OP_MAXDIM], cnt = 0, k;
    int nd;
    if (!p->op->in_index[i] || !in[i]) continue;
    if (lowp_op_shape(p, i, sh, &nd, &cnt)) return LOWP_EINVAL;
    for (k = 0; k < cnt; k++)
      if (!(in[i][k] >= 0) || in[i][k] != floor(in[i][k]) || in[i][k] >= (double)p->dims.n)
        return lowp_errf(err, errlen, LOWP_EINVAL, "%s[%zu] = %g is not a class index in [0, %zu)",
                         p->op->in_names[i], k, in[i][k], p->dims.n);
  }
  return LOWP_OK;
}

const double *const *lowp_tensor_subject_data(const lowp_subject_t *s) {
  const tctx_t *x;
  if (!s || !s->ctx || s->run != tensor_run) return NULL;
  x = s->ctx;
  return (const double *const *)x->data;
}

const double *const *lowp_tensor_subject_outputs(const lowp_subject_t *s) {
  const tctx_t *x;
  if (!s || !s->ctx || s->run != tensor_run) return NULL;
  x = s->ctx;
  return (const double *const *)x->out;
}

const double *const *lowp_tensor_subject_inputs(const lowp_subject_t *s) {
  const tctx_t *x;
  if (!s || !s->ctx || s->run != tensor_run) return NULL;
  x = s->ctx;
  return (const double *const *)x->in;
}
