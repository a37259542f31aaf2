#!/usr/bin/env bash
# reveal_split.sh -- "order": "revealed" where the inputs' range cannot hold the probes (issue 32):
# M / unit = 2^(ceil(log2 K) + 25) for an fp32 accumulator, beyond e5m2's range at K = 1024 and fp16's
# at K = 16384; revelation splits M across both operands (the products' span), so the honest kernel
# (32 fp32 lanes) passes against its revealed tree and the fp16-accumulating one fails. e4m3's
# products span only 2^32: its accumulator bits are seen through products of both inputs, and its
# probes put their units in windows of at most 512 terms (2^9 + 25 = 34), which the oracle adds up.
# Run: bash tests/cli/reveal_split.sh build/lowp [fp16|e4m3]
#   default: e5m2 at K = 1024, e4m3 at K = 256 and 1024 (about 15 s on 2 cores);
#   fp16: K = 16384 (184 s of CPU: the bug is probed in windows of 2048; label long, as cli_reveal_split_fp16);
#   e4m3: K = 4096 (label long, as cli_reveal_split_e4m3)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
case ${2:-} in
fp16) CASES="fp16:16384:1" ;;
e4m3) CASES="e4m3:4096:2" ;;
*) CASES="e5m2:1024:2 e4m3:256:2 e4m3:1024:2" ;;
esac
c() { # NAME PARAMS
  printf '{ "name": "%s", "op": "gemm", "subject": { "kernel": "gemm_lanes", "params": "%s" }, "shape": { "m": %s, "n": 2, "k": %s }, "rules": [ { "bound": "gamma", "order": "revealed", "acc": "fp32" } ] }' \
    "$1" "$2" "$M" "$K"
}
for cs in $CASES; do
  IFS=: read -r IN K M <<<"$cs"
  printf '{ "lowp_check": 1, "defaults": { "in": "%s", "out": "fp32" }, "checks": [ %s, %s ] }' "$IN" \
    "$(c honest acc=fp32,lanes=32)" "$(c bug acc=fp16,lanes=32)" >"$T/s.json"
  "$LOWP" check "$T/s.json" --json "$T/r.json" >"$T/c1" 2>&1
  [ $? -eq 1 ] && grep -q "^PASS honest .*k=$K)" "$T/c1" && grep -q "^FAIL bug " "$T/c1" &&
    ! grep -q "cannot hold" "$T/c1" && ok || bad "$IN at K = $K: $(cat "$T/c1")"
  # the honest kernel's tree: 32 lanes of K / 32 terms (leaf depth K / 32 + 5 at most), FMAs in fp32, validated
  "$LOWP" reveal --kernel gemm_lanes --params acc=fp32,lanes=32 --in "$IN" --shape "$M,2,$K" --validate 200 >"$T/r1" 2>&1 &&
    grep -q "accumulator bits seen at the output: 24$" "$T/r1" &&
    grep -q "tree: n=$K, $((K - 1)) nodes ($((K - 1)) additions, 0 block FMAs), leaf depth 6\.\.$((K / 32 + 4))" "$T/r1" &&
    grep -q "arithmetic: additions in fp32 (rne), products exact (FMA)" "$T/r1" &&
    grep -q "twin bit-exact on 200 outputs (0 differ)" "$T/r1" && ok || bad "reveal $IN at K = $K: $(cat "$T/r1")"
  # the bug's: the same tree, its additions in fp16 (11 bits seen), its twin bit-exact too
  [ "$IN" = e4m3 ] || continue
  "$LOWP" reveal --kernel gemm_lanes --params acc=fp16,lanes=32 --in "$IN" --shape "$M,2,$K" --validate 200 >"$T/r2" 2>&1 &&
    grep -q "accumulator bits seen at the output: 11$" "$T/r2" &&
    grep -q "leaf depth 6\.\.$((K / 32 + 4))" "$T/r2" && grep -q "arithmetic: additions in fp16 (rne)" "$T/r2" &&
    grep -q "twin bit-exact on 200 outputs (0 differ)" "$T/r2" && ok || bad "reveal the bug, $IN at K = $K: $(cat "$T/r2")"
done
# an output that cannot count K units (bf16 holds integers to 256): windows of 256 terms
if [ -z "${2:-}" ]; then
  "$LOWP" reveal --kernel gemm_acc --params acc=fp32,order=blocked:32 --in bf16 --out bf16 --shape 2,2,512 \
    --validate 200 >"$T/r3" 2>&1 &&
    grep -q "tree: n=512, 511 nodes (511 additions, 0 block FMAs), leaf depth 3\.\.47" "$T/r3" &&
    grep -q "twin bit-exact on 200 outputs (0 differ)" "$T/r3" && ok || bad "bf16 output at K = 512: $(cat "$T/r3")"
fi
finish reveal_split
