"""lowp.check / assert_precision on honest and planted kernels (numpy)."""

import math

import numpy as np
import pytest

import lowp


def gemm_acc(A, B, acc, drop_odd=False, fp16_last_block=None, out=np.float16):
    """C = A B accumulated recursively in acc, rounded to out (a kernel under test)."""
    m, k = A.shape
    C = np.zeros((m, B.shape[1]), dtype=acc)
    for i in range(k):
        if drop_odd and i == k - 1 and k % 2 == 1:
            break
        a = acc
        if fp16_last_block is not None and i >= k - fp16_last_block:
            a = np.float16
        C = (C.astype(a) + (A[:, i:i + 1].astype(a) * B[i:i + 1, :].astype(a))).astype(acc)
    return C.astype(out)


def data(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (m, k)).astype(np.float16),
            rng.uniform(-1, 1, (k, n)).astype(np.float16))


GAMMA = [{"bound": "gamma"}]


@pytest.mark.parametrize("k", [64, 127, 256])
def test_honest_gemm_passes_gamma(k):
    A, B = data(8, 12, k)
    r = lowp.check("gemm", [A, B], gemm_acc(A, B, np.float32), GAMMA, acc="fp32")
    assert r.passed, r.message
    assert 0 < r.bounds["gamma"]["used"] <= 1
    assert r.metrics["max_ulp"] <= 1


@pytest.mark.parametrize("k", [127, 255])
def test_dropped_odd_k_caught(k):
    A, B = data(8, 12, k, seed=k)
    bad = gemm_acc(A, B, np.float32, drop_odd=True)
    r = lowp.check("gemm", [A, B], bad, GAMMA, acc="fp32")
    assert not r.passed
    assert r.failed_rules[0]["rule"] == "gamma bound"


def test_fp16_accumulation_caught():
    A, B = data(16, 16, 512)
    bad = gemm_acc(A, B, np.float16)
    with pytest.raises(AssertionError) as e:
        lowp.assert_precision("gemm", [A, B], bad, GAMMA, acc="fp32")
    # the failing rule by name with its worst element; no count under torch's
    # defaults, which would say nothing about a gamma bound
    assert "rule gamma bound failed: backward error" in str(e.value)
    assert "worst element C[" in str(e.value) and "Mismatched" not in str(e.value)
    assert not lowp.check("gemm", [A, B], bad, [{"assert_close": "pytorch"}])
    with pytest.raises(AssertionError, match=r"Mismatched elements: \d+ / 256"):
        lowp.assert_precision("gemm", [A, B], bad, [{"assert_close": "pytorch"}])


def test_fp16_only_in_last_block_caught():
    A, B = data(16, 16, 1024, seed=3)
    good = gemm_acc(A, B, np.float32, out=np.float32)
    bad = gemm_acc(A, B, np.float32, fp16_last_block=128, out=np.float32)
    assert lowp.check("gemm", [A, B], good, GAMMA, acc="fp32")
    assert not lowp.check("gemm", [A, B], bad, GAMMA, acc="fp32")
    # with an fp16 output the gamma rule keeps the output's rounding (u_out
    # |x|) apart from the accumulation's bound (beta |A||B|), so the fp16
    # output does not hide it (issue 31; it did when both were on |A||B|)
    r = lowp.check("gemm", [A, B], bad.astype(np.float16), GAMMA, acc="fp32")
    assert not r.passed and r.rules[0]["measured"] > 2, r.message
    assert "output's rounding apart" in r.rules[0]["message"]
    assert lowp.check("gemm", [A, B], good.astype(np.float16), GAMMA, acc="fp32")


def test_nan_caught():
    A, B = data(4, 4, 32)
    C = gemm_acc(A, B, np.float32)
    C[2, 3] = np.nan
    r = lowp.check("gemm", [A, B], C)  # default rules: nan_inf + assert_close
    assert not r.passed
    assert r.worst["index"] == "C[2][3]"
    assert "class mismatch" in r.message


def test_worst_element_is_the_rules_own():
    """The tol rule names the element of its own ratio, not the ulp-worst one."""
    A, B = data(4, 4, 64)
    C = gemm_acc(A, B, np.float32).astype(np.float64)
    x = A.astype(np.float64) @ B.astype(np.float64)
    i = np.unravel_index(np.argmax(np.abs(x)), x.shape)
    C[i] += 0.05  # a large error at the largest output
    r = lowp.check("gemm", [A, B], C, [{"rtol": 1e-3, "atol": 1e-5}], out="fp64")
    assert r.rules[0]["worst"]["index"] == "C[%d][%d]" % i


def test_sqnr_and_cosine():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(1000)
    y = x * (1 + 2.0 ** -10)
    r = lowp.check("cast", [x], y, [{"sqnr_db": 60}, {"cosine": 0.999999}], input="fp64",
                   out="fp64")
    assert r.metrics["sqnr_db"] == pytest.approx(20 * math.log10(2 ** 10), abs=1e-6)
    assert r.metrics["cosine"] == pytest.approx(1.0, abs=1e-12)
    assert r.passed, r.message
    assert not lowp.check("cast", [x], y, [{"sqnr_db": 61}], input="fp64", out="fp64")
    noisy = x + rng.standard_normal(1000) * 0.1
    assert not lowp.check("cast", [x], noisy, [{"cosine": 0.999}], input="fp64", out="fp64")


def test_mismatch_count_and_fraction():
    x = np.linspace(-1, 1, 200)
    y = x.copy()
    y[:3] += 0.01
    rules = [{"mismatch": 3, "rtol": 1e-6, "atol": 1e-6}]
    assert lowp.check("cast", [x], y, rules, input="fp64", out="fp64")
    assert not lowp.check("cast", [x], y, [{"mismatch": 2, "rtol": 1e-6, "atol": 1e-6}],
                          input="fp64", out="fp64")
    assert lowp.check("cast", [x], y, [{"mismatch": "1.5%", "rtol": 1e-6, "atol": 1e-6}],
                      input="fp64", out="fp64")
    r = lowp.check("cast", [x], y, [{"mismatch": "1%", "rtol": 1e-6, "atol": 1e-6}],
                   input="fp64", out="fp64")
    assert not r.passed and r.mismatch["count"] == 3 and r.mismatch["total"] == 200


def test_vs_reference_flashattention_and_dynamo():
    """2x a same-dtype reference's error plus a floor; RMSE vs the eager run's."""
    A, B = data(8, 8, 256)
    ref = gemm_acc(A, B, np.float32)      # same-dtype reference
    good = gemm_acc(A, B, np.float32)
    bad = gemm_acc(A, B, np.float16)
    fa = [{"vs_reference": "outputs", "factor": 2, "floor": 1e-5}]
    dyn = [{"vs_reference": "outputs", "factor": 3, "metric": "rmse"}]
    assert lowp.check("gemm", [A, B], good, fa, reference=ref)
    assert not lowp.check("gemm", [A, B], bad, fa, reference=ref)
    assert lowp.check("gemm", [A, B], good, dyn, reference=ref)
    assert not lowp.check("gemm", [A, B], bad, dyn, reference=ref)
    with pytest.raises(lowp.LowpError, match="reference"):
        lowp.check("gemm", [A, B], good, fa)


def test_vacuous_bound_is_an_error():
    A, B = data(2, 2, 1024)
    C = gemm_acc(A, B, np.float32)
    rule = {"bound": "gamma", "order": "recursive", "acc": "bf16"}
    with pytest.raises(lowp.VacuousBoundError, match="vacuous"):
        lowp.check("gemm", [A, B], C, [rule])
    r = lowp.check("gemm", [A, B], C, [dict(rule, accept_vacuous=True)])
    assert r.rules[0]["vacuous"] and r.passed


def test_layernorm_outputs_mean_var_and_absent():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    var = x64.var(axis=1)
    y = ((x64 - mean[:, None]) / np.sqrt(var[:, None] + 1e-5)).astype(np.float32)
    r = lowp.check("layernorm", [x], (y, mean.astype(np.float32), var.astype(np.float32)),
                   [{"max_ulp": 8}])
    assert r.passed, r.message
    assert [o["name"] for o in r.outputs] == ["y", "mean", "var"]
    r = lowp.check("layernorm", [x], (y, None, None), [{"max_ulp": 8}])
    assert r.outputs[1].get("absent") and r.passed


def test_xent_target_indices():
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((5, 10)).astype(np.float32)
    target = np.array([1, 0, 9, 3, 3])
    l64 = logits.astype(np.float64)
    loss = (np.log(np.exp(l64).sum(axis=1)) - l64[np.arange(5), target]).astype(np.float32)
    assert lowp.check("xent", [logits, target], loss, [{"max_ulp": 4}])


def test_bf16_bits_in_numpy():
    x = np.array([1.0, -2.5, 3.140625], dtype=np.float32)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)  # exact: these are bf16 values
    r = lowp.check("cast", [bits], bits, [{"max_ulp": 0}], input="bf16", out="bf16")
    assert r.passed and r.json["in"] == ["bf16"] and r.json["out"] == "bf16"


def test_bad_input_messages():
    A, B = data(2, 3, 4)
    with pytest.raises(lowp.LowpError, match="inputs given"):
        lowp.check("gemm", [A], np.zeros((2, 3)))
    with pytest.raises(lowp.LowpError, match="unknown rule"):
        lowp.check("gemm", [A, B], np.zeros((2, 3), np.float16), [{"max_ulpp": 1}])
    with pytest.raises(lowp.LowpError):
        lowp.check("gemm", [A, B], np.zeros((5, 3), np.float16))
    with pytest.raises(lowp.LowpError, match="unknown op .gemmm."):
        lowp.check("gemmm", [A, B], np.zeros((2, 3)))


def test_fp8_bits_in_numpy():
    # e4m3 bit patterns: 0x38 = 1.0, 0xb8 = -1.0, 0x7e = 448 (largest), 0x01 = 2^-9
    bits = np.array([0x38, 0xB8, 0x7E, 0x01], dtype=np.uint8)
    r = lowp.check("cast", [bits], bits, [{"max_ulp": 0}], input="e4m3", out="e4m3")
    assert r.passed and r.json["in"] == ["e4m3"]
    # decoded by lowp: the worst element of a wrong output shows the values
    wrong = np.array([0x38, 0xB8, 0x7E, 0x02], dtype=np.uint8)
    r = lowp.check("cast", [bits], wrong, [{"max_ulp": 0}], input="e4m3", out="e4m3")
    assert not r.passed
    assert r.worst["exact"] == 2.0 ** -9 and r.worst["got"] == 2.0 ** -8
