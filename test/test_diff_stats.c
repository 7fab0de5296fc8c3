/*
 * The statistics of `timerlog diff`, each against values that do not come
 * from this code: NumPy's quantiles, SciPy 1.10's mannwhitneyu (the
 * asymptotic and exact methods named in each case), a published table of
 * critical values of U, Holm's adjustment worked by hand, and the normal
 * theory of the mean for the bootstrap.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff_stats.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static void assert_close(double value, double expected, double tolerance)
{
    if (!(fabs(value - expected) <= tolerance))
        fail_msg("%.17g, expected %.17g +- %g", value, expected, tolerance);
}

/* A sorted copy, which the caller frees. */
static double *sorted_copy(const double *x, size_t n)
{
    double *s = malloc((n ? n : 1) * sizeof *s);
    assert_non_null(s);
    if (n)
        memcpy(s, x, n * sizeof *s);
    diffstat_sort(s, n);
    return s;
}

/* numpy.quantile([3, 1, 4, 1, 5, 9, 2, 6], q) (linear, its default). */
static void quantiles_match_numpy(void **state)
{
    (void)state;
    static const double x[] = {3, 1, 4, 1, 5, 9, 2, 6};
    static const struct {
        double q, expected;
    } cases[] = {{0, 1}, {0.1, 1}, {0.25, 1.75}, {0.5, 3.5}, {0.9, 6.9}, {1, 9}};
    double *s = sorted_copy(x, COUNT(x));
    for (size_t k = 0; k < COUNT(cases); k++)
        assert_close(diffstat_quantile(s, COUNT(x), cases[k].q), cases[k].expected, 1e-12);
    free(s);
    double one = 7.5;
    assert_close(diffstat_quantile(&one, 1, 0.5), 7.5, 0);
    assert_close(diffstat_quantile(NULL, 0, 0.5), 0, 0);
    assert_close(diffstat_mean(x, COUNT(x)), 31.0 / 8, 1e-15);
}

static void normal_tail_matches_known_values(void **state)
{
    (void)state;
    assert_close(diffstat_normal_sf(0), 0.5, 1e-15);
    assert_close(diffstat_normal_sf(1.959963984540054), 0.025, 1e-15);
    assert_close(diffstat_normal_sf(3), 0.0013498980316300946, 1e-16);
    assert_close(diffstat_normal_sf(-1), 1 - 0.15865525393145707, 1e-15);
}

/* The table of critical values of U (e.g. Mann and Whitney 1947; any
 * statistics text): for n1 = n2 = 10, a two-sided test at 0.05 rejects for
 * U <= 23, so P(U <= 23) <= 0.025 < P(U <= 24). SciPy's exact distribution
 * gives the values themselves. */
static void exact_distribution_matches_table_and_scipy(void **state)
{
    (void)state;
    double at23 = diffstat_mwu_exact_cdf(10, 10, 23), at24 = diffstat_mwu_exact_cdf(10, 10, 24);
    assert_true(at23 <= 0.025 && at24 > 0.025);
    assert_close(at23, 0.021628526272489117, 1e-14);
    assert_close(at24, 0.02621295113555175, 1e-14);
    assert_close(diffstat_mwu_exact_cdf(3, 3, 0), 1.0 / 20, 1e-15);   /* 1 of C(6, 3) */
    assert_close(diffstat_mwu_exact_cdf(4, 5, 3), 0.05555555555555555, 1e-15);
    assert_close(diffstat_mwu_exact_cdf(5, 4, 3), 0.05555555555555555, 1e-15);
    assert_close(diffstat_mwu_exact_cdf(30, 40, 371), 0.003074855193032394, 1e-14);
    assert_close(diffstat_mwu_exact_cdf(4, 5, 20), 1, 0);
    assert_close(diffstat_mwu_exact_cdf(4, 5, -1), 0, 0);
    /* Counted only up to u: far tails of large samples are cheap. Below
     * 41, U = v in p(v) ways (partitions of v): 139 up to 10. */
    assert_close(diffstat_mwu_exact_cdf(41, 40, 10), 6.5444936688734985e-22, 1e-35);
    assert_close(diffstat_mwu_exact_cdf(1, 1700, 0), 1.0 / 1701, 1e-18);
    assert_close(diffstat_mwu_exact_cdf(1700, 1, 5), 6.0 / 1701, 1e-17);
    /* Past the work it may take, or the range of a double: not counted. */
    assert_true(diffstat_mwu_exact_fits(1, 1700, 0));
    assert_false(diffstat_mwu_exact_fits(400, 400, 80000));
    assert_true(diffstat_mwu_exact_cdf(400, 400, 80000) < 0);
    assert_false(diffstat_mwu_exact_fits(2000, 2000, 0));   /* C(4000, 2000) */
}

typedef struct mwu_case {
    const char *name;
    const double *a, *b;
    size_t na, nb;
    double u, p;
    bool exact;
} mwu_case;

/* scipy.stats.mannwhitneyu(a, b, method=...) for each case. */
static const double males[] = {19, 22, 16, 29, 24}, females[] = {20, 11, 17, 12};
static const double tied_a[] = {1, 2, 2, 3, 3, 3, 4, 5}, tied_b[] = {2, 3, 4, 4, 5, 5, 6, 7, 7};
static const double zeros_a[] = {0, 0, 0, 0, 0, 1.5, 2.5, 0, 0, 3},
                    zeros_b[] = {0, 0, 2, 0, 4, 5, 6, 0, 7, 8, 9};
static const double logn_a[] = {
    1.0086, 1.4049, 1.3582, 0.8802, 0.9282, 0.8765, 1.1531, 0.9861, 1.2053, 0.6301,
    1.4794, 0.9762, 1.1854, 0.9664, 0.9096, 1.1227, 1.2289, 0.9506, 0.9625, 1.187,
    0.8045, 0.6848, 1.1038, 0.8457, 0.6187, 0.8159, 0.8897, 0.7421, 0.6886, 1.0092};
static const double logn_b[] = {
    1.3831, 1.0426, 0.9177, 1.2168, 1.3222, 1.0253, 1.2664, 1.4344, 1.0494, 0.9018,
    1.2055, 1.1757, 1.4546, 0.8016, 0.9367, 0.8962, 0.7164, 1.1407, 1.2611, 0.9188,
    1.5627, 1.3573, 1.2928, 1.2219, 1.4034, 0.7922, 1.2885, 1.2849, 0.7104, 1.2054,
    1.0381, 1.3436, 0.9903, 1.1001, 1.2041, 0.8877, 1.2836, 1.0765, 1.25, 0.97};
static const double big_a[] = {
    1.312, 1.1633, 0.9565, 1.1712, 1.3702, 1.5649, 0.6748, 1.2471, 1.1233, 0.9768,
    0.7775, 1.3693, 0.7295, 1.1523, 1.3847, 0.6704, 0.9272, 0.7209, 1.0629, 1.4602,
    1.6585, 0.6411, 0.8661, 1.1923, 1.4842, 1.111, 0.8298, 1.0771, 0.9959, 0.9503,
    0.8323, 1.1017, 1.08, 0.977, 0.9461, 0.7253, 0.8856, 1.352, 0.9535, 0.6977,
    1.396, 1.1418, 1.6939, 1.0158, 0.8911, 0.6963, 1.3923, 1.901, 0.8145, 0.8506};
static const double big_b[] = {
    1.2202, 0.8542, 0.9825, 0.9632, 1.103, 1.3822, 1.0571, 1.3228, 0.9465, 1.1411,
    0.616, 0.7316, 1.2827, 0.9071, 1.2153, 1.2039, 1.4631, 1.2878, 1.3556, 1.0223,
    0.8829, 0.8756, 0.9305, 0.7926, 0.9168, 1.0272, 1.1195, 0.9659, 0.6499, 1.0324,
    1.1122, 1.3787, 1.2147, 0.895, 0.8773, 1.7379, 1.2702, 1.6617, 1.7903, 0.8568,
    1.1576, 1.1789, 1.2091, 1.2038, 1.1057, 1.098, 0.7221, 1.0087, 0.8721, 1.0849,
    0.9353, 1.2271, 1.2902, 1.1356, 1.1377, 1.076, 0.9399, 1.0089, 0.9288, 1.1584};

#define CASE(name, a, b, u, p, exact) {name, a, b, COUNT(a), COUNT(b), u, p, exact}
static const mwu_case mwu_cases[] = {
    /* Shier, "Statistics: 2.3 The Mann-Whitney U Test" (Mathematics Learning
     * Support Centre, 2004), as in SciPy's documentation: U = 17, p = 0.11. */
    CASE("males/females, exact", males, females, 17, 0.1111111111111111, true),
    CASE("ties, asymptotic", tied_a, tied_b, 13.5, 0.03175895714806371, false),
    CASE("rows absent from most frames (zeros)", zeros_a, zeros_b, 28, 0.04384285963174089,
         false),
    /* 30 x 40 without ties: exact here, as SciPy's method="exact". */
    CASE("log-normal 30 x 40, exact", logn_a, logn_b, 371, 0.006149710386064788, true),
    /* 50 x 60 without ties, U in the middle: counting up to it would take
     * past DIFFSTAT_EXACT_MAX_WORK; asymptotic. */
    CASE("log-normal 50 x 60, asymptotic", big_a, big_b, 1403, 0.5623937025905661, false),
};

static void mann_whitney_matches_scipy(void **state)
{
    (void)state;
    for (size_t k = 0; k < COUNT(mwu_cases); k++) {
        const mwu_case *c = &mwu_cases[k];
        double *a = sorted_copy(c->a, c->na), *b = sorted_copy(c->b, c->nb);
        diffstat_mwu r, swapped;
        assert_int_equal(diffstat_mann_whitney(a, c->na, b, c->nb, &r), 0);
        assert_int_equal(diffstat_mann_whitney(b, c->nb, a, c->na, &swapped), 0);
        if (r.u != c->u || fabs(r.p - c->p) > 1e-12 * c->p || r.exact != c->exact)
            fail_msg("%s: U %g p %.17g exact %d; expected U %g p %.17g exact %d", c->name,
                     r.u, r.p, r.exact, c->u, c->p, c->exact);
        /* The test does not depend on which sample comes first. */
        assert_close(swapped.u, (double)(c->na * c->nb) - c->u, 0);
        assert_close(swapped.p, r.p, 1e-15);
        free(a);
        free(b);
    }
}

/* One frame against many, every one of them slower: the exact p, 2 / 1701,
 * where the normal approximation says 0.084. Large samples whose U is far
 * in the middle take the approximation: its p is large, as the exact one. */
static void uneven_samples_take_the_exact_test(void **state)
{
    (void)state;
    enum { MANY = 1700, HALF = 300 };
    double one = 100, *many = malloc(MANY * sizeof *many);
    double *a = malloc(HALF * sizeof *a), *b = malloc(HALF * sizeof *b);
    assert_true(many && a && b);
    for (size_t k = 0; k < MANY; k++)
        many[k] = 1000 + (double)k;
    diffstat_mwu r;
    assert_int_equal(diffstat_mann_whitney(&one, 1, many, MANY, &r), 0);
    assert_true(r.exact);
    assert_close(r.p, 2.0 / 1701, 1e-17);
    for (size_t k = 0; k < HALF; k++) {
        a[k] = 2.0 * (double)k;
        b[k] = 2.0 * (double)k + 1;
    }
    assert_int_equal(diffstat_mann_whitney(a, HALF, b, HALF, &r), 0);
    assert_false(r.exact);
    /* U = 299 * 300 / 2; z = (45150 - 45000 - 0.5) / sqrt(90000 * 601 / 12). */
    assert_close(r.u, 44850, 0);
    assert_close(r.p, 2 * diffstat_normal_sf(149.5 / sqrt(90000.0 * 601 / 12)), 1e-15);
    free(many);
    free(a);
    free(b);
}

static void nothing_to_tell_apart_gives_p_one(void **state)
{
    (void)state;
    static const double same[] = {4, 4, 4, 4}, one[] = {1};
    diffstat_mwu r;
    assert_int_equal(diffstat_mann_whitney(same, COUNT(same), same, COUNT(same), &r), 0);
    assert_close(r.p, 1, 0);
    assert_true(r.ties);
    assert_int_equal(diffstat_mann_whitney(same, 0, same, COUNT(same), &r), 0);
    assert_close(r.p, 1, 0);
    assert_int_equal(diffstat_mann_whitney(one, 1, one + 0, 1, &r), 0);
    assert_close(r.p, 1, 0);
}

/* Holm on (0.01, 0.04, 0.03, 0.005): in order 0.005 x 4 = 0.02,
 * 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 raised to 0.06. */
static void holm_adjusts_by_hand_worked_values(void **state)
{
    (void)state;
    double p[] = {0.01, 0.04, 0.03, 0.005};
    static const double expected[] = {0.03, 0.06, 0.06, 0.02};
    assert_int_equal(diffstat_holm(p, COUNT(p), p), 0);
    for (size_t k = 0; k < COUNT(p); k++)
        assert_close(p[k], expected[k], 1e-15);
    double big[] = {0.5, 0.9};   /* capped at 1 */
    assert_int_equal(diffstat_holm(big, 2, big), 0);
    assert_close(big[0], 1, 0);
    assert_close(big[1], 1, 0);
}

static void random_numbers_repeat_and_spread_evenly(void **state)
{
    (void)state;
    diffstat_rng a, b;
    diffstat_rng_seed(&a, 42);
    diffstat_rng_seed(&b, 42);
    for (int k = 0; k < 100; k++)
        assert_true(diffstat_rng_next(&a) == diffstat_rng_next(&b));
    diffstat_rng_seed(&b, 43);
    assert_true(diffstat_rng_next(&a) != diffstat_rng_next(&b));
    /* 100,000 draws in 10 bins: chi-square with 9 degrees of freedom stays
     * below 27.9 (its 0.999 quantile) for a fair generator. */
    uint64_t bins[10] = {0};
    enum { DRAWS = 100000 };
    for (int k = 0; k < DRAWS; k++) {
        uint64_t v = diffstat_rng_below(&a, 10);
        assert_true(v < 10);
        bins[v]++;
    }
    double chi2 = 0;
    for (int k = 0; k < 10; k++)
        chi2 += pow((double)bins[k] - DRAWS / 10.0, 2) / (DRAWS / 10.0);
    assert_true(chi2 < 27.9);
    assert_int_equal(diffstat_rng_below(&a, 1), 0);
}

/* A normal deviate by Box and Muller, from the test's own generator. */
static double normal(diffstat_rng *rng)
{
    double u1 = ((double)(diffstat_rng_next(rng) >> 11) + 1) / 9007199254740993.0;
    double u2 = (double)(diffstat_rng_next(rng) >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static void bootstrap_of_single_values_is_exact(void **state)
{
    (void)state;
    double a = 1, b = 3;
    diffstat_interval median, mean;
    assert_int_equal(diffstat_bootstrap(&a, 1, &b, 1, 100, 0.99, 1, &median, &mean), 0);
    assert_close(median.low, 2, 0);
    assert_close(median.high, 2, 0);
    assert_close(mean.low, 2, 0);
    assert_close(mean.high, 2, 0);
    static const double flat[] = {5, 5, 5, 5, 5, 5};
    assert_int_equal(diffstat_bootstrap(flat, 6, flat, 6, 100, 0.9, 1, &median, &mean), 0);
    assert_close(median.low, 0, 0);
    assert_close(median.high, 0, 0);
    assert_int_equal(diffstat_bootstrap(flat, 6, flat, 6, 0, 0.9, 1, &median, &mean), -1);
}

static void bootstrap_repeats_for_a_seed(void **state)
{
    (void)state;
    double *a = sorted_copy(logn_a, COUNT(logn_a)), *b = sorted_copy(logn_b, COUNT(logn_b));
    diffstat_interval m1, e1, m2, e2, m3, e3;
    assert_int_equal(diffstat_bootstrap(a, COUNT(logn_a), b, COUNT(logn_b), 500, 0.95, 7, &m1,
                                         &e1), 0);
    assert_int_equal(diffstat_bootstrap(a, COUNT(logn_a), b, COUNT(logn_b), 500, 0.95, 7, &m2,
                                         &e2), 0);
    assert_int_equal(diffstat_bootstrap(a, COUNT(logn_a), b, COUNT(logn_b), 500, 0.95, 8, &m3,
                                         &e3), 0);
    assert_true(memcmp(&m1, &m2, sizeof m1) == 0 && memcmp(&e1, &e2, sizeof e1) == 0);
    assert_true(memcmp(&e1, &e3, sizeof e1) != 0);
    /* The intervals hold the changes of the samples' own median and mean. */
    double dmed = diffstat_quantile(b, COUNT(logn_b), 0.5) - diffstat_quantile(a, COUNT(logn_a), 0.5);
    double dmean = diffstat_mean(b, COUNT(logn_b)) - diffstat_mean(a, COUNT(logn_a));
    assert_true(m1.low < dmed && dmed < m1.high);
    assert_true(e1.low < dmean && dmean < e1.high);
    free(a);
    free(b);
}

/* For the mean of large samples the bootstrap agrees with normal theory:
 * the 95% interval is the change +- 1.96 standard errors, the standard
 * error sqrt(var_a / n_a + var_b / n_b) (variances with divisor n, as the
 * bootstrap resamples the sample itself). */
static void bootstrap_mean_interval_follows_normal_theory(void **state)
{
    (void)state;
    enum { N = 400 };
    double a[N], b[N];
    diffstat_rng rng;
    diffstat_rng_seed(&rng, 2024);
    for (int k = 0; k < N; k++) {
        a[k] = 10 + 2 * normal(&rng);
        b[k] = 11 + 3 * normal(&rng);
    }
    diffstat_sort(a, N);
    diffstat_sort(b, N);
    double ma = diffstat_mean(a, N), mb = diffstat_mean(b, N), va = 0, vb = 0;
    for (int k = 0; k < N; k++) {
        va += (a[k] - ma) * (a[k] - ma) / N;
        vb += (b[k] - mb) * (b[k] - mb) / N;
    }
    double se = sqrt(va / N + vb / N), half = 1.959963984540054 * se;
    diffstat_interval median, mean;
    assert_int_equal(diffstat_bootstrap(a, N, b, N, 4000, 0.95, 3, &median, &mean), 0);
    assert_close(mean.low, mb - ma - half, 0.1 * half);
    assert_close(mean.high, mb - ma + half, 0.1 * half);
}

/* Over 200 experiments with a known shift of the median (log-normal times,
 * the second 10% slower), the 90% interval of the change of the median
 * covers the true change in about 90% of them: at least 82% here, 4 sd of
 * a binomial below. */
static void bootstrap_median_interval_covers_the_true_change(void **state)
{
    (void)state;
    enum { N = 100, EXPERIMENTS = 200 };
    double a[N], b[N];
    diffstat_rng rng;
    diffstat_rng_seed(&rng, 99);
    int covered = 0;
    for (int e = 0; e < EXPERIMENTS; e++) {
        for (int k = 0; k < N; k++) {
            a[k] = exp(0.25 * normal(&rng));
            b[k] = 1.1 * exp(0.25 * normal(&rng));
        }
        diffstat_sort(a, N);
        diffstat_sort(b, N);
        diffstat_interval median, mean;
        assert_int_equal(diffstat_bootstrap(a, N, b, N, 500, 0.90, (uint64_t)e, &median, &mean),
                         0);
        covered += median.low <= 0.1 && 0.1 <= median.high;   /* medians 1 and 1.1 */
    }
    if (covered < EXPERIMENTS * 82 / 100 || covered > EXPERIMENTS * 97 / 100)
        fail_msg("the 90%% interval covered the true change in %d of %d experiments", covered,
                 EXPERIMENTS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantiles_match_numpy),
        cmocka_unit_test(normal_tail_matches_known_values),
        cmocka_unit_test(exact_distribution_matches_table_and_scipy),
        cmocka_unit_test(uneven_samples_take_the_exact_test),
        cmocka_unit_test(mann_whitney_matches_scipy),
        cmocka_unit_test(nothing_to_tell_apart_gives_p_one),
        cmocka_unit_test(holm_adjusts_by_hand_worked_values),
        cmocka_unit_test(random_numbers_repeat_and_spread_evenly),
        cmocka_unit_test(bootstrap_of_single_values_is_exact),
        cmocka_unit_test(bootstrap_repeats_for_a_seed),
        cmocka_unit_test(bootstrap_mean_interval_follows_normal_theory),
        cmocka_unit_test(bootstrap_median_interval_covers_the_true_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
