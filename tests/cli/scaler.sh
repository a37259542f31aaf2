#!/usr/bin/env bash
# scaler.sh -- `lowp scaler`: outputs, state files, and every bad input -> exit 2
# Run: bash tests/cli/scaler.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

# expect_out DESC EXPECTED_LAST_LINE_FIELDS -- ARGS: run, check exit 0 and
# that the last step line's scale and tracker columns match
expect_last() {
  local desc=$1 scale=$2 tracker=$3; shift 3
  local out rc
  out=$("$LOWP" scaler "$@" 2>"$T/err"); rc=$?
  local last; last=$(printf '%s\n' "$out" | tail -n 1)
  local s t; s=$(echo "$last" | awk '{print $4}'); t=$(echo "$last" | awk '{print $6}')
  if [ $rc -eq 0 ] && [ "$s" = "$scale" ] && [ "$t" = "$tracker" ]; then ok
  else bad "$desc: rc=$rc last line '$last' (want scale $scale tracker $tracker) $(cat "$T/err")"; fi
}

# expect_fail DESC -- ARGS: exit 2, a message naming 'lowp scaler', no stdout
# step lines, and no --state-out file left behind
expect_fail() {
  local desc=$1; shift
  rm -f "$T/out.json" "$T/out.json.tmp"
  "$LOWP" scaler "$@" >"$T/stdout" 2>"$T/err"; local rc=$?
  if [ $rc -eq 2 ] && grep -q "lowp scaler" "$T/err" && [ ! -e "$T/out.json" ] && [ ! -e "$T/out.json.tmp" ] &&
     [ "$(wc -l <"$T/err")" -ge 1 ]; then ok
  else bad "$desc: rc=$rc stderr '$(cat "$T/err")' out.json $( [ -e "$T/out.json" ] && echo exists || echo absent)"; fi
}

# --- PyTorch scenarios (test_grad_scaling_update_scale; _run_scaling_case)
expect_last "update_scale" 2 0 --events ok,ok,inf --init 4 --growth 2 --backoff 0.25 --interval 2
expect_last "run_scaling_case" 512 0 --events ok,ok,inf,ok --init 128 --interval 1
expect_last "defaults 1999" 65536 1999 --events 'ok*1999'
expect_last "defaults 2000" 131072 0 --events 'ok*2000'
expect_last "no growth past fp32" 1.70141183e+38 0 --events ok --init 0x1p127 --interval 1
expect_last "genesis clamp" 1 0 --events 'inf*40' --policy genesis
expect_last "pytorch no clamp" 5.96046448e-08 0 --events 'inf*40' --policy pytorch
expect_last "mlx quirk" 128 0 --events inf --init 128 --interval 1 --policy mlx
expect_last "mlx-py" 64 0 --events inf --init 128 --interval 1 --policy mlx-py
expect_last "nan and -inf are found-inf" 16384 0 --events nan,-inf
expect_last "non-power-of-two backoff" 2.4000001 0 --events inf --init 3 --backoff 0.8

# --- state files: save, resume == uninterrupted
"$LOWP" scaler --events 'ok*1500' --state-out "$T/s.json" >/dev/null 2>&1 || bad "state-out run failed"
[ -s "$T/s.json" ] && grep -q '"_growth_tracker":.*1500' "$T/s.json" && ok || bad "state file content: $(cat "$T/s.json" 2>/dev/null)"
expect_last "resume" 131072 0 --events 'ok*500' --state-in "$T/s.json"
# tracker 1500 loaded with interval 4: == never matches, the tracker counts on
expect_last "resume with override (== semantics)" 65536 1501 --events ok --state-in "$T/s.json" --interval 4
# json output parses and has stable keys (needs python3 to parse; skipped without it)
if ! command -v python3 >/dev/null 2>&1; then ok
elif "$LOWP" scaler --events ok,inf --json >"$T/j" 2>/dev/null &&
   python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["steps"]; assert d["policy"]=="pytorch"; assert s[1]["skipped"] and s[1]["scale"]==32768 and s[0]["tracker"]==1; assert d["final"]["scale"]==32768' "$T/j"
then ok; else bad "--json output: $(head -c 300 "$T/j")"; fi

# --- bad input: exit 2, clear message, no file left
echo '{"scale": 1, "growth_factor": 2' >"$T/trunc.json"
echo '[1,2,3]' >"$T/array.json"
echo '{"scale": 1}' >"$T/missing.json"
echo '{"scale": 1, "growth_factor": 2, "backoff_factor": 0.5, "growth_interval": -3, "_growth_tracker": 0}' >"$T/neg.json"
: >"$T/empty.json"
expect_fail "unknown event" --events ok,oops --state-out "$T/out.json"
expect_fail "empty events" --events '' --state-out "$T/out.json"
expect_fail "trailing comma" --events ok, --state-out "$T/out.json"
expect_fail "double comma" --events ok,,inf --state-out "$T/out.json"
expect_fail "bad repeat" --events 'ok*0' --state-out "$T/out.json"
expect_fail "bad repeat text" --events 'ok*x' --state-out "$T/out.json"
expect_fail "missing events" --state-out "$T/out.json"
expect_fail "zero growth" --events ok --growth 0 --state-out "$T/out.json"
expect_fail "negative growth" --events ok --growth -2 --state-out "$T/out.json"
expect_fail "zero backoff" --events ok --backoff 0 --state-out "$T/out.json"
expect_fail "negative backoff" --events ok --backoff -0.5 --state-out "$T/out.json"
expect_fail "nan backoff" --events ok --backoff nan --state-out "$T/out.json"
expect_fail "zero interval" --events ok --interval 0 --state-out "$T/out.json"
expect_fail "negative interval" --events ok --interval -5 --state-out "$T/out.json"
expect_fail "fractional interval" --events ok --interval 2.5 --state-out "$T/out.json"
expect_fail "zero init" --events ok --init 0 --state-out "$T/out.json"
expect_fail "negative init" --events ok --init -1 --state-out "$T/out.json"
expect_fail "init overflowing fp32" --events ok --init 1e39 --state-out "$T/out.json"
expect_fail "unknown policy" --events ok --policy tf --state-out "$T/out.json"
expect_fail "unknown option" --events ok --bogus --state-out "$T/out.json"
expect_fail "option without argument" --events
expect_fail "state file missing" --events ok --state-in "$T/nope.json" --state-out "$T/out.json"
expect_fail "state file truncated" --events ok --state-in "$T/trunc.json" --state-out "$T/out.json"
expect_fail "state file array" --events ok --state-in "$T/array.json" --state-out "$T/out.json"
expect_fail "state file missing keys" --events ok --state-in "$T/missing.json" --state-out "$T/out.json"
expect_fail "state file negative interval" --events ok --state-in "$T/neg.json" --state-out "$T/out.json"
expect_fail "state file empty" --events ok --state-in "$T/empty.json" --state-out "$T/out.json"
expect_fail "state file is a directory" --events ok --state-in "$T" --state-out "$T/out.json"
expect_fail "unwritable state-out folder" --events ok --state-out "$T/no/such/dir/s.json"
if "$LOWP" scaler --events ok --state-out "$T/no/such/dir/s.json" 2>/dev/null | grep -q .; then bad "printed steps before failing on --state-out"; else ok; fi
expect_fail "init with state-in" --events ok --init 2 --state-in "$T/s.json" --state-out "$T/out.json"

echo "cli scaler: $pass passed, $fail failed"
[ $fail -eq 0 ]
