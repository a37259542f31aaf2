/* lowp_scaler -- dynamic loss scaling with PyTorch's exact rules, and the documents' variants */

#include "amp/scaler.h"

#include "status.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/escape.h"

/* ------------------------------------------------------ private helpers */

static const char *const policy_names[LOWP_SCALER_POLICY_COUNT] = {
    "pytorch", "genesis", "mlx", "mlx-py"};

/* fp32 policies keep the scale as a binary32 value */
static int is_fp32_policy(lowp_scaler_policy_t p) {
  return p == LOWP_SCALER_PYTORCH || p == LOWP_SCALER_MLX;
}

/* PyTorch's tracker is an int32 tensor; `tracker + 1` wraps (two's
   complement on every platform PyTorch runs on). */
static long long int32_wrap(long long t) {
  if (t > 2147483647LL) t -= 4294967296LL;
  if (t < -2147483648LL) t += 4294967296LL;
  return t;
}

static int factors_ok(double growth, double backoff, long long interval) {
  return isfinite(growth) && growth > 0 && isfinite(backoff) && backoff > 0 &&
         interval >= 1 && interval <= 2147483647LL;
}

/* --------------------------------------------------------- public API */

int lowp_scaler_init(lowp_scaler_t *s, lowp_scaler_policy_t policy, double init,
                     double growth, double backoff, long long interval) {
  if (!s || (int)policy < 0 || policy >= LOWP_SCALER_POLICY_COUNT) return LOWP_EINVAL;
  if (!(isfinite(init) && init > 0) || !factors_ok(growth, backoff, interval))
    return LOWP_EINVAL;
  s->policy = policy;
  /* torch.full((), init_scale, dtype=torch.float32): round to nearest even */
  s->scale = is_fp32_policy(policy) ? (double)(float)init : init;
  if (!(s->scale > 0) || isinf(s->scale)) return LOWP_EINVAL;
  s->tracker = 0;
  s->growth = growth;
  s->backoff = backoff;
  s->interval = interval;
  s->steps = 0;
  s->skipped = 0;
  return LOWP_OK;
}

int lowp_scaler_init_default(lowp_scaler_t *s, lowp_scaler_policy_t policy) {
  return lowp_scaler_init(s, policy, 65536.0, 2.0, 0.5, 2000);
}

int lowp_scaler_update(lowp_scaler_t *s, int found_inf, int *skipped) {
  if (!s || (int)s->policy < 0 || s->policy >= LOWP_SCALER_POLICY_COUNT ||
      !factors_ok(s->growth, s->backoff, s->interval))
    return LOWP_EINVAL;
  s->steps++;
  if (found_inf) s->skipped++;
  if (skipped) *skipped = found_inf ? 1 : 0;
  switch (s->policy) {
  case LOWP_SCALER_PYTORCH:
    /* _amp_update_scale_: float * double evaluated in double, stored to float */
    if (found_inf) {
      s->scale = (double)(float)(s->scale * s->backoff);
      s->tracker = 0;
    } else {
      long long successful = int32_wrap(s->tracker + 1);
      if (successful == s->interval) {
        float ns = (float)(s->scale * s->growth);
        if (isfinite(ns)) s->scale = (double)ns; /* "do not grow past fp32 bounds to inf" */
        s->tracker = 0;
      } else {
        s->tracker = successful;
      }
    }
    break;
  case LOWP_SCALER_GENESIS:
    if (found_inf) {
      s->scale *= s->backoff;
      s->scale = fmax(s->scale, 1.0); /* self.scale = max(self.scale, 1.0) */
      s->tracker = 0;
    } else {
      s->tracker += 1;
      if (s->tracker >= s->interval) {
        s->scale *= s->growth;
        s->tracker = 0;
      }
    }
    break;
  case LOWP_SCALER_MLX: {
    /* float members; float * float products */
    float sc = (float)s->scale, g = (float)s->growth, b = (float)s->backoff;
    if (found_inf) { /* step(): backoff, tracker 0, found_inf_ = false */
      sc = sc * b;
      s->tracker = 0;
    }
    /* update(): found_inf_ is false now in both cases */
    s->tracker += 1;
    if (s->tracker >= s->interval) {
      sc = sc * g;
      s->tracker = 0;
    }
    s->scale = (double)sc;
    break;
  }
  case LOWP_SCALER_MLX_PY:
    if (found_inf) { /* step(); update() then sees found_inf and returns */
      s->scale *= s->backoff;
      s->tracker = 0;
    } else {
      s->tracker += 1;
      if (s->tracker >= s->interval) {
        s->scale *= s->growth;
        s->tracker = 0;
      }
    }
    break;
  }
  return LOWP_OK;
}

double lowp_scaler_inv_scale(const lowp_scaler_t *s) {
  switch (s->policy) {
  case LOWP_SCALER_PYTORCH: return (double)(float)(1.0 / s->scale);
  case LOWP_SCALER_MLX: return (double)(1.0f / (float)s->scale);
  case LOWP_SCALER_MLX_PY: return (double)(float)(1.0 / s->scale);
  case LOWP_SCALER_GENESIS: return (double)(1.0f / (float)s->scale);
  }
  return NAN;
}

int lowp_scaler_unscale_f32(const lowp_scaler_t *s, float *g, size_t n, int *found_inf) {
  size_t i;
  int found = 0;
  if (!s || !found_inf || (n > 0 && !g)) return LOWP_EINVAL;
  if (s->policy == LOWP_SCALER_PYTORCH) {
    /* _amp_foreach_non_finite_check_and_unscale_: check the scaled value,
       multiply by inv_scale in fp32 (skipped when inv_scale == 1) */
    float inv = (float)lowp_scaler_inv_scale(s);
    for (i = 0; i < n; i++) {
      if (!isfinite(g[i])) found = 1;
      if (inv != 1.0f) g[i] = g[i] * inv;
    }
  } else if (s->policy == LOWP_SCALER_GENESIS) {
    float sc = (float)s->scale; /* param.grad.data.div_(self.scale) */
    for (i = 0; i < n; i++) {
      g[i] = g[i] / sc;
      if (!isfinite(g[i])) found = 1;
    }
  } else {
    float inv = (float)lowp_scaler_inv_scale(s);
    for (i = 0; i < n; i++) {
      g[i] = g[i] * inv;
      if (!isfinite(g[i])) found = 1;
    }
  }
  *found_inf = found;
  return LOWP_OK;
}

float lowp_scaler_scale_f32(const lowp_scaler_t *s, float x) {
  return x * (float)s->scale;
}

const char *lowp_scaler_policy_name(lowp_scaler_policy_t p) {
  return ((int)p >= 0 && p < LOWP_SCALER_POLICY_COUNT) ? policy_names[p] : "unknown";
}

int lowp_scaler_policy_parse(lowp_scaler_policy_t *p, const char *text) {
  int i;
  if (!p || !text) return LOWP_EPARSE;
  for (i = 0; i < LOWP_SCALER_POLICY_COUNT; i++)
    if (!strcmp(text, policy_names[i])) {
      *p = (lowp_scaler_policy_t)i;
      return LOWP_OK;
    }
  return LOWP_EPARSE;
}

/* A double as JSON: a number printed with 17 digits, or the strings "inf", "-inf", "nan" (JSON has
   no such numbers, and cJSON would print them as null). */
static cJSON *num_item(double v) {
  if (isnan(v)) return cJSON_CreateString("nan");
  if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
  {
    /* cJSON prints 15 digits when they come back within an epsilon, which
       is not exact; 17 significant digits always round-trip a binary64 */
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    return cJSON_CreateRaw(buf);
  }
}

/* An integer as JSON, all its digits (cJSON's 15-digit print, accepted
   within an epsilon, turns 4999999999999989 into 4.99999999999999e+15) */
static cJSON *int_item(long long v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", v);
  return cJSON_CreateRaw(buf);
}

int lowp_scaler_save_json(const lowp_scaler_t *s, char **text) {
  cJSON *o;
  if (!s || !text) return LOWP_EINVAL;
  *text = NULL;
  o = cJSON_CreateObject();
  if (!o) return LOWP_ENOMEM;
  cJSON_AddItemToObject(o, "scale", num_item(s->scale));
  cJSON_AddItemToObject(o, "growth_factor", num_item(s->growth));
  cJSON_AddItemToObject(o, "backoff_factor", num_item(s->backoff));
  cJSON_AddItemToObject(o, "growth_interval", int_item((long long)s->interval));
  cJSON_AddItemToObject(o, "_growth_tracker", int_item((long long)s->tracker));
  cJSON_AddStringToObject(o, "policy", lowp_scaler_policy_name(s->policy));
  cJSON_AddItemToObject(o, "steps", int_item((long long)s->steps));
  cJSON_AddItemToObject(o, "skipped", int_item((long long)s->skipped));
  *text = cJSON_Print(o);
  cJSON_Delete(o);
  return *text ? LOWP_OK : LOWP_ENOMEM;
}

static void set_err(char *err, size_t errlen, const char *msg, const char *key) {
  lowp_errf(err, errlen, 0, msg, key);
}

/* A required or optional number; 0 ok, 1 missing, -1 wrong type. */
static int get_num(const cJSON *o, const char *key, double *v) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!it) return 1;
  if (cJSON_IsNumber(it)) { *v = it->valuedouble; return 0; }
  if (cJSON_IsString(it)) {
    if (!strcmp(it->valuestring, "inf")) { *v = INFINITY; return 0; }
    if (!strcmp(it->valuestring, "-inf")) { *v = -INFINITY; return 0; }
    if (!strcmp(it->valuestring, "nan")) { *v = NAN; return 0; }
  }
  return -1;
}

/* An integer-valued number within [lo, hi]; 0 ok, 1 missing, -1 bad. */
static int get_int(const cJSON *o, const char *key, long long lo, long long hi, long long *v) {
  double d;
  int r = get_num(o, key, &d);
  if (r) return r;
  if (!(d >= (double)lo && d <= (double)hi) || d != floor(d)) return -1;
  *v = (long long)d;
  return 0;
}

int lowp_scaler_load_json(lowp_scaler_t *s, const char *text, char *err, size_t errlen) {
  static const char *const req[] = {"scale", "growth_factor", "backoff_factor",
                                    "growth_interval", "_growth_tracker"};
  lowp_scaler_t t;
  cJSON *o;
  const cJSON *it;
  double d[3];
  long long iv;
  size_t k;
  int r, st = LOWP_OK;
  if (!s || !text) return LOWP_EINVAL;
  t = *s;
  {
    size_t at;
    if (lowp_json_find_bad_number(text, strlen(text), &at)) {
      char w[160];
      snprintf(w, sizeof w, "not valid JSON: a number with a leading zero, or a point or exponent without "
               "digits, at byte %zu", at);
      set_err(err, errlen, "%s", w);
      return LOWP_EPARSE;
    }
  }
  /* one JSON value and nothing after it but blanks */
  o = cJSON_ParseWithOpts(text, NULL, 1);
  if (!o) {
    cJSON *head = cJSON_ParseWithOpts(text, NULL, 0);
    set_err(err, errlen, "%s", head ? "text after the JSON object" : "not valid JSON");
    cJSON_Delete(head);
    return LOWP_EPARSE;
  }
  if (!cJSON_IsObject(o)) { set_err(err, errlen, "%sexpected a JSON object", ""); st = LOWP_EPARSE; goto done; }
  /* cJSON keeps every member of a repeated key and reads the first:
     a repeated key is an error, not a silent choice */
  for (it = o->child; it; it = it->next) {
    static const char *const known[] = {"scale", "growth_factor", "backoff_factor",
                                        "growth_interval", "_growth_tracker", "policy",
                                        "steps", "skipped"};
    const cJSON *prev;
    size_t q;
    for (q = 0; q < sizeof known / sizeof known[0]; q++)
      if (it->string && !strcmp(it->string, known[q])) break;
    if (q == sizeof known / sizeof known[0]) {
      /* a misspelt optional key would otherwise be ignored in silence */
      set_err(err, errlen, "unknown key \"%.64s\" (known: scale, growth_factor, backoff_factor, "
              "growth_interval, _growth_tracker, policy, steps, skipped)",
              it->string ? it->string : "");
      st = LOWP_EPARSE;
      goto done;
    }
    for (prev = o->child; prev != it; prev = prev->next)
      if (it->string && prev->string && !strcmp(it->string, prev->string)) {
        set_err(err, errlen, "key \"%s\" appears twice", it->string);
        st = LOWP_EPARSE;
        goto done;
      }
  }
  it = cJSON_GetObjectItemCaseSensitive(o, "policy");
  if (it) {
    if (!cJSON_IsString(it) || lowp_scaler_policy_parse(&t.policy, it->valuestring) != LOWP_OK) {
      set_err(err, errlen, "%s\"policy\" must be one of pytorch, genesis, mlx, mlx-py", "");
      st = LOWP_EPARSE; goto done;
    }
  }
  for (k = 0; k < 3; k++) {
    r = get_num(o, req[k], &d[k]);
    if (r) {
      set_err(err, errlen, r > 0 ? "missing key \"%s\"" : "\"%s\" must be a number", req[k]);
      st = LOWP_EPARSE; goto done;
    }
  }
  if (isnan(d[0]) || d[0] < 0) { set_err(err, errlen, "\"%s\" must be >= 0 (or \"inf\")", "scale"); st = LOWP_EINVAL; goto done; }
  t.scale = is_fp32_policy(t.policy) ? (double)(float)d[0] : d[0];
  t.growth = d[1];
  t.backoff = d[2];
  r = get_int(o, "growth_interval", 1, 2147483647LL, &iv);
  if (r) { set_err(err, errlen, r > 0 ? "missing key \"%s\"" : "\"%s\" must be an integer in [1, 2^31-1]", "growth_interval"); st = r > 0 ? LOWP_EPARSE : LOWP_EINVAL; goto done; }
  t.interval = iv;
  r = get_int(o, "_growth_tracker", -2147483648LL, 2147483647LL, &iv);
  if (r) { set_err(err, errlen, r > 0 ? "missing key \"%s\"" : "\"%s\" must be an int32 integer", "_growth_tracker"); st = r > 0 ? LOWP_EPARSE : LOWP_EINVAL; goto done; }
  t.tracker = iv;
  if (!factors_ok(t.growth, t.backoff, t.interval)) {
    set_err(err, errlen, "%sgrowth_factor and backoff_factor must be finite and > 0", "");
    st = LOWP_EINVAL; goto done;
  }
  r = get_int(o, "steps", 0, 9007199254740992LL, &iv);
  if (r < 0) { set_err(err, errlen, "\"%s\" must be a non-negative integer", "steps"); st = LOWP_EPARSE; goto done; }
  if (r == 0) t.steps = iv;
  r = get_int(o, "skipped", 0, 9007199254740992LL, &iv);
  if (r < 0) { set_err(err, errlen, "\"%s\" must be a non-negative integer", "skipped"); st = LOWP_EPARSE; goto done; }
  if (r == 0) t.skipped = iv;
  *s = t;
done:
  cJSON_Delete(o);
  return st;
}
