"""lowp.fpx_scan, lowp.fpx_outputs and lowp.check(..., fpx=True): planted exceptions found at
their index with their kind; clean data has none."""

import numpy as np
import pytest

import lowp


def test_scan_planted_e4m3():
    x = np.full((8, 16), 0.5, dtype=np.float32)
    x[3, 5] = 1000.0      # overflows e4m3 (448): NaN without saturation
    x[6, 1] = 1e-5        # underflows to zero
    x[7, 7] = np.inf      # e4m3 has no infinity: NaN
    s = lowp.fpx_scan(x, "e4m3")
    assert s.counts["overflow_nan"] == 2
    assert s.first("overflow") == (3, 5)
    assert s.first("underflow") == (6, 1)
    assert s.first_bad == 3 * 16 + 5 and s.inf_in == 1
    assert not s
    sat = lowp.fpx_scan(x, "e4m3", saturate=True)
    assert sat.counts["saturation"] == 2 and sat.first("saturation") == (3, 5)


def test_scan_clean():
    x = np.linspace(-400, 400, 10001)
    s = lowp.fpx_scan(x, "fp16")
    assert s and s.counts == {} and s.first_bad == -1 and sum(s.exponents["counts"]) == 10000


def test_scan_bad_format():
    with pytest.raises(lowp.LowpError):
        lowp.fpx_scan(np.zeros(3), "nosuch")


def test_outputs_black_box():
    a = np.array([[1.0, np.inf], [2.0, 3.0]])
    b = np.eye(2)
    y = np.array([[1.0, np.nan], [2.0, 3.0]])
    r = lowp.fpx_outputs(y, [a, b])
    assert r["first"] == 1 and r["inputs_exceptional"] == [True, False]


def test_check_fpx():
    a = np.ones((4, 8), dtype=np.float32)
    b = np.ones((8, 4), dtype=np.float32)
    c = (a.astype(np.float64) @ b).astype(np.float32)
    c[2, 3] = np.inf  # a planted bug
    r = lowp.check("gemm", [a, b], c, fpx=True)
    assert not r
    assert r.fpx[0]["first"] == 2 * 4 + 3 and r.fpx[0]["kinds"] == ["overflow_inf"]
    assert r.fpx[0]["inputs_exceptional"] == [False, False]


def test_no_exceptions_rule():
    a = np.ones((4, 8), dtype=np.float32)
    b = np.ones((8, 4), dtype=np.float32)
    c = (a.astype(np.float64) @ b).astype(np.float32)
    assert lowp.check("gemm", [a, b], c, rules=[{"no_exceptions": ["invalid", "overflow"]}])
    c[1, 2] = np.nan
    r = lowp.check("gemm", [a, b], c, rules=[{"no_exceptions": ["invalid", "overflow"]}])
    assert not r and "invalid" in r.message
    with pytest.raises(lowp.LowpError):
        lowp.check("gemm", [a, b], c, rules=[{"no_exceptions": ["bogus"]}])
