"""The pytest plugin (fixture, session summary, JUnit properties), the
library lookup, and pip install ./python offline."""

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

PY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PY)

TESTS = textwrap.dedent('''
    import numpy as np
    import pytest

    @pytest.mark.parametrize("k", [63, 64])
    def test_honest(lowp_check, k):
        rng = np.random.default_rng(k)
        A = rng.uniform(-1, 1, (4, k)).astype(np.float16)
        B = rng.uniform(-1, 1, (k, 5)).astype(np.float16)
        C = (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16)
        lowp_check.assert_precision("gemm", [A, B], C, [{"bound": "gamma"}], acc="fp32")

    def test_planted(lowp_check):
        rng = np.random.default_rng(1)
        A = rng.uniform(-1, 1, (4, 64)).astype(np.float16)
        B = rng.uniform(-1, 1, (64, 5)).astype(np.float16)
        C = (A.astype(np.float32)[:, :63] @ B.astype(np.float32)[:63]).astype(np.float16)
        lowp_check.assert_precision("gemm", [A, B], C, [{"bound": "gamma"}], acc="fp32")

    def test_tolerance(lowp_check):
        rtol, atol = lowp_check.tolerance("dot", k=64, input="fp16", acc="fp32", out="fp16")
        assert rtol == 2.0 ** -11
''')


def run_pytest(tmp_path, *args, env=None):
    (tmp_path / "test_user.py").write_text(TESTS)
    e = dict(os.environ)
    e["PYTHONPATH"] = PY + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "lowp.pytest_plugin",
                           "-p", "no:cacheprovider", str(tmp_path / "test_user.py")] + list(args),
                          capture_output=True, text=True, env=e, cwd=str(tmp_path))


def test_plugin_fixture_summary_and_junit(tmp_path):
    junit = tmp_path / "junit.xml"
    p = run_pytest(tmp_path, "--junitxml", str(junit))
    out = p.stdout
    assert p.returncode == 1, out + p.stderr          # the planted test fails
    assert "lowp precision checks" in out
    assert "PASS " in out and "test_honest[63]" in out and "test_honest[64]" in out
    assert "FAIL " in out and "test_planted" in out and "gamma bound" in out
    assert "3 precision checks, 1 failed" in out
    # a gamma bound failed: its name and worst element, no torch-style count
    assert "rule gamma bound failed" in out and "worst element C[" in out
    assert "Mismatched elements:" not in out
    root = ET.parse(str(junit)).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"test_honest[63]", "test_honest[64]", "test_planted", "test_tolerance"}
    # the checks are the suite's properties (valid in xunit2, pytest's default
    # junit_family), and no test warns about junit_family
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    props = {pr.get("name"): pr.get("value") for pr in suite.find("properties").iter("property")}
    assert props["test_user.py::test_honest[63] lowp_check_1"].startswith("gemm pass")
    assert props["test_user.py::test_planted lowp_check_1"].startswith("gemm fail")
    assert not any(c.find("properties") is not None for c in cases.values())
    assert cases["test_planted"].find("failure") is not None
    assert "incompatible with junit_family" not in out + p.stderr and "PytestWarning" not in out


@pytest.mark.parametrize("family", ["xunit1", "xunit2", "legacy"])
def test_plugin_no_junit_family_warning(tmp_path, family):
    junit = tmp_path / "junit.xml"
    p = run_pytest(tmp_path, "--junitxml", str(junit), "-o", "junit_family=" + family, "-W",
                   "error::pytest.PytestWarning")
    assert p.returncode == 1, p.stdout + p.stderr  # the planted test only
    assert "incompatible with junit_family" not in p.stdout + p.stderr
    assert "1 failed, 3 passed" in p.stdout


def test_library_override_is_used(tmp_path):
    bogus = str(tmp_path / "nolib.so")
    e = dict(os.environ, LOWP_LIBRARY=bogus, PYTHONPATH=PY)
    p = subprocess.run([sys.executable, "-c", "import lowp; lowp.tolerance('dot', k=4)"],
                       capture_output=True, text=True, env=e)
    assert p.returncode != 0 and "nolib.so" in p.stderr
    import lowp
    lib = lowp.library_path()
    e["LOWP_LIBRARY"] = lib
    p = subprocess.run([sys.executable, "-c", "import lowp; print(lowp.library_path())"],
                       capture_output=True, text=True, env=e)
    assert p.returncode == 0 and p.stdout.strip() == lib


def test_pip_install_offline(tmp_path):
    venv = tmp_path / "venv"
    # the system's pip where the venv can import it (Debian's python3-pip): a venv without a pip of its
    # own (ensurepip: about 6 s of CPU, most of this test); else the venv's own
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                   check=True)
    if subprocess.run([str(venv / "bin" / "python"), "-c", "import pip"], capture_output=True).returncode:
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--clear", str(venv)],
                       check=True)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index",
                          "--no-cache-dir", "--quiet", PY],
                         capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    # the installed copy works from elsewhere, and pytest finds its plugin by entry point
    (tmp_path / "test_it.py").write_text(
        "def test_it(lowp_check):\n"
        "    assert lowp_check.tolerance('gemm', k=64, input='bf16').rtol == 2.0 ** -8\n")
    p = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p",
                        "no:cacheprovider", str(tmp_path / "test_it.py")],
                       capture_output=True, text=True, cwd=str(tmp_path),
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "lowp precision checks" not in p.stdout  # no check recorded, no summary
