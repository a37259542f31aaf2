/* tround_fast_exhaustive -- fast array path vs reference loop on all 2^32 inputs */

/*
 * Every binary32 bit pattern, rounded to fp16, bf16, e4m3 and e5m2 with
 * rne under the default policy, by lowp_round_fast_encode_f32 and by the
 * reference loop lowp_encode_array_f32_ref; the bits must agree everywhere.
 *
 * The inputs are split into 4096 strided chunks (chunk c holds the patterns
 * c, c + 4096, c + 2*4096, ...), so every chunk samples every binade and
 * both signs: a systematic bug shows in the first chunk, and the run stops
 * early (after the chunks in flight) once mismatches are found. Chunks run
 * in parallel with OpenMP; the result does not depend on the thread count.
 *
 * Cost: the reference loop dominates (of the order of 100 ns per element),
 * about 4 * 2^32 reference conversions: a few minutes on 16 cores, tens of
 * minutes on 2. Label "long".
 * Over MPI ranks (tests/common/shard.h, docs/scale.md): rank r of n checks
 * the chunks c with c % n == r; the mismatch counts are summed and rank 0
 * gives the verdict. For the tests of that machinery (label mpi) two knobs:
 * LOWP_EXHAUSTIVE_CHUNKS=K checks only the chunks c < K (a sample; the
 * verdict line says so), and LOWP_EXHAUSTIVE_INJECT=0xU makes the
 * reference answer wrong at input U (a planted mismatch: it must be
 * reported with its input and make the run exit 1).
 * Run: ctest --test-dir build -L long -R tround_fast_exhaustive
 *      (or build/tround_fast_exhaustive [FORMAT...])
 *      mpirun -np 16 build/tround_fast_exhaustive
 */

#include "shard.h"
#include "testutil.h"

#include "format/format.h"
#include "format/round_fast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCHUNK 4096u                     /* chunks per format */
#define CHUNK ((uint32_t)(((uint64_t)1 << 32) / NCHUNK)) /* inputs per chunk */

/* ------------------------------------------------------ private helpers */

static uint32_t elem(const void *p, size_t i, int width) {
  if (width <= 8) return ((const uint8_t *)p)[i];
  if (width <= 16) return ((const uint16_t *)p)[i];
  return ((const uint32_t *)p)[i];
}

/*
 * Compare the two paths on chunk c. Returns the number of mismatches and
 * prints the first few (one thread prints at a time).
 */
static int g_inject = 0;     /* LOWP_EXHAUSTIVE_INJECT given */
static uint32_t g_inject_u;  /* its input */
static int g_rank = 0;       /* MPI rank, in the mismatch lines */

static uint64_t run_chunk(uint32_t c, const lowp_format_t *f, float *x,
                          void *fast, void *ref) {
  int w = lowp_format_width(f);
  uint64_t bad = 0;
  uint32_t j;
  for (j = 0; j < CHUNK; j++) {
    uint32_t u = c + j * NCHUNK;
    memcpy(&x[j], &u, sizeof u);
  }
  lowp_round_fast_encode_f32(fast, x, CHUNK, f, NULL, LOWP_RND_NE);
  lowp_encode_array_f32_ref(ref, x, CHUNK, f, NULL, LOWP_RND_NE);
  for (j = 0; j < CHUNK; j++) {
    uint32_t a = elem(fast, j, w), b = elem(ref, j, w);
    if (g_inject && c + j * NCHUNK == g_inject_u) b ^= 1; /* the planted mismatch */
    if (a != b) {
      if (bad < 3) {
        uint32_t u = c + j * NCHUNK;
#pragma omp critical(tround_fast_print)
        printf("  %s rne: x = 0x%08lx (%a): fast 0x%lx, reference 0x%lx (rank %d)\n",
               f->name, (unsigned long)u, (double)x[j], (unsigned long)a,
               (unsigned long)b, g_rank);
      }
      bad++;
    }
  }
  return bad;
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv) {
  static const char *const dflt[] = {"fp16", "bf16", "e4m3", "e5m2"};
  const char *const *names = dflt;
  int nnames = 4, k;
  long nchunk = NCHUNK;
  lowp_shard_t sh;
  const char *ev;

  lowp_shard_init(&sh, &argc, &argv);
  g_rank = sh.rank;
  if (sh.rank == 0) lowp_test_start("tround_fast_exhaustive");
  if (argc > 1) { names = (const char *const *)(argv + 1); nnames = argc - 1; }
  if ((ev = getenv("LOWP_EXHAUSTIVE_CHUNKS")) != NULL) {
    nchunk = strtol(ev, NULL, 0);
    if (nchunk < 1 || nchunk > (long)NCHUNK) {
      if (sh.rank == 0) printf("bad LOWP_EXHAUSTIVE_CHUNKS '%s': 1 to %u\n", ev, NCHUNK);
      lowp_shard_end(&sh);
      return 2;
    }
  }
  if ((ev = getenv("LOWP_EXHAUSTIVE_INJECT")) != NULL) {
    g_inject = 1;
    g_inject_u = (uint32_t)strtoul(ev, NULL, 0);
  }

  for (k = 0; k < nnames; k++) {
    const lowp_format_t *f = lowp_format_by_name(names[k]);
    uint64_t bad = 0;
    int stop = 0;
    long c;
    /* the same verdicts on every rank: rank 0 counts and prints them */
    if (!f || !lowp_round_fast_applies(f, NULL, LOWP_RND_NE)) {
      if (sh.rank == 0)
        lowp_test_check(0, f ? "the fast path does not apply to %s rne" : "unknown format %s",
                        names[k]);
      continue;
    }
#pragma omp parallel reduction(+ : bad)
    {
      float *x = malloc(CHUNK * sizeof *x);
      uint32_t *fast = malloc(CHUNK * sizeof *fast), *ref = malloc(CHUNK * sizeof *ref);
      if (!x || !fast || !ref) {
#pragma omp atomic write
        stop = 1;
      }
#pragma omp for schedule(dynamic, 1)
      for (c = sh.rank; c < nchunk; c += sh.size) {
        int s;
#pragma omp atomic read
        s = stop;
        if (s) continue; /* a failure was seen: finish quickly */
        {
          uint64_t b = run_chunk((uint32_t)c, f, x, fast, ref);
          bad += b;
          if (b) {
#pragma omp atomic write
            stop = 1;
          }
        }
      }
      free(x); free(fast); free(ref);
    }
    fflush(stdout);
    bad = lowp_shard_sum(&sh, bad);
    stop = lowp_shard_sum(&sh, (uint64_t)stop) != 0;
    if (sh.rank != 0) continue;
    lowp_test_check(bad == 0 && !stop,
                    "%s rne: %llu of the inputs checked differ (run stopped early)",
                    f->name, (unsigned long long)bad);
    if (nchunk == (long)NCHUNK)
      printf("%s rne: %s\n", f->name, bad || stop ? "MISMATCH" : "all 2^32 inputs agree");
    else
      printf("%s rne: %s in chunks 0..%ld of %u (a sample), over %d rank(s)\n", f->name,
             bad || stop ? "MISMATCH" : "all inputs agree", nchunk - 1, NCHUNK, sh.size);
    fflush(stdout);
  }
  lowp_shard_end(&sh);
  return sh.rank == 0 ? lowp_test_end() : 0;
}
