/* gemm_group of kernels/train/cnn.c (rows in groups; see there), compiled
   once per instruction set: included with CNN_NAME (the function's name),
   CNN_ATTR (a target attribute, or nothing) and JB (output columns per
   vector: 16 for AVX-512's zmm, 8 for AVX2's ymm, 4 for the baseline's
   xmm; a vector wider than the registers, as 16 lanes on AVX2, GCC keeps
   in memory, 2.5 times slower) defined. Each output's operations are the
   same whatever JB: b[j], then x[k] w[k][j] added in k order (terms with
   x == 0 skipped), one fp32 rounding each. No include guard. */

#define CNN_CAT2(a, b) a##b
#define CNN_CAT(a, b) CNN_CAT2(a, b)
#define CNN_VT CNN_CAT(cnn_v, JB)
#if defined(__GNUC__) || defined(__clang__)
/* JB lanes, each lane's multiply and add its own fp32 operations (GCC and
   clang vector extensions) */
typedef float CNN_VT __attribute__((vector_size(JB * sizeof(float))));
#endif

#if defined(__GNUC__) || defined(__clang__)
typedef int CNN_CAT(CNN_VT, i) __attribute__((vector_size(JB * sizeof(float))));
/* a + xk w, or a where xk == 0 (the term skipped, as in the one-row loop),
   chosen by a mask rather than a branch: the zeros of ReLU's outputs fall
   where a branch predictor cannot follow them */
CNN_ATTR static inline CNN_VT CNN_CAT(CNN_NAME, _madd)(CNN_VT a, float xk, CNN_VT wv) {
  const CNN_VT xv = xk + (CNN_VT){0}, s = a + xv * wv;
  const CNN_CAT(CNN_VT, i) keep = xv == (CNN_VT){0};
  return (CNN_VT)(((CNN_CAT(CNN_VT, i))s & ~keep) | ((CNN_CAT(CNN_VT, i))a & keep));
}
/* Columns [j0, j1) (whole blocks of JB) of four rows t..t+3 at once, one
   block at a time: four independent chains of additions sharing each load
   of w, where a row has fewer than four blocks left (N = 8 or 16, the
   CNN's convolutions, whose single chain per row waited on the adder's
   latency). Each output's operations are those of the one-row loop. */
CNN_ATTR static void CNN_CAT(CNN_NAME, _rows4)(float *y, const float *x, size_t t, int j0, int j1, int K, int N,
                                              const float *w, const float *b) {
  const float *x0 = x + t * K, *x1 = x0 + K, *x2 = x1 + K, *x3 = x2 + K;
  float *y0 = y + t * N;
  int k;
  for (; j0 + JB <= j1; j0 += JB) {
    CNN_VT a0, a1, a2, a3, wv;
    CNN_VLOAD(a0, b + j0);
    a1 = a0;
    a2 = a0;
    a3 = a0;
    for (k = 0; k < K; k++) {
      CNN_VLOAD(wv, w + (size_t)k * N + j0);
      a0 = CNN_CAT(CNN_NAME, _madd)(a0, x0[k], wv);
      a1 = CNN_CAT(CNN_NAME, _madd)(a1, x1[k], wv);
      a2 = CNN_CAT(CNN_NAME, _madd)(a2, x2[k], wv);
      a3 = CNN_CAT(CNN_NAME, _madd)(a3, x3[k], wv);
    }
    memcpy(y0 + j0, &a0, sizeof a0);
    memcpy(y0 + N + j0, &a1, sizeof a1);
    memcpy(y0 + 2 * (size_t)N + j0, &a2, sizeof a2);
    memcpy(y0 + 3 * (size_t)N + j0, &a3, sizeof a3);
  }
}
/* Columns [0, jw) (groups of four blocks) of two rows t, t+1 at once (two = 0: row t alone, a
   group's last odd row): eight independent chains of additions sharing each load of w, where one
   row's four chains wait on the adder's latency (the wide layers: the ViT's, the CNN's fc1). Each
   output's operations are those of the one-row loop: b[j], then x[k] w[k][j] added in k order where
   x[k] != 0, one fp32 rounding each. */
CNN_ATTR static void CNN_CAT(CNN_NAME, _rows2)(float *y, const float *x, size_t t, int two, int jw, int K,
                                              int N, const float *w, const float *b) {
  const float *x0 = x + t * K, *x1 = two ? x0 + K : x0;
  float *y0 = y + t * N, *y1 = y0 + N;
  int j0, k;
  for (j0 = 0; j0 + 4 * JB <= jw; j0 += 4 * JB) {
    CNN_VT a0, a1, a2, a3, c0, c1, c2, c3, w0, w1, w2, w3;
    CNN_VLOAD(a0, b + j0);
    CNN_VLOAD(a1, b + j0 + JB);
    CNN_VLOAD(a2, b + j0 + 2 * JB);
    CNN_VLOAD(a3, b + j0 + 3 * JB);
    c0 = a0;
    c1 = a1;
    c2 = a2;
    c3 = a3;
    for (k = 0; k < K; k++) {
      const float u = x0[k], v = two ? x1[k] : 0.0f, *wr = w + (size_t)k * N + j0;
      if (u == 0.0f && v == 0.0f) continue;
      CNN_VLOAD(w0, wr);
      CNN_VLOAD(w1, wr + JB);
      CNN_VLOAD(w2, wr + 2 * JB);
      CNN_VLOAD(w3, wr + 3 * JB);
      if (u != 0.0f) {
        a0 += u * w0;
        a1 += u * w1;
        a2 += u * w2;
        a3 += u * w3;
      }
      if (v != 0.0f) {
        c0 += v * w0;
        c1 += v * w1;
        c2 += v * w2;
        c3 += v * w3;
      }
    }
    memcpy(y0 + j0, &a0, sizeof a0);
    memcpy(y0 + j0 + JB, &a1, sizeof a1);
    memcpy(y0 + j0 + 2 * JB, &a2, sizeof a2);
    memcpy(y0 + j0 + 3 * JB, &a3, sizeof a3);
    if (!two) continue;
    memcpy(y1 + j0, &c0, sizeof c0);
    memcpy(y1 + j0 + JB, &c1, sizeof c1);
    memcpy(y1 + j0 + 2 * JB, &c2, sizeof c2);
    memcpy(y1 + j0 + 3 * JB, &c3, sizeof c3);
  }
}
#endif

CNN_ATTR static void CNN_NAME(float *y, const float *x, size_t r0, size_t nr, int K, int N, const float *w,
                              const float *b) {
  size_t t;
  int j0, j, k;
#if defined(__GNUC__) || defined(__clang__)
  /* columns of the four-block loop (every row's, by the two-row loop), of
     whole blocks; rows whose whole blocks after the four-block loop the
     four-row loop computes */
  const int jw = N / (4 * JB) * (4 * JB), jv = N / JB * JB;
  const size_t rows4 = jv > jw ? nr / 4 * 4 : 0;
  for (t = 0; t < rows4; t += 4) CNN_CAT(CNN_NAME, _rows4)(y, x, r0 + t, jw, jv, K, N, w, b);
  for (t = 0; jw > 0 && t < nr; t += 2) CNN_CAT(CNN_NAME, _rows2)(y, x, r0 + t, t + 1 < nr, jw, K, N, w, b);
#endif
  for (t = 0; t < nr; t++) {
    const float *xr = x + (r0 + t) * K;
    float *yr = y + (r0 + t) * N;
    for (j0 = 0; j0 + JB <= N; j0 += JB) { /* whole blocks of JB columns in a local accumulator */
#if defined(__GNUC__) || defined(__clang__)
      CNN_VT acc, wv;
      if (j0 < jw) { /* done by the two-row loop */
        j0 = jw - JB;
        continue;
      }
      if (t < rows4) { /* done by the four-row loop */
        j0 = jv - JB;
        continue;
      }
      CNN_VLOAD(acc, b + j0);
      for (k = 0; k < K; k++) {
        const float xk = xr[k];
        if (xk == 0.0f) continue;
        CNN_VLOAD(wv, w + (size_t)k * N + j0);
        acc += xk * wv;
      }
      memcpy(yr + j0, &acc, sizeof acc);
#else
      float acc[JB];
      for (j = 0; j < JB; j++) acc[j] = b[j0 + j];
      for (k = 0; k < K; k++) {
        const float xk = xr[k], *wr = w + (size_t)k * N + j0;
        if (xk == 0.0f) continue;
        for (j = 0; j < JB; j++) acc[j] += xk * wr[j];
      }
      for (j = 0; j < JB; j++) yr[j0 + j] = acc[j];
#endif
    }
    if (j0 == N) continue;
    for (j = j0; j < N; j++) yr[j] = b[j]; /* the other columns: the same sums, in y */
    for (k = 0; k < K; k++) {
      const float xk = xr[k], *wr = w + (size_t)k * N;
      if (xk == 0.0f) continue;
      for (j = j0; j < N; j++) yr[j] += xk * wr[j];
    }
  }
}


#undef CNN_VT
