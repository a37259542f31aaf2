#!/bin/bash
# claims_numpy.sh -- document 004's numpy fp32_to_bf16, run as written (the quote of claim
# 004-bf16-numpy, which claims_quotes.sh proves verbatim) by Debian's numpy: it returns an array twice
# as long, the bf16 values (rounded to nearest, ties away) at even positions and zeros between; and
# `lowp run claims` reports the same, with a transcript of the run. That is numpy 1.x's value-based
# promotion (Debian's numpy is 1.24); under NEP 50's rules (numpy >= 2) the code raises OverflowError,
# checked here too, and lowp's measured text names both.
# Skips (77) only when Debian's python3-numpy is missing (tools/test.sh installs it).
# Run: bash tests/cli/claims_numpy.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "python3-numpy missing: skipped"; exit 77; }

# the document's code, independently of lowp: its output against a bit-level rna of the input
/usr/bin/python3 - "$SRC/experiments/claims.json" <<'PY' && ok || bad "the document's numpy code, run directly"
import json, sys
import numpy as np
claim = [c for c in json.load(open(sys.argv[1], encoding="utf-8"))["claims"] if c["id"] == "004-bf16-numpy"][0]
ns = {}
exec(claim["quote"], {"np": np}, ns)
x = np.array([1.0, 0.1, 3.14159, -0.0025, 1.00390625], dtype=np.float32)
y = ns["fp32_to_bf16"](x)
assert y.shape == (2 * x.size,), y.shape          # twice as long: the int64 mask, viewed as float32
assert (y[1::2] == 0).all(), y                      # zeros between (little-endian high halves)
bits = x.view(np.uint32).astype(np.uint64)
mag = bits & 0x7fffffff
rna = ((bits & 0x80000000) | (((mag + 0x8000) >> 16) << 16)).astype(np.uint32).view(np.float32)
assert (y[0::2] == rna).all(), (y, rna)             # rounded to nearest, ties away (1.00390625 -> 1.0078125)
print("numpy", np.__version__, "returns", y.shape, "for", x.shape)
PY

"$LOWP" run claims --quick --out "$T/cl" >"$T/log" 2>&1 && ok || bad "lowp run claims: $(tail -3 "$T/log")"
/usr/bin/python3 - "$T/cl/results.json" <<'PY' && ok || bad "claims experiment: 004-bf16-numpy"
import json, sys
v = [v for v in json.load(open(sys.argv[1]))["results"]["verdicts"] if v["id"] == "004-bf16-numpy"][0]
assert v["verdict"] == "wrong" and v["category"] == "wrong", v
assert "the function returns 8 float32 values" in v["measured"] and "has dtype int64" in v["measured"], v["measured"]
PY
grep -q '"out_shape": \[8\]' "$T/cl/numpy-bf16-transcript.txt" && ok || bad "transcript lacks the output shape"

# NEP 50 (numpy >= 2's promotion of Python scalars): the mask 0xFFFF0000 does not fit int32 and raises
# OverflowError instead of widening to int64; numpy 1.24-1.26 switch to these rules with
# np._set_promotion_state('weak'). Run directly, then the same must be in lowp's measured text.
/usr/bin/python3 - "$SRC/experiments/claims.json" "$T/cl/results.json" <<'PY' && ok || bad "the document's numpy code under NEP 50"
import json, sys
import numpy as np
claim = [c for c in json.load(open(sys.argv[1], encoding="utf-8"))["claims"] if c["id"] == "004-bf16-numpy"][0]
ns = {}
exec(claim["quote"], {"np": np}, ns)
major = int(np.__version__.split(".")[0])
if major < 2:
    if not hasattr(np, "_set_promotion_state"):
        print("numpy", np.__version__, "cannot switch to NEP 50: nothing to check"); sys.exit(0)
    np._set_promotion_state("weak")
try:
    ns["fp32_to_bf16"](np.array([1.0, 0.1], dtype=np.float32))
    raised = None
except OverflowError as e:
    raised = str(e)
assert raised and "out of bounds for int32" in raised, raised
v = [v for v in json.load(open(sys.argv[2]))["results"]["verdicts"] if v["id"] == "004-bf16-numpy"][0]
assert "NEP 50" in v["measured"] and "OverflowError" in v["measured"] and np.__version__ in v["measured"], v["measured"]
print("numpy", np.__version__, "under NEP 50:", raised)
PY
grep -q 'def fp32_to_bf16' "$T/cl/numpy-bf16-transcript.txt" && ok || bad "transcript lacks the document's code"

# without numpy (a Python that cannot import it) the verdict says so, and the run still succeeds
printf '#!/bin/sh\nexec /usr/bin/python3 -S -I -c "import sys; sys.path=[p for p in sys.path if \\"dist-packages\\" not in p]; exec(sys.argv[1])" "$2"\n' >"$T/nonumpy"
chmod +x "$T/nonumpy"
"$LOWP" run claims --quick --python "$T/nonumpy" --out "$T/cl2" >"$T/log2" 2>&1 && ok || bad "run with a python without numpy: $(tail -3 "$T/log2")"
grep -q 'not checkable here: it needs Debian' "$T/cl2/results.json" && ok || bad "no numpy: verdict not 'not checkable here'"

echo "cli claims_numpy: $pass passed, $fail failed"
[ $fail -eq 0 ]
