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

/** @brief The first line of `gnuplot --version`, or "" if gnuplot cannot be run (the same single
 * start as lowp_plot_available's: a gnuplot start costs about 40 ms of CPU). */
const char *lowp_plot_version(void);

/**
 * @brief on != 0: from now on lowp_plot writes BASE.gp and queues the plot,
 * and lowp_plot_flush draws all queued plots; 0 (the default): each plot is
 * drawn at once. A gnuplot start costs about 90 ms of CPU (pngcairo's fonts;
 * 35 ms a plot once started, measured on an AMD Zen 5), and an experiment
 * draws up to 45 plots, two images each. Not thread-safe: plots are queued
 * and flushed from one thread.
 */
void lowp_plot_defer(int on);

/**
 * @brief Draw every queued plot (both images of each) with one gnuplot
 * process per output folder ("reset session" before each script, so each is
 * drawn as by a gnuplot of its own: the same bytes). If that process fails,
 * each queued plot is drawn alone as lowp_plot draws it, so the failing one
 * keeps its BASE.gnuplot.log and leaves no image. The queue is empty after.
 * @return LOWP_OK (also with nothing queued); LOWP_EIO if a plot fails;
 *         LOWP_ENOMEM.
 */
int lowp_plot_flush(void);

/** @brief Forget the queued plots without drawing them (a run that failed). */
void lowp_plot_discard(void);

#endif
