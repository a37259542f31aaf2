/* tcheck_spec -- lib/check/spec.c: a full spec parses into the right data; every malformed spec is refused with a message naming the entry; the repository's example specs parse */

#define _GNU_SOURCE /* memmem */

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/spec.h"
#include "status.h"
#include "testutil.h"

static const char *GOOD =
    "{ \"lowp_check\": 1, \"comment\": \"x\", \"baseline\": \"b.json\",\n"
    "  \"defaults\": { \"in\": \"fp16\", \"out\": \"fp32\" },\n"
    "  \"checks\": [\n"
    "    { \"name\": \"g\", \"op\": \"gemm\",\n"
    "      \"subject\": { \"kernel\": \"gemm_acc\", \"params\": \"acc=fp32,order=pairwise\" },\n"
    "      \"shape\": { \"batch\": 2, \"m\": 64, \"n\": 32, \"k\": 256 },\n"
    "      \"inputs\": { \"dist\": \"normal\", \"seed\": 7 },\n"
    "      \"rules\": [ { \"max_ulp\": 4 }, { \"bound\": \"gamma\", \"fraction\": 0.5 },\n"
    "                 { \"nan_inf\": \"match\" }, { \"bound\": \"prob\", \"prob\": 0.9, \"order\": \"blocked:32\", \"acc\": \"fp32\" },\n"
    "                 { \"vs_reference\": { \"kernel\": \"gemm_acc\", \"params\": { \"acc\": \"fp32\" } }, \"factor\": 2, \"metric\": \"rmse\" },\n"
    "                 { \"baseline\": \"max_ulp\", \"growth\": 1.5 }, { \"assert_close\": \"pytorch\" },\n"
    "                 { \"rtol\": 1e-3, \"atol\": 1e-5 }, { \"bitexact\": { \"kernel\": \"gemm_tc\", \"params\": \"model=h100\" } },\n"
    "                 { \"bound\": \"model\", \"model\": \"h100\" } ] },\n"
    "    { \"name\": \"p\", \"op\": \"softmax\", \"in\": \"bf16\", \"out\": \"bf16\",\n"
    "      \"subject\": { \"plugin\": \"lib/k.so\", \"kernel\": \"sm\" }, \"shape\": { \"m\": 4, \"n\": 10 },\n"
    "      \"rules\": [ { \"max_ulp\": 2 } ] },\n"
    "    { \"name\": \"t\", \"op\": \"layernorm\", \"eps\": 1e-6,\n"
    "      \"subject\": { \"tensors\": { \"inputs\": [ \"x.npy\" ], \"outputs\": [ { \"path\": \"/abs/y.safetensors\", \"tensor\": \"y\" },\n"
    "                   { \"path\": \"m.npy\", \"format\": \"bf16\" }, \"v.npy\" ] } },\n"
    "      \"rules\": [ { \"assert_close\": \"pytorch\" } ] },\n"
    "    { \"name\": \"x\", \"op\": \"xent\", \"reduction\": \"mean\", \"in\": [\"fp16\", \"fp64\"],\n"
    "      \"subject\": { \"kernel\": \"xent_naive\" }, \"shape\": { \"m\": 8, \"n\": 100 },\n"
    "      \"inputs\": { \"files\": [ \"l.npy\", \"t.npy\" ], \"data\": [ \"ld.npy\", \"t.npy\" ] },\n"
    "      \"rules\": [ { \"max_ulp\": 8 } ] }\n"
    "  ] }\n";

static void test_good(void) {
  lowp_spec_t s;
  char err[400];
  int st = lowp_spec_parse(&s, GOOD, strlen(GOOD), "/specs", err, sizeof err);
  const lowp_spec_check_t *c;
  lowp_test_check(st == LOWP_OK, "the full example parses: %s", err);
  if (st) { lowp_spec_free(&s); return; }
  lowp_test_check(s.n_checks == 4 && !strcmp(s.baseline, "/specs/b.json"), "checks, baseline path");
  c = &s.checks[0];
  lowp_test_check(c->op->id == LOWP_OP_GEMM && c->subject.kind == LOWP_SPEC_KERNEL &&
                  !strcmp(c->subject.kernel, "gemm_acc") &&
                  !strcmp(c->subject.params, "acc=fp32,order=pairwise"), "kernel subject");
  lowp_test_check(c->n_in_formats == 1 && c->in[1].precision == 11 && c->has_out &&
                  c->out.precision == 24, "defaults applied (fp16 in, fp32 out)");
  lowp_test_check(c->dims.batch == 2 && c->dims.m == 64 && c->dims.n == 32 && c->dims.k == 256,
                  "shape");
  lowp_test_check(c->generated && c->seed == 7 && c->dist.kind == LOWP_DIST_NORMAL, "inputs");
  lowp_test_check(c->n_rules == 10, "10 rules");
  lowp_test_check(c->rules[0].rule.kind == LOWP_RULE_MAX_ULP && c->rules[0].rule.limit == 4, "max_ulp");
  lowp_test_check(c->rules[1].rule.kind == LOWP_RULE_BOUND && c->rules[1].rule.limit == 0.5 &&
                  !c->rules[1].rule.has_accum, "bound gamma fraction");
  lowp_test_check(c->rules[3].rule.bound == LOWP_BOUND_PROB && c->rules[3].rule.prob == 0.9 &&
                  c->rules[3].rule.has_accum && c->rules[3].rule.accum.order == LOWP_ACC_BLOCKED &&
                  c->rules[3].rule.accum.block == 32, "bound prob with order");
  lowp_test_check(c->rules[4].rule.kind == LOWP_RULE_VS_REF && c->rules[4].has_ref &&
                  !strcmp(c->rules[4].ref.params, "acc=fp32") && c->rules[4].rule.limit == 2 &&
                  c->rules[4].rule.metric == LOWP_METRIC_RMSE, "vs_reference, params object");
  lowp_test_check(c->rules[5].rule.kind == LOWP_RULE_BASELINE && c->rules[5].rule.limit == 1.5,
                  "baseline growth");
  lowp_test_check(c->rules[6].rule.kind == LOWP_RULE_TOL && c->rules[6].rule.pytorch, "assert_close");
  lowp_test_check(c->rules[7].rule.rtol == 1e-3 && c->rules[7].rule.atol == 1e-5, "rtol/atol");
  lowp_test_check(c->rules[8].rule.kind == LOWP_RULE_BITEXACT && !strcmp(c->rules[8].ref.kernel, "gemm_tc"),
                  "bitexact");
  lowp_test_check(c->rules[9].rule.bound == LOWP_BOUND_MODEL && !strcmp(c->rules[9].model, "h100"),
                  "model bound");
  c = &s.checks[1];
  lowp_test_check(c->subject.kind == LOWP_SPEC_PLUGIN && !strcmp(c->subject.plugin, "/specs/lib/k.so") &&
                  !strcmp(c->subject.kernel, "sm") && c->in[0].precision == 8, "plugin subject");
  c = &s.checks[2];
  lowp_test_check(c->subject.kind == LOWP_SPEC_TENSORS && c->subject.n_inputs == 1 &&
                  c->subject.n_outputs == 3 && !strcmp(c->subject.outputs[0].path, "/abs/y.safetensors") &&
                  !strcmp(c->subject.outputs[0].tensor, "y") && !strcmp(c->subject.outputs[1].format, "bf16") &&
                  !strcmp(c->subject.inputs[0].path, "/specs/x.npy") && c->eps == 1e-6 &&
                  !c->generated, "tensors subject");
  lowp_test_check(c->n_in_formats == 0 && !c->has_out,
                  "tensors: the files decide the formats, not the defaults");
  c = &s.checks[3];
  lowp_test_check(c->reduction_mean && c->n_files == 2 && c->n_data == 2 && c->in[1].precision == 53 &&
                  !strcmp(c->files[1].path, "/specs/t.npy"), "files and data, xent");
  lowp_test_check(strlen(s.checks[0].fingerprint) == 16 &&
                  strcmp(s.checks[0].fingerprint, s.checks[1].fingerprint), "fingerprints");
  lowp_test_check(lowp_spec_find(&s, "t") == &s.checks[2] && lowp_spec_find(&s, "zz") == NULL, "find");
  lowp_spec_free(&s);
}

/* fingerprints: rules and comments and key order do not matter; the rest does */
static void test_fingerprint(void) {
  const char *a = "{\"lowp_check\":1,\"checks\":[{\"name\":\"a\",\"op\":\"sum\",\"in\":\"fp16\",\"out\":\"fp32\","
                  "\"subject\":{\"kernel\":\"k\"},\"shape\":{\"n\":8},\"rules\":[{\"max_ulp\":1}]}]}";
  const char *b = "{\"lowp_check\":1,\"checks\":[{\"op\":\"sum\",\"name\":\"a\",\"comment\":\"c\",\"out\":\"fp32\","
                  "\"in\":\"fp16\",\"subject\":{\"kernel\":\"k\"},\"shape\":{\"n\":8},\"rules\":[{\"max_ulp\":9}]}]}";
  const char *c = "{\"lowp_check\":1,\"defaults\":{\"in\":\"fp16\",\"out\":\"fp32\"},\"checks\":[{\"name\":\"a\",\"op\":\"sum\","
                  "\"subject\":{\"kernel\":\"k\"},\"shape\":{\"n\":8},\"rules\":[{\"max_ulp\":1}]}]}";
  const char *d = "{\"lowp_check\":1,\"checks\":[{\"name\":\"a\",\"op\":\"sum\",\"in\":\"fp16\",\"out\":\"fp32\","
                  "\"subject\":{\"kernel\":\"k\"},\"shape\":{\"n\":9},\"rules\":[{\"max_ulp\":1}]}]}";
  lowp_spec_t sa, sb, sc, sd;
  char err[300];
  lowp_spec_parse(&sa, a, strlen(a), ".", err, sizeof err);
  lowp_spec_parse(&sb, b, strlen(b), ".", err, sizeof err);
  lowp_spec_parse(&sc, c, strlen(c), ".", err, sizeof err);
  lowp_spec_parse(&sd, d, strlen(d), ".", err, sizeof err);
  lowp_test_check(sa.n_checks == 1 && sb.n_checks == 1 && sc.n_checks == 1 && sd.n_checks == 1,
                  "fingerprint specs parse");
  if (sa.n_checks && sb.n_checks && sc.n_checks && sd.n_checks) {
    lowp_test_check(!strcmp(sa.checks[0].fingerprint, sb.checks[0].fingerprint),
                    "rules, comments, key order: same fingerprint");
    lowp_test_check(!strcmp(sa.checks[0].fingerprint, sc.checks[0].fingerprint),
                    "defaults applied: same fingerprint");
    lowp_test_check(strcmp(sa.checks[0].fingerprint, sd.checks[0].fingerprint) != 0,
                    "another shape: another fingerprint");
  }
  lowp_spec_free(&sa);
  lowp_spec_free(&sb);
  lowp_spec_free(&sc);
  lowp_spec_free(&sd);
}

/* one malformed spec: the check's JSON (or the whole spec if it starts with
   '{' and has "lowp_check"), and a fragment the message must contain */
static void bad(const char *check, const char *want) {
  char text[4000], err[400];
  lowp_spec_t s;
  int st;
  if (!strncmp(check, "{\"lowp_check\"", 13) || !strncmp(check, "{\"checks\"", 9) || check[0] != '{')
    snprintf(text, sizeof text, "%s", check);
  else
    snprintf(text, sizeof text, "{\"lowp_check\": 1, \"checks\": [ %s ] }", check);
  st = lowp_spec_parse(&s, text, strlen(text), ".", err, sizeof err);
  lowp_test_check(st == LOWP_EPARSE && strstr(err, want) != NULL && !strchr(err, '\n'),
                  "malformed spec refused with '%s': status %d, message '%s'  [spec %s]", want, st,
                  err, text);
  lowp_spec_free(&s);
}

#define OK_SUBJ "\"subject\": {\"kernel\": \"k\"}"
#define OK_HEAD "\"name\": \"x\", \"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", " OK_SUBJ \
                ", \"shape\": {\"m\": 2, \"n\": 2, \"k\": 2}"

static void test_bad(void) {
  bad("", "not valid JSON");
  bad("{\"lowp_check\": 1, \"checks\": [ ", "not valid JSON");
  bad("[1]", "top level must be an object");
  /* user text in a message is escaped: a key with a newline stays one line */
  bad("{\"lowp_check\": 1, \"checks\": [], \"x\\ny\": 1}", "unknown key 'x\\ny'");
  bad("{\"lowp_check\": 1, \"checks\": [], \"x\": 1}", "unknown key 'x'");
  bad("{\"checks\": [ {} ]}", "\"lowp_check\": 1 (the format version) is missing");
  bad("{\"lowp_check\": 2, \"checks\": [ {} ]}", "format version 2 is not supported");
  bad("{\"lowp_check\": \"1\", \"checks\": [ {} ]}", "must be an integer");
  bad("{\"lowp_check\": 1, \"lowp_check\": 1, \"checks\": [ {} ]}", "duplicate key 'lowp_check'");
  bad("{\"lowp_check\": 1, \"checks\": []}", "non-empty array");
  bad("{\"lowp_check\": 1, \"checks\": {}}", "non-empty array");
  bad("{\"lowp_check\": 1, \"defaults\": {\"in\": \"fp17\"}, \"checks\": [ {} ]}", "unknown format 'fp17'");
  bad("{\"lowp_check\": 1, \"defaults\": {\"acc\": \"fp32\"}, \"checks\": [ {} ]}", "unknown key 'acc'");
  bad("{\"lowp_check\": 1, \"baseline\": 3, \"checks\": [ {} ]}", "\"baseline\" must be a string");
  bad("7", "must be an object");
  bad("{\"op\": \"gemm\"}", "checks[0]: \"name\" is missing");
  bad("{\"name\": 5}", "\"name\" must be a string");
  bad("{\"name\": \"\"}", "must not be empty");
  bad("{\"name\": \"x\", \"op\": \"matmul\"}", "check 'x' (checks[0]): unknown op 'matmul'");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"bogus\": 1}", "check 'x' (checks[0]): unknown key 'bogus'");
  bad("{\"name\": \"x\", \"op\": \"gemm\"}", "\"subject\" is missing");
  bad("{" OK_HEAD ", \"rules\": [ {\"max_ulp\": 1} ]}, {" OK_HEAD ", \"rules\": [ {\"max_ulp\": 1} ]}",
      "check 'x' (checks[1]): duplicate check name (also checks[0])");
  bad("{" OK_HEAD "}", "\"rules\" is missing");
  bad("{" OK_HEAD ", \"rules\": []}", "non-empty array");
  bad("{" OK_HEAD ", \"rules\": [ {\"max_ulp\": 1}, {\"maxulp\": 2} ]}",
      "check 'x' (checks[0]): rule 2: unknown rule 'maxulp'");
  bad("{" OK_HEAD ", \"rules\": [ {\"max_ulp\": \"4\"} ]}", "rule 1: \"max_ulp\" must be a number");
  bad("{" OK_HEAD ", \"rules\": [ {\"max_ulp\": -1} ]}", "must be a finite number >= 0");
  bad("{" OK_HEAD ", \"rules\": [ {\"max_ulp\": 1e999} ]}", "max_ulp");
  bad("{" OK_HEAD ", \"rules\": [ {\"max_ulp\": 1, \"fraction\": 2} ]}", "rule 1: unknown key 'fraction'");
  bad("{" OK_HEAD ", \"rules\": [ {\"bound\": \"gama\"} ]}", "unknown bound 'gama'");
  bad("{" OK_HEAD ", \"rules\": [ {\"bound\": \"prob\", \"prob\": 1.5} ]}", "\"prob\" must lie in (0, 1)");
  bad("{" OK_HEAD ", \"rules\": [ {\"bound\": \"gamma\", \"order\": \"zigzag\"} ]}", "unknown order 'zigzag'");
  bad("{" OK_HEAD ", \"rules\": [ {\"bound\": \"gamma\", \"acc\": \"fp99\"} ]}", "unknown format 'fp99'");
  bad("{" OK_HEAD ", \"rules\": [ {\"bound\": \"gamma\", \"model\": \"h100\"} ]}", "belongs to {\"bound\": \"model\"}");
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_reference\": {\"tensors\": {}}} ]}", "cannot be a reference");
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_reference\": {\"kernel\": \"k\"}, \"metric\": \"l2\"} ]}", "unknown metric 'l2'");
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_reference\": {}} ]}", "needs one of \"kernel\", \"plugin\"");
  bad("{" OK_HEAD ", \"rules\": [ {\"assert_close\": \"numpy\"} ]}", "unknown assert_close defaults 'numpy'");
  bad("{" OK_HEAD ", \"rules\": [ {\"rtol\": 1, \"atol\": \"x\"} ]}", "\"atol\" must be a number");
  bad("{" OK_HEAD ", \"rules\": [ {\"baseline\": \"ulp\"} ]}", "unknown metric 'ulp'");
  bad("{" OK_HEAD ", \"rules\": [ {\"baseline\": \"max_ulp\", \"growth\": 0.5} ]}", "\"growth\" must be >= 1");
  bad("{" OK_HEAD ", \"rules\": [ {\"nan_inf\": \"ignore\"} ]}", "unknown nan_inf mode 'ignore'");
  bad("{" OK_HEAD ", \"rules\": [ {\"max_ulp\": 1, \"max_ulp\": 2} ]}", "duplicate key 'max_ulp'");
  bad("{" OK_HEAD ", \"rules\": [ 3 ]}", "rule 1: must be an object");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"m\": 2, \"k\": 2}, \"rules\": [ {\"max_ulp\": 1} ]}", "\"shape\" needs \"n\" for gemm");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"m\": 0, \"n\": 2, \"k\": 2}, \"rules\": [ {\"max_ulp\": 1} ]}", "\"shape\".m must be an integer in [1,");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"m\": 2.5, \"n\": 2, \"k\": 2}, \"rules\": [ {\"max_ulp\": 1} ]}", "must be an integer");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"m\": 2, \"n\": 2, \"k\": 2, \"j\": 1}, \"rules\": [ {\"max_ulp\": 1} ]}", "unknown key 'j'");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"in\": \"fp16\", " OK_SUBJ
      ", \"shape\": {\"m\": 2, \"n\": 2, \"k\": 2}, \"rules\": [ {\"max_ulp\": 1} ]}", "\"in\" and \"out\" formats are needed");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"in\": \"fp16\", \"out\": \"fp12\", " OK_SUBJ
      ", \"shape\": {\"m\": 2, \"n\": 2, \"k\": 2}, \"rules\": [ {\"max_ulp\": 1} ]}", "\"out\": unknown format 'fp12'");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"in\": [\"fp16\"], \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"m\": 2, \"n\": 2, \"k\": 2}, \"rules\": [ {\"max_ulp\": 1} ]}", "\"in\" lists 1 formats but gemm has 2 inputs");
  bad("{" OK_HEAD ", \"inputs\": {\"dist\": \"gauss\"}, \"rules\": [ {\"max_ulp\": 1} ]}", "unknown distribution 'gauss'");
  bad("{" OK_HEAD ", \"inputs\": {\"seed\": -1}, \"rules\": [ {\"max_ulp\": 1} ]}", "\"inputs\".seed must be an integer");
  bad("{" OK_HEAD ", \"inputs\": {\"seed\": 1, \"files\": [\"a.npy\", \"b.npy\"]}, \"rules\": [ {\"max_ulp\": 1} ]}", "unknown key 'seed'");
  bad("{" OK_HEAD ", \"inputs\": {\"files\": [\"a.npy\"]}, \"rules\": [ {\"max_ulp\": 1} ]}", "lists 1 files but gemm has 2 inputs");
  bad("{" OK_HEAD ", \"inputs\": {\"files\": [\"a.npy\", {\"path\": \"b.npy\", \"dtype\": \"f2\"}]}, \"rules\": [ {\"max_ulp\": 1} ]}", "unknown key 'dtype'");
  bad("{" OK_HEAD ", \"eps\": 1e-6, \"rules\": [ {\"max_ulp\": 1} ]}", "\"eps\" belongs to layernorm and rmsnorm");
  bad("{" OK_HEAD ", \"reduction\": \"mean\", \"rules\": [ {\"max_ulp\": 1} ]}", "\"reduction\" belongs to xent");
  bad("{\"name\": \"x\", \"op\": \"xent\", \"in\": \"fp16\", \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"n\": 2}, \"reduction\": \"sum\", \"rules\": [ {\"max_ulp\": 1} ]}", "unknown reduction 'sum'");
  bad("{\"name\": \"x\", \"op\": \"softmax\", \"subject\": {\"tensors\": {\"inputs\": [\"x.npy\"]}}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "needs \"inputs\" and \"outputs\"");
  bad("{\"name\": \"x\", \"op\": \"softmax\", \"subject\": {\"tensors\": {\"inputs\": [\"x.npy\"], \"outputs\": [\"y.npy\"]}},"
      " \"inputs\": {\"seed\": 1}, \"rules\": [ {\"max_ulp\": 1} ]}", "a tensors subject reads its inputs from its files");
  bad("{\"name\": \"x\", \"op\": \"softmax\", \"subject\": {\"kernel\": \"k\", \"tensors\": {\"inputs\": [\"x.npy\"], \"outputs\": [\"y.npy\"]}}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "subject: unknown key 'kernel'");
  bad("{\"name\": \"x\", \"op\": \"softmax\", \"subject\": {\"kernel\": \"k\", \"params\": [1]}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"params\" must be a string");
  bad("{\"name\": \"x\", \"op\": \"softmax\", \"subject\": {\"kernel\": 3}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "subject \"kernel\" must be a string");
  bad("{\"name\": \"x\", \"op\": \"softmax\", \"comment\": 5, " OK_SUBJ ", \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"comment\" must be a string");
}

/* every spec in the repository's example and test folders parses */
static void test_repo_specs(void) {
  static const char *dirs[] = {"examples/check", "tests/data/check", NULL};
  int i, found = 0;
  for (i = 0; dirs[i]; i++) {
    DIR *d = opendir(dirs[i]);
    struct dirent *e;
    if (!d) continue;
    while ((e = readdir(d)) != NULL) {
      char path[1024], err[400], head[4096];
      size_t n, len = strlen(e->d_name);
      FILE *f;
      lowp_spec_t s;
      if (len < 5 || strcmp(e->d_name + len - 5, ".json")) continue;
      snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
      f = fopen(path, "rb");
      if (!f) continue;
      n = fread(head, 1, sizeof head - 1, f);
      fclose(f);
      head[n] = '\0';
      if (!strstr(head, "\"lowp_check\"")) continue; /* a baseline or other JSON */
      if (strstr(e->d_name, "bad")) continue;        /* malformed on purpose */
      found++;
      lowp_test_check(lowp_spec_read(&s, path, err, sizeof err) == LOWP_OK, "%s parses: %s", path, err);
      lowp_spec_free(&s);
    }
    closedir(d);
  }
  /* the specs shown in the README and docs (```json blocks with "lowp_check") */
  {
    static const char *docs[] = {"README.md", "docs/pipeline.md", NULL};
    int di;
    for (di = 0; docs[di]; di++) {
      FILE *f = fopen(docs[di], "rb");
      char *buf, *p;
      long len;
      if (!f) continue;
      fseek(f, 0, SEEK_END);
      len = ftell(f);
      fseek(f, 0, SEEK_SET);
      buf = malloc((size_t)len + 1);
      if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(buf);
        continue;
      }
      fclose(f);
      buf[len] = '\0';
      for (p = strstr(buf, "```json\n"); p; p = strstr(p, "```json\n")) {
        char *start = p + 8, *end = strstr(start, "```"), err[400];
        lowp_spec_t sp;
        if (!end) break;
        if (memmem(start, (size_t)(end - start), "\"lowp_check\"", 12)) {
          found++;
          lowp_test_check(lowp_spec_parse(&sp, start, (size_t)(end - start), ".", err, sizeof err) == 0,
                          "the spec in %s parses: %s", docs[di], err);
          lowp_spec_free(&sp);
        }
        p = end + 3;
      }
      free(buf);
    }
  }
  lowp_test_check(found >= 1, "at least the README's example spec was found");
  printf("tcheck_spec: %d example specs in the repository parsed\n", found);
}

/* issue 19: NUL bytes (raw or \u0000), invalid UTF-8 and names JUnit XML
   cannot hold are refused, not truncated or written */
static void test_text(void) {
  static const char raw[] = "{\"lowp_check\": 1, \"checks\": [ {\"name\": \"a\0b\"} ] }";
  char err[400];
  lowp_spec_t s;
  int st = lowp_spec_parse(&s, raw, sizeof raw - 1, ".", err, sizeof err);
  lowp_test_check(st == LOWP_EPARSE && strstr(err, "a NUL byte at byte 41"), "raw NUL: %s", err);
  lowp_spec_free(&s);
  bad("{\"name\": \"a\\u0000b\"}", "\\u0000 (a NUL character) at byte");
  bad("{\"name\": \"a\\\\u0000b\", \"op\": \"nope\"}", "unknown op"); /* an escaped backslash, then text */
  bad("{\"name\": \"a\xff\"}", "not UTF-8 (byte 0xff at byte");
  bad("{\"name\": \"a\xc0\xaf\"}", "not UTF-8 (byte 0xc0");
  bad("{\"name\": \"x\\uffff\"}", "JUnit XML cannot");
  bad("{\"name\": \"x\x7f\"}", "JUnit XML cannot");
  bad("{\"name\": \"x\\u001f\"}", "control character");
}

/* a spec of n generated checks named c0, c1, ...; with a duplicate last
   name when dup */
static char *many_checks(int n, int dup, size_t *len) {
  size_t cap = (size_t)n * 200 + 200, u = 0;
  char *t = malloc(cap);
  int i;
  if (!t) return NULL;
  u += (size_t)snprintf(t + u, cap - u, "{\"lowp_check\": 1, \"defaults\": {\"in\": \"fp16\", "
                        "\"out\": \"fp32\"}, \"checks\": [\n");
  for (i = 0; i < n; i++)
    u += (size_t)snprintf(t + u, cap - u, "%s{\"name\": \"c%d\", \"op\": \"dot\", \"subject\": "
                          "{\"kernel\": \"dot_acc\"}, \"shape\": {\"k\": 8}, \"rules\": "
                          "[{\"max_ulp\": 4}]}\n", i ? "," : "", dup && i == n - 1 ? 0 : i);
  u += (size_t)snprintf(t + u, cap - u, "]}\n");
  *len = u;
  return t;
}

/* issue 19 (HIGH 5): 100k checks took 272 s (a quadratic search for
   duplicate names, arrays indexed from their start). The name index makes
   a bounded number of comparisons per check: counted, for N and 4N checks,
   so the test holds the linearity without timing anything; the 100k-check
   spec itself (12 MB) parses within the test's time limit. */
static void test_linear(void) {
  static const int ns[2] = {25000, 100000};
  unsigned long long probes[2] = {0, 0};
  int k;
  for (k = 0; k < 2; k++) {
    size_t len = 0;
    char *t = many_checks(ns[k], 0, &len), err[400];
    lowp_spec_t s;
    int st = lowp_spec_parse(&s, t, len, ".", err, sizeof err);
    lowp_test_check(st == LOWP_OK && s.n_checks == ns[k], "%d checks parse: %s", ns[k], err);
    lowp_test_check(lowp_spec_find(&s, "c77") == &s.checks[77] && !lowp_spec_find(&s, "c-1"),
                    "found by name");
    probes[k] = s.name_probes;
    lowp_spec_free(&s);
    free(t);
  }
  lowp_test_check(probes[1] <= 5 * probes[0] + 1000 && probes[1] <= 4ull * (unsigned)ns[1],
                  "name comparisons linear: %llu for %d checks, %llu for %d", probes[0], ns[0],
                  probes[1], ns[1]);
  {
    size_t len = 0;
    char *t = many_checks(50000, 1, &len), err[400];
    lowp_spec_t s;
    int st = lowp_spec_parse(&s, t, len, ".", err, sizeof err);
    lowp_test_check(st == LOWP_EPARSE && strstr(err, "checks[49999]): duplicate check name (also "
                                                     "checks[0])"), "a duplicate in the last of 50k: %s", err);
    lowp_spec_free(&s);
    free(t);
  }
}

/* spec parses (in dir): 1, else a failed check naming what */
static int parse_ok(lowp_spec_t *s, const char *spec, const char *dir, const char *what) {
  char err[400];
  int st = lowp_spec_parse(s, spec, strlen(spec), dir, err, sizeof err);
  lowp_test_check(st == LOWP_OK, "%s parses: %s", what, err);
  return st == LOWP_OK;
}

/* "convert": per input a format (rne) or {"format", "rnd"}, or "revealed";
   what is refused names the entry */
static void test_convert(void) {
  static const char *spec =
      "{\"lowp_check\": 1, \"checks\": [ {" OK_HEAD ", \"convert\": {\"A\": \"fp16\", \"B\": {\"format\": "
      "\"bf16\", \"rnd\": \"rtz\"}}, \"rules\": [ {\"max_ulp\": 1} ] },"
      " {\"name\": \"y\", \"op\": \"dot\", \"in\": \"fp32\", \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"k\": 8}, \"convert\": \"revealed\", \"rules\": [ {\"max_ulp\": 1} ] } ] }";
  lowp_spec_t s;
  if (parse_ok(&s, spec, ".", "a spec with \"convert\"")) {
    const lowp_spec_check_t *c = &s.checks[0];
    lowp_test_check(c->has_conv[0] && c->conv[0].precision == 11 && c->conv_rnd[0] == LOWP_RND_NE &&
                    c->has_conv[1] && c->conv[1].precision == 8 && c->conv_rnd[1] == LOWP_RND_TZ &&
                    !c->conv_revealed, "A fp16 rne, B bf16 rtz");
    lowp_test_check(s.checks[1].conv_revealed && !s.checks[1].has_conv[0] && !s.checks[1].has_conv[1],
                    "\"convert\": \"revealed\"");
    lowp_test_check(strcmp(s.checks[0].fingerprint, s.checks[1].fingerprint) != 0, "fingerprints differ");
  }
  lowp_spec_free(&s);
  bad("{" OK_HEAD ", \"convert\": {\"C\": \"fp16\"}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"convert\": unknown key 'C' (expected: A, B)");
  bad("{" OK_HEAD ", \"convert\": {\"A\": \"fp17\"}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"convert\".A: unknown format 'fp17'");
  bad("{" OK_HEAD ", \"convert\": {\"A\": {\"format\": \"fp16\", \"rnd\": \"sr\"}}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"convert\".A: unknown rounding 'sr'");
  bad("{" OK_HEAD ", \"convert\": {\"A\": {\"rnd\": \"rne\"}}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"convert\".A: \"format\" is missing");
  bad("{" OK_HEAD ", \"convert\": {\"A\": {\"format\": \"fp16\", \"x\": 1}}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"convert\".A: unknown key 'x'");
  bad("{" OK_HEAD ", \"convert\": {\"A\": \"fp16\", \"A\": \"bf16\"}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "duplicate key 'A'");
  bad("{" OK_HEAD ", \"convert\": \"fp16\", \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"convert\" must be \"revealed\" or an object naming inputs");
  bad("{" OK_HEAD ", \"convert\": {}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "\"convert\" must be \"revealed\" or an object naming inputs");
  bad("{\"name\": \"x\", \"op\": \"xent\", \"in\": \"fp32\", \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"m\": 2, \"n\": 4}, \"convert\": {\"target\": \"fp16\"}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "input target holds indices");
  bad("{\"name\": \"x\", \"op\": \"gemm\", \"in\": \"mxfp8_e4m3\", \"out\": \"fp32\", " OK_SUBJ
      ", \"shape\": {\"m\": 2, \"n\": 2, \"k\": 32}, \"convert\": {\"A\": \"fp16\"}, \"rules\": [ {\"max_ulp\": 1} ]}",
      "input A is block-scaled");
}

/* twin rules: {"vs_twin": true, "order": ...} and {"bitexact": "twin", ...} */
static void test_twin(void) {
  static const char *spec =
      "{\"lowp_check\": 1, \"checks\": [ {" OK_HEAD ", \"rules\": [ {\"vs_twin\": true}, "
      "{\"vs_twin\": true, \"order\": {\"tree\": \"t.json\"}}, {\"bitexact\": \"twin\", \"order\": "
      "\"blocked:16\", \"acc\": \"fp16\"}, {\"bitexact\": {\"kernel\": \"k2\"}} ] } ] }";
  lowp_spec_t s;
  if (parse_ok(&s, spec, "/d", "twin rules")) {
    const lowp_spec_rule_t *r = s.checks[0].rules;
    lowp_test_check(r[0].twin && r[0].rule.kind == LOWP_RULE_BITEXACT && !strcmp(r[0].tree, "revealed") &&
                    !r[0].has_ref, "vs_twin: the revealed tree by default");
    lowp_test_check(r[1].twin && !strcmp(r[1].tree, "/d/t.json"),
                    "vs_twin with a tree file, relative to the spec's folder: %s", r[1].tree);
    lowp_test_check(r[2].twin && !r[2].tree && r[2].rule.has_accum && r[2].rule.accum.order == LOWP_ACC_BLOCKED &&
                    r[2].rule.accum.block == 16 && r[2].rule.accum.acc.precision == 11,
                    "bitexact twin of a declared order");
    lowp_test_check(!r[3].twin && r[3].has_ref, "bitexact of a subject is unchanged");
  }
  lowp_spec_free(&s);
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_twin\": false} ]}", "\"vs_twin\" must be true");
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_twin\": true, \"order\": \"kahan\"} ]}", "kahan has no twin tree");
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_twin\": true, \"order\": \"zigzag\"} ]}", "\"order\" zigzag");
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_twin\": true, \"acc\": \"fp16\"} ]}", "\"acc\" goes with a named order");
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_twin\": true, \"order\": {\"file\": \"t.json\"}} ]}",
      "{\"tree\": \"FILE\"}");
  bad("{" OK_HEAD ", \"rules\": [ {\"vs_twin\": true, \"factor\": 2} ]}", "unknown key 'factor'");
  bad("{" OK_HEAD ", \"rules\": [ {\"bitexact\": \"twin\", \"vs_twin\": true} ]}", "unknown key");
}

int main(void) {
  lowp_test_start("tcheck_spec");
  test_twin();
  test_convert();
  test_good();
  test_fingerprint();
  test_bad();
  test_text();
  test_linear();
  test_repo_specs();
  return lowp_test_end();
}
