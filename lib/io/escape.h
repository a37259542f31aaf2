/* lowp_escape -- make untrusted text (names, values, paths) printable on one line */
#ifndef LOWP_ESCAPE_H
#define LOWP_ESCAPE_H

#include <stddef.h>

/**
 * @brief Copy in to out with every control character (bytes below 0x20 and
 * 0x7f) written as an escape: "\n", "\r", "\t", else "\xHH". A message that
 * quotes a user's argument thus stays one line, and carries no terminal
 * control sequence. Bytes of 0x80 and above (UTF-8) are kept.
 * @param[out] out  always NUL-terminated when len > 0; truncated to fit
 * @return the length written (excluding the NUL).
 */
size_t lowp_escape_ctl(char *out, size_t len, const char *in);

/**
 * @brief Format a message (printf) into err, escaped as lowp_escape_ctl
 * does, and return st: the one way lib/ writes an error message that quotes
 * names, values or paths from a user's files. err may be NULL.
 */
int lowp_errf(char *err, size_t errlen, int st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
