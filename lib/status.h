/* lowp_status -- status codes returned by every lib/ and kernels/ function */
#ifndef LOWP_STATUS_H
#define LOWP_STATUS_H

/**
 * @brief Status of a library call: 0 = success, >0 = error, <0 = warning.
 *
 * lib/ never prints or exits; programs turn these into messages and exit
 * codes (usually 2 for any error caused by the caller's input).
 */
typedef enum {
  LOWP_OK = 0,           /**< success */
  LOWP_EINVAL = 1,       /**< an argument is out of its domain */
  LOWP_EFORMAT = 2,      /**< unknown or malformed format name or spec */
  LOWP_EROUND = 3,       /**< unknown rounding mode */
  LOWP_EPARSE = 4,       /**< malformed number or text */
  LOWP_ERANGE = 5,       /**< a value does not fit (e.g. bits wider than the format) */
  LOWP_ENOMEM = 6,       /**< allocation failed or would be too large */
  LOWP_EIO = 7,          /**< file could not be read or written */
  LOWP_EFILE = 8,        /**< file has the wrong type or a corrupt header */
  LOWP_ESHAPE = 9,       /**< mismatched shapes or sizes */
  LOWP_EUNSUPPORTED = 10,/**< valid request this build or device cannot do */
  LOWP_WINEXACT = -1     /**< warning: result was rounded */
} lowp_status_t;

/** @brief Short English text for a status code (static storage, never NULL). */
const char *lowp_status_str(int status);

#endif
