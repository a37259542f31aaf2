"""lowp.check on PyTorch CPU kernels and tensors (label torch)."""

import numpy as np
import pytest
import torch

import lowp


def rand(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float32) * 2 - 1).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_torch_matmul_passes_assert_close_and_sqnr(dtype):
    A, B = rand((16, 128), dtype, 1), rand((128, 24), dtype, 2)
    # PyTorch 1.13's CPU has no fp16 matmul: fp16 goes through fp32 (as GPUs accumulate)
    C = A @ B if dtype != torch.float16 else (A.float() @ B.float()).half()
    r = lowp.check("gemm", [A, B], C, [{"assert_close": "pytorch"}, {"sqnr_db": 25}])
    fmt = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[dtype]
    assert r.json["in"] == [fmt, fmt] and r.json["out"] == fmt
    assert r.passed, r.message


def test_bf16_tensor_is_read_by_its_bits():
    x = torch.tensor([1.0, -2.5, 3.140625, 1e-40], dtype=torch.bfloat16)
    r = lowp.check("cast", [x], x, [{"max_ulp": 0}])
    assert r.passed and r.json["in"] == ["bf16"]
    assert r.outputs[0]["count"] == 4


def test_planted_fp16_accumulation_in_torch_is_caught():
    A, B = rand((8, 2048), torch.float16, 3), rand((2048, 8), torch.float16, 4)
    C = torch.zeros((8, 8), dtype=torch.float16)
    for i in range(2048):  # recursive accumulation in fp16 (the planted bug)
        C = C + A[:, i:i + 1] * B[i:i + 1, :]
    honest = (A.float() @ B.float()).half()
    # the tolerance of fp32 accumulation at 99.9% per element, for the data's
    # own mean |a_i b_i| (the largest over the outputs)
    scale = float((A.abs().double() @ B.abs().double()).max()) / 2048
    t = lowp.tolerance("gemm", k=2048, input="fp16", acc="fp32", out="fp16",
                       confidence=0.999, scale=scale)
    rule = [{"rtol": t.rtol, "atol": t.atol}]
    assert lowp.check("gemm", [A, B], honest, rule)
    r = lowp.check("gemm", [A, B], C, rule)
    assert not r.passed and r.mismatch["count"] > 0, r.message


def test_ratio_equals_torch_assert_close():
    """lowp's assert_close ratio against the exact result and torch's against
    an fp64 reference agree on a real torch output (torch reports the
    mismatch count; lowp's count must equal it)."""
    A, B = rand((32, 64), torch.float16, 5), rand((64, 32), torch.float16, 6)
    C = (A.float() @ B.float()).half() * (1 + 2 ** -9)   # off by ~2 ulps
    ref = (A.double() @ B.double())
    try:
        torch.testing.assert_close(C.double(), ref, rtol=1e-3, atol=1e-5)
        n_torch = 0
    except AssertionError as e:
        line = [ln for ln in str(e).splitlines() if "Mismatched elements" in ln][0]
        n_torch = int(line.split(":")[1].split("/")[0])
    r = lowp.check("gemm", [A, B], C, [{"rtol": 1e-3, "atol": 1e-5}])
    assert r.mismatch["count"] == n_torch


@pytest.mark.skipif(not hasattr(torch, "float8_e4m3fn"), reason="torch without fp8 dtypes")
def test_fp8_tensor_by_bits():
    x = torch.tensor([0.5, -448.0, 0.001953125], dtype=torch.float32).to(torch.float8_e4m3fn)
    r = lowp.check("cast", [x], x, [{"max_ulp": 0}])
    assert r.passed and r.json["in"] == ["e4m3"]


def test_blockscaled_unpack_takes_torch_byte_tensors():
    """lowp.unpack reads torch's float8 elements and e8m0 / uint8 scales by their bits."""
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8 dtypes (PyTorch >= 2.1)")
    x = np.linspace(-3, 3, 64, dtype=np.float32).reshape(2, 32)
    q = lowp.quantize(x, "mxfp8_e4m3")
    e, s = q.pack()
    te, ts = torch.from_numpy(e).view(torch.float8_e4m3fn), torch.from_numpy(s)
    if hasattr(torch, "float8_e8m0fnu"):
        ts = ts.view(torch.float8_e8m0fnu)
    u = lowp.unpack(te, ts, "mxfp8_e4m3", cols=32)
    assert np.array_equal(u.dequantize(), q.dequantize())
    assert np.array_equal(u.elements, te.float().numpy())
    with pytest.raises(TypeError):
        lowp.unpack(torch.zeros(4, dtype=torch.float16), ts, "mxfp8_e4m3", cols=32)
