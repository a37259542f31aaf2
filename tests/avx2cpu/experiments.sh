#!/usr/bin/env bash
# experiments.sh LOWP [EXPERIMENT...] -- every experiment's --quick run on this CPU and on an emulated CPU with
# AVX2 alone (tests/avx2cpu/qemu.sh), compared by `lowp report --diff` (label avx2cpu): no unexpected
# difference. lowp's fast paths pick their AVX2 copies there by CPUID, and an AVX-512 instruction left
# unguarded stops the run (illegal instruction). Both sides run OpenBLAS's Haswell kernels
# (OPENBLAS_CORETYPE=Haswell, as on most AVX2 CPUs), so its rows must agree too; what the runs' results.json
# name as environment-dependent (timings; libm's and libmvec's CPU-specific code, under "when"
# cpu.isa_flags) may differ, and report --diff says so ("expected").
# Run: bash tests/avx2cpu/experiments.sh build/lowp [formats claims ...]
. "$(dirname "$0")/../cli/cli_harness.bash" # LOWP SRC T ok bad skip finish
shift
exps=("$@")
[ ${#exps[@]} -gt 0 ] || mapfile -t exps < <("$LOWP" list | awk '{print $1}')
export OPENBLAS_CORETYPE=Haswell
# the emulator runs lowp's vector code about 50 times slower (fp8-quantization's quick run took over 6
# minutes there): its quick run on fewer images, every kind of configuration still evaluated; amp-speedup's
# CPU layer (timings: environment-dependent) at a smaller size
declare -A fewer=([fp8-quantization]="--test=20 --tc_test=10 --layer_test=20 --calib=20 --boot=10 --phases=2"
                  [amp-speedup]="--roof_n=128 --stream_mb=4 --cpu_reps=1 --cpu_seq=16")
mkdir -p "$T/native" "$T/avx2"
for e in "${exps[@]}"; do
  # shellcheck disable=SC2206
  args=(--quick ${fewer[$e]:-})
  LOWP_THP=0 "$LOWP" run "$e" "${args[@]}" --out "$T/native/$e" >"$T/native.log" 2>&1; rn=$?
  bash "$SRC/tests/avx2cpu/qemu.sh" "$LOWP" run "$e" "${args[@]}" --out "$T/avx2/$e" >"$T/avx2.log" 2>&1
  rq=$?
  [ $rn -eq 0 ] && [ $rq -eq 0 ] && ok ||
    bad "$e: exit $rn here, $rq on the AVX2 CPU: $(grep -v '^#' "$T/avx2.log" | tail -n 3 | tr '\n' '|')"
  # the copy the emulated run took, as its results.json says (lowp's choice from CPUID)
  [ $rq -ne 0 ] || grep -q '"fast_paths":[[:space:]]*"avx2"' "$T/avx2/$e/results.json" ||
    bad "$e: the emulated run's fast paths: $(grep -o '"fast_paths":[[:space:]]*"[^"]*"' "$T/avx2/$e/results.json")"
done
# the two folders as reports (report --diff compares report folders: an index.html each)
: >"$T/native/index.html"
: >"$T/avx2/index.html"
"$LOWP" report --diff "$T/avx2" --out "$T/native" >"$T/diff.txt" 2>&1; rc=$?
same=$(grep -c '^  the same$' "$T/diff.txt")
[ $rc -eq 0 ] && ok || bad "report --diff: exit $rc: $(grep -B1 -A3 UNEXPECTED "$T/diff.txt" | head -n 40)"
echo "report --diff: ${same} of ${#exps[@]} experiments the same bytes; $(tail -n 1 "$T/diff.txt")"
finish avx2cpu_experiments
