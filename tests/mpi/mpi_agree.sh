#!/bin/bash
# agree.sh -- ranks of one MPI job that disagree (label mpi; issue 19): mpirun's MPMD syntax
# (-np 1 A : -np 1 B) starts ranks with different --m, --n, --k, --seed, --json on one rank
# only, gemm on one and check on the other, specs or .npy inputs that differ under the same
# name (each rank in its own folder, --wdir): every case ends before any work with exit 2, one
# message naming the difference, no output written, no hang. An output file that differs
# between the ranks' folders is not an input (accepted). A plugin kernel that calls exit(0)
# under mpirun fails its check without running lowp's exit handlers (no hang).
# Run: bash tests/mpi/mpi_agree.sh path/to/lowp path/to/mpiexec   (skips: exit 77 without MPI)
set -u
LOWP=${1:?usage: agree.sh path/to/lowp path/to/mpiexec}
case "$LOWP" in /*) ;; *) LOWP="$(pwd)/$LOWP" ;; esac
MPIEXEC=${2:-none}
MPI_TIMEOUT=60
FAILS_OUT=C.npy
. "$(dirname "${BASH_SOURCE[0]}")/mpi_harness.bash"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export OMP_NUM_THREADS=1
# the jobs that fail run side by side (fails_bg, tests/mpi/mpi_harness.bash), each with its outputs in
# its own folder $J; G: a gemm command line that writes there
G() { echo "$LOWP gemm --n 16 --k 32 --out-exact $J/C.npy"; }

job; fails_bg "--m differs" "argument 9 is '64' on rank 0, '128' on rank 1" \
  -np 1 $(G) --m 64 : -np 1 $(G) --m 128
job; fails_bg "--n differs" "argument 5 is '16' on rank 0, '24' on rank 1" \
  -np 1 "$LOWP" gemm --m 8 --n 16 --k 8 --out-exact "$J/C.npy" : -np 1 "$LOWP" gemm --m 8 --n 24 --k 8 --out-exact "$J/C.npy"
job; fails_bg "--k differs" "argument 7 is '8' on rank 0, '9' on rank 1" \
  -np 1 "$LOWP" gemm --m 8 --n 16 --k 8 --out-exact "$J/C.npy" : -np 1 "$LOWP" gemm --m 8 --n 16 --k 9 --out-exact "$J/C.npy"
job; fails_bg "--seed differs" "argument 11 is '1' on rank 0, '2' on rank 1" \
  -np 1 $(G) --m 64 --seed 1 : -np 1 $(G) --m 64 --seed 2
job; fails_bg "--json on one rank only" "argument 10 is '--json' on rank 0, '(none)' on rank 1" \
  -np 1 $(G) --m 64 --json : -np 1 $(G) --m 64
job; fails_bg "only the third rank differs" "on rank 0, '9' on rank 2" \
  -np 2 $(G) --m 64 --seed 1 : -np 1 $(G) --m 64 --seed 9
job; fails_bg "one rank gemm, the other check" "argument 1 is 'gemm' on rank 0, 'check' on rank 1" \
  -np 1 $(G) --m 64 : -np 1 "$LOWP" check "$SRC/tests/data/check/kernels.json" --json "$J/C.npy"
job; fails_bg "--key=value on one rank" "argument 2 is '--m=64' on rank 0, '--m' on rank 1" \
  -np 1 "$LOWP" gemm --m=64 --out-exact "$J/C.npy" : -np 1 "$LOWP" gemm --m 64 --out-exact "$J/C.npy"

# the same names, other contents: each rank in its own folder (a node's local disk)
mkdir -p "$T/d1" "$T/d2" "$T/d3"
cp "$SRC/tests/data/check/kernels.json" "$T/d1/s.json"
sed 's/"seed": *[0-9]*/"seed": 99/' "$T/d1/s.json" >"$T/d2/s.json"
cmp -s "$T/d1/s.json" "$T/d2/s.json" && printf '\n' >>"$T/d2/s.json"
sed 's/\(checks\)/\1/' "$T/d1/s.json" | tr 'a' 'b' >"$T/d3/s.json" # same size, other content
job; fails_bg "different specs under one name" "read different files: s.json is [0-9]* bytes on rank 0 and [0-9]* bytes on rank 1" \
  -np 1 --wdir "$T/d1" "$LOWP" check s.json --json "$J/C.npy" : -np 1 --wdir "$T/d2" "$LOWP" check s.json --json "$J/C.npy"
job; fails_bg "specs of one size, other content" "s.json is [0-9]* bytes on rank 0 and [0-9]* bytes with other content on rank 1" \
  -np 1 --wdir "$T/d1" "$LOWP" check s.json --json "$J/C.npy" : -np 1 --wdir "$T/d3" "$LOWP" check s.json --json "$J/C.npy"
job; fails_bg "a spec missing on one rank" "s.json is a file on rank 0 and no such file on rank 1 (cannot open it there)" \
  -np 1 --wdir "$T/d1" "$LOWP" check s.json --json "$J/C.npy" : -np 1 --wdir "$T" "$LOWP" check s.json --json "$J/C.npy"
fails_wait
"$LOWP" gemm --m 6 --n 5 --k 4 --seed 1 --out-exact "$T/d1/A.npy" >/dev/null &&
  "$LOWP" gemm --m 6 --n 5 --k 4 --seed 2 --out-exact "$T/d2/A.npy" >/dev/null &&
  "$LOWP" gemm --m 5 --n 3 --k 4 --seed 3 --out-exact "$T/d1/B.npy" >/dev/null && cp "$T/d1/B.npy" "$T/d2/B.npy" ||
  bad "making .npy inputs"
fails "different --a contents" "A.npy is [0-9]* bytes on rank 0 and [0-9]* bytes with other content on rank 1" \
  -np 1 --wdir "$T/d1" "$LOWP" gemm --a A.npy --b B.npy --out-exact "$T/C.npy" : \
  -np 1 --wdir "$T/d2" "$LOWP" gemm --a A.npy --b B.npy --out-exact "$T/C.npy"

# the same spec naming tensor files of one name and other contents: the files a spec names are
# compared too (not only those on the command line)
"$LOWP" gemm --m 6 --n 3 --k 4 --seed 4 --out-exact "$T/d1/C.npy" >/dev/null && cp "$T/d1/C.npy" "$T/d2/C.npy" &&
  cp "$T/d1/B.npy" "$T/d2/B.npy" || bad "making the tensor files"
TC='"op": "gemm", "in": "fp64", "out": "fp64", "subject": { "tensors": { "inputs": [ { "path": "A.npy" },
  { "path": "B.npy" } ], "outputs": [ { "path": "C.npy" } ] } }, "rules": [ { "max_ulp": 1e300 } ]'
printf '{ "lowp_check": 1, "checks": [ { "name": "t", %s }, { "name": "u", %s } ] }\n' "$TC" "$TC" >"$T/d1/t.json" &&
  cp "$T/d1/t.json" "$T/d2/t.json"
fails "a tensor file the spec names differs" "the files the spec names differ: .*A.npy is [0-9]* bytes on rank 0 and [0-9]* bytes with other content on rank 1" \
  -np 1 --wdir "$T/d1" "$LOWP" check t.json : -np 1 --wdir "$T/d2" "$LOWP" check t.json
cp "$T/d1/A.npy" "$T/d2/A.npy"
MPI -np 1 --wdir "$T/d1" "$LOWP" check t.json : -np 1 --wdir "$T/d2" "$LOWP" check t.json >"$T/o" 2>"$T/e"
[ $? -ne 2 ] && ok || bad "the same tensor files on both ranks: refused: $(cat "$T/e")"
rm -f "$T/d1/C.npy" "$T/d2/C.npy"

# an output is not an input: a stale C.npy in one rank's folder does not matter
printf 'stale' >"$T/d2/C.npy"
cp "$T/d1/A.npy" "$T/d2/A.npy"
rm -f "$T/d1/C.npy"
MPI -np 1 --wdir "$T/d1" "$LOWP" gemm --a A.npy --b B.npy --out-exact C.npy : \
  -np 1 --wdir "$T/d2" "$LOWP" gemm --a A.npy --b B.npy --out-exact C.npy >"$T/o" 2>"$T/e" &&
  [ -s "$T/d1/C.npy" ] && ok || bad "same inputs, a stale output on one rank: refused: $(cat "$T/e")"

# a plugin kernel that calls exit(0) under mpirun: its check fails, the job ends (no hang in
# MPI_Finalize run by lowp's exit handlers in the kernel's process)
if command -v "${CC:-cc}" >/dev/null; then
  "${CC:-cc}" -shared -fPIC -O1 -I"$SRC/include" "$SRC/tests/cli/plugins/misbehave2.c" -o "$T/mis.so" -lm ||
    bad "cannot build the test plugin"
  mk() { printf '{ "name": "%s", "op": "gemm", "subject": { "plugin": "%s", "kernel": "%s" }, "shape": { "m": 2, "n": 2, "k": 4 }, "rules": [ { "max_ulp": 64 } ] }' "$1" "$T/mis.so" "$1"; }
  printf '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ %s, %s, %s ] }\n' \
    "$(mk quit0)" "$(mk honest)" "$(mk qquit)" >"$T/exit.json"
  start=$(date +%s)
  LOWP_PLUGIN_TIMEOUT=100 MPI -np 2 "$LOWP" check "$T/exit.json" --junit "$T/exit.xml" >"$T/o" 2>"$T/e"; rc=$?
  took=$(( $(date +%s) - start ))
  [ $rc -eq 1 ] && ok || bad "exit(0) kernel under mpirun: exit $rc, want 1: $(cat "$T/o" "$T/e")"
  [ $took -lt 50 ] && ok || bad "exit(0) kernel under mpirun took $took s"
  grep -q "^FAIL quit0 .*exited with status 0 (it called exit) instead of returning" "$T/o" && ok || bad "quit0: $(cat "$T/o")"
  grep -q "^FAIL qquit .*exited with status 0 (it called exit) instead of returning" "$T/o" && ok || bad "qquit: $(cat "$T/o")"
  grep -q "^PASS honest " "$T/o" && ok || bad "honest: $(cat "$T/o")"
  [ -s "$T/exit.xml" ] && ok || bad "no JUnit after an exit(0) kernel under mpirun"
else
  bad "no C compiler (${CC:-cc}) to build the test plugin"
fi

echo "mpi agree: $pass passed, $fail failed"
[ $fail -eq 0 ]
