/* tcuda_exhaustive -- lowp against the CUDA 13 headers on all 2^32 binary32 inputs */

/*
 * Every binary32 bit pattern through every case of tests/common/cudacmp.hpp
 * (fp16, bf16 x rn/rz/ru/rd; e4m3, e5m2 x SATFINITE/NOSAT; e2m3, e3m2,
 * e2m1 x rn/rz; e8m0 x rz/rp x SATFINITE/NOSAT: 22 cases), lowp's bits
 * against the CUDA headers' host conversions, OpenMP-parallel over the
 * inputs. Results do not depend on the thread count (each input is checked
 * on its own; the tallies are sums).
 *
 * The whole run is 2^32 x 22 = 9.4e10 comparisons. It can be split:
 * LOWP_EXHAUSTIVE_SHARD=i/n checks the inputs u with u % n == i (every
 * exponent, sign and special value is in every shard), so n machines or n
 * sessions can share it; the default is 0/1, everything.
 *
 * Cost (measured 2026-11-22 on the 2-core development machine, GCC 12 -O2,
 * lowp's scalar reference path): 1.3 us of CPU per input for the 22 cases,
 * so 5600 CPU-seconds for all 2^32 inputs: about 47 minutes on 2 idle
 * cores, 6 on 16. On the shared machine (load 4-12, nice 19) a 1/16
 * shard took 240-1060 s.
 *
 * Under mpirun (tests/common/shard.h, docs/scale.md) the ranks split the
 * shard once more: rank r of n checks u = i + (r + k n) * nshards; the
 * tallies are summed and rank 0 reports.
 * Run: ctest --test-dir build -L long -R tcuda_exhaustive
 *      LOWP_EXHAUSTIVE_SHARD=3/64 OMP_NUM_THREADS=2 ./build/tcuda_exhaustive
 *      mpirun -np 16 ./build/tcuda_exhaustive
 */

#include "cudacmp.hpp"
#include "shard.h"

#include <cstdlib>
#include <omp.h>

int main(int argc, char **argv) {
  unsigned long shard = 0, nshards = 1;
  const char *s = std::getenv("LOWP_EXHAUSTIVE_SHARD");
  lowp_shard_t sh;
  lowp_shard_init(&sh, &argc, &argv);
  if (sh.rank == 0) lowp_test_start("tcuda_exhaustive");
  if (s && (std::sscanf(s, "%lu/%lu", &shard, &nshards) != 2 || nshards == 0 ||
            shard >= nshards)) {
    if (sh.rank == 0)
      std::printf("bad LOWP_EXHAUSTIVE_SHARD '%s': expected i/n with 0 <= i < n\n", s);
    lowp_shard_end(&sh);
    return 2;
  }
  /* this rank's part of the shard */
  shard += (unsigned long)sh.rank * nshards;
  nshards *= (unsigned long)sh.size;
  const uint64_t total = UINT64_C(1) << 32;
  const uint64_t count = (total - shard + nshards - 1) / nshards;
  cuda_tally_t t;
  std::memset(&t, 0, sizeof t);
  long printed = 0; /* inputs whose mismatches were printed (first 20) */
  double t0 = omp_get_wtime();
  std::printf("inputs u = %lu + k*%lu, %llu of them, %d threads\n", shard, nshards,
              (unsigned long long)count, omp_get_max_threads());
  std::fflush(stdout);
#pragma omp parallel
  {
    cuda_tally_t mine;
    std::memset(&mine, 0, sizeof mine);
#pragma omp for schedule(dynamic, 65536)
    for (int64_t k = 0; k < (int64_t)count; k++) {
      uint32_t u = (uint32_t)(shard + (uint64_t)k * nshards);
      float x;
      std::memcpy(&x, &u, sizeof x);
      if (cuda_compare_one(x, &mine, 0)) {
#pragma omp critical
        if (printed < 20) {
          cuda_tally_t dummy;
          std::memset(&dummy, 0, sizeof dummy);
          cuda_compare_one(x, &dummy, 1); /* print this input's mismatches */
          printed++;
        }
      }
    }
#pragma omp critical
    for (size_t c = 0; c < NCUDA_CASES; c++) {
      t.checked[c] += mine.checked[c];
      t.mismatches[c] += mine.mismatches[c];
    }
  }
  double secs = omp_get_wtime() - t0;
  for (size_t c = 0; c < NCUDA_CASES; c++) {
    t.checked[c] = lowp_shard_sum(&sh, t.checked[c]);
    t.mismatches[c] = lowp_shard_sum(&sh, t.mismatches[c]);
  }
  lowp_shard_end(&sh);
  if (sh.rank != 0) return 0;
  cuda_report(&t);
  std::printf("tcuda_exhaustive: %llu inputs x %zu cases in %.1f s (%.1f ns per input)\n",
              (unsigned long long)count, NCUDA_CASES, secs, secs / (double)count * 1e9);
  return lowp_test_end();
}
