"""Block-scaled formats from Python: lowp.quantize, lowp.dequantize, lowp.pack, lowp.unpack.

Every number comes from liblowp (lib/format/bsquant.c, through
lib/check/capi_block.c): the scale rules are those of docs/formats.md
("Block-scaled formats"), each held to an exact MPFR evaluation of its
definition by tests/tbsquant.c.

    q = lowp.quantize(x, "mxfp8_e4m3", rule="rceil")   # blocks along the last axis
    q.elements, q.scales, q.tensor_scale              # float64 values
    y = q.dequantize()                                 # exact values, float64
    elems, scales = q.pack()                           # uint8: the stored bytes
    q2 = lowp.unpack(elems, scales, "mxfp8_e4m3", cols=x.shape[-1])
"""

import ctypes

import numpy as np

from . import _lib

__all__ = ["quantize", "dequantize", "pack", "unpack", "BlockQuantized"]

_DECLARED = set()


def _c():
    lib = _lib._load()
    if id(lib) not in _DECLARED:
        cp, sz, vp, dp = ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_double
        ip = ctypes.POINTER(ctypes.c_int)
        lib.lowp_capi_bs_info.argtypes = [ip, ip, ip, ip, cp, cp, sz]
        lib.lowp_capi_bs_quantize.argtypes = [vp, vp, ctypes.POINTER(dp), vp, sz, sz, cp, cp, sz]
        lib.lowp_capi_bs_dequantize.argtypes = [vp, vp, vp, dp, sz, sz, cp, cp, sz]
        lib.lowp_capi_bs_pack.argtypes = [vp, vp, vp, vp, sz, sz, ctypes.c_int, cp, cp, sz]
        lib.lowp_capi_bs_relayout.argtypes = [vp, vp, sz, sz, sz, cp, ctypes.c_int, ctypes.POINTER(sz), cp, sz]
        lib.lowp_capi_bs_row_bytes.argtypes = [ctypes.POINTER(sz), sz, cp, cp, sz]
        for f in ("info", "quantize", "dequantize", "pack", "relayout", "row_bytes"):
            getattr(lib, "lowp_capi_bs_" + f).restype = ctypes.c_int
        _DECLARED.add(id(lib))
    return lib


def _call(fn, *args):
    err = ctypes.create_string_buffer(512)
    st = fn(*args, err, len(err))
    if st:
        _lib._fail(st, err)


def _spec(fmt, rule):
    if not isinstance(fmt, str):
        raise TypeError("format must be a string such as 'mxfp8_e4m3' or 'elem=e4m3,scale=e8m0,block=32'")
    if rule is None:
        return fmt
    if "=" in fmt:
        return fmt + ",rule=" + rule
    return fmt.split(":")[0] + ":" + rule


def _info(spec):
    v = [ctypes.c_int() for _ in range(4)]
    _call(_c().lowp_capi_bs_info, *[ctypes.byref(i) for i in v], spec.encode())
    return tuple(i.value for i in v)  # block, scale_bytes, elem_bits, tensor


def _as_f32(x):
    if hasattr(x, "detach") and hasattr(x, "float"):  # a torch tensor
        x = x.detach().float().cpu().numpy()
    a = np.asarray(x)
    if a.dtype.kind not in "fiu":
        raise TypeError("lowp.quantize: a numeric array is needed, got dtype %s" % a.dtype)
    if a.dtype.itemsize > 4 or a.dtype.kind != "f":
        b = a.astype(np.float32)
        if a.dtype.kind == "f" and not np.array_equal(b.astype(a.dtype), a, equal_nan=True):
            raise ValueError("lowp.quantize: the quantizers take binary32 inputs and these values "
                             "are not all fp32 values (round them first: x.astype(np.float32))")
        a = b
    return np.ascontiguousarray(a, dtype=np.float32)


def _rows(a, axis):
    a = np.moveaxis(a, axis, -1)
    shape = a.shape
    cols = shape[-1] if shape else 1
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    return np.ascontiguousarray(a).reshape(rows, cols), shape


class BlockQuantized:
    """A tensor in a block-scaled format: element values, block scales, tensor scale.

    elements: float64 array of x's shape (values of the element format; integers
    for int8_b32/int4_b32); scales: float64, x's shape with the blocked axis
    replaced by the number of blocks (NaN for a NaN scale, which poisons its
    block); tensor_scale: the per-tensor fp32 decode scale (NVFP4), else 1.0;
    format: the format string (with its rule); axis: the blocked axis.
    """

    def __init__(self, elements, scales, tensor_scale, fmt, axis=-1):
        self.elements, self.scales, self.tensor_scale = elements, scales, float(tensor_scale)
        self.format, self.axis = fmt, axis

    def dequantize(self):
        """elements * scale * tensor_scale, exact, as float64."""
        return dequantize(self.elements, self.scales, self.format, self.tensor_scale, self.axis)

    def pack(self, scale_layout="compact"):
        """The stored bytes: (elements uint8 [rows, row_bytes], scales uint8
        [rows, blocks * scale_bytes], or flat in scale_layout "128x4"); rows = the
        product of the other axes."""
        return pack(self.elements, self.scales, self.format, self.axis, scale_layout)

    def __repr__(self):
        return "BlockQuantized(%s, shape=%s, blocks=%s)" % (self.format, self.elements.shape,
                                                             self.scales.shape)


def quantize(x, fmt, rule=None, axis=-1):
    """Quantize x (numpy array or torch tensor of fp32-representable values) to a
    block-scaled format, blocks along axis; rule overrides the format's scale rule
    (floor, ceil, even, rceil, nvfp4, absmax, ggml). Returns a BlockQuantized."""
    spec = _spec(fmt, rule)
    block = _info(spec)[0]
    x2, shape = _rows(_as_f32(x), axis)
    rows, cols = x2.shape
    nb = -(-cols // block)
    q = np.empty((rows, cols), dtype=np.float64)
    s = np.empty((rows, nb), dtype=np.float64)
    ts = ctypes.c_double(1.0)
    _call(_c().lowp_capi_bs_quantize, q.ctypes.data, s.ctypes.data, ctypes.byref(ts), x2.ctypes.data,
          rows, cols, spec.encode())
    q = np.moveaxis(q.reshape(shape), -1, axis)
    s = np.moveaxis(s.reshape(shape[:-1] + (nb,)), -1, axis)
    return BlockQuantized(q, s, ts.value, spec, axis)


def dequantize(elements, scales=None, fmt=None, tensor_scale=1.0, axis=-1):
    """The values of a block-scaled tensor: elements * scale * tensor_scale (float64,
    exact; NaN in a block whose scale is NaN). elements may be a BlockQuantized."""
    if isinstance(elements, BlockQuantized):
        return elements.dequantize()
    if scales is None or fmt is None:
        raise TypeError("lowp.dequantize needs elements, scales and the format")
    q2, shape = _rows(np.asarray(elements, dtype=np.float64), axis)
    s2, _ = _rows(np.asarray(scales, dtype=np.float64), axis)
    rows, cols = q2.shape
    block = _info(fmt)[0]
    if s2.shape != (rows, -(-cols // block)):
        raise ValueError("lowp.dequantize: scales have shape %s, expected %s blocks of %d along the axis"
                         % (np.shape(scales), -(-cols // block), block))
    y = np.empty_like(q2)
    _call(_c().lowp_capi_bs_dequantize, y.ctypes.data, q2.ctypes.data, s2.ctypes.data,
          float(tensor_scale), rows, cols, fmt.encode())
    return np.moveaxis(y.reshape(shape), -1, axis)


def _row_bytes(fmt, cols):
    """bytes of one packed row of cols elements (fp4 two a byte; fp6 one a byte, or
    4 in 3 bytes with ":dense")"""
    n = ctypes.c_size_t()
    _call(_c().lowp_capi_bs_row_bytes, ctypes.byref(n), cols, fmt.encode())
    return n.value


def _relayout(sc, rows, nb, sb, layout, to_layout):
    """scale bytes (rows x nb scales of sb bytes) to (to_layout) or from the layout"""
    slots = ctypes.c_size_t()
    _call(_c().lowp_capi_bs_relayout, None, None, sb, rows, nb, layout.encode(), 1, ctypes.byref(slots))
    if to_layout:
        out = np.zeros(slots.value * sb, dtype=np.uint8)
        src = np.ascontiguousarray(sc)
    else:
        if sc.size != slots.value * sb:
            raise ValueError("lowp.unpack: %d scale bytes, but the %s layout of %d x %d scales of %d bytes "
                             "holds %d" % (sc.size, layout, rows, nb, sb, slots.value * sb))
        out = np.zeros((rows, nb * sb), dtype=np.uint8)
        src = np.ascontiguousarray(sc.reshape(-1))
    _call(_c().lowp_capi_bs_relayout, out.ctypes.data, src.ctypes.data, sb, rows, nb, layout.encode(),
          1 if to_layout else 0, None)
    return out


def pack(elements, scales, fmt, axis=-1, scale_layout="compact"):
    """Element and scale values to the stored bytes (docs/formats.md, "Packing").
    scale_layout "128x4": the scales in cuBLAS's tiled layout of sm_100 GEMMs
    (rows padded to 128, blocks to 4, flat), else row-major [rows, blocks]."""
    q2, _ = _rows(np.asarray(elements, dtype=np.float64), axis)
    s2, _ = _rows(np.asarray(scales, dtype=np.float64), axis)
    rows, cols = q2.shape
    block, sb, _bits, _t = _info(fmt)
    e = np.zeros((rows, _row_bytes(fmt, cols)), dtype=np.uint8)
    sc = np.zeros((rows, -(-cols // block) * sb), dtype=np.uint8)
    _call(_c().lowp_capi_bs_pack, e.ctypes.data, sc.ctypes.data, q2.ctypes.data, s2.ctypes.data, rows,
          cols, 0, fmt.encode())
    if scale_layout != "compact":
        sc = _relayout(sc, rows, -(-cols // block), sb, scale_layout, True)
    return e, sc


def _bytes(x):
    """A numpy uint8 view of stored bytes: numpy arrays as they are; torch
    tensors of 8-bit or packed 4-bit dtypes (float8_e4m3fn, float8_e5m2,
    float8_e8m0fnu, float4_e2m1fn_x2, uint8, int8) by their bits."""
    if hasattr(x, "detach") and hasattr(x, "element_size"):  # a torch tensor
        import torch
        if x.element_size() != 1:
            raise TypeError("lowp.unpack: a 1-byte torch dtype is needed, got %s" % x.dtype)
        x = x.detach().cpu().contiguous().view(torch.uint8).numpy()
    a = np.asarray(x)
    if a.dtype.itemsize != 1 or a.dtype.kind not in "ui":
        raise TypeError("lowp.unpack: bytes (uint8) are needed, got dtype %s" % a.dtype)
    return np.ascontiguousarray(a.view(np.uint8))


def unpack(elements, scales, fmt, cols, tensor_scale=1.0, scale_layout="compact"):
    """Stored bytes (uint8 [rows, row_bytes], uint8 [rows, blocks * scale_bytes]; or
    torch tensors of 1-byte dtypes: float8_e4m3fn elements, float8_e8m0fnu or
    float8_e4m3fn scales, uint8-packed fp4) to a BlockQuantized with blocks along
    the last axis of length cols. scale_layout "128x4": scales stored in cuBLAS's
    tiled layout (as pack writes them)."""
    block, sb, _bits, _t = _info(fmt)
    e = _bytes(elements)
    sc = _bytes(scales)
    rows = e.shape[0] if e.ndim > 1 else 1
    nb = -(-cols // block)
    if scale_layout != "compact":
        sc = _relayout(sc, rows, nb, sb, scale_layout, False)
    if e.size != rows * _row_bytes(fmt, cols) or sc.size != rows * nb * sb:
        raise ValueError("lowp.unpack: %d element bytes and %d scale bytes do not hold %d rows of %d "
                         "values of %s" % (e.size, sc.size, rows, cols, fmt))
    q = np.empty((rows, cols), dtype=np.float64)
    s = np.empty((rows, nb), dtype=np.float64)
    _call(_c().lowp_capi_bs_pack, e.ctypes.data, sc.ctypes.data, q.ctypes.data, s.ctypes.data, rows,
          cols, 1, fmt.encode())
    return BlockQuantized(q, s, tensor_scale, fmt, -1)
