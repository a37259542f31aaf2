#!/bin/bash
# run.sh -- lowp run under mpirun -np 2 and -np 3 (label mpi): the output
# folder (results.json, CSVs, plots, summary.md, marker) byte-identical to the
# one-process run, for error-growth and matmul-precision (their work items
# are spread over the ranks) and formats and fp8-quantization (experiments
# that run whole on every rank); a bad parameter, a rank without the dataset and
# a bad output folder end the job with one message, exit 2, nothing published.
# Run: bash tests/mpi/mpi_run.sh path/to/lowp path/to/mpiexec   (skips: exit 77 without MPI)
set -u
LOWP=${1:?usage: run.sh path/to/lowp path/to/mpiexec}
MPIEXEC=${2:-none}
FAILS_OUT=bad
. "$(dirname "${BASH_SOURCE[0]}")/mpi_harness.bash"
# one thread per rank, as tests/mpi/mpi_gemm.sh: 3 oversubscribed ranks of 2 threads each crawl on 2 cores
# (the results do not depend on the thread count)
export OMP_NUM_THREADS=1

# same NAME ARGS...: one process, then -np 2 and -np 3, folders compared
same() {
  local name=$1; shift
  rm -rf "$T/one"
  "$LOWP" run "$name" "$@" --out "$T/one" >"$T/o1" 2>"$T/e1" ||
    { bad "$name: one process failed: $(cat "$T/e1")"; return; }
  for np in 2 3; do
    rm -rf "$T/many"
    if ! MPI -np $np "$LOWP" run "$name" "$@" --out "$T/many" >"$T/oN" 2>"$T/eN"; then
      bad "$name: -np $np failed: $(cat "$T/eN")"; continue
    fi
    if ! diff -r "$T/one" "$T/many" >"$T/d"; then bad "$name: -np $np: files differ: $(head -5 "$T/d")"; continue; fi
    # standard output once (rank 0), the same apart from the folder's name
    # and wall times ("in 3.5 s")
    if ! diff <(sed -e "s|$T/one|OUT|" -e 's/ in [0-9.]* s/ in T s/g' "$T/o1") \
              <(sed -e "s|$T/many|OUT|" -e 's/ in [0-9.]* s/ in T s/g' "$T/oN") >/dev/null; then
      bad "$name: -np $np: standard output differs"; continue
    fi
    ok
  done
}
# small settings (the full sizes would not change what is compared)
same error-growth --quick --nmax 4096 --kmax 256 --trials 3 --seed 5
same formats
same matmul-precision --quick
# fp8-quantization needs Fashion-MNIST (Debian dataset-fashion-mnist, as tests/cli/fp8q.sh)
FMNIST=/usr/share/datasets/fashion-mnist
if [ -r "$FMNIST/train-images-idx3-ubyte.gz" ]; then
  # every kind of row (main, layer, block, phase, a further seed's) on few images: each rank runs the
  # whole experiment, 6 runs here (2.5 s of CPU each with 16 images; 4.0 s with 40, 7.7 s with 200
  # calibration images, 200 bootstrap replicates, 300 layer images and --quick's three further seeds).
  # At --quick's sizes, every seed included: mpi_report_long (label long), the quick report under
  # -np 2 and 3
  same fp8-quantization --quick --test 16 --tc_test 8 --layer_test 8 --calib 16 --boot 16 \
    --seed_models=seeds/cnn_s20261123.safetensors
else
  echo "note: Fashion-MNIST not installed ($FMNIST): fp8-quantization not compared"
fi
ls "${TMPDIR:-/tmp}" | grep -q "^lowp-run-rank" && bad "a rank's scratch folder was left behind"

job; fails_bg "bad parameter" "trials" -np 3 "$LOWP" run error-growth --trials 0 --out "$J/bad"
job; fails_bg "unknown experiment" "unknown experiment" -np 2 "$LOWP" run nosuch --out "$J/bad"
# rank 1 finds no dataset while rank 0 goes on to the seeds: rank 1's message, no hang.
# The same command line on both (ranks must agree, par/par.h): each rank in its own
# folder, where fm is the dataset for rank 0 and an empty folder for rank 1
mkdir -p "$T/node0" "$T/node1/fm" && ln -s /usr/share/datasets/fashion-mnist "$T/node0/fm"
job; fails_bg "rank 1 without the dataset" "dataset-fashion-mnist" \
  -np 1 --wdir "$T/node0" "$LOWP" run fp8-quantization --quick --data fm --out "$J/bad" : \
  -np 1 --wdir "$T/node1" "$LOWP" run fp8-quantization --quick --data fm --out "$J/bad"
fails_wait
mkdir -p "$T/notlowp" && echo mine >"$T/notlowp/notes.txt"
fails "a folder lowp did not make (rank 0 checks it)" "notlowp" \
  -np 2 "$LOWP" run formats --out "$T/notlowp"
[ -f "$T/notlowp/notes.txt" ] && ok || bad "the user's folder was touched"

echo "mpi run: $pass passed, $fail failed"
[ $fail -eq 0 ]
