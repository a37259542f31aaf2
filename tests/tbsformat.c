/* tbsformat -- block-scaled format descriptors: the table, spec strings, refusals and packing */

#include "format/bsformat.h"
#include "status.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
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

int main(void) {
  lowp_test_start("tbsformat");
  check_table();
  check_parse();
  check_packing();
  return lowp_test_end();
}
