#!/usr/bin/env bash
# cli_gpu_sh -- tools/gpu.sh without a GPU says so, exits 0 and changes nothing; --help 0; bad usage 2;
# its dry run (every step's command line, commands stubbed) on a fake H100: the steps, the architecture
# from the compute capability, a failing step, a CUDA runtime that cannot use the GPU (loud, exit 1).
# Run: bash tests/cli/gpu_sh.sh build/lowp   (the lowp argument is unused: gpu.sh builds its own)
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

# everything gpu.sh could touch: the source tree's reports/ and build-gpu/,
# and a fake repository folder it is pointed at with --out
snapshot() {
  (cd "$SRC" && find reports build-gpu "$T/dest" 2>/dev/null -printf '%p %y %s %T@\n' | LC_ALL=C sort)
}
mkdir -p "$T/dest"

# 1. no nvidia-smi at all, and an nvidia-smi that lists no GPU (exit 0, no
#    "GPU n:" lines; and one that fails, as on a machine without a driver)
cat >"$T/smi-none" <<'EOF2'
#!/bin/sh
echo "No devices were found"
exit 0
EOF2
cat >"$T/smi-fail" <<'EOF2'
#!/bin/sh
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver" >&2
exit 9
EOF2
chmod +x "$T/smi-none" "$T/smi-fail"
for smi in "$T/nonexistent" "$T/smi-none" "$T/smi-fail"; do
  before=$(snapshot)
  LOWP_NVIDIA_SMI=$smi bash "$SRC/tools/gpu.sh" --out "$T/dest/report" >"$T/out" 2>"$T/err"
  rc=$?
  after=$(snapshot)
  [ $rc -eq 0 ] || { bad "$(basename "$smi"): exit $rc, want 0"; continue; }
  grep -q "no NVIDIA GPU" "$T/out" || { bad "$(basename "$smi"): stdout lacks 'no NVIDIA GPU': $(cat "$T/out")"; continue; }
  [ -s "$T/err" ] && { bad "$(basename "$smi"): stderr: $(cat "$T/err")"; continue; }
  [ "$before" = "$after" ] || { bad "$(basename "$smi"): files changed"; continue; }
  [ -e "$T/dest/report" ] && { bad "$(basename "$smi"): a report was written"; continue; }
  ok
done

# 2. --help exits 0 with the usage on stdout; bad usage exits 2 with one line
bash "$SRC/tools/gpu.sh" --help >"$T/out" 2>"$T/err"
if [ $? -eq 0 ] && grep -q "Usage: bash tools/gpu.sh" "$T/out" && [ ! -s "$T/err" ]; then ok
else bad "--help: $(cat "$T/err")"; fi
for args in "--bogus" "--jobs 0" "--jobs x" "--out"; do
  # shellcheck disable=SC2086
  LOWP_NVIDIA_SMI=$T/nonexistent bash "$SRC/tools/gpu.sh" $args >"$T/out" 2>"$T/err"
  rc=$?
  if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -s "$T/out" ]; then ok
  else bad "gpu.sh $args: exit $rc, stderr $(cat "$T/err"), stdout $(cat "$T/out")"; fi
done

# 3. the dry run on a machine whose nvidia-smi lists an H100 (compute capability CC)
fake_smi() { # fake_smi FILE CC
  cat >"$1" <<EOF2
#!/bin/sh
case "\$*" in
  -L) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  *query-gpu=name*) echo "NVIDIA H100 80GB HBM3" ;;
  *query-gpu=driver_version*) echo "580.65.06" ;;
  *query-gpu=compute_cap*) echo "$2" ;;
  *) exit 9 ;;
esac
EOF2
  chmod +x "$1"
}
fake_smi "$T/smi-h100" 9.0
fake_smi "$T/smi-nocc" ""
steps="install build-configure build sass device ctest-cuda gemm-models reveal-cublas probe probe-capture replay-capture probe-capture-chained replay-chained check-gpu-kernels amp-speedup"
# row STEP REPORT: the step's exit status in index.md (empty if absent)
row() { sed -n "s/^| $1 | .* | \([0-9a-z]*\) | [0-9]* s |\$/\1/p" "$2/index.md"; }
for how in env flag; do
  before=$(snapshot)
  rm -rf "$T/dest/dry"
  if [ $how = env ]; then
    LOWP_GPU_DRYRUN=1 LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" --out "$T/dest/dry" >"$T/out" 2>"$T/err"
  else
    LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" --dry-run --out "$T/dest/dry" >"$T/out" 2>"$T/err"
  fi
  rc=$?
  after=$(snapshot)
  bad_steps=""
  for s in $steps; do [ "$(row "$s" "$T/dest/dry")" = 0 ] || bad_steps="$bad_steps $s"; done
  if [ $rc -eq 0 ] && [ -z "$bad_steps" ] && grep -q "every step passed" "$T/out" &&
     grep -q -- '-DCMAKE_CUDA_ARCHITECTURES=90' "$T/dest/dry/build-configure.txt" &&
     ! grep -q native "$T/dest/dry/index.md" && grep -q '^dry-run: .*/lowp probe --device-info$' "$T/dest/dry/device.txt" &&
     grep -q 'LOWP_SETUP_BUILD=0 bash .*tools/setup.sh' "$T/dest/dry/install.txt" &&
     grep -q 'NVIDIA H100 80GB HBM3 (compute capability 9.0)' "$T/dest/dry/index.md" &&
     grep -q '^dry-run: env LOWP_SASS_ARCHS=90 .*/tsass$' "$T/dest/dry/sass.txt" &&
     grep -q '^dry-run: .*/lowp probe --in e4m3,e5m2 --out fp32 --k 1024 --rows 200 --capture ' "$T/dest/dry/probe-capture-chained.txt" &&
     grep -q '^dry-run: .*/lowp run tensor-core-models --vectors=.*capture-chained --czero= ' "$T/dest/dry/replay-chained.txt" &&
     [ "$(echo "$before" | grep -v "$T/dest")" = "$(echo "$after" | grep -v "$T/dest")" ]; then ok
  else bad "dry run ($how): exit $rc, steps not passed:$bad_steps; $(cat "$T/err" | tail -3)"; fi
done

# a step that fails: exit 1, the report says which, the later steps still ran
rm -rf "$T/dest/dry"
LOWP_GPU_DRYRUN=1 LOWP_GPU_DRYRUN_FAIL=probe LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" --out "$T/dest/dry" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && [ "$(row probe "$T/dest/dry")" = 1 ] && [ "$(row check-gpu-kernels "$T/dest/dry")" = 0 ] &&
  grep -q "a step FAILED" "$T/out" && ok || bad "failing probe: exit $rc, $(cat "$T/out")"

# the CUDA runtime cannot use the GPU nvidia-smi lists (an old driver): loud, exit 1, no GPU step
rm -rf "$T/dest/dry"
LOWP_GPU_DRYRUN=1 LOWP_GPU_DRYRUN_FAIL=device LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" --out "$T/dest/dry" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "the CUDA runtime of this build cannot use it" "$T/err" && grep -q "R580" "$T/err" &&
  [ "$(row device "$T/dest/dry")" = 1 ] && [ -z "$(row ctest-cuda "$T/dest/dry")" ] && [ -z "$(row probe "$T/dest/dry")" ] &&
  ok || bad "runtime cannot use the GPU: exit $rc, $(cat "$T/err")"

# no compute capability from nvidia-smi: lowp's default architectures (no -DCMAKE_CUDA_ARCHITECTURES)
rm -rf "$T/dest/dry"
LOWP_GPU_DRYRUN=1 LOWP_NVIDIA_SMI=$T/smi-nocc bash "$SRC/tools/gpu.sh" --out "$T/dest/dry" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && ! grep -q CMAKE_CUDA_ARCHITECTURES "$T/dest/dry/build-configure.txt" &&
  grep -q "no compute capability" "$T/err" && ok || bad "no compute capability: exit $rc"

# LOWP_DEPS: the carried folder replaces the installation; a wrong one is bad usage
mkdir -p "$T/deps/usr/include" "$T/deps/usr/lib/x86_64-linux-gnu"
rm -rf "$T/dest/dry"
LOWP_DEPS=$T/deps LOWP_GPU_DRYRUN=1 LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" --out "$T/dest/dry" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^| install | (not run) | missing | the libraries come from LOWP_DEPS' "$T/dest/dry/index.md" &&
  grep -q -- "-DCMAKE_PREFIX_PATH=$T/deps/usr" "$T/dest/dry/build-configure.txt" && ok || bad "LOWP_DEPS: exit $rc"
LOWP_DEPS=$T/nonexistent LOWP_GPU_DRYRUN=1 LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" --out "$T/dest/dry2" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/dest/dry2" ] && ok || bad "bad LOWP_DEPS: exit $rc $(cat "$T/err")"
for args in "--fetch-deps" "--fetch-deps="; do
  bash "$SRC/tools/gpu.sh" $args >"$T/out" 2>"$T/err"
  [ $? -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "gpu.sh $args: $(cat "$T/err")"
done
# --prebuilt DIR: no install, no build; DIR's programs run (its tsass, its lowp); a folder
# without lowp (outside a dry run) or none at all is bad usage
mkdir -p "$T/pre"
rm -rf "$T/dest/dry"
LOWP_GPU_DRYRUN=1 LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" --prebuilt "$T/pre" --out "$T/dest/dry" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^| install | (not run) | missing | prebuilt: ' "$T/dest/dry/index.md" &&
  grep -q '^| build | (not run) | missing | prebuilt: ' "$T/dest/dry/index.md" && [ ! -e "$T/dest/dry/build.txt" ] &&
  grep -q "^dry-run: env LOWP_SASS_ARCHS=90 $T/pre/tsass\$" "$T/dest/dry/sass.txt" &&
  grep -q "^dry-run: $T/pre/lowp probe --device-info\$" "$T/dest/dry/device.txt" &&
  [ "$(row check-gpu-kernels "$T/dest/dry")" = 0 ] && ok || bad "--prebuilt: exit $rc $(cat "$T/err" | tail -2)"
for args in "--prebuilt $T/nonexistent" "--prebuilt=" "--prebuilt $T/pre"; do
  # shellcheck disable=SC2086
  LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" $args --out "$T/dest/dry3" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/dest/dry3" ] && ok || bad "gpu.sh $args: exit $rc $(cat "$T/err")"
done

# --time-limit S: a step that hangs is stopped when the S seconds are spent (exit status 124),
# the steps after it are recorded as not run, and the report is still published (exit 1)
rm -rf "$T/dest/dry"
LOWP_GPU_DRYRUN=1 LOWP_GPU_DRYRUN_HANG=probe LOWP_NVIDIA_SMI=$T/smi-h100 \
  bash "$SRC/tools/gpu.sh" --time-limit 3 --out "$T/dest/dry" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && [ "$(row probe "$T/dest/dry")" = 124 ] && [ "$(row reveal-cublas "$T/dest/dry")" = 0 ] &&
  grep -q '^| check-gpu-kernels | .* | not run | --time-limit 3 s spent |$' "$T/dest/dry/index.md" &&
  grep -q 'time-limit 3 s spent' "$T/dest/dry/probe.txt" && grep -q "a step FAILED" "$T/out" &&
  ok || bad "--time-limit: exit $rc, probe $(row probe "$T/dest/dry"), $(cat "$T/out")"
# --ctest-exclude RE: ctest -E RE in the ctest-cuda step
rm -rf "$T/dest/dry"
LOWP_GPU_DRYRUN=1 LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" --ctest-exclude 'tcvt_gpu|tamp_gpu' --out "$T/dest/dry" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && grep -q "^dry-run: ctest --test-dir .* -L cuda -E tcvt_gpu|tamp_gpu --output-on-failure -V\$" "$T/dest/dry/ctest-cuda.txt" &&
  ok || bad "--ctest-exclude: exit $rc $(cat "$T/dest/dry/ctest-cuda.txt" 2>/dev/null)"
for args in "--time-limit 0" "--time-limit x" "--time-limit" "--ctest-exclude" "--ctest-exclude="; do
  # shellcheck disable=SC2086
  LOWP_NVIDIA_SMI=$T/smi-h100 bash "$SRC/tools/gpu.sh" $args >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "gpu.sh $args: exit $rc $(cat "$T/err")"
done

LOWP_GPU_DRYRUN=yes bash "$SRC/tools/gpu.sh" >"$T/out" 2>"$T/err"
[ $? -eq 2 ] && ok || bad "LOWP_GPU_DRYRUN=yes accepted"

echo "gpu_sh: $pass passed, $fail failed"
[ $fail -eq 0 ]
