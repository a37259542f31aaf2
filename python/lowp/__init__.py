"""lowp for Python: precision checks against the exact result, and tolerances
derived from first principles (a thin ctypes binding over liblowp: every
number comes from lowp's C pipeline, lib/check).

    import lowp
    r = lowp.check("gemm", [A, B], C, acc="fp32", rules=[{"bound": "gamma"}])
    lowp.assert_precision("gemm", [A, B], C, rules=[{"bound": "gamma"}], acc="fp32")
    rtol, atol = lowp.tolerance("gemm", k=4096, input="bf16", acc="fp32", out="bf16")

See python/README.md and the README's "Python" section.
"""

import math

import numpy as np

from . import _arrays, _lib
from ._lib import LowpError, library_path
from ._blockscaled import BlockQuantized, dequantize, pack, quantize, unpack  # noqa: F401 block-scaled formats
from ._reveal import Reveal, reveal  # noqa: F401 summation orders revealed (FPRev)

__all__ = ["check", "assert_precision", "tolerance", "assert_close", "exact", "CheckResult",
           "Tolerance", "LowpError", "VacuousBoundError", "library_path", "DEFAULT_RULES",
           "DEFAULT_RULES_SUMPROD", "TOLERANCE_RULES", "rule_headline", "reveal", "Reveal"]
__version__ = "0.1.0"

#: the rules of lowp.check when none are given, for operations other than
#: sums of products: NaN/inf classes agree with the exact result's, and
#: torch.testing.assert_close's defaults for the output dtype
DEFAULT_RULES = ({"nan_inf": "match"}, {"assert_close": "pytorch"})

#: ... and for sums of products (sum, dot, gemv, gemm), whose honest error
#: grows with K past any fixed tolerance (torch's fp32 defaults fail honest
#: fp32 GEMMs at K >= 1024 on N(0, 1) data): NaN/inf classes, and the worst-case
#: gamma bound of the accumulation the caller declares (acc=, order=, model=),
#: else of recursive accumulation in the output's format, which holds for
#: every summation order at least that precise. Where that bound is vacuous
#: it says so and does not fail.
DEFAULT_RULES_SUMPROD = ({"nan_inf": "match"}, {"bound": "gamma", "accept_vacuous": True})
_SUMPROD = ("sum", "dot", "gemv", "gemm")


def _default_rules(op, declared, model):
    if op not in _SUMPROD:
        return list(DEFAULT_RULES)
    if model is not None:
        return [{"nan_inf": "match"}, {"bound": "model", "accept_vacuous": True}]
    if declared:
        return [dict(r) for r in DEFAULT_RULES_SUMPROD]
    # no accumulation declared: recursive in the output's format (the rule's
    # "acc" defaults to the check's "out")
    return [{"nan_inf": "match"}, {"bound": "gamma", "order": "recursive",
                                   "accept_vacuous": True}]


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

    @property
    def failure_text(self):
        """What assert_precision raises: each failing rule by name with its
        message and its own worst element (got, exact, the inputs behind
        it); the torch-style "Mismatched elements" line only when a
        tolerance rule (assert_close, rtol/atol, mismatch) failed, since
        for other rules a count under torch's defaults says nothing about
        why they failed."""
        lines = ["%s %s: %s" % (self.json["op"], self.verdict.upper(), self.json["subject"])]
        for r in self.failed_rules:
            lines.append("  rule %s failed: %s" % (r["rule"], r["message"]))
            w = r.get("worst")
            if w:
                lines.append("    worst element %s: got %r, exact %r%s" % (
                    w.get("index"), w.get("got"), w.get("exact"),
                    " (%s)" % w["inputs"] if w.get("inputs") else ""))
        if any(r["rule"] in TOLERANCE_RULES for r in self.failed_rules) and self.mismatch:
            lines.append(self.mismatch_line)
        return "\n".join(lines)

    def __repr__(self):
        return "<lowp.CheckResult %s>" % self.message


#: the rules that compare elementwise under an rtol/atol pair (torch.isclose's
#: form): only their failures come with a "Mismatched elements" count
TOLERANCE_RULES = ("assert_close", "rtol/atol", "mismatch")


def rule_headline(rule):
    """One rule's verdict in a few words: a percentage of its limit, or for
    sqnr_db (a gate in dB, where no percentage means anything) its value
    against the gate and the margin in dB."""
    name = rule["rule"]
    if name == "sqnr_db":
        m, g = rule.get("measured"), rule.get("limit")
        if isinstance(m, (int, float)) and isinstance(g, (int, float)):
            return "sqnr_db %.1f dB vs gate %.1f dB (%+.1f dB)" % (m, g, m - g)
        return "sqnr_db"
    if rule.get("vacuous"):
        return "%s vacuous" % name
    p = rule.get("percent")
    if isinstance(p, (int, float)) and p == p:
        return "%s %.0f%% of limit" % (name, p)
    return "%s %s" % (name, "pass" if rule.get("pass") else "fail")


def _several(x, n_out):
    """x as a list of outputs: a list or tuple of arrays (or None) where the
    operation has several outputs; else one array (a nested list of numbers
    is one output, never two)."""
    if n_out > 1 and isinstance(x, (list, tuple)) and all(
            e is None or hasattr(e, "shape") for e in x):
        return list(x)
    return [x]


def _formats(inputs, outs, io, input, out):
    """float64 arrays and format names of the inputs and outputs."""
    ins, in_fmts = [], []
    for i, x in enumerate(inputs):
        f = input[i] if isinstance(input, (list, tuple)) else input
        is_index = io["index"][i]
        v, fmt = _arrays.to_values(x, None if is_index else f, index=is_index,
                                   what=io["inputs"][i])
        ins.append(v)
        in_fmts.append(fmt)
    out_vals, out_fmt = [], out
    for j, y in enumerate(outs):
        v, fmt = _arrays.to_values(y, out_fmt, what=io["outputs"][j], output=True)
        if v is not None and out_fmt is None:
            out_fmt = fmt
        out_vals.append(v)
    if out_vals[0] is None:
        raise LowpError("the first output (%s) is needed" % io["outputs"][0])
    return ins, in_fmts, out_vals, out_fmt


def _blockscaled_inputs(op, inputs, input):
    """BlockQuantized inputs (lowp.quantize, lowp.unpack: elements and scale
    tensors) replaced by their exact dequantized values; returns the inputs,
    the per-input formats (the block-scaled format's name for those) and
    their numbers. The blocks must run along the reduction axis: the last
    axis, gemm's B (k, n) down its columns (axis -2)."""
    idx = [i for i, x in enumerate(inputs) if isinstance(x, BlockQuantized)]
    if not idx:
        return inputs, input, []
    inputs = list(inputs)
    fmts = list(input) if isinstance(input, (list, tuple)) else [input] * len(inputs)
    if len(fmts) != len(inputs):
        raise LowpError("input lists %d formats for %d inputs" % (len(fmts), len(inputs)))
    for i in idx:
        b = inputs[i]
        nd = np.ndim(b.elements)
        want = nd - 2 if op == "gemm" and i == 1 else nd - 1
        if nd == 0 or (b.axis % nd) != want:
            raise LowpError("input %d (%s): blocks along axis %d, but the reduction axis is %d (%s)"
                            % (i, b.format, b.axis, want, "gemm's B is (k, n): quantize it with axis=0"
                               if op == "gemm" and i == 1 else "the last axis"))
        if fmts[i] is not None and fmts[i] != b.format:
            raise LowpError("input %d is %s, but input names %s" % (i, b.format, fmts[i]))
        ts = b.tensor_scale
        if not (ts > 0 and math.isfinite(ts) and float(np.float32(ts)) == ts):
            raise LowpError("input %d (%s): the tensor scale %r is not a positive finite fp32 value"
                            % (i, b.format, ts))
        b.pack()  # every element and scale a value of its format, or LowpError
        inputs[i] = b.dequantize()
        fmts[i] = b.format
    return inputs, fmts, idx


def _op_io(op):
    """The operation's inputs, outputs and which inputs are indices (lowp's table)."""
    if not isinstance(op, str):
        raise LowpError("op must be an operation's name (a string), not %r" % (op,))
    return _lib.call_json("lowp_capi_shapes", {"op": op, "in": "fp64", "dims": {}})


def _shape(x):
    return None if x is None else [int(d) for d in (x.shape if hasattr(x, "shape")
                                                     else np.shape(x))]


def _flat(a):
    return None if a is None else np.ascontiguousarray(a.reshape(-1))


def check(op, inputs, output, rules=None, *, reference=None, input=None, out=None, acc=None,
          order=None, method=None, model=None, prob=None, eps=None, reduction=None,
          dims=None, name=None, reference_name=None, convert=None):
    """Check a computation against lowp's exact result; returns a CheckResult.

    op: "gemm", "dot", "sum", "gemv", "softmax", "layernorm", "xent", ...
    inputs: the arrays the computation read (numpy, or torch tensors incl.
        bf16/fp8); output: its output array, or a tuple of arrays where the
        operation has several (layernorm: y, mean, var; None for one not
        produced).
    rules: the rules of a lowp check spec (docs/check-spec.schema.json), e.g.
        [{"bound": "gamma"}], [{"sqnr_db": 25}], [{"mismatch": "0.1%",
        "rtol": 1e-3, "atol": 1e-5}], [{"vs_reference": "outputs",
        "factor": 2, "floor": 1e-5}] with reference=... (the same shape as
        output); default: DEFAULT_RULES_SUMPROD for sums of products (the
        gamma bound: never fails an honest kernel at any K), DEFAULT_RULES
        for the other operations; an empty list is refused.
    input / out: formats (default: from the dtypes), one or one per input;
        values not in them are refused; unsigned integer arrays are bit
        patterns and need their format. A block-scaled input format
        ("mxfp8_e4m3", "nvfp4", "int8_b32", ...) takes fp32 data and
        quantizes it by the format's rule along the reduction axis; an input
        that is a lowp.BlockQuantized (lowp.quantize, or lowp.unpack of
        stored element and scale tensors, torch's float8/uint8-packed fp4
        included) is taken as its exact dequantized values, its elements and
        scales checked against the format.
    acc + order (or method) / model: how the computation accumulates, for
        the bounds ("recursive", "pairwise", "blocked:32"; model "h100").
    prob: the probability in (0, 1) of the probabilistic bound (0.99), for
        the reported bound and every {"bound": "prob"} rule naming none.
    convert: conversions inside the kernel, {"B": "fp16"} or {"B":
        {"format": "fp16", "rnd": "rtz"}} (a spec's "convert"), or a
        lowp.reveal result (the conversions it found): the exact reference
        is that of the converted inputs, so the bounds judge the kernel's
        arithmetic; the conversion's cost is reported as input error.
    Every argument is validated by lowp's C parser of a check (the one
    lowp check uses for a spec), before any array is read.
    A bound rule whose bound is vacuous raises VacuousBoundError unless the
    rule says "accept_vacuous": True.
    """
    io = _op_io(op)
    n_in, n_out = len(io["inputs"]), len(io["outputs"])
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    if len(inputs) != n_in:
        raise LowpError("%d inputs given, the operation takes %d (%s)" %
                        (len(inputs), n_in, ", ".join(io["inputs"])))
    outs = _several(output, n_out)
    if len(outs) > n_out:
        raise LowpError("%d outputs given, the operation has %d (%s)" %
                        (len(outs), n_out, ", ".join(io["outputs"])))
    outs += [None] * (n_out - len(outs))
    inputs, input, pre = _blockscaled_inputs(op, inputs, input)
    refs = None
    if reference is not None:
        refs = _several(reference, n_out)
        if len(refs) > n_out:
            raise LowpError("%d reference outputs given, the operation has %d" %
                            (len(refs), n_out))
        refs += [None] * (n_out - len(refs))
        refs = [r if r is not None else outs[j] for j, r in enumerate(refs)]
    if rules is None:
        rules = _default_rules(op, acc is not None or (order or method) is not None, model)
    desc = {"op": op, "rules": rules}
    if isinstance(convert, Reveal):
        convert = convert.convert or None  # none found: nothing to declare
    for k, v in (("in", input), ("out", out), ("dims", dims), ("acc", acc),
                 ("order", order or method), ("model", model), ("prob", prob), ("eps", eps),
                 ("reduction", reduction), ("subject", name), ("reference", reference_name),
                 ("convert", convert)):
        if v is not None:
            desc[k] = list(v) if isinstance(v, tuple) else v
    desc["shapes"] = [_shape(x) for x in inputs]
    desc["out_shapes"] = [_shape(y) for y in outs]
    if refs is not None:
        desc["ref_shapes"] = [_shape(y) for y in refs]
    # every argument through lowp's own validator before any array is decoded
    _lib.call_json("lowp_capi_shapes", desc)
    ins, in_fmts, out_vals, out_fmt = _formats(inputs, outs, io,
                                                [("fp64" if i in pre else f) for i, f in enumerate(input)]
                                                if pre else input, out)
    for i in pre:
        in_fmts[i] = input[i]
    desc["in"], desc["out"] = in_fmts, out_fmt
    if pre:
        desc["prequantized"] = pre
    desc["shapes"] = [_shape(a) for a in ins]
    desc["out_shapes"] = [_shape(a) for a in out_vals]
    ref_vals = None
    if refs is not None:
        ref_vals = [_arrays.to_values(r, out_fmt, what="reference " + io["outputs"][j],
                                      output=True)[0] for j, r in enumerate(refs)]
        desc["ref_shapes"] = [_shape(a) for a in ref_vals]
    try:
        js = _lib.check_arrays(desc, [_flat(a) for a in ins], [_flat(a) for a in out_vals],
                               None if ref_vals is None else [_flat(a) for a in ref_vals])
    except LowpError as e:
        if "vacuous" in str(e):
            raise VacuousBoundError(str(e), e.status) from None
        raise
    return CheckResult(js)


def assert_precision(op, inputs, output, rules=None, **kw):
    """lowp.check, raising AssertionError when a rule fails: each failing
    rule by name, its message and its worst element, and (only when a
    tolerance rule failed) torch.testing.assert_close's "Mismatched
    elements: 556 / 768 (72.4%)" count. Returns the result."""
    r = check(op, inputs, output, rules, **kw)
    if not r.passed:
        raise AssertionError(r.failure_text)
    return r


class Tolerance:
    """A derived tolerance: rtol, atol (unpack: rtol, atol = t), bound,
    bound_acc, rtol_same_sign, vacuous, explanation (the derivation in words,
    with citations), kwargs (dict(rtol=, atol=) for assert_close).

    probabilistic (Higham & Mary's bound used), confidence (its probability
    per element), risk (the whole test's false-failure probability for an
    honest kernel; 0 for the worst case), numel, not_probabilistic (why
    not, "" when it is). Given the inputs (lowp.tolerance(..., inputs=)),
    atol is an array of the output's shape (each element's own sum
    |a_i b_i|) and rtol_array the per-element rtol (row operations);
    rtol is then the largest, atol_max the largest atol."""

    def __init__(self, js, atol=None, rtol=None):
        js = _num(js)
        self.json = js
        self.rtol = js["rtol"]
        self.atol = js["atol"] if atol is None else atol
        self.rtol_array = rtol
        if rtol is not None and rtol.size:
            self.rtol = float(rtol.max())
        self.atol_max = float(np.max(self.atol)) if atol is not None and atol.size else js["atol"]
        self.probabilistic = js.get("probabilistic", False)
        self.confidence = js.get("confidence")
        self.risk = js.get("risk", 0.0)
        self.numel = js.get("numel")
        self.not_probabilistic = js.get("not_probabilistic", "")
        self.data_aware = js.get("data_aware", False)
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
        return "Tolerance(rtol=%.4g, atol=%.4g%s)" % (self.rtol, self.atol_max,
                                                       " (max)" if self.data_aware else "")

    def __str__(self):
        return "rtol=%.4g, atol=%.4g: %s" % (self.rtol, self.atol_max, self.explanation)

    def _arrays(self, shape):
        rt = self.rtol if self.rtol_array is None else self.rtol_array
        return np.broadcast_to(np.asarray(rt, dtype=np.float64), shape), \
            np.broadcast_to(np.asarray(self.atol, dtype=np.float64), shape)

    def violations(self, actual, expected):
        """Boolean array: |actual - expected| > atol + rtol |expected| (numpy or
        torch); NaN matches NaN, and an infinite expected only itself."""
        a, _ = _arrays.to_values(actual)
        e, _ = _arrays.to_values(expected)
        a, e = a.reshape(np.shape(self.atol) or a.shape), e.reshape(np.shape(self.atol) or e.shape)
        rt, at = self._arrays(e.shape)
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(a - e) <= at + rt * np.abs(e)) | np.isinf(e)
        return bad & ~((a == e) | (np.isnan(a) & np.isnan(e)))

    def torch_kwargs(self, actual, expected):
        """Arguments for torch.testing.assert_close (or, less "msg", for
        torch.isclose) that apply this tolerance, per-element atol (and
        per-row rtol) included:

            torch.testing.assert_close(**t.torch_kwargs(actual, expected))

        torch takes one float atol and rtol, so each element is divided by
        its own limit L_e = atol_e + rtol_e |e| (> 0: atol_e holds the
        subnormal floor) in float64, and compared with atol 1, rtol 0:
        |a - e| <= L_e iff |a/L_e - e/L_e| <= 1. The operations round
        (relative 2^-53), so the verdicts are t.violations' except for an
        element within a few float64 ulps of its limit; torch's "Mismatched
        elements" count is then t.violations(actual, expected).sum(), and its
        "Greatest absolute difference" the worst element's multiple of its
        limit (msg says so). NaN matches NaN, as in t.violations; an
        infinite expected matches only itself. actual and expected: torch
        tensors (any float dtype, any device: the limits go to actual's) or
        numpy arrays, of the tolerance's shape (or its number of elements)."""
        import torch

        def as_t(x):
            if not _arrays.is_torch(x):
                x = torch.from_numpy(np.asarray(x, dtype=np.float64))
            return x.detach().to(torch.float64)

        a, e = as_t(actual), as_t(expected)
        e = e.to(a.device).reshape(a.shape)
        e_np = e.cpu().numpy().reshape(np.shape(self.atol) or e.shape)
        rt, at = self._arrays(e_np.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            lim = at + rt * np.abs(e_np)
        w = torch.from_numpy(np.ascontiguousarray(lim)).to(a.device).reshape(a.shape)
        return {"actual": a / w, "expected": e / w, "rtol": 0.0, "atol": 1.0, "equal_nan": True,
                "msg": lambda m: m + "\n(lowp: each element divided by its derived limit "
                "atol_e + rtol |expected_e|: a difference over 1 is outside it)"}


def tolerance(op, k=None, input=None, acc="fp32", out=None, method="recursive",
              confidence=None, scale=None, accept_vacuous=False, *, inputs=None, risk=None,
              numel=None, compute=None, eps=None):
    """The (rtol, atol) a test of op should use, derived (lowp tol).

    k: the reduction length (k of dot/gemm; the row length of softmax...);
    input, acc, out: formats (input: fp32, or the inputs' dtypes when given;
    out defaults to input); method: "recursive",
    "pairwise", "blocked:B", "splitk:S", "kahan", "fma", or
    "model:PRESET[,key=value]" (e.g. "model:h100,promote=128"); confidence:
    None or 1 for the worst case, P in (0, 1) for Higham & Mary's
    probabilistic bound (per element), "worst" for the worst case; by default
    (None) probabilistic where the rounding errors can be independent, with
    P = 1 - risk / numel per element: an honest kernel fails the whole test
    of numel outputs with probability <= risk (default 1e-6; numel default
    2^24, or the outputs' count when inputs are given); t.not_probabilistic
    says why where the worst case is used instead. scale: a bound on the
    mean of |a_i b_i| along k (sums of products; default 1) or on |x_i|
    (row ops), for data-free use. inputs: the arrays the computation reads
    (A, B for gemm; x for sum and row ops): atol per output element from
    its own sum |a_i b_i| (row ops: per row), k from their shapes.
    compute: row ops' per-element format (exp, log, subtract, divide;
    default the input's), acc the row sum's.
    Raises VacuousBoundError when no bound exists (unless accept_vacuous:
    then rtol = atol = inf).
    """
    # the values as given: lowp's C parser of the query validates each (the
    # one lowp tol's options go through), a fractional k or a string included
    q = {"op": op, "input": input or "fp32", "acc": acc, "method": method}
    if k is not None:
        q["k"] = k
    elif inputs is None:
        raise LowpError("give k (the reduction length) or the inputs")
    for key, v in (("out", out), ("compute", compute), ("confidence", confidence),
                   ("scale", scale), ("risk", risk), ("numel", numel)):
        if v is not None:
            q[key] = v
    if eps is not None:
        if inputs is None:
            raise LowpError("eps is read from the inputs' problem: give inputs=, or leave it out")
        q["eps"] = eps
    if inputs is None:
        t = Tolerance(_lib.call_json("lowp_capi_tol", q))
    else:
        t = _tolerance_data(op, q, inputs, input)
    if t.vacuous and not accept_vacuous:
        raise VacuousBoundError("lowp.tolerance(%s, k=%s, input=%s, acc=%s): %s" %
                                (op, k, input, acc, t.explanation))
    return t


def _inputs(op, inputs, input):
    """The inputs as contiguous float64 arrays, their shapes and the description."""
    io = _op_io(op)
    if not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    if len(inputs) != len(io["inputs"]):
        raise LowpError("%d inputs given, the operation takes %d (%s)" %
                        (len(inputs), len(io["inputs"]), ", ".join(io["inputs"])))
    vals, fmts = [], []
    for i, x in enumerate(inputs):
        f = input[i] if isinstance(input, (list, tuple)) else input
        v, fmt = _arrays.to_values(x, None if io["index"][i] else f, index=io["index"][i])
        vals.append(v)
        fmts.append(fmt)
    return vals, fmts, io


def _out_shape(desc, io):
    return _lib.call_json("lowp_capi_shapes", desc)["shapes"][len(io["inputs"])]


def _tolerance_data(op, q, inputs, input):
    vals, fmts, io = _inputs(op, inputs, input)
    q = dict(q)
    q["shapes"] = [list(v.shape) for v in vals]
    q["in"] = fmts
    q["input"] = fmts[0]
    shape = _out_shape({"op": op, "in": fmts, "shapes": q["shapes"]}, io)
    atol = np.empty(int(np.prod(shape)), dtype=np.float64)
    rtol = np.empty_like(atol)
    js = _lib.tol_data(q, [np.ascontiguousarray(v.reshape(-1)) for v in vals], atol, rtol)
    return Tolerance(js, atol.reshape(shape), rtol.reshape(shape))


def exact(op, inputs, input=None, eps=None, reduction=None, out=None):
    """lowp's exact result of op on inputs (output 0), rounded once to float64
    (or, given out, once to that format, to nearest even: what a correctly
    rounded kernel returns, infinity where it overflows)."""
    vals, fmts, io = _inputs(op, inputs, input)
    desc = {"op": op, "in": fmts, "shapes": [list(v.shape) for v in vals]}
    if out is not None:
        desc["out"] = out
    if eps is not None:
        desc["eps"] = float(eps)
    if reduction is not None:
        desc["reduction"] = reduction
    shape = _out_shape(desc, io)
    out = np.empty(int(np.prod(shape)), dtype=np.float64)
    _lib.exact(desc, [np.ascontiguousarray(v.reshape(-1)) for v in vals], out)
    return out.reshape(shape)


def assert_close(actual, expected=None, *, inputs, op, input=None, acc="fp32", out=None,
                 method="recursive", confidence=None, risk=None, compute=None, eps=None,
                 accept_vacuous=False):
    """Assert actual within the data-aware derived tolerance of expected
    (default: lowp's exact result of op on inputs): |actual - expected| <=
    atol_e + rtol |expected| per element, atol_e from that element's own
    sum |a_i b_i| (lowp.tolerance(op, inputs=...)); without expected, an
    infinity where the exact result rounds to it in the output format (an
    overflow the format must produce) agrees too. Raises AssertionError
    naming the worst element and the tolerance's risk; returns the Tolerance."""
    vals, fmts, _ = _inputs(op, inputs, input)
    a, afmt = _arrays.to_values(actual, out, what="actual", output=True)
    a = np.ascontiguousarray(a)
    n_bad, first = _lib.not_in_format(afmt, a.reshape(-1))
    if n_bad:   # as lowp.check refuses an output that is not in its format
        raise LowpError("actual: %d values are not %s values (the first: element %d = %.17g): "
                        "declare the format they are in (out=)" %
                        (n_bad, afmt, first, a.reshape(-1)[first]))
    t = tolerance(op, input=input if input is not None else fmts[0], acc=acc,
                  out=out or afmt, method=method, confidence=confidence, risk=risk,
                  compute=compute, eps=eps, inputs=inputs, accept_vacuous=accept_vacuous)
    e = exact(op, inputs, input=input, eps=eps) if expected is None \
        else _arrays.to_values(expected)[0]
    a = a.reshape(np.shape(t.atol))
    e = e.reshape(np.shape(t.atol))
    bad = t.violations(a, e)
    if bad.any() and expected is None:
        # an exact result beyond the output's range rounds to infinity: an honest kernel
        # returns it (lowp.check's NaN/inf classes are those of the exact result rounded once
        # to the output format, too)
        e_out = exact(op, inputs, input=input, eps=eps, out=out or afmt).reshape(e.shape)
        bad &= ~(np.isinf(e_out) & (a == e_out))
    if bad.any():
        rt, at = t._arrays(e.shape)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.abs(a - e) / (at + rt * np.abs(e))
        ratio = np.where(np.isnan(ratio), np.inf, ratio)
        w = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        raise AssertionError(
            "%s: %d / %d elements outside the derived tolerance (%s, false-failure "
            "probability of an honest kernel <= %.3g); worst at %s: actual %r, expected %r, "
            "|diff| %.4g > atol %.4g + rtol %.4g |expected| (%.3gx)" %
            (op, int(bad.sum()), bad.size,
             "probabilistic" if t.probabilistic else "worst case", t.risk, tuple(int(i) for i in w),
             float(a[w]), float(e[w]), abs(float(a[w]) - float(e[w])), float(at[w]),
             float(rt[w]), float(ratio[w])))
    return t

from ._fpx import FpxScan, fpx_outputs, fpx_scan, with_fpx as _with_fpx  # noqa: E402
check = _with_fpx(check)  # lowp.check(..., fpx=True): python/lowp/_fpx.py
