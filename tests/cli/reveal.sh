#!/usr/bin/env bash
# reveal.sh -- lowp reveal and lowp twin on registry kernels, OpenBLAS and planted plugin kernels (issue 32)
#
# The planted kernels (tests/plugins/reveal_planted.c): SIMD lanes + tree with
# fp32 lanes (honest: a validated tree, its twin bit-exact on new inputs), the
# same with an fp16 accumulator (seen: 11 accumulator bits; no tree at K =
# 4096), a hidden fp16 conversion of B (reported with its rounding), a split
# drawn per call (nondeterministic: no tree).
# Run: bash tests/cli/reveal.sh build/lowp   (needs a C compiler: cc, or $CC)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
CC=${CC:-cc}
export OMP_NUM_THREADS=1
command -v "$CC" >/dev/null || { echo "FAIL: no C compiler ($CC) to build the test plugin"; exit 1; }
"$CC" -shared -fPIC -O1 -ffp-contract=off -I"$SRC/include" "$SRC/tests/plugins/reveal_planted.c" -o "$T/p.so" -lm ||
  { echo "FAIL: cannot build the plugin"; exit 1; }

"$LOWP" reveal --help >"$T/h" 2>&1 && grep -q "FPRev" "$T/h" && ok || bad "reveal --help"
"$LOWP" twin --help >"$T/h" 2>&1 && grep -q "bit for bit" "$T/h" && ok || bad "twin --help"

# a registry order, and its JSON
"$LOWP" reveal --kernel gemm_acc --params acc=fp32,order=blocked:16 --shape 2,2,200 --validate 500 >"$T/r1" 2>&1 &&
  grep -q "1 with a validated tree" "$T/r1" && ok || bad "gemm_acc blocked:16: $(cat "$T/r1")"
"$LOWP" reveal --kernel gemm_acc --params acc=fp32,order=pairwise --shape 2,2,64 --validate 200 --json >"$T/r1.json" 2>"$T/err" &&
  /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['classes'][0]['tree']['n']==64 and d['deterministic']" "$T/r1.json" &&
  ok || bad "gemm_acc pairwise --json: $(head -c 300 "$T/r1.json") $(cat "$T/err")"

# the lanes kernel: revealed, saved, its twin bit-exact on new inputs
"$LOWP" reveal --plugin "$T/p.so" --name gemm_lanes --in fp16 --shape 2,3,256 --validate 1000 --save "$T/lanes.json" >"$T/r2" 2>&1 &&
  grep -q "additions in fp32 (rne), products exact (FMA)" "$T/r2" && ok || bad "lanes: $(cat "$T/r2")"
# each class's line ends with its wall seconds, and the last line with the whole revelation's
[ "$(grep -c "probes in .*differ).*; [0-9]*\.[0-9][0-9] s$" "$T/r2")" -eq "$(grep -c "^class " "$T/r2")" ] &&
  tail -1 "$T/r2" | grep -q "; [0-9]*\.[0-9][0-9] s$" && ok || bad "lanes: seconds per class: $(cat "$T/r2")"
"$LOWP" twin --tree "$T/lanes.json" --plugin "$T/p.so" --name gemm_lanes --in fp16 --shape 2,3,256 --rows 3000 --seed 7 >"$T/t2" 2>&1 &&
  grep -q "bit-exact" "$T/t2" && ok || bad "twin lanes: $(cat "$T/t2")"
# the twin of another kernel differs (exit 1): the recursive FMA chain of gemm_acc
"$LOWP" twin --tree "$T/lanes.json" --kernel gemm_acc --params acc=fp32,order=fma --in fp16 --shape 2,3,256 >"$T/t3" 2>&1
[ $? -eq 1 ] && grep -q "differ" "$T/t3" && ok || bad "twin of another kernel: $(cat "$T/t3")"

# lowp check: "order": "revealed" passes the honest kernel and fails the fp16 accumulator;
# "order": {"tree": FILE} takes the saved tree; a malformed tree object is bad input
chk() { # NAME KERNEL ORDER-JSON K
  printf '{ "name": "%s", "op": "gemm", "subject": { "plugin": "%s", "kernel": "%s" }, "shape": { "m": 2, "n": 2, "k": %s }, "rules": [ { "bound": "gamma", "order": %s } ] }' \
    "$1" "$T/p.so" "$2" "$4" "$3"
}
printf '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ %s, %s, %s ] }' \
  "$(chk honest gemm_lanes '"revealed"' 256)" "$(chk bug gemm_lanes_f16acc '"revealed"' 256)" \
  "$(chk file gemm_lanes "{ \"tree\": \"$T/lanes.json\" }" 256)" >"$T/spec.json"
"$LOWP" check "$T/spec.json" >"$T/c1" 2>&1
[ $? -eq 1 ] && grep -q "^PASS honest" "$T/c1" && grep -q "^FAIL bug" "$T/c1" && grep -q "^PASS file" "$T/c1" &&
  grep -q "fewer bits than declared" "$T/c1" && ok || bad "check order revealed: $(cat "$T/c1")"
printf '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ %s ] }' \
  "$(chk x gemm_lanes '{ "tree": "" }' 256)" >"$T/spec2.json"
expect_exit2 "tree object without a file" '"tree"' "$LOWP" check "$T/spec2.json"
printf '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ %s ] }' \
  "$(chk x gemm_lanes "{ \"tree\": \"$T/lanes.json\" }" 128)" >"$T/spec3.json"
expect_exit2 "tree of another K" "leaves" "$LOWP" check "$T/spec3.json"

# the fp16 accumulator: 11 bits seen; at K = 4096 it cannot count the units, so the probes go in
# windows (issue 32): the tree of fp16 additions is found and its twin validated
"$LOWP" reveal --plugin "$T/p.so" --name gemm_lanes_f16acc --in fp16 --shape 1,1,4096 --validate 100 >"$T/r3" 2>&1
[ $? -eq 0 ] && grep -q "accumulator bits seen at the output: 11" "$T/r3" &&
  grep -q "tree: n=4096, 4095 nodes" "$T/r3" && grep -q "additions in fp16 (rne)" "$T/r3" &&
  grep -q "twin bit-exact on 100 outputs (0 differ)" "$T/r3" && ok ||
  bad "fp16 accumulator: $(cat "$T/r3")"

# the hidden conversion, with its rounding
"$LOWP" reveal --plugin "$T/p.so" --name gemm_hidden_b16 --shape 2,2,128 --validate 500 >"$T/r4" 2>&1 &&
  grep -q "B is rounded to fp16 (rne) before use" "$T/r4" && grep -q "A is read as declared" "$T/r4" && ok ||
  bad "hidden conversion: $(cat "$T/r4")"

# a split drawn per call: nondeterministic, no tree, exit 1
"$LOWP" reveal --plugin "$T/p.so" --name gemm_random_split --shape 2,2,300 >"$T/r5" 2>&1
[ $? -eq 1 ] && grep -q "nondeterministic" "$T/r5" && ! grep -q "tree: n=" "$T/r5" && ok || bad "random split: $(cat "$T/r5")"

# OpenBLAS sgemm on 1 and 2 threads, dgemm: every class validated
for p in threads=1 threads=2; do
  "$LOWP" reveal --kernel gemm_sgemm --params $p --shape 9,5,300 --validate 2000 >"$T/r6" 2>&1 &&
    grep -q "validated tree" "$T/r6" && ok || bad "sgemm $p: $(cat "$T/r6")"
done
"$LOWP" reveal --kernel gemm_dgemm --in fp64 --out fp64 --shape 4,4,200 --validate 1000 >"$T/r7" 2>&1 &&
  grep -q "accumulator bits seen at the output: 53" "$T/r7" && ok || bad "dgemm: $(cat "$T/r7")"
# the bound's comparison with gamma in the accumulator names what else the tree rounds: a binary64
# accumulator's result rounded to fp32 (it blamed rounded products there), rounded fp16 products
"$LOWP" reveal --kernel gemm_acc --params acc=fp64 --in fp16 --out fp32 --shape 2,2,64 --validate 100 >"$T/r8" 2>&1 &&
  grep -q "looser than recursive summation's gamma_63 in the accumulator (terms of equal size): beyond its additions, the tree rounds its result to fp32$" "$T/r8" &&
  ok || bad "acc=fp64 to fp32, the bound's text: $(cat "$T/r8")"
"$LOWP" reveal --kernel gemm_acc --params acc=fp32,prod=fp16 --in fp16 --shape 2,2,64 --validate 100 >"$T/r9" 2>&1 &&
  grep -q "looser than recursive .*: beyond its additions, the tree rounds its products$" "$T/r9" &&
  ok || bad "prod=fp16, the bound's text: $(cat "$T/r9")"
finish reveal
