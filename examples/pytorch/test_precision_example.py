"""Precision tests of a PyTorch kernel with lowp: copy this file next to your
tests and replace my_matmul with your kernel.

    pip install ./python            # from a lowp checkout (or LOWP_LIBRARY=.../liblowp.so)
    pytest -p lowp.pytest_plugin examples/pytorch/test_precision_example.py

Each check compares the kernel's output with the EXACT result of the same
(rounded) inputs, computed by lowp with MPFR, not with another float kernel.
"""

import pytest
import torch

import lowp


def my_matmul(a, b):
    """The kernel under test (here: PyTorch's CPU matmul on the values
    widened to fp32, rounded once to the inputs' dtype: what GPUs' fp16/bf16
    GEMMs with fp32 accumulation do). Not `a @ b` for bf16: Debian's PyTorch
    1.13 accumulates bf16 in fp32 on AVX-512 CPUs but rounds every operation
    to bf16 on AVX2-only ones, which test_matmul_bf16_derived_tolerance then
    catches (docs/tolerances.md; tests/torch/check_torch.sh)."""
    if a.dtype in (torch.float16, torch.bfloat16):
        return (a.float() @ b.float()).to(a.dtype)
    return a @ b


def inputs(m, n, k, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    a = (torch.rand((m, k), generator=g) * 2 - 1).to(dtype)
    b = (torch.rand((k, n), generator=g) * 2 - 1).to(dtype)
    return a, b


# shapes with an odd k: a kernel that drops the last odd element fails only there
@pytest.mark.parametrize("k", [127, 128, 1024])
@pytest.mark.parametrize("seed", [0, 1])
def test_matmul_bf16_derived_tolerance(lowp_check, k, seed):
    a, b = inputs(16, 16, k, torch.bfloat16, seed)
    # the tolerance derived for fp32 accumulation and a bf16 output, inputs in
    # [-1, 1] (|a_i b_i| <= 1 on average: scale=1 is safe)
    rtol, atol = lowp.tolerance("gemm", k=k, input="bf16", acc="fp32", out="bf16")
    lowp_check.assert_precision("gemm", [a, b], my_matmul(a, b),
                                rules=[{"rtol": rtol, "atol": atol}])


@pytest.mark.parametrize("k", [127, 4096])
def test_matmul_fp16_within_the_accumulation_bound(lowp_check, k):
    a, b = inputs(8, 8, k, torch.float16, 0)
    # the componentwise gamma_k bound of fp32 accumulation, elementwise with
    # the actual |A||B|: fp16 accumulation fails it
    lowp_check.assert_precision("gemm", [a, b], my_matmul(a, b),
                                rules=[{"bound": "gamma"}, {"sqnr_db": 25}], acc="fp32")


def test_softmax_fp16(lowp_check):
    x = torch.randn((8, 512), generator=torch.Generator().manual_seed(0)).half()
    y = torch.softmax(x.float(), dim=-1).half()
    t = lowp.tolerance("softmax", k=512, input="fp16", acc="fp32", out="fp16",
                       scale=float(x.abs().max()))
    lowp_check.assert_precision("softmax", [x], y, rules=[{"rtol": t.rtol, "atol": t.atol}])
