"""make_torch.py -- tensors computed by PyTorch (CPU) for tests/torch/check_torch.sh.

Run: /usr/bin/python3 make_torch.py OUTDIR. Writes .safetensors files by hand (the format is
8 bytes of little-endian header length, a JSON header, the raw little-endian data), since
Debian has no safetensors package: bf16 and fp16 matmul, softmax, log_softmax, layer_norm,
cross_entropy (mean), and fp32 -> fp16 / bf16 casts over values that include exact ties.
"""
import json
import struct
import sys

import numpy as np
import torch

out = sys.argv[1]
torch.manual_seed(0)
DT = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32", torch.float64: "F64",
      torch.int64: "I64"}


def save(name, **tensors):
    """write tensors (name -> torch tensor) as one .safetensors file"""
    header, blobs, off = {}, [], 0
    for k, t in tensors.items():
        t = t.contiguous()
        if t.dtype in (torch.bfloat16, torch.float16):
            raw = t.view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            raw = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[k] = {"dtype": DT[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(f"{out}/{name}.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


for dt, tag in ((torch.bfloat16, "bf16"), (torch.float16, "f16")):
    a = torch.randn(64, 1024).to(dt)
    b = torch.randn(1024, 32).to(dt)
    try:
        c = a @ b
    except RuntimeError:  # a kernel this build of PyTorch lacks on CPU
        continue
    save(f"matmul_{tag}", A=a, B=b, C=c)

x = (3 * torch.randn(16, 1000)).to(torch.bfloat16)
save("softmax_bf16", x=x, y=torch.softmax(x, dim=-1))
save("log_softmax_bf16", x=x, y=torch.log_softmax(x, dim=-1))
x32 = 3 * torch.randn(16, 1000)
save("softmax_f32", x=x32, y=torch.softmax(x32, dim=-1))
ln = torch.randn(32, 768) + 5
# layer_norm returns y only; its mean and variance come from torch.var_mean
# (population variance), PyTorch's own statistics of the same rows
for t, tag in ((ln, "f32"), (ln.to(torch.bfloat16), "bf16")):
    var, mean = torch.var_mean(t, dim=-1, unbiased=False)
    save(f"layer_norm_{tag}", x=t, y=torch.nn.functional.layer_norm(t, (768,), eps=1e-5),
         mean=mean, var=var)
logits = 2 * torch.randn(64, 1000)
target = torch.randint(0, 1000, (64,))
save("cross_entropy_f32", logits=logits, target=target,
     loss=torch.nn.functional.cross_entropy(logits, target).reshape(1))

# casts: random values, and values exactly halfway between two fp16 / bf16 values
r = torch.randn(4096) * torch.exp2(torch.randint(-30, 20, (4096,)).float())
h16 = torch.randn(2048).to(torch.float16).float()
ulp16 = torch.where(h16.abs() >= 2.0 ** -14, torch.exp2(torch.floor(torch.log2(h16.abs())) - 10),
                    torch.full_like(h16, 2.0 ** -24))
ties16 = h16 + ulp16 / 2
hb = torch.randn(2048).to(torch.bfloat16).float()
tiesb = hb + torch.exp2(torch.floor(torch.log2(hb.abs())) - 7) / 2
xs = torch.cat([r, ties16, tiesb]).reshape(8, -1)
save("cast_f16", x=xs, y=xs.to(torch.float16))
save("cast_bf16", x=xs, y=xs.to(torch.bfloat16))
print(torch.__version__)
