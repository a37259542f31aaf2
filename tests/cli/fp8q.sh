#!/usr/bin/env bash
# cli_fp8q -- lowp run fp8-quantization: missing or damaged dataset -> exit 2; a small run is complete and thread-count independent.
# Run: bash tests/cli/fp8q.sh build/lowp
set -u
LOWP="$1"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
DATA=/usr/share/datasets/fashion-mnist

# expect_exit2 NAME PATTERN CMD...: exit 2, a message on stderr, nothing on stdout
# (late_exit2: the same, but the run header may already be on stdout: the
# data files are read, and found damaged, after the run has started)
expect_exit2() {
  local name="$1" pattern="$2"; shift 2
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2"; return; fi
  if [ -s "$T/out" ] && [ -z "${LATE:-}" ]; then bad "$name: printed on stdout"; return; fi
  grep -q -- "$pattern" "$T/err" || { bad "$name: stderr lacks '$pattern': $(cat "$T/err")"; return; }
  ok
}

# the dataset is missing: a clear message naming the package, exit 2, no folder left
expect_exit2 "missing dataset" "dataset-fashion-mnist" \
  "$LOWP" run fp8-quantization --quick --data="$T/nowhere" --out "$T/m"
ls -d "$T"/m* >/dev/null 2>&1 && bad "output left after a missing dataset" || ok
expect_exit2 "bad hidden" "bad value 'x' for hidden" "$LOWP" run fp8-quantization --quick --hidden=x --out "$T/b"
expect_exit2 "bad lr" "for lr" "$LOWP" run fp8-quantization --quick --lr=-1 --out "$T/b"

if [ ! -r "$DATA/train-images-idx3-ubyte.gz" ]; then
  echo "cli_fp8q: $pass passed, $fail failed (Fashion-MNIST not installed: runs skipped)"
  [ $fail -eq 0 ] || exit 1
  exit 77
fi

# a damaged file (gzip cut short): exit 2 naming the file, no folder left
mkdir -p "$T/cut"
cp "$DATA"/*.gz "$T/cut/"
head -c 100000 "$DATA/train-images-idx3-ubyte.gz" >"$T/cut/train-images-idx3-ubyte.gz"
LATE=1 expect_exit2 "truncated dataset" "train-images-idx3-ubyte.gz" \
  "$LOWP" run fp8-quantization --quick --data="$T/cut" --out "$T/c"
ls -d "$T"/c.* "$T"/c >/dev/null 2>&1 && bad "output left after a damaged dataset" || ok
# uncompressed files are read too (labels wrong length: a shape error)
mkdir -p "$T/raw"
for f in "$DATA"/*.gz; do gzip -dc "$f" >"$T/raw/$(basename "$f" .gz)"; done
head -c 1000 "$DATA/t10k-labels-idx1-ubyte.gz" | gzip -dc 2>/dev/null >"$T/raw/t10k-labels-idx1-ubyte"
LATE=1 expect_exit2 "short labels" "t10k-labels-idx1-ubyte" \
  "$LOWP" run fp8-quantization --quick --data="$T/raw" --out "$T/r"
ls -d "$T"/r.* "$T"/r >/dev/null 2>&1 && bad "output left after short labels" || ok

# a small run, with 1 and 2 threads: every file present, identical bytes
SMALL="--quick --train=500 --test=150 --calib=100 --seeds=2"
OMP_NUM_THREADS=1 "$LOWP" run fp8-quantization $SMALL --out "$T/t1" >"$T/log1" 2>&1 || bad "small run (1 thread) exit $?: $(tail -3 "$T/log1")"
OMP_NUM_THREADS=2 "$LOWP" run fp8-quantization $SMALL --out "$T/t2" >"$T/log2" 2>&1 || bad "small run (2 threads) exit $?"
for f in results.json summary.md configs.csv per_seed.csv layers.csv outliers.csv training.csv accuracy.png accuracy.svg layers.png logit_error.png; do
  [ -s "$T/t1/$f" ] && ok || bad "missing $f"
done
for f in results.json configs.csv per_seed.csv layers.csv outliers.csv training.csv summary.md; do
  cmp -s "$T/t1/$f" "$T/t2/$f" && ok || bad "$f differs between 1 and 2 threads"
done
grep -q '"answer"' "$T/t1/results.json" && grep -q '"verdicts"' "$T/t1/results.json" && ok || bad "answer/verdicts missing"
[ "$(wc -l <"$T/t1/configs.csv")" -eq 28 ] && ok || bad "configs.csv: want 23 configurations and 4 stress rows"
[ "$(wc -l <"$T/t1/layers.csv")" -eq 9 ] && ok || bad "layers.csv: want 4 layers x 2 formats"
[ "$(wc -l <"$T/t1/per_seed.csv")" -eq $((35 * 2 + 1)) ] && ok || bad "per_seed.csv: want 35 configurations x 2 seeds"
# the FP32 row is the reference: zero change, zero interval, zero logit error, 100% agreement
grep -q '^1,fp32,fp32,reference,fp32,main,[0-9.]*,0.0000,0.0000,100.0000,0,0,' "$T/t1/configs.csv" && ok || bad "fp32 row: $(sed -n 2p "$T/t1/configs.csv")"
# the two seeds trained different networks (the intervals come from somewhere)
[ "$(tail -n +2 "$T/t1/training.csv" | cut -d, -f1 | sort -u | wc -l)" -eq 2 ] &&
  [ "$(tail -n +2 "$T/t1/training.csv" | cut -d, -f3 | sort -u | wc -l)" -eq 2 ] && ok || bad "two seeds, two different training losses: $(cat "$T/t1/training.csv")"
# a re-parametrized plain cast is no better than the per-tensor row of the same function (RMS logit error)
awk -F, '$2 ~ /^e4m3 cast \(conv1/ {c = $11} $2 ~ /^e4m3 tensor \(conv1/ {t = $11} END {exit !(c > t)}' "$T/t1/configs.csv" && ok || bad "stress rows: cast not worse than per tensor"
# the same run again: the same bytes
"$LOWP" run fp8-quantization $SMALL --out "$T/t4" >/dev/null 2>&1 || bad "second run"
cmp -s "$T/t1/results.json" "$T/t4/results.json" && ok || bad "results.json differs between two identical runs"
# the data path also works uncompressed (good copies this time)
for f in "$DATA"/t10k-labels*.gz; do gzip -dc "$f" >"$T/raw/$(basename "$f" .gz)"; done
"$LOWP" run fp8-quantization $SMALL --data="$T/raw" --out "$T/t3" >/dev/null 2>&1 || bad "uncompressed data run"
cmp -s "$T/t1/configs.csv" "$T/t3/configs.csv" && ok || bad "uncompressed data gives different results"

echo "cli_fp8q: $pass passed, $fail failed"
[ $fail -eq 0 ]
