"""Issue 31's headline with real torch kernels: fp16 inputs, fp32
accumulation, fp16 output, K = 4096, 16 x 16 outputs per test.

Honest: torch's fp32 matmul (torch.bmm on the fp16 values widened, then
rounded once to fp16: what GPUs' fp16 GEMMs with an fp32 accumulator do).
Planted, accumulating in fp16 where fp32 is declared:
  fp16acc   every product added into an fp16 accumulator (torch's fp16
            elementwise add, one rounding per step, recursive order);
  splitk64  fp32 partial sums over K-blocks of 64 (torch.bmm), each
            rounded to fp16 and added in fp16 (a split-K reduction in fp16);
  splitk512 the same with blocks of 512 (8 partials: a subtler bug).
Each test is judged by lowp.assert_close (the data-aware derived tolerance:
probabilistic, false-failure probability 1e-6 per test) and by
torch.testing.assert_close with its fp16 defaults (rtol 1e-3, atol 1e-5)
against lowp's exact result rounded to fp16 (the usual way to call it: an
fp16 expected tensor).

    /usr/bin/python3 python/tests_torch/torch_headline.py [TESTS] [K]
"""

import sys

import numpy as np
import torch

import lowp


def kernels(A, B):
    """The honest and planted outputs of batched fp16 A (T,16,K), B (T,K,16)."""
    Af, Bf = A.float(), B.float()
    honest = torch.bmm(Af, Bf).half()
    acc = torch.zeros(A.shape[0], A.shape[1], B.shape[2], dtype=torch.float16)
    for i in range(A.shape[2]):       # products are exact in fp32; one fp16 rounding per add
        acc = acc + (Af[:, :, i:i + 1] * Bf[:, i:i + 1, :]).half()
    outs = {"honest": honest, "fp16acc": acc}
    for block in (64, 512):
        split = torch.zeros_like(acc)
        for j in range(0, A.shape[2], block):
            split = split + torch.bmm(Af[:, :, j:j + block], Bf[:, j:j + block, :]).half()
        outs["splitk%d" % block] = split
    return outs


def lowp_fails(C, a, b):
    try:
        lowp.assert_close(C, inputs=(a, b), op="gemm", acc="fp32")
        return False
    except AssertionError:
        return True


def torch_fails(C, exact):
    try:
        torch.testing.assert_close(C, torch.from_numpy(exact).half())
        return False
    except AssertionError:
        return True


def headline(tests, k=4096, seed=31):
    """{kernel: (lowp fails, torch default fails)} counted over tests, and
    the largest honest error as a fraction of lowp's limit."""
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(tests, 16, k, generator=g).half()
    B = torch.randn(tests, k, 16, generator=g).half()
    outs = kernels(A, B)
    res = {name: [0, 0] for name in outs}
    worst = 0.0
    for t in range(tests):
        a, b = A[t], B[t]
        exact = lowp.exact("gemm", (a, b))
        tol = lowp.tolerance("gemm", inputs=(a, b), acc="fp32", out="fp16")
        lim = tol.atol + tol.rtol * np.abs(exact)
        worst = max(worst, float(np.max(np.abs(outs["honest"][t].double().numpy() - exact) / lim)))
        for name, C in outs.items():
            res[name][0] += lowp_fails(C[t], a, b)
            res[name][1] += torch_fails(C[t], exact)
    return res, worst


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    res, worst = headline(n, k)
    print("fp16 in / fp32 acc / fp16 out, K = %d, %d tests of 16 x 16 outputs (torch %s)" %
          (k, n, torch.__version__))
    for name, (lf, tf) in res.items():
        print("%-9s lowp fails %d/%d (%.2f), torch default fails %d/%d (%.2f)" %
              (name, lf, n, lf / n, tf, n, tf / n))
    print("largest honest error: %.3g of lowp's limit" % worst)
