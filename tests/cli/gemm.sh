#!/bin/bash
# gemm.sh -- command-line tests of `lowp gemm` and `lowp dot`: results checked
# against exact rational arithmetic in Python (fractions, no numpy), the
# --out-exact file bit for bit, determinism across thread counts, and every
# kind of bad input (exit 2, one clear message, no output file left).
# Run: bash tests/cli/gemm.sh path/to/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

# expect_fail NAME PATTERN CMD...: exit status 2 and PATTERN in stderr
expect_fail() {
  local name=$1 pat=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc, want 2"; return; fi
  if ! grep -qi -- "$pat" "$T/err"; then bad "$name: message lacks '$pat': $(cat "$T/err")"; return; fi
  if [ "$(wc -l <"$T/err")" -gt 2 ]; then bad "$name: more than one message"; return; fi
  ok
}

# ---------------------------------------------------------------- inputs
# npy writer and exact checker in plain Python (struct + fractions)
cat >"$T/npy.py" <<'PY'
import struct, sys, random, math
from fractions import Fraction

def write(path, shape, vals, descr='<f8'):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ', '.join(str(s) for s in shape) + (',' if len(shape) == 1 else ''))
    pad = (64 - (10 + len(hdr) + 1) % 64) % 64
    hdr = hdr + ' ' * pad + '\n'
    code = {'<f8': 'd', '<f4': 'f', '<f2': 'e', '|u1': 'B'}[descr]
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
        f.write(struct.pack('<%d%s' % (len(vals), code), *vals))

def read(path):
    b = open(path, 'rb').read()
    assert b[:8] == b'\x93NUMPY\x01\x00'
    hl = struct.unpack('<H', b[8:10])[0]
    hdr = b[10:10 + hl].decode()
    assert "'descr': '<f8'" in hdr and 'False' in hdr
    data = b[10 + hl:]
    return list(struct.unpack('<%dd' % (len(data) // 8), data))

def gen(seed, m, k, n):
    # adversarial binary64 data: exponents across the whole range,
    # subnormals, and products that cancel in pairs
    r = random.Random(seed)
    def val():
        e = r.choice([r.randint(-1074, -1000), r.randint(-300, 300), r.randint(900, 1000)])
        return math.ldexp(r.random() + 0.5, e) * r.choice([-1, 1])
    a = [val() for _ in range(m * k)]
    b = [val() for _ in range(k * n)]
    for i in range(m):                     # a[i][1] b[1][j] = -a[i][0] b[0][j]
        a[i * k + 1] = -a[i * k]
    for j in range(n):
        b[n + j] = b[j]
    return a, b

if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'gen':
        seed, m, k, n = map(int, sys.argv[2:6])
        a, b = gen(seed, m, k, n)
        write(sys.argv[6], (m, k), a)
        write(sys.argv[7], (k, n), b)
    elif cmd == 'check':                   # exact C = A B, rounded once (Fraction -> float)
        seed, m, k, n = map(int, sys.argv[2:6])
        a, b = gen(seed, m, k, n)
        c = read(sys.argv[6])
        bad = 0
        for i in range(m):
            for j in range(n):
                s = sum(Fraction(a[i * k + l]) * Fraction(b[l * n + j]) for l in range(k))
                try:
                    want = float(s)
                except OverflowError:
                    want = math.inf if s > 0 else -math.inf
                if struct.pack('<d', want) != struct.pack('<d', c[i * n + j]):
                    if not (want == 0 and c[i * n + j] == 0):
                        bad += 1
                        print('C[%d][%d] lowp %r exact %r' % (i, j, c[i * n + j], want))
        sys.exit(1 if bad else 0)
    elif cmd == 'write':                   # write PATH DESCR SHAPE... -- VALUES...
        path, descr = sys.argv[2], sys.argv[3]
        rest = sys.argv[4:]
        sep = rest.index('--')
        shape = [int(s) for s in rest[:sep]]
        vals = [float(v) if descr != '|u1' else int(v) for v in rest[sep + 1:]]
        write(path, shape, vals, descr)
PY
PY="python3 $T/npy.py"

# ------------------------------------------------------- normal operation
if "$LOWP" gemm --m 8 --n 6 --k 300 --in fp16 --acc fp32 --dist normal --seed 3 >"$T/o" 2>"$T/e" &&
   grep -q "backward" "$T/o" && grep -q "bound gamma_300 (recursive" "$T/o" && grep -q "worst element" "$T/o"; then ok
else bad "plain gemm: $(cat "$T/e")"; fi

"$LOWP" gemm --m 8 --n 6 --k 300 --in bf16 --acc bf16 --dist cancel --seed 3 --json >"$T/j1" 2>"$T/e" || bad "json run"
if python3 -c "
import json,sys; r=json.load(open('$T/j1'))
for k in ('errors','bounds','worst','seed','m','n','k'): assert k in r, k
for k in ('max_abs','mean_abs','max_rel','max_ulp','max_backward'): assert k in r['errors'], k
assert 'computed_hex' in r['worst'] and 'exact_bits' in r['worst']
b=r['bounds']
# bf16 accumulation of 300 terms: k u > 1, the deterministic bound is vacuous
assert b['vacuous'] is True and b['gamma_k'] == 'inf' and 'gamma_k_used' not in b, b
assert b['prob_used'] <= 1.0
"; then ok; else bad "json keys or the deterministic bound does not hold"; fi
# a bound that exists holds, and follows the order given
"$LOWP" gemm --m 8 --n 6 --k 300 --in fp16 --acc fp32 --order pairwise --prod fp32 --json >"$T/j2" 2>"$T/e" || bad "pairwise json run"
if python3 -c "
import json; b=json.load(open('$T/j2'))['bounds']
assert b['vacuous'] is False and 0 < b['gamma_k_used'] <= 1.0, b
assert b['deterministic'].startswith('gamma_9 (pairwise'), b['deterministic']
"; then ok; else bad "pairwise bound: $(cat "$T/j2" | grep -A3 bounds)"; fi

# determinism: same bytes whatever the thread count
"$LOWP" gemm --m 9 --n 7 --k 200 --in fp16 --acc fp16 --dist spread --seed 5 --threads 1 --json --out-exact "$T/t1.npy" >"$T/a1" 2>&1
"$LOWP" gemm --m 9 --n 7 --k 200 --in fp16 --acc fp16 --dist spread --seed 5 --threads 2 --json --out-exact "$T/t2.npy" >"$T/a2" 2>&1
if cmp -s "$T/t1.npy" "$T/t2.npy" && diff <(grep -v time_ "$T/a1" | grep -v out_exact) <(grep -v time_ "$T/a2" | grep -v out_exact) >/dev/null; then ok
else bad "results depend on the thread count"; fi

# no --in: the files' dtype is the input format (an fp32 .npy is fp32 data; it was rounded to fp16);
# A <f4 and B <f2: the wider, fp32
$PY write "$T/a32.npy" '<f4' 1 2 -- 0.1 0.3
$PY write "$T/b32.npy" '<f4' 2 1 -- 1 1
$PY write "$T/b16.npy" '<f2' 2 1 -- 1 1
"$LOWP" gemm --a "$T/a32.npy" --b "$T/b32.npy" --out-exact "$T/c32.npy" >"$T/o" 2>"$T/e" &&
  grep -q "inputs fp32 (from .npy" "$T/o" &&
  python3 -c "
import struct, sys; d = open(sys.argv[1], 'rb').read(); want = struct.unpack('<f', struct.pack('<f', 0.1))[0] + struct.unpack('<f', struct.pack('<f', 0.3))[0]
assert struct.unpack('<d', d[-8:])[0] == want, d[-8:]" "$T/c32.npy" && ok || bad "fp32 .npy without --in: $(cat "$T/o" "$T/e")"
"$LOWP" gemm --a "$T/a32.npy" --b "$T/b16.npy" >"$T/o" 2>"$T/e" && grep -q "inputs fp32 (from .npy" "$T/o" && ok ||
  bad "<f4 and <f2 without --in: $(cat "$T/o" "$T/e")"
"$LOWP" gemm --a "$T/a32.npy" --b "$T/b32.npy" --in fp16 >"$T/o" 2>"$T/e" && grep -q "inputs fp16 (from .npy" "$T/o" && ok ||
  bad "--in fp16 on fp32 files: $(cat "$T/o" "$T/e")"

# the exact result written, against exact rational arithmetic, bit for bit
$PY gen 11 5 40 4 "$T/A.npy" "$T/B.npy"
if "$LOWP" gemm --a "$T/A.npy" --b "$T/B.npy" --in fp64 --acc fp64 --out-exact "$T/C.npy" >"$T/o" 2>"$T/e" &&
   $PY check 11 5 40 4 "$T/C.npy"; then ok
else bad "--out-exact differs from exact rational arithmetic: $(cat "$T/e")"; fi
ls "$T"/C.npy.tmp.* >/dev/null 2>&1 && bad "temporary file left behind" || ok

# dot with 1-D files
$PY write "$T/x.npy" '<f4' 3 -- 1e30 1 -1e30
$PY write "$T/y.npy" '<f4' 3 -- 1 3 1
if "$LOWP" dot --a "$T/x.npy" --b "$T/y.npy" --in fp32 --acc fp32 --json --out-exact "$T/d.npy" >"$T/o" 2>"$T/e" &&
   python3 -c "
import struct; b=open('$T/d.npy','rb').read(); assert struct.unpack('<d', b[-8:])[0] == 3.0
import json; r=json.load(open('$T/o')); assert r['k'] == 3"; then ok
else bad "dot from .npy: $(cat "$T/e")"; fi
# u1 files hold fp8 bit patterns of --in (0x38 = 1.0 in e4m3)
$PY write "$T/u.npy" '|u1' 2 -- 56 56
if "$LOWP" dot --a "$T/u.npy" --b "$T/u.npy" --in e4m3 --acc fp32 --json >"$T/o" 2>"$T/e" &&
   python3 -c "import json; r=json.load(open('$T/o')); assert r['worst']['exact'] == 2.0"; then ok
else bad "u1 e4m3 input: $(cat "$T/e")"; fi

# ------------------------------------------------------------- bad input
$PY write "$T/A23.npy" '<f8' 2 3 -- 1 2 3 4 5 6
$PY write "$T/B42.npy" '<f8' 4 2 -- 1 2 3 4 5 6 7 8
expect_fail "mismatched shapes" "mismatched shapes" "$LOWP" gemm --a "$T/A23.npy" --b "$T/B42.npy" --out-exact "$T/no1.npy"
[ -e "$T/no1.npy" ] && bad "output left after mismatched shapes" || ok
python3 -c "
import struct
h=\"{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\"; h=h+' '*(64-(10+len(h)+1)%64)+'\n'
open('$T/i4.npy','wb').write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h.encode()+b'\0'*24)
h2=h.replace('<i4','<f4').replace('False','True ')
open('$T/fo.npy','wb').write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h2))+h2.encode()+b'\0'*24)"
expect_fail "wrong dtype" "unsupported" "$LOWP" gemm --a "$T/i4.npy" --b "$T/B42.npy"
expect_fail "fortran order" "fortran" "$LOWP" gemm --a "$T/fo.npy" --b "$T/B42.npy"
printf '\x93NUMPY\x01\x00\x76\x00{garbage' >"$T/corrupt.npy"
expect_fail "corrupt header" "corrupt" "$LOWP" gemm --a "$T/corrupt.npy" --b "$T/B42.npy"
head -c 40 "$T/A23.npy" >"$T/trunc.npy"
expect_fail "truncated header" "truncated" "$LOWP" gemm --a "$T/trunc.npy" --b "$T/B42.npy"
head -c 100 "$T/A23.npy" >"$T/truncdata.npy"
expect_fail "truncated data" "truncated" "$LOWP" gemm --a "$T/truncdata.npy" --b "$T/B42.npy"
expect_fail "not a file" "cannot open" "$LOWP" gemm --a "$T/missing.npy" --b "$T/B42.npy"
expect_fail "u1 with a 16-bit --in" "8-bit" "$LOWP" dot --a "$T/u.npy" --b "$T/u.npy" --in fp16
expect_fail "sizes too large" "memory" "$LOWP" gemm --m 2000000 --n 2000000 --k 2000000 --out-exact "$T/no2.npy"
[ -e "$T/no2.npy" ] && bad "output left after refusing sizes" || ok
expect_fail "NaN generator parameter" "NaN" "$LOWP" gemm --m 2 --n 2 --k 2 --dist loguniform:nan:1
expect_fail "negative generator parameter" "lo <= hi" "$LOWP" dot --n 4 --dist loguniform:-1:1
expect_fail "unknown distribution" "expected uniform01" "$LOWP" dot --n 4 --dist gauss
expect_fail "unwritable --out-exact" "cannot create" "$LOWP" gemm --m 2 --n 2 --k 2 --out-exact /nonexistent-dir/c.npy
expect_fail "missing sizes" "give --m" "$LOWP" gemm --m 2 --n 2
expect_fail "unknown option" "unknown option" "$LOWP" gemm --m 2 --n 2 --k 2 --bogus
expect_fail "bad format" "format" "$LOWP" gemm --m 2 --n 2 --k 2 --in fp17
expect_fail "only --a" "both --a and --b" "$LOWP" gemm --a "$T/A23.npy"
ls "$T"/*.tmp.* >/dev/null 2>&1 && bad "temporary files left behind" || ok

# progress of the exact reference: on a terminal (script(1) gives one), and
# nothing of it when stderr is a file
if command -v script >/dev/null; then
  script -qec "$LOWP gemm --m 300 --n 300 --k 300 --in fp32 --acc fp32 >/dev/null" /dev/null >"$T/tty.txt" 2>&1
  tr '\r' '\n' <"$T/tty.txt" | grep -q "exact reference: 100%" && ok || bad "no progress on a terminal: $(head -c 300 "$T/tty.txt")"
else
  bad "script(1) missing (util-linux / bsdutils)"
fi
"$LOWP" gemm --m 300 --n 300 --k 300 --in fp32 --acc fp32 >/dev/null 2>"$T/notty.txt"
[ -s "$T/notty.txt" ] && bad "progress written to a file: $(head -c 200 "$T/notty.txt")" || ok

echo "cli gemm: $pass passed, $fail failed"
[ $fail -eq 0 ]
