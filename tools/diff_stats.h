/*
 * The statistics behind `timerlog diff`: quantiles, the Mann-Whitney U test,
 * Holm's adjustment of p-values, and a percentile bootstrap of the change of
 * the median and of the mean. Plain numbers in, plain numbers out: nothing
 * here knows about frames, so each piece is tested on its own against
 * values from published tables and from SciPy (test/test_diff_stats.c).
 */
#ifndef TIMERLOG_TOOLS_DIFF_STATS_H
#define TIMERLOG_TOOLS_DIFF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sorts x[0..n-1] in ascending order. */
void diffstat_sort(double *x, size_t n);

/* The q-quantile (0 <= q <= 1) of sorted[0..n-1], interpolated linearly
 * between the order statistics around (n - 1) q (Hyndman and Fan's type 7,
 * the default of R and NumPy): the median of an even count is the mean of
 * the middle two. 0 for n = 0. */
double diffstat_quantile(const double *sorted, size_t n, double q);

/* The arithmetic mean; 0 for n = 0. */
double diffstat_mean(const double *x, size_t n);

/* log C(m + n, m): the log of the count of arrangements of samples of m
 * and n values. */
double diffstat_log_choose(size_t m, size_t n);

/* P(Z > z) for a standard normal Z. */
double diffstat_normal_sf(double z);

/*
 * The most additions the exact test's counting may take (a few ms a row):
 * counting P(U <= u) for samples of m <= n values takes about
 * m min(n, u) (u + 1), as no count below u depends on more. Runs apart
 * enough to matter have a small u, so they are counted whatever their sizes,
 * where the normal approximation is far off when one sample is small (1
 * frame against 1,700: p 0.084 for an exact 0.0012). It is left to U nearer
 * the middle, where the samples are large or p is far from small.
 */
#define DIFFSTAT_EXACT_MAX_WORK 2e6

typedef struct diffstat_mwu {
    double u;      /* U of sample a: pairs (x in a, y in b) with x > y, a tie
                    * counting one half; n_a n_b - u is U of sample b */
    double z;      /* the normal approximation's statistic, with the
                    * continuity correction (0 for the exact test) */
    double p;      /* two-sided p-value */
    bool exact;    /* p from the exact distribution of U */
    bool ties;     /* some value occurs more than once */
} diffstat_mwu;

/*
 * The two-sided Mann-Whitney U test of sorted samples a and b (ascending):
 * whether values of one tend to be larger than values of the other, with no
 * assumption on their distribution. Exact for samples without ties whose
 * exact p can be counted (diffstat_mwu_exact_fits); otherwise the normal
 * approximation with the tie correction of the variance and a continuity
 * correction of 1/2, as SciPy's mannwhitneyu computes them (method "exact"
 * or "asymptotic", use_continuity=True). A sample with no values, or values
 * all tied, gives p = 1. Returns 0, or -1 when the exact distribution could
 * not be allocated.
 */
int diffstat_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
                          diffstat_mwu *out);

/*
 * Whether P(U <= u) for samples of sizes m and n can be counted: within
 * DIFFSTAT_EXACT_MAX_WORK, and with C(m + n, m), the count of all
 * arrangements, within a double's range.
 */
bool diffstat_mwu_exact_fits(size_t m, size_t n, double u);

/*
 * P(U <= u) under the null hypothesis for samples of sizes m and n without
 * ties, by counting: the number of arrangements with U = v obeys
 * N(v; m, n) = N(v - n; m - 1, n) + N(v; m, n - 1), for v up to u only.
 * Returns -1 when memory ran out, or when diffstat_mwu_exact_fits is false.
 */
double diffstat_mwu_exact_cdf(size_t m, size_t n, double u);

/*
 * Holm's step-down adjustment of n p-values for testing them together: a
 * p-value adjusted below alpha rejects its hypothesis with a chance of any
 * false rejection among the n of at most alpha, whatever their dependence.
 * adjusted may be p. Returns 0, or -1 when memory ran out.
 */
int diffstat_holm(const double *p, size_t n, double *adjusted);

/* xoshiro256** seeded through splitmix64: the same seed gives the same
 * numbers everywhere. */
typedef struct diffstat_rng {
    uint64_t s[4];
} diffstat_rng;

void diffstat_rng_seed(diffstat_rng *rng, uint64_t seed);
uint64_t diffstat_rng_next(diffstat_rng *rng);
/* Uniform in [0, n), without bias (by rejection); n > 0. */
uint64_t diffstat_rng_below(diffstat_rng *rng, uint64_t n);

typedef struct diffstat_interval {
    double low, high;
} diffstat_interval;

/*
 * Percentile bootstrap intervals at confidence `level` (e.g. 0.99) for the
 * change from sample a to sample b (both sorted, n > 0) of the median and
 * of the mean: `resamples` times, each sample is drawn again with
 * replacement and the changes are noted; the interval holds the middle
 * `level` of them. Deterministic for a given seed. Returns 0, or -1 when
 * memory ran out or resamples is 0.
 */
int diffstat_bootstrap(const double *a, size_t na, const double *b, size_t nb,
                       size_t resamples, double level, uint64_t seed,
                       diffstat_interval *median, diffstat_interval *mean);

#endif
