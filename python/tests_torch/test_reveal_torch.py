"""lowp.reveal on torch callables (torch=True): bf16 tensors in and out."""

import pytest

torch = pytest.importorskip("torch")

import lowp  # noqa: E402


def test_torch_bf16_matmul_revealed_and_twin():
    f = lambda A, B: torch.matmul(A, B)  # noqa: E731
    r = lowp.reveal(f, "gemm", shape=(2, 2, 64), input="bf16", out="bf16", torch=True, validate=200)
    assert r.has_tree, r
    g = torch.Generator().manual_seed(5)
    A = torch.randn(2, 64, generator=g).to(torch.bfloat16)
    B = torch.randn(64, 2, generator=g).to(torch.bfloat16)
    assert torch.equal(torch.from_numpy(r.twin(A, B)).to(torch.bfloat16), f(A, B))


@pytest.mark.parametrize("k", [64, 300])
def test_bf16_result_in_default_fp32_output_is_found(k):
    """torch's bf16 matmul fed float32 arrays and returned as float32: the
    output (declared fp32 by default) holds bf16 values, and past K = 256 the
    probes sized for an 8-bit accumulator fit no tree; lowp reveals again
    with bf16 as the output, finds the conversions of A and B, and the twin
    matches the kernel bit for bit on fresh inputs."""
    np = pytest.importorskip("numpy")

    def f(A, B):
        return (torch.from_numpy(A).bfloat16() @ torch.from_numpy(B).bfloat16()).float().numpy()

    r = lowp.reveal(f, "gemm", shape=(3, 2, k), input="fp32", validate=500)
    assert r.has_tree, r
    assert r.output_format == "bf16", r
    assert r.convert == {"A": {"format": "bf16", "rnd": "rne"}, "B": {"format": "bf16", "rnd": "rne"}}, r
    rng = np.random.default_rng(7)
    A = rng.standard_normal((3, k)).astype(np.float32)
    B = rng.standard_normal((k, 2)).astype(np.float32)
    assert np.array_equal(r.twin(A, B), f(A, B).astype(np.float64))


def test_fp32_result_rounded_to_bf16_is_found():
    """an fp32 matmul whose result is rounded to bf16 (declared fp32): no
    conversion, the output bf16, every class a validated twin"""
    np = pytest.importorskip("numpy")

    def f(A, B):
        return (torch.from_numpy(A) @ torch.from_numpy(B)).bfloat16().float().numpy()

    r = lowp.reveal(f, "gemm", shape=(5, 3, 300), input="fp32", validate=2000)
    assert r.has_tree and r.output_format == "bf16" and not r.convert, r
    rng = np.random.default_rng(8)
    A = rng.standard_normal((5, 300)).astype(np.float32)
    B = rng.standard_normal((300, 3)).astype(np.float32)
    assert np.array_equal(r.twin(A, B), f(A, B).astype(np.float64))
