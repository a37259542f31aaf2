/* lowp_format -- floating-point formats as data; rounding to them; bits */
#ifndef LOWP_FORMAT_H
#define LOWP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ types */

/** @brief How the format encodes infinity. */
typedef enum {
  LOWP_INF_NONE = 0, /**< no infinity (e4m3fn, fnuz formats, fp6, fp4, e8m0) */
  LOWP_INF_IEEE = 1  /**< exponent field all ones, fraction zero */
} lowp_inf_t;

/** @brief How the format encodes NaN. */
typedef enum {
  LOWP_NAN_NONE = 0,    /**< no NaN at all (fp6, fp4) */
  LOWP_NAN_IEEE = 1,    /**< exponent all ones, fraction nonzero */
  LOWP_NAN_ALLONES = 2, /**< only S.1..1.1..1 (OCP e4m3 "fn"; e8m0's 0xFF) */
  LOWP_NAN_NEGZERO = 3  /**< only the pattern 1.0..0.0..0, no -0 ("fnuz") */
} lowp_nan_t;

/**
 * @brief A binary floating-point format, described as data.
 *
 * Values are (-1)^s * m * 2^(e-p+1) with integer m < 2^p and
 * emin <= e <= emax; subnormals are the values with e = emin and m < 2^(p-1).
 * Everything else (u, eps, xmin, xmax, counts, bias) is computed from these
 * fields by the functions below, never written as a literal elsewhere.
 */
typedef struct {
  const char *name;  /**< "fp16", "bf16", "e4m3", ...; user formats: "custom" */
  int precision;     /**< p: significand bits including the hidden bit, 1..53
                          (every value of a lowp format is a binary64 value,
                          which has 53; the validator enforces it) */
  int emin;          /**< exponent of the smallest normal number */
  int emax;          /**< exponent of the largest finite binade */
  int subnormals;    /**< 1: gradual underflow; 0: none (below xmin is 0) */
  lowp_inf_t inf;    /**< infinity encoding */
  lowp_nan_t nan;    /**< NaN encoding */
  int has_sign;      /**< 1 normally; 0 for unsigned formats (e8m0) */
  int has_zero;      /**< 1 normally; 0 for e8m0 (field 0 is 2^emin) */
  int ebits;         /**< width of the exponent field in the bit encoding */
  const char *alias; /**< other accepted names, comma separated, or NULL */
  const char *doc;   /**< one line: where the format comes from */
} lowp_format_t;

/** @brief Rounding modes. Explicit values: they are stored in files. */
typedef enum {
  LOWP_RND_NE = 0, /**< to nearest, ties to even ("rne") */
  LOWP_RND_NA = 1, /**< to nearest, ties away from zero ("rna"; NVIDIA tf32 cvt) */
  LOWP_RND_TZ = 2, /**< toward zero, truncation ("rtz") */
  LOWP_RND_UP = 3, /**< toward +infinity ("rup") */
  LOWP_RND_DN = 4, /**< toward -infinity ("rdn") */
  LOWP_RND_TO = 5, /**< to odd: truncate, then set the last bit if inexact ("rto") */
  LOWP_RND_SR = 6  /**< stochastic, with policy.sr_bits random bits ("sr") */
} lowp_rounding_t;
#define LOWP_RND_COUNT 7

/** @brief What an overflowing finite value becomes: a policy of the conversion. */
typedef enum {
  /** IEEE 754: +-inf where the mode rounds away, else +-max; formats with no
      infinity give NaN (NVIDIA __NV_NOSAT, OCP e4m3 non-saturating), and
      formats with neither saturate. Infinite inputs stay infinite (or NaN). */
  LOWP_OVF_IEEE = 0,
  /** satfinite: clamp to +-max finite. Infinite inputs also become +-max
      (NVIDIA __NV_SATFINITE and PTX .satfinite). */
  LOWP_OVF_SAT = 1,
  /** saturate finite overflow, but keep infinite inputs infinite where the
      format has infinity (NaN where it has only NaN). The OCP FP8 spec's
      saturating mode for e5m2 and the choice of some other libraries. */
  LOWP_OVF_SAT_KEEPINF = 2,
  /** overflow (and infinite inputs) become NaN in any format that has NaN */
  LOWP_OVF_NAN = 3
} lowp_overflow_t;

/** @brief The sign of the NaN that a NaN input becomes (the ecosystems
    disagree). A NaN that stands for an overflowed or infinite number (e4m3
    without saturation) always keeps that number's sign, as CUDA's
    __nv_cvt_float_to_fp8(-1e9, __NV_NOSAT, __NV_E4M3) = 0xff does. */
typedef enum {
  LOWP_NANSIGN_KEEP = 0,    /**< copy the input's sign (IEEE 754 6.3, x86 cvtps2ph) */
  LOWP_NANSIGN_POSITIVE = 1 /**< the positive canonical NaN (CUDA's fp16, bf16
                                 and fp8 conversions from binary32) */
} lowp_nansign_t;

/** @brief What NaN becomes in a format that has no NaN (fp6, fp4). */
typedef enum {
  LOWP_NANMAP_MAXPOS = 0, /**< +max finite (CUDA __nv_cvt_*_to_fp6/fp4) */
  LOWP_NANMAP_ZERO = 1    /**< +0 */
} lowp_nanmap_t;

/**
 * @brief Everything about a conversion that is not the format or the mode.
 *
 * A zero-initialised policy is the IEEE default: overflow per LOWP_OVF_IEEE,
 * NaN sign kept, no FTZ/DAZ, NaN -> +max in NaN-less formats. Pass NULL to
 * any function for that default.
 */
typedef struct {
  lowp_overflow_t overflow;
  lowp_nansign_t nan_sign;
  lowp_nanmap_t nan_map;
  int ftz;           /**< flush subnormal results to (signed) zero */
  int daz;           /**< treat subnormal inputs (of the source format) as zero */
  int sr_bits;       /**< stochastic rounding: random bits compared, 1..32 (0 = 32) */
  uint64_t sr_seed;  /**< stochastic rounding: key of the counter-based RNG */
  uint64_t sr_offset;/**< stochastic rounding: index of the first element */
} lowp_policy_t;

/** @brief Classes of an encoded value, for display and statistics. */
typedef enum {
  LOWP_CLASS_ZERO = 0, LOWP_CLASS_SUBNORMAL, LOWP_CLASS_NORMAL,
  LOWP_CLASS_INF, LOWP_CLASS_NAN
} lowp_class_t;

/* -------------------------------------------------------- built-in table */

extern const lowp_format_t LOWP_FMT_FP64, LOWP_FMT_FP32, LOWP_FMT_TF32,
    LOWP_FMT_FP16, LOWP_FMT_BF16, LOWP_FMT_E4M3, LOWP_FMT_E5M2,
    LOWP_FMT_E4M3FNUZ, LOWP_FMT_E5M2FNUZ, LOWP_FMT_E3M2, LOWP_FMT_E2M3,
    LOWP_FMT_E2M1, LOWP_FMT_E8M0;

/** @brief Number of built-in formats. */
size_t lowp_format_count(void);
/** @brief The i-th built-in format (docs/design.md's order), or NULL past the end. */
const lowp_format_t *lowp_format_at(size_t i);
/** @brief A built-in format by name or alias (case-insensitive), or NULL. */
const lowp_format_t *lowp_format_by_name(const char *name);

/**
 * @brief Parse a format: a built-in name, or a spec such as
 * "p=5,emin=-6,emax=7,nosub" (keys: p, emin, emax, sub|nosub, inf|noinf,
 * nan=ieee|allones|negzero|none, unsigned, nozero, ebits; numbers are
 * decimal integers with an optional '-'). Each property may appear once
 * ("p=3,p=4" and "sub,nosub" are errors). Defaults: sub (nosub with nozero),
 * inf, nan=ieee, signed, with zero, and the smallest ebits that holds
 * emin..emax plus zero and the reserved all-ones field. The result is
 * checked by lowp_format_validate.
 * @param[out] out  filled on success (name points to a static "custom")
 * @param[out] err  if non-NULL and an error occurs, a message (<= errlen chars)
 * @return LOWP_OK, or LOWP_EFORMAT with err naming what was wrong.
 */
int lowp_format_parse(lowp_format_t *out, const char *text, char *err, size_t errlen);

/**
 * @brief Check a descriptor for consistency.
 *
 * A format passes only if its encoding is unambiguous: no two of zero,
 * finite values, infinity and NaN share a bit pattern, and every value
 * (finite, inf if any, NaN if any) encodes to a pattern that lowp_decode
 * reads back as that value. tests/tformat_spec.c checks this exhaustively
 * on every small spec. Rejected, each with its reason: p outside 1..53,
 * emin > emax, a range beyond binary64, ebits outside 1..11, a width over
 * 64 bits, subnormals without zero, nan=negzero without a sign or without
 * zero (its pattern is then -2^emin), nan=ieee with p=1 or nan=allones with
 * inf and p=1 (NaN's pattern is then infinity's), and emax beyond the top
 * exponent field (which is reserved when the format has IEEE inf or NaN).
 * @param[out] err  if non-NULL, the reason; where a small change fixes the
 *         spec, the message ends with "; try 'SPEC'", a spec that passes.
 * @return LOWP_OK if usable, LOWP_EFORMAT if not.
 */
int lowp_format_validate(const lowp_format_t *f, char *err, size_t errlen);

/**
 * @brief Write f as a spec that lowp_format_parse reads back to the same
 * descriptor (name aside): "p=..,emin=..,emax=..,ebits=..[,nosub][,noinf],
 * nan=..[,unsigned][,nozero]".
 * @return LOWP_OK; LOWP_ERANGE if len is too small (buf then holds a
 *         truncated string); LOWP_EINVAL if buf or f is NULL.
 */
int lowp_format_spec_str(char *buf, size_t len, const lowp_format_t *f);

/* ----------------------------------------------------- derived constants */

/** @brief Unit roundoff u = 2^-p (round to nearest). */
double lowp_format_u(const lowp_format_t *f);
/** @brief Machine epsilon 2^(1-p): the gap between 1 and the next value. */
double lowp_format_eps(const lowp_format_t *f);
/** @brief Smallest positive normal 2^emin. */
double lowp_format_xmin(const lowp_format_t *f);
/** @brief Smallest positive subnormal 2^(emin-p+1); xmin if no subnormals. */
double lowp_format_xmins(const lowp_format_t *f);
/** @brief Largest finite value (accounts for NaN encodings that take the top
    significand, e.g. 448 for e4m3). */
double lowp_format_xmax(const lowp_format_t *f);
/** @brief Number of finite values, both signs, counting +0 and -0 as values
    where both are encodable. */
double lowp_format_count_finite(const lowp_format_t *f);
/** @brief Dynamic range in decades: log10(xmax / smallest positive). */
double lowp_format_range_decades(const lowp_format_t *f);
/** @brief Total width of the bit encoding (sign + ebits + p-1). */
int lowp_format_width(const lowp_format_t *f);
/** @brief Exponent bias of the bit encoding. */
int lowp_format_bias(const lowp_format_t *f);

/* -------------------------------------------------------------- rounding */

/** @brief Parse "rne|rna|rtz|rup|rdn|rto|sr"; LOWP_OK or LOWP_EROUND. */
int lowp_rounding_parse(lowp_rounding_t *rnd, const char *text);
/** @brief The short name of a mode ("rne", ...). */
const char *lowp_rounding_name(lowp_rounding_t rnd);

/**
 * @brief Round a binary64 value to format f, correctly in one step.
 * @param[out] y  the rounded value (every lowp format's values are binary64
 *                values); NaN for NaN results
 * @param[in] pol NULL for defaults; for LOWP_RND_SR, element index = sr_offset
 * @return ternary: <0 if *y < x, 0 if exact, >0 if *y > x (NaN: 0); or
 *         LOWP_EROUND-as-error is impossible here: an invalid mode returns
 *         INT32_MIN and *y = NaN.
 */
int lowp_round_f64(double *y, double x, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd);

/** @brief As lowp_round_f64 for a binary32 input (DAZ refers to fp32 subnormals). */
int lowp_round_f32(double *y, float x, const lowp_format_t *f,
                   const lowp_policy_t *pol, lowp_rounding_t rnd);

/**
 * @brief Round an exact significand to f: the common core.
 *
 * The value is (-1)^neg * sig * 2^(e-63) with sig's top bit set (bit 63;
 * a sig without it is normalised first), plus "sticky" meaning nonzero bits
 * exist below sig's last bit. sig == 0 means zero. This is how rounding
 * from MPFR (or any wider source) enters in one step: no double rounding.
 * @param[in] index  stochastic-rounding element index (ignored otherwise)
 */
int lowp_round_sig(double *y, int neg, int64_t e, uint64_t sig, int sticky,
                   const lowp_format_t *f, const lowp_policy_t *pol,
                   lowp_rounding_t rnd, uint64_t index);

/**
 * @brief Round arrays (may alias: y == x is allowed). Same results, bit for
 * bit, as calling the scalar function on each element with
 * index = pol->sr_offset + i. Formats inside binary32 (f32) or binary64
 * (f64) with subnormals, in modes other than sr, take branch-free vector
 * paths (lib/format/round_fast.c, round_fast64.c), which the tests hold to
 * that loop.
 * @return LOWP_OK, LOWP_EROUND (bad mode), LOWP_EFORMAT (invalid format).
 */
int lowp_round_array_f64(double *y, const double *x, size_t n,
                         const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd);
int lowp_round_array_f32(float *y, const float *x, size_t n,
                         const lowp_format_t *f, const lowp_policy_t *pol,
                         lowp_rounding_t rnd);

/**
 * @brief How many of x[0..n) are not values of f (a value that rounding to
 * nearest changes; NaN is skipped), and in *first the first of them (0 when
 * none).
 */
size_t lowp_format_count_not_in(const lowp_format_t *f, const double *x, size_t n, size_t *first);

/**
 * @brief Round fp32 values to f and write the bit patterns (1, 2, 4 or 8
 * bytes each, by lowp_format_width: <=8 bits -> uint8_t, <=16 -> uint16_t,
 * <=32 -> uint32_t, else uint64_t). The fast path of `lowp bench round`.
 * @return LOWP_OK, LOWP_EROUND, LOWP_EFORMAT.
 */
int lowp_encode_array_f32(void *bits, const float *x, size_t n,
                          const lowp_format_t *f, const lowp_policy_t *pol,
                          lowp_rounding_t rnd);

/* ------------------------------------------------------------- bit codes */

/**
 * @brief Encode a value of f (already representable) into its bit pattern.
 * NaN encodes to the canonical NaN (exponent and fraction all ones where the
 * format allows; the only NaN pattern otherwise) with the sign kept unless
 * the format cannot carry it.
 * @return LOWP_OK, or LOWP_ERANGE if v is not a value of f.
 */
int lowp_encode(uint64_t *bits, double v, const lowp_format_t *f);

/**
 * @brief Decode a bit pattern of f.
 *
 * Patterns that a valid format does not use (an exponent field above
 * emax's, e.g. the top field's non-NaN patterns of a spec with inf and
 * nan=none, or the spare fields of a spec with a wide ebits) are not
 * values: they are reported, never read as numbers beyond xmax. In a format
 * without subnormals, field 0 with a nonzero fraction reads as zero (of the
 * pattern's sign, or +0 where the format has no -0).
 * @return LOWP_OK, or LOWP_ERANGE if bits has bits set beyond the width or
 *         is a pattern the format does not use (*v is then NaN).
 */
int lowp_decode(double *v, uint64_t bits, const lowp_format_t *f);

/** @brief Class of a value of f (as decoded). */
lowp_class_t lowp_classify(double v, const lowp_format_t *f);
/** @brief "zero", "subnormal", "normal", "inf", "nan". */
const char *lowp_class_name(lowp_class_t c);

/** @brief One unit in the last place of f at v (|v| finite): 2^(max(e,emin)-p+1). */
double lowp_ulp(double v, const lowp_format_t *f);
/**
 * @brief The ulp of f at v on the side of w, the unit an error |w - v| is
 *        counted in: lowp_ulp(v, f), halved where |w| < |v| and |v| is a
 *        power of two above f's smallest normal (the values below 2^e are
 *        spaced half as far as those above it). So |w - v| <= 1/2 of it
 *        holds for w = v rounded to nearest alone, powers of two included
 *        (by lowp_ulp alone, the neighbour below v = 2^e is half an ulp off).
 */
double lowp_ulp_toward(double v, double w, const lowp_format_t *f);

#endif
