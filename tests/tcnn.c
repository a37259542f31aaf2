/* tcnn -- the small CNN: forward against a direct convolution in fp64, gradients against finite differences, threads */

/*
 * Build: cmake --build build --target tcnn; run from the source root.
 *
 * Oracles (no code shared with kernels/train/cnn.c): (1) a forward pass
 * written from the definition, in binary64: direct 3x3 convolutions with
 * zero padding over a channels-last image, ReLU, 2x2 max pooling, the two
 * linear layers; the fp32 logits must agree to fp32 accuracy. (2) Central
 * finite differences of the fp64 loss of that oracle against the gradient
 * one SGD step applies (lr = 1, momentum 0: w_old - w_new), on dense
 * random images (with many zero pixels, conv 1 outputs that sum few
 * pixels lie within the step h of ReLU's kink and the difference quotient
 * is not the derivative; checked by hand: it converges to backprop as h
 * shrinks). (3) Training
 * steps with 1 and 2 threads give the same bytes; the same seed gives the
 * same network. (4) lowp_cnn_gemm_f32, every ISA copy, bit for bit against
 * its definition (b[j], then x[k] w[k][j] added in k order, one fp32
 * rounding each, terms with x == 0 skipped) written as a scalar loop.
 */

#include "cpu.h"
#include "train/cnn.h"
#include "rng/rng.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C1 = 3, C2 = 4, HID = 6, B = 3 };

/* w[l] is K x N input-major with k = (dy*3+dx)*C + c for convolutions and
   k = (y*7+x)*C2 + c for the first linear layer (channels-last flattening). */
static double oracle_loss(const lowp_cnn_t *m, const float *img, const uint8_t *lab, size_t nb,
                          double *logits) {
  static double a0[28][28][C1], p0[14][14][C1], a1[14][14][C2], p1[7][7][C2], h[HID], z[10];
  double loss = 0.0;
  size_t s;
  int y, x, c, o, dy, dx, j, k;
  for (s = 0; s < nb; s++) {
    const float *im = img + s * 784;
    for (y = 0; y < 28; y++)
      for (x = 0; x < 28; x++)
        for (o = 0; o < C1; o++) {
          double v = m->b[0][o];
          for (dy = 0; dy < 3; dy++)
            for (dx = 0; dx < 3; dx++) {
              int yy = y + dy - 1, xx = x + dx - 1;
              if (yy >= 0 && yy < 28 && xx >= 0 && xx < 28)
                v += (double)im[yy * 28 + xx] * m->w[0][(dy * 3 + dx) * C1 + o];
            }
          a0[y][x][o] = v > 0 ? v : 0;
        }
    for (y = 0; y < 14; y++)
      for (x = 0; x < 14; x++)
        for (c = 0; c < C1; c++)
          p0[y][x][c] = fmax(fmax(a0[2 * y][2 * x][c], a0[2 * y][2 * x + 1][c]),
                             fmax(a0[2 * y + 1][2 * x][c], a0[2 * y + 1][2 * x + 1][c]));
    for (y = 0; y < 14; y++)
      for (x = 0; x < 14; x++)
        for (o = 0; o < C2; o++) {
          double v = m->b[1][o];
          for (dy = 0; dy < 3; dy++)
            for (dx = 0; dx < 3; dx++)
              for (c = 0; c < C1; c++) {
                int yy = y + dy - 1, xx = x + dx - 1;
                if (yy >= 0 && yy < 14 && xx >= 0 && xx < 14)
                  v += p0[yy][xx][c] * m->w[1][((dy * 3 + dx) * C1 + c) * C2 + o];
              }
          a1[y][x][o] = v > 0 ? v : 0;
        }
    for (y = 0; y < 7; y++)
      for (x = 0; x < 7; x++)
        for (c = 0; c < C2; c++)
          p1[y][x][c] = fmax(fmax(a1[2 * y][2 * x][c], a1[2 * y][2 * x + 1][c]),
                             fmax(a1[2 * y + 1][2 * x][c], a1[2 * y + 1][2 * x + 1][c]));
    for (j = 0; j < HID; j++) {
      double v = m->b[2][j];
      for (y = 0; y < 7; y++)
        for (x = 0; x < 7; x++)
          for (c = 0; c < C2; c++) v += p1[y][x][c] * m->w[2][((y * 7 + x) * C2 + c) * HID + j];
      h[j] = v > 0 ? v : 0;
    }
    {
      double mx = -INFINITY, se = 0.0;
      for (j = 0; j < 10; j++) {
        double v = m->b[3][j];
        for (k = 0; k < HID; k++) v += h[k] * m->w[3][k * 10 + j];
        z[j] = v;
        if (logits) logits[s * 10 + j] = v;
        if (v > mx) mx = v;
      }
      for (j = 0; j < 10; j++) se += exp(z[j] - mx);
      loss += log(se) + mx - z[lab[s]];
    }
  }
  return loss / (double)nb;
}

/* (4): shapes that reach the four-row loops over pairs of blocks (AVX2: N >= 16, the last one to three
   rows of a group of 8 then over four-block columns by the two-row loop) or four blocks (AVX-512:
   N >= 64), the four-row loop (N = 8, 16, 24), the last block over the last JB columns (N = 24, 42, 49,
   72, 136), the scalar loop (N = 3, 10 on AVX2 and AVX-512; 3 on the baseline) and row counts that
   are not multiples of 4 or 8 (29 and its first 27 rows: a group of 8 that ends one row past four,
   and three);
   inputs with zeros of both signs, and biases of -0 (a skipped term leaves -0, an added +0 would not).
   Rows 0-12 hold no zero but one -0 in row 6 (its last term: found past the first 64 values of its
   four rows), so four rows without zeros run the test-free loop (_rows4w) and a group with one zero
   the two-row loop; rows 13-27 are half zeros, row 28 all zeros (y = b, -0 kept).
   Three weight sets (cnn.c's zeros_addable): biases with -0 (zero terms skipped by tests); no -0 bias
   and finite weights (every term added by the dense loops, zeros included: the same bits); and no -0
   bias with an inf and a NaN weight (0 inf would be a NaN: skipped by tests again). */
static void gemm_bits(void) {
  const lowp_isa_t isas[] = {LOWP_ISA_AVX512, LOWP_ISA_AVX2, LOWP_ISA_GENERIC};
  const int Ns[] = {3, 8, 10, 16, 24, 42, 49, 64, 72, 136}, Ks[] = {1, 9, 37};
  enum { ROWS = 29, KMAX = 37, NMAX = 136 };
  static float x[ROWS * KMAX], w[KMAX * NMAX], b[NMAX], y[ROWS * NMAX], ref[ROWS * NMAX];
  lowp_rng_t r;
  size_t v, i, bad = 0, tried = 0;
  int a, c, t, j, k;
  int set;
  lowp_rng_init(&r, lowp_test_seed(), 78);
  for (set = 0; set < 3; set++) {
  for (i = 0; i < KMAX * NMAX; i++) w[i] = (float)lowp_rng_normal(&r);
  for (i = 0; i < NMAX; i++) b[i] = i % 3 || set ? (float)lowp_rng_normal(&r) : -0.0f;
  if (set == 2) w[5] = INFINITY, w[KMAX * NMAX - 1] = NAN; /* row 0, column 5; the last row, column */
  for (v = 0; v < sizeof isas / sizeof isas[0]; v++) {
    lowp_cpu_isa_limit(isas[v]);
    for (a = 0; a < (int)(sizeof Ns / sizeof Ns[0]); a++)
      for (c = 0; c < (int)(sizeof Ks / sizeof Ks[0]); c++) {
        const int N = Ns[a], K = Ks[c];
        for (t = 0; t < ROWS; t++)
          for (k = 0; k < K; k++) {
            unsigned u = (unsigned)(lowp_rng_next(&r) % 4);
            float g = (float)lowp_rng_normal(&r);
            if (t < 13) x[t * K + k] = t == 6 && k == K - 1 ? -0.0f : g;
            else x[t * K + k] = t == ROWS - 1 || u == 0 ? 0.0f : u == 1 ? -0.0f : g;
          }
        for (t = 0; t < ROWS; t++)
          for (j = 0; j < N; j++) {
            float acc = b[j];
            for (k = 0; k < K; k++) {
              float p = x[t * K + k] * w[k * N + j];
              if (x[t * K + k] != 0.0f) acc += p;
            }
            ref[t * N + j] = acc;
          }
        for (t = ROWS; t >= ROWS - 2; t -= 2) { /* a last group of 8 with 5 rows, then 3 */
          memset(y, 0xff, sizeof y); /* NaNs: an output left unwritten fails */
          lowp_cnn_gemm_f32(y, x, (size_t)t, K, N, w, b);
          tried++;
          if (memcmp(y, ref, (size_t)t * N * sizeof *y) != 0 && bad++ < 3)
            lowp_test_check(0, "fp32 GEMM, weight set %d, ISA limit %d, K %d, N %d, rows %d: not the "
                            "definition's bits", set, (int)isas[v], K, N, t);
        }
      }
  }
  }
  lowp_cpu_isa_limit(LOWP_ISA_AVX512);
  lowp_test_check(bad == 0, "fp32 GEMM bit for bit on every ISA copy (%zu of %zu shapes off)", bad, tried);
}

static void make_batch(float *img, uint8_t *lab) {
  lowp_rng_t r;
  size_t i;
  lowp_rng_init(&r, lowp_test_seed(), 77);
  for (i = 0; i < B * 784; i++) img[i] = (float)lowp_rng_uniform(&r); /* dense: see below */
  for (i = 0; i < B; i++) lab[i] = (uint8_t)(lowp_rng_next(&r) % 10);
}

int main(void) {
  static float img[B * 784];
  uint8_t lab[B];
  lowp_cnn_t m, g, t1, t2;
  float logits[B * 10];
  double ref[B * 10], loss, worst = 0.0;
  int l, st;
  size_t i;

  lowp_test_start("tcnn");
  make_batch(img, lab);
  st = lowp_cnn_init(&m, C1, C2, HID, lowp_test_seed());
  lowp_test_check(st == LOWP_OK, "init");
  lowp_test_check(m.K[0] == 9 && m.K[1] == 9 * C1 && m.K[2] == 49 * C2 && m.K[3] == HID && m.N[3] == 10,
                  "GEMM shapes");
  lowp_test_check(lowp_cnn_nparams(&m) == (size_t)(9 * C1 + C1 + 9 * C1 * C2 + C2 + 49 * C2 * HID + HID +
                                                   HID * 10 + 10), "parameter count");
  /* biases nonzero so that they are tested too */
  for (l = 0; l < LOWP_CNN_LAYERS; l++)
    for (i = 0; i < (size_t)m.N[l]; i++) m.b[l][i] = 0.013f * (float)(i % 5) - 0.011f;

  /* (1) forward */
  st = lowp_cnn_forward(logits, img, B, &m, NULL, NULL);
  oracle_loss(&m, img, lab, B, ref);
  for (i = 0; i < B * 10; i++) {
    double e = fabs(logits[i] - ref[i]) / (1.0 + fabs(ref[i]));
    if (e > worst) worst = e;
  }
  lowp_test_check(st == LOWP_OK && worst < 1e-5, "forward vs fp64 direct convolution: worst error %.3g", worst);

  /* (2) gradients: one SGD step with lr 1, momentum 0 subtracts the gradient */
  lowp_cnn_clone(&g, &m);
  st = lowp_cnn_sgd_step(&g, &loss, img, lab, B, 1.0f, 0.0f);
  lowp_test_check(st == LOWP_OK && fabs(loss - oracle_loss(&m, img, lab, B, NULL)) < 1e-5,
                  "reported loss %.9g vs oracle", loss);
  for (l = 0; l < LOWP_CNN_LAYERS; l++) {
    size_t n = (size_t)m.K[l] * m.N[l], bad = 0, tried = 0, step = n / 7 + 1;
    double gmax = 0.0;
    for (i = 0; i < n; i++) gmax = fmax(gmax, fabs((double)m.w[l][i] - g.w[l][i]));
    for (i = 0; i < n; i += step) {
      float w0 = m.w[l][i];
      double h = 1e-4, lp, lm, fd, an = (double)m.w[l][i] - (double)g.w[l][i];
      m.w[l][i] = (float)(w0 + h);
      lp = oracle_loss(&m, img, lab, B, NULL);
      m.w[l][i] = (float)(w0 - h);
      lm = oracle_loss(&m, img, lab, B, NULL);
      fd = (lp - lm) / ((double)(float)(w0 + h) - (double)(float)(w0 - h));
      m.w[l][i] = w0;
      tried++;
      if (fabs(fd - an) > 2e-3 * gmax + 1e-5 && bad++ < 3)
        lowp_test_check(0, "layer %d weight %zu: backprop %.6g, finite difference %.6g", l, i, an, fd);
    }
    lowp_test_check(bad == 0 && gmax > 0, "layer %d: %zu of %zu gradients off (largest %.3g)", l, bad, tried, gmax);
  }
  lowp_cnn_free(&g);

  /* (3) threads and seeds */
  lowp_cnn_clone(&t1, &m);
  lowp_cnn_clone(&t2, &m);
  omp_set_num_threads(1);
  for (i = 0; i < 3; i++) lowp_cnn_sgd_step(&t1, &loss, img, lab, B, 0.05f, 0.9f);
  omp_set_num_threads(2);
  for (i = 0; i < 3; i++) lowp_cnn_sgd_step(&t2, &loss, img, lab, B, 0.05f, 0.9f);
  for (st = 0, l = 0; l < LOWP_CNN_LAYERS; l++)
    st |= memcmp(t1.w[l], t2.w[l], (size_t)m.K[l] * m.N[l] * sizeof(float)) |
          memcmp(t1.b[l], t2.b[l], (size_t)m.N[l] * sizeof(float));
  lowp_test_check(st == 0, "three steps with 1 and 2 threads give the same bytes");
  lowp_cnn_free(&t1);
  lowp_cnn_free(&t2);
  lowp_cnn_init(&t1, C1, C2, HID, lowp_test_seed());
  lowp_cnn_init(&t2, C1, C2, HID, lowp_test_seed() + 1);
  lowp_test_check(memcmp(t1.w[1], t2.w[1], 9 * C1 * C2 * sizeof(float)) != 0, "other seed, other weights");
  lowp_cnn_free(&t2);
  lowp_cnn_init(&t2, C1, C2, HID, lowp_test_seed());
  lowp_test_check(memcmp(t1.w[2], t2.w[2], 49 * C2 * HID * sizeof(float)) == 0, "same seed, same weights");
  lowp_test_check(lowp_cnn_init(&g, 0, 4, 4, 1) == LOWP_EINVAL, "zero channels refused");
  lowp_test_check(lowp_cnn_sgd_step(&t1, &loss, img, (const uint8_t *)"\x0a\x00\x00", B, 0.1f, 0.f) ==
                      LOWP_EINVAL, "label 10 refused");
  lowp_cnn_free(&t1);
  lowp_cnn_free(&t2);
  lowp_cnn_free(&m);
  gemm_bits();
  return lowp_test_end();
}
