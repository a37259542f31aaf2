"""numpy arrays and PyTorch tensors -> (float64 values, lowp format name).

No numerics here: float16/32/64 widen exactly in numpy; bf16 and fp8 tensors
(and numpy arrays of raw bits with an explicit format) are decoded by lowp's
own lowp_decode (lib/format) through liblowp.
"""

import numpy as np

from . import _lib

_NUMPY_FORMATS = {np.dtype(np.float16): "fp16", np.dtype(np.float32): "fp32",
                  np.dtype(np.float64): "fp64"}
# torch dtypes by name (torch need not be importable)
_TORCH_FORMATS = {"torch.float16": "fp16", "torch.float32": "fp32", "torch.float64": "fp64",
                  "torch.bfloat16": "bf16", "torch.float8_e4m3fn": "e4m3",
                  "torch.float8_e5m2": "e5m2"}
_TORCH_BITS = {"torch.bfloat16": ("int16", 2), "torch.float8_e4m3fn": ("uint8", 1),
               "torch.float8_e5m2": ("uint8", 1)}
_BITS_WIDTH = {np.dtype(np.uint8): 1, np.dtype(np.uint16): 2, np.dtype(np.int16): 2,
               np.dtype(np.uint32): 4}
# ml_dtypes' numpy types (jax) by name
_ML_DTYPES = {"bfloat16": ("bf16", 2), "float8_e4m3fn": ("e4m3", 1), "float8_e5m2": ("e5m2", 1)}


def is_torch(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "dtype") and hasattr(x, "detach")


def _decode(bits, fmt):
    bits = np.ascontiguousarray(bits)
    width = bits.dtype.itemsize
    out = np.empty(bits.shape, dtype=np.float64)
    _lib.decode(bits.reshape(-1), width, fmt, out.reshape(-1))
    return out


def _refuse(what, msg):
    raise _lib.LowpError("%s: %s" % (what, msg))


def _from_torch(t, fmt, what, output):
    import torch  # noqa: F401  (t is a torch tensor: torch imports)
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    name = str(t.dtype)
    if name in _TORCH_BITS:
        # the dtype names the bits' format: decoded as that format, whatever
        # format is declared (a bf16 tensor declared "fp16" holds bf16 values,
        # which lowp_capi_check then requires to be fp16 values)
        view, _ = _TORCH_BITS[name]
        bits = t.contiguous().view(getattr(__import__("torch"), view)).numpy()
        bits = bits.view(np.uint16 if bits.dtype.itemsize == 2 else np.uint8)
        return _decode(bits, _TORCH_FORMATS[name]), fmt or _TORCH_FORMATS[name]
    if t.is_complex():
        _refuse(what, "a complex tensor (%s): lowp checks real values" % name)
    if name not in _TORCH_FORMATS and t.is_floating_point():
        _refuse(what, "tensor dtype %s: lowp reads float16/32/64, bfloat16, float8_e4m3fn "
                "and float8_e5m2" % name)
    if name not in _TORCH_FORMATS:
        return _from_numpy(t.numpy(), fmt, what, output)
    return t.numpy().astype(np.float64), fmt or _TORCH_FORMATS[name]


def _from_numpy(a, fmt, what, output):
    if a.dtype.byteorder not in "=|":
        # the other byte order (a big-endian .npy file, '>f4'): the same values, this machine's
        # order, so that the dtype names its format (a '>f4' array was read as fp64) and bit
        # patterns reach lowp_decode in the order it reads
        a = a.astype(a.dtype.newbyteorder("="))
    name = getattr(a.dtype, "name", "")
    if name in _ML_DTYPES:
        f, w = _ML_DTYPES[name]
        return _decode(a.view(np.uint16 if w == 2 else np.uint8), fmt or f), fmt or f
    if a.dtype.kind == "c":
        _refuse(what, "a complex array (%s): lowp checks real values" % a.dtype)
    if a.dtype.kind not in "fiub":
        _refuse(what, "an array of dtype %s: lowp reads float16/32/64 values (and bf16/fp8 "
                "bits with a format)" % a.dtype)
    if a.dtype.kind == "u":
        # unsigned integers are bit patterns: of the format declared for them
        if not fmt:
            _refuse(what, "%s holds bit patterns: declare their format (%s=\"bf16\", "
                    "\"fp16\", \"e4m3\", ...)" % (a.dtype, "out" if output else "input"))
        if a.dtype not in _BITS_WIDTH:
            _refuse(what, "bit patterns are uint8, uint16 or uint32, not %s" % a.dtype)
        return _decode(a, fmt), fmt
    if a.dtype in _NUMPY_FORMATS:
        return np.ascontiguousarray(a, dtype=np.float64), fmt or _NUMPY_FORMATS[a.dtype]
    return np.ascontiguousarray(a, dtype=np.float64), fmt or "fp64"


def to_values(x, fmt=None, index=False, what="array", output=False):
    """x as a contiguous float64 array and its format name (fmt if given).

    index: integer class indices (xent's target), passed as values.
    Unsigned integer arrays (uint8/16/32) are bit patterns of the format
    declared for them (fmt; lowp_capi_decode checks the width fits it):
    without one they are refused. Complex and object arrays are refused.
    Whether the values are values of fmt, lowp_capi_check checks.
    """
    if x is None:
        return None, fmt
    if is_torch(x):
        if index:
            if x.is_complex():
                _refuse(what, "class indices are integers, not %s" % x.dtype)
            return x.detach().cpu().numpy().astype(np.float64), "fp64"
        return _from_torch(x, fmt, what, output)
    a = np.asarray(x)
    if index:
        if a.dtype.kind not in "iuf":
            _refuse(what, "class indices are integers, not %s" % a.dtype)
        return np.ascontiguousarray(a, dtype=np.float64), "fp64"
    return _from_numpy(a, fmt, what, output)
