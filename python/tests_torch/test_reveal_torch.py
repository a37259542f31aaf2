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
