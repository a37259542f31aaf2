#!/usr/bin/env bash
# cli_outputs -- outputs never destroy what they find: every file and folder output checked before the work.
# Run: bash tests/cli/outputs.sh build/lowp
#
# Each refusal asserts: exit status 2, exactly one line on stderr naming the
# problem, nothing on stdout, and no change at all in the work folder (names,
# types, modes, sizes, times, link targets). Accepted outputs are checked for
# their content, their modes under umask 022 and 077, and that no temporary
# (*.tmp.*, *.old.*) is left. Hostile folder names must work (no shell, no
# gnuplot quoting) and must not inject anything.
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2
S="$T/s"   # this script's own scratch files (outside the watched folder)
W="$T/w"   # the watched work folder
mkdir -p "$S" "$W"
skipped=0

# a listing of W that changes if anything in it appears, vanishes or changes;
# with STRICT=0 (a failure after the work began: a temporary was made and
# removed again, the run header was printed) the folders' own modification
# times are left out and stdout may hold the run header
# (snap VAR: one find writing a file that the shell reads into VAR, no command substitution, pipe or
# sort: each process started costs more than the listing on the 2-core machine; find lists a folder in
# the order it returns its entries, which stays the same while nothing changes, and listings that differ
# are compared again sorted, same_snap)
STRICT=1
snap() {
  if [ $STRICT = 1 ]; then find "$W" -printf '%P|%y|%m|%s|%T@|%l\n' >"$S/snap"
  else find "$W" \( -type d -printf '%P|%y|%m\n' \) -o -printf '%P|%y|%m|%s|%T@|%l\n' >"$S/snap"
  fi
  IFS= read -r -d '' "$1" <"$S/snap"
}
same_snap() { # A B: the two listings hold the same lines
  [ "$1" = "$2" ] || [ "$(LC_ALL=C sort <<<"$1")" = "$(LC_ALL=C sort <<<"$2")" ]
}

# refuse NAME PATTERN CMD...: exit 2, one message matching PATTERN, W unchanged
# (stderr read by the shell itself: its lines as wc -l counts them, PATTERN matched as grep would: the
# patterns below use no character that a basic and an extended regular expression read differently)
refuse() {
  local name="$1" pattern="$2" before after rc errl nerr; shift 2
  snap before
  "$@" >"$S/out" 2>"$S/err"; rc=$?
  snap after
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2: $(head -c 300 "$S/err")"; return; fi
  mapfile errl <"$S/err"
  nerr=${#errl[@]}
  [ "$nerr" -gt 0 ] && [[ ${errl[-1]} != *$'\n' ]] && nerr=$((nerr - 1))
  if [ "$nerr" -ne 1 ]; then bad "$name: want one line on stderr, got: $(cat "$S/err")"; return; fi
  [[ ${errl[0]} =~ $pattern ]] || { bad "$name: stderr lacks '$pattern': $(cat "$S/err")"; return; }
  if [ $STRICT = 1 ] && [ -s "$S/out" ]; then bad "$name: printed on stdout"; return; fi
  if ! same_snap "$before" "$after"; then
    bad "$name: the work folder changed: $(diff <(LC_ALL=C sort <<<"$before") <(LC_ALL=C sort <<<"$after") | head -6)"
    return
  fi
  ok
}

# no temporaries anywhere under W
no_temps() {
  local left
  left="$(find "$W" \( -name '*.tmp.*' -o -name '*.old.*' \) | head -3)"
  [ -z "$left" ] && ok || bad "$1: temporaries left: $left"
}

GEMM=("$LOWP" gemm --m 3 --n 3 --k 8 --in fp16 --acc fp32 --seed 1)
SCALER=("$LOWP" scaler --events ok,inf,ok --interval 2)
RUN=("$LOWP" run formats --quick --formats=e4m3,fp16)

# ------------------------------------------------------------ the hostile set
echo keep >"$W/target"
mkdir -p "$W/dir" "$W/user/sub"
echo "my notes" >"$W/user/notes.txt"
echo "mine" >"$W/user/sub/x"
ln -s target "$W/lnk-file"
ln -s dir "$W/lnk-dir"
ln -s nowhere "$W/dangling"
mkfifo "$W/fifo"
have_dev=0
if [ "$(id -u)" -eq 0 ] && mknod "$W/dev" c 1 3 2>/dev/null; then have_dev=1
else skipped=$((skipped + 4)); echo "skip: device-node cases (not root, or mknod not allowed)"; fi

# --------------------------------------------------- file outputs (2 options)
for which in gemm scaler; do
  if [ $which = gemm ]; then CMD=("${GEMM[@]}"); OPT=--out-exact; else CMD=("${SCALER[@]}"); OPT=--state-out; fi
  if [ $have_dev = 1 ]; then
    refuse "$which device" "is a device" "${CMD[@]}" $OPT "$W/dev"
    [ -c "$W/dev" ] && ok || bad "$which: the device node was replaced"
  fi
  refuse "$which link to a file" "symbolic link" "${CMD[@]}" $OPT "$W/lnk-file"
  refuse "$which link to a folder" "symbolic link" "${CMD[@]}" $OPT "$W/lnk-dir"
  refuse "$which dangling link" "symbolic link" "${CMD[@]}" $OPT "$W/dangling"
  refuse "$which folder" "is a folder" "${CMD[@]}" $OPT "$W/dir"
  refuse "$which FIFO" "is a FIFO" "${CMD[@]}" $OPT "$W/fifo"
  refuse "$which trailing slash (new)" "cannot end in '/'" "${CMD[@]}" $OPT "$W/new.out/"
  refuse "$which trailing slash (file)" "cannot end in '/'" "${CMD[@]}" $OPT "$W/target/"
  refuse "$which missing folder" "does not exist" "${CMD[@]}" $OPT "$W/nodir/x.out"
  refuse "$which under a file" "not a folder" "${CMD[@]}" $OPT "$W/target/x.out"
  refuse "$which empty name" "empty file name" "${CMD[@]}" $OPT ""
done
[ "$(cat "$W/target")" = keep ] && ok || bad "the link's target changed"

# --------------------------------------------- folder outputs (run and report)
for which in run report; do
  if [ $which = run ]; then CMD=("${RUN[@]}"); else CMD=("$LOWP" report --quick); fi
  if [ $have_dev = 1 ]; then
    refuse "$which device" "is a device" "${CMD[@]}" --out "$W/dev"
    [ -c "$W/dev" ] && ok || bad "$which: the device node was replaced"
  fi
  refuse "$which link to a folder" "symbolic link" "${CMD[@]}" --out "$W/lnk-dir"
  refuse "$which link to a folder, slash" "symbolic link" "${CMD[@]}" --out "$W/lnk-dir/"
  refuse "$which link to a file" "symbolic link" "${CMD[@]}" --out "$W/lnk-file"
  refuse "$which regular file" "is a file, not a folder" "${CMD[@]}" --out "$W/target"
  refuse "$which regular file, slash" "is a file, not a folder" "${CMD[@]}" "--out=$W/target/"
  refuse "$which FIFO" "is a FIFO" "${CMD[@]}" --out "$W/fifo"
  refuse "$which user folder" "lowp did not make" "${CMD[@]}" --out "$W/user"
  refuse "$which user folder, slash" "lowp did not make" "${CMD[@]}" --out "$W/user/"
  refuse "$which under a file" "path is not a folder" "${CMD[@]}" --out "$W/target/x"
  refuse "$which root" "not '/'" "${CMD[@]}" --out /
  refuse "$which dot" "not '/'" "${CMD[@]}" --out "$W/dir/."
  refuse "$which empty" "empty folder name" "${CMD[@]}" --out=
done

# ------------------------------------------------- unwritable folder (as nobody)
chmod 755 "$T"
mkdir -p "$W/ro" && chmod 555 "$W/ro"
AS=()
if [ "$(id -u)" -eq 0 ]; then
  if setpriv --reuid=65534 --regid=65534 --clear-groups "$LOWP" --help >/dev/null 2>&1; then
    AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  else AS=(none); fi
fi
if [ "${AS[0]:-}" != none ]; then
  chmod 755 "$W"
  refuse "run unwritable folder" "cannot create" "${AS[@]}" "${RUN[@]}" --out "$W/ro/x"
  refuse "gemm unwritable folder" "not writable" "${AS[@]}" "${GEMM[@]}" --out-exact "$W/ro/c.npy"
  refuse "scaler unwritable folder" "not writable" "${AS[@]}" "${SCALER[@]}" --state-out "$W/ro/s.json"
  # issue 19: the folder made read-only during the run (by a stand-in
  # gnuplot, so the moment is certain): no temporary left in it, its mode
  # put back
  mkdir -p "$S/robin" "$W/rod" && chmod 755 "$W/rod"
  [ "$(id -u)" -eq 0 ] && chown 65534:65534 "$W/rod"
  printf '#!/bin/sh\n[ "$1" = --version ] && exit 0\nchmod a-w "$RO_DIR"\nexit 1\n' >"$S/robin/gnuplot"
  chmod 755 "$S" "$S/robin/gnuplot" "$S/robin"
  RO_DIR="$W/rod" PATH="$S/robin:$PATH" "${AS[@]}" "${RUN[@]}" --out "$W/rod/out" >"$S/out" 2>"$S/err"; rc=$?
  left=$(ls -A "$W/rod")
  [ $rc -eq 2 ] && [ -z "$left" ] && [ "$(stat -c %a "$W/rod")" = 555 ] && ok ||
    bad "run, folder made read-only mid-run: exit $rc, left '$left', mode $(stat -c %a "$W/rod"): $(cat "$S/err")"
  chmod 755 "$W/rod" && rmdir "$W/rod"
else
  skipped=$((skipped + 4)); echo "skip: unwritable-folder cases, read-only mid-run (root without setpriv)"
fi

# -------------------------------------- accepted: new, empty, lowp's own, slashes
"${RUN[@]}" --out "$W/new/deeper/" >"$S/out" 2>"$S/err" && ok || bad "run into new parents: $(cat "$S/err")"
[ -s "$W/new/deeper/results.json" ] && [ -s "$W/new/deeper/values.png" ] && ok || bad "new output incomplete"
head -1 "$W/new/deeper/.lowp-output" | grep -q '^lowp output folder' && ok || bad "marker's first line"
grep -qx 'results.json' "$W/new/deeper/.lowp-output" && ok || bad "marker lists results.json"
mkdir "$W/empty"
"${RUN[@]}" --out "$W/empty" >/dev/null 2>"$S/err" && [ -s "$W/empty/results.json" ] && ok || bad "empty folder: $(cat "$S/err")"
echo stale >"$W/new/deeper/values.csv" # lowp's own file, edited: replaced
"${RUN[@]}" --out="$W/new/deeper" >/dev/null 2>"$S/err" && ok || bad "replace own output: $(cat "$S/err")"
grep -q stale "$W/new/deeper/values.csv" && bad "own output not replaced" || ok
# a 250-character name leaves no room for a ".tmp.PID.N" suffix: still works, twice
long="$(printf 'n%.0s' $(seq 250))"
"${RUN[@]}" --out "$W/$long" >/dev/null 2>"$S/err" && "${RUN[@]}" --out "$W/$long" >/dev/null 2>>"$S/err" &&
  [ -s "$W/$long/results.json" ] && ok || bad "long folder name: $(cat "$S/err")"
"${GEMM[@]}" --out-exact "$W/f${long:1}" >/dev/null 2>"$S/err" && "${GEMM[@]}" --out-exact "$W/d$long" >/dev/null 2>>"$S/err" &&
  [ -s "$W/d$long" ] && ok || bad "long file name: $(cat "$S/err")"
no_temps "accepted outputs"
# an extra file in lowp's folder is refused (and left alone)
echo "my notes" >"$W/new/deeper/notes.txt"
refuse "run lowp folder with notes.txt" "holds 'notes.txt', which lowp did not write" "${RUN[@]}" --out "$W/new/deeper"
rm "$W/new/deeper/notes.txt"; mkdir "$W/new/deeper/sub"
refuse "run lowp folder with sub/" "holds 'sub/'" "${RUN[@]}" --out "$W/new/deeper/"
rmdir "$W/new/deeper/sub"
# a forged marker does not make a user folder lowp's
printf 'lowp output folder\nresults.json\n' >"$W/user/.lowp-output"
refuse "run forged marker" "holds 'notes.txt'" "${RUN[@]}" --out "$W/user"
rm "$W/user/.lowp-output"

# ------------------------------------------------ same bytes whatever the name
"${RUN[@]}" --out "$W/other name" >/dev/null 2>&1
for f in values.gp density.gp .lowp-output results.json; do
  cmp -s "$W/new/deeper/$f" "$W/other name/$f" && ok || bad "$f differs between output folders"
done
grep -q -e 'tmp\.[0-9]' -e deeper "$W/new/deeper/values.gp" && bad ".gp names its folder" || ok

# ------------------------------------------------------------ modes and umask
for um in 022 077; do
  rm -rf "$W/m$um" "$W/m$um.npy" "$W/m$um.json"
  (umask $um; "${RUN[@]}" --out "$W/m$um" >/dev/null 2>&1;
   "${GEMM[@]}" --out-exact "$W/m$um.npy" >/dev/null 2>&1;
   "${SCALER[@]}" --state-out "$W/m$um.json" >/dev/null 2>&1)
  fm=$(printf '%o' $((0666 & ~0$um))); dm=$(printf '%o' $((0777 & ~0$um)))
  [ "$(stat -c %a "$W/m$um")" = "$dm" ] && ok || bad "umask $um: folder mode $(stat -c %a "$W/m$um"), want $dm"
  for f in "$W/m$um/results.json" "$W/m$um/values.png" "$W/m$um/.lowp-output" "$W/m$um.npy" "$W/m$um.json"; do
    [ "$(stat -c %a "$f" 2>/dev/null)" = "$fm" ] && ok || bad "umask $um: $f mode $(stat -c %a "$f" 2>&1), want $fm"
  done
done
# replacing a file keeps its mode, as fopen would
echo old >"$W/keep.npy"; chmod 640 "$W/keep.npy"
(umask 022; "${GEMM[@]}" --out-exact "$W/keep.npy" >/dev/null 2>&1)
[ "$(stat -c %a "$W/keep.npy")" = 640 ] && ! grep -q old "$W/keep.npy" && ok || bad "replaced file: mode $(stat -c %a "$W/keep.npy")"
no_temps "modes"

# ------------------------------------------------------------ hostile names
cd "$S" || exit 1
names=("My Reports" "it's" 'a"b' 'x$(touch INJECTED1)' 'y`touch INJECTED2`' 'a;b|c&d' $'new\nline'
       '-dash' 'back\slash' '%s%n' "tab	here" 'é ü 中')
for n in "${names[@]}"; do
  "${RUN[@]}" --out "$W/h/$n" >"$S/out" 2>"$S/err"; rc=$?
  [ $rc -eq 0 ] && [ -s "$W/h/$n/values.png" ] && [ -s "$W/h/$n/density.svg" ] && ok ||
    bad "run --out '$n': exit $rc, $(cat "$S/err")"
done
# a report under a hostile name: the fixture's (cli_harness.bash, quick_report; --no-svg), copied
# under the same name here, since what follows changes it
quick_report
R="$W/h/$QR_NAME"
cp -a "$QR" "$R" || bad "copying the quick report"
rc=$QR_RC
[ $rc -eq 0 ] && [ -s "$R/index.html" ] && [ -s "$R/formats/values.png" ] && [ -s "$R/error-growth/results.json" ] && ok ||
  bad "report --out hostile: exit $rc, $(tail -3 "$QR_ERR")"
[ "$(grep -c 'lowp run .*gnuplot' "$QR_ERR")" -eq 0 ] && ok || bad "report printed gnuplot failures"
# one experiment of a report re-run into it: the report folder stays lowp's
"${RUN[@]}" --out "$R/formats" >/dev/null 2>"$S/err" && ok || bad "run into a report's subfolder: $(cat "$S/err")"
echo "my notes" >"$R/formats/notes.txt"
refuse "run over a report holding a user file" "holds 'formats/notes.txt'" "${RUN[@]}" --out "$R"
rm "$R/formats/notes.txt"
"${RUN[@]}" --out "$R" >/dev/null 2>"$S/err" && [ ! -e "$R/index.html" ] && [ -s "$R/values.png" ] && ok ||
  bad "replace a report folder: $(cat "$S/err")"
[ -z "$(find "$T" / -maxdepth 1 -name 'INJECTED*' 2>/dev/null)" ] && ok || bad "a name injected a command"
no_temps "hostile names"
cd - >/dev/null || exit 1

# ---------------------------------- an output is no input and no other output
# issue 19: by device and inode, or the resolved path of a file not there yet
/usr/bin/python3 -c "import numpy as np; np.save('$W/A.npy', np.ones((4,4),np.float16)); np.save('$W/B.npy', np.ones((4,4),np.float16))"
cat >"$W/s.json" <<'EOF'
{ "lowp_check": 1, "baseline": "s.base.json", "defaults": { "in": "fp16", "out": "fp32" },
  "checks": [ { "name": "a", "op": "dot", "subject": { "kernel": "dot_acc" }, "shape": {"k": 16},
                "rules": [ { "max_ulp": 64 }, { "baseline": "max_ulp", "growth": 2 } ] },
              { "name": "f", "op": "dot", "subject": { "kernel": "dot_acc" },
                "inputs": { "files": [ "A.npy", "B.npy" ] }, "rules": [ { "max_ulp": 64 } ] } ] }
EOF
sed 's/"s.base.json"/"s2.json"/' "$W/s.json" >"$W/s2.json"
"$LOWP" check "$W/s.json" --update-baseline >/dev/null 2>&1 || bad "the aliasing spec runs"
refuse "check --json onto the spec" "is the spec" "$LOWP" check "$W/s.json" --json "$W/s.json"
refuse "check --junit onto the spec (another name)" "is the spec" "$LOWP" check "$W/s.json" --junit "$W/../w/s.json"
refuse "check --json onto the baseline" "is the baseline" "$LOWP" check "$W/s.json" --json "$W/s.base.json"
refuse "check --update-baseline --json onto the baseline" "are the same file" "$LOWP" check "$W/s.json" --update-baseline --json "$W/s.base.json"
refuse "check: the baseline is the spec" "the baseline .* is the spec" "$LOWP" check "$W/s2.json" --update-baseline
refuse "check --json onto an input file" "is an input of check 'f'" "$LOWP" check "$W/s.json" --json "$W/B.npy"
refuse "check --junit r.out --json ./r.out (not there)" "are the same file" sh -c "cd '$W' && exec '$LOWP' check s.json --junit r.out --json ./r.out"
refuse "check --junit and --json, one absolute" "are the same file" sh -c "cd '$W' && exec '$LOWP' check s.json --junit r.out --json '$W/r.out'"
refuse "gemm --out-exact onto --a" "is --a" "$LOWP" gemm --a "$W/A.npy" --b "$W/B.npy" --out-exact "$W/A.npy"
refuse "gemm --out-exact onto --b (another name)" "is --b" "$LOWP" gemm --a "$W/A.npy" --b "$W/B.npy" --out-exact "$W/./B.npy"
"${SCALER[@]}" --state-out "$S/st.json" >/dev/null 2>&1 && cp "$S/st.json" "$W/st.json"
refuse "scaler --state-out onto --state-in" "is --state-in" "${SCALER[@]}" --state-in "$W/st.json" --state-out "$W/st.json"
ln -s nowhere "$W/dangling-json"
refuse "check --json onto a dangling link" "is a symbolic link" "$LOWP" check "$W/s.json" --json "$W/dangling-json"
rm -f "$W/dangling-json" "$W/A.npy" "$W/B.npy" "$W"/s*.json "$W/st.json"

# ------------------------------------------------- failure publishes nothing
mkdir -p "$S/bin"
printf '#!/bin/sh\n[ "$1" = --version ] && exit 0\necho "fake gnuplot fails" >&2\nexit 1\n' >"$S/bin/gnuplot"
chmod +x "$S/bin/gnuplot"
STRICT=0
PATH="$S/bin:$PATH" refuse "run, gnuplot fails: nothing published" "gnuplot failed" "${RUN[@]}" --out "$W/gp-fails"
PATH="$S/bin:$PATH" refuse "run, gnuplot fails: old output kept" "nothing was published" "${RUN[@]}" --out "$W/empty"
mkdir -p "$S/vec/A100/fp16" && cp "$(dirname "$0")/../data/tensor-core-vectors/A100/fp16/a_"* "$S/vec/A100/fp16/"
refuse "tensor-core-models without d_ files" "no d_GPU" "$LOWP" run tensor-core-models "--vectors=$S/vec" --out "$W/tc"
# report: stops at the first experiment that exits 2, publishes nothing
snap before
PATH="$S/bin:$PATH" "$LOWP" report --quick --out "$W/rep-fails" >"$S/out" 2>"$S/err"; rc=$?
snap after
[ $rc -eq 2 ] && [ "$(grep -vc '^lowp report: \[' "$S/err")" -eq 1 ] && tail -1 "$S/err" | grep -q "gnuplot failed" &&
  same_snap "$before" "$after" && ok || bad "report, gnuplot fails: exit $rc, $(cat "$S/err")"
STRICT=1
no_temps "failures"

echo "cli_outputs: $pass passed, $fail failed, $skipped skipped"
[ $fail -eq 0 ]
