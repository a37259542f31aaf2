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

#endif
