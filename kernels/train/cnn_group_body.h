/* gemm_group of kernels/train/cnn.c (rows in groups; see there), compiled
   once per instruction set: included with CNN_NAME (the function's name),
   CNN_ATTR (a target attribute, or nothing) and JB (output columns per
   vector: 16 for AVX-512's zmm, 8 for AVX2's ymm, 4 for the baseline's
   xmm; a vector wider than the registers, as 16 lanes on AVX2, GCC keeps
   in memory, 2.5 times slower) defined. Each output's operations are the
   same whatever JB: b[j], then x[k] w[k][j] added in k order (terms with
   x == 0 skipped), one fp32 rounding each. zadd (cnn.c's zeros_addable):
   adding a zero term changes no output, so every row takes the dense loops
   (_rows4w, _rows4's test-free one). No include guard. */

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
   where a branch predictor cannot follow them. xk - (+0) is xk for every xk, -0 included, so the
   compiler broadcasts xk straight from memory (xk + 0, which makes -0 +0, cost a scalar addition
   per term and row) */
CNN_ATTR static inline CNN_VT CNN_CAT(CNN_NAME, _madd)(CNN_VT a, float xk, CNN_VT wv) {
  const CNN_VT xv = xk - (CNN_VT){0}, s = a + xv * wv;
  const CNN_CAT(CNN_VT, i) keep = xv == (CNN_VT){0};
  return (CNN_VT)(((CNN_CAT(CNN_VT, i))s & ~keep) | ((CNN_CAT(CNN_VT, i))a & keep));
}
/* Whether rows t..t+nrow-1 of x hold no zero (then no term is skipped: _rows4w, _rows4's test-free
   loop) */
CNN_ATTR static int CNN_CAT(CNN_NAME, _nozero)(const float *x, size_t t, int nrow, int K) {
  const float *x0 = x + t * K;
  int k, e, n = nrow * K;
  for (k = 0; k < n; k += 64) { /* 64 at a time, vectorised; rows with zeros (ReLU's) stop early */
    int z = 0;
    for (e = k; e < (n - k < 64 ? n : k + 64); e++) z |= x0[e] == 0.0f;
    if (z) return 0;
  }
  return 1;
}
/* Four rows t..t+3 (nrow < 4: rows t..t+nrow-1, the others computed on row t and not stored, a group's
   last rows) at once, one block of JB columns at a time: the whole blocks in [j0, j1), then, where jt >= 0,
   the block [jt, jt + JB) (N not a multiple of JB: the last JB columns, again where they overlap the
   block before; the same operations give the same values). Four independent chains of additions share
   each load of w, where a row has fewer than four blocks left (the CNN's convolutions, N = 8 or 16, the
   ViT's attention products, N = 16 or 49, whose single chain per row waited on the adder's latency). Each
   output's operations are those of the one-row loop. */
CNN_ATTR static void CNN_CAT(CNN_NAME, _rows4)(float *y, const float *x, size_t t, size_t nrow, int j0,
                                              int j1, int jt, int K, int N, const float *w,
                                              const float *b, int zadd) {
  const float *x0 = x + t * K, *x1 = nrow > 1 ? x0 + K : x0, *x2 = nrow > 2 ? x1 + K : x0,
              *x3 = nrow > 3 ? x2 + K : x0;
  float *y0 = y + t * N;
  const int dense = zadd || CNN_CAT(CNN_NAME, _nozero)(x, t, (int)nrow, K);
  int k;
  for (;; j0 += JB) {
    CNN_VT a0, a1, a2, a3, wv;
    if (j0 + JB > j1) { /* the whole blocks done: the last one, if it overlaps */
      if (jt < 0) break;
      j0 = jt;
      jt = -1;
      j1 = j0 + JB;
    }
    CNN_VLOAD(a0, b + j0);
    a1 = a0;
    a2 = a0;
    a3 = a0;
    if (dense) /* no zero to skip: every term added, no test (the attention's products) */
      for (k = 0; k < K; k++) {
        CNN_VLOAD(wv, w + (size_t)k * N + j0);
        a0 += x0[k] * wv, a1 += x1[k] * wv, a2 += x2[k] * wv, a3 += x3[k] * wv;
      }
    else
      for (k = 0; k < K; k++) {
        CNN_VLOAD(wv, w + (size_t)k * N + j0);
        a0 = CNN_CAT(CNN_NAME, _madd)(a0, x0[k], wv);
        a1 = CNN_CAT(CNN_NAME, _madd)(a1, x1[k], wv);
        a2 = CNN_CAT(CNN_NAME, _madd)(a2, x2[k], wv);
        a3 = CNN_CAT(CNN_NAME, _madd)(a3, x3[k], wv);
      }
    memcpy(y0 + j0, &a0, sizeof a0);
    if (nrow > 1) memcpy(y0 + N + j0, &a1, sizeof a1);
    if (nrow > 2) memcpy(y0 + 2 * (size_t)N + j0, &a2, sizeof a2);
    if (nrow > 3) memcpy(y0 + 3 * (size_t)N + j0, &a3, sizeof a3);
  }
}
/* Columns [0, jw) (groups of four blocks) of four rows t..t+3 at once that hold no zero in x
   (_nozero): every term added, with no test, NB blocks of JB columns a step (AVX-512: 4, sixteen
   chains in registers; narrower vectors 2, eight), each load of w shared by the four rows. Each
   output's operations are those of the one-row loop (no x[k] == 0 to skip): b[j], then x[k] w[k][j]
   added in k order, one fp32 rounding each. The ViT's layers (no zeros after layer norm, GELU,
   softmax): 1.4-1.8 times the two-row loop's speed, whose tests and branches per term and row
   were most of its instructions. */
#if JB == 16
#define CNN_NB 4
#else
#define CNN_NB 2
#endif
CNN_ATTR static void CNN_CAT(CNN_NAME, _rows4w)(float *y, const float *x, size_t t, int jw, int K, int N,
                                               const float *w, const float *b) {
  const float *x0 = x + t * K, *x1 = x0 + K, *x2 = x1 + K, *x3 = x2 + K;
  float *y0 = y + t * N;
  int j0, k;
  for (j0 = 0; j0 + CNN_NB * JB <= jw; j0 += CNN_NB * JB) {
    CNN_VT a0, a1, c0, c1, d0, d1, e0, e1, w0, w1;
#if CNN_NB == 4
    CNN_VT a2, a3, c2, c3, d2, d3, e2, e3, w2, w3;
#endif
    CNN_VLOAD(a0, b + j0);
    CNN_VLOAD(a1, b + j0 + JB);
    c0 = d0 = e0 = a0;
    c1 = d1 = e1 = a1;
#if CNN_NB == 4
    CNN_VLOAD(a2, b + j0 + 2 * JB);
    CNN_VLOAD(a3, b + j0 + 3 * JB);
    c2 = d2 = e2 = a2;
    c3 = d3 = e3 = a3;
#endif
    for (k = 0; k < K; k++) {
      const float u0 = x0[k], u1 = x1[k], u2 = x2[k], u3 = x3[k], *wr = w + (size_t)k * N + j0;
      CNN_VLOAD(w0, wr);
      CNN_VLOAD(w1, wr + JB);
      a0 += u0 * w0, a1 += u0 * w1, c0 += u1 * w0, c1 += u1 * w1;
      d0 += u2 * w0, d1 += u2 * w1, e0 += u3 * w0, e1 += u3 * w1;
#if CNN_NB == 4
      CNN_VLOAD(w2, wr + 2 * JB);
      CNN_VLOAD(w3, wr + 3 * JB);
      a2 += u0 * w2, a3 += u0 * w3, c2 += u1 * w2, c3 += u1 * w3;
      d2 += u2 * w2, d3 += u2 * w3, e2 += u3 * w2, e3 += u3 * w3;
#endif
    }
/* row r's blocks o and o + 1 */
#define CNN_ST(r, o, v0, v1)                                                                       \
  memcpy(y0 + (size_t)(r) * N + j0 + (o) * JB, &(v0), sizeof a0),                                   \
      memcpy(y0 + (size_t)(r) * N + j0 + (o + 1) * JB, &(v1), sizeof a0)
    CNN_ST(0, 0, a0, a1), CNN_ST(1, 0, c0, c1), CNN_ST(2, 0, d0, d1), CNN_ST(3, 0, e0, e1);
#if CNN_NB == 4
    CNN_ST(0, 2, a2, a3), CNN_ST(1, 2, c2, c3), CNN_ST(2, 2, d2, d3), CNN_ST(3, 2, e2, e3);
#endif
#undef CNN_ST
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
                              const float *b, int zadd) {
  size_t t;
  int j, k;
#if defined(__GNUC__) || defined(__clang__)
  /* columns [0, jw): groups of NB blocks (AVX2: two, AVX-512: four) of four rows at a time, by _rows4w or
     the copy's CNN_ROWS4M (without one, groups of four blocks by the two-row loop, as a group's last one
     to three rows [nr / 4 * 4, nr) are over [0, j2)); the rest of the columns, [jw, jv) or [j2, jv):
     whole blocks, and where N is not a multiple of JB the last JB columns [jt, N), by the four-row loop.
     The AVX2 copy's groups of two blocks take N = 16 (the CNN's conv2, the ViT's attention products) in
     eight chains of additions, four rows sharing each load of w. N >= JB (lowp_cnn_gemm_f32 picks a
     narrower copy for narrower products) */
#ifdef CNN_ROWS4M
  const int jw = N / (CNN_NB * JB) * (CNN_NB * JB);
#else
  const int jw = N / (4 * JB) * (4 * JB);
#endif
  const int j2 = N / (4 * JB) * (4 * JB), jv = N / JB * JB, jt = N % JB && N >= JB ? N - JB : -1;
  if (N >= JB) {
    for (t = 0; t < nr; t += 4) {
      const int jl = nr - t < 4 ? j2 : jw; /* the columns the loop below leaves to this one start at jl */
      if (jv > jl || jt >= 0)
        CNN_CAT(CNN_NAME, _rows4)(y, x, r0 + t, nr - t < 4 ? nr - t : 4, jl, jv, jt, K, N, w, b, zadd);
    }
    for (t = 0; jw > 0 && t < nr;) /* four rows without zeros at a time, else two */
      if (t + 4 <= nr && (zadd || CNN_CAT(CNN_NAME, _nozero)(x, r0 + t, 4, K))) {
        CNN_CAT(CNN_NAME, _rows4w)(y, x, r0 + t, jw, K, N, w, b);
        t += 4;
#ifdef CNN_ROWS4M /* the copy's four rows with zeros (cnn.c: masked additions on AVX-512, blends on AVX2) */
      } else if (t + 4 <= nr) {
        CNN_ROWS4M(y, x, r0 + t, jw, K, N, w, b);
        t += 4;
#endif
      } else {
        CNN_CAT(CNN_NAME, _rows2)(y, x, r0 + t, t + 1 < nr, jw, K, N, w, b);
        t += 2;
      }
    return;
  }
#endif
  for (t = 0; t < nr; t++) { /* narrower than a vector (or no vector extensions): the same sums, in y */
    const float *xr = x + (r0 + t) * K;
    float *yr = y + (r0 + t) * N;
    for (j = 0; j < N; j++) yr[j] = b[j];
    for (k = 0; k < K; k++) {
      const float xk = xr[k], *wr = w + (size_t)k * N;
      if (xk == 0.0f) continue;
      for (j = 0; j < N; j++) yr[j] += xk * wr[j];
    }
  }
}


#undef CNN_NB
#undef CNN_VT
