"""Brute force of the row-operation tolerances with mixed formats (issue 31
item 3): lowp's registry row kernels computing in fp16 with an fp32 row sum
(PyTorch's ATen formats), checked by `lowp check` against the exact result
with the tolerance lowp_tol derives for compute=fp16, acc=fp32 (and, for
comparison, the single-format one it derived before: every step in fp32).

    /usr/bin/python3 python/tests/brute_rows.py [SEEDS]   # the table
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import lowp

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXE = os.environ.get("LOWP_CLI", os.path.join(REPO, "build", "lowp"))

KERNELS = {"softmax": "softmax_stable", "logsoftmax": "logsoftmax", "logsumexp": "logsumexp",
           "rmsnorm": "rmsnorm", "xent": "xent"}


def row_scale(op, x):
    return float(np.max(np.abs(x.astype(np.float64))))


def run(op, x, compute, acc, tols, tmp, target=None):
    """measured |d| / (atol + rtol |x|) for each (rtol, atol) in tols."""
    np.save(os.path.join(tmp, "x.npy"), x)
    files = ["x.npy"]
    if target is not None:
        np.save(os.path.join(tmp, "t.npy"), target)
        files.append("t.npy")
    spec = {"lowp_check": 1, "checks": [{
        "name": op, "op": op, "in": "fp16", "out": "fp16",
        "subject": {"kernel": KERNELS[op], "params": "compute=%s,acc=%s" % (compute, acc)},
        "shape": {"m": x.shape[0], "n": x.shape[1]}, "inputs": {"files": files},
        "rules": [{"rtol": r, "atol": a} for r, a in tols]}]}
    with open(os.path.join(tmp, "s.json"), "w") as f:
        json.dump(spec, f)
    subprocess.run([EXE, "check", "s.json", "--json", "o.json"], cwd=tmp, check=False,
                   capture_output=True)
    with open(os.path.join(tmp, "o.json")) as f:
        js = json.load(f)
    return [r["measured"] for r in js["checks"][0]["rules"]]


def sweep(seeds=2, ns=(64, 1024, 4096), scales=(0.5, 3.0, 10.0), ops=tuple(KERNELS), log=None):
    """{(op, n, scale): (worst measured with the mixed bound, with the old fp32-only one)}."""
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for op in ops:
            for n in ns:
                for sc in scales:
                    worst_new = worst_old = 0.0
                    for seed in range(seeds):
                        rng = np.random.default_rng(1000 * seed + n)
                        x = (rng.standard_normal((32, n)) * sc).astype(np.float16)
                        tgt = rng.integers(0, n, 32).astype(np.int32) if op == "xent" else None
                        s = row_scale(op, x)
                        new = lowp.tolerance(op, k=n, input="fp16", compute="fp16", acc="fp32",
                                             out="fp16", scale=s)
                        old = lowp.tolerance(op, k=n, input="fp16", compute="fp32", acc="fp32",
                                             out="fp16", scale=s)
                        m = run(op, x, "fp16", "fp32", [(new.rtol, new.atol),
                                                         (old.rtol, old.atol)], tmp, tgt)
                        worst_new = max(worst_new, m[0])
                        worst_old = max(worst_old, m[1])
                    res[(op, n, sc)] = (worst_new, worst_old)
                    if log:
                        log("%s n=%d scale %g: %.3g of the fp16/fp32 tolerance (fp32-only "
                            "tolerance: %.3g)" % (op, n, sc, worst_new, worst_old))
    return res


if __name__ == "__main__":
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    r = sweep(seeds, log=lambda s: print(s, flush=True))
    sys.exit(1 if any(v[0] > 1 for v in r.values()) else 0)
