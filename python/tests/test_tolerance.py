"""lowp.tolerance and lowp tol against brute-force error distributions."""

import json
import math
import os
import subprocess

import numpy as np
import pytest

import lowp

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fp16_dots(a, b, acc):
    """Dot products row by row, recursive, products and sums rounded to acc
    (numpy's float16 arithmetic rounds each operation once: fp32 holds the
    exact product of two fp16 numbers, and p = 24 >= 2*11 + 2 makes the
    rounding of the fp32 sum to fp16 a correct rounding)."""
    s = np.zeros(a.shape[0], dtype=acc)
    for i in range(a.shape[1]):
        s = (s + (a[:, i].astype(acc) * b[:, i].astype(acc)).astype(acc)).astype(acc)
    return s


def exact_dots(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)  # products exact in fp64
    return np.array([math.fsum(r) for r in a64 * b64]), np.abs(a64 * b64).sum(axis=1)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(12345)
    n, k = 4000, 256
    a = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    x, absab = exact_dots(a, b)
    return a, b, x, absab


def test_fp16_accumulation_worst_case_always_holds(data):
    a, b, x, absab = data
    c = fp16_dots(a, b, np.float16).astype(np.float64)
    t = lowp.tolerance("dot", k=256, input="fp16", acc="fp16", out="fp16", confidence="worst")
    bwd = np.abs(c - x) / absab
    assert bwd.max() <= t.bound_acc          # componentwise, every element
    assert np.all(np.abs(c - x) <= t.atol + t.rtol * np.abs(x))
    # the worst case is pessimistic by about k u / (sqrt(k) u) = 16 and a
    # constant (docs/tolerances.md), but not unboundedly: within 200x here
    assert bwd.max() > t.bound_acc / 200, (bwd.max(), t.bound_acc)


@pytest.mark.parametrize("confidence", [0.9, 0.99])
def test_fp16_accumulation_probabilistic_holds_at_confidence(data, confidence):
    a, b, x, absab = data
    c = fp16_dots(a, b, np.float16).astype(np.float64)
    # without the data lowp refuses the probabilistic bound here (k u = 1/8:
    # terms can stagnate); on these inputs (random signs) it checks and allows it
    free = lowp.tolerance("dot", k=256, input="fp16", acc="fp16", out="fp16",
                          confidence=confidence)
    assert not free.probabilistic and "stagnate" in free.not_probabilistic
    t = lowp.tolerance("dot", inputs=(a, b), acc="fp16", out="fp16", confidence=confidence)
    assert t.probabilistic, t.not_probabilistic
    worst = lowp.tolerance("dot", k=256, input="fp16", acc="fp16", out="fp16", confidence="worst")
    assert t.bound_acc < worst.bound_acc / 2     # the probabilistic bound is the sharper one
    bwd = np.abs(c - x) / absab
    assert np.mean(bwd > t.bound_acc) <= 1 - confidence
    assert np.mean(np.abs(c - x) > t.atol + t.rtol * np.abs(x)) <= 1 - confidence


def test_fp32_tolerance_catches_fp16_accumulation(data):
    """The tolerance derived for fp32 accumulation with an fp16 output holds
    for the honest kernel and fails for fp16 accumulation (a planted bug)."""
    a, b, x, absab = data
    honest = fp16_dots(a, b, np.float32).astype(np.float16).astype(np.float64)
    planted = fp16_dots(a, b, np.float16).astype(np.float64)
    t = lowp.tolerance("dot", k=256, input="fp16", acc="fp32", out="fp16", confidence="worst")
    assert t.rtol == 2.0 ** -11                  # one rounding to fp16
    bound = t.rtol * np.abs(x) + (1 + t.rtol) * t.bound_acc * absab
    assert np.all(np.abs(honest - x) <= bound)
    assert np.mean(np.abs(planted - x) > bound) > 0.05


def test_vacuous_raises_unless_accepted():
    with pytest.raises(lowp.VacuousBoundError, match="vacuous"):
        lowp.tolerance("dot", k=1024, input="bf16", acc="bf16")
    t = lowp.tolerance("dot", k=1024, input="bf16", acc="bf16", accept_vacuous=True)
    assert t.vacuous and math.isinf(t.rtol) and math.isinf(t.atol)


def test_unpacks_and_explains():
    rtol, atol = lowp.tolerance("gemm", k=4096, input="bf16", acc="fp32", out="bf16")
    t = lowp.tolerance("gemm", k=4096, input="bf16", acc="fp32", out="bf16")
    assert (rtol, atol) == (t.rtol, t.atol) and t.kwargs == {"rtol": rtol, "atol": atol}
    assert rtol == 2.0 ** -8 and 0 < atol < 2
    assert "Higham" in t.explanation and "gamma~_4096" in t.explanation
    t = lowp.tolerance("gemm", k=4096, input="bf16", acc="fp32", out="bf16", confidence="worst")
    rtol, atol = t
    assert "Higham" in t.explanation and "gamma_4096" in t.explanation
    # orders: pairwise < recursive; a wider scale scales atol
    pw = lowp.tolerance("gemm", k=4096, input="bf16", acc="fp32", out="bf16", method="pairwise",
                        confidence="worst")
    assert pw.atol < t.atol / 100
    s4 = lowp.tolerance("gemm", k=4096, input="bf16", acc="fp32", out="bf16", scale=4,
                        confidence="worst")
    assert s4.atol - s4.json["atol_floor"] == pytest.approx(4 * (t.atol - t.json["atol_floor"]))
    m = lowp.tolerance("gemm", k=4096, input="fp16", out="fp32", method="model:h100")
    assert 0 < m.bound < 1e-3 and "tensor-core" in m.bound_name
    with pytest.raises(lowp.LowpError):
        lowp.tolerance("gemm", k=4096, input="fp16", out="fp32", method="model:h100",
                       confidence=0.99)


def test_row_ops():
    for op in ("softmax", "logsoftmax", "logsumexp", "xent", "rmsnorm", "layernorm"):
        t = lowp.tolerance(op, k=4096, input="fp16", acc="fp32", out="fp16")
        assert 2.0 ** -11 <= t.rtol < 0.01, (op, t)
    with pytest.raises(lowp.LowpError, match="no tolerance derivation"):
        lowp.tolerance("exp", k=1)


def test_softmax_tolerance_holds_on_numpy_softmax():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((64, 1000)) * 3).astype(np.float16)
    x64 = x.astype(np.float32)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    y = (e / e.sum(axis=1, keepdims=True)).astype(np.float16)
    t = lowp.tolerance("softmax", k=1000, input="fp16", acc="fp32", out="fp16",
                       scale=float(np.abs(x64).max()))
    r = lowp.check("softmax", [x], y, rules=[{"rtol": t.rtol, "atol": t.atol}])
    assert r.passed, r.message


def test_cli_agrees_with_python():
    exe = os.environ.get("LOWP_CLI", os.path.join(REPO, "build", "lowp"))
    if not os.path.exists(exe):
        pytest.fail("%s is missing: build the tree first (or set LOWP_CLI)" % exe)
    out = subprocess.run([exe, "tol", "dot", "--k=512", "--input", "fp16", "--acc", "fp32",
                          "--out", "fp16", "--confidence", "0.999", "--json"],
                         capture_output=True, text=True, check=True).stdout
    js = json.loads(out)
    t = lowp.tolerance("dot", k=512, input="fp16", acc="fp32", out="fp16", confidence=0.999)
    assert js["rtol"] == t.rtol and js["atol"] == t.atol


def test_method_preset_name_alone_is_a_model():
    a = lowp.tolerance("gemm", k=1024, input="fp16", out="fp32", method="h100,promote=128")
    b = lowp.tolerance("gemm", k=1024, input="fp16", out="fp32", method="model:h100,promote=128")
    assert a.rtol == b.rtol and a.atol == b.atol and "tensor-core" in a.bound_name
