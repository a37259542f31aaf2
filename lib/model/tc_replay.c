/* lowp_tc_replay -- replay GPU-captured tensor-core rows through a model */

/*
 * The layout is that of Khattak & Mikaitis's model_validation data (see
 * tests/data/tensor-core-vectors/README.md): per GPU and input format,
 *   a_GPU_FMT.txt, b_GPU_FMT.txt  one row per test: K hex fp32 bit patterns
 *   c_GPU_fp32.txt                one 32-character binary fp32 per row
 *   d_GPU_fp32.txt, d_GPU_fp16.txt  the GPU's D, binary fp32 bits
 * One row is one D = A.B + C of length K on the GPU. For fp16 output the
 * capture converted c to fp16 first (__float2half, round to nearest even),
 * so the replay does the same.
 */

#define _POSIX_C_SOURCE 200809L /* getline */

#include "model/tc.h"
#include "io/atomic.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXK 1024

/* ------------------------------------------------------ private helpers */

static double f32_of_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return (double)f;
}

static uint32_t bits_of_f32(double v) {
  float f = (float)v; /* v is an fp32 (or fp16) value, or inf/NaN: exact */
  uint32_t u;
  if (isnan(v)) return 0x7fffffffu;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* One row of hex words (1 to 8 hex digits each, blank-separated); returns
   the count (>= 1) or -1. strtoul alone would take "-1", "0x" and blanks
   inside a word. */
static int parse_hex_row(double *v, const char *line) {
  int n = 0;
  const char *s = line;
  while (*s) {
    uint32_t u = 0;
    int d = 0;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    if (!*s) break;
    for (; d < 9; d++, s++) {
      int h = (*s >= '0' && *s <= '9') ? *s - '0'
              : (*s >= 'a' && *s <= 'f') ? *s - 'a' + 10
              : (*s >= 'A' && *s <= 'F') ? *s - 'A' + 10 : -1;
      if (h < 0) break;
      u = (u << 4) | (uint32_t)h;
    }
    if (d == 0 || d > 8 || n >= MAXK) return -1;
    if (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') return -1;
    v[n++] = f32_of_bits(u);
  }
  return n > 0 ? n : -1;
}

/* Read one line; 1 if got, 0 at end of file, -1 if it holds a NUL byte
   (a corrupt file: fgets would silently cut the line there). */
static int read_line(char **buf, size_t *cap, FILE *f) {
  ssize_t n = getline(buf, cap, f);
  if (n < 0) return 0;
  return strlen(*buf) == (size_t)n ? 1 : -1;
}

/* A 32-character binary string. Returns 0 or -1. */
static int parse_bin(uint32_t *u, const char *line) {
  int i;
  uint32_t r = 0;
  for (i = 0; i < 32; i++) {
    if (line[i] != '0' && line[i] != '1') return -1;
    r = (r << 1) | (uint32_t)(line[i] - '0');
  }
  for (; line[i]; i++)
    if (line[i] != '\n' && line[i] != '\r' && line[i] != ' ') return -1;
  *u = r;
  return 0;
}

static FILE *open_in(const char *dir, const char *gpu, const char *fmt,
                     const char *kind, const char *suffix) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/%s/%s_%s_%s.txt", dir, gpu, fmt, kind, gpu, suffix);
  return lowp_fopen_regular(path); /* a FIFO would block (io/atomic.h) */
}

/* ----------------------------------------------------------- public API */

const lowp_format_t *lowp_tc_vectors_format(const char *fmt) {
  if (!strcmp(fmt, "fp16")) return &LOWP_FMT_FP16;
  if (!strcmp(fmt, "bf16")) return &LOWP_FMT_BF16;
  if (!strcmp(fmt, "tf32")) return &LOWP_FMT_TF32;
  if (!strcmp(fmt, "E4M3")) return &LOWP_FMT_E4M3;
  if (!strcmp(fmt, "E5M2")) return &LOWP_FMT_E5M2;
  return NULL;
}

int lowp_tc_replay(lowp_tc_replay_t *r, const char *dir, const char *gpu,
                   const char *fmt, const lowp_format_t *out, int c_zero,
                   const lowp_tc_model_t *m) {
  const lowp_format_t *in = lowp_tc_vectors_format(fmt);
  FILE *fa, *fb, *fc, *fd;
  char *la = NULL, *lb = NULL, *lc = NULL, *ld = NULL;
  size_t ca = 0, cb = 0, cc = 0, cd = 0;
  double va[MAXK], vb[MAXK];
  int st = LOWP_OK;

  memset(r, 0, sizeof *r);
  r->first_bad = -1;
  if (!in) return LOWP_EINVAL;
  fa = open_in(dir, gpu, fmt, "a", fmt);
  fb = open_in(dir, gpu, fmt, "b", fmt);
  fc = open_in(dir, gpu, fmt, "c", "fp32");
  fd = open_in(dir, gpu, fmt, "d", out->precision == LOWP_FMT_FP16.precision &&
                                       out->emax == LOWP_FMT_FP16.emax ? "fp16" : "fp32");
  if (!fa || !fb || !fc || !fd) { st = LOWP_EIO; goto done; }

  for (;;) {
    int ga = read_line(&la, &ca, fa), gb = read_line(&lb, &cb, fb);
    int gc = read_line(&lc, &cc, fc), gd = read_line(&ld, &cd, fd);
    int na, nb;
    uint32_t cu, du, got;
    double c, dval;
    if (ga < 0 || gb < 0 || gc < 0 || gd < 0) { st = LOWP_EFILE; goto done; }
    if (!ga && !gb && !gc && !gd) break;
    if (!(ga && gb && gc && gd)) { st = LOWP_EFILE; goto done; } /* truncated */
    na = parse_hex_row(va, la);
    nb = parse_hex_row(vb, lb);
    if (na < 0 || na != nb || parse_bin(&cu, lc) || parse_bin(&du, ld)) {
      st = LOWP_EFILE;
      goto done;
    }
    r->rows++;
    if (!m) continue; /* checking the files only */
    c = c_zero ? 0.0 : f32_of_bits(cu);
    lowp_round_f64(&c, c, out, NULL, LOWP_RND_NE); /* the capture's __float2half */
    st = lowp_tc_dot(&dval, va, 1, vb, 1, (size_t)na, c, m, in, out);
    if (st != LOWP_OK) goto done;
    got = bits_of_f32(dval);
    if (got == du || (isnan(dval) && isnan(f32_of_bits(du)))) {
      r->match++;
    } else if (r->first_bad < 0) {
      r->first_bad = (long)r->rows - 1;
      r->got = got;
      r->want = du;
    }
  }
  if (r->rows == 0) st = LOWP_EFILE; /* empty files */
done:
  free(la);
  free(lb);
  free(lc);
  free(ld);
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  if (fc) fclose(fc);
  if (fd) fclose(fd);
  return st;
}
