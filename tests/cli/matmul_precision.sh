#!/usr/bin/env bash
# matmul_precision.sh -- lowp run matmul-precision: the fast emulation equals kernels/cpu/gemm_acc, results
# do not depend on the thread count, every product is measured in full, bounds hold
# Run: ctest --test-dir build -R cli_matmul_precision   (or: bash tests/cli/matmul_precision.sh build/lowp)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
tmp=$T
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}

# 1. the thread count changes no byte: results and every CSV, 1 thread against 2
OMP_NUM_THREADS=1 "$LOWP" run matmul-precision --quick --seed=11 --out "$tmp/t1" > "$tmp/t1.log" 2>&1
check "quick run, 1 thread, exits 0" test $? -eq 0
OMP_NUM_THREADS=2 "$LOWP" run matmul-precision --quick --seed=11 --out "$tmp/t2" > "$tmp/t2.log" 2>&1
check "quick run, 2 threads, exits 0" test $? -eq 0
for f in results.json $(cd "$tmp/t1" && ls *.csv); do
  check "$f identical for 1 and 2 threads" cmp -s "$tmp/t1/$f" "$tmp/t2/$f"
done
for f in errors.csv growth.csv bounds.csv tc.csv growth.png backward.png growth_tc.png; do
  check "wrote $f" test -s "$tmp/t1/$f"
done

# 2. the emulation against the reference kernel on (nearly) every entry: sizes that are not multiples of
#    the 4-row groups or of the 256-column tiles, and e2m1, whose sums overflow (recomputed by the reference)
"$LOWP" run matmul-precision --quick --sizes=16,23,300 --head=23 --formats=fp32,fp16,e2m1 \
  --bigformats=fp32,fp16,e2m1 --model=none --check=2000 --out "$tmp/e" > "$tmp/e.log" 2>&1
check "emulation run exits 0 (every checked entry equal to kernels/cpu/gemm_acc, every bound held)" test $? -eq 0
check "emulation run checked 50000 entries" grep -q 'on all 50000 entries checked' "$tmp/e/summary.md"
# e2m1 (largest value 6) overflows on N(0,1) sums: those outputs go to the reference, and still agree
check "e2m1 outputs were recomputed by the reference" \
  awk -F, '$3 == "cpu-e2m1" && $NF > 0 { found = 1 } END { exit !found }' "$tmp/e/errors.csv"
# every entry measured: the entries column is n^2 for the CPU kernels
check "every entry of every CPU product measured" \
  awk -F, 'NR > 1 && $3 !~ /^tc-/ && $5 != $1 * $1 { bad = 1 } END { exit bad }' "$tmp/e/errors.csv"
# and for the tensor-core model and OpenBLAS's sgemm too (whole products, every seed)
check "every entry of the tensor-core model's and OpenBLAS's products measured, at every seed" \
  awk -F, 'NR > 1 && ($3 ~ /^tc-/ || $3 == "openblas-sgemm") { n++; if ($5 != $1 * $1) bad = 1; s[$2] = 1 }
           END { exit bad || n == 0 || !(0 in s) || !(1 in s) }' "$tmp/t1/errors.csv"

# 3. independent checks of the numbers in errors.csv (columns: 6 err vs exact data, 7 err vs exact
#    inputs, 8 diff vs cpu-fp32, 9 componentwise backward error, 11 bound)
#    cpu-fp32 against itself is 0; fp32 inputs are the data, so both exact references agree for it
check "cpu-fp32: diff vs cpu-fp32 is 0 and the two references agree" \
  awk -F, '$3 == "cpu-fp32" && ($8 + 0 != 0 || $6 != $7) { bad = 1 } END { exit bad }' "$tmp/t1/errors.csv"
#    the backward error within its bound wherever the bound is finite (the run checks it too)
check "componentwise backward error <= bound" \
  awk -F, 'NR > 1 && $11 != "inf" && $9 + 0 > $11 + 0 { bad = 1 } END { exit bad }' "$tmp/t1/errors.csv"
#    an fp32 accumulator keeps the accumulation error far below the input rounding: for F-in/fp32-acc the
#    error against the exact product of the rounded inputs is < 1% of the error against the data
check "F-in/fp32-acc: accumulation error < 1% of the total" \
  awk -F, '$3 ~ /-in\/fp32-acc$/ && $7 + 0 > 0.01 * $6 { bad = 1 } END { exit bad }' "$tmp/t1/errors.csv"
#    fp32 is far closer to exact than any narrower format (at every size and seed; openblas-sgemm is fp32 too,
#    compared below)
check "cpu-fp32 error below every other kernel's" \
  awk -F, 'NR > 1 && $3 != "openblas-sgemm" { k = $1 " " $2; if ($3 == "cpu-fp32") f[k] = $6 + 0; else if (!(k in o) || $6 + 0 < o[k]) o[k] = $6 + 0 }
           END { n = 0; for (k in f) { n++; if (!(k in o) || !(f[k] < o[k])) exit 1 } exit n == 0 }' "$tmp/t1/errors.csv"
#    OpenBLAS's sgemm: fp32 inputs are the data, its error against the data is within a factor 4 of
#    cpu-fp32's either way (both fp32 accumulations, different orders) and far below every narrower kernel's
check "openblas-sgemm: within 4x of cpu-fp32 at every size and seed" \
  awk -F, 'NR > 1 { k = $1 " " $2; if ($3 == "cpu-fp32") f[k] = $6 + 0; if ($3 == "openblas-sgemm") o[k] = $6 + 0 }
           END { n = 0; for (k in f) { n++; if (!(k in o) || o[k] > 4 * f[k] || f[k] > 4 * o[k]) exit 1 } exit n == 0 }' "$tmp/t1/errors.csv"
#    the spread over seeds and the index's key numbers: results.json carries mean, min and max, and
#    min <= mean <= max; OpenBLAS names its version and CPU kernel
check "key numbers with their range over the seeds, OpenBLAS identified" /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
k = r["key_numbers"]
want = [n for n in k if n.startswith("max_err_")]
assert {"max_err_cpu-fp32_n64", "max_err_cpu-fp16_n64", "max_err_cpu-bf16_n64", "max_err_openblas-sgemm_n64"} <= set(want), want
for n in want:
    v = k[n]
    assert v["seeds"] == 2 and v["min"] <= v["value"] <= v["max"] and v["min"] < v["max"], (n, v)
assert "growth_cpu-bf16" in k and "ci95" in k["growth_cpu-bf16"]
assert r["openblas"].startswith("OpenBLAS") and ", core " in r["openblas"], r["openblas"]
assert r["see_also"][0]["href"] == "../pytorch-cpu/README.md"
assert "reports/pytorch-cpu" in r["answer"] and "accumulates in bf16" in r["answer"]
' "$tmp/t1/results.json"

#    the OpenBLAS sentence says what the numbers show on this CPU (its kernel differs between CPUs: on one it
#    gives cpu-fp32's bits, on another it errs less or more), and is one sentence whichever it is
check "the OpenBLAS sentence follows errors.csv (same bits / times less / times more)" /usr/bin/python3 -c '
import csv, json, re, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/errors.csv")))
a = json.load(open(sys.argv[1] + "/results.json"))["results"]["answer"]
s = a[a.index("An optimized fp32 BLAS"):]
s = s[:s.index("which holds for any order. ") + 27]
depth, ends = 0, 0
for i, c in enumerate(s[:-2]):
    depth += (c in "([") - (c in ")]" and depth > 0)
    ends += depth == 0 and c == "." and s[i + 1] == " " and not s[:i].endswith("Sec")
assert ends == 0, "the OpenBLAS text is more than one sentence: " + s
same = all(float(r["max_diff_vs_cpu_fp32"]) == 0 for r in rows if r["kernel"] == "openblas-sgemm")
m = re.search(r"errs by ([0-9.e+-]+) .* against ([0-9.e+-]+) .* for the recursive cpu-fp32, ", s)
eb, e32 = float(m.group(1)), float(m.group(2))
if same:
    assert "the same bits as the recursive cpu-fp32" in s and eb == e32, s
else:
    assert ("times less" in s) == (eb <= e32) and ("times more" in s) == (eb > e32), s
    assert "same bits" not in s, s
b = re.search(r"lowp.s kernels move by at most ([0-9.e+-]+), (within|more than) cpu-fp32.s own error ([0-9.e+-]+)", a)
assert b and (b.group(2) == "within") == (float(b.group(1)) <= float(b.group(3))), a
' "$tmp/t1"
if grep -qw avx2 /proc/cpuinfo; then # another kernel of OpenBLAS (its Haswell one) on the same data
  OPENBLAS_CORETYPE=Haswell "$LOWP" run matmul-precision --quick --seed=11 --out "$tmp/hw" > "$tmp/hw.log" 2>&1
  rc=$?
  check "quick run with OpenBLAS's Haswell kernel exits 0 (it exited $rc)" test $rc -eq 0
  [ $rc -eq 0 ] || tail -n 20 "$tmp/hw.log"
  check "its OpenBLAS sentence is one sentence and says times less or more" \
    grep -q 'for the recursive cpu-fp32, [0-9.]* times \(less\|more\), and differs from it by up to' "$tmp/hw/summary.md"
fi

# every size above tcmax: the tensor-core model runs at none, and the run has no tensor-core plot (it
# failed with "gnuplot failed" on the empty series, exit 2)
"$LOWP" run matmul-precision --quick --sizes=32,64 --head=32 --tcmax=16 --out "$tmp/notc" > "$tmp/notc.log" 2>&1
rc=$?
check "sizes all above tcmax: exit 0 (it exited $rc)" test $rc -eq 0
[ $rc -eq 0 ] || tail -n 5 "$tmp/notc.log"
check "sizes all above tcmax: no growth_tc.png, and the summary does not list it" \
  sh -c "[ ! -e '$tmp/notc/growth_tc.png' ] && [ -s '$tmp/notc/growth.png' ] && ! grep -q growth_tc '$tmp/notc/summary.md'"

echo "matmul_precision.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
