"""Loading liblowp.so and its flat C API (lib/check/capi.h): JSON text in and out.

The library is found, in order, at $LOWP_LIBRARY; beside this package (a
wheel built from a lowp build tree carries a copy); in the lowp build tree
this package was installed from or lives in (``build/liblowp.so`` next to
``python/``); by the system linker (``ctypes.util.find_library("lowp")``).
"""

import ctypes
import ctypes.util
import json
import os

_LIB = None
_HERE = os.path.dirname(os.path.abspath(__file__))



class LowpError(ValueError):
    """lowp refused a request (bad format, shape, rule, or a vacuous bound)."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status


def _candidates():
    env = os.environ.get("LOWP_LIBRARY")
    if env:
        yield env
        return
    yield os.path.join(_HERE, "liblowp.so")
    try:
        from . import _paths  # written by the wheel builder: the build tree it came from
        for p in getattr(_paths, "LIBRARIES", ()):
            yield p
    except ImportError:
        pass
    repo = os.path.dirname(os.path.dirname(_HERE))  # python/lowp -> repository root
    for b in ("build", "build-release", "build-debug"):
        yield os.path.join(repo, b, "liblowp.so")
    found = ctypes.util.find_library("lowp")
    if found:
        yield found


def library_path():
    """The path of the liblowp.so the binding uses (loads it)."""
    return _load()._lowp_path


def _load():
    global _LIB
    if _LIB is not None:
        return _LIB
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        _declare(lib)
        lib._lowp_path = path
        _LIB = lib
        return lib
    raise ImportError(
        "lowp: liblowp.so not found (build it: cmake --build build --target lowp_shared; "
        "or set LOWP_LIBRARY). Tried: " + ", ".join(tried))


def _declare(lib):
    cp, sz, vp = ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p
    dpp = ctypes.POINTER(ctypes.c_void_p)
    lib.lowp_capi_check.argtypes = [dpp, cp, dpp, dpp, dpp, cp, sz]
    lib.lowp_capi_check.restype = ctypes.c_int
    lib.lowp_capi_tol.argtypes = [dpp, cp, cp, sz]
    lib.lowp_capi_tol.restype = ctypes.c_int
    lib.lowp_capi_shapes.argtypes = [dpp, cp, cp, sz]
    lib.lowp_capi_shapes.restype = ctypes.c_int
    lib.lowp_capi_decode.argtypes = [vp, vp, sz, ctypes.c_int, cp, cp, sz]
    lib.lowp_capi_decode.restype = ctypes.c_int
    lib.lowp_capi_tol_data.argtypes = [dpp, cp, dpp, vp, vp, sz, cp, sz]
    lib.lowp_capi_tol_data.restype = ctypes.c_int
    lib.lowp_capi_exact.argtypes = [cp, dpp, vp, sz, cp, sz]
    lib.lowp_capi_exact.restype = ctypes.c_int
    lib.lowp_capi_reveal.argtypes = [dpp, cp, vp, vp, cp, sz]
    lib.lowp_capi_reveal.restype = ctypes.c_int
    lib.lowp_capi_reveal_plugin.argtypes = [dpp, cp, cp, cp, cp, sz]
    lib.lowp_capi_reveal_plugin.restype = ctypes.c_int
    lib.lowp_capi_twin.argtypes = [vp, sz, cp, cp, dpp, cp, sz]
    lib.lowp_capi_twin.restype = ctypes.c_int
    lib.lowp_capi_in_format.argtypes = [ctypes.POINTER(sz), ctypes.POINTER(sz), cp, vp, sz, cp,
                                         sz]
    lib.lowp_capi_in_format.restype = ctypes.c_int
    lib.lowp_capi_free.argtypes = [vp]
    lib.lowp_capi_free.restype = None


def _take(lib, out):
    try:
        return json.loads(ctypes.string_at(out.value).decode("utf-8"), parse_constant=float)
    finally:
        lib.lowp_capi_free(out)


def _fail(st, err):
    msg = err.value.decode("utf-8", "replace") or ("lowp status %d" % st)
    raise LowpError(msg, st)


def _plain(x):
    """numpy scalars and arrays as the Python values json writes; the rest
    unchanged (json refuses what is left, such as sets or objects)."""
    if hasattr(x, "tolist") and type(x).__module__ == "numpy":
        return x.tolist()
    raise TypeError("%r is not a JSON value" % (x,))


def dumps(query):
    """query as JSON text; NaN and inf are written as NaN/Infinity so that
    lowp's parser names the key holding one (its message, not Python's)."""
    try:
        return json.dumps(query, default=_plain).encode()
    except (TypeError, ValueError) as e:
        raise LowpError("an argument lowp cannot read: %s" % e) from None


def call_json(fn_name, query):
    """lowp_capi_tol / lowp_capi_shapes on a dict; returns the decoded JSON."""
    lib = _load()
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(1024)
    st = getattr(lib, fn_name)(ctypes.byref(out), dumps(query), err, len(err))
    if st:
        _fail(st, err)
    return _take(lib, out)


def _ptrs(arrays):
    arr = (ctypes.c_void_p * max(1, len(arrays)))()
    for i, a in enumerate(arrays):
        arr[i] = None if a is None else a.ctypes.data
    return arr


def check_arrays(desc, inputs, outputs, reference=None):
    """lowp_capi_check: inputs/outputs are contiguous float64 numpy arrays."""
    lib = _load()
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(1024)
    st = lib.lowp_capi_check(ctypes.byref(out), dumps(desc), _ptrs(inputs),
                             _ptrs(outputs), _ptrs(reference) if reference is not None else None,
                             err, len(err))
    if st:
        _fail(st, err)
    return _take(lib, out)


def tol_data(query, inputs, atol, rtol):
    """lowp_capi_tol_data: inputs contiguous float64; atol, rtol filled."""
    lib = _load()
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(1024)
    st = lib.lowp_capi_tol_data(ctypes.byref(out), json.dumps(query).encode(), _ptrs(inputs),
                                atol.ctypes.data, rtol.ctypes.data, atol.size, err, len(err))
    if st:
        _fail(st, err)
    return _take(lib, out)


def exact(desc, inputs, out):
    """lowp_capi_exact: output 0's exact values into float64 out."""
    lib = _load()
    err = ctypes.create_string_buffer(1024)
    st = lib.lowp_capi_exact(json.dumps(desc).encode(), _ptrs(inputs), out.ctypes.data,
                             out.size, err, len(err))
    if st:
        _fail(st, err)
    return out


def decode(bits, width, fmt, out):
    """lowp_decode over a contiguous array of bit patterns into float64 out."""
    lib = _load()
    err = ctypes.create_string_buffer(256)
    st = lib.lowp_capi_decode(out.ctypes.data, bits.ctypes.data, bits.size, width,
                              fmt.encode(), err, len(err))
    if st:
        _fail(st, err)
    return out


#: int fn(void *ctx, double *const *out, const double *const *in, const size_t *dims)
REVEAL_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                             ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t))


def reveal(desc, call):
    """lowp_capi_reveal with a Python function call(ctx, out, in, dims) as the kernel."""
    lib = _load()
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(1024)
    cb = REVEAL_FN(call)  # kept alive for the call
    st = lib.lowp_capi_reveal(ctypes.byref(out), dumps(desc), ctypes.cast(cb, ctypes.c_void_p), None, err,
                              len(err))
    if st:
        _fail(st, err)
    return _take(lib, out)


def twin(out, reveal_json, desc, inputs):
    """lowp_capi_twin: the twin's outputs into float64 out."""
    lib = _load()
    err = ctypes.create_string_buffer(1024)
    st = lib.lowp_capi_twin(out.ctypes.data, out.size, reveal_json.encode(), dumps(desc), _ptrs(inputs), err,
                            len(err))
    if st:
        _fail(st, err)
    return out


def reveal_plugin(desc, path, kernel):
    """lowp_capi_reveal_plugin: a plugin library's kernel (include/lowp_plugin.h)."""
    lib = _load()
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(1024)
    st = lib.lowp_capi_reveal_plugin(ctypes.byref(out), dumps(desc), os.fsencode(path),
                                     kernel.encode() if kernel else None, err, len(err))
    if st:
        _fail(st, err)
    return _take(lib, out)


def not_in_format(fmt, values):
    """lowp_capi_in_format on a contiguous float64 array: (how many values
    are not values of fmt, the flat index of the first)."""
    lib = _load()
    err = ctypes.create_string_buffer(256)
    n_bad, first = ctypes.c_size_t(), ctypes.c_size_t()
    st = lib.lowp_capi_in_format(ctypes.byref(n_bad), ctypes.byref(first), fmt.encode(),
                                 values.ctypes.data, values.size, err, len(err))
    if st:
        _fail(st, err)
    return n_bad.value, first.value
