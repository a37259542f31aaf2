"""tools/amp_cpu_torch.py (amp-speedup's PyTorch CPU measurement) at a tiny size: its structure, never its timings."""

import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load():
    spec = importlib.util.spec_from_file_location("amp_cpu_torch", os.path.join(ROOT, "tools", "amp_cpu_torch.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TINY = ["--seq", "8", "--d_model", "32", "--heads", "4", "--reps", "3", "--roof_n", "32"]


def test_tiny_layer_structure(tmp_path):
    m = load()
    out = tmp_path / "t.json"
    assert m.main(TINY + ["--out", str(out)]) == 0
    j = json.loads(out.read_text())
    assert set(j["step"]) == {"fp32", "bf16", "autocast"}
    for mode, s in j["step"].items():
        assert 0 < s["fastest_s"] <= s["median_s"] <= s["slowest_s"], mode
    for mode in ("bf16", "autocast"):
        assert j["speedup_over_fp32"][mode] == pytest.approx(j["step"]["fp32"]["median_s"] / j["step"][mode]["median_s"])
    assert set(j["cpu_flags"]) == {"avx512_bf16", "amx_bf16", "avx512_fp16", "amx_fp16"}
    assert all(v in (True, False, None) for v in j["cpu_flags"].values())
    assert j["matmul_roof_gflops"]["fp32"] > 0 and j["matmul_roof_gflops"]["bf16"] > 0
    assert j["layer"]["passes"] == 3 and "16-bit units" in j["answer"]
    assert not os.path.exists(str(out) + ".tmp")


@pytest.mark.parametrize("bad", [["--heads", "5"], ["--reps", "0"], ["--seq", "x"], ["--nope"]])
def test_bad_usage_exits_2(bad):
    with pytest.raises(SystemExit) as e:
        load().main(TINY + bad)
    assert e.value.code == 2
