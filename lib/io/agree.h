/* lowp_agree -- what an MPI rank runs (its command line and the identity of its input files), compared across ranks */
#ifndef LOWP_AGREE_H
#define LOWP_AGREE_H

/*
 * Every rank of an MPI job must run the same command on the same inputs:
 * ranks that disagree would split different work (different sizes, seeds,
 * specs) and meet in collectives that do not match (a crash or a hang).
 * par/ exchanges one record per rank before any work and refuses the job
 * when two differ. A record holds a SHA-256 digest of the arguments and of
 * every file an argument names (size and content), plus enough of both to
 * say which argument or file differs. Pure functions: par/ does the
 * exchange; the fuzzer (fuzz/fuzz_agree.c) holds the comparison.
 */

#include <stddef.h>
#include <stdint.h>

/** Arguments described one by one (the digest covers all of them). */
#define LOWP_AGREE_NARGS 64
/** Bytes of the arguments' text kept for messages. */
#define LOWP_AGREE_TEXT 1024

/** What an argument names. */
enum {
  LOWP_AGREE_NOFILE = 0, /**< nothing there (or an output option's value: not read) */
  LOWP_AGREE_FILE,       /**< a regular file: size and content hashed */
  LOWP_AGREE_OTHER,      /**< a folder: its kind only */
  LOWP_AGREE_UNREADABLE, /**< a regular file that cannot be read */
  LOWP_AGREE_STREAM      /**< a FIFO, a socket or a device: its kind only (what a
                              rank reads from it is compared apart, or refused) */
};

/** @brief One rank's record: plain bytes (no padding), compared with memcmp. */
typedef struct {
  uint8_t digest[32];                    /**< SHA-256 of everything below and of all arguments */
  uint8_t nargs[4];                      /**< argument count (little-endian) */
  uint8_t kind[LOWP_AGREE_NARGS];        /**< LOWP_AGREE_* of argument i */
  uint8_t hash[LOWP_AGREE_NARGS][16];    /**< file i: SHA-256 (cut) of its size and content */
  uint8_t size[LOWP_AGREE_NARGS][8];     /**< file i: its size (little-endian) */
  char text[LOWP_AGREE_TEXT];            /**< the arguments, each NUL-terminated, cut */
} lowp_agree_t;

/** @brief SHA-256 (FIPS 180-4) of n bytes. */
void lowp_sha256(uint8_t out[32], const void *data, size_t n);

/**
 * @brief The record of a command line: args[0..n) (without the program
 * name). Each argument, or the value after '=' of a "--key=value", that
 * names a file is looked up (stat, then its size and content: up to its
 * size, and none of a file over 1 TiB) unless it is the
 * value of an output option (--out*, --json, --junit, --capture, --csv):
 * an output may not exist yet, or differ, on every rank.
 * @return LOWP_OK; LOWP_EINVAL.
 */
int lowp_agree_record(lowp_agree_t *r, int n, char *const *args);

/**
 * @brief Compare rank 0's record with rank r's. @return 0 if they agree;
 * else 1 and msg: one line saying what differs (without "lowp: ").
 */
int lowp_agree_compare(const lowp_agree_t *r0, const lowp_agree_t *rr, int rank, char *msg, size_t len);

#endif
