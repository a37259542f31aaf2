"""An in-tree PEP 517 build backend for lowp's Python package (standard
library only, so that ``pip install ./python`` needs no network).

The wheel holds python/lowp/*.py and, when a lowp build tree is found
($LOWP_LIBRARY, or build/liblowp.so beside python/), a copy of liblowp.so and
lowp/_paths.py naming that build tree (the binding looks there too).
"""

import base64
import hashlib
import io
import os
import sysconfig
import tarfile
import zipfile

NAME, VERSION = "lowp", "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _metadata():
    readme = ""
    p = os.path.join(HERE, "README.md")
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            readme = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: Precision tests against "
            "the exact result, and tolerances derived from first principles\n"
            "Requires-Python: >=3.8\nRequires-Dist: numpy\nProvides-Extra: torch\n"
            "Requires-Dist: torch; extra == \"torch\"\nDescription-Content-Type: text/markdown\n"
            "\n%s" % (NAME, VERSION, readme))


ENTRY_POINTS = "[pytest11]\nlowp.pytest_plugin = lowp.pytest_plugin\n"


def _library():
    env = os.environ.get("LOWP_LIBRARY")
    if env and os.path.exists(env):
        return os.path.abspath(env)
    p = os.path.join(REPO, "build", "liblowp.so")
    return p if os.path.exists(p) else None


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _files():
    out = {}
    pkg = os.path.join(HERE, "lowp")
    for fn in sorted(os.listdir(pkg)):
        if fn.endswith(".py") and fn != "_paths.py":
            with open(os.path.join(pkg, fn), "rb") as f:
                out["lowp/" + fn] = f.read()
    return out


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _files()
    lib = _library()
    if lib:
        with open(lib, "rb") as f:
            files["lowp/liblowp.so"] = f.read()
        files["lowp/_paths.py"] = ("# written by lowp_build.py: the build tree of this wheel\n"
                                   "LIBRARIES = [%r]\n" % lib).encode()
        tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    else:
        tag = "py3-none-any"
    dist = "%s-%s.dist-info" % (NAME, VERSION)
    files[dist + "/METADATA"] = _metadata().encode()
    files[dist + "/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: lowp_build\nRoot-Is-Purelib: %s\n"
                              "Tag: %s\n" % ("false" if lib else "true", tag)).encode()
    files[dist + "/entry_points.txt"] = ENTRY_POINTS.encode()
    record = [_record_line(n, d) for n, d in files.items()] + [dist + "/RECORD,,"]
    files[dist + "/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            info = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if n.endswith(".so") else 0o644) << 16
            z.writestr(info, d, zipfile.ZIP_DEFLATED)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, VERSION)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "lowp_build.py", "README.md"] + sorted(_files()):
            p = os.path.join(HERE, rel)
            if os.path.exists(p):
                t.add(p, arcname=base + "/" + rel)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name
