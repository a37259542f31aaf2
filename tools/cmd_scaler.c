/* lowp scaler -- replay a sequence of good/overflowing steps through a grad scaler */

/*
 * Prints the scale and the growth tracker after each step, under the rules
 * of PyTorch's GradScaler or of the documents' variants (lib/amp/scaler.h).
 *
 * Run: lowp scaler --events ok,ok,inf,nan --init 128 --growth 2 --interval 1
 *      lowp scaler --events 'ok*1999,ok,inf' --json --state-out s.json
 *      lowp scaler --events ok --state-in s.json
 */

#include "cli.h"
#include "output.h"

#include "amp/scaler.h"
#include "format/number.h"
#include "io/atomic.h"
#include "status.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CMD "scaler"
#define MAX_EVENTS 10000000LL

/* ------------------------------------------------------ private helpers */

static void usage(FILE *out) {
  fprintf(out,
    "usage: lowp scaler --events E[,E..] [options]\n"
    "  --events   comma-separated steps: ok (no inf/NaN in the gradients) or\n"
    "             inf, -inf, nan (found-inf: the step is skipped); WORD*N\n"
    "             repeats a word N times (ok*1999)\n"
    "  --policy   pytorch (default) | genesis | mlx | mlx-py (see lib/amp/scaler.h)\n"
    "  --init S   initial scale (default 65536 = 2^16; fp32-rounded for pytorch, mlx)\n"
    "  --growth G growth factor (default 2; must be > 0)\n"
    "  --backoff B backoff factor (default 0.5; must be > 0)\n"
    "  --interval N growth interval (default 2000; 1..2147483647)\n"
    "  --state-in FILE   start from a saved state (JSON, PyTorch state_dict keys);\n"
    "                    --policy/--growth/--backoff/--interval override it\n"
    "  --state-out FILE  save the final state (written atomically)\n"
    "  --json     machine-readable output with stable keys\n"
    "Prints, after each step: step, event, skipped, scale (decimal and hex), tracker.\n");
}

static double positive(const char *what, const char *text) {
  double v = lowp_cli_number(CMD, what, text);
  if (!(v > 0) || isinf(v))
    lowp_cli_die(CMD, "%s must be a finite number > 0, got '%s'", what, text);
  return v;
}

/* Parse the events list into 0 (ok) / 1 (inf) / 2 (nan) / 3 (-inf). */
static unsigned char *parse_events(const char *text, long long *count) {
  const char *s = text;
  unsigned char *ev = NULL;
  long long n = 0, cap = 0;
  if (!*text) lowp_cli_die(CMD, "--events is empty: give at least one of ok, inf, -inf, nan");
  while (1) {
    char word[64], *star;
    size_t len = strcspn(s, ",");
    long long rep = 1, k;
    int code;
    if (len == 0 || len >= sizeof word)
      lowp_cli_die(CMD, "malformed --events '%s': expected words separated by single commas", text);
    memcpy(word, s, len);
    word[len] = '\0';
    star = strchr(word, '*');
    if (star) {
      *star = '\0';
      if (lowp_parse_int(&rep, star + 1, 1, MAX_EVENTS) != 0)
        lowp_cli_die(CMD, "bad repeat count in event '%s*%s': expected an integer in [1, %lld]",
                     word, star + 1, MAX_EVENTS);
    }
    if (!strcmp(word, "ok")) code = 0;
    else if (!strcmp(word, "inf") || !strcmp(word, "+inf")) code = 1;
    else if (!strcmp(word, "nan")) code = 2;
    else if (!strcmp(word, "-inf")) code = 3;
    else lowp_cli_die(CMD, "unknown event '%s' in --events: expected ok, inf, -inf or nan", word);
    if (n + rep > MAX_EVENTS) lowp_cli_die(CMD, "too many events (more than %lld)", MAX_EVENTS);
    if (n + rep > cap) {
      unsigned char *p;
      cap = (n + rep) * 2;
      p = realloc(ev, (size_t)cap);
      if (!p) lowp_cli_die(CMD, "out of memory");
      ev = p;
    }
    for (k = 0; k < rep; k++) ev[n++] = (unsigned char)code;
    s += len;
    if (!*s) break;
    s++;
    if (!*s) lowp_cli_die(CMD, "malformed --events '%s': trailing comma", text);
  }
  *count = n;
  return ev;
}

/* The state file ("-": standard input), at most 16 MiB, as a string; a NUL
   byte inside would hide the rest from the JSON parser, so it is refused. */
static char *read_file(const char *path) {
  int is_stdin = !strcmp(path, "-");
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  char *buf;
  size_t len = 0, cap = 1 << 24, got;
  if (!f) lowp_cli_die(CMD, "cannot read state file '%s': %s", path, strerror(errno));
  buf = malloc(cap + 1);
  if (!buf) lowp_cli_die(CMD, "out of memory");
  while ((got = fread(buf + len, 1, cap + 1 - len, f)) > 0) {
    len += got;
    if (len > cap) lowp_cli_die(CMD, "state file '%s' is over 16 MiB", path);
  }
  if (ferror(f)) lowp_cli_die(CMD, "cannot read state file '%s' (not a regular file?)", path);
  if (!is_stdin) fclose(f);
  buf[len] = '\0';
  if (strlen(buf) != len) lowp_cli_die(CMD, "state file '%s' contains a NUL byte", path);
  return buf;
}

/* --state-out: written under a temporary name and renamed (lib/io/atomic),
   so a failure leaves no file behind. Opened before any output so that an
   unwritable destination fails first. */
static void write_state(lowp_atomic_t *w, const char *path, const lowp_scaler_t *s) {
  char *text;
  int st;
  if (lowp_scaler_save_json(s, &text) != LOWP_OK) {
    lowp_atomic_abort(w);
    lowp_cli_die(CMD, "out of memory");
  }
  if (fprintf(w->fp, "%s\n", text) < 0) {
    free(text);
    lowp_atomic_abort(w);
    lowp_cli_die(CMD, "cannot write state file '%s'", path);
  }
  free(text);
  st = lowp_atomic_commit(w);
  if (st != LOWP_OK) lowp_cli_die(CMD, "cannot write state file '%s': %s", path, lowp_status_str(st));
}

static cJSON *num_json(double v) {
  if (isnan(v)) return cJSON_CreateString("nan");
  if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
  {
    char buf[40]; /* 17 digits: exact (cJSON's own printing may use 15) */
    snprintf(buf, sizeof buf, "%.17g", v);
    return cJSON_CreateRaw(buf);
  }
}

static cJSON *state_json(const lowp_scaler_t *s) {
  char *text;
  cJSON *o;
  if (lowp_scaler_save_json(s, &text) != LOWP_OK) lowp_cli_die(CMD, "out of memory");
  o = cJSON_CreateRaw(text);
  free(text);
  return o;
}

/* ----------------------------------------------------------- command */

int lowp_cmd_scaler(int argc, char **argv) {
  static const char *const names[] = {"ok", "inf", "nan", "-inf"};
  const char *events = NULL, *state_in = NULL, *state_out = NULL;
  const char *a_init = NULL, *a_growth = NULL, *a_backoff = NULL, *a_interval = NULL,
             *a_policy = NULL;
  int json = 0, i;
  long long n = 0, k;
  unsigned char *ev;
  lowp_scaler_t s;
  lowp_scaler_policy_t pol = LOWP_SCALER_PYTORCH;
  double init = 65536.0, growth = 2.0, backoff = 0.5;
  long long interval = 2000;
  cJSON *root = NULL, *steps = NULL;
  lowp_atomic_t out;

  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return LOWP_EXIT_OK; }
    else if (!strcmp(a, "--events")) events = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--init")) a_init = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--growth")) a_growth = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--backoff")) a_backoff = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--interval")) a_interval = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--policy")) a_policy = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--state-in")) state_in = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--state-out")) state_out = lowp_cli_need_arg(CMD, argc, argv, &i);
    else if (!strcmp(a, "--json")) json = 1;
    else lowp_cli_die(CMD, "unknown option '%s' (see lowp scaler --help)", a);
  }
  if (!events) lowp_cli_die(CMD, "--events is required (see lowp scaler --help)");
  if (a_policy && lowp_scaler_policy_parse(&pol, a_policy) != LOWP_OK)
    lowp_cli_die(CMD, "unknown policy '%s': expected pytorch, genesis, mlx or mlx-py", a_policy);
  if (a_init) {
    init = positive("--init", a_init);
    if (state_in) lowp_cli_die(CMD, "--init and --state-in cannot be combined (the state has the scale)");
  }
  if (a_growth) growth = positive("--growth", a_growth);
  if (a_backoff) backoff = positive("--backoff", a_backoff);
  if (a_interval) interval = lowp_cli_int(CMD, "--interval", a_interval, 1, 2147483647LL);
  ev = parse_events(events, &n);

  if (lowp_scaler_init(&s, pol, init, growth, backoff, interval) != LOWP_OK)
    lowp_cli_die(CMD, "--init %g does not give a finite positive %s scale", init,
                 (pol == LOWP_SCALER_PYTORCH || pol == LOWP_SCALER_MLX) ? "fp32" : "fp64");
  if (state_out) { /* an output may not be the input (issue 19) */
    lowp_outputs_t outs;
    memset(&outs, 0, sizeof outs);
    lowp_outputs_add(&outs, CMD, "--state-out", state_out);
    lowp_outputs_input(&outs, CMD, "--state-in", state_in);
  }
  if (state_in) {
    char err[256], *text = read_file(state_in);
    if (lowp_scaler_load_json(&s, text, err, sizeof err) != LOWP_OK) {
      free(text);
      lowp_cli_die(CMD, "state file '%s' is not a scaler state: %s", state_in, err);
    }
    free(text);
    if (a_policy) {
      s.policy = pol;
      if (pol == LOWP_SCALER_PYTORCH || pol == LOWP_SCALER_MLX) s.scale = (double)(float)s.scale;
    }
    if (a_growth) s.growth = growth;
    if (a_backoff) s.backoff = backoff;
    if (a_interval) s.interval = interval;
  }

  memset(&out, 0, sizeof out);
  if (state_out) {
    int st;
    lowp_output_check_file(CMD, "--state-out", state_out);
    st = lowp_atomic_open(&out, state_out);
    if (st != LOWP_OK) lowp_cli_die(CMD, "cannot write state file '%s': %s", state_out, lowp_status_str(st));
  }
  if (json) {
    root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "policy", lowp_scaler_policy_name(s.policy));
    cJSON_AddItemToObject(root, "initial", state_json(&s));
    steps = cJSON_AddArrayToObject(root, "steps");
  } else {
    printf("# policy %s, scale %.9g, growth %.17g, backoff %.17g, interval %lld, tracker %lld\n",
           lowp_scaler_policy_name(s.policy), s.scale, s.growth, s.backoff, s.interval, s.tracker);
    printf("%8s  %-5s  %-7s  %-16s  %-22s  %s\n", "step", "event", "skipped", "scale",
           "scale (hex)", "tracker");
  }
  for (k = 0; k < n; k++) {
    int skipped;
    lowp_scaler_update(&s, ev[k] != 0, &skipped);
    if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "step", (double)(s.steps));
      cJSON_AddStringToObject(o, "event", names[ev[k]]);
      cJSON_AddBoolToObject(o, "skipped", skipped);
      cJSON_AddItemToObject(o, "scale", num_json(s.scale));
      cJSON_AddNumberToObject(o, "tracker", (double)s.tracker);
      cJSON_AddItemToObject(o, "inv_scale", num_json(lowp_scaler_inv_scale(&s)));
      cJSON_AddItemToArray(steps, o);
    } else {
      char hex[40];
      snprintf(hex, sizeof hex, "%a", s.scale);
      printf("%8lld  %-5s  %-7s  %-16.9g  %-22s  %lld\n", s.steps, names[ev[k]],
             skipped ? "yes" : "no", s.scale, hex, s.tracker);
    }
  }
  free(ev);
  if (json) {
    char *out;
    cJSON_AddItemToObject(root, "final", state_json(&s));
    out = cJSON_Print(root);
    if (!out) lowp_cli_die(CMD, "out of memory");
    printf("%s\n", out);
    free(out);
    cJSON_Delete(root);
  }
  /* the file last: what was printed must have reached stdout first, or nothing is published */
  if (state_out) {
    lowp_stdout_before_publish(CMD, state_out);
    write_state(&out, state_out, &s);
  }
  return LOWP_EXIT_OK;
}
