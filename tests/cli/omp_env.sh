#!/bin/bash
# omp_env.sh -- OMP_NUM_THREADS gets --threads' limits (issue 19): 100000 crashed libgomp
# (SIGSEGV), and an empty value LLVM's libomp (clang builds); now a count outside 1..1024, or
# what is not a count, ends lowp with exit 2 and
# lowp's message before any work, nothing written; a valid count or list runs; --help still
# exits 0. LOWP_ISA gets the same treatment (generic, avx2 or avx512).
# Run: bash tests/cli/omp_env.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

for v in 100000 1025 0 -1 abc 4, ,4 "4,100000" 2.5 0x4 "3 4" ""; do
  rm -f "$T/C.npy"
  OMP_NUM_THREADS="$v" "$LOWP" gemm --m 16 --n 16 --k 16 --out-exact "$T/C.npy" >"$T/o" 2>"$T/e"; rc=$?
  [ $rc -eq 2 ] && ok || bad "OMP_NUM_THREADS='$v': exit $rc, want 2: $(cat "$T/e")"
  grep -q "^lowp: OMP_NUM_THREADS='$v' is not a thread count lowp runs with: give 1 to 1024 (as --threads)" "$T/e" &&
    ok || bad "OMP_NUM_THREADS='$v': message: $(cat "$T/e")"
  # libgomp itself warns about malformed values before lowp starts; lowp adds one line
  [ "$(grep -vc '^libgomp: \|^$' "$T/e")" -eq 1 ] && ok || bad "OMP_NUM_THREADS='$v': not one message: $(cat "$T/e")"
  [ ! -e "$T/C.npy" ] && [ ! -s "$T/o" ] && ok || bad "OMP_NUM_THREADS='$v': an output was written"
done
OMP_NUM_THREADS=100000 "$LOWP" check tests/data/check/kernels.json >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok || bad "check with OMP_NUM_THREADS=100000: exit $rc, want 2"
for v in 1 2 1024 "2,1" " 2"; do
  OMP_NUM_THREADS="$v" "$LOWP" gemm --m 16 --n 16 --k 16 >"$T/o" 2>"$T/e" && ok ||
    bad "OMP_NUM_THREADS='$v' refused: $(cat "$T/e")"
done
OMP_NUM_THREADS=100000 "$LOWP" gemm --help >/dev/null 2>&1 && ok || bad "--help under OMP_NUM_THREADS=100000"
# LOWP_ISA (issue 34): the widest instruction set the fast paths use. Another
# value: exit 2, one message, nothing written; each set runs with the same bytes
for v in avx AVX2 "" sse2 "avx2 "; do
  rm -f "$T/C.npy"
  LOWP_ISA="$v" "$LOWP" gemm --m 16 --n 16 --k 16 --out-exact "$T/C.npy" >"$T/o" 2>"$T/e"; rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/e")" -eq 1 ] && [ ! -e "$T/C.npy" ] && [ ! -s "$T/o" ] &&
    grep -q "^lowp: LOWP_ISA='$v' is not an instruction set: give generic, avx2 or avx512$" "$T/e" && ok ||
    bad "LOWP_ISA='$v': exit $rc, want 2 and one message: $(cat "$T/e")"
done
for v in generic avx2 avx512; do
  LOWP_ISA=$v "$LOWP" gemm --m 40 --n 24 --k 300 --in bf16 --acc fp16 --order pairwise --json >"$T/isa_$v" 2>"$T/e" &&
    ok || bad "LOWP_ISA=$v refused: $(cat "$T/e")"
  grep -v '"time_' "$T/isa_$v" >"$T/isa_${v}_r"
done
cmp -s "$T/isa_generic_r" "$T/isa_avx2_r" && cmp -s "$T/isa_generic_r" "$T/isa_avx512_r" && ok ||
  bad "LOWP_ISA: results differ between instruction sets"
LOWP_ISA=bad "$LOWP" gemm --help >/dev/null 2>&1 && ok || bad "--help under LOWP_ISA=bad"
echo "cli omp_env: $pass passed, $fail failed"
[ $fail -eq 0 ]
