/* lowp_status_str -- text for a status code */

#include "status.h"

const char *lowp_status_str(int status) {
  switch (status) {
  case LOWP_OK: return "ok";
  case LOWP_EINVAL: return "invalid argument";
  case LOWP_EFORMAT: return "unknown or invalid format";
  case LOWP_EROUND: return "unknown rounding mode";
  case LOWP_EPARSE: return "malformed number or text";
  case LOWP_ERANGE: return "value out of range";
  case LOWP_ENOMEM: return "out of memory or size too large";
  case LOWP_EIO: return "input/output error";
  case LOWP_EFILE: return "wrong file type or corrupt file";
  case LOWP_ESHAPE: return "mismatched shapes";
  case LOWP_EUNSUPPORTED: return "not supported here";
  case LOWP_WINEXACT: return "inexact";
  default: return "unknown status";
  }
}
