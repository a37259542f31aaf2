/* fp8q_data -- Fashion-MNIST for exercise 6: the IDX files (lib/io/idx), checked, as fp32 batches */

#include "fp8q.h"

#include "status.h"

#include <stdio.h>
#include <string.h>

const char *const fq_file_names[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                      "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};

int fq_data_path(char *out, size_t len, const char *dir, const char *name) {
  FILE *f;
  snprintf(out, len, "%s/%s", dir, name);
  if ((f = fopen(out, "rb"))) { fclose(f); return 1; }
  snprintf(out, len, "%s/%s.gz", dir, name);
  if ((f = fopen(out, "rb"))) { fclose(f); return 1; }
  return 0;
}

/* The labels file of a split, checked against its images. */
static int load_labels(fq_data_t *d, const char *dir, int test, char *err, size_t errlen) {
  char path[4096];
  size_t i;
  int st;
  fq_data_path(path, sizeof path, dir, fq_file_names[2 * test + 1]);
  st = lowp_idx_read(&d->lab, path, err, errlen);
  if (st == LOWP_OK && (d->lab.type != LOWP_IDX_U8 || d->lab.ndims != 1 || d->lab.dims[0] != d->img.dims[0])) {
    snprintf(err, errlen, "%s: expected %u uint8 labels", path, d->img.dims[0]);
    return LOWP_ESHAPE;
  }
  for (i = 0; st == LOWP_OK && i < d->lab.count; i++)
    if (((const uint8_t *)d->lab.data)[i] >= FQ_NCLASS) {
      snprintf(err, errlen, "%s: label %u at index %zu is not a class 0..9", path,
               ((const uint8_t *)d->lab.data)[i], i);
      return LOWP_EFILE;
    }
  return st;
}

void fq_load_split(const lowp_run_t *r, const char *dir, fq_data_t *d, int test) {
  char path[4096], err[4400], why[4600];
  int st;
  memset(d, 0, sizeof *d);
  fq_data_path(path, sizeof path, dir, fq_file_names[2 * test]);
  st = lowp_idx_read(&d->img, path, err, sizeof err);
  if (st == LOWP_OK && (d->img.type != LOWP_IDX_U8 || d->img.ndims != 3 || d->img.dims[1] != 28 ||
                        d->img.dims[2] != 28)) {
    st = LOWP_ESHAPE;
    snprintf(err, sizeof err, "%s: expected uint8 images of shape N x 28 x 28", path);
  }
  if (st == LOWP_OK) st = load_labels(d, dir, test, err, sizeof err);
  if (st != LOWP_OK) {
    snprintf(why, sizeof why, "%s (%s)", err, lowp_status_str(st));
    lowp_run_bad_param(r, "data", why);
  }
  d->n = d->img.dims[0];
}

void fq_free_split(fq_data_t *d) {
  lowp_idx_free(&d->img);
  lowp_idx_free(&d->lab);
}

void fq_gather(float *x, uint8_t *y, const fq_data_t *d, const size_t *idx, size_t first, size_t n) {
  const uint8_t *px = d->img.data, *lb = d->lab.data;
  size_t i, k;
  for (i = 0; i < n; i++) {
    size_t s = idx ? idx[first + i] : first + i;
    for (k = 0; k < 784; k++) x[i * 784 + k] = (float)px[s * 784 + k] / 255.0f;
    if (y) y[i] = lb[s];
  }
}

int fq_label(const fq_data_t *d, size_t i) { return ((const uint8_t *)d->lab.data)[i]; }
