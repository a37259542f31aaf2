/* tbsformat -- block-scaled format descriptors: the table, spec strings, refusals and packing */

#include "format/bsformat.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void check_packing(void) {
  lowp_bsformat_t bf;
  double q[3] = {1.0, -6.0, 0.5}, s[1] = {2.0}, q2[3], s2[1];
  uint8_t e[2], sc[4];
  if (!lowp_test_check(lowp_bsformat_parse(&bf, "mxfp4", NULL, 0) == LOWP_OK, "parse mxfp4")) return;
  /* e2m1: 1.0 = 0b0010, -6 = 0b1111, 0.5 = 0b0001; first element low nibble */
  lowp_test_check(lowp_bs_pack(e, sc, q, s, 1, 3, &bf) == LOWP_OK && e[0] == 0xf2 && e[1] == 0x01 &&
                  sc[0] == 0x80, "mxfp4 packs [1,-6,0.5] x 2 as f2 01 / 80 (got %02x %02x / %02x)",
                  e[0], e[1], sc[0]);
  lowp_test_check(lowp_bs_unpack(q2, s2, e, sc, 1, 3, &bf) == LOWP_OK && q2[0] == 1.0 && q2[1] == -6.0 &&
                  q2[2] == 0.5 && s2[0] == 2.0, "mxfp4 unpacks what it packed");
  (void)lowp_bsformat_parse(&bf, "nvfp4", NULL, 0);
  sc[0] = 0xb8; /* -1.0 in e4m3: ue4m3 ignores the sign */
  lowp_test_check(lowp_bs_unpack(q2, s2, e, sc, 1, 3, &bf) == LOWP_OK && s2[0] == 1.0, "ue4m3 0xb8 reads 1.0");
  (void)lowp_bsformat_parse(&bf, "int8_b32", NULL, 0);
  q[0] = -127, q[1] = 5, q[2] = 0, s[0] = 1.0;
  lowp_test_check(lowp_bs_pack(e, sc, q, s, 1, 2, &bf) == LOWP_OK && e[0] == 0x81 && e[1] == 0x05 &&
                  sc[0] == 0x00 && sc[1] == 0x3c, "int8_b32 packs -127, 5 as 81 05, scale fp16 1.0 LE 00 3c");
  e[0] = 0x80;
  lowp_test_check(lowp_bs_unpack(q2, s2, e, sc, 1, 2, &bf) == LOWP_ERANGE, "int8 -128 is not a value");
}

static void check_parse(void) {
  lowp_bsformat_t bf;
  char err[256], spec[128];
  size_t i;
  for (i = 0; i < lowp_bsformat_count(); i++) {
    lowp_bsformat_t back;
    const lowp_bsformat_t *f = lowp_bsformat_at(i);
    lowp_test_check(lowp_bsformat_spec(spec, sizeof spec, f) == LOWP_OK &&
                    lowp_bsformat_parse(&back, spec, err, sizeof err) == LOWP_OK &&
                    back.block == f->block && back.rule == f->rule && back.elem_bits == f->elem_bits &&
                    back.scale_unsigned == f->scale_unsigned && back.tensor_scale == f->tensor_scale,
                    "%s: spec %s reads back", f->name, spec);
  }
  lowp_test_check(lowp_bsformat_parse(&bf, "MXFP8:rceil", err, sizeof err) == LOWP_OK &&
                  bf.rule == LOWP_BSR_RCEIL && bf.block == 32, "mxfp8:rceil");
  lowp_test_check(lowp_bsformat_parse(&bf, "q8_0", err, sizeof err) == LOWP_OK && bf.elem_int, "alias q8_0");
  lowp_test_check(lowp_bsformat_parse(&bf, "elem=e2m1,scale=ue4m3,block=16,tensor", err, sizeof err) ==
                  LOWP_OK && bf.rule == LOWP_BSR_NVFP4, "nvfp4 as a spec");
  lowp_test_check(bf.scale_unsigned && lowp_bsformat_bits_per_value(&bf) == 4.5, "nvfp4: 4.5 bits a value");
  {
    const char *badspecs[] = {"mxfp9", "elem=e4m3,scale=e8m0", "elem=fp16,scale=e8m0,block=32",
                              "elem=e4m3,scale=e8m0,block=0", "elem=e4m3,scale=e8m0,block=32,rule=nvfp4",
                              "elem=e4m3,scale=e8m0,block=32,tensor,rule=floor", "mxfp4:round",
                              "elem=e4m3,elem=e5m2,scale=e8m0,block=3", "elem=int9,scale=fp16,block=32",
                              "elem=e4m3,scale=fp64,block=32", "elem=e4m3,scale=e8m0,block=32,color=red"};
    for (i = 0; i < sizeof badspecs / sizeof badspecs[0]; i++) {
      err[0] = '\0';
      lowp_test_check(lowp_bsformat_parse(&bf, badspecs[i], err, sizeof err) == LOWP_EFORMAT && err[0],
                      "'%s' is refused with a message", badspecs[i]);
    }
  }
}

/* every built-in's numbers as the sources give them (bits per value: OCP MX
   v1.0 Table 1 counts an MXFP8 value as 8.25 bits; NVFP4 4.5; q8_0 8.5) */
static void check_table(void) {
  static const struct { const char *name; int bits, block; double bpv, emax; } want[] = {
      {"mxfp8_e4m3", 8, 32, 8.25, 448}, {"mxfp8_e5m2", 8, 32, 8.25, 57344}, {"mxfp6_e3m2", 6, 32, 6.25, 28},
      {"mxfp6_e2m3", 6, 32, 6.25, 7.5}, {"mxfp4", 4, 32, 4.25, 6},           {"nvfp4", 4, 16, 4.5, 6},
      {"int8_b32", 8, 32, 8.5, 127},    {"int4_b32", 4, 32, 4.5, 7}};
  size_t i;
  lowp_test_check(lowp_bsformat_count() == sizeof want / sizeof want[0], "8 built-in block formats");
  for (i = 0; i < sizeof want / sizeof want[0]; i++) {
    const lowp_bsformat_t *f = lowp_bsformat_at(i);
    lowp_test_check(f && !strcmp(f->name, want[i].name) && f->elem_bits == want[i].bits &&
                    f->block == want[i].block && lowp_bsformat_bits_per_value(f) == want[i].bpv &&
                    lowp_bsformat_elem_max(f) == want[i].emax && lowp_bsformat_validate(f, NULL, 0) == 0,
                    "%s: %d bits, block %d, %.2f bits a value, element max %g", want[i].name, want[i].bits,
                    want[i].block, want[i].bpv, want[i].emax);
  }
  lowp_test_check(lowp_bsformat_at(i) == NULL, "nothing past the end");
}

/* ---- the 128x4 tiled scale layout, derived independently of lib/format:
   the layout is what cuBLAS's description does to the padded [R][C] scale
   matrix: view it as [R/128][128][C/4][4], permute to [R/128][C/4][128][4]
   (tiles in row-major order), view that as [T][4][32][4] and swap the two
   middle axes ([T][32][4][4]). A generic row-major permutation computes each
   element's final offset, with no formula for the tile. */
static size_t permuted(const size_t *shape, const size_t *idx, const int *perm, int nd) {
  /* the flat offset of element idx (of shape) after axes are permuted by perm */
  size_t off = 0;
  int d;
  for (d = 0; d < nd; d++) off = off * shape[perm[d]] + idx[perm[d]];
  return off;
}

static size_t tiled_by_views(size_t R, size_t C, size_t r, size_t c) {
  size_t sh1[4] = {R / 128, 128, C / 4, 4}, ix1[4] = {r / 128, r % 128, c / 4, c % 4};
  size_t sh2[4] = {R * C / 512, 4, 32, 4}, ix2[4];
  const int p1[4] = {0, 2, 1, 3}, p2[4] = {0, 2, 1, 3};
  size_t f = permuted(sh1, ix1, p1, 4); /* after the first permutation, contiguous */
  ix2[3] = f % 4, ix2[2] = f / 4 % 32, ix2[1] = f / 128 % 4, ix2[0] = f / 512;
  return permuted(sh2, ix2, p2, 4);
}

/* fp6 with :dense, 4 values in 3 bytes: the codes 0x01 0x02 0x3f 0x20 of e3m2
   (0.0625, 0.125, -28, -0) as one LSB-first bit stream:
   0x01 | 0x02 << 6 | 0x3f << 12 | 0x20 << 18 = 0x83f081 -> 81 f0 83 */
static void check_dense(void) {
  lowp_bsformat_t bf, bb;
  const double q[5] = {0.0625, 0.125, -28, -0.0, 0.25}, s[1] = {1};
  double q2[5], s2[1];
  uint8_t e[8] = {0}, sc[1];
  lowp_test_check(lowp_bsformat_parse(&bf, "mxfp6_e3m2:dense", NULL, 0) == LOWP_OK && bf.dense &&
                      lowp_bsformat_parse(&bb, "elem=e3m2,scale=e8m0,block=32,pack=dense", NULL, 0) == LOWP_OK &&
                      bb.dense && lowp_bsformat_parse(&bb, "mxfp6_e3m2:rceil:byte", NULL, 0) == LOWP_OK && !bb.dense &&
                      bb.rule == LOWP_BSR_RCEIL,
                  "dense packing parsed");
  lowp_test_check(lowp_bsformat_row_bytes(&bf, 4) == 3 && lowp_bsformat_row_bytes(&bf, 5) == 4 &&
                      lowp_bsformat_row_cols(&bf, 3) == 4 && lowp_bsformat_row_bytes(&bb, 5) == 5,
                  "fp6: 4 values in 3 bytes, else one a byte");
  lowp_test_check(lowp_bs_pack(e, sc, q, s, 1, 4, &bf) == LOWP_OK && e[0] == 0x81 && e[1] == 0xf0 && e[2] == 0x83,
                  "fp6 dense bytes %02x %02x %02x", e[0], e[1], e[2]);
  {
    int ok = lowp_bs_pack(e, sc, q, s, 1, 5, &bf) == LOWP_OK && e[3] == 0x04; /* 0.25 = 0 001 00 */
    ok = ok && lowp_bs_unpack(q2, s2, e, sc, 1, 5, &bf) == LOWP_OK && !memcmp(q2, q, sizeof q) && s2[0] == 1;
    lowp_test_check(ok, "fp6 dense: the fifth code in the low bits of byte 3 (0x%02x), round trip", e[3]);
  }
  lowp_test_check(lowp_bsformat_parse(&bb, "elem=e3m2,scale=e8m0,block=32,pack=tight", NULL, 0) == LOWP_EFORMAT &&
                      lowp_bsformat_parse(&bb, "mxfp6:chunky", NULL, 0) == LOWP_EFORMAT,
                  "unknown packings refused");
}

static void check_layout(void) {
  static const size_t rs[] = {1, 7, 32, 127, 128, 129, 300}, ns[] = {1, 3, 4, 5, 8, 13};
  size_t a, b, r, j, bad = 0, bad_rt = 0, bad_pad = 0, n = 0;
  lowp_bslayout_t l;
  lowp_test_check(lowp_bslayout_parse(&l, "128x4") == LOWP_OK && l == LOWP_BSL_TILED128X4 &&
                      lowp_bslayout_parse(&l, "swizzled") == LOWP_OK && lowp_bslayout_parse(&l, "compact") == LOWP_OK &&
                      l == LOWP_BSL_COMPACT && lowp_bslayout_parse(&l, "4x128") == LOWP_EINVAL,
                  "layout names");
  for (a = 0; a < sizeof rs / sizeof rs[0]; a++)
    for (b = 0; b < sizeof ns / sizeof ns[0]; b++) {
      size_t rows = rs[a], nb = ns[b], R = (rows + 127) / 128 * 128, C = (nb + 3) / 4 * 4, slots;
      uint16_t *src, *t, *back;
      slots = lowp_bs_scale_slots(LOWP_BSL_TILED128X4, rows, nb);
      lowp_test_check(slots == R * C, "%zu x %zu: %zu slots, want %zu", rows, nb, slots, R * C);
      src = malloc(rows * nb * sizeof *src), t = malloc(slots * sizeof *t), back = malloc(rows * nb * sizeof *back);
      for (r = 0; r < rows * nb; r++) src[r] = (uint16_t)(r + 1); /* 0 marks padding */
      lowp_bs_scales_relayout(t, src, sizeof *src, rows, nb, LOWP_BSL_TILED128X4, 1);
      lowp_bs_scales_relayout(back, t, sizeof *src, rows, nb, LOWP_BSL_TILED128X4, 0);
      for (r = 0; r < rows; r++)
        for (j = 0; j < nb; j++, n++) {
          size_t want = tiled_by_views(R, C, r, j);
          bad += lowp_bs_scale_slot(LOWP_BSL_TILED128X4, rows, nb, r, j) != want || t[want] != src[r * nb + j];
          bad_rt += back[r * nb + j] != src[r * nb + j];
        }
      for (r = 0, j = 0; r < slots; r++) j += t[r] != 0;
      bad_pad += j != rows * nb; /* every other slot is padding, zero */
      free(src), free(t), free(back);
    }
  lowp_test_check(bad == 0, "128x4 layout: %zu of %zu scales not where the views put them", bad, n);
  lowp_test_check(bad_rt == 0, "128x4 layout: %zu scales changed by the round trip", bad_rt);
  lowp_test_check(bad_pad == 0, "128x4 layout: %zu shapes with padding not zero", bad_pad);
  /* the cuDNN/cuBLAS example points: row 32 of the first tile sits 4 slots in,
     row 1 16 slots in; the second column of tiles starts at 512 */
  lowp_test_check(lowp_bs_scale_slot(LOWP_BSL_TILED128X4, 256, 8, 32, 0) == 4 &&
                      lowp_bs_scale_slot(LOWP_BSL_TILED128X4, 256, 8, 1, 0) == 16 &&
                      lowp_bs_scale_slot(LOWP_BSL_TILED128X4, 256, 8, 0, 4) == 512 &&
                      lowp_bs_scale_slot(LOWP_BSL_TILED128X4, 256, 8, 128, 0) == 1024 &&
                      lowp_bs_scale_slot(LOWP_BSL_COMPACT, 256, 8, 3, 5) == 29,
                  "128x4 layout: fixed points");
}

int main(void) {
  lowp_test_start("tbsformat");
  check_table();
  check_parse();
  check_packing();
  check_layout();
  check_dense();
  return lowp_test_end();
}
