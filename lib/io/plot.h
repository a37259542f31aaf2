/* lowp_plot -- the gnuplot driver every experiment uses: CSV in, PNG + SVG out */
#ifndef LOWP_PLOT_H
#define LOWP_PLOT_H

#include <stddef.h>

/** @brief One curve: columns of a CSV file in the output folder. */
typedef struct {
  const char *csv;   /**< file name, relative to the output folder */
  int xcol, ycol;    /**< 1-based CSV columns */
  const char *title; /**< legend entry (escaped for gnuplot by the driver) */
  const char *style; /**< "lines", "points", "linespoints", "steps"; NULL = linespoints */
  const char *filter;/**< optional: keep rows whose column FILTER_COL equals this text */
  int filter_col;    /**< 1-based column for filter, 0 = none */
  int dashed;        /**< draw dashed (bounds, references) */
} lowp_series_t;

/** @brief The axes of one plot. */
typedef struct {
  const char *title;  /**< plot title */
  const char *xlabel; /**< with units, e.g. "n (number of terms)" */
  const char *ylabel; /**< with units, e.g. "relative error" */
  int logx, logy;     /**< log scales (base 10 tics) */
  const char *extra;  /**< raw gnuplot commands inserted before `plot`, or NULL */
} lowp_plot_t;

/**
 * @brief Write OUTDIR/BASE.gp (kept, so the plot can be re-made by hand) and
 * run gnuplot on it to produce OUTDIR/BASE.png and OUTDIR/BASE.svg. The
 * images are written under temporary names and renamed, so a failed run
 * leaves no half-written image. gnuplot runs in OUTDIR without a shell
 * (lowp_spawn) and the script names files relative to it only, so OUTDIR
 * may be any folder name and appears nowhere in the script.
 * @param[in] base  plain file name (letters, digits, ._-+,=; no '/')
 * @param[in] s     the curves; their csv names follow the same rule as base
 * @return LOWP_OK; LOWP_EINVAL (a NULL argument, an unsafe base or csv
 *         name); LOWP_EIO if the script cannot be written or gnuplot
 *         fails; LOWP_EUNSUPPORTED if gnuplot is not installed.
 */
int lowp_plot(const char *outdir, const char *base, const lowp_plot_t *p,
              const lowp_series_t *s, size_t ns);

/**
 * @brief Which curves lie on an earlier one (lib/io/plot_same.c): same[i] =
 * the first j < i whose points, read back from their CSV files in outdir
 * (rows passing the filter, x parsed), agree with series i's within rtol
 * relatively (rtol = 0: equal; NaN with NaN, inf with the same inf) at
 * every x both have, where the x values of one are all among the other's
 * (one may run to more sizes) and at least 2 are shared (1 if both have
 * just 1); -1 if none. At most 4096 points a series are compared. For
 * marking curves that hide each other.
 * @return LOWP_OK; LOWP_EINVAL; LOWP_EIO (a CSV file cannot be read); LOWP_ENOMEM.
 */
int lowp_plot_coincide(const char *outdir, const lowp_series_t *s, size_t ns, double rtol, int *same);

/** @brief 1 if a gnuplot executable can be run, else 0 (asked once per process). */
int lowp_plot_available(void);

#endif
