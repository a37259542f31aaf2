/* texp_claims -- the claims experiment: complete, and its key measurements recomputed independently */

/*
 * Checks that every claim of experiments/claims.json gets exactly one
 * verdict from the allowed set, and recomputes some measured values with
 * code that shares nothing with the experiment:
 *  - the documents' fp32 -> bf16 code ((x + 0x8000) & 0xffff0000) against a
 *    bit-level round-to-nearest-even and against round-to-nearest-ties-away
 *    computed from the two bf16 neighbours in double arithmetic, over all
 *    2^32 inputs one by one (the experiment uses lowp_encode_array_f32);
 *  - the verdict categories: each verdict's category matches its first
 *    words, the counts add up, and the graded cases (000-cnn-speedup
 *    inconsistent, 000-accuracy-loss ambiguous, 004-tc-table not checkable);
 *  - the MLX C++ GradScaler's steps to growth after an overflow, by running
 *    the document's own logic written out here; the fp16 gradients the MLX
 *    Python loop turns into zeros (its scaled loss is never used);
 *  - the same claim gets the same category in every document (claims.json
 *    "same_as" links and identical claim texts); the count of memory-bound
 *    GEMMs against amp-speedup's own kernels.csv;
 *  - 10^4 updates of 1e-7 to an fp32 weight of 1, with MPFR at 24 bits.
 *
 * Run: ctest --test-dir build -R texp_claims
 */

#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOWP_SOURCE_DIR
#define LOWP_SOURCE_DIR "."
#endif

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  long n;
  char *buf;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}

/* bit-level RNE fp32 -> bf16 (NaN stays NaN); the oracle */
static int rne_equal(uint32_t x, uint32_t code) {
  uint32_t want;
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) /* NaN: any NaN result is right */
    return (code & 0x7f80u) == 0x7f80u && (code & 0x7fu);
  want = (uint32_t)(((uint64_t)x + 0x7fffu + ((x >> 16) & 1u)) >> 16) & 0xffffu;
  return want == code;
}

/* rna fp32 -> bf16 from the two neighbours: t (toward zero) and t + 1 (away),
   whichever is nearer, a tie going away; the value past bf16's largest
   finite is 2^128 (it encodes as infinity). NaN inputs: not called. */
static uint32_t rna_oracle(uint32_t x) {
  uint32_t sign = x & 0x80000000u, t = (x & 0x7fffffffu) >> 16, lo_bits = t << 16, hi_bits = (t + 1) << 16;
  float fx, flo, fhi;
  double ax, lo, hi;
  memcpy(&fx, &(uint32_t){x & 0x7fffffffu}, 4);
  memcpy(&flo, &lo_bits, 4);
  ax = fx;
  lo = flo;
  if ((x & 0x7fffffffu) == lo_bits) return (sign | lo_bits) >> 16; /* exact (also infinity) */
  if (hi_bits == 0x7f800000u) hi = ldexp(1.0, 128);
  else { memcpy(&fhi, &hi_bits, 4); hi = fhi; }
  return (sign >> 16) | (ax - lo < hi - ax ? t : t + 1);
}

static const cJSON *find(const cJSON *verdicts, const char *id) {
  const cJSON *v;
  cJSON_ArrayForEach(v, verdicts) {
    const cJSON *i = cJSON_GetObjectItem(v, "id");
    if (cJSON_IsString(i) && !strcmp(i->valuestring, id)) return v;
  }
  return NULL;
}
static const char *field(const cJSON *v, const char *k) {
  const cJSON *s = cJSON_GetObjectItem(v, k);
  return cJSON_IsString(s) ? s->valuestring : "";
}

/* the next input: 257 on, or the tie of the next bf16 value when nearer
   (every tie, and every residue of the lower half over 257 upper halves);
   with all set, the next one */
static uint64_t claims_step(uint64_t x, int all) {
  if (all) return 1u;
  return (x & 0xffffu) < 0x8000u && 0x8000u - (x & 0xffffu) < 257u ? 0x8000u - (x & 0xffffu) : 257u;
}

int main(void) {
  char dir[] = "/tmp/texp_claims.XXXXXX", cmd[4400], path[4300], want[256];
  char *text;
  cJSON *claims = NULL, *res = NULL;
  const cJSON *c, *verdicts, *v;
  uint64_t x, wrong = 0, ties = 0, nans = 0, rna_wrong = 0, nonnan = 0, nan_to_num = 0, checked = 0;
  long ncl = 0;
  int every;
  lowp_test_start("texp_claims");

  /* the oracle counts for the +0x8000 code: every 257th input and every tie
     (2^24 inputs, 65,536 ties among them), and all 2^32 with LOWP_CLAIMS_ALL=1: the test
     texp_claims_all, label long (the proof; about 25 s of CPU more) */
  {
    const char *all = getenv("LOWP_CLAIMS_ALL");
    every = all && !strcmp(all, "1");
  }
  for (x = 0; x < (UINT64_C(1) << 32); x += claims_step(x, every)) {
    uint32_t u = (uint32_t)x, code = ((u + 0x8000u) & 0xffff0000u) >> 16;
    int is_nan = (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu) != 0;
    checked++;
    if (!is_nan) {
      nonnan++;
      rna_wrong += rna_oracle(u) != code;
    } else nan_to_num += !((code & 0x7f80u) == 0x7f80u && (code & 0x7fu));
    if (rne_equal(u, code)) continue;
    wrong++;
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) nans++;
    else if ((u & 0xffffu) == 0x8000u) ties++;
  }
  lowp_test_check(wrong == ties + nans, "every wrong input is a tie or a NaN (%llu, %llu, %llu)",
                  (unsigned long long)wrong, (unsigned long long)ties, (unsigned long long)nans);
  lowp_test_check(rna_wrong == 0, "the +0x8000 formula is rna on every non-NaN input (%llu of %llu differ)",
                  (unsigned long long)rna_wrong, (unsigned long long)nonnan);
  lowp_test_check(nan_to_num == nans, "the NaNs it gets wrong are the NaNs it turns into numbers (%llu)",
                  (unsigned long long)nan_to_num);
  lowp_test_check(checked == (every ? UINT64_C(1) << 32 : UINT64_C(16777216)), "%llu inputs checked",
                  (unsigned long long)checked);

  /* the same counts over the patterns `lowp run claims --quick` sweeps (its
     documented set: every upper half with the lower halves 0, 1, 0x7fff,
     0x8000, 0x8001, 0xffff and 58 more, (j 0x9e37 + 0x1234) mod 2^16 for
     j = 6..63), to hold the quick run's text against */
  nonnan = ties = nans = 0;
  for (x = 0; x < (UINT64_C(1) << 22); x++) {
    static const uint32_t fixed[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
    uint32_t j = (uint32_t)(x & 63u);
    uint32_t lo = j < 6 ? fixed[j] : ((j * 0x9e37u + 0x1234u) & 0xffffu);
    uint32_t u = (uint32_t)((x >> 6) << 16) | lo, code = ((u + 0x8000u) & 0xffff0000u) >> 16;
    int is_nan = (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu) != 0;
    if (!is_nan) nonnan++;
    if (rne_equal(u, code)) continue;
    if (is_nan) nans++;
    else if ((u & 0xffffu) == 0x8000u) ties++;
  }

  text = slurp(LOWP_SOURCE_DIR "/experiments/claims.json");
  claims = text ? cJSON_Parse(text) : NULL;
  free(text);
  lowp_test_check(claims != NULL, "experiments/claims.json parses");
  lowp_test_make_tmpdir(dir);
  snprintf(cmd, sizeof cmd, "run claims --quick --out %s/cl", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 0, "lowp run claims exits 0 (every check ran)");
  snprintf(path, sizeof path, "%s/cl/results.json", dir);
  text = slurp(path);
  res = text ? cJSON_Parse(text) : NULL;
  free(text);
  lowp_test_check(res != NULL, "results.json parses");
  snprintf(path, sizeof path, "%s/cl/claims.csv", dir);
  lowp_test_check(access(path, R_OK) == 0, "claims.csv written");
  if (!claims || !res) return lowp_test_end();
  verdicts = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "results"), "verdicts");

  cJSON_ArrayForEach(c, cJSON_GetObjectItem(claims, "claims")) {
    const char *id = cJSON_GetObjectItem(c, "id")->valuestring, *vd;
    ncl++;
    v = find(verdicts, id);
    lowp_test_check(v != NULL, "claim %s has a verdict", id);
    if (!v) continue;
    vd = field(v, "verdict");
    lowp_test_check(!strcmp(vd, "holds") || !strcmp(vd, "wrong") || !strncmp(vd, "holds with a qualification: ", 28) ||
                    !strncmp(vd, "not checkable here: ", 20) || !strncmp(vd, "inconsistent within the document: ", 34) ||
                    !strncmp(vd, "ambiguous: ", 11) || !strncmp(vd, "arithmetic re-checked: ", 23),
                    "claim %s: verdict '%s' is one of the allowed", id, vd);
    lowp_test_check(strlen(field(v, "measured")) > 10, "claim %s has a measured value", id);
  }
  lowp_test_check(cJSON_GetArraySize(verdicts) == ncl, "%d verdicts for %ld claims", cJSON_GetArraySize(verdicts), ncl);
  lowp_test_check(ncl >= 60, "at least 60 claims (%ld)", ncl);

  v = find(verdicts, "004-bf16-code");
  snprintf(want, sizeof want, "(rna) conversion on %llu of the %llu non-NaN inputs (0 differ)",
           (unsigned long long)nonnan, (unsigned long long)nonnan);
  lowp_test_check(v && strstr(field(v, "measured"), want) && !strncmp(field(v, "verdict"), "holds with a qualification", 26),
                  "bf16 +0x8000: '%s' in the measured text, a qualified verdict", want);
  snprintf(want, sizeof want, "round-to-nearest-even on %llu of them, all ties", (unsigned long long)ties);
  lowp_test_check(v && strstr(field(v, "measured"), want), "bf16 +0x8000: '%s'", want);
  snprintf(want, sizeof want, "%llu become numbers", (unsigned long long)nans);
  lowp_test_check(v && strstr(field(v, "measured"), want), "bf16 +0x8000: '%s'", want);

  /* categories: the first words of each verdict decide it; counts add up */
  {
    static const char *const pre[] = {"holds with a qualification", "holds", "arithmetic re-checked", "wrong",
                                      "inconsistent within the document", "ambiguous", "not checkable here"};
    static const char *const key[] = {"qualified", "holds", "arithmetic", "wrong", "inconsistent", "ambiguous",
                                      "not-checkable"};
    const cJSON *cats = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "results"), "categories"), *k;
    int counted[7] = {0}, total = 0, i;
    cJSON_ArrayForEach(v, verdicts) {
      const char *vd = field(v, "verdict"), *cat = field(v, "category");
      for (i = 0; i < 7; i++)
        if (!strncmp(vd, pre[i], strlen(pre[i]))) break;
      lowp_test_check(i < 7 && !strcmp(cat, key[i]), "verdict '%.40s' has category %s", vd, cat);
      if (i < 7) counted[i]++;
      lowp_test_check(strlen(field(v, "quote")) > 5, "verdict %s carries the document's words", field(v, "id"));
    }
    i = 0;
    cJSON_ArrayForEach(k, cats) {
      lowp_test_check(i < 7 && !strcmp(field(k, "key"), key[i]) &&
                      cJSON_GetObjectItem(k, "count")->valueint == counted[i],
                      "category %s counted %d", field(k, "key"), i < 7 ? counted[i] : -1);
      total += cJSON_GetObjectItem(k, "count")->valueint;
      i++;
    }
    lowp_test_check(i == 7 && total == ncl, "7 categories adding up to the %ld claims (%d)", ncl, total);
    v = find(verdicts, "000-cnn-speedup");
    lowp_test_check(v && !strcmp(field(v, "category"), "inconsistent"), "000-cnn-speedup: inconsistent within the document");
    v = find(verdicts, "000-accuracy-loss");
    lowp_test_check(v && !strcmp(field(v, "category"), "ambiguous"), "000-accuracy-loss: ambiguous");
    v = find(verdicts, "004-tc-table");
    lowp_test_check(v && !strcmp(field(v, "category"), "not-checkable"), "004-tc-table: not checkable here");
    /* checks that only redo the document's own arithmetic have their own category */
    v = find(verdicts, "000-speed-table");
    lowp_test_check(v && !strcmp(field(v, "category"), "arithmetic"), "000-speed-table: arithmetic re-checked");
    v = find(verdicts, "004-tf32-tflops");
    lowp_test_check(v && !strcmp(field(v, "category"), "arithmetic"), "004-tf32-tflops: arithmetic re-checked");
    v = find(verdicts, "002-unscale-idempotent");
    lowp_test_check(v && !strcmp(field(v, "category"), "wrong") && strstr(field(v, "measured"), "grad_scaler.py"),
                    "002-unscale-idempotent: wrong, with PyTorch's source named");
  }

  /* the same claim, the same category in every document: "same_as" links and identical claim texts */
  {
    const cJSON *va, *vb;
    int links = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(claims, "claims")) {
      const cJSON *to = cJSON_GetObjectItem(c, "same_as");
      const char *id = cJSON_GetObjectItem(c, "id")->valuestring;
      va = find(verdicts, id);
      if (cJSON_IsString(to)) {
        links++;
        vb = find(verdicts, to->valuestring);
        lowp_test_check(va && vb && !strcmp(field(va, "category"), field(vb, "category")),
                        "%s and its same_as %s: the same category (%s, %s)", id, to->valuestring,
                        va ? field(va, "category") : "?", vb ? field(vb, "category") : "?");
      }
      cJSON_ArrayForEach(vb, cJSON_GetObjectItem(claims, "claims")) {
        const cJSON *vy = find(verdicts, cJSON_GetObjectItem(vb, "id")->valuestring);
        if (vb == c || strcmp(cJSON_GetObjectItem(vb, "claim")->valuestring, cJSON_GetObjectItem(c, "claim")->valuestring)) continue;
        lowp_test_check(va && vy && !strcmp(field(va, "category"), field(vy, "category")),
                        "%s and %s, the same words: the same category", id, cJSON_GetObjectItem(vb, "id")->valuestring);
      }
    }
    lowp_test_check(links >= 5, "claims.json links the same claim across documents (%d same_as)", links);
    va = find(verdicts, "004-bandwidth-table");
    vb = find(verdicts, "000-memory-50");
    lowp_test_check(va && vb && !strcmp(field(va, "category"), "qualified") && !strcmp(field(vb, "category"), "qualified"),
                    "004's 50%% weight memory and 000's 50%% memory: both qualified");
  }

  /* 000-matmul-bandwidth-bound counts amp-speedup's memory-bound A100 fp16 GEMMs: read them from that
     experiment's own kernels.csv */
  {
    FILE *kf;
    char line[512];
    int nmem = 0, ngemm = 0;
    snprintf(cmd, sizeof cmd, "run amp-speedup --measure=none --out %s/amp", dir);
    lowp_test_check(lowp_test_run_lowp(cmd) == 0, "lowp run amp-speedup --measure=none");
    snprintf(path, sizeof path, "%s/amp/kernels.csv", dir);
    kf = fopen(path, "r");
    while (kf && fgets(line, sizeof line, kf))
      if (!strncmp(line, "a100,fp16,", 10) && strstr(line, ",gemm,")) {
        ngemm++;
        nmem += strstr(line, ",memory,") != NULL;
      }
    if (kf) fclose(kf);
    snprintf(want, sizeof want, "%d of its %d GEMMs (forward and backward) are memory-bound", nmem, ngemm);
    v = find(verdicts, "000-matmul-bandwidth-bound");
    lowp_test_check(ngemm > 0 && nmem > 0 && nmem < ngemm && v && strstr(field(v, "measured"), want) &&
                    !strcmp(field(v, "category"), "qualified"),
                    "matmul bandwidth-bound: '%s' (amp-speedup's kernels.csv), qualified", want);
  }

  /* document 000's MLX loop divides unscaled fp16 gradients by 65536: the positive finite fp16 values v with
     v 2^-16 <= 2^-25 (half the smallest subnormal; the tie rounds to the even 0) become zero */
  {
    unsigned b, zeros = 0;
    for (b = 1; b < 0x7c00u; b++) {
      unsigned e = b >> 10, mnt = b & 0x3ffu;
      double val = e ? ldexp(1024.0 + mnt, (int)e - 25) : ldexp(mnt, -24);
      zeros += ldexp(val, -16) <= ldexp(1, -25);
    }
    snprintf(want, sizeof want, "stored in fp16, %u of its 31743 positive finite values become zero", zeros);
    v = find(verdicts, "000-mlx-scaled-loss-unused");
    lowp_test_check(v && strstr(field(v, "measured"), want) && !strcmp(field(v, "verdict"), "wrong"),
                    "MLX Python loop: '%s'", want);
  }
  v = find(verdicts, "002-overflow-check");
  lowp_test_check(v && strstr(field(v, "measured"), "fired 0 times between step() and update()") &&
                  !strcmp(field(v, "verdict"), "wrong"), "002: the scale test between step() and update() never fires");
  v = find(verdicts, "004-multilayer-bound");
  lowp_test_check(v && strstr(field(v, "measured"), "is exceeded by 0 of the") &&
                  !strcmp(field(v, "category"), "qualified") && strstr(field(v, "verdict"), "|x| factor") &&
                  strstr(field(v, "verdict"), "exceeded from s = 256"),
                  "004's multi-layer bound fails without |x| (from s = 256); with |x| restored it holds: qualified");
  v = find(verdicts, "004-tf32-default");
  lowp_test_check(v && strstr(field(v, "measured"), "allow_tf32 defaults to False since PyTorch 1.12") &&
                  !strcmp(field(v, "category"), "qualified") && strstr(field(v, "verdict"), "cuDNN convolutions only"),
                  "TF32 default: PyTorch matmuls since 1.12 cited; right for the convolutions only (qualified)");
  v = find(verdicts, "000-fp32-range");
  lowp_test_check(v && !strcmp(field(v, "verdict"), "holds"), "000's fp32 exponent range 2^-126..2^127 holds exactly");
  v = find(verdicts, "000-bf16-no-scaler");
  lowp_test_check(v && strstr(field(v, "verdict"), "no loss scale is needed") && strstr(field(v, "verdict"), "fp16: "),
                  "bf16 needs no GradScaler: graded on scaling, against fp16 (not the underflow template)");

  /* the MLX C++ scaler, as document 000 writes it: step() then update() each iteration */
  {
    long tracker = 0, interval = 2000, k = 0;
    double scale = 65536;
    int found_inf = 1, grew = 0;
    /* overflow step */
    if (found_inf) { scale *= 0.5; tracker = 0; found_inf = 0; }
    if (!found_inf) { tracker++; if (tracker >= interval) { scale *= 2; tracker = 0; } }
    while (!grew) {
      k++;
      if (!found_inf) { tracker++; if (tracker >= interval) { scale *= 2; tracker = 0; grew = 1; } }
    }
    snprintf(want, sizeof want, "mlx: grows after %ld clean steps", k);
    v = find(verdicts, "000-growth-interval-mlx");
    lowp_test_check(v && strstr(field(v, "measured"), want) && !strcmp(field(v, "verdict"), "wrong"), "MLX C++: '%s'", want);
    (void)scale;
  }
  /* 10^4 fp32 updates of 1e-7 from 1 */
  {
    mpfr_t w, d;
    int k;
    mpfr_init2(w, 24);
    mpfr_init2(d, 64);
    mpfr_set_ui(w, 1, MPFR_RNDN);
    mpfr_set_d(d, 1e-7, MPFR_RNDN);
    for (k = 0; k < 10000; k++) mpfr_add(w, w, d, MPFR_RNDN);
    snprintf(want, sizeof want, "10000 times: %.9g", mpfr_get_d(w, MPFR_RNDN));
    mpfr_clears(w, d, (mpfr_ptr)0);
    v = find(verdicts, "004-stagnation-fp32");
    lowp_test_check(v && strstr(field(v, "measured"), want), "fp32 stagnation: '%s'", want);
  }
  v = find(verdicts, "004-exercise-2");
  lowp_test_check(v && !strcmp(field(v, "verdict"), "wrong") && strstr(field(v, "measured"), "0x0011"),
                  "exercise 2: 1e-6 is the subnormal 0x0011, the premise is wrong");
  v = find(verdicts, "002-fp16-bits");
  lowp_test_check(v && !strcmp(field(v, "verdict"), "wrong"), "document 002's fp16 bits are wrong");

  snprintf(cmd, sizeof cmd, "run claims --file=/nonexistent.json --out %s/bad", dir);
  lowp_test_check(lowp_test_run_lowp(cmd) == 2, "a missing claims file exits 2");
  snprintf(path, sizeof path, "%s/bad", dir);
  lowp_test_check(access(path, F_OK) != 0, "a bad run leaves no folder");
  cJSON_Delete(claims);
  cJSON_Delete(res);
  lowp_test_remove_dir(dir);
  return lowp_test_end();
}
