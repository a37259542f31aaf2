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


def _fp16_gemm(a, b):
    """A Python callable kernel: C = A B with every product and partial sum
    rounded to fp16, left to right (what an fp16-accumulating kernel does)."""
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), dtype=np.float16)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(m):
            for j in range(n):
                s = np.float16(0)
                for l in range(k):
                    s = np.float16(s + np.float16(a[i, l]) * np.float16(b[l, j]))
                c[i, j] = s
    return c


def test_check_fpx_spurious_and_inherent():
    # row 1 of A is (60000, 60000, -60000, 0): the fp16 running sum overflows
    # at its second term though the exact result, 60000, fits fp16: spurious
    a = np.zeros((3, 4), dtype=np.float16)
    a[1, :3] = (60000, 60000, -60000)
    b = np.zeros((4, 2), dtype=np.float16)
    b[:3, 1] = 1
    c = _fp16_gemm(a, b)
    r = lowp.check("gemm", [a, b], c, fpx=True)
    e = r.fpx[0]
    assert e["first"] == 1 * 2 + 1 and e["kinds"] == ["overflow_inf"]
    assert e["spurious"] is True and e["inherent"] is False and e["exact"] == 60000
    # A row (60000, 60000, 0, 0) against a column of ones: the exact result
    # 120000 overflows fp16 too: inherent, at output (2, 0)
    a = np.zeros((3, 4), dtype=np.float16)
    a[2, :2] = (60000, 60000)
    b = np.zeros((4, 2), dtype=np.float16)
    b[:2, 0] = 1
    e = lowp.check("gemm", [a, b], _fp16_gemm(a, b), fpx=True).fpx[0]
    assert e["first"] == 2 * 2 + 0 and e["inherent"] is True and e["exact"] == 120000
