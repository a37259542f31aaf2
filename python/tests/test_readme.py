"""The README's Python and lowp tol examples run exactly as written."""

import os
import re
import subprocess
import sys

PY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PY)


def section(title):
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    start = text.index("\n## " + title + "\n")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def blocks(text, lang):
    return re.findall(r"```%s\n(.*?)```" % lang, text, re.S)


def test_python_example_runs():
    code = [b for b in blocks(section("Python and pytest"), "python") if "lowp.check(" in b]
    assert code, "no Python example in the README"
    env = dict(os.environ, PYTHONPATH=PY)
    for c in code:
        p = subprocess.run([sys.executable, "-c", c], capture_output=True, text=True, env=env,
                           cwd=REPO)
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.startswith("True "), p.stdout


def test_tol_examples_run(tmp_path):
    import numpy as np
    exe = os.environ.get("LOWP_CLI", os.path.join(REPO, "build", "lowp"))
    lines = [ln for b in blocks(section("lowp tol"), "sh") for ln in b.splitlines()
             if ln.startswith("build/lowp tol")]
    assert len(lines) >= 4
    rng = np.random.default_rng(0)   # the inputs the data-aware example reads
    np.save(tmp_path / "A.npy", rng.standard_normal((16, 4096)).astype(np.float16))
    np.save(tmp_path / "B.npy", rng.standard_normal((4096, 16)).astype(np.float16))
    for ln in lines:
        args = ln.split()[1:]
        p = subprocess.run([exe] + args, capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 0 and "rtol" in p.stdout, ln + "\n" + p.stdout + p.stderr
