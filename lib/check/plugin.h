/* lowp_plugin_table -- checking a plugin's kernel table (lib/check/plugin.c), exposed for tests and fuzzing */
#ifndef LOWP_PLUGIN_TABLE_H
#define LOWP_PLUGIN_TABLE_H

#include <stddef.h>

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

#endif
