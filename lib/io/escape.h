/* lowp_escape -- make untrusted text (names, values, paths) printable on one line */
#ifndef LOWP_ESCAPE_H
#define LOWP_ESCAPE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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

/** @brief lowp_errf with its arguments as a va_list. */
int lowp_verrf(char *err, size_t errlen, int st, const char *fmt, va_list ap);

/**
 * @brief Decode one UTF-8 character of s (at most len bytes): shortest
 * form only, no surrogates, at most U+10FFFF.
 * @param[out] cp  the code point
 * @return its length in bytes (1 to 4), or 0 if s does not start with a
 * valid UTF-8 character (or len is 0).
 */
size_t lowp_utf8_next(const char *s, size_t len, uint32_t *cp);

/**
 * @brief Whether s (len bytes) is valid UTF-8.
 * @param[out] bad  if not NULL and s is not valid: the offset of the first
 *                  bad byte
 * @return 1 valid, 0 not.
 */
int lowp_utf8_valid(const char *s, size_t len, size_t *bad);

/** @brief Whether XML 1.0 can hold code point cp (its production Char:
    tab, newline, carriage return, U+0020..U+D7FF, U+E000..U+FFFD,
    U+10000..U+10FFFF). */
int lowp_xml_char_ok(uint32_t cp);

/**
 * @brief Whether a name (a check name, a tensor name, a baseline key) can
 * be written into JUnit XML and JSON as it is: valid UTF-8, and no
 * character below U+0020, U+007F, or that XML 1.0 cannot hold.
 * @return 1 yes, 0 no.
 */
int lowp_name_ok(const char *s);

/**
 * @brief Replace every byte of s that is not part of a valid UTF-8
 * character with '?', in place (the length is kept): text from a plugin or
 * a file becomes valid UTF-8 before it goes into JSON.
 * @return the number of bytes replaced.
 */
size_t lowp_utf8_sanitize(char *s);

/**
 * @brief Find a NUL character in JSON text (len bytes): a raw NUL byte, or
 * the escape \u0000 in a string (which no C string can hold: names would be
 * cut short). Escaped backslashes are skipped, so "\\u0000" is not one.
 * @param[out] off  where it is
 * @return 0 none; 1 a raw NUL byte; 2 a \u0000 escape.
 */
int lowp_json_find_nul(const char *text, size_t len, size_t *off);

/**
 * @brief Find a number outside strings that JSON's grammar (RFC 8259) does not allow and cJSON reads
 * all the same: a leading zero ("064", "-01"), a point without digits after it ("64.", "1.e3"), or an
 * exponent without digits ("1e", "1e+"). Strings and their escapes are skipped; a '-' without digits
 * ("-Infinity") is left to the parser, which refuses it.
 * @param[out] off  where the number starts
 * @return 1 if one was found, 0 if none.
 */
int lowp_json_find_bad_number(const char *text, size_t len, size_t *off);

#endif
