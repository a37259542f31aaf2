#!/usr/bin/env bash
# rss.sh -- light commands stay light: peak resident size under 32 MB (issue 34); the exact GEMM's
# check holds no array beyond its own (below)
#
# `lowp formats` printing a table kept 225 MB resident while cuBLAS and
# cuBLASLt were linked (mapped and relocated at every start; now opened on
# first use, kernels/cuda/cublas_lazy.h). Each command below must exit 0
# with a peak under LIMIT_KB, read by GNU time (/usr/bin/time -f %M, the
# "Maximum resident set size" of -v; tools/test.sh installs it), else by a
# python3 parent from os.wait4 (an upper bound: the child's peak before its
# exec, python's own, counts too). A sanitizer build keeps shadow memory,
# so the limit is not checked there.
#
# Run: bash tests/cli/rss.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
[ "${LOWP_TEST_SANITIZED:-0}" = 1 ] && skip "sanitizer build: ASan's shadow memory counts as resident"
[ -x /usr/bin/time ] || command -v python3 >/dev/null || skip "neither /usr/bin/time nor python3"
LIMIT_KB=32768
# one command line a line (shell words, run in $T)
CMDS=$(cat <<'EOF2'
--help
formats
formats --json
formats fp16
list
convert 0.1 --to fp16,bf16,e4m3
convert 1.5 2.5 -3 --to e5m2 --round rtz --json
tol gemm --k 4096 --input bf16 --acc fp32 --out bf16
gemm --help
check --help
EOF2
)
cd "$T" || exit 1
# peak ARGS...: "EXIT PEAK_KB" of lowp ARGS (shell words)
peak() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%x %M' -o "$T/.rss" "$LOWP" "$@" >/dev/null 2>"$T/.err"
    cat "$T/.rss"
  else
    python3 - "$LOWP" "$@" 2>"$T/.err" <<'PY'
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), ru.ru_maxrss)  # ru_maxrss: KB on Linux
PY
  fi
}
while IFS= read -r line; do
  [ -z "$line" ] && continue
  # shellcheck disable=SC2086
  out=$(peak $line)
  rc=${out%% *} kb=${out##* }
  if [ "$rc" != 0 ]; then bad "lowp $line: exit $rc ($(head -c 300 "$T/.err"))"
  elif [ "$kb" -ge "$LIMIT_KB" ]; then bad "lowp $line: peak resident $kb KB, limit $LIMIT_KB KB"
  else ok; echo "lowp $line: $kb KB"; fi
done <<<"$CMDS"

# The exact GEMM's check holds A and B, its four m x n outputs (computed, exact, exact rounded, |A||B|)
# and one tile's working set (README "Memory"); a temporary the size of the outputs more (two of them
# in lib/check/pipeline.c's output roundings, 2026-12-02) put `lowp gemm` at n = 4096 over issue 34's
# 3x its three arrays. Held here where it is cheap, m = n = 2048 and k = 64 (1.4 s of CPU): the peak
# over a 64 x 64 x 64 run's (lowp, its libraries, OpenBLAS) within A, B and five m x n binary64 arrays
# (4.6 measured on the Zen 5: one array more fails). LOWP_THP=0: transparent huge pages fill 2 MB at a
# time and the kernel collapses pages in the background, which moves the peak by tens of MB.
# OMP_NUM_THREADS=2: OpenBLAS runs as many threads as OpenMP (lib/exact/ozaki.c), each with its own
# packing buffers, so a many-core machine would add its cores' buffers to the peak.
base=$(OMP_NUM_THREADS=2 LOWP_THP=0 peak gemm --m 64 --n 64 --k 64)
big=$(OMP_NUM_THREADS=2 LOWP_THP=0 peak gemm --m 2048 --n 2048 --k 64)
if [ "${base%% *}" != 0 ] || [ "${big%% *}" != 0 ]; then
  bad "lowp gemm: exit ${base%% *} / ${big%% *} ($(head -c 300 "$T/.err"))"
else
  lim=$(( ${base##* } + (8 * (2048 * 64 * 2 + 5 * 2048 * 2048)) / 1024 ))
  [ "${big##* }" -le "$lim" ] && ok || bad "lowp gemm --m 2048 --n 2048 --k 64: peak ${big##* } KB over $lim KB"
  echo "lowp gemm --m 2048 --n 2048 --k 64: ${big##* } KB (limit $lim KB; 64 x 64 x 64: ${base##* } KB)"
fi
finish rss
