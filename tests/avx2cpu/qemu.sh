#!/usr/bin/env bash
# qemu.sh PROGRAM [ARGS...] -- run PROGRAM on a CPU that has AVX2, FMA and F16C and no AVX-512 (label avx2cpu)
#
# Most users' CPUs have AVX2 alone (issue 34); this machine and CI's may have AVX-512. LOWP_ISA=avx2 caps
# lowp's own choice of copy, but not CPUID as a program sees it (OpenBLAS's kernel choice, the tests' own
# feature tests), and an AVX-512 instruction that slipped out of its guard still runs. QEMU's user-mode
# emulator (Debian's qemu-user; TCG) runs the program on an emulated Haswell: AVX2, FMA, F16C, no AVX-512
# in its CPUID, and an AVX-512 instruction is an illegal instruction there (TCG emulates none of AVX-512).
# Its floating point is IEEE's (softfloat), so results can be compared bit for bit with a native run.
# The features TCG lacks are taken off the model (-pcid ...: otherwise a warning each on stderr).
#
# LOWP_THP=0: lowp's commands would otherwise start again with a malloc tunable (tools/thp.c), and that exec
# leaves the emulator: the new image would run natively. For the same reason `lowp report` (its experiments
# start /proc/self/exe) is not run through this.
#
# Exit: PROGRAM's status; 1 when qemu-x86_64 is missing or the emulated CPU is not what is wanted.
set -u
CPU="Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm"
if ! command -v qemu-x86_64 >/dev/null; then
  echo "avx2cpu: qemu-x86_64 not found (Debian: apt-get install qemu-user; tools/test.sh installs it in CI)" >&2
  exit 1
fi
[ "$(uname -m)" = x86_64 ] || { echo "avx2cpu: an x86-64 host is needed (here: $(uname -m))" >&2; exit 1; }
[ $# -ge 1 ] || { echo "usage: qemu.sh PROGRAM [ARGS...]" >&2; exit 2; }
export LOWP_THP=0
# the CPU as lowp sees it there, once per run: its fast-path copy must be avx2 (a QEMU that emulated
# AVX-512 one day, or a model with other features, would make this label test something else). The lowp
# asked is the one beside PROGRAM (the build folder's test programs and lowp itself)
LOWP_BIN=$(dirname "$1")/lowp
[ -x "$LOWP_BIN" ] || { echo "avx2cpu: no lowp beside $1 to ask what the emulated CPU is" >&2; exit 1; }
v=$(qemu-x86_64 -cpu "$CPU" "$LOWP_BIN" --version 2>&1) || { echo "avx2cpu: lowp --version failed there: $v" >&2; exit 1; }
case $v in
  *"fast paths on this CPU: avx2)"*) ;;
  *) echo "avx2cpu: the emulated CPU is not AVX2-only as lowp sees it: $v" >&2; exit 1 ;;
esac
exec qemu-x86_64 -cpu "$CPU" "$@"
