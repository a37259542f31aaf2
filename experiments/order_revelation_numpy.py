"""order-revelation, part 4: NumPy's sum and matmul revealed (issue 32).

Run by `lowp run order-revelation` (experiments/order_revelation.c) with
Debian's python3 and its numpy:
    python3 order_revelation_numpy.py LIBLOWP PYTHON_DIR SUM_K MATMUL_K VALIDATE SEED
(SUM_K and MATMUL_K: comma-separated K). Prints one JSON object: numpy's
version and one row per case, or {"skipped": why} when numpy or lowp's
Python module cannot be imported. Every number comes from lowp: the tree
from lowp.reveal (lib/check/reveal.c through the C API, numpy called back on
lowp's own probes), the errors and bounds from lowp.check (the exact
reference of lib/exact): the componentwise backward error of numpy's output
on seeded normal inputs against the gamma bound of the order a user would
declare (recursive; for sum also pairwise, numpy's documented method); the
revealed trees themselves (lowp.Reveal.json), whose bound the experiment
computes. Wall times are returned apart ("seconds"), for
timing.csv only.
"""

import json
import os
import sys
import time


def main(argv):
    lib, pydir, sum_k, mm_k, validate, seed = argv[1:7]
    os.environ["LOWP_LIBRARY"] = lib
    sys.path.insert(0, pydir)
    try:
        import numpy as np
    except Exception as e:  # noqa: BLE001 - any failure to import is the reason given
        return {"skipped": "numpy does not import in %s: %s" % (sys.executable, e)}
    try:
        import lowp
    except Exception as e:  # noqa: BLE001
        return {"skipped": "lowp's Python module does not import: %s" % e}
    validate, seed = int(validate), int(seed)
    rows = []
    cases = [("sum", int(k)) for k in sum_k.split(",") if k] + [("matmul", int(k)) for k in mm_k.split(",") if k]
    for what, K in cases:
        if what == "sum":
            fn, op, shape, n_out = (lambda x: np.sum(x, axis=-1)), "sum", (1, K), 1
        else:
            fn, op, shape, n_out = (lambda a, b: np.matmul(a, b)), "gemm", (2, 2, K), 4
        t0 = time.perf_counter()
        rv = lowp.reveal(fn, op=op, shape=shape, input="fp32", validate=validate, seed=seed)
        secs = time.perf_counter() - t0
        row = {"what": "numpy.%s" % what, "op": op, "shape": list(shape), "K": K, "seconds": secs,
               "deterministic": rv.deterministic, "classes": len(rv.classes), "probes": rv.probes,
               "calls": rv.calls, "class_probes": max(c["probes"] for c in rv.classes) if rv.classes else 0,
               "validated": sum(c["validated"] for c in rv.classes), "has_tree": rv.has_tree,
               "depth": [min(c["depth"][0] for c in rv.classes if c["tree"] is not None),
                         max(c["depth"][1] for c in rv.classes if c["tree"] is not None)] if rv.has_tree else None,
               "arith": rv.classes[0]["arith"] if rv.has_tree else rv.classes[0]["note"] if rv.classes else rv.summary}
        # the error numpy really gives, against the bounds of the declared orders and of the revealed tree
        rng = np.random.default_rng(seed)
        if op == "sum":
            ins = [rng.standard_normal((64, K)).astype(np.float32)]
            got = np.sum(ins[0], axis=-1)
        else:
            ins = [rng.standard_normal((2, K)).astype(np.float32), rng.standard_normal((K, 2)).astype(np.float32)]
            got = np.matmul(ins[0], ins[1])
        bounds = {}
        decl = ["recursive", "pairwise"] if op == "sum" else ["recursive"]
        for order in decl:
            r = lowp.check(op, ins, got, [{"bound": "gamma"}], acc="fp32", order=order)
            bounds[order] = r.rules[0]
        # the revealed trees go back whole: the experiment takes their bound (lowp_reveal_bound)
        if rv.has_tree:
            row["reveal"] = rv.json
        row["backward_error"] = bounds["recursive"]["measured"]
        row["bounds"] = {k: {"bound": v["limit"], "percent": v["percent"]} for k, v in bounds.items()}
        rows.append(row)
    return {"numpy": np.__version__, "rows": rows}


if __name__ == "__main__":
    try:
        res = main(sys.argv)
    except Exception as e:  # noqa: BLE001 - reported as the reason, the experiment writes it
        res = {"error": "%s: %s" % (type(e).__name__, e)}
    print(json.dumps(res))
