/* lowp_fpxd -- the first floating-point exception of a GPU kernel, kept by atomicMin on a 64-bit key, and its CPU twin */
#ifndef LOWP_FPXD_H
#define LOWP_FPXD_H

/*
 * A device-side tracer for lowp's CUDA kernels (issue 36, item 5): every
 * traced fp32 operation that produces a NaN or an infinity from operands
 * that were not already infinite is an event; its place in the kernel's
 * documented evaluation order is a 64-bit key, and the trace keeps the
 * smallest key (atomicMin) and a count per kind (atomicAdd). Both are
 * order-free, so the trace of a launch does not depend on the scheduling of
 * its threads, and the CPU twin (the same functions compiled as C, called
 * while kernels/cpu/rowk.c replays the launch) produces the same record bit
 * for bit: tests/trowk_fpx.c checks the twin's keys at planted places,
 * tests/cuda/trowk_fpx_gpu.c the GPU against the twin.
 *
 * Kinds (the numbers of lib/measure/fpx.h's lowp_fpx_kind_t): invalid (a
 * NaN from non-NaN operands: inf - inf, 0 x inf, 0/0, inf/inf),
 * nan_propagated (a NaN from a NaN operand), divzero (x/0 of a finite
 * nonzero x), overflow_inf (an infinity from finite operands). Underflow is
 * not traced on the device: deciding it needs the exact value (inexact and
 * tiny), which lib/measure/fpx.c computes on the CPU paths.
 *
 * The key of a row kernel (kernels/cuda/rowk.cu, one block per row):
 *   bits 63..32  row
 *   bits 31..30  phase: 0 the per-thread folds (step 1 of THE LAUNCH ORDER,
 *                karith.h), 1 the tree (steps 2 and 3), 2 the output pass
 *   bits 29..6   element: phase 0 and 2 the element index i (< 2^24);
 *                phase 1 256 L + t for shuffle level L = 0..4 (offsets 16,
 *                8, 4, 2, 1) on thread t = 32 w + lane (lanes < offset
 *                only: the others compute values nobody reads), and
 *                256 * 5 + w for the fold of warp w's result (w = 1..7)
 *   bits 5..4    the operation within the element: 0 x_i - c, 1 exp, 2 the
 *                addition (phase 0) or the division (phase 2)
 *   bits 3..0    kind
 * so "first" is: the earliest row, then the folds before the tree before
 * the outputs, then the smallest element, then its earliest operation. The
 * unscale kernel (one element per thread, n < 2^39) uses element << 4 | kind.
 */

#include <stdint.h>

#include "common/karith.h"

#define LOWP_FPXD_NKINDS 4
#define LOWP_FPXD_INVALID 0
#define LOWP_FPXD_NAN_PROP 1
#define LOWP_FPXD_DIVZERO 2
#define LOWP_FPXD_OVF_INF 3
#define LOWP_FPXD_NONE 0xffffffffffffffffULL

/** @brief A trace: the smallest key and a count per kind. Initialise with
    lowp_fpxd_init (first = LOWP_FPXD_NONE, counts 0). */
typedef struct {
  unsigned long long first;
  unsigned long long count[LOWP_FPXD_NKINDS];
} lowp_fpxd_t;

/** @brief The phases and operations of a row kernel's key. */
#define LOWP_FPXD_FOLD 0
#define LOWP_FPXD_TREE 1
#define LOWP_FPXD_OUT 2
#define LOWP_FPXD_SUB 0
#define LOWP_FPXD_EXP 1
#define LOWP_FPXD_ADD 2
#define LOWP_FPXD_DIV 2

static inline LOWP_HD void lowp_fpxd_init(lowp_fpxd_t *t) {
  int k;
  t->first = LOWP_FPXD_NONE;
  for (k = 0; k < LOWP_FPXD_NKINDS; k++) t->count[k] = 0;
}

/** @brief A row kernel's key without its kind (see the layout above). */
static inline LOWP_HD unsigned long long lowp_fpxd_key(uint32_t row, unsigned phase, uint32_t elem,
                                                       unsigned op) {
  return ((unsigned long long)row << 32) | ((unsigned long long)(phase & 3u) << 30) |
         ((unsigned long long)(elem & 0xffffffu) << 6) | ((unsigned long long)(op & 3u) << 4);
}

static inline LOWP_HD int lowp_fpxd_isnan(float x) { return (lowp_ka_bits(x) & 0x7fffffffu) > 0x7f800000u; }
static inline LOWP_HD int lowp_fpxd_isinf(float x) { return (lowp_ka_bits(x) & 0x7fffffffu) == 0x7f800000u; }

/**
 * @brief The kind of one fp32 operation with result r and operands a and b
 * (a unary operation passes b = 0; div: 1 for a division a / b), or -1 for
 * none: a NaN result is nan_propagated when an operand is NaN, else
 * invalid; an infinite result from finite operands is divzero (a division
 * by zero) or overflow_inf; an infinity from an infinite operand is exact.
 */
static inline LOWP_HD int lowp_fpxd_kind(float a, float b, float r, int div) {
  if (lowp_fpxd_isnan(r)) return (lowp_fpxd_isnan(a) || lowp_fpxd_isnan(b)) ? LOWP_FPXD_NAN_PROP : LOWP_FPXD_INVALID;
  if (!lowp_fpxd_isinf(r) || lowp_fpxd_isinf(a) || lowp_fpxd_isinf(b)) return -1;
  return (div && b == 0.0f) ? LOWP_FPXD_DIVZERO : LOWP_FPXD_OVF_INF;
}

/** @brief Record key | kind in t: atomicMin and atomicAdd on the device,
    plain updates in the CPU twin (which calls it from one thread per trace). */
static inline LOWP_HD void lowp_fpxd_note(lowp_fpxd_t *t, unsigned long long key, int kind) {
#ifdef __CUDA_ARCH__
  atomicMin(&t->first, key | (unsigned long long)kind);
  atomicAdd(&t->count[kind], 1ULL);
#else
  if ((key | (unsigned long long)kind) < t->first) t->first = key | (unsigned long long)kind;
  t->count[kind]++;
#endif
}

/** @brief Classify one operation and record it (t NULL: nothing). */
static inline LOWP_HD void lowp_fpxd_op(lowp_fpxd_t *t, unsigned long long key, float a, float b, float r,
                                        int div) {
  int k;
  if (!t) return;
  k = lowp_fpxd_kind(a, b, r, div);
  if (k >= 0) lowp_fpxd_note(t, key, k);
}

/** @brief dst += src: the smaller first key, counts added (merging per-row
    traces of the CPU twin: order-free). */
static inline LOWP_HD void lowp_fpxd_merge(lowp_fpxd_t *dst, const lowp_fpxd_t *src) {
  int k;
  if (src->first < dst->first) dst->first = src->first;
  for (k = 0; k < LOWP_FPXD_NKINDS; k++) dst->count[k] += src->count[k];
}

/** @brief The fields of a row kernel's key. */
static inline LOWP_HD void lowp_fpxd_decode(unsigned long long key, uint32_t *row, unsigned *phase,
                                            uint32_t *elem, unsigned *op, int *kind) {
  *row = (uint32_t)(key >> 32);
  *phase = (unsigned)(key >> 30) & 3u;
  *elem = (uint32_t)(key >> 6) & 0xffffffu;
  *op = (unsigned)(key >> 4) & 3u;
  *kind = (int)(key & 15u);
}

#endif
