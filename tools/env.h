/* lowp environment manifest -- what a run's numbers may depend on besides the seed (tools/ only) */
#ifndef LOWP_ENV_H
#define LOWP_ENV_H

#include <cjson/cJSON.h>

/**
 * @brief The machine and software a run executed on, as a new JSON object
 * (caller owns it): date (UTC day; SOURCE_DATE_EPOCH when set, the
 * reproducible-builds convention), git revision and dirty flag, CPU model
 * and its numeric ISA flags (/proc/cpuinfo), OpenBLAS version, config and
 * core (openblas_get_config / openblas_get_corename), MPFR, GMP, glibc and
 * cJSON versions, GLIBC_TUNABLES (it can switch glibc's libm code),
 * compiler and flags, gnuplot's version, the OS, and
 * numpy's version for an experiment that runs Python (name: the
 * experiment, or NULL for the report). results.json keeps it apart from
 * everything else ("environment"): the rest is the same bytes for the same
 * seed and revision, except the rows lowp_env_dependent names.
 */
cJSON *lowp_env_manifest(const char *name);

/** @brief `git describe --always --dirty --abbrev=12` of the source tree, or "" when git cannot tell;
 * asked once per process (the run header and the manifest share it). */
const char *lowp_env_git_revision(void);

/**
 * @brief What of experiment name depends on the CPU or a library's build,
 * as a new JSON array (caller owns it) of {"match", "why"} (a table row,
 * key, CSV line or sentence that mentions match, case-insensitive) and
 * {"file", "why"} (a whole file), each with "when" (the manifest items,
 * such as "openblas.core", whose difference makes it differ; absent: it
 * differs from run to run, a timing): the rows `lowp report --diff`
 * expects to differ on another machine, and only when one of its "when"
 * items differs between the two runs. Empty for an experiment whose every
 * number is the same bytes anywhere.
 */
cJSON *lowp_env_dependent(const char *name);

#endif
