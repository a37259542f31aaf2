/* lowp_plugin_table -- checking a plugin's kernel table (lib/check/plugin.c), exposed for tests and fuzzing */
#ifndef LOWP_PLUGIN_TABLE_H
#define LOWP_PLUGIN_TABLE_H

#include <stddef.h>

#include "check/subject.h"
#include "lowp_plugin.h"

/**
 * @brief Check a kernel table as lowp_plugin_subject_open does: 1 to 4096
 * entries, each with a name (unique), a function, an operation lowp knows,
 * as many input formats as it has inputs (lowp format names; "i64" for
 * class indices) and an output format, each with a container
 * (include/lowp_plugin.h).
 * @param[out] err one line naming the entry and the problem
 * @return LOWP_OK or LOWP_EFILE.
 */
int lowp_plugin_table_check(const lowp_plugin_kernel_t *tab, size_t n, char *err, size_t errlen);

/**
 * @brief lowp_plugin_subject_open (lib/check/subject.h) with a time limit
 * for each call of the kernel and for loading the library, in seconds
 * (> 0; 0 = LOWP_PLUGIN_TIMEOUT, default 600 s). A LOWP_PLUGIN_TIMEOUT that
 * is not a number of seconds > 0 is refused (LOWP_EINVAL). Loading and the
 * table run in a child: a library whose constructor or table function
 * crashes, exits or hangs is refused (LOWP_EFILE, naming what it did).
 */
int lowp_plugin_subject_open_ex(lowp_subject_t *s, const char *path, const char *kernel,
                                double timeout, const lowp_problem_t *p, char *err, size_t errlen);

#endif
