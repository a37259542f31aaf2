"""make_block_scales.py DIR -- block-scaled tensors with companion scales, written by NumPy
alone (no lowp code): MXFP8 (e4m3 elements, e8m0 scales) as .npy, NVFP4 (packed e2m1,
ue4m3 scales, an fp32 tensor scale) as .safetensors, the scales also in the 128x4 tiled
layout of sm_100 GEMMs; the exact products C = deq(A) deq(B^T)^T rounded once to fp32, and
outputs computed with the scales' layout misread (a planted bug lowp must see)."""
import json, struct, sys
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(33)

# e4m3 (OCP "fn"): code s eeee mmm; e = 0 subnormal m/8 2^-6; 0x7f/0xff NaN
def e4m3_value(c):
    c = np.asarray(c, dtype=np.int64)
    e, m, s = (c >> 3) & 15, c & 7, np.where(c >> 7, -1.0, 1.0)
    v = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7))
    return s * v

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])
def e2m1_value(c):
    c = np.asarray(c, dtype=np.int64)
    return np.where(c >> 3, -1.0, 1.0) * E2M1[c & 7]

def tiled128x4(s):
    """The 128x4 layout by its reshapes (pad to 128-row, 4-column tiles; in a tile the
    rows 32a + b go to [b][a][c]), written from the cuBLAS description, flat."""
    r, c = s.shape
    R, C = -(-r // 128) * 128, -(-c // 4) * 4
    p = np.zeros((R, C), dtype=s.dtype)
    p[:r, :c] = s
    t = p.reshape(R // 128, 128, C // 4, 4).transpose(0, 2, 1, 3)   # tiles in row-major order
    t = t.reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3)               # [tile][b][a][c]
    return t.reshape(-1)

def save_st(path, tensors):
    """a .safetensors file: name -> (dtype, shape, bytes)"""
    head, off, blobs = {}, 0, []
    for name, (dt, shape, b) in tensors.items():
        head[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(head).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

# ---- MXFP8: A (16 x 96), B^T (12 x 96): 3 blocks of 32 a row
m, n, k = 16, 12, 96
def e4m3_codes(shape):
    c = rng.integers(0, 0x7f, size=shape)           # 0..0x7e: never NaN
    return c | (rng.integers(0, 2, size=shape) << 7)
Aq, Bq = e4m3_codes((m, k)), e4m3_codes((n, k))
Ae, Be = rng.integers(-6, 7, size=(m, k // 32)), rng.integers(-6, 7, size=(n, k // 32))
A = e4m3_value(Aq) * np.repeat(2.0 ** Ae, 32, axis=1)
B = e4m3_value(Bq) * np.repeat(2.0 ** Be, 32, axis=1)
np.save(out + "/mx_A_q.npy", e4m3_value(Aq).astype(np.float32))            # element values
np.save(out + "/mx_A_s.npy", (Ae + 127).astype(np.uint8))                   # e8m0 codes
np.save(out + "/mx_Bt_q.npy", Bq.astype(np.uint8))                          # element codes
np.save(out + "/mx_Bt_s.npy", (2.0 ** Be).astype(np.float32))               # scale values
np.save(out + "/mx_A_s128.npy", tiled128x4((Ae + 127).astype(np.uint8)))   # 128x4 layout
np.save(out + "/mx_C.npy", (A @ B.T).astype(np.float32))
# the planted bug: A's scales read as if transposed (column-major [blocks][rows])
Ab = e4m3_value(Aq) * np.repeat(2.0 ** Ae.T.reshape(m, k // 32), 32, axis=1)
np.save(out + "/mx_C_badlayout.npy", (Ab @ B.T).astype(np.float32))
# bad companions
np.save(out + "/mx_A_s_short.npy", (Ae[:, :2] + 127).astype(np.uint8))
np.save(out + "/mx_A_s_notpow2.npy", np.full((m, k // 32), 3.0, dtype=np.float32))
np.save(out + "/mx_A_q_not_e4m3.npy", np.full((m, k), 0.3, dtype=np.float32))
np.save(out + "/mx_A_s_u2.npy", (Ae + 127).astype(np.uint16))

# ---- NVFP4: A (8 x 64), B^T (6 x 64): 4 blocks of 16; packed two a byte, low nibble first
m, n, k = 8, 6, 64
def packed(codes):
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
Ac, Bc = rng.integers(0, 16, size=(m, k)), rng.integers(0, 16, size=(n, k))
As = rng.integers(0x20, 0x50, size=(m, k // 16))   # ue4m3 codes, 2^-3 .. 2^2.9
Bs = rng.integers(0x20, 0x50, size=(n, k // 16))
ta, tb = np.float32(0.0078125), np.float32(1.0 / 3.0)
A = e2m1_value(Ac) * np.repeat(e4m3_value(As), 16, axis=1) * float(ta)
B = e2m1_value(Bc) * np.repeat(e4m3_value(Bs), 16, axis=1) * float(tb)
save_st(out + "/nv.safetensors", {
    "a": ("U8", (m, k // 2), packed(Ac).tobytes()),
    "a_scale": ("F8_E4M3", (m, k // 16), As.astype(np.uint8).tobytes()),
    "a_scale_2": ("F32", (), np.float32(ta).tobytes()),
    "bt": ("U8", (n, k // 2), packed(Bc).tobytes()),
    "bt_scale": ("F8_E4M3", (n, k // 16), Bs.astype(np.uint8).tobytes()),
    "bt_scale_2": ("F32", (1,), np.float32(tb).tobytes()),
    "c": ("F32", (m, n), (A @ B.T).astype(np.float32).tobytes()),
})
# the planted bug: the nibbles read high first
Asw = e2m1_value(np.stack([Ac[:, 1::2], Ac[:, 0::2]], axis=2).reshape(m, k))
Ab = Asw * np.repeat(e4m3_value(As), 16, axis=1) * float(ta)
np.save(out + "/nv_C_nibbles.npy", (Ab @ B.T).astype(np.float32))

# ---- fp32 data with no scales: lowp quantizes them by the format's rule (the output is
# the fp32 product of the unquantized data: the quantization shows as the input part)
A, B = rng.standard_normal((8, 64)).astype(np.float32), rng.standard_normal((64, 5)).astype(np.float32)
np.save(out + "/f_A.npy", A)
np.save(out + "/f_B.npy", B)
np.save(out + "/f_C.npy", (A.astype(np.float64) @ B).astype(np.float32))
