"""Brute-force error distributions of honest and planted sum-of-products
kernels against lowp's derived tolerances (issue 31's numbers).

Kernels (numpy, vectorised over trials; one rounding per operation):
recursive, pairwise (ceil(log2 k) levels) and blocked:64 accumulation in a
given numpy float type; planted bugs: an fp16 accumulator where fp32 is
declared, the last K-block of 64 dropped, inputs truncated to bf16 where
fp16 is declared. The exact reference is binary64 (products of fp16/bf16/
fp32 values are exact there); its own error, at most gamma_k(2^-53) sum
|a_i b_i|, is added to the tolerance (far below it).

    /usr/bin/python3 python/tests/brute.py [TRIALS] [K...]   # the table
    /usr/bin/python3 python/tests/brute.py 100000 16384 --triple fp16/fp32/fp16 --progress 10000
"""

import math
import sys

import numpy as np

import lowp

U64 = 2.0 ** -53


def to_bf16(x):
    """Round float32 values to bf16 (rne), as float32."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


def trunc_bf16(x):
    b = np.asarray(x, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return b.view(np.float32)


def data(rng, kind, shape, fmt):
    """Inputs of one kind in format fmt ("fp16", "bf16", "fp32"), as float32/16."""
    if kind == "normal":
        x = rng.standard_normal(shape)
    elif kind == "positive":            # same-sign terms: no cancellation
        x = rng.uniform(0, 1, shape)
    elif kind == "small":               # products and sums in fp16's subnormal range
        x = rng.standard_normal(shape) * 2.0 ** -9
    elif kind == "wide":                # magnitudes over 2^-12 .. 2^4
        x = rng.standard_normal(shape) * 2.0 ** rng.uniform(-12, 4, shape)
    else:
        raise ValueError(kind)
    if fmt == "fp16":
        return x.astype(np.float16)
    if fmt == "bf16":
        return to_bf16(x.astype(np.float32))
    return x.astype(np.float32)


def acc_dtype(fmt):
    return {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}[fmt]


def products(a, b, acc):
    """Products rounded to acc (exact for fp16 x fp16 in fp32)."""
    return (a.astype(np.float64) * b.astype(np.float64)).astype(acc)


def recursive(p, acc):
    s = np.zeros(p.shape[0], dtype=acc)
    for i in range(p.shape[1]):
        s = (s + p[:, i]).astype(acc)
    return s


def pairwise(p, acc):
    p = p.astype(acc)
    while p.shape[1] > 1:
        if p.shape[1] % 2:
            p = np.concatenate([p, np.zeros((p.shape[0], 1), dtype=acc)], axis=1)
        p = (p[:, 0::2] + p[:, 1::2]).astype(acc)
    return p[:, 0]


def blocked(p, acc, block=64):
    t, k = p.shape
    nb = -(-k // block)
    pad = np.zeros((t, nb * block - k), dtype=acc)
    q = np.concatenate([p.astype(acc), pad], axis=1).reshape(t * nb, block)
    return recursive(recursive(q, acc).reshape(t, nb), acc)


KERNELS = {"recursive": recursive, "pairwise": pairwise, "blocked:64": blocked}


def dots(a, b, acc, order="recursive", out=None):
    """Honest dot products: products in acc, accumulation order in acc, output rounded."""
    c = KERNELS[order](products(a, b, acc), acc)
    return c.astype(out) if out is not None else c


def exact(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    p = a64 * b64
    x = p.sum(axis=1)
    s = np.abs(p).sum(axis=1)
    return x, s


def tol_arrays(a, b, inp, acc, out, order="recursive", **kw):
    t = lowp.tolerance("dot", inputs=(a, b), input=inp, acc=acc, out=out,
                       method=order, accept_vacuous=True, **kw)
    return t


def violations(c, x, s, t):
    """Elements outside atol + rtol |x| (atol widened by the reference's own error)."""
    k = None
    at = np.asarray(t.atol) + 2 * (s * U64 * 64)  # binary64 reference: pairwise numpy sum
    rt = t.rtol
    err = np.abs(c.astype(np.float64) - x)
    return err > at + rt * np.abs(x), err / (at + rt * np.abs(x))


FORMAT_TRIPLES = [("fp16", "fp32", "fp16"), ("bf16", "fp32", "bf16"), ("fp32", "fp32", "fp32"),
                  ("fp16", "fp16", "fp16")]
NP_OUT = {"fp16": np.float16, "fp32": np.float32, "bf16": None}


def honest(a, b, inp, acc, out, order):
    c = dots(a, b, acc_dtype(acc), order)
    if out == "bf16":
        return to_bf16(c.astype(np.float32))
    return c.astype(NP_OUT[out])


def soundness(trials, ks, triples=FORMAT_TRIPLES, kinds=("normal", "positive", "small", "wide"),
              orders=("recursive", "pairwise", "blocked:64"), seed=31, chunk=256, log=None,
              progress=0):
    """{(triple, k, order): (trials, violations, worst ratio, probabilistic share)}.
    Each chunk of inputs (and its exact result) is shared by every order.
    With progress=N, log a running count every N trials (a long run that is
    stopped still says how many trials it completed)."""
    rng = np.random.default_rng(seed)
    res = {}
    for trip in triples:
        inp, acc, out = trip
        for k in ks:
            acc_o = {o: [0, 0, 0.0, 0] for o in orders}  # trials, violations, worst, probabilistic
            n = 0
            while n < trials:
                kind = kinds[(n // chunk) % len(kinds)]
                m = min(chunk, trials - n)
                a, b = data(rng, kind, (m, k), inp), data(rng, kind, (m, k), inp)
                x, s = exact(a, b)
                for order in orders:
                    st = acc_o[order]
                    t = tol_arrays(a, b, inp, acc, out, order)
                    st[0] += m
                    if t.vacuous:
                        st[2] = math.nan
                        continue
                    v, r = violations(honest(a, b, inp, acc, out, order), x, s, t)
                    st[1] += int(v.sum())
                    st[2] = max(st[2], float(np.max(r)))
                    st[3] += m if t.probabilistic else 0
                n += m
                if log and progress and (n % progress < chunk or n == trials):
                    log("  %s k=%d: %d trials so far, violations %s, worst %s" % (
                        "/".join(trip), k, n, {o: v[1] for o, v in acc_o.items()},
                        {o: round(v[2], 4) for o, v in acc_o.items()}))
            for order in orders:
                tr, bad, worst, prob = acc_o[order]
                res[(trip, k, order)] = (tr, bad, worst, prob / tr)
                if log:
                    log("%s k=%d %s: %d trials, %d violations, worst %.3g of the tolerance, "
                        "probabilistic %.0f%%" % ("/".join(trip), k, order, tr, bad, worst,
                                                  100 * prob / tr))
    return res


TORCH = {"fp16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5), "fp32": (1.3e-6, 1e-5)}


def gemm_case(rng, k, bug, inp="fp16"):
    """16x16 outputs of an honest (fp32 acc) kernel and a planted one; exact result."""
    a = data(rng, "normal", (16, k), inp)
    b = data(rng, "normal", (k, 16), inp)
    at = np.repeat(a, 16, axis=0)            # 256 dot products: row i, column j
    bt = np.tile(b.T, (16, 1))
    x, s = exact(at, bt)
    hon = dots(at, bt, np.float32).astype(np.float16)
    if bug == "fp16acc":
        bad = dots(at, bt, np.float16).astype(np.float16)
    elif bug == "dropblock":
        kk = (k // 64 - 1) * 64 if k > 64 else k - 1
        bad = dots(at[:, :kk], bt[:, :kk], np.float32).astype(np.float16)
    elif bug == "bf16in":
        bad = dots(trunc_bf16(at.astype(np.float32)).astype(np.float32),
                   trunc_bf16(bt.astype(np.float32)).astype(np.float32),
                   np.float32).astype(np.float16)
    else:
        raise ValueError(bug)
    return a, b, x.reshape(16, 16), hon.reshape(16, 16), bad.reshape(16, 16)


def sensitivity(k, bug, tests, seed=7):
    """Per 16x16 test: caught by lowp's data-aware tolerance, honest passes it;
    the same for torch's fp16 default. Returns rates."""
    rng = np.random.default_rng(seed)
    caught = hon_fail = t_caught = t_hon_fail = 0
    worst_hon = 0.0
    rt_t, at_t = TORCH["fp16"]
    for _ in range(tests):
        a, b, x, hon, bad = gemm_case(rng, k, bug)
        t = lowp.tolerance("gemm", inputs=(a, b), acc="fp32", out="fp16")
        lim = t.atol + t.rtol * np.abs(x)
        worst_hon = max(worst_hon, float(np.max(np.abs(hon - x) / lim)))
        hon_fail += bool(np.any(np.abs(hon - x) > lim))
        caught += bool(np.any(np.abs(bad - x) > lim))
        tl = at_t + rt_t * np.abs(x)
        t_hon_fail += bool(np.any(np.abs(hon - x) > tl))
        t_caught += bool(np.any(np.abs(bad - x) > tl))
    return {"caught": caught / tests, "honest_fail": hon_fail / tests,
            "torch_caught": t_caught / tests, "torch_honest_fail": t_hon_fail / tests,
            "worst_honest": worst_hon}


def long_run(trials, ks, log):
    """The representative subset of issue 31's soundness table (tests/long):
    fp16 in / fp32 acc / fp16 out with recursive, pairwise and blocked
    accumulation; bf16/fp32/bf16 and fp32/fp32/fp32 recursive; fp16
    accumulation where it is not vacuous (K <= 256); then the 16 x 16
    sensitivity cases against torch's default."""
    res = soundness(trials, ks, triples=[("fp16", "fp32", "fp16")], log=log)
    res.update(soundness(trials, ks, triples=[("bf16", "fp32", "bf16"), ("fp32", "fp32", "fp32")],
                         orders=("recursive",), log=log))
    res.update(soundness(trials, [k for k in ks if k <= 256], triples=[("fp16", "fp16", "fp16")],
                         log=log))
    ok = all(v[1] == 0 for v in res.values())
    for k in ks:
        for bug in ("fp16acc", "dropblock", "bf16in"):
            r = sensitivity(k, bug, 100)
            log("16x16 K=%d %s: caught %.2f, honest fails %.2f; torch default caught %.2f, "
                "honest fails %.2f; largest honest error %.3g of the tolerance" %
                (k, bug, r["caught"], r["honest_fail"], r["torch_caught"],
                 r["torch_honest_fail"], r["worst_honest"]))
            ok = ok and r["honest_fail"] == 0 and (r["caught"] >= 0.99 or
                                                   (bug == "fp16acc" and k < 4096) or
                                                   (bug == "dropblock" and k < 16384))
    return ok


def main(argv):
    """brute.py [TRIALS] [K...]: long_run's table. With --triple IN/ACC/OUT
    (repeatable) and optionally --orders O1,O2 and --progress N: only the
    soundness rows of those triples (a piece of the table, in its own process)."""
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trials", nargs="?", type=int, default=2000)
    ap.add_argument("ks", nargs="*", type=int)
    ap.add_argument("--triple", action="append", default=[],
                    help="IN/ACC/OUT, e.g. fp16/fp32/fp16: soundness of this triple only")
    ap.add_argument("--orders", default="recursive,pairwise,blocked:64")
    ap.add_argument("--progress", type=int, default=0, help="log a count every N trials")
    ap.add_argument("--seed", type=int, default=31)
    o = ap.parse_args(argv)
    ks = o.ks or [64, 256, 1024, 4096, 16384]
    log = lambda s: print(s, flush=True)  # noqa: E731
    if not o.triple:
        return 0 if long_run(o.trials, ks, log) else 1
    trips = []
    for t in o.triple:
        parts = t.split("/")
        if len(parts) != 3 or any(f not in ("fp16", "bf16", "fp32") for f in parts) \
                or parts[1] == "bf16":
            ap.error("--triple %r: IN/ACC/OUT of fp16, bf16, fp32 (ACC not bf16)" % t)
        trips.append(tuple(parts))
    orders = tuple(o.orders.split(","))
    if any(x not in KERNELS for x in orders):
        ap.error("--orders: a comma-separated list of %s" % ", ".join(KERNELS))
    res = soundness(o.trials, ks, triples=trips, orders=orders, seed=o.seed, log=log,
                    progress=o.progress)
    return 0 if all(v[1] == 0 for v in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
