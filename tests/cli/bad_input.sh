#!/usr/bin/env bash
# bad_input.sh -- bad command lines of every command: exit 2, one line on stderr, nothing else
#
# The contract (README "Exit status"; issue 14): bad usage or bad input gets
# exit status 2 and ONE line on stderr, prints no results on stdout, and
# creates or changes no file. Each case below is one command line, run in a
# scratch folder that holds fixtures (corrupt vectors, bad state files, a
# user's file); the folder is snapshotted (names, types, modes, sizes, mtimes,
# status-change times, inodes) before and after every case. The table keeps growing: add a line
# for every bad input found. Then every command's --help must exit 0 with
# its text on stdout and nothing on stderr.
#
# Run: bash tests/cli/bad_input.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
W=$T
S=$W/scratch # the folder the cases run in; nothing in it may change
mkdir -p "$S"

# ------------------------------------------------------------------ fixtures
echo "a user's notes" >"$S/notes.txt"
mkdir -p "$S/userdir" && echo keep >"$S/userdir/file"
# tensor-core vectors: a good copy of one GPU, and corrupt ones
V=$SRC/tests/data/tensor-core-vectors/V100
mkdir -p "$S/vec_ok"
cp -r "$V" "$S/vec_ok/V100"
mk_vec() { rm -rf "$S/$1"; mkdir -p "$S/$1"; cp -r "$V" "$S/$1/V100"; }
F=$(ls "$V" | head -n 1) # a format folder, e.g. fp16
A=$(ls "$V/$F"/a_* | head -n 1 | xargs basename)
D=$(ls "$V/$F"/d_* | head -n 1 | xargs basename)
mk_vec vec_nonhex && sed -i '1s/^./z/' "$S/vec_nonhex/V100/$F/$A"
mk_vec vec_trunc && sed -i '$d' "$S/vec_trunc/V100/$F/$D"
mk_vec vec_nul && printf '3f800000\0003f800000\n' >>"$S/vec_nul/V100/$F/$A"
mk_vec vec_empty && : >"$S/vec_empty/V100/$F/$A"
mk_vec vec_noa && rm "$S/vec_noa/V100/$F/$A"
mk_vec vec_bin && sed -i '1s/^./2/' "$S/vec_bin/V100/$F/$D"
mk_vec vec_long && sed -i '1s/ .*//; 1s/$/ 1234567890/' "$S/vec_long/V100/$F/$A"
mkdir -p "$S/vec_none"
# report folders for --diff: a good one (index.html, one experiment) and one whose results.json is cut short
mkdir -p "$S/rep_ok/formats" "$S/rep_broken/formats"
echo '<html></html>' >"$S/rep_ok/index.html" && cp "$S/rep_ok/index.html" "$S/rep_broken/index.html"
echo '{"header": {"experiment": "formats"}}' >"$S/rep_ok/formats/results.json"
echo '{"header": ' >"$S/rep_broken/formats/results.json"
# scaler states
GOOD='{"scale": 65536, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 2000, "_growth_tracker": 0}'
echo "$GOOD" >"$S/good.json"
echo '{"scale": 1, "scale": 2, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 2000, "_growth_tracker": 0}' >"$S/dup.json"
{ echo "$GOOD"; echo garbage; } >"$S/trail.json"
{ echo "$GOOD"; echo "$GOOD"; } >"$S/twice.json"
printf '{"scale": 2\000, "growth_factor": 2}' >"$S/nul.json"
echo 'not json' >"$S/notjson.json"
# numbers JSON does not allow, which cJSON reads (065536 as 65536, 65536. as 65536)
echo "${GOOD/65536/065536}" >"$S/lead0.json"
echo "${GOOD/65536/65536.}" >"$S/point.json"
echo '[1, 2]' >"$S/array.json"
echo '{"scale": 65536, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 2000, "_growth_tracker": 0, "stpes": 3}' >"$S/unknown.json"
echo '{"scale": -1, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 2000, "_growth_tracker": 0}' >"$S/negscale.json"
echo '{"scale": 1, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 1e20, "_growth_tracker": 0}' >"$S/bigint.json"
echo '{"growth_factor": 2, "backoff_factor": 0.5, "growth_interval": 2000, "_growth_tracker": 0}' >"$S/noscale.json"
: >"$S/empty.json"
# .npy inputs
echo 'not an npy file' >"$S/text.npy"
: >"$S/empty.npy"
printf '\223NUMPY\001\000v\000{' >"$S/cut.npy"
# an fp64 .npy (1 x 1) holding 0.1, not an fp16 value
{ printf '\223NUMPY\001\000v\000'; printf "%-117s\n" "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }"
  printf '\232\231\231\231\231\231\271\077'; } >"$S/tenth.npy"
# a claims file that is not JSON
echo '{ "claims": [' >"$S/claims_cut.json"
# a Fashion-MNIST folder without its files, and ones with bad IDX files
mkdir -p "$S/nomnist" "$S/mnist_lie" "$S/mnist_trunc" "$S/mnist_gz"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  printf '\0\0\10\1\377\377\377\377' >"$S/mnist_lie/$f"      # claims 4 GiB in 8 bytes
  printf '\0\0\10\3\0\0\0\1\0\0\0\34\0\0\0\34\1\2' >"$S/mnist_trunc/$f"
  printf '\37\213garbage' >"$S/mnist_gz/$f.gz"                   # gzip magic, then nonsense
done
# a check of a GPU registry kernel with an unknown device (kernels/gpu/gpu_kernels.h)
echo '{ "lowp_check": 1, "defaults": { "in": "fp16", "out": "fp32" }, "checks": [ { "name": "x", "op": "sum", "subject": { "kernel": "sum_tree", "params": "device=quantum" }, "shape": { "m": 2, "n": 8 }, "rules": [ { "max_ulp": 1 } ] } ] }' >"$S/gpu_device.json"
# issue 32: "convert" declarations that cannot hold (an unknown input, a stochastic rounding,
# "revealed" on an operation lowp cannot reveal)
CV='"op": "gemm", "in": "fp32", "out": "fp32", "subject": { "kernel": "gemm_acc", "params": "acc=fp32" }, "shape": { "m": 2, "n": 2, "k": 8 }, "rules": [ { "max_ulp": 64 } ]'
printf '{ "lowp_check": 1, "checks": [ { "name": "x", %s, "convert": { "C": "fp16" } } ] }' "$CV" >"$S/conv_input.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "x", %s } ] }' "${CV/\"max_ulp\": 64/\"max_ulp\": 064}" >"$S/spec_lead0.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "x", %s } ] }' "${CV/\"max_ulp\": 64/\"max_ulp\": 64.}" >"$S/spec_point.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "x", %s, "convert": { "B": { "format": "fp16", "rnd": "sr" } } } ] }' "$CV" >"$S/conv_sr.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "x", "op": "softmax", "in": "fp32", "out": "fp32", "subject": { "kernel": "softmax_naive" }, "shape": { "m": 2, "n": 8 }, "convert": "revealed", "rules": [ { "max_ulp": 64 } ] } ] }' >"$S/conv_softmax.json"
# reveal files whose classes do not give each output exactly one class: one position of four, none, one twice
# (a twin looked up the class of an output in none: SIGSEGV, SIGFPE)
"$LOWP" reveal --kernel gemm_acc --params acc=fp32 --shape 2,2,8 --validate 10 --save "$S/rv.json" >/dev/null 2>&1 ||
  bad "reveal for the fixtures"
for v in "one 0" "none " "twice 0, 1, 1, 3"; do
  sed -E "s/(\"positions\":[[:space:]]*)\[[^]]*\]/\1[${v#* }]/" "$S/rv.json" >"$S/rv_${v%% *}.json"
done
printf '{ "lowp_check": 1, "checks": [ { "name": "x", %s } ] }' "${CV%%\"rules\"*}\"rules\": [ { \"vs_twin\": true, \"order\": { \"tree\": \"rv_one.json\" } } ]" >"$S/twin_part.json"
# twin rules: vs_twin false, a twin of a softmax, a missing tree file
printf '{ "lowp_check": 1, "checks": [ { "name": "x", %s } ] }' "${CV%%\"rules\"*}\"rules\": [ { \"vs_twin\": false } ]" >"$S/twin_false.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "x", "op": "softmax", "in": "fp32", "out": "fp32", "subject": { "kernel": "softmax_naive" }, "shape": { "m": 2, "n": 8 }, "rules": [ { "vs_twin": true, "order": "recursive" } ] } ] }' >"$S/twin_softmax.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "x", %s } ] }' "${CV%%\"rules\"*}\"rules\": [ { \"vs_twin\": true, \"order\": { \"tree\": \"nosuch.json\" } } ]" >"$S/twin_nofile.json"
# issue 19: specs with NUL bytes, text that is not UTF-8, names XML cannot hold
CK='"op": "dot", "in": "fp16", "out": "fp32", "subject": { "kernel": "dot_acc" }, "shape": { "k": 8 }, "rules": [ { "max_ulp": 64 } ]'
# block-scaled inputs with companion scales (issue 33; the files' own mismatches: tests/cli/check_block_scales.sh)
BS() { printf '{ "lowp_check": 1, "checks": [ { "name": "bs", "op": "gemm", "in": "%s", "out": "fp32", "subject": { "tensors": { "inputs": [ %s, "b.npy" ], "outputs": [ "c.npy" ] } }, "rules": [ { "max_ulp": 1 } ] } ] }' "$2" "$3" >"$S/$1.json"; }
BS bs_layout mxfp8_e4m3 '{ "path": "a.npy", "scales": "s.npy", "scale_layout": "rowmajor" }'
BS bs_ts_fp32 nvfp4 '{ "path": "a.npy", "scales": "s.npy", "tensor_scale": 0.1 }'
BS bs_ts_alone nvfp4 '{ "path": "a.npy", "tensor_scale": 0.5 }'
BS bs_scales_num mxfp8_e4m3 '{ "path": "a.npy", "scales": 3 }'
BS bs_scales_key mxfp8_e4m3 '{ "path": "a.npy", "scales": { "path": "s.npy", "dtype": "u8" } }'
BS bs_missing mxfp8_e4m3 '{ "path": "text.npy", "scales": "nothere.npy" }'
printf '{ "lowp_check": 1, "checks": [ { "name": "a\0b", %s } ] }' "$CK" >"$S/spec_nul.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "a\\u0000b", %s } ] }' "$CK" >"$S/spec_u0000.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "a\377b", %s } ] }' "$CK" >"$S/spec_ff.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "x\\uffff", %s } ] }' "$CK" >"$S/spec_uffff.json"
# issue 30: percentages outside the one grammar (" 5%", hex, exponent), a NaN in a rule
CKR=${CK%\"rules\"*}
for pc in sp:' 5%' hex:'0x10%' exp:'1e1%' sign:'+5%' blank:'5 %'; do
  printf '{ "lowp_check": 1, "checks": [ { "name": "a", %s"rules": [ { "mismatch": "%s", "assert_close": "pytorch" } ] } ] }' \
    "$CKR" "${pc#*:}" >"$S/pct_${pc%%:*}.json"
done
printf '{ "lowp_check": 1, "checks": [ { "name": "a", %s"rules": [ { "max_ulp": NaN } ] } ] }' "$CKR" >"$S/rule_nan.json"
printf '{ "lowp_check": 1, "checks": [ { "name": "a", %s"rules": [ ] } ] }' "$CKR" >"$S/rules_empty.json"
# baselines the parser must refuse, each named by its own spec
BCK='"op": "dot", "in": "fp16", "out": "fp32", "subject": { "kernel": "dot_acc" }, "shape": { "k": 8 }, "rules": [ { "baseline": "max_ulp" } ]'
E='{"fingerprint": "0", "metrics": {"max_ulp": 1}}'
mkbase() { printf '{ "lowp_check": 1, "baseline": "%s.base.json", "checks": [ { "name": "a", %s } ] }' "$1" "$BCK" >"$S/$1.json"; printf '%s' "$2" >"$S/$1.base.json"; }
mkbase b_trail "{\"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\": $E}} x"
mkbase b_dupkey "{\"lowp_baseline\": 1, \"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\": $E}}"
mkbase b_extra "{\"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\": $E}, \"extra\": 1}"
mkbase b_dupcheck "{\"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\": $E, \"a\": $E}}"
mkbase b_other "{\"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\": $E, \"zz\": $E}}"
mkbase b_neg "{\"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\": {\"fingerprint\": \"0\", \"metrics\": {\"max_ulp\": -1}}}}"
mkbase b_metric "{\"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\": {\"fingerprint\": \"0\", \"metrics\": {\"max_upl\": 1}}}}"
mkbase b_entrykey "{\"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\": {\"fingerprint\": \"0\", \"metrics\": {}, \"x\": 1}}}"
mkbase b_nul "{\"lowp_baseline\": 1, \"lowp_version\": \"0\", \"checks\": {\"a\\u0000\": $E}}"
mkbase b_fifo "" && rm "$S/b_fifo.base.json" && mkfifo "$S/b_fifo.base.json"
mkbase b_dir "" && rm "$S/b_dir.base.json" && mkdir "$S/b_dir.base.json"
# convert --file: a FIFO, a NUL byte
mkfifo "$S/values.fifo"
# input files that are FIFOs nobody writes to: refused at once (opening one for reading waited forever)
mkfifo "$S/fifo.npy"
printf '{ "lowp_check": 1, "checks": [ { "name": "x", "op": "softmax", "subject": { "tensors": { "inputs": [ "fifo.npy" ], "outputs": [ "logits.npy" ] } }, "rules": [ { "max_ulp": 8 } ] } ] }' >"$S/fifo_tensors.json"
printf '1.5\n2\0003\n' >"$S/values_nul.txt"
# xent with class indices no target may hold (10 classes): 99, -1, 1.5
python3 - "$S" <<'PY'
import struct, sys
def npy(path, descr, shape, fmt, vals):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    d += ' ' * (63 - (10 + len(d)) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(d)) + d.encode() + struct.pack(fmt, *vals))
d = sys.argv[1]
npy(d + '/logits.npy', '<f4', '(2, 10)', '<20f', [0.0] * 20)
npy(d + '/t99.npy', '<i8', '(2,)', '<2q', [1, 99])
npy(d + '/tneg.npy', '<i8', '(2,)', '<2q', [-1, 0])
npy(d + '/thalf.npy', '<f8', '(2,)', '<2d', [1.5, 0])
npy(d + '/xent_y.npy', '<f4', '(2,)', '<2f', [0.0, 0.0])
# tol's inputs with a NaN, an infinity (a tolerance from such data was NaN, its summary nonsense, exit 0)
npy(d + '/nan.npy', '<f4', '(2, 4)', '<8f', [1.0] * 5 + [float('nan')] + [1.0] * 2)
npy(d + '/inf.npy', '<f8', '(4, 3)', '<12d', [1.0] * 11 + [float('-inf')])
PY
for t in t99 tneg thalf; do
  printf '{ "lowp_check": 1, "checks": [ { "name": "x", "op": "xent", "in": ["fp32", "fp64"], "out": "fp32", "subject": { "kernel": "xent_naive" }, "inputs": { "files": [ "logits.npy", "%s.npy" ] }, "rules": [ { "max_ulp": 8 } ] } ] }' $t >"$S/xent_$t.json"
  printf '{ "lowp_check": 1, "checks": [ { "name": "x", "op": "xent", "subject": { "tensors": { "inputs": [ "logits.npy", "%s.npy" ], "outputs": [ "xent_y.npy" ] } }, "rules": [ { "max_ulp": 8 } ] } ] }' $t >"$S/xent_tensors_$t.json"
done
printf '{ "lowp_check": 1, "checks": [ { "name": "a", %s } ] }' "$CK" >"$S/ok.json"
chmod -R a-w "$S/userdir"

# (a folder's own mtime is left out: a command may probe that it can create
# a file there, and remove the probe, before it does any work). Besides name, type, mode, size and
# mtime, each entry's inode and status-change time (ctime): the kernel sets ctime to the current time
# on every write, truncation, rename, link and time change (utimensat), and nothing sets it to a
# chosen value, so a file whose bytes changed, even back to the same size and mtime, shows a new
# ctime; a file replaced by rename shows a new inode. This is what a checksum of every file after
# every case found (it was most of this test's time: 540 cases x 131 files), and more.
# snapshot VAR: the listing, by one find writing a file that the shell reads itself: no command
# substitution, pipe or sort per case (each process started costs more than find's work on this
# folder: 34 -> 16 ms of CPU per snapshot on the 2-core machine). find lists each folder in the order
# it returns its entries, which stays the same while nothing in it changes; two listings that differ
# are compared again sorted (same_snap), so an order that changed alone is no failure.
# Where python3 is present, one python3 process (a coprocess started once) writes the same listing on
# request: starting find for every case was most of the snapshot's cost (100 snapshots of the scratch
# folder's 169 entries: 1.5 s with find, 0.19 s with the coprocess; os.scandir lists in the order find does)
snap_find() {
  find "$S" \( -type d -printf '%P %y %m\n' \) -o -printf '%P %y %m %s %T@ %C@ %i\n' >"$W/snap"
}
if command -v python3 >/dev/null 2>&1; then
  coproc SNAP { exec python3 -c '
import os, stat, sys
root, out = os.fsencode(sys.argv[1]), sys.argv[2]
def t(ns): return b"%d.%09d0" % divmod(ns, 10**9)
KIND = {stat.S_IFREG: b"f", stat.S_IFLNK: b"l", stat.S_IFIFO: b"p", stat.S_IFSOCK: b"s", stat.S_IFCHR: b"c",
        stat.S_IFBLK: b"b"}
def walk(d, rel, lines):
    with os.scandir(d) as it:
        for e in it:
            st = e.stat(follow_symlinks=False)
            p = rel + e.name
            m = b"%o" % stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                lines.append(b"%s d %s\n" % (p, m))
                walk(e.path, p + b"/", lines)
            else:  # the letters of find -printf %y
                y = KIND.get(stat.S_IFMT(st.st_mode), b"U")
                lines.append(b"%s %s %s %d %s %s %d\n" % (p, y, m, st.st_size, t(st.st_mtime_ns),
                                                         t(st.st_ctime_ns), st.st_ino))
for _ in sys.stdin:
    st = os.lstat(root)
    lines = [b" d %o\n" % stat.S_IMODE(st.st_mode)]
    walk(root, b"", lines)
    with open(out, "wb") as f:
        f.write(b"".join(lines))
    sys.stdout.write("\n")
    sys.stdout.flush()
' "$S" "$W/snap"; }
fi
snapshot() {
  local ack
  if [ -n "${SNAP_PID:-}" ] && printf '\n' 2>/dev/null >&"${SNAP[1]}" && IFS= read -r -u "${SNAP[0]}" ack; then :
  else snap_find; fi
  IFS= read -r -d '' "$1" <"$W/snap"
}
same_snap() {
  [ "$before" = "$after" ] || [ "$(LC_ALL=C sort <<<"$before")" = "$(LC_ALL=C sort <<<"$after")" ]
}

# ------------------------------------------------------------------- cases
# One command line per line (shell words; run with eval in $S, stdin from
# /dev/null unless the line redirects it). Lines starting with # are comments.
CASES=$(cat <<'EOF'
# --- lowp itself
nosuchcommand
$'no\nsuch'
--version extra
version $'x\ny'
# --- values with control characters: still one line
convert $'1\n2' --to fp16
convert 1 --to $'fp\n16'
convert $'\e[31mred' --to fp16
run formats --formats=$'fp16\nx'
scaler --events $'ok\nx'
gemm --m $'2\n' --n 2 --k 2
--bogus
# --- GPU registry kernels
check gpu_device.json
# --- formats
formats --bogus
formats fp17
formats --json fp17
formats --json=1
convert 1 --to=fp16 --sat=yes
formats 'p=0,emin=-2,emax=3'
formats 'p=1,emin=-2,emax=1,nan=allones'
formats 'p=3,emin=-2,emax=3,nozero,noinf,nan=negzero'
formats 'p=3,p=4,emin=-2,emax=3'
formats 'p=3,emin=-2,emax=3,sub,nosub'
formats 'p=54,emin=-2,emax=3'
formats 'p=3,emin=-2,emax=3,ebits=12'
formats 'elem=e4m3,scale=e8m0'
formats 'elem=fp16,scale=e8m0,block=32'
formats 'elem=e4m3,scale=e8m0,block=32,rule=nvfp4'
formats 'elem=e2m1,scale=ue4m3,block=0,tensor'
formats 'elem=e4m3,scale=e8m0,block=32,colour=red'
formats e4m3{,}{,}{,}{,}{,}{,}{,}
formats 'elem=e3m2,scale=e8m0,block=32,pack=tight'
convert 1 --to mxfp6:chunky
convert 1 --to mxfp8_e4m3 --scale-rule round
convert 1 --to nvfp4 --scale-rule floor
convert 1 --to mxfp4:nearest
convert --to mxfp4
convert 1x --to mxfp4
convert 1 --to mxfp4 --round rtz
convert 1 --to fp16 --scale-rule floor
convert 1 --to 'elem=e4m3,scale=e8m0,block=0'
gemm --m 4 --n 4 --k 64 --model b200,kind=mxf8f6f4
gemm --m 4 --n 4 --k 64 --model b200,kind=mxf8f6f4 --quant nvfp4
gemm --m 4 --n 4 --k 64 --model b200,kind=mxf9 --quant mxfp4
gemm --m 4 --n 4 --k 64 --model b200,kind=mxf4nvf4 --quant mxfp8_e4m3
gemm --m 4 --n 4 --k 64 --model b200,kind=mxf4nvf4 --quant int8_b32
gemm --m 4 --n 4 --k 64 --quant mxfp9
gemm --m 4 --n 4 --k 64 --model b200,kind=mxf8f6f4 --quant mxfp4 --promote 128
dot --n 64 --quant mxfp4
probe --device model:b200,kind=mxf5
probe --device model:b200,kind=mxf4nvf4,F=99
formats 'p=3,emin=-2,emax=3,'
formats 'p=0x3,emin=-2,emax=3'
formats 'p=3,emin=-2,emax=3,sub,nozero'
# --- convert
convert 1
convert 1 --to fp17
convert 1 --to ''
convert 1 --to fp16,
convert 1 --to ,fp16
convert 1 --to fp16,,bf16
convert 1 --to 'fp16;'
convert 1 --to 'p=3,emin=-2,emax=3,nan=none,nan=ieee'
convert 1 --to 'p=1,emin=-4,emax=4'
convert 0b101 --to fp16
convert 1@3 --to fp16
convert ' 1' --to fp16
convert 'nan(1)' --to fp16
convert 1e --to fp16
convert 0x --to fp16
convert 1.2.3 --to fp16
convert '' --to fp16
convert 1 --to fp16 --round rnx
convert 1 --to fp16 --round
convert 1 --to fp16 --overflow maybe
convert 1 --to fp16 --bogus
convert 1 --to fp16 --sr-bits 0x
convert 1 --to fp16 --round sr --sr-bits 99
convert --bits 0x3c00 --to fp16
convert --bits 0x10000 --from fp16 --to fp32
convert --bits zz --from fp16 --to fp32
convert --bits 0x1c --from 'p=3,emin=-2,emax=3,noinf,nan=none,ebits=3' --to fp32
convert --bits -1 --from fp16 --to fp32
convert --bits 0x1ffffffffffffffff --from fp64 --to fp32
convert --bits +0x3c00 --from fp16 --to fp32
convert 1 --from fp17 --to fp16
# --- list
list --bogus
list -v extra
list extra
# --- run (the command)
run
run nosuchexperiment
run formats bogus
run formats --nosuchparam=1
run formats --seed
run formats --seed=x
run formats --seed=-1
run formats --seed=99999999999999999999
run formats --out
run formats --formats=fp16 --formats=bf16
run formats --formats
run formats --=x
run formats --
# --- run: each experiment's parameters
run formats --formats=fp17
run formats --formats=
run formats --formats=fp16,
run loss-scaling --grads=
run loss-scaling --grads=1e-3,,1e-4
run loss-scaling --grads=x
run loss-scaling --grads=1e-3,
run loss-scaling --grads=,1e-3
run loss-scaling --example=0b101
run loss-scaling --example=1@3
run loss-scaling --loss=1e999999999
run loss-scaling --format=fp17
run loss-scaling --gmin=abc
run loss-scaling --kmax=99999999999999999999
run loss-scaling --res=0
run dynamic-range --formats=fp17
run dynamic-range --lo=x
run dynamic-range --lo=1e-999
run dynamic-range --lo=1e-999999999
run dynamic-range --hi=1e999999999
run dynamic-range --hi=1@3
run dynamic-range --samples=-5
run dynamic-range --samples=1e3
run softmax-overflow --formats=fp16,
run softmax-overflow --nmax=0
run softmax-overflow --n=abc
run softmax-overflow --trials=99999999999999999999
run softmax-overflow --mask=zz
run softmax-overflow --formats=fp16,fp64
run claims --file=nosuchfile.json
run claims --file=claims_cut.json
run claims --python=/nonexistent/python3
run matmul-precision --sizes=
run matmul-precision --sizes=32,,64
run matmul-precision --sizes=-1
run matmul-precision --sizes=32,
run matmul-precision --formats=fp17
run matmul-precision --model=zzz
run matmul-precision --tcrows=0
run matmul-precision --sgemm=2
run matmul-precision --tcmax=0
run matmul-precision --sizes=64,32
run matmul-precision --head=999
run matmul-precision --seeds=0
run matmul-precision --bigseeds=9
run matmul-precision --formats=fp64
run matmul-precision --formats=e8m0
run matmul-precision --bigformats=fp17
run matmul-precision --check=0
run fp8-quantization --data=nomnist
run fp8-quantization --data=mnist_lie
run fp8-quantization --data=mnist_trunc
run fp8-quantization --data=mnist_gz
run fp8-quantization --epochs=-1
run fp8-quantization --hidden=256,,128
run fp8-quantization --lr=0
run fp8-quantization --hidden=256,
run fp8-quantization --hidden=' 256'
run fp8-quantization --momentum=1
run fp8-quantization --block_formats=mxfp9
run fp8-quantization --block_formats=int8_b32
run fp8-quantization --block_formats=mxfp4,,nvfp4
run fp8-quantization --phases=0
run fp8-quantization --phases=33
run fp8-quantization --seed_models=seeds/other.safetensors
run fp8-quantization --seed_models=cnn_absent.safetensors
run fp8-quantization --seed_models=seeds/cnn_s20261123.safetensors,,cnn.x
run fp8-quantization --block=0
run fp8-quantization --seeds=1
run fp8-quantization --seeds=17
run fp8-quantization --channels=8
run fp8-quantization --channels=8,0
run fp8-quantization --hidden=0
run fp8-quantization --model=v100
run fp8-quantization --model=b200
run fp8-quantization --model=nonsense
run fp8-quantization --promote=100
run fp8-quantization --mx_block=0
run fp8-quantization --train=resnet
run fp8-quantization --models=nomnist
run fp8-quantization --cnn_epochs=0
run fp8-quantization --vit_shape=7,48,5,96,2
run fp8-quantization --vit_shape=5,48,4,96,2
run fp8-quantization --test=0
run fp8-quantization --boot=1
run tensor-core-models --czero=bogus
run tensor-core-models --czero='H100/E4M3/fp32;'
run tensor-core-models --czero=H100/E9M9/fp32
run tensor-core-models --map='H100=zzz'
run tensor-core-models --map='x,,y'
run tensor-core-models --map='x;;y'
run tensor-core-models --map='H100=h100;H100=a100'
run tensor-core-models --map='H100=h100,F=99'
run tensor-core-models --map='=h100'
run tensor-core-models --vectors=vec_nonhex
run tensor-core-models --vectors=vec_trunc
run tensor-core-models --vectors=vec_nul
run tensor-core-models --vectors=vec_empty
run tensor-core-models --vectors=vec_noa
run tensor-core-models --vectors=vec_bin
run tensor-core-models --vectors=vec_long
run tensor-core-models --vectors=vec_none
run tensor-core-models --vectors=nosuchdir
run tensor-core-models --k=1
run tensor-core-models --trials=0x
run error-growth --formats=fp17
run error-growth --dists=nosuchdist
run error-growth --dists=normal,
run error-growth --formats=fp16,
run error-growth --models='tc:h100@e4m3,zzz'
run error-growth --models='acc:fma;'
run error-growth --models='acc:blocked:99999999999999999999'
run error-growth --models='acc:recursive,acc=e8m0'
run error-growth --models='tc:zzz'
run error-growth --models='acc:fma;;tc:h100'
run error-growth --sum_models='blocked:0,acc=fp32'
run error-growth --sum_models='recursive,acc=fp16,acc=fp32'
run error-growth --sum_format=fp17
run error-growth --nmin=0
run error-growth --nstep=1
run error-growth --trials_max=0
run error-growth --trials_max=257
run error-growth --budget=0
run error-growth --trials=65
run error-growth --bs_formats=mxfp9
run error-growth --bs_formats=mxfp8_e4m3,
run error-growth --bs_models='tc:h100'
run error-growth --bs_models='bs:b200,kind=zzz'
run error-growth --bs_models='bs:b200,kind=mxf8f6f4@fp16'
run error-growth --bs_kmin=64 --bs_kmax=32
run error-growth --bs_kstep=1
run gradscaler-dynamics --steps=0
run gradscaler-dynamics --init=-1
run gradscaler-dynamics --sigma=x
run gradscaler-dynamics --spike_prob=2
run gradscaler-dynamics --sweep_n=-1
run master-weights --delta=zz
run master-weights --deltas=1e-3,,1e-4
run master-weights --N=0
run master-weights --deltas=1e-3,
run fp8-scaling --in=0
run fp8-scaling --lr=x
run allreduce-precision --nosuch=1
run allreduce-precision --workers=4,
run allreduce-precision --workers=0x
run allreduce-precision --seeds=1
run allreduce-precision --seeds=17
run fp8-scaling --seeds=1
run fp8-scaling --seeds=17
run autocast-policy --nosuch=1
run amp-speedup --heads=3
run amp-speedup --dropout=1
run amp-speedup --dropout=x
run amp-speedup --gpus=v200
run amp-speedup --gpus=h100,
run amp-speedup --gpus=
run amp-speedup --measure=tpu
run amp-speedup --measure=cpu,cpu
run amp-speedup --cpu_seq=0
run amp-speedup --cpu_batch=64 --cpu_seq=4096
run amp-speedup --batch=x
run amp-speedup --cpu_reps=0
# --- report
report --bogus
report --out
report --diff
report --diff=
report --diff userdir --out userdir
report --diff nosuchdir
report --diff rep_ok --no-svg
report --diff rep_ok --out rep_broken
report --quick --jobs 0
report --quick --jobs=0
report --quick --jobs 1025
report --quick --jobs two
report --quick --jobs -2
report --quick --jobs ' 2'
report --quick --jobs 2x
report --quick --jobs
report --diff rep_ok --jobs 2
report --diff rep_ok --out rep_ok --quick
# --- bench
bench nosuchbench
bench --bogus
bench round --n 0
bench round --n x
bench round --bogus
bench round --isa sse9
bench round --isa
bench round --rnd sr
bench round --rnd nearest-ish
bench exact --bogus
# --- scaler
scaler
scaler --bogus
scaler --events ''
scaler --events ok,,inf
scaler --events ok,
scaler --events maybe
scaler --events 'ok*0'
scaler --events 'ok*99999999999999999999'
scaler --events 'ok* 3'
scaler --events ok --init 0
scaler --events ok --init inf
scaler --events ok --init 1e999999999
scaler --events ok --growth x
scaler --events ok --interval 0
scaler --events ok --policy zzz
scaler --events ok --state-in nosuch.json
scaler --events ok --state-in dup.json
scaler --events ok --state-in trail.json
scaler --events ok --state-in twice.json
scaler --events ok --state-in nul.json
scaler --events ok --state-in notjson.json
scaler --events ok --state-in array.json
scaler --events ok --state-in unknown.json
scaler --events ok --state-in negscale.json
scaler --events ok --state-in bigint.json
scaler --events ok --state-in noscale.json
scaler --events ok --state-in empty.json
scaler --events ok --state-in - < trail.json
scaler --events ok --state-in userdir
scaler --events ok --state-in good.json --init 2
scaler --events ok --state-out nosuchdir/s.json
# --- gemm
gemm --bogus
gemm --m 0 --n 2 --k 2
gemm --m x --n 2 --k 2
gemm --m 99999999999999999999 --n 2 --k 2
gemm --m 2 --n 2 --k 2 --in fp17
gemm --m 2 --n 2 --k 2 --acc e8m0
gemm --m 2 --n 2 --k 2 --prod e8m0
gemm --m 2 --n 2 --k 2 --acc 'p=3,emin=-2,emax=3,unsigned'
gemm --m 2 --n 2 --k 2 --order blocked:99999999999999999999
gemm --m 2 --n 2 --k 2 --order recursive:5
gemm --m 2 --n 2 --k 2 --order blocked:0
gemm --m 2 --n 2 --k 2 --order pairwise,acc=fp16
gemm --m 2 --n 2 --k 2 --order nosuchorder
gemm --m 2 --n 2 --k 2 --model zzz
gemm --m 2 --n 2 --k 2 --model 'h100,F=99'
gemm --m 2 --n 2 --k 2 --model 'h100,zsum=neg'
gemm --m 2 --n 2 --k 2 --model 'a100,zrnd=1'
gemm --m 2 --n 2 --k 2 --model 'h100,c0align=0'
gemm --m 2 --n 2 --k 2 --model 'h100,zsum=pos,zsum=ieee'
gemm --m 2 --n 2 --k 2 --dist nosuchdist
gemm --m 2 --n 2 --k 2 --prob 1
gemm --m 2 --n 2 --k 2 --prob 0b1
gemm --m 2 --n 2 --k 2 --threads 0
gemm --m 2 --n 2 --k 2 --round rnx
gemm --a text.npy --b text.npy
gemm --a empty.npy --b empty.npy
gemm --a cut.npy --b cut.npy
gemm --a nosuch.npy --b nosuch.npy
gemm --a fifo.npy --b logits.npy
dot --a fifo.npy --b fifo.npy
fpx scan fifo.npy --format fp16
tol sum --a fifo.npy
twin --tree fifo.npy --kernel gemm_acc
check fifo_tensors.json
gemm --a userdir --b userdir
gemm --m 2 --n 2 --k 2 --out-exact userdir
gemm --m 2 --n 2 --k 2 --out-exact nosuchdir/c.npy
# --- dot
dot --bogus
dot --n 0
dot --n -4
dot --n 8 --acc e8m0
dot --n 8 --in fp17
dot --n 8 --order blocked:99999999999999999999
dot --n 8 --order 'splitk:4,rnd=rup'
dot --n 8 --seed x
dot --n 8 --model h100,,F=25
dot --n 8 --model h100,
dot --n 8 --model h100,F=25,F=26
dot --n 8 --model 'h100,F= 25'
dot --n 8 --dist loguniform:0b1:1e3
dot --n 8 --dist loguniform:1e-3:1e3x
dot --n 8 --dist loguniform:1e-3
dot --n 8 --dist loguniform:1e3:1e-3
# --- probe (no GPU needed: every line fails before any device is used)
probe --bogus
probe --device model:h100 --capture cap_k0 --k 0
probe --device model:h100 --capture cap_k --k 1025
probe --device model:h100 --capture cap_k --k x
probe --device nosuch
probe --device model:zzz
probe --device model:
probe --device 'model:h100,F=99'
probe --device 'model:b=16,F=25,c0align=max'
probe --device model:v100 --in bf16
probe --device model:h100 --in fp17
probe --device model:h100 --in fp32
probe --device model:h100 --out fp8
probe --device model:h100 --rows 0 --capture cap1
probe --device model:h100 --seed x --capture cap1
probe --device model:h100 --capture userdir
probe --device model:h100 --capture notes.txt
probe --device model:h100 --in
# --- issue 19: NUL bytes, text that is not UTF-8, names JUnit cannot hold
check bs_layout.json
check bs_ts_fp32.json
check bs_ts_alone.json
check bs_scales_num.json
check bs_scales_key.json
check bs_missing.json
check spec_nul.json
check conv_input.json
check conv_sr.json
check conv_softmax.json
check twin_false.json
check spec_lead0.json
check spec_point.json
scaler --events ok --state-in lead0.json
scaler --events ok --state-in point.json
check twin_softmax.json
check twin_nofile.json
check twin_nofile.json --reveal --reveal
check spec_u0000.json
check spec_ff.json
check spec_uffff.json
# --- issue 19: baselines held to the spec parser's rules; a FIFO never waited on
check b_trail.json
check b_dupkey.json
check b_extra.json
check b_dupcheck.json
check b_other.json
check b_neg.json
check b_metric.json
check b_entrykey.json
check b_nul.json
check b_fifo.json
check b_fifo.json --update-baseline
check b_dir.json
# --- issue 19: cross-entropy targets that are no class index, before any work
check xent_t99.json --junit j.xml
check xent_tneg.json --json r.json
check xent_thalf.json
check xent_tensors_t99.json --junit j.xml
check xent_tensors_tneg.json
check xent_tensors_thalf.json
# --- issue 19: outputs onto inputs (more in outputs.sh)
check ok.json --json ok.json
gemm --a logits.npy --b logits.npy --out-exact logits.npy
# --- issue 19: standard streams: closed stdin, stdout that cannot be written
check - <&-
convert --file - --to fp16 <&-
scaler --events ok --state-in - <&-
convert --file values.fifo --to fp16
convert --file values_nul.txt --to fp16
convert --file userdir --to fp16
convert 1.5 --to fp16 >/dev/full
convert 1.5 --to fp16 >&-
gemm --m 2 --n 2 --k 2 >/dev/full
gemm --m 2 --n 2 --k 2 --out-exact C.npy >/dev/full
scaler --events ok,inf --state-out s.json >/dev/full
scaler --events ok --state-out s.json --json >/dev/full
reveal --kernel gemm_acc --shape 2,2,8 --validate 10 --save r.json >/dev/full
tol sum --a logits.npy --save-atol at.npy >/dev/full
tol dot --k 64 >/dev/full
tol dot --k 64 --json >/dev/full
check ok.json >/dev/full
check ok.json --junit j.xml >/dev/full
formats >/dev/full
run formats --quick --formats=fp16 --out o3 >/dev/full
# --- issue 30: --dump that cannot be created (tried before the work), or the path of another output
check ok.json --dump nowhere/sub/dir
check ok.json --dump ok.json/d
check ok.json --junit dd --dump dd
check ok.json --json dd --dump ./dd
check ok.json --dump=dd --junit=dd
# --- issue 30: percentages of one grammar, NaN in a spec, an empty rules list
check pct_sp.json
check pct_hex.json
check pct_exp.json
check pct_sign.json
check pct_blank.json
check rule_nan.json
check rules_empty.json --junit j.xml
check ok.json --junit j.xml --junit=k.xml
check ok.json --json r.json --json r2.json
check ok.json --threads 2 --threads=3
check ok.json --update-baseline --update-baseline
# --- issue 30: lowp tol: repeated options, derivations without a bound, bad numbers
tol dot --k 64 --k 65
tol dot --k=64 --k 64
tol dot --k 4 --confidence 0.9 --confidence=0.99
tol dot --k 4 --json --json
tol dot --k 64 --method kahan --confidence 0.9
tol sum --k 64 --input fp16 --method model:h100
tol layernorm --k 64 --input fp16 --method model:h100
tol dot --k 1.9
tol dot --k 4 --scale nan
tol dot --k 4 --scale inf
tol dot --k 4 --confidence nan
tol dot --k 4 --confidence 1
# --- lowp tol: data-aware inputs, risk, compute format (issue 31)
tol gemm --b notes.txt
tol gemm --a notes.txt --b notes.txt --save-atol atol.npy
tol sum --a logits.npy --save-atol nosuchdir/atol.npy
tol gemm --a tenth.npy --b tenth.npy --input fp16
tol gemm --a nan.npy --b inf.npy
tol gemm --a inf.npy --b inf.npy --json
tol sum --a nan.npy --save-atol atol.npy
tol gemm --k 4 --save-atol atol.npy
tol dot --k 4 --risk 0
tol dot --k 4 --numel 0
tol softmax --k 4 --compute nosuch
tol dot --k 4 --confidence worstest
# --- lowp fpx (issue 36)
fpx
fpx bogus
fpx scan
fpx scan logits.npy
fpx scan logits.npy --format nosuch
fpx scan logits.npy --format fp16 --rounding nosuch
fpx scan logits.npy --format fp16 --fail-on nosuch
fpx scan logits.npy --format fp16 --bogus
fpx scan text.npy --format fp16
fpx scan empty.npy --format fp16
fpx scan nosuchfile.npy --format fp16
fpx scan logits.npy logits.npy --format fp16
fpx outputs
fpx outputs text.npy
fpx outputs logits.npy --inputs nosuchfile.npy
gemm --m 2 --n 2 --k 2 --order pairwise --fpx
reveal
reveal --kernel gemm_acc --plugin x.so
reveal --kernel nosuch
reveal --kernel gemm_acc --op softmax
reveal --kernel gemm_acc --shape 2,3
reveal --kernel gemm_acc --shape 2,0,8
reveal --kernel gemm_acc --in nosuchfmt
reveal --kernel gemm_acc --shape 2,2,1
reveal --kernel gemm_acc --save userdir
reveal --kernel gemm_acc --shape 4,4,512 --save nosuchdir/r.json
reveal --kernel gemm_acc --params order=bogus
reveal --kernel gemm_acc --validate 0
reveal --kernel gemm_lanes --params lanes=3
reveal --kernel gemm_lanes --params lanes=2048
run order-revelation --verdict_k=100
run order-revelation --blas_k=64,0
run order-revelation --numpy_sum_k=1
run order-revelation --numpy_matmul_k=64,x
reveal --kernel gemm_acc --bogus
reveal --plugin missing.so
twin --kernel gemm_acc
twin --tree missing.json --kernel gemm_acc
twin --tree notes.txt --kernel gemm_acc
twin --tree rv.json --kernel gemm_acc --params acc=fp32 --shape 2,2,8 --json
twin --tree rv.json --kernel gemm_acc --params acc=fp32 --shape 2,2,8 --validate 4
twin --tree rv.json --kernel gemm_acc --params acc=fp32 --shape 2,2,8 --save r2.json
reveal --kernel gemm_acc --rows 5
reveal --kernel gemm_acc --shape 2,2,8,
gemm --m 3 --n 2 --k 2 --m 4
gemm --m=3 --n 2 --k 2 --m 4
run formats --quick --out o1 --out=o2
scaler --events ok --state-out s1.json --state-out s2.json
reveal --kernel gemm_acc --shape 2,2,8 --save r1.json --save r2.json
reveal --kernel gemm_acc --params ,acc=fp32
bench gemm --quick --tables acc,
bench exact --sizes 64,,64
bench exact --quick --formats fp16,
bench exact --sizes 64 --formats ''
fpx scan logits.npy --format fp16 --fail-on overflow,
fpx outputs logits.npy --inputs logits.npy,
probe --device model:h100 --rows 5
probe --device model:h100 --k 64
twin --tree rv_one.json --kernel gemm_acc --params acc=fp32 --shape 2,2,8
twin --tree rv_none.json --kernel gemm_acc --params acc=fp32 --shape 2,2,8
twin --tree rv_twice.json --kernel gemm_acc --params acc=fp32 --shape 2,2,8
check twin_part.json
EOF
)

n=0
before=""
after=""
snapshot after
# the cases run in $S: the shell stays there (one process per case, lowp's: no subshell)
cd "$S" || exit 1
while IFS= read -r line; do
  case $line in '' | '#'*) continue ;; esac
  n=$((n + 1))
  # nothing runs between two cases: the snapshot after one is the one before the next
  before=$after
  eval "\"\$LOWP\" $line" </dev/null >"$W/out" 2>"$W/err"; rc=$?
  snapshot after
  # stderr's lines as wc -l counts them (newlines), read by the shell itself: no process per case
  mapfile errl <"$W/err"
  nerr=${#errl[@]}
  [ "$nerr" -gt 0 ] && [[ ${errl[-1]} != *$'\n' ]] && nerr=$((nerr - 1))
  why=
  [ $rc -eq 2 ] || why="exit $rc, want 2"
  [ -z "$why" ] && [ "$nerr" -ne 1 ] && why="$nerr lines on stderr, want 1"
  [ -z "$why" ] && [ -s "$W/out" ] && why="output on stdout: $(head -c 200 "$W/out")"
  [ -z "$why" ] && [[ ${errl[0]} != lowp* ]] && why="message does not start with 'lowp'"
  [ -z "$why" ] && ! same_snap &&
    why="files changed: $(diff <(LC_ALL=C sort <<<"$before") <(LC_ALL=C sort <<<"$after") | head -n 6 | tr '\n' ' ')"
  if [ -z "$why" ]; then pass=$((pass + 1))
  else bad "lowp $line: $why; stderr: $(head -c 300 "$W/err" | tr '\n' '|')"; fi
done <<<"$CASES"
[ $n -ge 100 ] || bad "only $n cases (the table must hold at least 100)"

# ------------------------------------------------ --help: exit 0, on stdout
helps=("--help" "formats --help" "convert --help" "list --help" "run --help" "report --help"
       "bench --help" "bench round --help" "bench exact --help" "scaler --help" "gemm --help"
       "dot --help" "probe --help" "fpx --help" "fpx scan --help" "fpx outputs --help"
       "reveal --help" "twin --help" "--version" "version"
       "formats -h" "convert -h" "report -h" "gemm -h" "check -h" "tol -h" "reveal -h")
for e in $("$LOWP" list | awk '{print $1}'); do helps+=("run $e --help"); done
for h in "${helps[@]}"; do
  before=$after
  # shellcheck disable=SC2086
  "$LOWP" $h </dev/null >"$W/out" 2>"$W/err"; rc=$?
  snapshot after
  if [ $rc -eq 0 ] && [ -s "$W/out" ] && [ ! -s "$W/err" ] && same_snap; then
    pass=$((pass + 1))
  else bad "lowp $h: exit $rc, stdout $(wc -c <"$W/out") bytes, stderr '$(head -c 200 "$W/err")'"; fi
done
# --version: one line naming the version (CMake's), the build and this CPU's fast-path copy
"$LOWP" --version >"$W/out" 2>&1
mapfile vl <"$W/out"
want_v=$(sed -n 's/^project(lowp VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
if [ ${#vl[@]} -eq 1 ] && [[ ${vl[0]} == "lowp $want_v (git "*", build "*"; fast paths on this CPU: "* ]]; then
  pass=$((pass + 1))
else bad "lowp --version: '$(cat "$W/out")' (want one line 'lowp $want_v (git ...')"; fi

# ------------------------- --key value and --key=value are the same thing
same=("convert 0.1 --to|fp16,e4m3 --round|rtz" "scaler --events|ok,inf --init|1024"
      "dot --n|64 --in|bf16 --seed|3" "gemm --m|3 --n|2 --k|16 --acc|fp16" "formats --json fp16"
      "run claims --quick --out|o1" "probe --device|model:a100 --in|fp16,tf32 --json")
for c in "${same[@]}"; do
  spaced=${c//|/ } joined=${c//|/=}
  # shellcheck disable=SC2086
  # (lines with timings are left out: they differ from run to run)
  a=$(cd "$S" && "$LOWP" $spaced 2>&1); ra=$?
  # shellcheck disable=SC2086
  b=$(cd "$S" && "$LOWP" $joined 2>&1); rb=$?
  a=$(grep -v -i 'time' <<<"$a") b=$(grep -v -i 'time' <<<"$b")
  if [ $ra -eq 0 ] && [ $rb -eq 0 ] && [ "$a" = "$b" ]; then pass=$((pass + 1))
  else bad "'lowp $spaced' (exit $ra) and 'lowp $joined' (exit $rb) differ"; fi
done

echo "bad_input: $n bad command lines and ${#helps[@]} --help lines; $pass passed, $fail failed"
[ $fail -eq 0 ]
