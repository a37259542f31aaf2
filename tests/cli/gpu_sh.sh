#!/usr/bin/env bash
# cli_gpu_sh -- tools/gpu.sh without a GPU says so, exits 0 and changes nothing; --help 0; bad usage 2.
# Run: bash tests/cli/gpu_sh.sh build/lowp   (the lowp argument is unused: gpu.sh builds its own)
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

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

echo "gpu_sh: $pass passed, $fail failed"
[ $fail -eq 0 ]
