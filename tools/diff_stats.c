/* The statistics of `timerlog diff` (diff_stats.h says what each does). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_stats.h"

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

void diffstat_sort(double *x, size_t n)
{
    if (n > 1)
        qsort(x, n, sizeof *x, compare_doubles);
}

double diffstat_quantile(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return 0;
    double h = (double)(n - 1) * (q < 0 ? 0 : q > 1 ? 1 : q);
    size_t lo = (size_t)h;
    if (lo + 1 >= n)
        return sorted[n - 1];
    return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

double diffstat_mean(const double *x, size_t n)
{
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += x[k];
    return n ? sum / (double)n : 0;
}

double diffstat_normal_sf(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}

/* ------------------------------------------------------------------------ */
/* Mann-Whitney U                                                           */
/* ------------------------------------------------------------------------ */

double diffstat_log_choose(size_t m, size_t n)
{
    return lgamma((double)(m + n) + 1) - lgamma((double)m + 1) - lgamma((double)n + 1);
}

bool diffstat_mwu_exact_fits(size_t m, size_t n, double u)
{
    double small = (double)(m < n ? m : n), large = (double)(m < n ? n : m);
    double top = fmin(u < 0 ? 0 : floor(u), small * large);
    return diffstat_log_choose(m, n) < 700 &&
           small * fmin(large, top) * (top + 1) <= DIFFSTAT_EXACT_MAX_WORK;
}

/* C(m + n, m), m <= n, as a product that stays exact while it can. */
static double choose(size_t m, size_t n)
{
    double c = 1;
    for (size_t i = 1; i <= m; i++)
        c = c * (double)(n + i) / (double)i;
    return c;
}

double diffstat_mwu_exact_cdf(size_t m, size_t n, double u)
{
    if (m > n) {   /* U has the same distribution for (m, n) and (n, m) */
        size_t t = m;
        m = n;
        n = t;
    }
    if (u < 0)
        return 0;
    if (m == 0 || u >= (double)(m * n))
        return 1;
    if (!diffstat_mwu_exact_fits(m, n, u))
        return -1;
    /* Row j holds N(v; j, k), v = 0..top, for the k reached so far; rows are
     * updated in order of j, so row j - 1 already holds N(.; j - 1, k). A
     * count at v needs only counts below v: the rows stop at top. */
    size_t top = (size_t)floor(u), width = top + 1;
    double *count = calloc((m + 1) * width, sizeof *count);
    if (!count)
        return -1;
    for (size_t j = 0; j <= m; j++)
        count[j * width] = 1;   /* N(0; j, 0) = 1 */
    for (size_t k = 1; k <= n && k <= top; k++)   /* past top, nothing below it */
        for (size_t j = 1; j <= m; j++) {
            size_t last = j * k < top ? j * k : top;
            for (size_t v = k; v <= last; v++)
                count[j * width + v] += count[(j - 1) * width + v - k];
        }
    double below = 0;
    for (size_t v = 0; v < width; v++)
        below += count[m * width + v];
    free(count);
    return fmin(1.0, below / choose(m, n));
}

/* U of a, and the tie term sum(t^3 - t) over groups of t equal values in
 * both samples together, by one merge of the sorted samples. */
static void count_pairs(const double *a, size_t na, const double *b, size_t nb, double *u,
                        double *tie_term)
{
    size_t i = 0, j = 0;
    *u = 0;
    *tie_term = 0;
    while (i < na || j < nb) {
        double v = j >= nb || (i < na && a[i] < b[j]) ? a[i] : b[j];
        size_t ta = 0, tb = 0;
        while (i + ta < na && a[i + ta] == v)
            ta++;
        while (j + tb < nb && b[j + tb] == v)
            tb++;
        /* Each a equal to v beats the j values of b below it and ties
         * with the tb equal to it. */
        *u += (double)ta * ((double)j + 0.5 * (double)tb);
        double t = (double)(ta + tb);
        *tie_term += t * t * t - t;
        i += ta;
        j += tb;
    }
}

int diffstat_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
                          diffstat_mwu *out)
{
    memset(out, 0, sizeof *out);
    out->p = 1;
    if (na == 0 || nb == 0)
        return 0;
    double tie_term;
    count_pairs(a, na, b, nb, &out->u, &tie_term);
    out->ties = tie_term > 0;
    double pairs = (double)na * (double)nb;
    double u_max = fmax(out->u, pairs - out->u);
    if (!out->ties && diffstat_mwu_exact_fits(na, nb, pairs - u_max)) {
        double cdf = diffstat_mwu_exact_cdf(na, nb, pairs - u_max);
        if (cdf < 0)
            return -1;
        out->exact = true;
        out->p = fmin(1.0, 2 * cdf);
        return 0;
    }
    double total = (double)(na + nb);
    double var = pairs / 12 * ((total + 1) - tie_term / (total * (total - 1)));
    if (!(var > 0))
        return 0;   /* every value tied: nothing tells the samples apart */
    out->z = (u_max - pairs / 2 - 0.5) / sqrt(var);
    out->p = fmin(1.0, 2 * diffstat_normal_sf(out->z));
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Holm                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct ranked_p {
    double p;
    size_t index;
} ranked_p;

static int compare_ranked(const void *pa, const void *pb)
{
    const ranked_p *a = pa, *b = pb;
    if (a->p != b->p)
        return (a->p > b->p) - (a->p < b->p);
    return (a->index > b->index) - (a->index < b->index);
}

int diffstat_holm(const double *p, size_t n, double *adjusted)
{
    if (n == 0)
        return 0;
    ranked_p *r = malloc(n * sizeof *r);
    if (!r)
        return -1;
    for (size_t k = 0; k < n; k++)
        r[k] = (ranked_p){p[k], k};
    qsort(r, n, sizeof *r, compare_ranked);
    /* The k-th smallest (from 0) is weighed by n - k; adjusted values never
     * fall along the order, so a hypothesis is rejected only with all
     * those before it. */
    double running = 0;
    for (size_t k = 0; k < n; k++) {
        running = fmax(running, fmin(1.0, (double)(n - k) * r[k].p));
        adjusted[r[k].index] = running;
    }
    free(r);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Random numbers and the bootstrap                                         */
/* ------------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void diffstat_rng_seed(diffstat_rng *rng, uint64_t seed)
{
    for (int k = 0; k < 4; k++)
        rng->s[k] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t diffstat_rng_next(diffstat_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t diffstat_rng_below(diffstat_rng *rng, uint64_t n)
{
    /* Values from `limit` on would favour the low results: drawn again. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do
        x = diffstat_rng_next(rng);
    while (x >= limit);
    return x % n;
}

/* One resample of sorted x[0..n-1]: how often each value is drawn, then
 * its median (type 7, as diffstat_quantile) and its mean from those counts
 * in one pass over the values in order. */
static double resample(const double *x, size_t n, uint32_t *drawn, diffstat_rng *rng,
                       double *mean)
{
    memset(drawn, 0, n * sizeof *drawn);
    for (size_t k = 0; k < n; k++)
        drawn[diffstat_rng_below(rng, n)]++;
    double h = (double)(n - 1) * 0.5, sum = 0, at_lo = 0, at_hi = 0;
    size_t lo = (size_t)h, hi = lo + 1 < n ? lo + 1 : lo, before = 0;
    for (size_t k = 0; k < n; k++) {
        if (!drawn[k])
            continue;
        size_t after = before + drawn[k];
        if (before <= lo && lo < after)
            at_lo = x[k];
        if (before <= hi && hi < after)
            at_hi = x[k];
        sum += (double)drawn[k] * x[k];
        before = after;
    }
    *mean = sum / (double)n;
    return at_lo + (h - (double)lo) * (at_hi - at_lo);
}

static diffstat_interval middle(double *values, size_t n, double level)
{
    diffstat_sort(values, n);
    double tail = (1 - level) / 2;
    return (diffstat_interval){diffstat_quantile(values, n, tail),
                               diffstat_quantile(values, n, 1 - tail)};
}

int diffstat_bootstrap(const double *a, size_t na, const double *b, size_t nb,
                       size_t resamples, double level, uint64_t seed,
                       diffstat_interval *median, diffstat_interval *mean)
{
    if (!resamples || !na || !nb)
        return -1;
    uint32_t *drawn = malloc((na > nb ? na : nb) * sizeof *drawn);
    double *medians = malloc(resamples * sizeof *medians);
    double *means = malloc(resamples * sizeof *means);
    if (!drawn || !medians || !means) {
        free(drawn);
        free(medians);
        free(means);
        return -1;
    }
    diffstat_rng rng;
    diffstat_rng_seed(&rng, seed);
    for (size_t r = 0; r < resamples; r++) {
        double mean_a, mean_b;
        double median_a = resample(a, na, drawn, &rng, &mean_a);
        double median_b = resample(b, nb, drawn, &rng, &mean_b);
        medians[r] = median_b - median_a;
        means[r] = mean_b - mean_a;
    }
    *median = middle(medians, resamples, level);
    *mean = middle(means, resamples, level);
    free(drawn);
    free(medians);
    free(means);
    return 0;
}
