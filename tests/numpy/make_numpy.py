"""make_numpy.py -- tensors computed by NumPy for tests/cli/check_numpy.sh (a subject no one here wrote).

Run: /usr/bin/python3 make_numpy.py OUTDIR. Writes .npy inputs and NumPy's outputs:
fp16 and fp32 matmul, fp16 and fp32 row sums, a bf16 matmul stored as <u2 bit patterns
(NumPy has no bf16: inputs and output are rounded to bf16 by round-to-nearest-even on the
float32 bits), and a float64 cross-entropy with <i8 targets.
"""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(1)


def save(name, a):
    np.save(f"{out}/{name}.npy", a)


def to_bf16_bits(x):
    """float32 -> bf16 bit patterns, round to nearest even (no NaN in these data)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


A = rng.standard_normal((32, 256)).astype(np.float16)
B = rng.standard_normal((256, 24)).astype(np.float16)
save("A16", A), save("B16", B), save("C16", A @ B)
A32 = rng.standard_normal((32, 512)).astype(np.float32)
B32 = rng.standard_normal((512, 24)).astype(np.float32)
save("A32", A32), save("B32", B32), save("C32", A32 @ B32)
x = rng.standard_normal((16, 1000)).astype(np.float16)
save("x16", x), save("s16", x.sum(axis=1))
x32 = rng.standard_normal((16, 100000)).astype(np.float32)
save("x32", x32), save("s32", x32.sum(axis=1))
# bf16: inputs as bits, NumPy's float32 product rounded to bf16 as the output
Ab = to_bf16_bits(rng.standard_normal((16, 128)))
Bb = to_bf16_bits(rng.standard_normal((128, 8)))
save("Abf", Ab), save("Bbf", Bb)
save("Cbf", to_bf16_bits(from_bf16_bits(Ab) @ from_bf16_bits(Bb)))
# cross-entropy in float64, targets as int64
logits = rng.standard_normal((20, 50))
target = rng.integers(0, 50, size=20).astype(np.int64)
m = logits.max(axis=1, keepdims=True)
loss = (np.log(np.exp(logits - m).sum(axis=1)) + m[:, 0]) - logits[np.arange(20), target]
save("logits", logits), save("target", target), save("loss", loss)
# layer norm computed in float64, saved as float32: y only (mean and var not saved)
xl = (rng.standard_normal((8, 768)) + 3).astype(np.float32)
xd = xl.astype(np.float64)
yl = (xd - xd.mean(axis=1, keepdims=True)) / np.sqrt(xd.var(axis=1, keepdims=True) + 1e-5)
save("xln", xl), save("yln", yl.astype(np.float32))
# a mismatched output shape, for a bad-input case
save("C16_bad", (A @ B)[:, :10])
