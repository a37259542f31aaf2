/* lowp_plot_coincide -- which curves of a plot lie on an earlier one (read back from their CSV files) */

#include "io/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

#define MAXPTS 4096

/* ------------------------------------------------------ private helpers */

/* field c (1-based) of a CSV line (no quoting: lowp's CSV fields hold no comma) into out */
static int field(const char *line, int c, char *out, size_t len) {
  const char *p = line, *q;
  int i;
  for (i = 1; i < c; i++) {
    p = strchr(p, ',');
    if (!p) return 0;
    p++;
  }
  q = p + strcspn(p, ",\r\n");
  if ((size_t)(q - p) >= len) return 0;
  memcpy(out, p, (size_t)(q - p));
  out[q - p] = '\0';
  return 1;
}

/* the (x, y) points of series s: rows of its CSV whose filter column matches and whose x parses */
static int points(const char *outdir, const lowp_series_t *s, double *x, double *y, size_t *n) {
  char path[4096], line[4096], f[1024];
  FILE *fp;
  *n = 0;
  if (!s->csv || snprintf(path, sizeof path, "%s/%s", outdir, s->csv) >= (int)sizeof path) return LOWP_EINVAL;
  fp = fopen(path, "r");
  if (!fp) return LOWP_EIO;
  while (fgets(line, sizeof line, fp) && *n < MAXPTS) {
    char *end;
    double xv, yv;
    if (line[0] == '#') continue;
    if (s->filter && s->filter_col > 0 && (!field(line, s->filter_col, f, sizeof f) || strcmp(f, s->filter)))
      continue;
    if (!field(line, s->xcol, f, sizeof f)) continue;
    xv = strtod(f, &end);
    if (end == f) continue; /* the header */
    if (!field(line, s->ycol, f, sizeof f)) continue;
    yv = strtod(f, &end);
    if (end == f) yv = NAN;
    x[*n] = xv;
    y[(*n)++] = yv;
  }
  fclose(fp);
  return LOWP_OK;
}

static int close_to(double a, double b, double rtol) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  return fabs(a - b) <= rtol * fmax(fabs(a), fabs(b));
}

/* do curves a and b agree at every x both have, with one's x values all among the other's, and at
   least 2 of them (or 1 when each has only that one)? */
static int on_curve(const double *xa, const double *ya, size_t na, const double *xb, const double *yb, size_t nb,
                    double rtol) {
  size_t k, l, common = 0;
  for (k = 0; k < na; k++)
    for (l = 0; l < nb; l++)
      if (xa[k] == xb[l]) {
        if (!close_to(ya[k], yb[l], rtol)) return 0;
        common++;
        break;
      }
  if (common == 0 || common < (na < nb ? na : nb)) return 0;
  return common >= 2 || (na == 1 && nb == 1);
}

/* ----------------------------------------------------------- public API */

int lowp_plot_coincide(const char *outdir, const lowp_series_t *s, size_t ns, double rtol, int *same) {
  double *x, *y;
  size_t *np, i, j;
  int st = LOWP_OK;
  if (!outdir || (ns && (!s || !same)) || !(rtol >= 0)) return LOWP_EINVAL;
  x = malloc((ns ? ns : 1) * MAXPTS * sizeof *x);
  y = malloc((ns ? ns : 1) * MAXPTS * sizeof *y);
  np = calloc(ns ? ns : 1, sizeof *np);
  if (!x || !y || !np) { free(x); free(y); free(np); return LOWP_ENOMEM; }
  for (i = 0; i < ns && !st; i++) st = points(outdir, &s[i], x + i * MAXPTS, y + i * MAXPTS, &np[i]);
  for (i = 0; i < ns; i++) {
    same[i] = -1;
    for (j = 0; !st && j < i && same[i] < 0; j++)
      if (on_curve(x + i * MAXPTS, y + i * MAXPTS, np[i], x + j * MAXPTS, y + j * MAXPTS, np[j], rtol))
        same[i] = (int)j;
  }
  free(x);
  free(y);
  free(np);
  return st;
}
