"""lowp.quantize / lowp.dequantize / lowp.pack / lowp.unpack: block-scaled formats.

The exact rules are tested in C (tests/tbsquant.c, against MPFR); here the
binding: shapes, axes, packing, errors, and one rule re-derived in numpy.
"""

import numpy as np
import pytest

import lowp

E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])  # OCP MX v1.0 Table 4 (FP4 E2M1)


def mxfp4_floor_numpy(x):
    """OCP MX v1.0 section 6.3 written out in numpy: X = 2^(floor(log2 amax) - 2),
    elements to nearest e2m1 value (ties to the even code), clamped to 6."""
    out = np.empty_like(x, dtype=np.float64)
    for b in range(0, x.size, 32):
        blk = x[b:b + 32].astype(np.float64)
        amax = np.max(np.abs(blk))
        e = max(int(np.floor(np.log2(amax))) - 2, -127) if amax > 0 else -127
        v = np.abs(blk) / 2.0 ** e
        idx = np.searchsorted(E2M1, v)  # E2M1[idx-1] < v <= E2M1[idx]
        q = np.empty_like(v)
        for i, (vi, k) in enumerate(zip(v, idx)):
            if k >= len(E2M1):
                q[i] = 6.0
            elif k == 0 or vi == E2M1[k]:
                q[i] = E2M1[k]
            else:
                lo, hi = E2M1[k - 1], E2M1[k]
                q[i] = lo if vi - lo < hi - vi else hi if vi - lo > hi - vi else (lo if (k - 1) % 2 == 0 else hi)
        out[b:b + 32] = np.copysign(q, blk) * 2.0 ** e
    return out


def test_mxfp4_floor_matches_numpy_derivation():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(32 * 64) * 2.0 ** rng.integers(-20, 20, 32 * 64)).astype(np.float32)
    x[5] = 0.25 * 2 ** -3  # a tie
    q = lowp.quantize(x, "mxfp4")
    assert np.array_equal(q.dequantize(), mxfp4_floor_numpy(x))


def test_shapes_axes_and_short_last_block():
    x = np.arange(2 * 3 * 40, dtype=np.float32).reshape(2, 3, 40) - 50
    q = lowp.quantize(x, "mxfp8_e4m3")
    assert q.elements.shape == x.shape and q.scales.shape == (2, 3, 2)
    qa = lowp.quantize(np.moveaxis(x, -1, 0), "mxfp8_e4m3", axis=0)
    assert np.array_equal(np.moveaxis(qa.dequantize(), 0, -1), q.dequantize())
    # the OCP floor rule clamps 500 to 448 in a block whose scale is 1
    q1 = lowp.quantize(np.array([0.1, -3, 448, 500], dtype=np.float32), "mxfp8_e4m3")
    assert q1.scales.tolist() == [1.0] and q1.elements.tolist()[2:] == [448.0, 448.0]
    q2 = lowp.quantize(np.array([0.1, -3, 448, 500], dtype=np.float32), "mxfp8_e4m3", rule="rceil")
    assert q2.scales.tolist() == [2.0] and q2.elements.tolist()[3] == 256.0


def test_nvfp4_tensor_scale_and_int8():
    x = np.array([1, 2, 3, -7, 0.01], dtype=np.float32)
    q = lowp.quantize(x, "nvfp4")
    assert q.tensor_scale == float(np.float32(1) / np.float32(384))  # 2688 / amax 7 = 384
    assert q.scales.tolist() == [448.0]
    r = lowp.quantize(x, "int8_b32")
    assert r.elements.tolist() == [18.0, 36.0, 54.0, -127.0, 0.0]
    assert r.scales[0] == float(np.float16(np.float32(7) / np.float32(127)))


def test_nan_poisons_its_block_only():
    x = np.ones(64, dtype=np.float32)
    x[40] = np.nan
    y = lowp.quantize(x, "mxfp8_e4m3").dequantize()
    assert np.all(y[:32] == 1.0) and np.all(np.isnan(y[32:]))


def test_pack_unpack_roundtrip_and_nibble_order():
    q = lowp.quantize(np.array([1.0, -6.0, 0.5], dtype=np.float32), "mxfp4")
    e, s = q.pack()
    assert e.tolist() == [[0xF2, 0x01]] and s.tolist() == [[0x7F]]
    back = lowp.unpack(e, s, "mxfp4", cols=3)
    assert np.array_equal(back.dequantize(), q.dequantize().reshape(1, 3))
    x = np.linspace(-3, 3, 96, dtype=np.float32).reshape(2, 48)
    for fmt in ("nvfp4", "int8_b32", "int4_b32", "mxfp6_e3m2", "mxfp8_e5m2"):
        qq = lowp.quantize(x, fmt)
        e, s = qq.pack()
        u = lowp.unpack(e, s, fmt, cols=48, tensor_scale=qq.tensor_scale)
        assert np.array_equal(u.dequantize(), qq.dequantize()), fmt


def test_bad_input():
    with pytest.raises(lowp.LowpError, match="unknown block-scaled format"):
        lowp.quantize(np.ones(4, dtype=np.float32), "mxfp9")
    with pytest.raises(lowp.LowpError, match="nvfp4 rule"):
        lowp.quantize(np.ones(4, dtype=np.float32), "mxfp4", rule="nvfp4")
    with pytest.raises(ValueError, match="binary32"):
        lowp.quantize(np.array([0.1]), "mxfp4")
    with pytest.raises(ValueError, match="scales have shape"):
        lowp.dequantize(np.ones(40), np.ones(1), "mxfp4")


# ---- lowp.check with block-scaled inputs (issue 33 item 1)

def _gemm_inputs(fmt, m=8, k=96, n=6, seed=3):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, k)).astype(np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    return A, B, lowp.quantize(A, fmt), lowp.quantize(B, fmt, axis=0)


@pytest.mark.parametrize("fmt", ["mxfp8_e4m3", "mxfp4", "nvfp4", "int8_b32"])
def test_check_blockquantized_inputs(fmt):
    A, B, qa, qb = _gemm_inputs(fmt)
    C = (qa.dequantize() @ qb.dequantize()).astype(np.float32)  # fp64 sums, one fp32 rounding
    r = lowp.check("gemm", [qa, qb], C, [{"max_ulp": 1}])
    assert r.passed, r.failure_text
    assert r.json["in"] == [qa.format, qb.format]
    # the same scales read one block off (a layout bug): caught
    bad = lowp.BlockQuantized(qa.elements, np.roll(qa.scales, 1, axis=1), qa.tensor_scale, qa.format)
    Cb = (bad.dequantize() @ qb.dequantize()).astype(np.float32)
    assert not lowp.check("gemm", [qa, qb], Cb, [{"max_ulp": 1}]).passed


def test_check_unpacked_bytes_and_rule_quantized_inputs():
    A, B, qa, qb = _gemm_inputs("nvfp4", k=64)
    ea, sa = qa.pack()
    ua = lowp.unpack(ea, sa, "nvfp4", 64, qa.tensor_scale)  # the stored bytes, read back
    C = (qa.dequantize() @ qb.dequantize()).astype(np.float32)
    assert lowp.check("gemm", [ua, qb], C, [{"max_ulp": 1}]).passed
    # fp32 data with a block-scaled "input": lowp quantizes by the rule; a kernel that
    # quantized the same way has only its accumulation error
    r = lowp.check("gemm", [A, B], C, [{"max_ulp": 1}], input="nvfp4")
    assert r.passed, r.failure_text
    # the data's fp32 product is off by the quantization: the split's input part
    C32 = (A.astype(np.float64) @ B).astype(np.float32)
    r = lowp.check("gemm", [A, B], C32, [{"max_ulp": 1}], input="nvfp4")
    assert not r.passed


def test_check_blockquantized_refused():
    A, B, qa, qb = _gemm_inputs("mxfp8_e4m3")
    C = (qa.dequantize() @ qb.dequantize()).astype(np.float32)
    with pytest.raises(lowp.LowpError, match="reduction axis is 0"):
        lowp.check("gemm", [qa, lowp.quantize(B, "mxfp8_e4m3")], C)
    e = qa.elements.copy()
    e[0, 0] = 0.3
    with pytest.raises(lowp.LowpError):
        lowp.check("gemm", [lowp.BlockQuantized(e, qa.scales, 1.0, qa.format), qb], C)
    with pytest.raises(lowp.LowpError, match="input names mxfp4"):
        lowp.check("gemm", [qa, qb], C, input=["mxfp4", "mxfp8_e4m3"])
    qn = lowp.quantize(A, "nvfp4")
    with pytest.raises(lowp.LowpError, match="not a positive finite fp32"):
        lowp.check("gemm", [lowp.BlockQuantized(qn.elements, qn.scales, 0.1, "nvfp4"),
                            lowp.quantize(B, "nvfp4", axis=0)], C)


def _tiled128x4_numpy(s):
    """cuBLAS's 128x4 layout by reshapes (written from its description, not lowp's code)."""
    r, c = s.shape
    R, C = -(-r // 128) * 128, -(-c // 4) * 4
    p = np.zeros((R, C), dtype=s.dtype)
    p[:r, :c] = s
    t = p.reshape(R // 128, 128, C // 4, 4).transpose(0, 2, 1, 3)
    return t.reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3).reshape(-1)


@pytest.mark.parametrize("rows,cols", [(1, 32), (130, 96), (256, 512), (7, 200)])
def test_pack_unpack_128x4_scale_layout(rows, cols):
    rng = np.random.default_rng(rows)
    q = lowp.quantize((rng.standard_normal((rows, cols)) * 2.0 ** rng.integers(-9, 9, (rows, 1)))
                      .astype(np.float32), "mxfp8_e4m3")
    e, sc = q.pack()
    e2, st = q.pack(scale_layout="128x4")
    assert np.array_equal(e, e2)
    assert np.array_equal(st, _tiled128x4_numpy(sc))
    u = lowp.unpack(e2, st, "mxfp8_e4m3", cols, scale_layout="128x4")
    assert np.array_equal(u.scales, q.scales) and np.array_equal(u.elements, q.elements)
    with pytest.raises(ValueError, match="128x4 layout"):
        lowp.unpack(e, sc, "mxfp8_e4m3", cols, scale_layout="128x4") if sc.size != st.size else \
            lowp.unpack(e, st[:-1], "mxfp8_e4m3", cols, scale_layout="128x4")
    with pytest.raises(lowp.LowpError, match="compact or 128x4"):
        q.pack(scale_layout="4x128")


def _e2m3_code(v):
    """OCP MX v1.0 FP6 E2M3 (bias 1, no inf/NaN): the code of a value, by table"""
    mags = [m / 8.0 for m in range(8)] + [(1 + m / 8.0) * 2.0 ** (e - 1) for e in (1, 2, 3) for m in range(8)]
    return (32 if np.signbit(v) else 0) | mags.index(abs(v))


@pytest.mark.parametrize("cols", [4, 7, 32, 45])
def test_fp6_dense_packing_4_in_3_bytes(cols):
    rng = np.random.default_rng(cols)
    x = (rng.standard_normal((3, cols)) * 4).astype(np.float32)
    q = lowp.quantize(x, "mxfp6_e2m3:dense")
    e, sc = q.pack()
    assert e.shape == (3, -(-6 * cols // 8))  # ceil(6 cols / 8): 4 values in 3 bytes
    # an LSB-first bit stream of the codes, built here bit by bit
    for r in range(3):
        bits = [(_e2m3_code(v) >> b) & 1 for v in q.elements[r] for b in range(6)]
        bits += [0] * (-len(bits) % 8)
        want = [sum(bits[8 * i + b] << b for b in range(8)) for i in range(len(bits) // 8)]
        assert list(e[r]) == want
    u = lowp.unpack(e, sc, "mxfp6_e2m3:dense", cols)
    assert np.array_equal(u.elements, q.elements) and np.array_equal(u.scales, q.scales)
    # the byte-a-value packing holds the same codes, one a byte
    eb, _ = lowp.pack(q.elements, q.scales, "mxfp6_e2m3")
    assert eb.shape == (3, cols) and eb[0, 0] == _e2m3_code(q.elements[0, 0])
