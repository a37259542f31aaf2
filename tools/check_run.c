/* lowp_chk_execute -- lowp check: a prepared check measured and judged; MPI: checks spread over ranks */

#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_internal.h"
#include "cli.h"
#include "par.h"
#include "progress.h"
#include "status.h"

/* ---------------------------------------------------------------- running */

void lowp_chk_execute(lowp_chk_run_t *r, int updating) {
  const lowp_spec_check_t *sc = r->sc;
  char err[600];
  int i, st;
  lowp_check_opts_t co = {.prob = 0.99};
  r->pass = 0;
  if (sc->subject.kind == LOWP_SPEC_TENSORS) {
#ifdef HAVE_TENSOR_SUBJECT
    const double *const *x = lowp_tensor_subject_inputs(&r->subj);
    st = lowp_check_inputs_copy(&r->in, &r->p, x, lowp_tensor_subject_data(&r->subj));
#else
    st = LOWP_EUNSUPPORTED;
#endif
  } else if (sc->generated) {
    st = lowp_check_inputs_generate(&r->in, &r->p, &sc->dist, sc->seed);
  } else {
    st = lowp_check_inputs_copy(&r->in, &r->p, (const double *const *)r->file_in,
                                sc->n_data ? (const double *const *)r->file_data : NULL);
  }
  if (st) {
    snprintf(r->error, sizeof r->error, "inputs: %s", lowp_status_str(st));
    return;
  }
  /* a large GEMM's exact reference takes a while: show it (terminal only) */
  co.progress.fn = lowp_cli_progress;
  co.progress.ctx = (void *)sc->name;
  st = lowp_check_measure(&r->res, &r->p, &r->subj, &r->in, &co, err, sizeof err);
  lowp_cli_progress_end();
  co.progress.fn = NULL;
  if (st) {
    snprintf(r->error, sizeof r->error, "%s", err[0] ? err : lowp_status_str(st));
    return;
  }
  r->measured = 1;
  r->pass = !r->conv_bad[0];
  if (r->conv_bad[0]) snprintf(r->error, sizeof r->error, "%s", r->conv_bad);
  if (r->fpx.on) lowp_chk_fpx(r);
  for (i = 0; i < sc->n_rules; i++) {
    lowp_rule_t rule = sc->rules[i].rule;
    lowp_check_result_t other;
    int have_other = 0;
    memset(&other, 0, sizeof other);
    if (rule.kind == LOWP_RULE_BOUND && sc->rules[i].model) {
      rule.has_model = 1;
      rule.model = r->models[i];
    }
    if (rule.kind == LOWP_RULE_BOUND && sc->rules[i].tree) rule = r->trees[i];
    if (rule.kind == LOWP_RULE_BASELINE) {
      if (updating) continue; /* being rewritten: not applied */
      rule.baseline = r->baseline[rule.metric];
    }
    if (sc->rules[i].twin) { /* check_twin.c */
      lowp_chk_twin_eval(r, i, &r->v[r->n_v]);
      if (!r->v[r->n_v].pass) r->pass = 0;
      r->n_v++;
      continue;
    }
    if (sc->rules[i].has_ref) {
      st = lowp_check_measure(&other, &r->p, &r->refs[i], &r->in, &co, err, sizeof err);
      if (st) {
        snprintf(r->error, sizeof r->error, "rule %d: reference subject %.200s failed: %.600s", i + 1,
                 r->refs[i].name, err);
        lowp_check_result_free(&other);
        r->pass = 0;
        continue;
      }
      rule.other = &other;
      have_other = 1;
    }
    st = lowp_check_rule_eval(&r->v[r->n_v], &rule, &r->res, &r->subj);
    if (st) {
      r->v[r->n_v].pass = 0;
      if (!r->v[r->n_v].msg[0])
        snprintf(r->v[r->n_v].msg, sizeof r->v[r->n_v].msg, "%s", lowp_status_str(st));
    }
    if (!r->v[r->n_v].pass) r->pass = 0;
    r->n_v++;
    if (have_other) lowp_check_result_free(&other);
  }
  lowp_chk_declared_verdicts(r);
}

/* ------------------------------------------------------------ MPI ranks */

void lowp_chk_fault(const char *point) {
  if (lowp_par_fault(point))
    lowp_cli_die(LOWP_CHK_CMD, "rank %d: failure injected at '%s' (LOWP_FAULT=%s)", lowp_par_rank(),
                 point, getenv("LOWP_FAULT"));
}

/* What rank 0 needs of a check another rank ran: its verdicts and the
   scalars of its result (no arrays; pointers are rank 0's own again). */
typedef struct {
  int measured, pass, n_v;
  char error[1200];
  lowp_verdict_t v[64];
  lowp_check_result_t res;
} shipped_t;

/* Collective: check i runs on rank i mod N; its report line (and JSON when
   asked) is made there; rank 0 receives them with the verdicts and result
   scalars (JUnit, baseline, the totals), in the spec's order. */
void lowp_chk_spread(lowp_chk_run_t *runs, int n, int updating, int want_json, char **lines,
                     char **jsons) {
  int me = lowp_par_rank(), np = lowp_par_size(), i, j;
  char why[600] = ""; /* rank 0: the first result that did not arrive */
  /* what this rank sends, made before the exchange: nothing in the
     exchange can fail on one rank alone but MPI itself (par/par.h) */
  shipped_t **ship = calloc((size_t)n, sizeof *ship);
  if (!ship) lowp_cli_die(LOWP_CHK_CMD, "rank %d: out of memory", me);
  for (i = 0; i < n; i++) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    if (i % np != me) continue;
    lowp_chk_execute(&runs[i], updating);
    f = open_memstream(&buf, &len);
    if (!f) lowp_cli_die(LOWP_CHK_CMD, "rank %d: out of memory", me);
    lowp_chk_print_line(f, &runs[i]);
    if (fclose(f) != 0) lowp_cli_die(LOWP_CHK_CMD, "rank %d: out of memory", me);
    lines[i] = buf;
    if (want_json) {
      cJSON *jr = lowp_chk_result_json(&runs[i]);
      jsons[i] = cJSON_PrintUnformatted(jr);
      cJSON_Delete(jr);
      if (!jsons[i]) lowp_cli_die(LOWP_CHK_CMD, "rank %d: out of memory", me);
    }
    if (me != 0) {
      lowp_chk_run_t *r = &runs[i];
      shipped_t *sh = ship[i] = calloc(1, sizeof *sh);
      if (!sh) lowp_cli_die(LOWP_CHK_CMD, "rank %d: out of memory", me);
      sh->measured = r->measured;
      sh->pass = r->pass;
      sh->n_v = r->n_v;
      memcpy(sh->error, r->error, sizeof sh->error);
      memcpy(sh->v, r->v, (size_t)r->n_v * sizeof *r->v);
      sh->res = r->res;
      for (j = 0; j < LOWP_OP_MAXIO; j++) { /* arrays and names stay here */
        lowp_check_output_t *o = &sh->res.out[j];
        o->name = NULL;
        o->got = o->exact = o->exact_out = o->exact_data = o->exact_lo = o->absab = NULL;
      }
      memset(&sh->res.problem, 0, sizeof sh->res.problem);
    }
    if (me == 0 && isatty(2)) /* progress: the job's checks, from rank 0 */
      fprintf(stderr, "lowp check: [%d/%d] %s\n", i + 1, n, runs[i].sc->name);
  }
  lowp_chk_fault("run");
  lowp_par_sync(0);
  for (i = 0; i < n; i++) {
    int owner = i % np;
    lowp_chk_run_t *r = &runs[i];
    if (owner == 0) continue;
    if (me == owner) {
      shipped_t *sh = ship[i];
      int bad;
      ship[i] = NULL;
      bad = lowp_par_send(sh, sizeof *sh, 0) ||
            lowp_par_send(lines[i], strlen(lines[i]) + 1, 0) ||
            (want_json && lowp_par_send(jsons[i], strlen(jsons[i]) + 1, 0));
      free(sh);
      if (bad) lowp_cli_die(LOWP_CHK_CMD, "rank %d: sending the result of %s failed", me, r->sc->name);
    } else if (me == 0) {
      /* every message is received even after a bad one (the owner would
         be left blocked in a send): the failure ends the job after it */
      void *b = NULL;
      size_t len = 0;
      shipped_t sh;
      int good = !lowp_par_recv(&b, &len, owner) && len == sizeof sh && !lowp_par_fault("receive");
      if (good) memcpy(&sh, b, sizeof sh);
      free(b);
      good = good && sh.n_v >= 0 && sh.n_v <= r->sc->n_rules;
      if (good) {
        r->measured = sh.measured;
        r->pass = sh.pass;
        r->n_v = sh.n_v;
        memcpy(r->error, sh.error, sizeof r->error);
        memcpy(r->v, sh.v, (size_t)sh.n_v * sizeof *r->v);
        lowp_check_result_free(&r->res);
        r->res = sh.res;
        r->res.problem = r->p;
        for (j = 0; j < r->res.n_out && j < LOWP_OP_MAXIO; j++)
          r->res.out[j].name = r->p.op->out_names[j];
      }
      for (j = 0; j < 1 + want_json; j++) { /* its line, its JSON */
        b = NULL;
        if (lowp_par_recv(&b, &len, owner) || !len || ((char *)b)[len - 1]) good = 0;
        if (good) *(j ? &jsons[i] : &lines[i]) = b;
        else free(b);
      }
      if (!good && !why[0])
        snprintf(why, sizeof why, "receiving the result of %s from rank %d failed", r->sc->name, owner);
      if (good && isatty(2))
        fprintf(stderr, "lowp check: [%d/%d] %s (rank %d)\n", i + 1, n, r->sc->name, owner);
    }
  }
  if (why[0]) lowp_cli_die(LOWP_CHK_CMD, "%s", why);
  free(ship);
  lowp_par_sync(0);
}

