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

#endif
