#!/usr/bin/env python3
"""amp_cpu_torch -- the transformer layer of `lowp run amp-speedup` on this CPU with PyTorch: fp32 against bf16.

The C measurement of amp-speedup times fp32 only: Debian's OpenBLAS has no
bf16 GEMM (cblas_sbgemm), so a bf16 layer through it would be fp32
arithmetic plus conversions. PyTorch's CPU kernels do have bf16 paths
(oneDNN's bf16 GEMM where the CPU has AVX512_BF16 or AMX-BF16; its own
vectorized softmax, layer norm, GELU), so this script times the same layer
(seed 001: post-norm encoder layer, GELU, MLP 4x, dropout 0.1; here
torch.nn.TransformerEncoderLayer with batch_first=True) forward and backward:
  fp32       the layer and its data in fp32
  bf16       the layer and its data in bf16 (pure 16-bit, as the roofline models it)
  autocast   fp32 weights, torch.autocast("cpu", dtype=torch.bfloat16) (PyTorch's
             CPU AMP: matmuls in bf16, softmax and layer norm in fp32)
and the matmul rate of each dtype at n^3 (the best of reps) as the GEMM roof.
Timings: the median of reps passes after one warm-up pass, with the fastest
and the slowest. Whether the CPU has bf16/fp16 units is read from
/proc/cpuinfo's flags (the CPUID bits lowp's lib/cpu.c reads).

Timings differ from run to run; nothing here is asserted about them
(python/tests_torch/test_amp_cpu.py checks the structure at a tiny size).

Usage: python3 tools/amp_cpu_torch.py [--batch 1] [--seq 256] [--d_model 1024]
       [--heads 16] [--reps 5] [--threads 1] [--roof_n 1024] [--out FILE.json]
Exit status: 0; 2 bad usage or no PyTorch.
"""

import argparse
import json
import statistics
import sys
import time


def cpu_flags():
    """The 16-bit arithmetic flags /proc/cpuinfo lists (empty where it cannot be read)."""
    want = ("avx512_bf16", "amx_bf16", "avx512_fp16", "amx_fp16")
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return {w: w in have for w in want}
    except OSError:
        pass
    return {w: None for w in want}


def blas_info(torch):
    """BLAS_INFO of the build (torch.__config__.show()): "generic" is the system's libblas.so.3, which
    Debian's alternatives may point at a reference BLAS or at OpenBLAS."""
    for part in torch.__config__.show().replace("\n", ",").split(","):
        if part.strip().startswith("BLAS_INFO="):
            return part.strip()[len("BLAS_INFO="):]
    return "unknown"


def spread(ts):
    return {"median_s": statistics.median(ts), "fastest_s": min(ts), "slowest_s": max(ts)}


def matmul_rate(torch, dtype, n, reps):
    """The best flop/s of torch.mm at n^3 in dtype over reps runs (after a warm-up)."""
    g = torch.Generator().manual_seed(1)
    a = torch.rand((n, n), generator=g).to(dtype)
    b = torch.rand((n, n), generator=g).to(dtype)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t)
    return 2.0 * n**3 / best


def layer_times(torch, mode, args):
    """Seconds of reps forward+backward passes of the layer in mode (fp32, bf16, autocast)."""
    torch.manual_seed(20261122)
    layer = torch.nn.TransformerEncoderLayer(args.d_model, args.heads, dim_feedforward=4 * args.d_model, dropout=0.1,
                                             activation="gelu", batch_first=True)
    x = torch.rand((args.batch, args.seq, args.d_model)) * 2 - 1
    if mode == "bf16":
        layer = layer.to(torch.bfloat16)
        x = x.to(torch.bfloat16)
    x.requires_grad_(True)
    layer.train()

    def one():
        layer.zero_grad(set_to_none=True)
        x.grad = None
        if mode == "autocast":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                y = layer(x)
        else:
            y = layer(x)
        y.float().sum().backward()

    one()  # warm-up: first touch, oneDNN's primitive creation
    ts = []
    for _ in range(args.reps):
        t = time.perf_counter()
        one()
        ts.append(time.perf_counter() - t)
    return ts


def measure(args):
    import torch

    torch.set_num_threads(args.threads)
    out = {
        "generated_by": "tools/amp_cpu_torch.py (timings: they differ from run to run)",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "mkldnn": bool(torch.backends.mkldnn.is_available()),
        "blas_info": blas_info(torch),
        "cpu_flags": cpu_flags(),
        "layer": {"batch": args.batch, "seq": args.seq, "d_model": args.d_model, "heads": args.heads, "ffn_mult": 4,
                  "dropout": 0.1, "passes": args.reps},
        "matmul_roof_gflops": {},
        "step": {},
    }
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        out["matmul_roof_gflops"][name] = matmul_rate(torch, dt, args.roof_n, args.reps) / 1e9
    for mode in ("fp32", "bf16", "autocast"):
        out["step"][mode] = spread(layer_times(torch, mode, args))
    f32 = out["step"]["fp32"]["median_s"]
    out["speedup_over_fp32"] = {m: f32 / out["step"][m]["median_s"] for m in ("bf16", "autocast")}
    units = [k for k, v in out["cpu_flags"].items() if v]
    out["answer"] = (
        "PyTorch %s on this CPU (%d thread%s; 16-bit units: %s), layer batch %d x seq %d, d_model %d, forward + "
        "backward, median of %d passes: fp32 %.3g ms (%.3g-%.3g), bf16 %.3g ms (x%.3g), autocast bf16 %.3g ms (x%.3g); "
        "torch.mm at %d^3: fp32 %.3g GFLOP/s (BLAS %s), bf16 %.3g GFLOP/s. A bf16 speedup over an fp32 path slower "
        "than this CPU's best sgemm (lowp run amp-speedup measures OpenBLAS's) overstates what bf16 gains."
        % (out["torch"], out["threads"], "" if out["threads"] == 1 else "s", ", ".join(units) if units else "none",
           args.batch, args.seq, args.d_model, args.reps, 1e3 * f32, 1e3 * out["step"]["fp32"]["fastest_s"],
           1e3 * out["step"]["fp32"]["slowest_s"], 1e3 * out["step"]["bf16"]["median_s"],
           out["speedup_over_fp32"]["bf16"], 1e3 * out["step"]["autocast"]["median_s"],
           out["speedup_over_fp32"]["autocast"], args.roof_n, out["matmul_roof_gflops"]["fp32"], out["blas_info"],
           out["matmul_roof_gflops"]["bf16"]))
    return out


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--d_model", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--roof_n", type=int, default=1024)
    p.add_argument("--out", default=None, help="write the JSON here (default: stdout)")
    a = p.parse_args(argv)
    for k in ("batch", "seq", "d_model", "heads", "reps", "threads", "roof_n"):
        if getattr(a, k) < 1:
            p.error("--%s: expected a positive integer" % k)
    if a.d_model % a.heads:
        p.error("--heads must divide --d_model")
    return a


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("amp_cpu_torch: PyTorch is not installed", file=sys.stderr)
        return 2
    out = measure(args)
    text = json.dumps(out, indent=1) + "\n"
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        import os

        os.replace(tmp, args.out)
    else:
        sys.stdout.write(text)
    print(out["answer"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
