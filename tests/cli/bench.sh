#!/usr/bin/env bash
# cli_bench -- lowp bench: bad usage exits 2 with a message; a tiny `bench round` runs and validates.
# Run: bash tests/cli/bench.sh build/lowp   (the full-size benchmark is not run here)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

# expect_exit2 NAME PATTERN CMD...: exit 2, nothing on stdout, stderr names the problem
expect_exit2() {
  local name="$1" pattern="$2"; shift 2
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2"; return; fi
  if [ -s "$T/out" ]; then bad "$name: printed on stdout"; return; fi
  grep -q -- "$pattern" "$T/err" || { bad "$name: stderr lacks '$pattern': $(cat "$T/err")"; return; }
  ok
}

# bad usage
expect_exit2 "unknown benchmark" "unknown benchmark 'nosuch'" "$LOWP" bench nosuch
expect_exit2 "option before a name" "unknown option '--n'" "$LOWP" bench --n 16
expect_exit2 "unknown option" "unknown option '--bogus'" "$LOWP" bench round --bogus
expect_exit2 "--n without value" "--n needs a value" "$LOWP" bench round --n
expect_exit2 "--n zero" "out of range" "$LOWP" bench round --n 0
expect_exit2 "--n too large" "out of range" "$LOWP" bench round --n 0x20000000
expect_exit2 "--n not a number" "malformed --n" "$LOWP" bench round --n 12x
expect_exit2 "--reps zero" "out of range" "$LOWP" bench round --reps 0
expect_exit2 "--seed negative" "out of range" "$LOWP" bench round --seed -1

# help lists the benchmarks and exits 0
"$LOWP" bench --help >"$T/help" 2>&1 && grep -q '^  round ' "$T/help" && ok || bad "bench --help"
"$LOWP" bench round --help >"$T/help" 2>&1 && grep -q -- '--reps' "$T/help" && ok || bad "bench round --help"

# a tiny run (odd size: vector tails) validates every case and prints the table
"$LOWP" bench round --n 1003 --reps 1 >"$T/run" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "bench round --n 1003: exit $rc: $(cat "$T/err")"
for f in fp16 bf16 e4m3 e5m2; do
  grep -q "^validate: lowp $f rne, .* == reference loop on all 1003: ok" "$T/run" && ok || bad "validation line for $f"
  grep -q "^lowp $f rne (" "$T/run" && ok || bad "table row for $f"
done
if grep -q "f16c yes" "$T/run"; then
  grep -q "^validate: F16C vcvtps2ph == lowp fp16 rne on all 1003: ok" "$T/run" && ok || bad "F16C validation"
  grep -q "^hw fp16: F16C" "$T/run" && ok || bad "F16C row"
fi
grep -q "avx512_bf16 yes" "$T/run" || { grep -q "^bf16 hardware: not available on this CPU (no AVX512_BF16)" "$T/run" && ok || bad "bf16 hardware line"; }
if grep -q "^validate: .*FAIL" "$T/run"; then bad "a validation failed: $(grep FAIL "$T/run")"; else ok; fi

# bench exact: bad usage, help, and a tiny run (odd size) that validates every case
expect_exit2 "exact --sizes not a number" "malformed --sizes" "$LOWP" bench exact --sizes 12x
expect_exit2 "exact --sizes zero" "out of range" "$LOWP" bench exact --sizes=0
expect_exit2 "exact unknown case" "--formats: unknown case 'fp99'" "$LOWP" bench exact --formats fp16,fp99
expect_exit2 "exact unknown option" "unknown or incomplete option '--bogus'" "$LOWP" bench exact --bogus
"$LOWP" bench exact --help >"$T/help" 2>&1 && grep -q -- '--sizes' "$T/help" && ok || bad "bench exact --help"
"$LOWP" bench exact --sizes=37 --rows 3 >"$T/ex" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "bench exact --sizes 37: exit $rc: $(cat "$T/err")"
for f in fp16 bf16 fp32 e4m3 e5m2; do
  grep -q "^$f  *normal  *37 | slices" "$T/ex" && ok || bad "bench exact row for $f"
done
grep -q "^fp32  *spread  *37 | slices  0x0 .* sliced   0.0%" "$T/ex" && ok || bad "wide-exponent case not on the accumulator"
grep -q "VALIDATION FAILED" "$T/ex" && bad "bench exact validation failed" || ok

# bench gemm: bad usage, help, and a tiny run (odd size: vector tails) where every case validates
expect_exit2 "gemm unknown option" "unknown option '--bogus'" "$LOWP" bench gemm --bogus
expect_exit2 "gemm --n too small" "out of range" "$LOWP" bench gemm --n 2
expect_exit2 "gemm --n without value" "--n needs a value" "$LOWP" bench gemm --n
expect_exit2 "gemm --reps not a number" "malformed --reps" "$LOWP" bench gemm --reps=x
"$LOWP" bench gemm --help >"$T/help" 2>&1 && grep -q -- '--quick' "$T/help" && ok || bad "bench gemm --help"
"$LOWP" bench gemm --n=37 --reps 1 --rows 37 >"$T/gm" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "bench gemm --n 37: exit $rc: $(cat "$T/err")"
[ "$(sed '/^summation order/q' "$T/gm" | grep -c ' ok$')" -eq 11 ] && ok || bad "bench gemm: not 11 validated rows: $(cat "$T/gm")"
[ "$(sed -n '/^summation order/,/^target/p' "$T/gm" | grep -c ' ok$')" -eq 11 ] && ok ||
  bad "bench gemm: not 11 validated order rows (pairwise, blocked, splitk beside recursive): $(cat "$T/gm")"
[ "$(sed -n '/^tensor-core model/,/^target/p' "$T/gm" | grep -c ' same$')" -eq 15 ] && ok || bad "bench gemm: not 15 tensor-core rows equal to the reference: $(cat "$T/gm")"
# the block-scaled rows (issue 33): b200 mxf8f6f4 (mxfp8, mxfp6) and mxf4nvf4 (mxfp4, nvfp4-style)
[ "$(sed -n '/^block-scaled model/,/^target/p' "$T/gm" | grep -c ' same$')" -eq 4 ] && ok || bad "bench gemm: not 4 block-scaled rows equal to the reference: $(cat "$T/gm")"
grep -q "FAIL$" "$T/gm" && bad "bench gemm validation failed" || ok
grep -q "^fp16 in, fp16 acc  *ro32 " "$T/gm" && ok || bad "bench gemm: fp16 accumulation not on the ro32 kernel"
grep -q "^fp32 in, fp32 acc (fma), normal  *fma32 " "$T/gm" && ok || bad "bench gemm: fp32 not on fma32"
# --tables picks tables; an unknown one is bad usage
"$LOWP" bench gemm --n 16 --reps 1 --tables=orders >"$T/go" 2>"$T/err" && ok || bad "bench gemm --tables=orders: $(cat "$T/err")"
[ "$(grep -c ' ok$' "$T/go")" -eq 11 ] && ! grep -q '^case (recursive order)\|^tensor-core model' "$T/go" && ok ||
  bad "bench gemm --tables=orders: not the orders table alone: $(cat "$T/go")"
"$LOWP" bench gemm --n 16 --reps 1 --tables acc,tc >"$T/go" 2>"$T/err" && ! grep -q '^summation order' "$T/go" &&
  grep -q '^tensor-core model' "$T/go" && ok || bad "bench gemm --tables acc,tc: $(cat "$T/go")"
expect_exit2 "gemm --tables unknown" "unknown table 'bogus'" "$LOWP" bench gemm --tables acc,bogus
# --isa picks the fast paths' copy; an unknown one, or one this CPU cannot run, is bad usage
expect_exit2 "gemm --isa unknown" "unknown instruction set 'avx9'" "$LOWP" bench gemm --isa avx9
rank() { case $1 in avx512) echo 2 ;; avx2) echo 1 ;; *) echo 0 ;; esac; }
best=$(sed -n 's/^lowp bench gemm: .*, isa \([a-z0-9]*\);.*/\1/p' "$T/gm") # the default: the widest
[ -n "$best" ] && ok || bad "bench gemm: the header does not name the isa: $(head -1 "$T/gm")"
for isa in generic avx2 avx512; do
  if [ "$(rank $isa)" -le "$(rank "$best")" ]; then
    "$LOWP" bench gemm --n 19 --reps 1 --rows 19 --tables acc --isa=$isa >"$T/gi" 2>"$T/err" &&
      grep -q ", isa $isa;" "$T/gi" && [ "$(grep -c ' ok$' "$T/gi")" -eq 11 ] && ok ||
      bad "bench gemm --isa $isa: $(cat "$T/gi" "$T/err")"
    # the block-scaled rows run (and name) the same copy, equal to the reference
    "$LOWP" bench gemm --n 70 --reps 1 --rows 3 --tables tc --isa=$isa >"$T/gb" 2>"$T/err" &&
      [ "$(sed -n '/^block-scaled model/,/^target/p' "$T/gb" | grep -c " $isa .* same$")" -eq 4 ] && ok ||
      bad "bench gemm --tables tc --isa $isa: not 4 block-scaled rows on $isa equal to the reference: $(cat "$T/gb" "$T/err")"
  else
    expect_exit2 "gemm --isa $isa on a CPU without it" "this CPU runs at most $best" \
      "$LOWP" bench gemm --isa $isa
  fi
done

echo "cli_bench: $pass passed, $fail failed"
[ $fail -eq 0 ]
