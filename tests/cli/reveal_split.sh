#!/usr/bin/env bash
# reveal_split.sh -- "order": "revealed" where one input's range cannot hold the probes (issue 32):
# M / unit = 2^(ceil(log2 K) + 25) for an fp32 accumulator, beyond e5m2's range at K = 1024 and fp16's
# at K = 16384; revelation splits M across both operands (the products' span), so the honest kernel
# (32 fp32 lanes) passes against its revealed tree and the fp16-accumulating one fails.
# Run: bash tests/cli/reveal_split.sh build/lowp [fp16]   (fp16: K = 16384, about 50 s, 100 s under load: label long,
# as cli_reveal_split_fp16; the default run is e5m2 at K = 1024)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
IN=e5m2 K=1024 M=2
[ "${2:-}" = fp16 ] && IN=fp16 K=16384 M=1
c() { # NAME PARAMS
  printf '{ "name": "%s", "op": "gemm", "subject": { "kernel": "gemm_lanes", "params": "%s" }, "shape": { "m": %s, "n": 2, "k": %s }, "rules": [ { "bound": "gamma", "order": "revealed", "acc": "fp32" } ] }' \
    "$1" "$2" "$M" "$K"
}
printf '{ "lowp_check": 1, "defaults": { "in": "%s", "out": "fp32" }, "checks": [ %s, %s ] }' "$IN" \
  "$(c honest acc=fp32,lanes=32)" "$(c bug acc=fp16,lanes=32)" >"$T/s.json"
"$LOWP" check "$T/s.json" --json "$T/r.json" >"$T/c1" 2>&1
[ $? -eq 1 ] && grep -q "^PASS honest .*k=$K)" "$T/c1" && grep -q "^FAIL bug " "$T/c1" &&
  ! grep -q "cannot hold" "$T/c1" && ok || bad "$IN at K = $K: $(cat "$T/c1")"
# the honest kernel's tree: 32 lanes of K / 32 terms (leaf depth K / 32 + 5 at most), validated
"$LOWP" reveal --kernel gemm_lanes --params acc=fp32,lanes=32 --in "$IN" --shape "$M,2,$K" --validate 200 >"$T/r1" 2>&1 &&
  grep -q "tree: n=$K, $((K - 1)) nodes ($((K - 1)) additions, 0 block FMAs), leaf depth 6\.\.$((K / 32 + 4))" "$T/r1" &&
  grep -q "twin bit-exact on 200 outputs (0 differ)" "$T/r1" && ok || bad "reveal $IN at K = $K: $(cat "$T/r1")"
finish reveal_split
