"""Floating-point exceptions from Python (README "Floating-point exceptions").

    s = lowp.fpx_scan(x, "e4m3")           # any array or tensor against a format
    s.first("overflow"), s.counts, s.exponents
    r = lowp.check("gemm", [A, B], C, fpx=True)
    r.fpx  # the first NaN/inf output, and which inputs already held one

Every number comes from liblowp (lib/measure/fpx.c through lib/check/fpx_json.c).
"""

import ctypes
import functools
import json

import numpy as np

from . import _arrays, _lib
from ._lib import LowpError

_DECLARED = set()


def _fn(name, argtypes):
    lib = _lib._load()
    if name not in _DECLARED:
        f = getattr(lib, name)
        f.argtypes = argtypes
        f.restype = ctypes.c_int
        _DECLARED.add(name)
    return lib, getattr(lib, name)


class FpxScan:
    """What lowp.fpx_scan found: .counts {kind: n}, .kinds (the full JSON per
    kind: count, inherent, spurious, first occurrence), .first_bad (first
    index with any exception or already NaN/inf, -1 if none), .nan_in,
    .inf_in, .exponents ({"lo": e, "counts": [...]}), .json (everything)."""

    def __init__(self, js, shape):
        self.json = js
        self.shape = tuple(shape)
        tr = js["trace"]
        self.kinds = tr["kinds"]
        self.counts = {k: v["count"] for k, v in self.kinds.items()}
        self.first_kind = tr["first"]
        self.first_bad = js["first_bad"]
        self.nan_in, self.inf_in = js["nan_in"], js["inf_in"]
        self.exponents = js["exponents"]

    def first(self, kind):
        """The index (a tuple in the array's shape) of the first element of
        kind (a kind name or a group: overflow, underflow, nan), or None."""
        from_group = {"overflow": ("overflow_inf", "overflow_nan", "saturation"),
                      "underflow": ("underflow_subnormal", "underflow_zero"),
                      "nan": ("invalid", "nan_propagated")}
        names = from_group.get(kind, (kind,))
        idx = [self.kinds[n]["first"]["i"] for n in names if n in self.kinds]
        if not idx:
            return None
        return tuple(int(v) for v in np.unravel_index(min(idx), self.shape)) if self.shape else ()

    def __bool__(self):
        """True when nothing exceptional was found."""
        return not self.counts and self.nan_in == 0 and self.inf_in == 0

    def __repr__(self):
        return "FpxScan(%s, first=%s, first_bad=%d)" % (self.counts, self.first_kind,
                                                        self.first_bad)


def fpx_scan(x, format, rounding="rne", saturate=False):
    """Convert every element of x to format (as a cast would) and report the
    floating-point exceptions: counts per kind, the first index of each, the
    values already NaN/inf, and the histogram of exponents."""
    vals, _ = _arrays.to_values(x)
    shape = np.shape(vals)
    flat = np.ascontiguousarray(np.asarray(vals, dtype=np.float64).reshape(-1))
    q = {"format": format, "rounding": rounding, "overflow": "sat" if saturate else "ieee"}
    lib, f = _fn("lowp_capi_fpx_scan", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                        ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_size_t])
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(1024)
    st = f(ctypes.byref(out), flat.ctypes.data, flat.size, json.dumps(q).encode(), err, len(err))
    if st:
        _lib._fail(st, err)
    return FpxScan(_lib._take(lib, out), shape)


def fpx_outputs(output, inputs=()):
    """A black-box subject's output: {"first": flat index of the first NaN/inf
    output or -1, "kinds": [...], "inputs_exceptional": [bool per input]}."""
    ys = np.ascontiguousarray(np.asarray(_arrays.to_values(output)[0], dtype=np.float64).reshape(-1))
    xs = [np.ascontiguousarray(np.asarray(_arrays.to_values(a)[0], dtype=np.float64).reshape(-1))
          for a in inputs]
    n = len(xs)
    ptrs = (ctypes.c_void_p * max(n, 1))(*[a.ctypes.data for a in xs])
    cnts = (ctypes.c_size_t * max(n, 1))(*[a.size for a in xs])
    lib, f = _fn("lowp_capi_fpx_outputs", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                           ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                           ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t])
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(1024)
    st = f(ctypes.byref(out), ptrs, cnts, n, ys.ctypes.data, ys.size, err, len(err))
    if st:
        _lib._fail(st, err)
    return _lib._take(lib, out)


def _inherent(entry, op, inputs, output, kw):
    """entry["inherent"] / ["spurious"] / ["exact"] for output 0's first
    NaN/inf element: inherent when lowp's exact result there does not fit
    the output format either (NaN, infinite, or overflowing when rounded to
    it), spurious when it does (the subject lost it); None without an exact
    result (an input NaN or inf, or an operation lowp.exact refuses)."""
    from . import exact as _exact  # the package's lowp.exact (circular at import time)
    entry["inherent"] = entry["spurious"] = entry["exact"] = None
    if entry["first"] < 0 or any(entry.get("inputs_exceptional", [])):
        return entry
    try:
        ex = np.asarray(_exact(op, inputs, input=kw.get("input"), eps=kw.get("eps"),
                               reduction=kw.get("reduction")), dtype=np.float64).reshape(-1)
        fmt = _arrays.to_values(output, kw.get("out"))[1]
        e = float(ex[entry["first"]])
        s = fpx_scan(np.array([e]), fmt)
    except (LowpError, ValueError, TypeError, IndexError):
        return entry
    bad = (not np.isfinite(e)) or any(s.counts.get(k, 0) for k in ("overflow_inf", "overflow_nan", "saturation"))
    entry["exact"] = e
    entry["inherent"] = bool(bad)
    entry["spurious"] = not bad
    return entry


def with_fpx(check):
    """lowp.check with fpx=True: the result gets .fpx, a list with one entry
    per output (None for an output not produced): fpx_outputs of that output
    against the inputs; for output 0 also "inherent" / "spurious" (the exact
    result there does not / does fit the output format) and "exact"."""
    @functools.wraps(check)
    def wrapped(op, inputs, output, *args, fpx=False, **kw):
        r = check(op, inputs, output, *args, **kw)
        if fpx:
            outs = list(output) if isinstance(output, (list, tuple)) else [output]
            ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            r.fpx = [None if o is None else fpx_outputs(o, ins) for o in outs]
            if r.fpx and r.fpx[0] is not None:
                _inherent(r.fpx[0], op, ins, outs[0], kw)
        return r
    return wrapped
