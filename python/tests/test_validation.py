"""Issue 30/31: every argument of lowp.check / assert_precision / tolerance is validated
by lowp's C parser (the one lowp check and lowp tol use) before any work; references are
shape-checked; rules fail closed on infinite limits; formats are enforced; the
AssertionError names the failing rule and its worst element."""

import math

import numpy as np
import pytest

import lowp


def data(m=4, n=4, k=64, seed=0, lo=-1, hi=1):
    rng = np.random.default_rng(seed)
    return (rng.uniform(lo, hi, (m, k)).astype(np.float16),
            rng.uniform(lo, hi, (k, n)).astype(np.float16))


def gemm32(A, B, out=np.float16):
    return (A.astype(np.float32) @ B.astype(np.float32)).astype(out)


def gemm_fp16_acc(A, B):
    """recursive accumulation in fp16 (overflows to inf on large inputs)"""
    C = np.zeros((A.shape[0], B.shape[1]), np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(A.shape[1]):
            C = (C + A[:, i:i + 1] * B[i:i + 1, :]).astype(np.float16)
    return C


VS = [{"vs_reference": "outputs", "factor": 2}]

# ----------------------------------------------------------------- reference=


def test_reference_one_element_for_4m_outputs_refused():
    A = np.ones((2048, 1), np.float32)
    B = np.ones((1, 2048), np.float32)
    C = np.ones((2048, 2048), np.float32)
    with pytest.raises(lowp.LowpError, match=r"reference C has shape \[1\]; the problem needs "
                                             r"shape \[2048, 2048\]"):
        lowp.check("gemm", [A, B], C, VS, reference=np.ones(1, np.float32))


def test_reference_shorter_than_outputs_refused():
    A, B = data(8, 16, 4)
    C = gemm32(A, B)
    with pytest.raises(lowp.LowpError, match="reference C has shape"):
        lowp.check("gemm", [A, B], C, VS, reference=C.reshape(-1)[:100])


def test_reference_transposed_refused():
    A, B = data(4, 6, 8)
    C = gemm32(A, B)
    with pytest.raises(lowp.LowpError, match=r"reference C has shape \[6, 4\]"):
        lowp.check("gemm", [A, B], C, VS, reference=C.T.copy())
    assert lowp.check("gemm", [A, B], C, VS, reference=C).passed


# ------------------------------------------------------- fail closed (vs_ref)


@pytest.mark.parametrize("bad", ["nan", "zero"])
def test_vs_reference_with_infinite_reference_error_fails_closed(bad):
    # gemm_acc acc=fp16 on inputs in [1e2, 6e4]: the reference overflows, its
    # error is inf, and factor x inf must not let garbage through
    A, B = data(4, 4, 64, seed=5, lo=1e2, hi=6e4)
    ref = gemm_fp16_acc(A, B)
    assert np.isinf(ref).all()
    C = np.full((4, 4), np.nan if bad == "nan" else 0.0, np.float32)
    r = lowp.check("gemm", [A, B], C, VS, reference=ref.astype(np.float32), out="fp32")
    assert not r.passed
    assert "fails closed" in r.message and "the reference's max_abs is inf" in r.message
    with pytest.raises(AssertionError, match="fails closed"):
        lowp.assert_precision("gemm", [A, B], C, VS, reference=ref.astype(np.float32),
                              out="fp32")


def test_inf_in_reference_fails_closed():
    A, B = data()
    C = gemm32(A, B, np.float32)
    ref = C.copy()
    ref[1, 1] = np.inf
    r = lowp.check("gemm", [A, B], np.zeros_like(C), VS, reference=ref)
    assert not r.passed and "fails closed" in r.message


# --------------------------------------------------------------------- rules


def test_empty_rules_refused():
    A, B = data()
    C = np.full((4, 4), np.nan, np.float16)
    with pytest.raises(lowp.LowpError, match="\"rules\" must be a non-empty array"):
        lowp.check("gemm", [A, B], C, rules=[])
    with pytest.raises(lowp.LowpError, match="\"rules\" must be a non-empty array"):
        lowp.assert_precision("gemm", [A, B], C, rules=[])


def test_prob_is_the_rules():
    A, B = data(4, 4, 256, seed=7)
    x = A.astype(np.float64) @ B.astype(np.float64)          # exact: products fit fp64
    s = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64))
    rule = [{"bound": "prob"}]
    r = lowp.check("gemm", [A, B], x, rule, acc="fp32", prob=0.5, out="fp64")
    b05 = r.bounds["prob"]["value"]
    assert r.rules[0]["limit"] == b05                         # the rule's limit is P = 0.5's
    b99 = lowp.check("gemm", [A, B], x, rule, acc="fp32", out="fp64").rules[0]["limit"]
    assert b99 > 1.2 * b05
    C = x.copy()
    C[0, 0] += 1.17 * b05 * s[0, 0]                           # 117% of the P = 0.5 bound
    assert not lowp.check("gemm", [A, B], C, rule, acc="fp32", prob=0.5, out="fp64").passed
    assert lowp.check("gemm", [A, B], C, rule, acc="fp32", out="fp64").passed


@pytest.mark.parametrize("p", [2, -1, 0, 1, float("nan"), "x"])
def test_prob_outside_0_1_refused(p):
    A, B = data()
    with pytest.raises(lowp.LowpError, match="prob"):
        lowp.check("gemm", [A, B], gemm32(A, B), [{"bound": "prob"}], acc="fp32", prob=p)


# ------------------------------------------------ one validator (the spec's)


X = np.random.default_rng(3).uniform(-1, 1, (2, 8)).astype(np.float32)


@pytest.mark.parametrize("kw,msg", [
    (dict(eps="x"), r"\"eps\" must be a number, not a string"),
    (dict(eps=-1), r"\"eps\" must be a finite number >= 0, not -1"),
    (dict(eps=float("nan")), r"\"eps\": a number that is not finite"),
    (dict(eps=float("inf")), r"\"eps\": a number that is not finite"),
    (dict(reduction="sum"), r"\"reduction\" belongs to xent, not layernorm"),
    (dict(dims={"m": 2, "n": 8.5}), r"\"dims\".n must be an integer"),
    (dict(dims={"m": 2, "n": 8, "kk": 1}), r"\"dims\": unknown key 'kk'"),
    (dict(name="ln\0x"), r"NUL"),
    (dict(name="ln\nx"), r"control character"),
    (dict(reference_name="r\0"), r"NUL"),
    (dict(input=["fp32", "fp32"]), r"\"in\" lists 2 formats but layernorm has 1 inputs"),
])
def test_arguments_refused_as_the_cli_refuses(kw, msg):
    with pytest.raises(lowp.LowpError, match=msg):
        lowp.check("layernorm", [X], X, **kw)


def test_short_input_list_is_a_message_not_an_index_error():
    A, B = data()
    with pytest.raises(lowp.LowpError, match="\"in\" lists 1 formats but gemm has 2 inputs"):
        lowp.check("gemm", [A, B], gemm32(A, B), input=["fp16"])


def test_nonfinite_rule_parameter_named():
    A, B = data()
    with pytest.raises(lowp.LowpError, match="\"factor\": a number that is not finite"):
        lowp.check("gemm", [A, B], gemm32(A, B), [{"vs_reference": "outputs",
                                                   "factor": math.inf}], reference=gemm32(A, B))


@pytest.mark.parametrize("kw,msg", [
    (dict(k=1.9), r"\"k\" must be an integer"),
    (dict(k="64"), r"\"k\" must be an integer"),
    (dict(k=64, confidence="x"), r"\"confidence\" is a probability in \(0, 1\) or \"worst\""),
    (dict(k=64, confidence=float("nan")), r"\"confidence\": a number that is not finite"),
    (dict(k=64, scale=float("inf")), r"\"scale\": a number that is not finite"),
    (dict(k=64, method="kahan", confidence=0.9), r"no probabilistic bound"),
])
def test_tolerance_arguments_refused(kw, msg):
    with pytest.raises(lowp.LowpError, match=msg):
        lowp.tolerance("dot", **kw)


def test_tolerance_numpy_integer_k():
    assert lowp.tolerance("dot", k=np.int64(64)).rtol == lowp.tolerance("dot", k=64).rtol


# ------------------------------------------------ lowp.tolerance's results


@pytest.mark.parametrize("op,k,kw", [
    ("softmax", 125, dict(input="fp16", acc="bf16")),
    ("layernorm", 89, dict(input="bf16", acc="bf16")),
    ("rmsnorm", 8388607, dict()),
    ("dot", 64, dict(scale=1e308)),
])
def test_broken_derivations_are_vacuous(op, k, kw):
    with pytest.raises(lowp.VacuousBoundError):
        lowp.tolerance(op, k=k, **kw)
    t = lowp.tolerance(op, k=k, accept_vacuous=True, **kw)
    assert t.vacuous and t.rtol == math.inf and t.atol == math.inf


def test_sum_with_a_model_refused():
    with pytest.raises(lowp.LowpError, match="computes products"):
        lowp.tolerance("sum", k=64, input="fp16", method="model:h100")


def test_tolerance_monotone_in_k():
    for method in ("splitk:16", "splitk:64", "recursive", "pairwise", "blocked:32"):
        prev, vac = None, False
        for k in range(1, 600):
            t = lowp.tolerance("dot", k=k, input="fp16", acc="fp16", method=method,
                               accept_vacuous=True)
            assert not (vac and not t.vacuous), (method, k)
            if prev is not None and not t.vacuous:
                assert t.atol >= prev.atol and t.rtol >= prev.rtol, (method, k)
            vac |= t.vacuous
            prev = None if t.vacuous else t


# ------------------------------------------------------------ formats (31.4)


def test_values_not_in_the_input_format_refused():
    A, B = data()
    A64 = A.astype(np.float64)
    A64[0, 3] += 1e-4
    with pytest.raises(lowp.LowpError, match=r"input A: 1 values are not fp16 values"):
        lowp.check("gemm", [A64, B], gemm32(A, B), input="fp16")


def test_fp64_output_not_in_fp16_refused():
    A, B = data()
    C = gemm32(A, B, np.float64)
    C.flat[:32:2] += 1e-5
    with pytest.raises(lowp.LowpError, match=r"output C: \d+ values are not fp16 values"):
        lowp.check("gemm", [A, B], C, out="fp16")


def test_in_format_rule_counts_instead_of_refusing():
    A, B = data()
    C = gemm32(A, B).astype(np.float64)         # fp16 values, in an fp64 array
    C.flat[[1, 5, 9]] += 1e-5
    r = lowp.check("gemm", [A, B], C, [{"in_format": 0}], out="fp16")
    assert not r.passed and r.rules[0]["measured"] == 3
    assert "3 output values are not fp16 values" in r.rules[0]["message"]
    assert r.rules[0]["worst"]["index"] == "C[0][1]"
    assert lowp.check("gemm", [A, B], C, [{"in_format": 3}], out="fp16").passed
    assert lowp.check("gemm", [A, B], gemm32(A, B), [{"in_format": 0}]).passed
    # inputs outside their format are refused all the same
    A64 = A.astype(np.float64)
    A64[0, 0] += 1e-4
    with pytest.raises(lowp.LowpError, match="input A"):
        lowp.check("gemm", [A64, B], C, [{"in_format": 3}], input="fp16", out="fp16")


def test_fp16_bits_as_uint16_decoded():
    A, B = data()
    C = gemm32(A, B)
    r = lowp.check("gemm", [A.view(np.uint16), B.view(np.uint16)], C.view(np.uint16),
                   [{"max_ulp": 1}], input="fp16", out="fp16")
    assert r.passed and r.json["in"] == ["fp16", "fp16"]
    assert r.metrics["max_ulp"] == lowp.check("gemm", [A, B], C, [{"max_ulp": 1}]).metrics["max_ulp"]


def test_the_other_byte_order_read_as_its_dtype():
    # a big-endian fp32 array ('>f4', as np.load gives for such a file) was declared fp64: its
    # honest fp32 GEMM failed gamma (u = 2^-53); big-endian fp16 bits were refused
    A, B = data()
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    C = A32 @ B32
    ref = lowp.check("gemm", [A32, B32], C)
    r = lowp.check("gemm", [A32.astype(">f4"), B32.astype(">f4")], C.astype(">f4"))
    assert r.passed and r.json["in"] == ["fp32", "fp32"] and r.json["out"] == "fp32"
    assert r.metrics == ref.metrics
    C16 = gemm32(A, B)
    r = lowp.check("gemm", [A.astype(">f2"), B], C16.view(np.uint16).astype(">u2"), [{"max_ulp": 1}],
                   out="fp16")
    assert r.passed and r.metrics["max_ulp"] == lowp.check("gemm", [A, B], C16, [{"max_ulp": 1}]).metrics["max_ulp"]


def test_bit_pattern_output_needs_its_format():
    A, B = data()
    with pytest.raises(lowp.LowpError, match=r"C: uint16 holds bit patterns: declare their "
                                             r"format \(out="):
        lowp.check("gemm", [A, B], gemm32(A, B).view(np.uint16))
    with pytest.raises(lowp.LowpError, match=r"A: uint16 holds bit patterns: declare their "
                                             r"format \(input="):
        lowp.check("gemm", [A.view(np.uint16), B], gemm32(A, B))


def test_bits_in_a_container_of_the_wrong_width_refused():
    A, B = data()
    with pytest.raises(lowp.LowpError, match="held in 2-byte integers"):
        lowp.check("gemm", [A.view(np.uint16).astype(np.uint32), B], gemm32(A, B),
                   input="fp16")


def test_complex_and_object_arrays_refused():
    A, B = data()
    with pytest.raises(lowp.LowpError, match="complex"):
        lowp.check("gemm", [A.astype(np.complex64), B], gemm32(A, B))
    with pytest.raises(lowp.LowpError, match="complex"):
        lowp.check("gemm", [A, B], gemm32(A, B).astype(np.complex128))
    with pytest.raises(lowp.LowpError, match="object"):
        lowp.check("gemm", [A, B], np.array([[1, "x", 2, 3]] * 4, dtype=object))


def test_nested_list_output_is_one_output():
    x = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.25]], np.float32)
    y = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    nested = y.astype(np.float64).tolist()    # a list of two rows: one output, not two
    r = lowp.check("layernorm", [x.astype(np.float64)], nested, [{"max_ulp": 1e9}])
    assert len(r.outputs) == 3 and r.outputs[0]["name"] == "y"
    # several outputs are a tuple of arrays, where the operation has them
    r = lowp.check("layernorm", [x], (y.astype(np.float32), None, None), [{"max_ulp": 1e9}])
    assert r.outputs[1].get("absent")
    # gemm has one output: a tuple of two arrays is one (2, 2, 2) array, refused
    with pytest.raises(lowp.LowpError, match=r"C has shape \[2, 2, 2\]"):
        lowp.check("gemm", [x, x.T.copy()], (x @ x.T, x @ x.T))


# ------------------------------------------------------------ messages (31.5)


def test_assertion_names_rule_and_worst_element_without_torch_count():
    A, B = data(16, 16, 64, seed=2)
    C = gemm32(A, B)
    C[3, 5] = np.nextafter(np.nextafter(C[3, 5], np.float16(10)), np.float16(10))
    with pytest.raises(AssertionError) as e:
        lowp.assert_precision("gemm", [A, B], C, [{"max_ulp": 1}])
    text = str(e.value)
    assert "rule max_ulp failed: max_ulp" in text and "C[3][5]" in text
    assert "worst element C[3][5]" in text and "Mismatched" not in text
    with pytest.raises(AssertionError, match=r"Mismatched elements: \d+ / 256"):
        lowp.assert_precision("gemm", [A, B], C, [{"mismatch": 0, "rtol": 1e-6, "atol": 0}])


def test_sqnr_in_db_against_its_gate():
    A, B = data()
    C = gemm32(A, B)
    r = lowp.check("gemm", [A, B], C, [{"sqnr_db": 200}])
    rule = r.rules[0]
    assert not r.passed and "gate 200 dB" in rule["message"] and "margin -" in rule["message"]
    assert "percent" not in lowp.rule_headline(rule) and "dB" in lowp.rule_headline(rule)
    assert not (rule["percent"] == rule["percent"])  # NaN: no percentage of a dB gate


# ------------------------------------------------------ defaults (31.5)


@pytest.mark.parametrize("k", [64, 1024, 4096])
def test_default_rules_never_fail_an_honest_gemm(k):
    # torch.testing's fp32 defaults fail these (honest fp32 GEMMs, K >= 1024 on
    # N(0, 1) data); lowp.check's default for sums of products is the gamma bound
    rng = np.random.default_rng(k)
    A = rng.standard_normal((8, k)).astype(np.float32)
    B = rng.standard_normal((k, 8)).astype(np.float32)
    r = lowp.check("gemm", [A, B], A @ B)
    assert r.passed, r.message
    assert [x["rule"] for x in r.rules] == ["nan_inf", "gamma bound"]
    A16, B16 = A.astype(np.float16), B.astype(np.float16)
    C16 = (A16.astype(np.float32) @ B16.astype(np.float32)).astype(np.float16)
    assert lowp.check("gemm", [A16, B16], C16).passed
    assert lowp.check("gemm", [A16, B16], C16, acc="fp32").passed
    # and it still catches a wrong result
    bad = (A @ B).copy()
    bad[2, 3] = -bad[2, 3] + 1.0
    assert not lowp.check("gemm", [A, B], bad).passed
