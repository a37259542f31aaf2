#!/usr/bin/python3
"""fp8q_eval -- an independent evaluator of the models lowp ships (models/*.safetensors), numpy only.

Reads the .safetensors files with the standard library and numpy (no lowp code, no safetensors
package), runs both networks' forward passes in float64 from their definitions (kernels/train/cnn.h,
kernels/train/vit.h, models/README.md) on the Fashion-MNIST test images, and checks:

  default        the predictions on all 10,000 test images equal the FP32 predictions lowp recorded
                 with the shipped weights (models/NAME_fp32_predictions.txt, which lowp run
                 fp8-quantization checks at every full run), so the accuracy is the same, exactly;
  --stride S     the same on every S-th test image only (images 0, S, 2S, ...: spread over the whole
                 set; the default ctest label runs S = 10, 1,000 images; label long runs all);
  --run DIR      a lowp run's output folder: its per_image.csv.gz FP32 rows agree with numpy on the
                 images it evaluated, and every configuration's accuracy, change, McNemar counts and
                 exact p-value and top-1 agreement in configs.csv are recomputed from the per-image rows
                 (the scale-phase rows from per_phase.csv.gz, with their mean KL).

Exit 0 when everything agrees, 1 otherwise, 77 when the dataset is not installed.
Run: /usr/bin/python3 tests/numpy/fp8q_eval.py [--models models] [--data DIR] [--stride S] [--run DIR]
"""
import argparse
import csv
import gzip
import io
import json
import math
import os
import struct
import sys

try:
    import numpy as np
except ImportError:  # the test needs numpy (Debian python3-numpy)
    print("fp8q_eval: numpy not installed: skipped")
    sys.exit(77)

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        a = np.frombuffer(raw[base + b:base + e], dtype=np.dtype(DTYPES[t["dtype"]]).newbyteorder("<"))
        out[name] = a.reshape(t["shape"]).astype(np.float64 if t["dtype"].startswith("F") else np.int64)
    return out


def read_idx(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        raw = f.read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    return np.frombuffer(raw[4 + 4 * nd:], dtype=np.uint8).reshape(dims)


def data_file(d, name):
    for p in (os.path.join(d, name), os.path.join(d, name + ".gz")):
        if os.path.exists(p):
            return p
    return None


# ------------------------------------------------------------------ CNN
def im2col3(x):
    """x: N x S x S x C -> N x S x S x 9C, k = (dy*3 + dx)*C + c, zero padding 1."""
    n, s, _, c = x.shape
    p = np.zeros((n, s + 2, s + 2, c))
    p[:, 1:-1, 1:-1, :] = x
    cols = [p[:, dy:dy + s, dx:dx + s, :] for dy in range(3) for dx in range(3)]
    return np.concatenate(cols, axis=3)


def pool2(x):
    n, s, _, c = x.shape
    return x.reshape(n, s // 2, 2, s // 2, 2, c).max(axis=(2, 4))


def cnn_logits(t, img):
    x = img[..., None]
    h = np.maximum(im2col3(x) @ t["conv1.w"] + t["conv1.b"], 0)
    h = pool2(h)
    h = np.maximum(im2col3(h) @ t["conv2.w"] + t["conv2.b"], 0)
    h = pool2(h).reshape(len(img), -1)  # (y*7 + x)*C2 + c: channels-last
    h = np.maximum(h @ t["fc1.w"] + t["fc1.b"], 0)
    return h @ t["fc2.w"] + t["fc2.b"]


# ------------------------------------------------------------------ ViT
def layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def gelu(u):
    return 0.5 * u * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u ** 3)))


def vit_logits(t, img):
    patch, d, heads, mlp, layers = (int(v) for v in t["config"])
    g = 28 // patch
    n = len(img)
    x = img.reshape(n, g, patch, g, patch).transpose(0, 1, 3, 2, 4).reshape(n, g * g, patch * patch)
    h = x @ t["embed.w"] + t["embed.b"] + t["pos"]
    dh = d // heads
    for l in range(layers):
        p = lambda k: t["blocks.%d.%s" % (l, k)]
        a = layernorm(h, p("ln1.g"), p("ln1.b"))
        qkv = a @ p("qkv.w") + p("qkv.b")
        q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(n, -1, heads, dh).transpose(0, 2, 1, 3) for i in range(3))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        o = (s / s.sum(axis=-1, keepdims=True)) @ v
        o = o.transpose(0, 2, 1, 3).reshape(n, -1, d)
        h = h + o @ p("proj.w") + p("proj.b")
        c = layernorm(h, p("ln2.g"), p("ln2.b"))
        h = h + gelu(c @ p("fc1.w") + p("fc1.b")) @ p("fc2.w") + p("fc2.b")
    return layernorm(h, t["lnf.g"], t["lnf.b"]).mean(axis=1) @ t["head.w"] + t["head.b"]


def predictions(name, t, img):
    f = cnn_logits if name == "cnn" else vit_logits
    return np.concatenate([f(t, img[i:i + 1000]).argmax(axis=1) for i in range(0, len(img), 1000)])


# ------------------------------------------------------------------ statistics
def mcnemar(b, c):
    n, lo = b + c, min(b, c)
    if n == 0:
        return 1.0
    p = 2.0 * sum(math.comb(n, k) for k in range(lo + 1)) / 2.0 ** n
    return min(p, 1.0)


def check_run(run, preds, labels):
    bad = 0
    rows = {}
    with gzip.open(os.path.join(run, "per_image.csv.gz"), "rt") as f:
        for r in csv.DictReader(f):
            rows.setdefault((r["model"], int(r["index"])), []).append(r)
    with open(os.path.join(run, "configs.csv")) as f:
        configs = list(csv.DictReader(f))
    # the per-tensor rows' further scale phases: per_phase.csv.gz, one line per model, format and image
    # (pred_by_phase: one character a phase, 0-9 then a-z; kl_phaseJ), rebuilt here as per-image rows
    phase = {}
    pp = os.path.join(run, "per_phase.csv.gz")
    if os.path.exists(pp):
        with gzip.open(pp, "rt") as f:
            for r in csv.DictReader(f):
                phase.setdefault((r["model"], r["format"]), []).append(r)
    for c in configs:
        if c["kind"] != "phase":
            continue
        fmt, j = c["format"], int(c["config"].split("x2^(-")[1].split("/")[0])
        src = phase.get((c["model"], fmt), [])
        rows[(c["model"], int(c["index"]))] = [{"pred": str(int(r["pred_by_phase"][j], 36)),
                                                "kl": r["kl_phase%d" % j]} for r in src]
        kl = np.mean([float(r["kl_phase%d" % j]) for r in src]) if src else float("nan")
        if not abs(kl - float(c["kl_mean"])) <= 1e-3 * abs(float(c["kl_mean"])) + 1e-12:
            print("FAIL %s %s: mean KL over per_phase.csv.gz %.6g vs configs.csv %s" % (c["model"], c["config"], kl,
                                                                                      c["kl_mean"]))
            bad += 1
    for name in ("cnn", "vit"):
        ref = rows[(name, 0)]
        mine = preds[name][:len(ref)]
        lp = np.array([int(r["pred"]) for r in ref])
        if not np.array_equal(lp, mine):
            print("FAIL %s: lowp's FP32 predictions differ from numpy's on %d of %d images"
                  % (name, int((lp != mine).sum()), len(ref)))
            bad += 1
        else:
            print("ok %s: lowp's FP32 predictions = numpy's on the %d images of the run" % (name, len(ref)))
    for c in configs:
        r = rows[(c["model"], int(c["index"]))]
        ref = rows[(c["model"], 0)]
        n = len(r)
        y = labels[:n]
        p = np.array([int(x["pred"]) for x in r])
        q = np.array([int(x["pred"]) for x in ref[:n]])
        right, rright = p == y, q == y
        b, cc = int((rright & ~right).sum()), int((~rright & right).sum())
        acc, dacc, agree = 100 * right.mean(), 100 * (right.mean() - rright.mean()), 100 * (p == q).mean()
        pv = mcnemar(b, cc)
        ok = (n == int(c["images"]) and abs(acc - float(c["accuracy_pct"])) < 0.006
              and abs(dacc - float(c["delta_pp"])) < 0.006 and b == int(c["fp32_right_only"])
              and cc == int(c["fp32_wrong_only"]) and abs(agree - float(c["agree_pct"])) < 0.006
              and abs(pv - float(c["mcnemar_p"])) <= 1e-3 * pv + 1e-12
              and float(c["ci95_lo_pp"]) <= float(c["delta_pp"]) + 1e-9 <= float(c["ci95_hi_pp"]) + 2e-9)
        if not ok:
            print("FAIL %s %s: recomputed acc %.2f delta %.2f b %d c %d p %.4g agree %.2f vs %s"
                  % (c["model"], c["config"], acc, dacc, b, cc, pv, agree, c))
            bad += 1
    print("%s %d configurations recomputed from per_image.csv.gz and per_phase.csv.gz (%d phase rows)"
          % ("ok" if not bad else "FAIL", len(configs), sum(c["kind"] == "phase" for c in configs)))
    return bad


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=os.path.join(here, "..", "..", "models"))
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--run", default=None, help="a lowp run folder to check (per_image.csv.gz, configs.csv)")
    ap.add_argument("--n", type=int, default=10000, help="evaluate the first N test images only (with --run)")
    ap.add_argument("--stride", type=int, default=1, help="evaluate every S-th test image only (not with --run)")
    a = ap.parse_args()
    if a.stride < 1 or (a.run and a.stride != 1):
        ap.error("--stride takes a whole number >= 1, and is not used with --run")
    fi, fl = data_file(a.data, "t10k-images-idx3-ubyte"), data_file(a.data, "t10k-labels-idx1-ubyte")
    if not fi or not fl:
        print("fp8q_eval: Fashion-MNIST not installed (dataset-fashion-mnist): skipped")
        return 77
    img = read_idx(fi).astype(np.float64) / 255.0
    labels = read_idx(fl).astype(np.int64)
    if a.run:
        img, labels = img[:a.n], labels[:a.n]
    nall = len(labels)
    pick = np.arange(0, nall, a.stride)  # the images evaluated (all with stride 1)
    img, labels = img[pick], labels[pick]
    total = len(pick)
    bad, preds = 0, {}
    for name in ("cnn", "vit"):
        t = read_safetensors(os.path.join(a.models, name + ".safetensors"))
        preds[name] = predictions(name, t, img)
        acc = (preds[name] == labels).sum()
        if a.run:
            continue
        pf = os.path.join(a.models, name + "_fp32_predictions.txt")
        if not os.path.exists(pf):
            print("FAIL %s: %s missing (numpy FP32 accuracy %d/%d)" % (name, pf, acc, total))
            bad += 1
            continue
        with open(pf) as f:
            rec = np.array([int(ch) for ch in f.read().strip()])
        # lowp records all its test images; the ones evaluated here are compared
        if len(rec) != nall:
            print("FAIL %s: %s holds %d predictions, want %d" % (name, pf, len(rec), nall))
            bad += 1
            continue
        rec = rec[pick]
        same = np.array_equal(rec, preds[name])
        racc = (rec == labels).sum()
        print("%s %s: numpy FP32 accuracy %d/%d = %.2f%%, lowp's %d/%d; predictions %s%s"
              % ("ok" if same and acc == racc else "FAIL", name, acc, total, 100.0 * acc / total, racc, total,
                 "identical" if same else "differ on %d images" % int((rec != preds[name]).sum()),
                 "" if a.stride == 1 else " (every %dth test image)" % a.stride))
        bad += not (same and acc == racc)
    if a.run:
        bad += check_run(a.run, preds, labels)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
