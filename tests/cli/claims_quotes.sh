#!/bin/bash
# claims_quotes.sh -- every quote in experiments/claims.json occurs verbatim (modulo whitespace) in its
# seed document; a quote may join verbatim pieces with " [...] ", each piece must occur, in order.
# The seeds (the five documents) live beside the checkout: $LOWP_SEEDS, else ../shared/seeds or
# ../../shared/seeds from the source folder. Skips (77) when they are not there or python3 is missing.
# Run: bash tests/cli/claims_quotes.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
SEEDS=${LOWP_SEEDS:-}
for d in "$SRC/../shared/seeds" "$SRC/../../shared/seeds"; do
  [ -z "$SEEDS" ] && [ -d "$d" ] && SEEDS=$d
done
[ -n "$SEEDS" ] && [ -d "$SEEDS" ] || { echo "claims_quotes.sh: skipped: seed documents not found (set LOWP_SEEDS)"; exit 77; }
command -v python3 >/dev/null || { echo "claims_quotes.sh: skipped: python3 missing"; exit 77; }
python3 - "$SRC/experiments/claims.json" "$SEEDS" <<'PY'
import json, os, re, sys
claims = json.load(open(sys.argv[1], encoding="utf-8"))
norm = lambda s: re.sub(r"\s+", " ", s).strip()
docs = {}
for key, desc in claims["documents"].items():
    docs[key] = norm(open(os.path.join(sys.argv[2], desc.split()[0]), encoding="utf-8").read())
fail = passed = 0
for c in claims["claims"]:
    text = docs[c["id"][:3]]
    pos = 0
    for piece in c["quote"].split(" [...] "):
        i = text.find(norm(piece), pos)
        if i < 0:
            print("FAIL: %s: not verbatim in document %s: %r" % (c["id"], c["id"][:3], piece[:120]))
            fail += 1
            break
        pos = i + len(norm(piece))
    else:
        passed += 1
# a quote that is not in the document must be caught (the check is not vacuous)
assert docs["004"].find(norm("BF16 has 8 mantissa bits")) < 0
print("claims_quotes.sh: %d quotes verbatim, %d not" % (passed, fail))
sys.exit(1 if fail or passed < 80 else 0)
PY
