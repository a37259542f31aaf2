#!/bin/bash
# startup.sh -- what every `lowp` start loads (issue 34): the test suite starts lowp thousands of
# times, and a third of its CPU was the kernel's and the loader's, mapping and relocating libraries
# that most runs never call. The lowp executable links no OpenBLAS: tools/blas_lazy.c opens it on the
# first call (a command that multiplies with it opens it and gets its answer; one that does not,
# never). It links no MPI: par/par.c opens lowp's MPI module
# (liblowp_mpi.so, beside lowp) only when a launcher's environment names a rank, and a module that
# cannot be loaded there ends lowp with exit 2 and one line (from the rank the launcher calls 0,
# nothing from the others), before any work. The cases under a launcher's environment here are
# fakes: the module fails to load before MPI is ever called.
# Run: bash tests/cli/startup.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
command -v ldd >/dev/null || skip "no ldd"

ldd "$LOWP" >"$T/ldd" 2>&1 || bad "ldd $LOWP failed: $(head -3 "$T/ldd")"
grep -q 'libc\.so' "$T/ldd" && ok || bad "ldd lists no libc: $(cat "$T/ldd")"
grep -q 'libmpi' "$T/ldd" && bad "lowp links MPI: $(grep libmpi "$T/ldd")" || ok
grep -q 'libopenblas' "$T/ldd" && bad "lowp links OpenBLAS: $(grep openblas "$T/ldd")" || ok

# the loader's list of the files it opens (LD_DEBUG=files): none is OpenBLAS for a light command, and
# an sgemm (lowp check on OpenBLAS's own) opens it, and passes
LD_DEBUG=files "$LOWP" formats >/dev/null 2>"$T/e" || bad "formats: $(grep -v 'file=\|^ *[0-9]*:' "$T/e" | head -3)"
grep -q 'file=[^ ]*openblas' "$T/e" && bad "formats opened OpenBLAS: $(grep -m1 'file=[^ ]*openblas' "$T/e")" || ok
grep -q 'file=[^ ]*libmpi' "$T/e" && bad "formats opened MPI" || ok
cat >"$T/sgemm.json" <<'EOF2'
{ "lowp_check": 1,
  "checks": [ { "name": "sgemm", "op": "gemm", "in": "fp32", "out": "fp32",
    "subject": { "kernel": "gemm_sgemm" }, "shape": { "m": 8, "n": 8, "k": 64 },
    "rules": [ { "rtol": 1e-4, "atol": 1e-4 } ] } ] }
EOF2
LD_DEBUG=files "$LOWP" check "$T/sgemm.json" >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 0 ] && grep -q '^1 of 1 checks passed' "$T/o" && ok || bad "check on gemm_sgemm: exit $rc: $(cat "$T/o")"
grep -q 'file=[^ ]*openblas.*dynamically loaded' "$T/e" && ok || bad "check on gemm_sgemm: OpenBLAS not opened"

# Which build: an MPI build puts its module beside lowp (CMakeLists.txt); a build without MPI refuses
# to run as several ranks (it would do the whole work once per rank), from rank 0 only
DIR=$(dirname "$LOWP")
if [ ! -e "$DIR/liblowp_mpi.so" ]; then
  expect_exit2 "no MPI in this build, 2 ranks" "started as 2 MPI ranks, but this lowp was built without MPI" \
    env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$LOWP" --help
  finish startup
fi

# a module that cannot be loaded: exit 2, one line from rank 0, nothing from rank 1
for env in PMI_RANK OMPI_COMM_WORLD_RANK PMIX_RANK; do
  expect_exit2 "$env=0, no module" "lowp: started by an MPI launcher, but lowp's MPI module cannot be loaded: $T/none.so" \
    env OMPI_COMM_WORLD_SIZE=2 "$env=0" LOWP_MPI_MODULE="$T/none.so" "$LOWP" --help
done
env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 LOWP_MPI_MODULE="$T/none.so" "$LOWP" --help >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && [ ! -s "$T/o" ] && [ ! -s "$T/e" ] && ok || bad "rank 1, no module: exit $rc, want 2 and silence: $(cat "$T/o" "$T/e")"

# without LOWP_MPI_MODULE, the module beside the running lowp comes first: a lowp copied into a
# folder with a broken one (not an ELF file, or a library without the module's entry) uses that
# one and refuses
mkdir -p "$T/bin" && cp "$LOWP" "$T/bin/lowp" || bad "cannot copy lowp"
: >"$T/bin/liblowp_mpi.so"
expect_exit2 "an empty module beside lowp" "MPI module cannot be loaded: $T/bin/liblowp_mpi.so" \
  env PMI_RANK=0 "$T/bin/lowp" --help
if [ -e "$DIR/plugins/example_kernels.so" ]; then
  cp "$DIR/plugins/example_kernels.so" "$T/bin/liblowp_mpi.so"
  expect_exit2 "a module without the entry" "MPI module cannot be loaded: .*lowp_par_mpi_ops" \
    env PMI_RANK=0 "$T/bin/lowp" --help
fi
# without a launcher's environment nothing is opened: the broken module is never looked at
"$T/bin/lowp" formats >/dev/null 2>"$T/e" && ok || bad "formats beside a broken module: $(cat "$T/e")"
finish startup
