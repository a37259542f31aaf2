"""lowp for Python: precision checks against the exact result, and tolerances
derived from first principles (a thin ctypes binding over liblowp: every
number comes from lowp's C pipeline, lib/check).

    import lowp
    r = lowp.check("gemm", [A, B], C, acc="fp32", rules=[{"bound": "gamma"}])
    lowp.assert_precision("gemm", [A, B], C, rules=[{"assert_close": "pytorch"}])
    rtol, atol = lowp.tolerance("gemm", k=4096, input="bf16", acc="fp32", out="bf16")

See python/README.md and the README's "Python" section.
"""

import math

import numpy as np

from . import _arrays, _lib
from ._lib import LowpError, library_path

__all__ = ["check", "assert_precision", "tolerance", "CheckResult", "Tolerance", "LowpError",
           "VacuousBoundError", "library_path", "DEFAULT_RULES"]
__version__ = "0.1.0"

#: the rules of lowp.check when none are given: NaN/inf classes agree with the
#: exact result's, and torch.testing.assert_close's defaults for the output dtype
DEFAULT_RULES = ({"nan_inf": "match"}, {"assert_close": "pytorch"})


class VacuousBoundError(LowpError):
    """The bound asked for does not exist for this K and precision: a test
    built on it could never fail (accept it with accept_vacuous=True)."""


def _num(v):
    if isinstance(v, str):
        return {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}.get(v, v)
    if isinstance(v, dict):
        return {k: _num(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_num(x) for x in v]
    return v


class CheckResult:
    """What lowp.check measured: verdict, metrics, bounds, rules, worst elements.

    Attributes: passed (bool; also the truth value), verdict ("pass"/"fail"),
    metrics (dict: max_ulp, max_abs, rmse, max_rel, max_bwd, mean_ulp,
    sqnr_db, cosine), outputs (per output: the same metrics, counts and the
    worst element), bounds (gamma/prob/model: value, used, name, vacuous),
    rules (per rule: rule, pass, measured, limit, percent, vacuous, message,
    worst = the element of the rule's own metric), mismatch (count, total,
    rtol, atol), message (lowp's one line), json (everything, as lowp
    returned it).
    """

    def __init__(self, js):
        self.json = _num(js)
        self.verdict = self.json["verdict"]
        self.passed = self.verdict == "pass"
        self.metrics = self.json.get("metrics", {})
        self.outputs = self.json.get("outputs", [])
        self.bounds = self.json.get("bounds", {})
        self.rules = self.json.get("rules", [])
        self.mismatch = self.json.get("mismatch", {})
        self.reference_metrics = self.json.get("reference_metrics")

    def __bool__(self):
        return self.passed

    @property
    def failed_rules(self):
        return [r for r in self.rules if not r["pass"]]

    @property
    def worst(self):
        """The element that decided the first failing rule (else the first rule's)."""
        rs = self.failed_rules or self.rules
        return rs[0].get("worst") if rs else None

    @property
    def message(self):
        """One line: the verdict and each failing rule's message (or every rule's)."""
        rs = self.failed_rules or self.rules
        head = "%s %s: %s" % (self.json["op"], self.verdict.upper(), self.json["subject"])
        return head + "; " + "; ".join("%s: %s" % (r["rule"], r["message"]) for r in rs)

    @property
    def mismatch_line(self):
        m = self.mismatch
        if not m:
            return ""
        tot = m["total"] or 1
        return "Mismatched elements: %d / %d (%.1f%%) under rtol=%g, atol=%g" % (
            m["count"], m["total"], 100.0 * m["count"] / tot, m["rtol"], m["atol"])

    def __repr__(self):
        return "<lowp.CheckResult %s>" % self.message


def _formats(inputs, output, op_shapes, input, out):
    """float64 arrays and format names of the inputs and outputs."""
    n_in = len(op_shapes["inputs"])
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    if len(inputs) != n_in:
        raise LowpError("%d inputs given, the operation takes %d (%s)" %
                        (len(inputs), n_in, ", ".join(op_shapes["inputs"])))
    ins, in_fmts = [], []
    for i, x in enumerate(inputs):
        f = input[i] if isinstance(input, (list, tuple)) else input
        is_index = op_shapes["index"][i]
        v, fmt = _arrays.to_values(x, None if is_index else f, index=is_index)
        ins.append(v)
        in_fmts.append(fmt)
    outs = list(output) if isinstance(output, (list, tuple)) else [output]
    n_out = len(op_shapes["outputs"])
    if len(outs) > n_out:
        raise LowpError("%d outputs given, the operation has %d (%s)" %
                        (len(outs), n_out, ", ".join(op_shapes["outputs"])))
    outs += [None] * (n_out - len(outs))
    out_vals, out_fmt = [], out
    for j, y in enumerate(outs):
        v, fmt = _arrays.to_values(y, out_fmt)
        if v is not None and out_fmt is None:
            out_fmt = fmt
        out_vals.append(v)
    if out_vals[0] is None:
        raise LowpError("the first output (%s) is needed" % op_shapes["outputs"][0])
    return ins, in_fmts, out_vals, out_fmt


def _op_io(op):
    """The operation's inputs, outputs and which inputs are indices (lowp's table)."""
    return _lib.call_json("lowp_capi_shapes", {"op": op, "in": "fp64", "dims": {}})


def _check_shapes(ins, outs, desc, io):
    sh = _lib.call_json("lowp_capi_shapes", desc)
    arrays = ins + outs
    names = io["inputs"] + io["outputs"]
    def lead(shape):  # leading axes of size 1 do not matter (lowp_op_shape_matches)
        shape = list(shape)
        while shape and shape[0] == 1:
            shape.pop(0)
        return shape
    for a, want, name in zip(arrays, sh["shapes"], names):
        if a is None:
            continue
        if lead(a.shape) != lead(want):
            raise LowpError("%s has shape %s; the problem needs shape %s" %
                            (name, list(a.shape), want), 9)


def check(op, inputs, output, rules=None, *, reference=None, input=None, out=None, acc=None,
          order=None, method=None, model=None, prob=None, eps=None, reduction=None,
          dims=None, name=None, reference_name=None):
    """Check a computation against lowp's exact result; returns a CheckResult.

    op: "gemm", "dot", "sum", "gemv", "softmax", "layernorm", "xent", ...
    inputs: the arrays the computation read (numpy, or torch tensors incl.
        bf16/fp8); output: its output array, or a tuple (layernorm: y, mean,
        var; None for one not produced).
    rules: the rules of a lowp check spec (docs/check-spec.schema.json), e.g.
        [{"bound": "gamma"}], [{"sqnr_db": 25}], [{"mismatch": "0.1%",
        "rtol": 1e-3, "atol": 1e-5}], [{"vs_reference": "outputs",
        "factor": 2, "floor": 1e-5}] with reference=...; default DEFAULT_RULES.
    input / out: formats (default: from the dtypes), one or one per input.
    acc + order (or method) / model: how the computation accumulates, for
        the bounds ("recursive", "pairwise", "blocked:32"; model "h100").
    prob: the probability of the probabilistic bound (0.99).
    A bound rule whose bound is vacuous raises VacuousBoundError unless the
    rule says "accept_vacuous": True.
    """
    io = _op_io(op)
    ins, in_fmts, outs, out_fmt = _formats(inputs, output, io, input, out)
    desc = {"op": op, "in": in_fmts, "out": out_fmt,
            "rules": list(DEFAULT_RULES if rules is None else rules)}
    if dims is not None:
        desc["dims"] = dict(dims)
    else:
        desc["shapes"] = [list(a.shape) for a in ins]
    for k, v in (("acc", acc), ("order", order or method), ("model", model), ("prob", prob),
                 ("eps", eps), ("reduction", reduction), ("subject", name),
                 ("reference", reference_name)):
        if v is not None:
            desc[k] = v
    _check_shapes(ins, outs, desc, io)
    ref_vals = None
    if reference is not None:
        refs = list(reference) if isinstance(reference, (list, tuple)) else [reference]
        refs += [None] * (len(outs) - len(refs))
        ref_vals = [_arrays.to_values(r, out_fmt)[0] for r in refs]
        ref_vals = [r if r is not None else outs[j] for j, r in enumerate(ref_vals)]
    ins = [np.ascontiguousarray(a.reshape(-1)) for a in ins]
    outs = [None if a is None else np.ascontiguousarray(a.reshape(-1)) for a in outs]
    if ref_vals is not None:
        ref_vals = [None if a is None else np.ascontiguousarray(a.reshape(-1)) for a in ref_vals]
    try:
        js = _lib.check_arrays(desc, ins, outs, ref_vals)
    except LowpError as e:
        if "vacuous" in str(e):
            raise VacuousBoundError(str(e), e.status) from None
        raise
    return CheckResult(js)


def assert_precision(op, inputs, output, rules=None, **kw):
    """lowp.check, raising AssertionError with lowp's one-line message and
    the mismatch count (as torch.testing.assert_close's "Mismatched
    elements: 556 / 768 (72.4%)") when a rule fails. Returns the result."""
    r = check(op, inputs, output, rules, **kw)
    if not r.passed:
        raise AssertionError(r.message + "\n" + r.mismatch_line)
    return r


class Tolerance:
    """A derived tolerance: rtol, atol (unpack: rtol, atol = t), bound,
    bound_acc, rtol_same_sign, vacuous, explanation (the derivation in words,
    with citations), kwargs (dict(rtol=, atol=) for assert_close)."""

    def __init__(self, js):
        js = _num(js)
        self.json = js
        self.rtol = js["rtol"]
        self.atol = js["atol"]
        self.bound = js["bound"]
        self.bound_acc = js["bound_acc"]
        self.rtol_same_sign = js["rtol_same_sign"]
        self.vacuous = js["vacuous"]
        self.bound_name = js["bound_name"]
        self.explanation = js["explanation"]

    @property
    def kwargs(self):
        return {"rtol": self.rtol, "atol": self.atol}

    def __iter__(self):
        return iter((self.rtol, self.atol))

    def __getitem__(self, i):
        return (self.rtol, self.atol)[i]

    def __len__(self):
        return 2

    def __repr__(self):
        return "Tolerance(rtol=%.4g, atol=%.4g)" % (self.rtol, self.atol)

    def __str__(self):
        return "rtol=%.4g, atol=%.4g: %s" % (self.rtol, self.atol, self.explanation)


def tolerance(op, k, input="fp32", acc="fp32", out=None, method="recursive", confidence=None,
              scale=None, accept_vacuous=False):
    """The (rtol, atol) a test of op should use, derived (lowp tol).

    k: the reduction length (k of dot/gemm; the row length of softmax...);
    input, acc, out: formats (out defaults to input); method: "recursive",
    "pairwise", "blocked:B", "splitk:S", "kahan", "fma", or
    "model:PRESET[,key=value]" (e.g. "model:h100,promote=128"); confidence:
    None or 1 for the worst case, P in (0, 1) for Higham & Mary's
    probabilistic bound (per element); scale: a bound on the mean of
    |a_i b_i| along k (sums of products; default 1) or on |x_i| (row ops).
    Raises VacuousBoundError when no bound exists (unless accept_vacuous:
    then rtol = atol = inf).
    """
    q = {"op": op, "k": int(k), "input": input, "acc": acc, "method": method}
    if out is not None:
        q["out"] = out
    if confidence is not None:
        q["confidence"] = float(confidence)
    if scale is not None:
        q["scale"] = float(scale)
    t = Tolerance(_lib.call_json("lowp_capi_tol", q))
    if t.vacuous and not accept_vacuous:
        raise VacuousBoundError("lowp.tolerance(%s, k=%d, input=%s, acc=%s): %s" %
                                (op, int(k), input, acc, t.explanation))
    return t

from ._fpx import FpxScan, fpx_outputs, fpx_scan, with_fpx as _with_fpx  # noqa: E402
check = _with_fpx(check)  # lowp.check(..., fpx=True): python/lowp/_fpx.py
