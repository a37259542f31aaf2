/* lowp_check_pytorch_tol -- torch.testing's default rtol/atol for an output format */

#include "check/pipeline.h"

void lowp_check_pytorch_tol(double *rtol, double *atol, const lowp_format_t *f) {
  /* PyTorch's _DTYPE_PRECISIONS {dtype: (rtol, atol)}, in
     torch/testing/_asserts.py (1.10-1.12) and torch/testing/_comparison.py
     (1.13 on): float16 (1e-3, 1e-5), bfloat16 (0.016, 1e-5), float32
     (1.3e-6, 1e-5), float64 (1e-7, 1e-7); other dtypes default to (0, 0).
     PyTorch has no entry for fp8 or tf32: lowp uses bf16's for formats of
     at most 8 significand bits and fp16's for tf32 (p = 11), so a team can
     start from a tolerance of the same order and tighten it. */
  double r = 0, a = 0;
  if (f) {
    if (f->precision >= 53) { r = 1e-7; a = 1e-7; }
    else if (f->precision >= 24) { r = 1.3e-6; a = 1e-5; }
    else if (f->precision >= 11) { r = 1e-3; a = 1e-5; }  /* fp16; tf32 (p=11) as fp16 */
    else { r = 1.6e-2; a = 1e-5; }                        /* bf16 and narrower (fp8) */
  }
  if (rtol) *rtol = r;
  if (atol) *atol = a;
}
