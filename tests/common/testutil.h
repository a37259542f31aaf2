/* lowp_test -- seed handling and failure counting shared by test programs */
#ifndef LOWP_TESTUTIL_H
#define LOWP_TESTUTIL_H

#include <stdint.h>

/**
 * @brief Start a test program: seed from LOWP_TEST_SEED (a number, or
 * "random" for the clock), else the fixed default 0x2143FEDC; prints the seed.
 */
void lowp_test_start(const char *name);
/** @brief The seed chosen by lowp_test_start. */
uint64_t lowp_test_seed(void);
/** @brief Count one check; on failure print the formatted message. Returns ok. */
int lowp_test_check(int ok, const char *fmt, ...);
/** @brief Number of failures so far. */
long lowp_test_failures(void);
/** @brief Print "name: N passed, N failed" and return the exit status. */
int lowp_test_end(void);
/** @brief Skip the whole program (exit 77, CTest's skip) with a reason. */
void lowp_test_skip(const char *why);
/** @brief Hex-float text of a double, with its bits ("0x1p+0 [3ff0000000000000]"). */
const char *lowp_test_hex(double v, char *buf, unsigned len);

/**
 * @brief Run the lowp program built beside this test program (found through
 * /proc/self/exe; "./lowp" if that cannot be read) with args, a shell
 * fragment appended as is (quote paths in it), stdout and stderr discarded.
 * @return its exit status (0..255), or -1 if it could not be started.
 */
int lowp_test_run_lowp(const char *args);
/** @brief 1 if dir/file exists and is readable, else 0. */
int lowp_test_file_exists(const char *dir, const char *file);
/** @brief 1 if every file of the NULL-terminated list exists in dir
    (lowp_test_file_exists), else 0. */
int lowp_test_files_exist(const char *dir, const char *const *files);
/** @brief Make a temporary folder from templ ("/tmp/name.XXXXXX", rewritten
    in place by mkdtemp); on failure print "cannot make a temporary folder"
    and exit 1. */
void lowp_test_make_tmpdir(char *templ);
/** @brief Remove the folder dir and everything in it ("rm -rf"); prints a
    note (not a failure) if that fails. */
void lowp_test_remove_dir(const char *dir);

#endif
