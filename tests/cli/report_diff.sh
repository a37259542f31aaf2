#!/usr/bin/env bash
# report_diff.sh -- `lowp report --diff OTHER`: two reports compared, differences in rows that depend on the
# machine (results.json "environment_dependent") expected, any other unexpected (exit 1), bad input exit 2;
# and the environment manifest every results.json carries.
# Run: bash tests/cli/report_diff.sh build/lowp
. "$(dirname "$0")/cli_harness.bash" # LOWP SRC T ok bad skip finish expect_exit2

# the manifest: what a run executed on, apart from the byte-stable rest (formats at two of its formats:
# 0.27 s of CPU a run, against 1.37 s drawing all of them)
"$LOWP" run formats --quick --formats=e4m3,fp16 --out "$T/a/formats" >/dev/null 2>&1 || bad "run formats"
python3 - "$T/a/formats/results.json" <<'EOF' && ok || bad "results.json lacks parts of the environment manifest"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["environment"]
for k in ("date_utc", "git_revision", "git_dirty", "cpu", "openblas", "libraries", "compiler", "compile_flags",
          "build_type", "gnuplot", "os"):
    assert k in e, k
assert e["cpu"]["model"] and isinstance(e["cpu"]["isa_flags"], list)
assert e["openblas"]["config"].startswith("OpenBLAS") and e["openblas"]["core"]
for k in ("mpfr", "gmp", "glibc"):
    assert e["libraries"][k][0].isdigit(), k
assert "-ffp-contract=off" in e["compile_flags"]
assert isinstance(d["environment_dependent"], list)
EOF
SOURCE_DATE_EPOCH=86400 "$LOWP" run formats --quick --formats=e4m3,fp16 --out "$T/b/formats" >/dev/null 2>&1 || bad "run formats again"
grep -q '"date_utc":[[:space:]]*"1970-01-02"' "$T/b/formats/results.json" && ok || bad "SOURCE_DATE_EPOCH not honoured"
"$LOWP" run matmul-precision --help >/dev/null 2>&1 # (the experiment exists in this build)
echo '<html></html>' >"$T/a/index.html"
cp "$T/a/index.html" "$T/b/index.html"

# two runs that differ only in their date: the same (the environment is listed, never a difference)
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d1" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^formats:$' "$T/d1" && grep -q '  the same' "$T/d1" && grep -q 'date_utc' "$T/d1" && ok ||
  bad "same runs: exit $rc: $(cat "$T/d1")"
"$LOWP" report --diff="$T/b" --out="$T/a" >/dev/null 2>&1 && ok || bad "--diff=OTHER --out=DIR"

# a machine-dependent row (OpenBLAS's sgemm in matmul-precision) differs: expected, exit 0
mk() { # mk DIR FP32 SGEMM: a matmul-precision results.json with a table and an answer naming both kernels
  mkdir -p "$1/matmul-precision"
  cat >"$1/matmul-precision/results.json" <<EOF
{"header": {"experiment": "matmul-precision", "seed": 1},
 "environment": {"cpu": {"model": "$4"}},
 "environment_dependent": [{"match": "openblas", "why": "its kernel depends on the CPU"}],
 "results": {"answer": "At n = 1000 the error is cpu-fp32 $2. OpenBLAS's cblas_sgemm errs by $3; it grows like n^0.9.",
  "key_numbers": {"openblas-sgemm max error": $3, "cpu-fp32 max error": $2},
  "tables": [{"title": "t", "columns": ["kernel", "error"], "rows": [["cpu-fp32", $2], ["openblas-sgemm", $3]]}]}}
EOF
  printf 'kernel,error\ncpu-fp32,%s\nopenblas-sgemm,%s\n' "$2" "$3" >"$1/matmul-precision/errors.csv"
}
mk "$T/a" 0.000217 0.000101 "Intel Xeon"
mk "$T/b" 0.000217 0.0000799 "AMD EPYC"
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d2" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q 'expected: ' "$T/d2" && ! grep -q 'UNEXPECTED' "$T/d2" &&
  grep -q "cpu.model: \"Intel Xeon\" | \"AMD EPYC\"" "$T/d2" && ok || bad "openblas row: exit $rc: $(cat "$T/d2")"
n=$(grep -c 'expected: ' "$T/d2")
[ "$n" -ge 4 ] && ok || bad "expected 4 expected differences (answer, key, row, CSV line), got $n"

# any other number that differs: unexpected, exit 1, and said where
mk "$T/b" 0.000218 0.0000799 "AMD EPYC"
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d3" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q 'UNEXPECTED: .results.answer: At n = 1000 the error is cpu-fp32 0.000217' "$T/d3" &&
  grep -q 'UNEXPECTED: .results.tables\[0\].rows\[0\]\[1\]' "$T/d3" && grep -q 'UNEXPECTED: errors.csv:2' "$T/d3" &&
  grep -q 'UNEXPECTED: .results.key_numbers.cpu-fp32 max error' "$T/d3" && ok || bad "cpu-fp32 change: exit $rc: $(cat "$T/d3")"
# a file only one side has is a difference too
mk "$T/b" 0.000217 0.0000799 "AMD EPYC"
echo x >"$T/b/matmul-precision/extra.csv"
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d4" 2>&1
[ $? -eq 1 ] && grep -q 'UNEXPECTED: extra.csv' "$T/d4" && ok || bad "extra file not reported: $(cat "$T/d4")"
rm "$T/b/matmul-precision/extra.csv"

# a text's sentences: split at ". " outside parentheses (not at "; " nor after "Sec."), aligned between the runs, so
# a clause of the OpenBLAS sentence is expected with it, and a sentence one run adds shifts no other
mka() { # mka DIR ANSWER: a matmul-precision results.json whose answer is ANSWER
  mkdir -p "$1/matmul-precision"
  rm -f "$1/matmul-precision/errors.csv"
  printf '{"header": {"experiment": "matmul-precision"}, "environment_dependent": [{"match": "openblas", "why": "CPU"}], "results": {"answer": "%s"}}\n' "$2" >"$1/matmul-precision/results.json"
}
head="At n = 1000 cpu-fp32 errs by 0.000217."
mka "$T/a" "$head OpenBLAS's cblas_sgemm (OpenBLAS 0.3.21, core SkylakeX; one thread), errs by 0.000101 (Higham 2002, Sec. 4.2; Blanchard 2020); its error grows like n^0.92. The end."
mka "$T/b" "$head OpenBLAS's cblas_sgemm (OpenBLAS 0.3.21, core Prescott; one thread), errs by 0.000217 (Higham 2002, Sec. 4.2; Blanchard 2020); its error grows like n^1.19. The end."
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d5" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c 'expected: ' "$T/d5")" -eq 1 ] && ok || bad "a clause of the OpenBLAS sentence: exit $rc: $(cat "$T/d5")"
mka "$T/b" "$head OpenBLAS's kernel for this CPU adds in one chain. OpenBLAS's cblas_sgemm (OpenBLAS 0.3.21, core SkylakeX; one thread), errs by 0.000101 (Higham 2002, Sec. 4.2; Blanchard 2020); its error grows like n^0.92. The end."
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d6" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q 'expected:   .results.answer: (absent) | OpenBLAS.s kernel for this CPU adds in one chain. ' "$T/d6" &&
  [ "$(grep -c 'expected: ' "$T/d6")" -eq 1 ] && ok || bad "a sentence one run adds: exit $rc: $(cat "$T/d6")"
mka "$T/b" "$head OpenBLAS's cblas_sgemm (OpenBLAS 0.3.21, core SkylakeX; one thread), errs by 0.000101 (Higham 2002, Sec. 4.2; Blanchard 2020); its error grows like n^0.92. A new claim. The end."
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d7" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q 'UNEXPECTED: .results.answer: (absent) | A new claim. ' "$T/d7" &&
  [ "$(grep -c 'UNEXPECTED: ' "$T/d7")" -eq 1 ] && ok || bad "an added sentence without a match: exit $rc: $(cat "$T/d7")"
mk "$T/a" 0.000217 0.000101 "Intel Xeon"
mk "$T/b" 0.000217 0.0000799 "AMD EPYC"

# "when": an OpenBLAS row is expected to differ only when OpenBLAS's core or build differs between the runs; the
# same core and a different number is a real change (nondeterminism, or the code), UNEXPECTED and said why
mkw() { # mkw DIR SGEMM CORE: matmul-precision with this build's environment_dependent list (with "when")
  mkdir -p "$1/matmul-precision"
  rm -f "$1/matmul-precision/errors.csv"
  printf '{"header": {"experiment": "matmul-precision"}, "environment": {"openblas": {"core": "%s", "config": "c"}}, "environment_dependent": %s, "results": {"tables": [{"title": "t", "columns": ["kernel", "error"], "rows": [["cpu-fp32", 0.000217], ["openblas-sgemm", %s]]}]}}\n' \
    "$3" "$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["environment_dependent"]))' "$T/mp/results.json")" "$2" >"$1/matmul-precision/results.json"
}
"$LOWP" run matmul-precision --quick --sizes=16,24 --head=16 --formats=fp32 --bigformats=fp32 --model=none --out "$T/mp" >/dev/null 2>&1 ||
  bad "run matmul-precision (small)"
python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))["environment_dependent"]
assert any(e.get("match") == "openblas" and "openblas.core" in e.get("when", []) for e in d), d' "$T/mp/results.json" &&
  ok || bad "matmul-precision's environment_dependent rows lack when: openblas.core"
mkw "$T/a" 0.000101 SkylakeX
mkw "$T/b" 0.0000799 SkylakeX
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d8" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "UNEXPECTED: .results.tables\[0\].rows\[1\]\[1\]: 0.000101 | 7.99e-05 (mentions 'openblas', but what it depends on is the same in both runs)" "$T/d8" &&
  ok || bad "the same OpenBLAS core, another sgemm error: exit $rc: $(cat "$T/d8")"
mkw "$T/b" 0.0000799 Haswell
"$LOWP" report --diff "$T/b" --out "$T/a" >"$T/d9" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "expected:   .results.tables\[0\].rows\[1\]\[1\]: 0.000101 | 7.99e-05" "$T/d9" &&
  ok || bad "another OpenBLAS core: exit $rc: $(cat "$T/d9")"
mk "$T/a" 0.000217 0.000101 "Intel Xeon"
mk "$T/b" 0.000217 0.0000799 "AMD EPYC"

# glibc's non-FMA libm (GLIBC_TUNABLES, recorded in the manifest) moves the last bits of fp8-scaling's 17-digit
# numbers (fp64 data from lowp_rng_normal's log and cos): expected there, and nothing else differs
mkdir -p "$T/ga" "$T/gb"
"$LOWP" run fp8-scaling --quick --out "$T/ga/fp8-scaling" >/dev/null 2>&1 || bad "run fp8-scaling"
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX "$LOWP" run fp8-scaling --quick --out "$T/gb/fp8-scaling" >/dev/null 2>&1 ||
  bad "run fp8-scaling under glibc's non-FMA libm"
echo '<html></html>' >"$T/ga/index.html"
cp "$T/ga/index.html" "$T/gb/index.html"
"$LOWP" report --diff "$T/gb" --out "$T/ga" >"$T/d10" 2>&1
rc=$?
# (lowp adds its malloc tunables, tools/thp.h's LOWP_THP_TUNABLES, to both where the kernel's huge pages are
# on request: tools/thp.c)
H='\(:\{0,1\}glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1099511627776:glibc.malloc.hugetlb=1\)\{0,1\}'
[ $rc -eq 0 ] && grep -q "environment: glibc_tunables: \"$H\" | \"glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX$H\"" "$T/d10" &&
  ! grep -q UNEXPECTED "$T/d10" && ok || bad "glibc's non-FMA libm: exit $rc: $(cat "$T/d10")"

# bad input: exit 2, one message, nothing on stdout
expect_exit2 "--diff without a folder" "needs an argument" "$LOWP" report --diff
expect_exit2 "--diff of a folder that is not a report" "not a lowp report folder" "$LOWP" report --diff "$T/nosuch" --out "$T/a"
expect_exit2 "--diff against a folder that is not a report" "not a lowp report folder" "$LOWP" report --diff "$T/a" --out "$T/nosuch"
echo '{"header": ' >"$T/b/formats/results.json"
expect_exit2 "--diff of a broken results.json" "is not a results.json" "$LOWP" report --diff "$T/b" --out "$T/a"
expect_exit2 "--diff with --quick" "takes no --quick" "$LOWP" report --diff "$T/b" --quick
"$LOWP" report --help >"$T/h" 2>&1 && grep -q -- '--diff OTHER' "$T/h" && ok || bad "report --help"

finish report_diff
