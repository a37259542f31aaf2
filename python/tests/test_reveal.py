"""lowp.reveal: Python callables probed through lowp's C API (lowp_capi_reveal).

The order, accumulator and conversions are lib/check/reveal.c's (tested in C,
tests/treveal.c); here the binding: a numpy kernel of known order (lanes),
its twin bit for bit on new inputs, a hidden conversion found and used by
lowp.check(convert=...), an fp16 accumulator seen, a nondeterministic
callable refused a tree, the callable's exceptions, bad arguments.
"""

import numpy as np
import pytest

import lowp

RNG = np.random.default_rng(20260)


def lanes_gemm(L, acc=np.float32, a_to=None):
    """C = A B with L interleaved fp32 lanes per output (lane l sums the
    products k = l, l + L, ... in order, from zero), then lanes l and l + w
    added for w = L/2 .. 1: batched over a leading axis. a_to: A rounded to
    that dtype first (a hidden conversion)."""
    def f(A, B):
        if a_to is not None:
            A = A.astype(a_to)
        A = A.astype(np.float32)
        B = B.astype(np.float32)
        bt, m, k = A.shape
        n = B.shape[2]
        lane = np.zeros((bt, m, n, L), dtype=acc)
        for t in range(k):
            p = (A[:, :, t, None] * B[:, None, t, :]).astype(acc)  # fp16 x fp16 products: exact in fp32
            lane[..., t % L] = (lane[..., t % L] + p).astype(acc)
        w = L // 2
        while w >= 1:
            lane[..., :w] = (lane[..., :w] + lane[..., w:2 * w]).astype(acc)
            w //= 2
        return lane[..., 0].astype(np.float32)
    return f


def test_lanes_revealed_and_twin_bit_exact():
    f = lanes_gemm(8)
    r = lowp.reveal(f, "gemm", shape=(2, 3, 128), input="fp16", batched=True, validate=500)
    assert r.deterministic and r.has_tree and r.accumulator_bits == 24
    assert r.convert == {}
    assert len(r.classes) == 1 and len(r.classes[0]["positions"]) == 6
    # 8 chains of 16 products (the first enters its lane exactly: 15 additions), then 3 levels
    assert r.classes[0]["depth"][1] == 15 + 3, r
    assert "fp32" in r.classes[0]["arith"]
    assert r.tree["n"] == 128
    for b in (1, 5):
        A = RNG.standard_normal((b, 2, 128)).astype(np.float16)
        B = RNG.standard_normal((b, 128, 3)).astype(np.float16)
        got = f(A, B).astype(np.float64)
        tw = r.twin(A if b > 1 else A[0], B if b > 1 else B[0])
        assert np.array_equal(tw.reshape(got.shape), got)


def test_numpy_matmul_unbatched_callable():
    calls = []

    def f(A, B):
        calls.append(A.shape)
        return A.astype(np.float32) @ B.astype(np.float32)

    r = lowp.reveal(f, "gemm", shape=(2, 2, 64), input="fp16", validate=200)
    assert r.has_tree and all(s == (2, 64) for s in calls)  # one batch entry at a time
    A = RNG.standard_normal((2, 64)).astype(np.float16)
    B = RNG.standard_normal((64, 2)).astype(np.float16)
    assert np.array_equal(r.twin(A, B), f(A, B).astype(np.float64))


def test_dot_and_sum():
    dot = lambda x, w: np.float32(np.dot(x.astype(np.float32), w.astype(np.float32)))
    # OpenBLAS's sdot (0.3.21, cores Haswell and SkylakeX): a binary32 vector kernel over the first
    # K & -32 terms, then the rest added to it in binary64 and rounded once: at K = 128 a binary32
    # tree, at K = 100 not one (a binary64 tail), where lowp must not offer a tree that is wrong
    r = lowp.reveal(dot, "dot", shape=(128,), input="fp16", validate=200)
    assert r.has_tree and r.K == 128
    for k in (128, 100):
        r = lowp.reveal(dot, "dot", shape=(k,), input="fp16", validate=200)
        for _ in range(20 if r.has_tree else 0):
            x = RNG.standard_normal(k).astype(np.float16)
            w = RNG.standard_normal(k).astype(np.float16)
            assert float(np.asarray(r.twin(x, w)).ravel()[0]) == float(dot(x, w)), (k, r)
    s = lowp.reveal(lambda x: x.astype(np.float64).sum(axis=-1), "sum", shape=(3, 50), input="fp64",
                    batched=True, validate=200)
    assert s.has_tree and s.accumulator_bits == 53


def test_fp16_sum_returned_in_fp16():
    # M is an fp16 input (at most 2^14): subnormal units of 2^-24 let one window hold 1000 terms
    # (41,926 probes in windows of 8 with normal units); the twin reproduces numpy bit for bit
    f = lambda x: np.sum(x, axis=-1)
    r = lowp.reveal(f, "sum", shape=(1, 1000), input="fp16", out="fp16", validate=500)
    assert r.has_tree and r.probes < 5000, r
    x = RNG.standard_normal((1, 1000)).astype(np.float16)
    assert np.array_equal(r.twin(x), f(x).astype(np.float64))


def test_hidden_conversion_found_and_declared():
    f = lanes_gemm(4, a_to=np.float16)
    r = lowp.reveal(f, "gemm", shape=(2, 2, 256), input=["fp32", "fp16"], batched=True, validate=500)
    assert r.convert == {"A": {"format": "fp16", "rnd": "rne"}}, r
    A = RNG.standard_normal((2, 256)).astype(np.float32)
    B = RNG.standard_normal((256, 2)).astype(np.float16)
    C = f(A[None], B[None])[0]
    assert np.array_equal(r.twin(A, B), C.astype(np.float64))
    # the honest converting kernel: fails without the declaration, passes with it (or the reveal)
    assert not lowp.check("gemm", [A, B], C, acc="fp32")
    assert lowp.check("gemm", [A, B], C, acc="fp32", convert=r)
    assert lowp.check("gemm", [A, B], C, acc="fp32", convert={"A": "fp16"})
    # a declaration the kernel does not match: rtz for rne
    assert not lowp.check("gemm", [A, B], C, acc="fp32", convert={"A": {"format": "fp16", "rnd": "rtz"}})


def test_fp16_accumulator_seen():
    r = lowp.reveal(lanes_gemm(4, acc=np.float16), "gemm", shape=(1, 1, 64), input="fp16", batched=True,
                    validate=200)
    assert r.accumulator_bits == 11, r


def test_nondeterministic_callable_has_no_tree():
    rng = np.random.default_rng()

    def f(A, B):  # split-K with a split drawn per call
        A = A.astype(np.float32)
        B = B.astype(np.float32)
        S = int(rng.integers(2, 9))
        k = A.shape[-1]
        w = -(-k // S)
        y = np.zeros(A.shape[:-1] + B.shape[-1:], dtype=np.float32)
        for lo in range(0, k, w):
            y = (y + A[..., lo:lo + w] @ B[..., lo:lo + w, :]).astype(np.float32)
        return y

    r = lowp.reveal(f, "gemm", shape=(2, 2, 300), input="fp32", batched=True)
    assert not r.deterministic and not r.has_tree
    with pytest.raises(lowp.LowpError, match="nondeterministic"):
        r.twin(np.ones((2, 300), np.float32), np.ones((300, 2), np.float32))


def test_callable_exception_propagates():
    class Boom(RuntimeError):
        pass

    def f(A, B):
        raise Boom("kernel exploded")

    with pytest.raises(Boom, match="exploded"):
        lowp.reveal(f, "gemm", shape=(1, 1, 16), input="fp16")


def test_bad_arguments():
    f = lanes_gemm(4)
    with pytest.raises(lowp.LowpError, match="not a sum of products"):
        lowp.reveal(f, "softmax", shape=(2, 8))
    with pytest.raises(lowp.LowpError, match="shape of gemm"):
        lowp.reveal(f, "gemm", shape=(2, 2))
    with pytest.raises(lowp.LowpError, match="give the shape"):
        lowp.reveal(f, "gemm")
    with pytest.raises(lowp.LowpError, match="input formats"):
        lowp.reveal(f, "gemm", shape=(1, 1, 8), input=["fp16"] * 3)
    with pytest.raises(lowp.LowpError, match="unknown format"):
        lowp.reveal(f, "gemm", shape=(1, 1, 8), input="fp17")
    with pytest.raises(lowp.LowpError, match="returned 3 values"):
        lowp.reveal(lambda A, B: np.zeros(3), "gemm", shape=(1, 1, 8), input="fp16")
    r = lowp.reveal(f, "gemm", shape=(1, 2, 32), input="fp16", batched=True, validate=100)
    with pytest.raises(lowp.LowpError, match="holds"):
        r.twin(np.ones((1, 31), np.float16), np.ones((31, 2), np.float16))
    with pytest.raises(lowp.LowpError, match="revealed"):
        lowp.check("gemm", [np.ones((2, 8), np.float32), np.ones((8, 2), np.float32)],
                   np.full((2, 2), 8, np.float32), convert="revealed")


def test_save_is_a_reveal_file(tmp_path):
    r = lowp.reveal(lanes_gemm(2), "gemm", shape=(1, 1, 16), input="fp16", batched=True, validate=100)
    p = tmp_path / "t.json"
    r.save(p)
    import json
    d = json.loads(p.read_text())
    assert d["lowp_reveal"] == 1 and d["K"] == 16 and d["classes"][0]["tree"]["n"] == 16


def test_readme_example_runs():
    """The README's lowp.reveal example runs as written and prints True."""
    import os
    import re
    import subprocess
    import sys
    py = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    text = open(os.path.join(os.path.dirname(py), "README.md"), encoding="utf-8").read()
    start = text.index("\n## lowp reveal and lowp twin\n")
    sec = text[start:text.find("\n## ", start + 1)]
    code = [b for b in re.findall(r"```python\n(.*?)```", sec, re.S) if "lowp.reveal(" in b]
    assert code
    p = subprocess.run([sys.executable, "-c", code[0]], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=py))
    assert p.returncode == 0 and p.stdout.strip().endswith("True"), p.stdout + p.stderr


def test_plugin_kernel():
    """A plugin library's kernel (tests/plugins/reveal_planted.c, built into
    BUILD/plugins/ beside liblowp.so): the hidden fp16 conversion of B found,
    the lanes kernel's tree and its twin."""
    import os
    so = os.path.join(os.path.dirname(lowp.library_path()), "plugins", "reveal_planted.so")
    if not os.path.exists(so):
        pytest.skip("no " + so + " (built with the tree's plugins)")
    r = lowp.reveal(so, "gemm", shape=(2, 2, 64), input="fp32", kernel="gemm_hidden_b16", validate=200)
    assert r.convert == {"B": {"format": "fp16", "rnd": "rne"}} and r.has_tree, r
    r = lowp.reveal(so, "gemm", shape=(2, 2, 64), input="fp16", kernel="gemm_lanes", validate=200)
    f = lanes_gemm(32)
    A = RNG.standard_normal((2, 64)).astype(np.float16)
    B = RNG.standard_normal((64, 2)).astype(np.float16)
    assert np.array_equal(r.twin(A, B), f(A[None], B[None])[0].astype(np.float64))
    with pytest.raises(lowp.LowpError, match="nosuch"):
        lowp.reveal(so, "gemm", shape=(2, 2, 64), input="fp16", kernel="nosuch")
    with pytest.raises(lowp.LowpError, match="callable"):
        lowp.reveal(f, "gemm", shape=(2, 2, 64), input="fp16", kernel="gemm_lanes")
