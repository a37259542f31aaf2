#!/usr/bin/env bash
# cli_fp8q -- lowp run fp8-quantization: bad input -> exit 2 and no output; a --quick evaluation of the
# shipped models is complete, thread-count independent, and its statistics are recomputed by numpy from
# its per-image rows; the training command is deterministic.
# Run: bash tests/cli/fp8q.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
DATA=/usr/share/datasets/fashion-mnist
MODELS="$(cd "$(dirname "$0")/../.." && pwd)/models"

# expect_exit2 NAME PATTERN CMD...: exit 2, a message on stderr, nothing on stdout
# (LATE=1: the run header may already be on stdout: the file is read, and found
# damaged, after the run has started)
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
expect_exit2 "bad lr" "for cnn_lr" "$LOWP" run fp8-quantization --quick --cnn_lr=-1 --out "$T/b"
expect_exit2 "bad train" "for train" "$LOWP" run fp8-quantization --quick --train=resnet --out "$T/b"
expect_exit2 "bad vit shape" "for vit_shape" "$LOWP" run fp8-quantization --quick --vit_shape=7,48,5,96,2 --out "$T/b"

if [ ! -r "$DATA/train-images-idx3-ubyte.gz" ]; then
  echo "cli_fp8q: $pass passed, $fail failed (Fashion-MNIST not installed: runs skipped)"
  [ $fail -eq 0 ] || exit 1
  exit 77
fi
# the shipped models are missing or damaged: exit 2 naming the file, no folder left
expect_exit2 "missing models" "cnn.safetensors" "$LOWP" run fp8-quantization --quick --models="$T/nomodels" --out "$T/n"
ls -d "$T"/n* >/dev/null 2>&1 && bad "output left after missing models" || ok
mkdir -p "$T/badm" && cp "$MODELS"/*.safetensors "$T/badm/"
head -c 5000 "$MODELS/vit.safetensors" >"$T/badm/vit.safetensors"
LATE=1 expect_exit2 "truncated model" "vit.safetensors" "$LOWP" run fp8-quantization --quick --models="$T/badm" --seed_models=none --out "$T/d"
ls -d "$T"/d.* "$T"/d >/dev/null 2>&1 && bad "output left after a damaged model" || ok
# a damaged further seed's model: exit 2 naming the file, no folder left
mkdir -p "$T/bads" && cp "$MODELS"/*.safetensors "$T/bads/"
head -c 3000 "$MODELS/cnn.safetensors" >"$T/bads/cnn_cut.safetensors"
LATE=1 expect_exit2 "truncated seed model" "cnn_cut.safetensors" "$LOWP" run fp8-quantization --quick --models="$T/bads" \
  --seed_models=cnn_cut.safetensors --out "$T/e"
ls -d "$T"/e.* "$T"/e >/dev/null 2>&1 && bad "output left after a damaged seed model" || ok

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

# a --quick evaluation of the shipped models (N images, NT on the tensor-core model, below), 1 and 2 threads
# (the second from uncompressed files);
# block-scaled rows: mxfp8_e4m3 with the OCP floor rule (lowp_bs_quantize), which must equal the "e4m3 mx"
# row (kernels/cpu/qdq's MX path) image by image; rceil; fp4 with E8M0 and NVFP4's two-level rule;
# --quick evaluates the per-tensor rows at 4 scale phases
BSF="--block_formats=mxfp8_e4m3,mxfp8_e5m2:rceil,mxfp4,nvfp4"
# further training seeds: a copy of the shipped CNN under a seed's name (its rows must equal the shipped
# network's) and a real further seed; the models folder is a copy holding both
mkdir -p "$T/mdir/seeds"
cp "$MODELS"/*.safetensors "$MODELS"/*_predictions.txt "$T/mdir/"
cp "$MODELS"/seeds/cnn_s20261123.safetensors "$T/mdir/seeds/"
cp "$MODELS/cnn.safetensors" "$T/mdir/cnn_same.safetensors"
BSF="$BSF --models=$T/mdir --seed_models=cnn_same.safetensors,seeds/cnn_s20261123.safetensors"
# the default labels and the sanitizers: 50 images, 30 on the tensor-core model and 30 for the per-layer
# rows (24 of the 80 configurations), 50 for calibration and the bootstrap (the two runs 4.6 s and 10.8 s of
# CPU at 30 and 100 images on the loaded machine): every configuration, scale phase, seed and block row is still
# evaluated (the same code paths, files and row counts as functions of N), and the orderings asserted
# below (KL e5m2 > e4m3 > bf16, nvfp4 > mxfp8_e4m3, phases that move) hold on these 50 images too.
# LOWP_FP8Q_FULL=1 (cli_fp8q_full, label long): 200 images, 100 on the tensor-core model, 200 per layer,
# --quick's calibration and bootstrap
if [ -n "${LOWP_FP8Q_FULL:-}" ] && [ -z "${LOWP_TEST_SANITIZED:-}" ]; then
  N=200 NT=100 LT=200 EVAL="--test=$N --layer_test=$LT $BSF"
else
  N=50 NT=30 LT=30
  EVAL="--test=$N --tc_test=$NT --layer_test=$LT --calib=50 --boot=50 $BSF"
fi
# the second run reads the uncompressed copies (good labels this time): one run checks both that
# the thread count and that the data's compression leave every output as it was (--data names
# the same link in both, so that the parameter recorded in results.json is the same too)
for f in "$DATA"/t10k-labels*.gz; do gzip -dc "$f" >"$T/raw/$(basename "$f" .gz)"; done
ln -s "$DATA" "$T/data"
OMP_NUM_THREADS=1 "$LOWP" run fp8-quantization --quick $EVAL --data="$T/data" --out "$T/t1" >"$T/log1" 2>&1 ||
  bad "quick run (1 thread) exit $?: $(tail -3 "$T/log1")"
rm "$T/data" && ln -s "$T/raw" "$T/data"
OMP_NUM_THREADS=2 "$LOWP" run fp8-quantization --quick $EVAL --data="$T/data" --out "$T/t2" >"$T/log2" 2>&1 ||
  bad "quick run (2 threads, uncompressed data) exit $?"
FILES="results.json summary.md configs.csv outliers.csv outlier_channels.csv per_image.csv.gz per_phase.csv.gz plot_configs.csv plot_layers.csv seeds.csv"
for f in $FILES; do [ -s "$T/t1/$f" ] && ok || bad "missing $f"; done
for f in $FILES; do
  cmp -s "$T/t1/$f" "$T/t2/$f" && ok || bad "$f differs between 1 thread (gzip data) and 2 (uncompressed)"
done
for p in accuracy kl disagreement layers; do [ -s "$T/t1/$p.png" ] && grep -q "\"$p.png\"" "$T/t1/results.json" && ok || bad "plot $p missing"; done
# the accuracy plot draws one bar per plotted row and network but FP32's: 10 main, e2m1 and 4 block rows, 2 phase
# rows (their range over the phases, blue), 6 tensor-core rows: 2 x 23 bars, 4 of them blue; and the phase medians
[ "$(grep -c 'heads size' "$T/t1/accuracy.gp")" -eq 46 ] && ok || bad "accuracy.gp: $(grep -c 'heads size' "$T/t1/accuracy.gp") error bars"
[ "$(grep -c 'heads size.*#1f77b4' "$T/t1/accuracy.gp")" -eq 4 ] && ok || bad "accuracy.gp: phase range bars"
grep -q '"ViT: median over the scale phases"' "$T/t1/accuracy.gp" && [ "$(grep -c ',phase range$' "$T/t1/plot_configs.csv")" -eq 4 ] &&
  ok || bad "accuracy.gp/plot_configs.csv: no phase medians"
# a phase row's point is the median of its phases' changes in configs.csv and its bar their range (phase 0: the plain row)
awk -F, 'FNR == NR { if ($7 == "phase" || $3 == "e4m3 tensor" || $3 == "e5m2 tensor") { split($3, w, " "); v[$1 "," w[1]] = v[$1 "," w[1]] " " $10 } next }
  $11 == "phase range" { split($3, w, " "); n = split(v[$1 "," w[1]], a, " ");
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2;
    if (n != 4 || $4 - med > 0.006 || med - $4 > 0.006 || $5 - a[1] > 0.006 || a[1] - $5 > 0.006 || $6 - a[n] > 0.006 ||
        a[n] - $6 > 0.006) bad++; m++ }
  END { exit bad || m != 4 }' "$T/t1/configs.csv" "$T/t1/plot_configs.csv" && ok || bad "plot_configs.csv phase rows do not match configs.csv"
grep -q '"answer"' "$T/t1/results.json" && grep -q '"verdicts"' "$T/t1/results.json" && ok || bad "answer/verdicts missing"
grep -q 'arXiv:2208.07339' "$T/t1/results.json" && ok || bad "the answer does not cite LLM.int8()"
# the experiment's own expectations are verdicts too (met or not), and so is the agreement of the bootstrap
# interval with McNemar's test; a "not significant" accuracy wording says which way the estimates point
[ "$(grep -c '"source":[[:space:]]*"this experiment.s expectation"' "$T/t1/results.json")" -eq 2 ] && ok ||
  bad "the experiment's expectations are not verdicts"
grep -q '"claim":[[:space:]]*"The bootstrap 95% interval and McNemar' "$T/t1/results.json" && ok ||
  bad "no verdict on interval and test agreeing"
grep -q 'the accuracy gain is not significant' "$T/t1/results.json" && bad "'gain not significant' wording" || ok
# 11 main + 6 tensor-core rows per network, 2 formats x (4 CNN layers, 8 ViT site groups) per-layer rows,
# e2m1 per tensor and 4 block-scaled rows, 2 formats x 3 further scale phases
[ "$(wc -l <"$T/t1/configs.csv")" -eq $((1 + 2 * 17 + 2 * 4 + 2 * 8 + 2 * (1 + 4 + 6))) ] && ok ||
  bad "configs.csv: $(wc -l <"$T/t1/configs.csv") lines"
# one row per image and configuration: N images (NT for the 6 tensor-core rows of each network, LT for the
# per-layer rows: 8 of the CNN, 16 of the ViT), but the further scale phases: per_phase.csv.gz, one row per
# network, format and image, the 4 phases' predictions in one string
[ "$(gzip -dc "$T/t1/per_image.csv.gz" | wc -l)" -eq $((1 + N * (11 + 5) + LT * 8 + NT * 6 + N * (11 + 5) + LT * 16 + NT * 6)) ] &&
  ok || bad "per_image.csv.gz: $(gzip -dc "$T/t1/per_image.csv.gz" | wc -l) lines"
[ "$(gzip -dc "$T/t1/per_phase.csv.gz" | wc -l)" -eq $((1 + 2 * 2 * N)) ] &&
  gzip -dc "$T/t1/per_phase.csv.gz" | head -1 | grep -qx 'model,format,image,label,pred_by_phase,kl_phase1,kl_phase2,kl_phase3' &&
  ok || bad "per_phase.csv.gz: $(gzip -dc "$T/t1/per_phase.csv.gz" | wc -l) lines, header $(gzip -dc "$T/t1/per_phase.csv.gz" | head -1)"
# its phase 0 is the plain per-tensor row of per_image.csv.gz, image by image
gzip -dc "$T/t1/per_image.csv.gz" | awk -F, 'FNR == NR { if ($3 == "e4m3 tensor" || $3 == "e5m2 tensor") p[$1 "," substr($3, 1, 4) "," $4] = $6; next }
  FNR > 1 { n++; if (p[$1 "," $2 "," $3] != substr($5, 1, 1)) bad++ } END { exit bad || n == 0 }' - <(gzip -dc "$T/t1/per_phase.csv.gz") &&
  ok || bad "per_phase.csv.gz's phase 0 differs from the per-tensor rows"
# two quantizers of OCP MX e4m3 (lowp_bs_quantize's floor rule, qdq's MX blocks) give the same network outputs:
# the same prediction and KL on every image, in both networks
gzip -dc "$T/t1/per_image.csv.gz" | awk -F, '$3 == "e4m3 mx" {a[$1 "," $4] = $6 "," $8; n++}
  $3 == "mxfp8_e4m3" {b[$1 "," $4] = $6 "," $8; m++}
  END {if (n == 0 || n != m) exit 1; for (k in a) if (a[k] != b[k]) exit 1}' && ok ||
  bad "mxfp8_e4m3 (lowp_bs_quantize) and e4m3 mx (qdq) differ"
# the block rows and the phase rows are what they say; nvfp4 (4 bits) moves the CNN's softmax more than
# mxfp8_e4m3 (8 bits), and the phase rows of a format differ from its phase-0 row somewhere
grep -q '^cnn,[0-9]*,nvfp4,nvfp4,block,fp32,main,' "$T/t1/configs.csv" && ok || bad "no nvfp4 row"
[ "$(grep -c '^[a-z]*,[0-9]*,e[45]m[32] tensor x2^(-[123]/4),e[45]m[32],tensor,fp32,phase,'"$N"',' "$T/t1/configs.csv")" -eq 12 ] &&
  ok || bad "phase rows: $(grep -c ',phase,' "$T/t1/configs.csv")"
awk -F, '$1 == "cnn" && $3 == "nvfp4" {a = $17} $1 == "cnn" && $3 == "mxfp8_e4m3" {b = $17} END {exit !(a > b)}' \
  "$T/t1/configs.csv" && ok || bad "nvfp4's KL not above mxfp8_e4m3's"
awk -F, '$3 == "e5m2 tensor" {k[$1] = $17} $3 ~ /^e5m2 tensor x2/ && $17 != k[$1] {d++} END {exit !(d > 0)}' \
  "$T/t1/configs.csv" && ok || bad "the scale phases change nothing"
# seeds.csv: the copy of the shipped CNN gives the shipped rows exactly; the further seed has its own FP32
# accuracy; the ViT (no further seed given) is said to come from one seed
awk -F, '$2 == "shipped" && $1 == "cnn" {a[$4] = $0; sub(/^[^,]*,[^,]*,/, "", a[$4]); n++}
  $2 == "cnn_same.safetensors" {b = $0; sub(/^[^,]*,[^,]*,/, "", b); if (a[$4] != b) d++; m++}
  END {exit !(n > 5 && n == m && d == 0)}' "$T/t1/seeds.csv" && ok || bad "seeds.csv: the shipped CNN's copy differs"
[ "$(grep -c '^cnn,seeds/cnn_s20261123.safetensors,' "$T/t1/seeds.csv")" -ge 6 ] && ok || bad "no further seed's rows"
grep -q "The ViT's rows come from one training seed" "$T/t1/summary.md" && grep -q 'Over 3 training seeds of the CNN' \
  "$T/t1/summary.md" && ok || bad "the answer does not state the seeds"
grep -q 'Per-tensor rows over 4 scale phases' "$T/t1/summary.md" && grep -q 'median over 16 phase pairs' "$T/t1/summary.md" &&
  grep -q 'What the blocks buy over per-tensor scaling' "$T/t1/results.json" && ok || bad "phase table or block answer missing"
# the FP32 rows are the reference: zero change, 100% agreement, zero KL
[ "$(grep -c '^[a-z]*,0,fp32,fp32,reference,fp32,main,'"$N"',[0-9.]*,0.00,0.00,0.00,1,0,0,100.00,0,0,' "$T/t1/configs.csv")" -eq 2 ] && ok ||
  bad "fp32 rows: $(grep ',0,fp32,' "$T/t1/configs.csv")"
# e5m2 (2 significand bits) moves the softmax more than e4m3 (3) and than bf16 (7) in both networks
awk -F, '$3 == "e4m3 tensor" {e4[$1] = $17} $3 == "e5m2 tensor" {e5[$1] = $17} $3 == "bf16" {b[$1] = $17}
  END {exit !(e5["cnn"] > e4["cnn"] && e4["cnn"] > b["cnn"] && e5["vit"] > e4["vit"] && e4["vit"] > b["vit"])}' \
  "$T/t1/configs.csv" && ok || bad "KL not ordered e5m2 > e4m3 > bf16"
# the statistics, recomputed by numpy from the per-image rows; lowp's FP32 predictions = numpy's
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 "$(dirname "$0")/../numpy/fp8q_eval.py" --run "$T/t1" --n $N >"$T/py" 2>&1 && ok ||
    bad "numpy recomputation: $(cat "$T/py")"
fi
# the data path also works uncompressed: run t2 read the uncompressed copies
cmp -s "$T/t1/configs.csv" "$T/t2/configs.csv" && ok || bad "uncompressed data gives different results"

# training: the same command with 1 and 2 threads gives the same weights and curve (small runs of
# both networks; the ViT at the shipped shape, the defaults)
TR="--quick --train=cnn --train_images=256 --cnn_epochs=2 --warmup=4 --batch=32"
OMP_NUM_THREADS=1 "$LOWP" run fp8-quantization $TR --out "$T/a1" >/dev/null 2>&1 || bad "training run"
OMP_NUM_THREADS=2 "$LOWP" run fp8-quantization $TR --out "$T/a2" >/dev/null 2>&1 || bad "training run again"
for f in cnn.safetensors cnn_training.csv; do
  [ -s "$T/a1/$f" ] && cmp -s "$T/a1/$f" "$T/a2/$f" && ok || bad "training: $f missing or not reproduced"
done
[ "$(wc -l <"$T/a1/cnn_training.csv")" -eq 3 ] && ok || bad "training curve: $(cat "$T/a1/cnn_training.csv")"
TV="--quick --train=vit --train_images=128 --vit_epochs=1 --warmup=2 --batch=32 --test=100"
OMP_NUM_THREADS=1 "$LOWP" run fp8-quantization $TV --out "$T/v1" >/dev/null 2>&1 || bad "vit training run"
OMP_NUM_THREADS=2 "$LOWP" run fp8-quantization $TV --out "$T/v2" >/dev/null 2>&1 || bad "vit training run, 2 threads"
for f in vit.safetensors vit_training.csv; do
  [ -s "$T/v1/$f" ] && cmp -s "$T/v1/$f" "$T/v2/$f" && ok || bad "vit training: $f missing or differs between 1 and 2 threads"
done

echo "cli_fp8q: $pass passed, $fail failed"
[ $fail -eq 0 ]
