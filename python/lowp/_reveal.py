"""lowp.reveal: the summation order, accumulator and hidden conversions of any
Python callable on numpy or torch arrays (FPRev: Xie et al., USENIX ATC 2025,
arXiv:2411.00442), and its bit-exact twin.

The callable is probed through lowp's C API (lowp_capi_reveal): lowp's own
subject calls back into Python with binary64 arrays (its crafted probes and
random validation inputs), which are handed to the callable in the declared
input dtypes; its outputs go back as binary64. Every number comes from
lib/check/reveal.c, exactly as for a plugin kernel (`lowp reveal`).
"""

import ctypes
import json

import numpy as np

from . import _arrays, _lib

# the dims of each operation from a shape tuple (lowp_op_shape's axes)
_SHAPE_KEYS = {"gemm": ("m", "n", "k"), "gemv": ("m", "k"), "dot": ("k",), "sum": ("m", "n")}
_NUMPY_DTYPES = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}


def _dims(op, shape):
    if op not in _SHAPE_KEYS:
        raise _lib.LowpError("reveal: %r is not a sum of products (sum, dot, gemv, gemm)" % (op,))
    keys = _SHAPE_KEYS[op]
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if op == "sum" and len(shape) == 1:
        shape = (1,) + shape
    if len(shape) != len(keys):
        raise _lib.LowpError("reveal: the shape of %s is (%s), not %r" % (op, ", ".join(keys), shape))
    return {k: int(v) for k, v in zip(keys, shape)}


def _to_dtype(a, fmt, torch_mode):
    """binary64 values of fmt as the array type the callable reads"""
    if fmt in _NUMPY_DTYPES and not torch_mode:
        return a.astype(_NUMPY_DTYPES[fmt])
    try:
        import torch
    except ImportError:
        raise _lib.LowpError("reveal: input format %s needs torch (numpy has no %s dtype)" % (fmt, fmt)) from None
    dt = {"fp16": torch.float16, "fp32": torch.float32, "fp64": torch.float64, "bf16": torch.bfloat16,
          "e4m3": getattr(torch, "float8_e4m3fn", None), "e5m2": getattr(torch, "float8_e5m2", None)}.get(fmt)
    if dt is None:
        raise _lib.LowpError("reveal: input format %s has no torch dtype here" % fmt)
    return torch.from_numpy(np.ascontiguousarray(a)).to(dt)


def _result(y, n):
    """the callable's output as n binary64 values"""
    if _arrays.is_torch(y):
        vals, _ = _arrays.to_values(y, what="the callable's output", output=True)
    else:
        vals = np.asarray(y)
        if vals.dtype.kind not in "fi":
            raise _lib.LowpError("reveal: the callable returned %s values, not numbers" % vals.dtype)
    vals = np.asarray(vals, dtype=np.float64).reshape(-1)
    if vals.size != n:
        raise _lib.LowpError("reveal: the callable returned %d values, the problem has %d outputs" % (vals.size, n))
    return vals


class Reveal:
    """What lowp.reveal found (the JSON of `lowp reveal --json`, read):

    deterministic: False when two identical calls differed (then no trees);
    accumulator_bits: the accumulator precision seen at the output;
    output_format: None, or the narrower format every output is a value of
        (a kernel that rounds its result, e.g. torch's bf16 matmul returned
        as float32): lowp revealed it with that output;
    acc_bits_assumed: None, or the accumulator bits the probes were sized
        for (53: a wider accumulator hidden behind the output);
    conversions: per input, what it is read as; convert: the conversions
        found, as lowp.check(convert=...) and a spec's "convert" take them;
    classes: output positions that share a tree, each with "positions",
        "tree" (model/tree.h JSON, None when none), "depth" [min, max] of
        its leaves, "arith" (the arithmetic in words), "validated" (outputs
        the twin reproduced bit for bit), "note";
    tree: the one class's tree (when there is one class);
    twin(*inputs): the revealed computation on new inputs, bit for bit;
    save(path): the file `lowp twin --tree` and a spec's {"tree": FILE} read.
    """

    def __init__(self, js, desc):
        self.json = js
        self._desc = {k: desc[k] for k in ("op", "dims", "in", "out")}  # the problem alone
        self.op = js["op"]
        self.K = js["K"]
        self.deterministic = bool(js["deterministic"])
        self.accumulator_bits = js["precision_seen"]
        self.output_format = js.get("output_format")
        self.acc_bits_assumed = js.get("acc_bits_assumed")
        self.conversions = js["conversions"]
        self.classes = js["classes"]
        self.summary = js["summary"]
        self.calls, self.probes = js["calls"], js["probes"]
        self.convert = {c["input"]: {"format": c["format"], "rnd": c["rnd"]}
                        for c in self.conversions if c.get("converted")}

    @property
    def tree(self):
        if len(self.classes) != 1:
            raise _lib.LowpError("%d classes of output positions: see .classes" % len(self.classes))
        return self.classes[0]["tree"]

    @property
    def has_tree(self):
        """every class has a validated tree"""
        return self.deterministic and all(c["tree"] is not None for c in self.classes)

    def save(self, path):
        with open(path, "w") as f:
            json.dump(self.json, f, indent=1)

    def twin(self, *inputs, batch=None):
        """The revealed trees and conversions evaluated on inputs (numpy or
        torch arrays of the revealed shape, with an optional leading batch
        axis); returns float64 outputs."""
        io = _lib.call_json("lowp_capi_shapes", dict(self._desc))
        if len(inputs) != len(io["inputs"]):
            raise _lib.LowpError("twin: %d inputs given, %s takes %d" % (len(inputs), self.op, len(io["inputs"])))
        fmts = self._desc["in"]
        vals = [_arrays.to_values(x, f, what="input " + n)[0]
                for x, f, n in zip(inputs, fmts, io["inputs"])]
        per = int(np.prod(io["shapes"][0]))
        b = batch if batch is not None else vals[0].size // per
        if b < 1 or (batch is None and b * per != vals[0].size):
            raise _lib.LowpError("twin: input %s holds %d values, not a multiple of %d (the revealed shape %s)"
                                 % (io["inputs"][0], vals[0].size, per, io["shapes"][0]))
        desc = dict(self._desc)
        desc["dims"] = dict(desc["dims"], batch=int(b))
        shp = _lib.call_json("lowp_capi_shapes", desc)["shapes"]
        for v, s, n in zip(vals, shp, io["inputs"]):
            if v.size != int(np.prod(s)):
                raise _lib.LowpError("twin: input %s holds %d values, the problem %s" % (n, v.size, s))
        out = np.empty(int(np.prod(shp[len(vals)])), dtype=np.float64)
        _lib.twin(out, json.dumps(self.json), desc, [np.ascontiguousarray(v).reshape(-1) for v in vals])
        return out.reshape(shp[len(vals)])

    def __repr__(self):
        lines = ["lowp.Reveal(%s, K=%d): %s" % (self.op, self.K, self.summary),
                 "  accumulator bits seen at the output: %d" % self.accumulator_bits]
        if self.output_format:
            lines.append("  output: %s values (the kernel rounds its result to %s)" % (self.output_format,
                                                                                    self.output_format))
        if self.acc_bits_assumed:
            lines.append("  accumulator: wider than the output (probes sized for %d bits)" % self.acc_bits_assumed)
        for c in self.conversions:
            lines.append("  %s: %s" % (c["input"], "rounded to %s (%s) before use" % (c["format"], c["rnd"])
                                         if c.get("converted") else "read as declared (%s)" % c["declared"]))
        for i, c in enumerate(self.classes):
            lines.append("  class %d (%d positions): %s" % (i, len(c["positions"]),
                                                            (c["arith"] + ", depth %d..%d" % tuple(c["depth"]))
                                                            if c["tree"] is not None else "no tree: " + c["note"]))
        return "\n".join(lines)


def reveal(fn, op="gemm", shape=None, input="fp32", out=None, *, seed=1, validate=None, batched=False,
           torch=False, max_elems=None, kernel=None):
    """Reveal what fn computes: its summation tree per class of output
    positions, its accumulator, its hidden input conversions, its twin.

    fn may also be a plugin library's path (str or os.PathLike; a lowp
    check plugin, include/lowp_plugin.h) with kernel= its table entry (None:
    the only entry of the operation): each call runs in a child process, as
    lowp check and lowp reveal run plugins.

    fn: a callable on arrays: fn(A, B) -> C for gemm (A m x k, B k x n),
        fn(A, x) for gemv, fn(x, w) for dot, fn(x) for sum (over the last
        axis); numpy arrays, or torch tensors with torch=True (and for
        bf16/fp8 inputs). With batched=True fn gets a leading batch axis
        (numpy/torch matmul broadcasting) and lowp calls it less often:
        only for a fn whose order does not depend on the batch size (lowp
        packs its probes into batches of its own choosing; torch's bf16
        matmul, for one, sums 2-D and batched 3-D products differently),
        else the tree found is the batched kernel's, not the one called
        on a single problem (the default, batched=False, calls fn on each).
    shape: (m, n, k) for gemm, (m, k) gemv, (k,) dot, (m, n) or (n,) sum.
    input: the input format(s) fn reads ("fp16", or one per input); out:
        the output format fn's values are in (default fp32; fp64 when
        every input is fp64).
    Returns a Reveal (see its doc); raises LowpError when lowp cannot probe
    (formats too narrow for the probes, an operation that is not a sum).
    """
    if shape is None:
        raise _lib.LowpError("reveal: give the shape, e.g. shape=(m, n, k) for gemm")
    dims = _dims(op, shape)
    io = _lib.call_json("lowp_capi_shapes", {"op": op, "dims": dims})
    n_in = len(io["inputs"])
    fmts = [input] * n_in if isinstance(input, str) else list(input)
    if len(fmts) != n_in:
        raise _lib.LowpError("reveal: %d input formats for %d inputs" % (len(fmts), n_in))
    out = out or ("fp64" if all(f == "fp64" for f in fmts) else "fp32")
    desc = {"op": op, "dims": dims, "in": fmts, "out": out, "seed": int(seed)}
    if validate is not None:
        desc["validate"] = int(validate)
    if max_elems is not None:
        desc["max_elems"] = int(max_elems)
    if isinstance(fn, (str, bytes)) or hasattr(fn, "__fspath__"):
        return Reveal(_lib.reveal_plugin(desc, fn, kernel), desc)
    if kernel is not None:
        raise _lib.LowpError("reveal: kernel= names a plugin's kernel; fn is a callable")
    raised = []

    def call(ctx, outp, inp, dimsp):
        try:
            d = dict(dims, batch=int(dimsp[0]), m=int(dimsp[1]), n=int(dimsp[2]), k=int(dimsp[3]))
            one = _lib.call_json("lowp_capi_shapes", {"op": op, "dims": dict(d, batch=1)})["shapes"]
            bt = d["batch"]
            ins = []
            for i in range(n_in):
                cnt = bt * int(np.prod(one[i]))
                a = np.ctypeslib.as_array((ctypes.c_double * cnt).from_address(inp[i]))
                ins.append(_to_dtype(a.reshape((bt,) + tuple(one[i])), fmts[i], torch))
            nout = int(np.prod(one[n_in]))
            if batched:
                y = _result(fn(*ins), bt * nout)
            else:
                y = np.concatenate([_result(fn(*[x[b] for x in ins]), nout) for b in range(bt)])
            dst = np.ctypeslib.as_array((ctypes.c_double * (bt * nout)).from_address(outp[0]))
            dst[:] = y
            return 0
        except BaseException as e:  # noqa: B902 -- re-raised in the caller's thread below
            raised.append(e)
            return 1

    try:
        js = _lib.reveal(desc, call)
    except _lib.LowpError:
        if raised:
            raise raised[0]
        raise
    return Reveal(js, desc)
