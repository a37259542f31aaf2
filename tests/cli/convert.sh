#!/bin/bash
# convert.sh -- `lowp convert` and `lowp formats`: good answers and every bad input
#
# The expected bit patterns were worked out by hand, independently of lowp:
#   0.1   -> fp16 0x2e66: 0.1 = 1.6 * 2^-4, 1.6 * 2^10 = 1638.4 -> 1638 = 0x666,
#            exponent field -4 + 15 = 01011: 0 01011 1001100110
#   65520 -> fp16 0x7c00: the tie 65504|65536 goes to even 65536 = overflow = inf
#   65520 rtz -> 0x7bff (65504); 1e6 --sat e4m3 -> 0x7e (448, "saturated")
#   464   -> e4m3 0x7e: the tie 448|480 goes to even 448 (OCP OFP8)
#   2^-24 -> fp16 0x0001; 1e-8 -> fp16 0x0000 (below 2^-25, half the min)
#   -2    -> fp16 0xc000; 1 -> bf16 0x3f80; 5 -> e2m1 0x6 (tie 4|6 -> 4)
#   fp16 bits 0x3c00 -> fp32 0x3f800000; e4m3 bits 0x7e (448) -> fp16 0x5f00
# Bad input must exit 2 with exactly one line on stderr and nothing on stdout.
#
# Run: ctest --test-dir build -L cli     (CTest passes the lowp binary as $1)

. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
tmp=$T


# good VALUE-ARGS... -- KEY VALUE: run, expect exit 0, and a JSON pair
# "KEY": "VALUE" (or a bare number) in the output
expect_json() {
  local key=$1 val=$2
  shift 2
  if ! "$LOWP" "$@" --json >"$tmp/out" 2>"$tmp/err"; then
    bad "lowp $* --json exited non-zero: $(cat "$tmp/err")"
    return
  fi
  if grep -Eq "\"$key\":[[:space:]]*\"?$val\"?,?\$" "$tmp/out"; then ok; else
    bad "lowp $* --json: no \"$key\": $val in output:"; cat "$tmp/out"
  fi
}

# usage ARGS...: exit 2, one line on stderr, empty stdout
expect_usage_error() {
  "$LOWP" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne 2 ]; then bad "lowp $*: exit $rc, want 2"; return; fi
  if [ -s "$tmp/out" ]; then bad "lowp $*: wrote to stdout: $(head -c 200 "$tmp/out")"; return; fi
  if [ "$lines" -ne 1 ]; then bad "lowp $*: $lines lines on stderr, want 1:"; cat "$tmp/err"; return; fi
  ok
}

# ---------------------------------------------------------------- good
expect_json bits 0x2e66 convert 0.1 --to fp16
expect_json class normal convert 0.1 --to fp16
expect_json ternary -1 convert 0.1 --to fp16
expect_json bits 0x7c00 convert 65520 --to fp16
expect_json value inf convert 65520 --to fp16
expect_json bits 0x7bff convert 65520 --to fp16 --round rtz
expect_json bits 0x7e convert 464 --to e4m3
expect_json bits 0x7e convert 1e6 --to e4m3 --sat
expect_json class saturated convert 1e6 --to e4m3 --sat
expect_json bits 0x7f convert 1e6 --to e4m3
expect_json bits 0x0001 convert 0x1p-24 --to fp16
expect_json class subnormal convert 0x1p-24 --to fp16
expect_json bits 0x0000 convert 1e-8 --to fp16
expect_json class zero convert 1e-8 --to fp16
expect_json bits 0xc000 convert -2 --to fp16
expect_json bits 0x3f80 convert 1 --to bf16
expect_json bits 0x6 convert 5 --to e2m1
expect_json bits 0x7f convert 1 --to e8m0
expect_json bits 0x3f800000 convert --bits 0x3c00 --from fp16 --to fp32
expect_json bits 0x5f00 convert --bits 0x7e --from e4m3 --to fp16
expect_json bits 0x7c00 convert inf --to fp16
expect_json from fp16 convert --bits 0x3c00 --from fp16 --to fp32
# every stable key of a convert result
"$LOWP" convert 0.1 --to fp16 --json >"$tmp/out" 2>/dev/null
for k in results input format round bits fields value value_hex class ternary abs_error rel_error ulp_error; do
  if grep -q "\"$k\":" "$tmp/out"; then ok; else bad "convert --json lacks key $k"; fi
done
# --to all: one result per built-in format
n=$("$LOWP" convert 1 --to all --json | grep -c '"format":')
if [ "$n" -eq 13 ]; then ok; else bad "convert --to all gave $n results, want 13"; fi
# formats: text and --json with computed numbers
"$LOWP" formats --json >"$tmp/out" 2>"$tmp/err" || bad "formats --json failed"
for k in name precision emin emax unit_roundoff machine_epsilon min_subnormal min_normal \
         max_finite max_finite_bits finite_values range_decades; do
  if grep -q "\"$k\":" "$tmp/out"; then ok; else bad "formats --json lacks key $k"; fi
done
if grep -q '"max_finite":[[:space:]]*65504,' "$tmp/out" && grep -q '"max_finite_bits":[[:space:]]*"0x7bff"' "$tmp/out"; then ok; else bad "formats --json: fp16 max 65504 0x7bff"; fi
if grep -q '"max_finite":[[:space:]]*448,' "$tmp/out" && grep -q '"max_finite_bits":[[:space:]]*"0x7e"' "$tmp/out"; then ok; else bad "formats --json: e4m3 max 448 0x7e"; fi
if "$LOWP" formats | grep -Eq '^e4m3 .* 448 '; then ok; else bad "formats: no e4m3 row with 448"; fi
# block-scaled formats: the table, --json and specs (OCP MX v1.0 Table 1: MXFP8 = 8.25 bits a value)
if "$LOWP" formats | grep -Eq '^mxfp8_e4m3 +e4m3 +8 +e8m0 +32 .* 8\.250 +448$'; then ok; else bad "formats: no mxfp8_e4m3 row"; fi
if "$LOWP" formats | grep -Eq '^nvfp4 +e2m1 +4 +ue4m3 +16 +fp32 +nvfp4 +4\.500'; then ok; else bad "formats: no nvfp4 row"; fi
if "$LOWP" formats --json q8_0 | grep -q '"spec":[[:space:]]*"elem=int8,scale=fp16,block=32,rule=ggml"'; then ok; else bad "formats --json q8_0: spec"; fi
if "$LOWP" formats 'elem=e4m3,scale=fp16,block=16,rule=absmax' | grep -Eq '^custom +e4m3 +8 +fp16 +16 .* 9\.000'; then ok; else bad "formats: a user block format"; fi
# convert to block-scaled formats. MX floor (OCP MX v1.0 6.3): amax 500 -> 2^(8-8) = 1, 500
# clamps to 448 (0x7e); rceil: 500/448 rounds up to 2 (e8m0 0x80), 500/2 = 250 -> 256 (0x78)
out=$("$LOWP" convert 0.1 -3 448 1e-3 500 --to mxfp8_e4m3 --json)
if echo "$out" | grep -q '"scale_bits":[[:space:]]*"0x7f"' && echo "$out" | grep -Eq '"element":[[:space:]]*448,' &&
  [ "$(echo "$out" | grep -c '"element_bits":[[:space:]]*"0x7e"')" = 2 ]; then ok; else bad "convert --to mxfp8_e4m3: floor scale 1, 500 clamps to 448"; fi
out=$("$LOWP" convert 0.1 -3 448 1e-3 500 --to=mxfp8_e4m3 --scale-rule=rceil --json)
if echo "$out" | grep -q '"scale_bits":[[:space:]]*"0x80"' && echo "$out" | grep -q '"element_bits":[[:space:]]*"0x78"'; then ok; else bad "convert --scale-rule rceil"; fi
# int8_b32 (ggml q8_0): amax 7 -> d = 7/127 stored in fp16 as 0x2b0e; 1 -> round(18.14) = 18 (0x12)
out=$("$LOWP" convert 1 2 3 -7 0.01 --to int8_b32 --json)
if echo "$out" | grep -q '"scale_bits":[[:space:]]*"0x2b0e"' && echo "$out" | grep -q '"element_bits":[[:space:]]*"0x12"'; then ok; else bad "convert --to int8_b32"; fi
# nvfp4: tensor amax 7 -> S_enc = 2688/7 = 384, block scale 7*384/6 = 448 (0x7e), tensor scale fl32(1/384)
out=$("$LOWP" convert 1 2 3 -7 0.01 --to nvfp4 --json)
if echo "$out" | grep -q '"scale_bits":[[:space:]]*"0x7e"' && echo "$out" | grep -q '"tensor_scale":[[:space:]]*0.0026041667'; then ok; else bad "convert --to nvfp4"; fi
# 33 values: two blocks, the second one short; an inf in block 1 poisons it (e8m0 NaN 0xff)
out=$("$LOWP" convert $(seq 1 32) inf --to mxfp4 --json)
if echo "$out" | grep -q '"scale_bits":[[:space:]]*"0xff"' && echo "$out" | grep -q '"value":[[:space:]]*"nan"'; then ok; else bad "convert --to mxfp4: inf poisons its block"; fi

# ---------------------------------------------------------------- bad
expect_usage_error convert 1 --to fp17
expect_usage_error convert 1 --to fp16,fp17
expect_usage_error convert 1 --to fp16 --round rnx
expect_usage_error convert 1.2.3 --to fp16
expect_usage_error convert abc --to fp16
expect_usage_error convert '' --to fp16
expect_usage_error convert 'nan(1)' --to fp16
expect_usage_error convert ' 1' --to fp16
expect_usage_error convert 1 --to p=0,emin=-6,emax=7
expect_usage_error convert 1 --to p=5,emin=7,emax=-6
expect_usage_error convert 1 --to p=5,emin=-6,emax=7,bogus
expect_usage_error convert 1 --to p=5,emin=-6,emax=4294967297
expect_usage_error convert --bits 0x1ff --from e4m3 --to fp16
expect_usage_error convert --bits 0x10000 --from fp16 --to fp32
expect_usage_error convert --bits 0x3c00 --to fp16
expect_usage_error convert --bits zz --from fp16 --to fp32
expect_usage_error convert 1 --to fp16 --daz
expect_usage_error convert 1 --to fp16 --frobnicate
expect_usage_error convert 1
expect_usage_error convert --to fp16
expect_usage_error convert 1 --to
expect_usage_error convert 1 --to fp16 --round
expect_usage_error convert 1 --to fp16 --sr-bits 0
expect_usage_error convert 1 --to fp16 --overflow sometimes
expect_usage_error formats --frobnicate
# the message names what was wrong and what is accepted
"$LOWP" convert 1 --to fp17 2>"$tmp/err" >/dev/null
if grep -q "fp17" "$tmp/err" && grep -q "fp16" "$tmp/err"; then ok; else bad "unknown format message: $(cat "$tmp/err")"; fi
"$LOWP" convert 1 --to fp16 --round rnx 2>"$tmp/err" >/dev/null
if grep -q "rnx" "$tmp/err" && grep -q "rne" "$tmp/err"; then ok; else bad "unknown mode message: $(cat "$tmp/err")"; fi
"$LOWP" convert --bits 0x1ff --from e4m3 --to fp16 2>"$tmp/err" >/dev/null
if grep -q "0x1ff" "$tmp/err" && grep -q "8 bits" "$tmp/err"; then ok; else bad "--bits message: $(cat "$tmp/err")"; fi

# values from standard input and from a file, one per line; CSV output
printf '0.1\n\n# a comment\n  65520  \n' >"$tmp/vals.txt"
printf '0.1\n65520\n' | "$LOWP" convert - --to fp16 --csv >"$tmp/csv1" 2>"$tmp/err" &&
  [ "$(head -1 "$tmp/csv1")" = "input,format,round,bits,fields,value,value_hex,class,ternary,abs_error,rel_error,ulp_error" ] &&
  grep -q '^0.1,fp16,rne,0x2e66,' "$tmp/csv1" && grep -q '^65520,fp16,rne,0x7c00,.*,inf,' "$tmp/csv1" &&
  [ "$(wc -l <"$tmp/csv1")" -eq 3 ] && ok || bad "convert - --csv: $(cat "$tmp/csv1" "$tmp/err")"
"$LOWP" convert --file "$tmp/vals.txt" --to fp16 --csv >"$tmp/csv2" 2>&1 && cmp -s "$tmp/csv1" "$tmp/csv2" && ok ||
  bad "convert --file (blank lines, comments, blanks around values): $(cat "$tmp/csv2")"
printf '0x3c00\n0x7c00\n' | "$LOWP" convert --bits - --from fp16 --to bf16 --json >"$tmp/j" 2>&1 &&
  grep -q '"input":.*"0x7c00"' "$tmp/j" && ok || bad "convert --bits from stdin: $(cat "$tmp/j")"
printf '1.5\nbogus\n' >"$tmp/bad.txt"
expect_usage_error convert --file "$tmp/bad.txt" --to fp16
expect_usage_error convert --file "$tmp/missing.txt" --to fp16
expect_usage_error convert --file "$tmp" --to fp16
expect_usage_error convert 1 --to fp16 --csv --json

echo "convert.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
