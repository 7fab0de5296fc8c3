/* Statistics across frames: exact counts, means, minima and maxima on
 * frames of a manual clock; quantiles within their stated bound on skewed
 * and bimodal data; memory that stays put over a million frames; hitches
 * kept and evicted; the dump's columns; reset; the walks; merging; the
 * same statistics from a stream read back; a log's own statistics, its
 * device rows and its report. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "device_fixture.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* xorshift64*: the same numbers on every machine. */
static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static double uniform(void)
{
    return (double)(rng() >> 11) / 9007199254740992.0;
}

/* A standard normal number (Box-Muller). */
static double normal(void)
{
    double u = uniform(), v = uniform();
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

static void at_ns(uint64_t ns)
{
    test_now = ns;
}

/* One frame on the manual clock: "Frame" from t, with "Work" taking
 * `work` ns, then "Tail" twice (each `tail` ns); returns its end. */
static uint64_t known_frame(tlog_log *log, uint64_t t, uint64_t work, uint64_t tail)
{
    at_ns(t);
    tlog_log_begin(log, site_named("Frame"));
    at_ns(t + 10);
    tlog_log_begin(log, site_named("Work"));
    at_ns(t + 10 + work);
    tlog_log_end(log, site_named("Work"));
    for (int k = 0; k < 2; k++) {
        tlog_log_begin(log, site_named("Tail"));
        at_ns(test_now + tail);
        tlog_log_end(log, site_named("Tail"));
    }
    at_ns(test_now + 5);
    tlog_log_end(log, site_named("Frame"));
    return test_now;
}

/* Fails showing the whole text when it lacks `needle`. */
static void contains(const char *text, const char *needle)
{
    assert_non_null(text);
    if (!strstr(text, needle))
        fail_msg("no \"%s\" in:\n%s", needle, text ? text : "");
}

static void lacks(const char *text, const char *needle)
{
    assert_non_null(text);
    if (strstr(text, needle))
        fail_msg("\"%s\" in:\n%s", needle, text ? text : "");
}

static tlog_summary *make_summary(const tlog_summary_config *c)
{
    tlog_summary *s = NULL;
    assert_int_equal(tlog_summary_create(c, &s), TLOG_OK);
    assert_non_null(s);
    return s;
}

static tlog_stat_info stat_info(const tlog_stat_row *r)
{
    tlog_stat_info i = {.size = sizeof i};
    assert_non_null(r);
    assert_int_equal(tlog_stat_row_get_info(r, &i), TLOG_OK);
    return i;
}

static const tlog_stat_row *stat_child(const tlog_stat_row *r, const char *name)
{
    for (const tlog_stat_row *c = tlog_stat_row_first_child(r); c;
         c = tlog_stat_row_next_sibling(c))
        if (strcmp(stat_info(c).name, name) == 0)
            return c;
    return NULL;
}

static tlog_summary_info summary_info(const tlog_summary *s)
{
    tlog_summary_info i = {.size = sizeof i};
    assert_int_equal(tlog_summary_get_info(s, &i), TLOG_OK);
    return i;
}

static char *csv_of(const tlog_summary *s)
{
    FILE *fp = tmpfile();
    assert_int_equal(tlog_summary_export_csv(s, fp), TLOG_OK);
    return read_back(fp);
}

static char *json_of(const tlog_summary *s)
{
    FILE *fp = tmpfile();
    assert_int_equal(tlog_summary_export_json(s, fp), TLOG_OK);
    return read_back(fp);
}

/* Fails unless both summaries write the same CSV. */
static void same_csv(const tlog_summary *a, const tlog_summary *b)
{
    char *x = csv_of(a), *y = csv_of(b);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

/* `s` fed with f, and `merged` with a summary of f alone: a frame counted
 * at once, its group's first. */
static void add_twice(tlog_summary *s, tlog_summary *merged, const tlog_frame *f)
{
    tlog_summary *one = make_summary(NULL);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    assert_int_equal(tlog_summary_add(one, f), TLOG_OK);
    assert_int_equal(tlog_summary_merge(merged, one), TLOG_OK);
    tlog_summary_destroy(one);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The q-quantile as the header defines it: x[ceil(q n) - 1] of the sorted
 * values. */
static uint64_t exact_quantile(const uint64_t *sorted, size_t n, double q)
{
    double x = q * (double)n;
    size_t r = (size_t)ceil(x - 1e-9 * (x > 1 ? x : 1));
    return sorted[r ? r - 1 : 0];
}

static void assert_within_bound(uint64_t estimate, uint64_t exact, const char *what, double q)
{
    double err = fabs((double)estimate - (double)exact);
    if (err > (double)exact * TLOG_STATS_RELATIVE_ERROR)
        fail_msg("%s: quantile %g estimated %llu, exact %llu (error %.4f%%)", what, q,
                 (unsigned long long)estimate, (unsigned long long)exact,
                 100.0 * err / (double)exact);
}

static const double quantiles[] = {0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1};

/* Checks every quantile of the "Work" row's total against `values`. */
static void check_quantiles(const tlog_stat_row *work, uint64_t *values, size_t n,
                            const char *what)
{
    qsort(values, n, sizeof *values, cmp_u64);
    for (size_t k = 0; k < sizeof quantiles / sizeof quantiles[0]; k++) {
        uint64_t est;
        assert_int_equal(tlog_stat_row_quantile(work, TLOG_STAT_TOTAL, quantiles[k], &est),
                         TLOG_OK);
        assert_within_bound(est, exact_quantile(values, n, quantiles[k]), what, quantiles[k]);
    }
    tlog_stat_info i = stat_info(work);
    assert_int_equal(i.total_ns.min, values[0]);
    assert_int_equal(i.total_ns.max, values[n - 1]);
    assert_within_bound(i.total_ns.median, exact_quantile(values, n, 0.5), what, 0.5);
    assert_within_bound(i.total_ns.p90, exact_quantile(values, n, 0.9), what, 0.9);
    assert_within_bound(i.total_ns.p99, exact_quantile(values, n, 0.99), what, 0.99);
}

/* A log whose frames the test pops and hands to a summary itself. */
static tlog_log *plain_log(void)
{
    tlog_config c = test_config(NULL);
    c.max_frames = 4;
    return make_log(&c);
}

static tlog_frame *pop(tlog_log *log)
{
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    return f;
}

/* ------------------------------------------------------------------------ */
/* Exact statistics                                                         */
/* ------------------------------------------------------------------------ */

/* Work takes 100, 200, ..., 1000 ns in ten frames (values below 128 are
 * kept exactly, the rest within the bound); Tail runs twice a frame, 40 ns
 * each time. */
static void exact_statistics_of_manual_clock_frames(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.flags |= TLOG_CONFIG_STATS;
    tlog_log *log = make_log(&c);
    uint64_t t = 1000, work[10], frame[10];
    for (int k = 0; k < 10; k++) {
        work[k] = 100u * (uint64_t)(k + 1);
        uint64_t start = t;
        t = known_frame(log, t, work[k], 40) + 100;
        frame[k] = t - 100 - start;
    }
    tlog_summary *s = NULL;
    assert_int_equal(tlog_log_summary(log, &s), TLOG_OK);
    tlog_summary_info si = summary_info(s);
    assert_int_equal(si.frames, 10);
    assert_int_equal(si.groups, 1);
    assert_int_equal(si.rows, 3);
    assert_int_equal(si.hitches_seen, 0);

    const tlog_stat_row *root = tlog_summary_root(s, 0);
    assert_null(tlog_summary_root(s, 1));
    tlog_stat_info r = stat_info(root);
    assert_string_equal(r.name, "Frame");
    assert_string_equal(r.thread_name, "Thread 1");
    assert_int_equal(r.depth, 0);
    assert_int_equal(r.frames, 10);
    assert_int_equal(r.group_frames, 10);
    uint64_t sum = 0;
    for (int k = 0; k < 10; k++)
        sum += frame[k];
    assert_true(r.total_ns.mean == (double)sum / 10);
    assert_int_equal(r.total_ns.min, frame[0]);
    assert_int_equal(r.total_ns.max, frame[9]);
    assert_int_equal(r.count.median, 1);

    tlog_stat_info w = stat_info(stat_child(root, "Work"));
    assert_int_equal(w.frames, 10);
    assert_int_equal(w.depth, 1);
    assert_int_equal(w.kind, TLOG_KIND_CONTROL);
    assert_true(w.total_ns.mean == 550.0);
    assert_int_equal(w.total_ns.min, 100);
    assert_int_equal(w.total_ns.max, 1000);
    assert_true(w.self_ns.mean == 550.0);   /* a leaf: self is total */
    assert_int_equal(w.count.min, 1);
    assert_int_equal(w.count.max, 1);
    /* The median is the 5th of 10 values (500), p90 the 9th, p99 the 10th. */
    assert_within_bound(w.total_ns.median, 500, "Work", 0.5);
    assert_within_bound(w.total_ns.p90, 900, "Work", 0.9);
    assert_int_equal(w.total_ns.p99, 1000);   /* the maximum's bucket, clamped */

    tlog_stat_info tail = stat_info(stat_child(root, "Tail"));
    assert_int_equal(tail.count.median, 2);   /* counts below 128 are exact */
    assert_int_equal(tail.count.p99, 2);
    assert_int_equal(tail.total_ns.median, 80);   /* 2 x 40 ns, exact */
    assert_int_equal(tail.total_ns.min, 80);
    assert_int_equal(tail.total_ns.max, 80);

    /* The root's self time: the frame less Work and Tail. */
    tlog_stat_info again = stat_info(root);
    assert_int_equal(again.self_ns.min, frame[0] - 100 - 80);
    uint64_t q;
    assert_int_equal(tlog_stat_row_quantile(root, TLOG_STAT_SELF, 0.5, &q), TLOG_OK);
    assert_int_equal(q, 15);   /* 10 before Work and 5 after Tail, in every frame */
    assert_int_equal(tlog_stat_row_quantile(root, TLOG_STAT_SELF, 1.5, &q), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_quantile(root, (tlog_stat_of)7, 0.5, &q), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_quantile(NULL, TLOG_STAT_SELF, 0.5, &q), TLOG_EINVAL);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* A row that only some frames have: its statistics are over those
 * frames, and it says how many of the group's it was in. */
static void rows_count_only_the_frames_that_have_them(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary *s = make_summary(NULL);
    for (int k = 0; k < 6; k++) {
        at_ns(1000u * (uint64_t)k);
        tlog_log_begin(log, site_named("Frame"));
        if (k % 3 == 0) {
            tlog_log_begin(log, site_named("Sometimes"));
            at_ns(test_now + 50);
            tlog_log_end(log, site_named("Sometimes"));
        }
        at_ns(test_now + 10);
        tlog_log_end(log, site_named("Frame"));
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
    }
    tlog_stat_info i = stat_info(stat_child(tlog_summary_root(s, 0), "Sometimes"));
    assert_int_equal(i.frames, 2);
    assert_int_equal(i.group_frames, 6);
    assert_true(i.total_ns.mean == 50.0);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* A row that is a leaf in some frames (its self time is its total) and
 * has a child in others: its self time over all of them, exactly; and the
 * same when the two kinds of frames were summed apart and merged. */
static void self_time_of_a_row_that_gains_children(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary *all = make_summary(NULL), *leaf = make_summary(NULL),
                 *parent = make_summary(NULL);
    for (int k = 0; k < 6; k++) {
        at_ns(10000u * (uint64_t)k);
        tlog_log_begin(log, site_named("Frame"));
        tlog_log_begin(log, site_named("Work"));
        if (k >= 3) {   /* 30 ns of its 100 in a child */
            at_ns(test_now + 20);
            tlog_log_begin(log, site_named("Inner"));
            at_ns(test_now + 30);
            tlog_log_end(log, site_named("Inner"));
            at_ns(test_now + 50);
        } else {
            at_ns(test_now + 100 + (uint64_t)k);
        }
        tlog_log_end(log, site_named("Work"));
        tlog_log_end(log, site_named("Frame"));
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(all, f), TLOG_OK);
        assert_int_equal(tlog_summary_add(k < 3 ? leaf : parent, f), TLOG_OK);
        tlog_frame_release(f);
    }
    tlog_stat_info w = stat_info(stat_child(tlog_summary_root(all, 0), "Work"));
    assert_int_equal(w.frames, 6);
    assert_int_equal(w.self_ns.min, 70);
    assert_int_equal(w.self_ns.max, 102);
    assert_true(w.self_ns.mean == (100 + 101 + 102 + 3 * 70) / 6.0);
    assert_int_equal(w.self_ns.median, 70);   /* the 3rd of 70, 70, 70, 100, 101, 102 */
    assert_int_equal(w.total_ns.min, 100);
    assert_int_equal(w.total_ns.max, 102);
    /* Merged either way round. */
    tlog_summary *a = make_summary(NULL);
    assert_int_equal(tlog_summary_merge(a, leaf), TLOG_OK);
    assert_int_equal(tlog_summary_merge(a, parent), TLOG_OK);
    assert_int_equal(tlog_summary_merge(parent, leaf), TLOG_OK);
    char *x = csv_of(all), *y = csv_of(a);
    assert_string_equal(x, y);
    free(y);
    /* parent then leaf: the same statistics, rows in another order. */
    tlog_stat_info p = stat_info(stat_child(tlog_summary_root(parent, 0), "Work"));
    assert_int_equal(p.self_ns.min, 70);
    assert_int_equal(p.self_ns.max, 102);
    assert_true(p.self_ns.mean == w.self_ns.mean);
    free(x);
    tlog_summary_destroy(a);
    tlog_summary_destroy(all);
    tlog_summary_destroy(leaf);
    tlog_summary_destroy(parent);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Quantiles within the bound                                               */
/* ------------------------------------------------------------------------ */

enum { SAMPLES = 20000 };

/* Frames whose Work takes values drawn by `draw`, added to a summary; the
 * quantiles of Work are checked against the exact ones. */
static void quantiles_of(uint64_t (*draw)(void), const char *what)
{
    tlog_log *log = plain_log();
    tlog_summary *s = make_summary(NULL);
    uint64_t *values = malloc(SAMPLES * sizeof *values);
    uint64_t t = 0;
    for (int k = 0; k < SAMPLES; k++) {
        values[k] = draw();
        t = known_frame(log, t, values[k], 3) + 1;
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
    }
    const tlog_stat_row *work = stat_child(tlog_summary_root(s, 0), "Work");
    assert_int_equal(stat_info(work).frames, SAMPLES);
    check_quantiles(work, values, SAMPLES, what);
    free(values);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* Log-normal around 1 ms with a long right tail (sigma 1.5: p99 is about
 * 33 times the median). */
static uint64_t skewed(void)
{
    return (uint64_t)(1e6 * exp(1.5 * normal())) + 1;
}

/* Half the frames near 2 ms, half near 16 ms, and 1% at 100-300 ms. */
static uint64_t bimodal(void)
{
    double u = uniform();
    if (u < 0.01)
        return (uint64_t)(1e8 + 2e8 * uniform());
    double centre = u < 0.5 ? 2e6 : 16e6;
    return (uint64_t)(centre * (1 + 0.05 * normal()));
}

/* Small integers and everything up to 2^63: the whole range. */
static uint64_t anywhere(void)
{
    return rng() >> (rng() % 64);
}

static void quantiles_within_bound_on_skewed_data(void **state)
{
    (void)state;
    rng_state = 0x9e3779b97f4a7c15ull;
    quantiles_of(skewed, "skewed");
}

static void quantiles_within_bound_on_bimodal_data(void **state)
{
    (void)state;
    rng_state = 0x2545f4914f6cdd1dull;
    quantiles_of(bimodal, "bimodal");
}

static void quantiles_within_bound_over_the_whole_range(void **state)
{
    (void)state;
    rng_state = 12345;
    tlog_log *log = plain_log();
    tlog_summary *s = make_summary(NULL);
    /* Inserted timings take any duration; the frame around them is short. */
    uint64_t *values = malloc(SAMPLES * sizeof *values);
    for (int k = 0; k < SAMPLES; k++) {
        values[k] = anywhere() >> 1;
        at_ns(0);
        tlog_log_begin(log, site_named("Frame"));
        assert_int_equal(tlog_insert(log, site_named("Work"), TLOG_KIND_EXECUTION, 5,
                                     5 + values[k]), TLOG_OK);
        at_ns(10);
        tlog_log_end(log, site_named("Frame"));
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        /* Past 2^53 ns, ticks convert to ns through a double: the frame's
         * own figure is the truth. */
        values[k] = info_of(child_named(tlog_frame_root(f), "Work")).total_ns;
        tlog_frame_release(f);
    }
    check_quantiles(stat_child(tlog_summary_root(s, 0), "Work"), values, SAMPLES, "range");
    free(values);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Bounded memory                                                           */
/* ------------------------------------------------------------------------ */

/* A million frames, taken in random order from 1,000 recorded ones whose
 * Work spans five decades: the summary's memory after the first 10,000 is
 * what it is after the million, and the quantiles still hold. */
static void memory_stays_bounded_over_a_million_frames(void **state)
{
    (void)state;
    enum { DISTINCT = 1000, TOTAL = 1000000 };
    rng_state = 777;
    tlog_config c = test_config(NULL);
    c.max_frames = DISTINCT;
    tlog_log *log = make_log(&c);
    tlog_frame *frames[DISTINCT];
    uint64_t works[DISTINCT], t = 0;
    for (int k = 0; k < DISTINCT; k++) {
        works[k] = (uint64_t)(1e3 * pow(10, 5 * uniform()));   /* 1 us to 100 ms */
        t = known_frame(log, t, works[k], 7) + 1;
    }
    for (int k = 0; k < DISTINCT; k++)
        frames[k] = pop(log);
    tlog_summary *s = make_summary(NULL);
    size_t bytes_early = 0;
    uint64_t *taken = calloc(DISTINCT, sizeof *taken);
    for (int k = 0; k < TOTAL; k++) {
        size_t i = (size_t)(rng() % DISTINCT);
        taken[i]++;
        assert_int_equal(tlog_summary_add(s, frames[i]), TLOG_OK);
        if (k == 10000 - 1)
            bytes_early = summary_info(s).bytes;
    }
    tlog_summary_info si = summary_info(s);
    assert_int_equal(si.frames, TOTAL);
    assert_int_equal(si.rows, 3);
    assert_int_equal(si.bytes, bytes_early);
    /* Three rows of three histograms: within the stated bound per row. */
    assert_true(si.bytes < 64 * 1024 + 3 * 3 * 3776 * 8);
    print_message("summary of %d frames: %zu bytes\n", TOTAL, si.bytes);
    /* The exact quantiles of what was added: each recorded Work as many
     * times as it was taken. */
    uint64_t *values = malloc(TOTAL * sizeof *values);
    size_t n = 0;
    for (int i = 0; i < DISTINCT; i++)
        for (uint64_t j = 0; j < taken[i]; j++)
            values[n++] = works[i];
    check_quantiles(stat_child(tlog_summary_root(s, 0), "Work"), values, n, "a million");
    free(values);
    free(taken);
    for (int k = 0; k < DISTINCT; k++)
        tlog_frame_release(frames[k]);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* Past max_rows, new rows are left out with their subtrees and counted;
 * the rows already kept go on counting. */
/* Rows under 1,000 parents, each titled with its own copy (its own
 * address) of one long text: the summary keeps that text once, so its
 * memory is the rows' and not a copy per row. */
static void a_title_shared_by_many_rows_is_kept_once(void **state)
{
    (void)state;
    enum { PARENTS = 1000, LONG = 8000 };
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    char *texts[PARENTS];
    tlog_site sites[PARENTS];
    at_ns(0);
    tlog_log_begin(log, site_named("Frame"));
    for (int i = 0; i < PARENTS; i++) {
        texts[i] = malloc(LONG + 1);
        assert_non_null(texts[i]);
        memset(texts[i], 'x', LONG);
        texts[i][LONG] = '\0';
        sites[i] = (tlog_site){texts[i], "test.c", "test", 2, TLOG_LEVEL_COARSE};
        char parent[16];
        snprintf(parent, sizeof parent, "p%d", i);
        tlog_log_begin(log, site_named(parent));
        tlog_log_begin(log, &sites[i]);
        at_ns(test_now + 10);
        tlog_log_end(log, &sites[i]);
        tlog_log_end(log, site_named(parent));
    }
    tlog_log_end(log, site_named("Frame"));
    tlog_frame *f = pop(log);
    tlog_summary *s = make_summary(NULL);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    tlog_summary_info si = summary_info(s);
    assert_int_equal(si.rows, 1 + 2 * PARENTS);
    /* A copy per row would be 8 MB on its own. */
    assert_true(si.bytes < (size_t)PARENTS * LONG / 4);
    print_message("%zu rows: %zu bytes\n", si.rows, si.bytes);
    tlog_summary_destroy(s);
    tlog_frame_release(f);
    tlog_destroy(log);
    for (int i = 0; i < PARENTS; i++)
        free(texts[i]);
}

static void rows_past_the_limit_are_left_out_and_counted(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary_config sc = {.size = sizeof sc, .max_rows = 2};
    tlog_summary *s = make_summary(&sc);
    for (int k = 0; k < 3; k++) {
        known_frame(log, 1000u * (uint64_t)k, 100, 10);
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
    }
    tlog_summary_info si = summary_info(s);
    assert_int_equal(si.rows, 2);
    assert_int_equal(si.rows_refused, 3);   /* Tail, in each of three frames */
    assert_int_equal(stat_info(stat_child(tlog_summary_root(s, 0), "Work")).frames, 3);
    assert_null(stat_child(tlog_summary_root(s, 0), "Tail"));
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* "Frame" > "A" > "B" > "C", or under another root title. */
static tlog_frame *chain_frame(tlog_log *log, const char *root)
{
    static const char *const names[] = {"A", "B", "C"};
    at_ns(0);
    tlog_log_begin(log, site_named(root));
    for (int k = 0; k < 3; k++)
        tlog_log_begin(log, site_named(names[k]));
    at_ns(100);
    for (int k = 2; k >= 0; k--)
        tlog_log_end(log, site_named(names[k]));
    tlog_log_end(log, site_named(root));
    return pop(log);
}

/* A row left out counts with every row of its subtree, whether the frame
 * is added or a summary of it merged: each row of a frame left out once. */
static void a_row_left_out_counts_with_its_subtree(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary_config sc = {.size = sizeof sc, .max_rows = 2};
    tlog_summary *added = make_summary(&sc), *merged = make_summary(&sc),
                 *whole = make_summary(NULL);
    tlog_frame *f = chain_frame(log, "Frame");
    assert_int_equal(tlog_summary_add(added, f), TLOG_OK);
    assert_int_equal(tlog_summary_add(whole, f), TLOG_OK);
    tlog_frame_release(f);
    assert_int_equal(summary_info(added).rows_refused, 2);   /* B, and C under it */
    f = chain_frame(log, "Other");   /* no room for its root: all four */
    assert_int_equal(tlog_summary_add(added, f), TLOG_OK);
    assert_int_equal(tlog_summary_add(whole, f), TLOG_OK);
    tlog_frame_release(f);
    assert_int_equal(summary_info(added).rows_refused, 6);
    assert_int_equal(tlog_summary_merge(merged, whole), TLOG_OK);
    assert_int_equal(summary_info(merged).rows_refused, 6);
    assert_int_equal(summary_info(merged).rows, 2);
    tlog_summary_destroy(added);
    tlog_summary_destroy(merged);
    tlog_summary_destroy(whole);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Hitches                                                                  */
/* ------------------------------------------------------------------------ */

static tlog_hitch_info hitch_info(const tlog_summary *s, size_t k)
{
    tlog_hitch_info h = {.size = sizeof h};
    assert_int_equal(tlog_summary_hitch(s, k, &h), TLOG_OK);
    return h;
}

/* Frames over the budget are kept whole; past max_hitches the oldest goes,
 * and the frames kept stay readable after the log has let them go. */
static void hitches_over_the_budget_are_kept_and_the_oldest_evicted(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.flags |= TLOG_CONFIG_STATS;
    c.max_frames = 2;
    c.stats.hitch_ns = 5000;
    c.stats.max_hitches = 3;
    tlog_log *log = make_log(&c);
    uint64_t t = 0;
    /* Frames 3, 6, 9, 12 and 15 are slow: Work takes 10 us instead of 1.
     * The queue keeps two frames: the hitches are frames it let go. */
    for (int k = 1; k <= 15; k++)
        t = known_frame(log, t, k % 3 == 0 ? 10000 : 1000, 50) + 1000;
    tlog_summary *s;
    assert_int_equal(tlog_log_summary(log, &s), TLOG_OK);
    tlog_summary_info si = summary_info(s);
    assert_int_equal(si.frames, 15);   /* though most were never read */
    assert_int_equal(si.hitches_seen, 5);
    assert_int_equal(si.hitches, 3);
    for (size_t k = 0; k < 3; k++) {
        tlog_hitch_info h = hitch_info(s, k);
        assert_int_equal(h.number, k + 3);
        assert_int_equal(h.reasons, TLOG_HITCH_BUDGET);
        assert_int_equal(h.budget_ns, 5000);
        assert_int_equal(h.quantile_ns, 0);
        assert_string_equal(h.thread_name, "Thread 1");
        assert_string_equal(h.root, "Frame");
        tlog_frame_info fi = {.size = sizeof fi};
        assert_int_equal(tlog_frame_get_info(h.frame, &fi), TLOG_OK);
        assert_int_equal(fi.serial, 3 * (k + 3));
        assert_int_equal(h.duration_ns, fi.duration_ns);
        assert_true(h.duration_ns > 10000);
        assert_within_bound(h.median_ns, 1000 + 100 + 15, "median frame", 0.5);
        const tlog_node *work = child_named(tlog_frame_root(h.frame), "Work");
        assert_int_equal(info_of(work).total_ns, 10000);
    }
    tlog_hitch_info h;
    h.size = sizeof h;
    assert_int_equal(tlog_summary_hitch(s, 3, &h), TLOG_EINVAL);

    /* The dump names the row that made each one slow. */
    FILE *fp = tmpfile();
    assert_int_equal(tlog_summary_dump(s, fp, NULL), TLOG_OK);
    char *text = read_back(fp);
    contains(text, "# hitches: 5 seen, the last 3 kept\n");
    contains(text, "# hitch 5: thread \"Thread 1\", root \"Frame\", frame 15: "
                                 "0.000010s, over the budget 0.000005s; median frame ");
    contains(text, "; slower than their median self time: Work +0.000009s\n");
    free(text);

    fp = tmpfile();
    assert_int_equal(tlog_summary_dump_hitch(s, 2, fp, NULL), TLOG_OK);
    text = read_back(fp);
    contains(text, "# hitch 5: ");
    contains(text, "|-> ");
    contains(text, " | delta +0.000009s | (C) Work\n");
    contains(text, " | delta +0.000000s | (C) Tail [x2]\n");
    free(text);
    assert_int_equal(tlog_summary_dump_hitch(s, 3, stdout, NULL), TLOG_EINVAL);
    tlog_summary_destroy(s);   /* its hitches are the log's frames: before the log */
    tlog_destroy(log);
}

/* A host row and a worker's row of one title, each with a child "X": the
 * flat paths of the statistics and of a hitch's slower rows tell the two
 * X apart by the kinds of their titles, and the JSON names the kind. */
static void paths_mark_work_done_elsewhere(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.flags |= TLOG_CONFIG_STATS;
    c.stats.hitch_ns = 20 * NS_PER_MS;
    tlog_log *log = make_log(&c);
    double t = 0;
    for (int k = 0; k < 5; k++)
        t = record_twin_titles(log, t, 2, 5) + 1;
    record_twin_titles(log, t, 2, 50);   /* the worker's X: a hitch */
    tlog_summary *s;
    assert_int_equal(tlog_log_summary(log, &s), TLOG_OK);
    assert_int_equal(summary_info(s).hitches, 1);

    char *text = csv_of(s);
    contains(text, ",Frame,Frame / W,C,,6,");
    contains(text, ",Frame,Frame / W / (E) X,E,,6,2000000.000,2000000,2000000,");
    contains(text, ",Frame,Frame / (E) W,E,,6,");
    contains(text, ",Frame,Frame / (E) W / (E) X,E,,6,12500000.000,5000000,");
    free(text);

    FILE *fp = tmpfile();
    assert_int_equal(tlog_summary_export_hitches_csv(s, fp), TLOG_OK);
    text = read_back(fp);
    contains(text, ",\"Frame / (E) W +45000000; Frame / (E) W / (E) X +4");
    lacks(text, "Frame / W / (E) X +");
    free(text);

    text = json_of(s);
    contains(text, "\"slower\":[{\"name\":\"W\",\"kind\":\"execution\",\"depth\":1,");
    contains(text, "},{\"name\":\"X\",\"kind\":\"execution\",\"depth\":2,");
    free(text);

    fp = tmpfile();
    assert_int_equal(tlog_summary_dump(s, fp, NULL), TLOG_OK);
    text = read_back(fp);
    contains(text, "; slower than their median self time: (E) W +0.045000s, (E) X +0.04");
    free(text);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* A frame longer than the p90 of the last 10 frames is a hitch, once 10
 * have been seen; the quantile it was over is said. */
static void hitches_over_a_quantile_of_recent_frames(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary_config sc = {.size = sizeof sc, .hitch_quantile = 0.9, .hitch_window = 10};
    tlog_summary *s = make_summary(&sc);
    uint64_t t = 0;
    for (int k = 0; k < 30; k++) {
        /* Work: 1000 ns, 100 ns less every 10th frame, and a spike of
         * 5000 ns at frame 5 (before 10 frames were seen) and 25. */
        uint64_t work = k == 5 || k == 25 ? 5000 : k % 10 == 9 ? 900 : 1000;
        t = known_frame(log, t, work, 10) + 1;
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
    }
    tlog_summary_info si = summary_info(s);
    assert_int_equal(si.hitches_seen, 1);
    tlog_hitch_info h = hitch_info(s, 0);
    assert_int_equal(h.reasons, TLOG_HITCH_QUANTILE);
    assert_int_equal(h.budget_ns, 0);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(h.frame, &fi);
    assert_int_equal(fi.serial, 26);
    /* The 9th of the 10 frames before it: one of 1000 ns of Work. */
    assert_within_bound(h.quantile_ns, 1000 + 10 + 20 + 5, "window p90", 0.9);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* The quantile a hitch was over is named as configured, to as many
 * decimals as it has: never rounded to a whole percentile it is not. */
static void hitch_quantile_is_named_as_configured(void **state)
{
    (void)state;
    static const struct {
        double q;
        const char *label;
    } cases[] = {{0.9, " the p90 of "}, {0.999, " the p99.9 of "},
                 {0.9999, " the p99.99 of "}, {0.12345, " the p12.345 of "}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tlog_log *log = plain_log();
        tlog_summary_config sc = {.size = sizeof sc, .hitch_quantile = cases[c].q,
                                  .hitch_window = 4};
        tlog_summary *s = make_summary(&sc);
        uint64_t t = 0;
        for (int k = 0; k < 6; k++) {
            t = known_frame(log, t, k == 5 ? 100000 : 1000, 10) + 1;
            tlog_frame *f = pop(log);
            assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
            tlog_frame_release(f);
        }
        assert_int_equal(summary_info(s).hitches_seen, 1);
        FILE *fp = tmpfile();
        assert_int_equal(tlog_summary_dump(s, fp, NULL), TLOG_OK);
        char *text = read_back(fp);
        contains(text, cases[c].label);
        free(text);
        tlog_summary_destroy(s);
        tlog_destroy(log);
    }
}

/* The bucket of v and its middle, as summary histograms cut them: values
 * below 128 alone, then 64 buckets per power of two. */
static unsigned bucket_of(uint64_t v)
{
    unsigned e = 0;
    while (v >> e >= 128)
        e++;
    return 64 * e + (unsigned)(v >> e);
}

static uint64_t bucket_middle(unsigned b)
{
    if (b < 128)
        return b;
    unsigned e = b / 64 - 1;
    return ((uint64_t)(64 + b % 64) << e) + ((uint64_t)1 << e) / 2;
}

/* Over many frames of widely spread lengths, a frame is a hitch exactly
 * when it lies past the bucket of the p75 of the 16 frames before it, and
 * says that bucket: the quantile followed frame by frame, as frames enter
 * and leave the window, is the one a sort of the window gives. */
static void hitch_quantile_follows_the_window_frame_by_frame(void **state)
{
    (void)state;
    enum { WINDOW = 16, FRAMES = 3000 };
    tlog_log *log = plain_log();
    tlog_summary_config sc = {.size = sizeof sc, .hitch_quantile = 0.75,
                              .hitch_window = WINDOW, .max_hitches = 1};
    tlog_summary *s = make_summary(&sc);
    uint64_t recent[WINDOW], sorted[WINDOW], t = 0, seen = 0;
    rng_state = 11;
    for (int k = 0; k < FRAMES; k++) {
        /* Steady stretches, drifts and spikes, over four powers of ten. */
        uint64_t work = k % 500 < 250 ? 2000 + rng() % 200 : 1000 + (uint64_t)k % 500 * 40;
        if (rng() % 10 == 0)
            work = 100 + rng() % 2000000;
        uint64_t start = t;
        t = known_frame(log, t, work, 7) + 1;
        uint64_t ns = t - 1 - start;
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
        bool hitch = false;
        unsigned at = 0;
        if (k >= WINDOW) {
            memcpy(sorted, recent, sizeof sorted);
            qsort(sorted, WINDOW, sizeof *sorted, cmp_u64);
            at = bucket_of(exact_quantile(sorted, WINDOW, 0.75));
            hitch = bucket_of(ns) > at;
        }
        recent[k % WINDOW] = ns;
        seen += hitch;
        assert_int_equal(summary_info(s).hitches_seen, seen);
        if (hitch) {
            tlog_hitch_info h = hitch_info(s, 0);
            assert_int_equal(h.duration_ns, ns);
            assert_int_equal(h.quantile_ns, bucket_middle(at));
        }
    }
    assert_true(seen > 100 && seen < FRAMES / 2);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Dump columns, reset, walks                                               */
/* ------------------------------------------------------------------------ */

static void put_seconds_to(char *buf, size_t size, uint64_t ns)
{
    uint64_t us = ns / 1000 + (ns % 1000 >= 500);
    snprintf(buf, size, "%llu.%06llus", (unsigned long long)(us / 1000000),
             (unsigned long long)(us % 1000000));
}

/* A summary of frames where Work takes 1 to 9 ms. */
static tlog_summary *summary_of_nine(tlog_log *log, tlog_frame **last)
{
    tlog_summary *s = make_summary(NULL);
    for (int k = 1; k <= 9; k++) {
        known_frame(log, 100000000u * (uint64_t)k, 1000000u * (uint64_t)k, 100000);
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        if (k == 9)
            *last = f;
        else
            tlog_frame_release(f);
    }
    return s;
}

static void dump_prints_statistics_columns(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_frame *f;
    tlog_summary *s = summary_of_nine(log, &f);
    tlog_stat_info w = stat_info(stat_child(tlog_summary_root(s, 0), "Work"));
    char median[32], p99[32], delta[32], expected[256];
    put_seconds_to(median, sizeof median, w.total_ns.median);
    put_seconds_to(p99, sizeof p99, w.total_ns.p99);
    put_seconds_to(delta, sizeof delta, 9000000 - w.total_ns.median);
    /* The median of 1..9 ms is 5 ms: its bucket's middle, 5,013,504 ns, is
     * within the bound; p99 of nine frames is the maximum, exact. */
    assert_int_equal(w.total_ns.median, 5013504);
    assert_string_equal(median, "0.005014s");
    assert_string_equal(p99, "0.009000s");
    assert_string_equal(delta, "0.003986s");
    snprintf(expected, sizeof expected, " | median %s | p99 %s | delta +%s | (C) Work\n",
             median, p99, delta);

    /* The default frame columns: median, p99, delta. */
    tlog_dump_options o = {.size = sizeof o, .summary = s};
    char *text = dump_string(f, &o);
    contains(text, "|-> 97.83% 0.009000s | median 0.005014s | p99 0.009000s "
                                 "| delta +0.003986s | (C) Work\n");
    contains(text, expected);
    free(text);

    /* Chosen columns, in their fixed order. */
    o.columns = TLOG_COLUMN_MAX | TLOG_COLUMN_MIN | TLOG_COLUMN_MEAN | TLOG_COLUMN_FRAMES;
    text = dump_string(f, &o);
    contains(text, " | mean 0.005000s | min 0.001000s | max 0.009000s "
                                 "| in 9/9 frames | (C) Work\n");
    free(text);

    /* A summary without the frame's group: every column says so. */
    tlog_summary *empty = make_summary(NULL);
    o.summary = empty;
    o.columns = TLOG_COLUMN_MEDIAN | TLOG_COLUMN_DELTA;
    text = dump_string(f, &o);
    contains(text, "0.009000s | median - | delta - | (C) Work\n");
    free(text);
    tlog_summary_destroy(empty);

    /* A caller of the older, shorter options gets no columns. */
    o.size = offsetof(tlog_dump_options, summary);
    o.summary = s;
    text = dump_string(f, &o);
    lacks(text, "median");
    free(text);

    /* The statistics tree: mean time, default columns, repeats. */
    FILE *fp = tmpfile();
    assert_int_equal(tlog_summary_dump(s, fp, NULL), TLOG_OK);
    text = read_back(fp);
    contains(text, "# thread \"Thread 1\", root \"Frame\": 9 frames; "
                                 "time: mean per frame, quantiles within 0.79%\n> 100.00% ");
    contains(text, "% 0.005000s | median 0.005014s | p90 0.009000s | p99 "
                                 "0.009000s | min 0.001000s | max 0.009000s | (C) Work\n");
    contains(text, "| (C) Tail [x2]\n");
    free(text);

    /* Thresholds hide rows by their mean. */
    tlog_dump_options hide = {.size = sizeof hide, .min_ns = 1000000};
    fp = tmpfile();
    assert_int_equal(tlog_summary_dump(s, fp, &hide), TLOG_OK);
    text = read_back(fp);
    lacks(text, "Tail");
    contains(text, "# 1 rows hidden");
    free(text);
    /* Its footer writes a '.' whatever the locale, as its rows do. */
    if (use_comma_locale()) {
        fp = tmpfile();
        assert_int_equal(tlog_summary_dump(s, fp, &hide), TLOG_OK);
        setlocale(LC_NUMERIC, "C");
        text = read_back(fp);
        contains(text, "# 1 rows hidden (mean shorter than 0.001000s or below 0.00% of parent)\n");
        lacks(text, "0,0");
        free(text);
    }

    tlog_frame_release(f);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

static void reset_empties_the_statistics(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_frame *f;
    tlog_summary_config sc = {.size = sizeof sc, .hitch_ns = 1};
    tlog_summary *s = make_summary(&sc);
    known_frame(log, 0, 100, 10);
    f = pop(log);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    assert_int_equal(summary_info(s).hitches, 1);
    assert_int_equal(tlog_summary_reset(s), TLOG_OK);
    tlog_summary_info si = summary_info(s);
    assert_int_equal(si.frames, 0);
    assert_int_equal(si.groups, 0);
    assert_int_equal(si.rows, 0);
    assert_int_equal(si.hitches, 0);
    assert_int_equal(si.hitches_seen, 0);
    assert_null(tlog_summary_root(s, 0));
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    assert_int_equal(stat_info(tlog_summary_root(s, 0)).frames, 1);
    assert_int_equal(tlog_summary_reset(NULL), TLOG_EINVAL);
    tlog_frame_release(f);
    tlog_summary_destroy(s);
    tlog_destroy(log);

    /* A log's own: reset on demand, and frames after it counted afresh. */
    tlog_config c = test_config(NULL);
    c.flags |= TLOG_CONFIG_STATS;
    log = make_log(&c);
    known_frame(log, 0, 100, 10);
    known_frame(log, 1000, 100, 10);
    assert_int_equal(tlog_log_summary_reset(log), TLOG_OK);
    known_frame(log, 2000, 300, 10);
    assert_int_equal(tlog_log_summary(log, &s), TLOG_OK);
    tlog_stat_info w = stat_info(stat_child(tlog_summary_root(s, 0), "Work"));
    assert_int_equal(w.frames, 1);
    assert_int_equal(w.total_ns.min, 300);
    tlog_summary_destroy(s);
    tlog_destroy(log);

    /* Without statistics, a log has none to copy or reset. */
    log = plain_log();
    s = (tlog_summary *)1;
    assert_int_equal(tlog_log_summary(log, &s), TLOG_EINVAL);
    assert_null(s);
    assert_int_equal(tlog_log_summary_reset(log), TLOG_EINVAL);
    tlog_destroy(log);
}

typedef struct walked {
    char names[16][32];
    int depths[16];
    int n;
    int skip_at;   /* name index whose children are skipped, or -1 */
    const char *skip;
} walked;

static int visit_row(void *user, const tlog_stat_row *row, const tlog_stat_info *info)
{
    walked *w = user;
    assert_non_null(row);
    snprintf(w->names[w->n], sizeof w->names[0], "%s", info->name);
    w->depths[w->n++] = info->depth;
    return w->skip && strcmp(info->name, w->skip) == 0 ? TLOG_WALK_SKIP_CHILDREN : 0;
}

static int stop_at_second(void *user, const tlog_stat_row *row, const tlog_stat_info *info)
{
    (void)row;
    (void)info;
    return ++*(int *)user == 2 ? 42 : 0;
}

/* Two groups: the main thread's "Frame" and its "Load" frames. */
static void walk_visits_every_row_of_every_group(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary *s = make_summary(NULL);
    known_frame(log, 0, 100, 10);
    at_ns(500);
    tlog_log_begin(log, site_named("Load"));
    tlog_log_begin(log, site_named("Read"));
    tlog_log_begin(log, site_named("Inflate"));
    at_ns(600);
    tlog_log_end(log, site_named("Inflate"));
    tlog_log_end(log, site_named("Read"));
    tlog_log_end(log, site_named("Load"));
    for (int k = 0; k < 2; k++) {
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
    }
    assert_int_equal(summary_info(s).groups, 2);
    walked w = {.skip = NULL};
    assert_int_equal(tlog_summary_walk(s, visit_row, &w), TLOG_OK);
    const char *order[] = {"Frame", "Work", "Tail", "Load", "Read", "Inflate"};
    const int depths[] = {0, 1, 1, 0, 1, 2};
    assert_int_equal(w.n, 6);
    for (int k = 0; k < 6; k++) {
        assert_string_equal(w.names[k], order[k]);
        assert_int_equal(w.depths[k], depths[k]);
    }
    walked skip = {.skip = "Read"};
    assert_int_equal(tlog_summary_walk(s, visit_row, &skip), TLOG_OK);
    assert_int_equal(skip.n, 5);
    int calls = 0;
    assert_int_equal(tlog_summary_walk(s, stop_at_second, &calls), 42);
    assert_int_equal(tlog_summary_walk(NULL, visit_row, &w), TLOG_EINVAL);
    assert_int_equal(tlog_summary_walk(s, NULL, &w), TLOG_EINVAL);
    /* Navigation. */
    const tlog_stat_row *load = tlog_summary_root(s, 1);
    const tlog_stat_row *read = tlog_stat_row_first_child(load);
    assert_ptr_equal(tlog_stat_row_parent(read), load);
    assert_null(tlog_stat_row_parent(load));
    assert_null(tlog_stat_row_next_sibling(read));
    assert_null(tlog_stat_row_first_child(NULL));
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

typedef struct frame_walked {
    int nodes, with_stats;
    uint64_t work_median;
} frame_walked;

static int visit_node(void *user, const tlog_node *node, const tlog_node_info *info,
                      const tlog_stat_info *stats)
{
    frame_walked *w = user;
    assert_non_null(node);
    w->nodes++;
    if (stats) {
        w->with_stats++;
        assert_string_equal(stats->name, info->name);
        assert_int_equal(stats->depth, info->depth);
        if (strcmp(info->name, "Work") == 0)
            w->work_median = stats->total_ns.median;
    }
    return 0;
}

/* A frame's rows with their statistics; a row the summary never saw has
 * none. */
static void frame_rows_have_a_statistics_view(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_frame *f;
    tlog_summary *s = summary_of_nine(log, &f);
    tlog_frame_release(f);
    /* A frame with one row more. */
    at_ns(5000000000u);
    tlog_log_begin(log, site_named("Frame"));
    tlog_log_begin(log, site_named("Work"));
    at_ns(test_now + 3000000);
    tlog_log_end(log, site_named("Work"));
    tlog_log_begin(log, site_named("New"));
    tlog_log_end(log, site_named("New"));
    tlog_log_end(log, site_named("Frame"));
    f = pop(log);
    frame_walked w = {0};
    assert_int_equal(tlog_frame_walk_stats(f, s, visit_node, &w), TLOG_OK);
    assert_int_equal(w.nodes, 3);
    assert_int_equal(w.with_stats, 2);
    assert_int_equal(w.work_median,
                     stat_info(stat_child(tlog_summary_root(s, 0), "Work")).total_ns.median);
    const tlog_node *work = child_named(tlog_frame_root(f), "Work");
    assert_ptr_equal(tlog_summary_find(s, f, work), stat_child(tlog_summary_root(s, 0), "Work"));
    assert_null(tlog_summary_find(s, f, child_named(tlog_frame_root(f), "New")));
    assert_ptr_equal(tlog_summary_find(s, f, tlog_frame_root(f)), tlog_summary_root(s, 0));
    assert_null(tlog_summary_find(s, f, NULL));
    assert_int_equal(tlog_frame_walk_stats(f, NULL, visit_node, &w), TLOG_EINVAL);
    tlog_frame_release(f);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Merging, streams, logs                                                   */
/* ------------------------------------------------------------------------ */

/* Two summaries of halves, merged, are the summary of the whole: two
 * groups, the second only in the second half. */
static void merging_halves_gives_the_whole(void **state)
{
    (void)state;
    rng_state = 99;
    tlog_log *log = plain_log();
    tlog_summary_config sc = {.size = sizeof sc, .hitch_ns = 3000000};
    tlog_summary *whole = make_summary(&sc), *a = make_summary(&sc), *b = make_summary(&sc);
    uint64_t t = 0;
    for (int k = 0; k < 200; k++) {
        t = known_frame(log, t, (uint64_t)(1e6 * exp(normal())), 1000) + 1;
        if (k % 3 == 2 && k >= 100) {   /* another root title: another group */
            at_ns(t);
            tlog_log_begin(log, site_named("Load"));
            tlog_log_begin(log, site_named("Read"));
            at_ns(t += 1000 + rng() % 5000000);
            tlog_log_end(log, site_named("Read"));
            tlog_log_end(log, site_named("Load"));
        }
        for (tlog_frame *f; (f = tlog_frame_pop(log)) != NULL;) {
            assert_int_equal(tlog_summary_add(whole, f), TLOG_OK);
            assert_int_equal(tlog_summary_add(k < 100 ? a : b, f), TLOG_OK);
            tlog_frame_release(f);
        }
    }
    assert_int_equal(summary_info(whole).groups, 2);
    assert_int_equal(tlog_summary_merge(a, b), TLOG_OK);
    char *x = csv_of(whole), *y = csv_of(a);
    assert_string_equal(x, y);
    free(x);
    free(y);
    /* The same hitches, numbered as one summary would have; only the
     * median frame each was compared with is that of its own half. */
    tlog_summary_info wi = summary_info(whole), ai = summary_info(a);
    assert_int_equal(ai.hitches_seen, wi.hitches_seen);
    assert_int_equal(ai.hitches, wi.hitches);
    assert_true(wi.hitches_seen > wi.hitches);   /* some were evicted */
    for (size_t k = 0; k < wi.hitches; k++) {
        tlog_hitch_info hw = hitch_info(whole, k), ha = hitch_info(a, k);
        assert_int_equal(ha.number, hw.number);
        assert_ptr_equal(ha.frame, hw.frame);
        assert_int_equal(ha.duration_ns, hw.duration_ns);
    }
    assert_int_equal(tlog_summary_merge(a, a), TLOG_EINVAL);
    assert_int_equal(tlog_summary_merge(NULL, a), TLOG_EINVAL);
    tlog_summary_destroy(whole);
    tlog_summary_destroy(a);
    tlog_summary_destroy(b);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Frames that change shape                                                 */
/* ------------------------------------------------------------------------ */

/* Frame k of a loop of `parents` rows of `leaves` leaves each, whose shape
 * changes from one frame to the next: in turn a leaf is left out and
 * another comes in its place, the leaves run in the reverse order (rows
 * then come in another order), and leaves run three times, 300 times or
 * gain a child of their own. */
static void shaped_frame(tlog_log *log, uint64_t *t, int k, int parents, int leaves)
{
    char name[16];
    at_ns(*t);
    tlog_log_begin(log, site_named("Frame"));
    for (int p = 0; p < parents; p++) {
        snprintf(name, sizeof name, "P%d", p);
        const tlog_site *parent = site_named(name);
        at_ns(*t += 1 + rng() % 20);
        tlog_log_begin(log, parent);
        for (int i = 0; i < leaves; i++) {
            int leaf = k % 4 == 2 ? leaves - 1 - i : i;
            if (k % 4 == 1 && leaf == 3)
                leaf = 99;
            int runs = k % 4 == 3 && leaf == 7 ? 3 : k % 4 == 3 && leaf == 9 ? 300 : 1;
            snprintf(name, sizeof name, "L%d", leaf);
            const tlog_site *site = site_named(name);
            for (int r = 0; r < runs; r++) {
                at_ns(*t += 1 + rng() % 5);
                tlog_log_begin(log, site);
                if (k % 4 == 3 && leaf == 2) {
                    at_ns(*t += 1 + rng() % 30);
                    tlog_log_begin(log, site_named("Inner"));
                    at_ns(*t += 1 + rng() % 30);
                    tlog_log_end(log, site_named("Inner"));
                }
                at_ns(*t += 1 + rng() % (k % 5 ? 100 : 100000));
                tlog_log_end(log, site);
            }
        }
        at_ns(*t += 1 + rng() % 20);
        tlog_log_end(log, parent);
    }
    at_ns(*t += 5);
    tlog_log_end(log, site_named("Frame"));
    *t += 1;
}

/* A summary fed frames that change shape, large (titles known by address)
 * and very large (lines asked for ahead) among them, keeps what summaries
 * fed one frame each, merged, keep: a frame's rows are found again however
 * the frame before it was made. */
static void frames_that_change_shape_count_as_frames_counted_apart(void **state)
{
    (void)state;
    rng_state = 31;
    tlog_config c = test_config(NULL);
    c.max_frames = 4;
    c.thread_budget = 1u << 20;
    tlog_log *log = make_log(&c);
    tlog_summary *fed = make_summary(NULL), *merged = make_summary(NULL);
    uint64_t t = 0;
    for (int k = 0; k < 30; k++) {
        bool huge = k % 7 == 5;   /* 4901 rows and more */
        shaped_frame(log, &t, k, huge ? 70 : 8, huge ? 69 : 10);
        tlog_frame *f = pop(log);
        add_twice(fed, merged, f);
        tlog_frame_release(f);
    }
    assert_true(summary_info(fed).rows > 4900);
    same_csv(fed, merged);
    /* A leaf called as often in every frame so far, then not. */
    const tlog_stat_row *p0 = stat_child(tlog_summary_root(fed, 0), "P0");
    tlog_stat_info l9 = stat_info(stat_child(p0, "L9")), l5 = stat_info(stat_child(p0, "L5"));
    assert_int_equal(l9.count.min, 1);
    assert_int_equal(l9.count.max, 300);
    assert_int_equal(l5.count.min, 1);
    assert_int_equal(l5.count.max, 1);
    assert_int_equal(l5.count.median, 1);
    assert_true(l5.count.mean == 1.0);
    tlog_summary_destroy(fed);
    tlog_summary_destroy(merged);
    tlog_destroy(log);
}

/* Titles whose text changes at the same address from one frame to the
 * next (frames read from a stream one by one, their strings freed and
 * made again) are rows of their text, not of their address. */
static void titles_at_an_address_used_again_are_told_apart(void **state)
{
    (void)state;
    enum { LEAVES = 70 };
    static char text[LEAVES][8];
    static tlog_site sites[LEAVES];
    tlog_log *log = plain_log();
    tlog_summary *s = make_summary(NULL);
    for (int i = 0; i < LEAVES; i++)
        sites[i] = (tlog_site){text[i], "test.c", "titles", 100 + i, TLOG_LEVEL_COARSE};
    uint64_t t = 0;
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < LEAVES; i++)
            snprintf(text[i], sizeof text[i], "%c%d", "ABA"[k], i);
        at_ns(t);
        tlog_log_begin(log, site_named("Frame"));
        for (int i = 0; i < LEAVES; i++) {
            at_ns(t += 10);
            tlog_log_begin(log, &sites[i]);
            at_ns(t += 10 + (uint64_t)k);
            tlog_log_end(log, &sites[i]);
        }
        at_ns(t += 10);
        tlog_log_end(log, site_named("Frame"));
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
    }
    assert_int_equal(summary_info(s).rows, 1 + 2 * LEAVES);
    const tlog_stat_row *root = tlog_summary_root(s, 0);
    for (int i = 0; i < LEAVES; i++) {
        char name[8];
        snprintf(name, sizeof name, "A%d", i);
        assert_int_equal(stat_info(stat_child(root, name)).frames, 2);
        assert_int_equal(stat_info(stat_child(root, name)).total_ns.max, 12);
        snprintf(name, sizeof name, "B%d", i);
        assert_int_equal(stat_info(stat_child(root, name)).frames, 1);
        assert_int_equal(stat_info(stat_child(root, name)).total_ns.max, 11);
    }
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* The hooks of a -Dtest_hooks=true build, when the library has them. */
void tlog_test_fail_alloc(uint64_t n) __attribute__((weak));
bool tlog_test_alloc_failed(void) __attribute__((weak));

/* Frames that change shape, each added while its allocation n fails, for
 * every n an add makes: the add answers TLOG_ENOMEM, has changed nothing
 * and is tried again. Every run ends with the statistics of a run where
 * nothing failed. */
static void an_add_out_of_memory_changes_nothing(void **state)
{
    (void)state;
    if (!tlog_test_fail_alloc || !tlog_test_alloc_failed)
        skip();   /* a build without the hooks */
    enum { FRAMES = 8 };
    rng_state = 5;
    tlog_log *log = plain_log();
    tlog_frame *frames[FRAMES];
    uint64_t t = 0;
    for (int k = 0; k < FRAMES; k++) {
        shaped_frame(log, &t, k, 7, 10);
        frames[k] = pop(log);
    }
    tlog_summary *ref = make_summary(NULL);
    for (int k = 0; k < FRAMES; k++)
        assert_int_equal(tlog_summary_add(ref, frames[k]), TLOG_OK);
    char *want = csv_of(ref);
    bool failed = true;
    for (uint64_t n = 1; failed; n++) {
        tlog_summary *s = make_summary(NULL);
        failed = false;
        for (int k = 0; k < FRAMES; k++) {
            char *before = csv_of(s);
            tlog_test_fail_alloc(n);
            int rc, enomem = 0;
            while ((rc = tlog_summary_add(s, frames[k])) == TLOG_ENOMEM) {
                assert_true(tlog_test_alloc_failed());
                assert_int_equal(++enomem, 1);   /* the failure was answered, once */
                failed = true;
                tlog_test_fail_alloc(0);
                char *after = csv_of(s);
                assert_string_equal(after, before);
                free(after);
            }
            assert_int_equal(rc, TLOG_OK);
            assert_true(enomem || !tlog_test_alloc_failed());
            tlog_test_fail_alloc(0);
            free(before);
        }
        char *got = csv_of(s);
        assert_string_equal(got, want);
        free(got);
        tlog_summary_destroy(s);
    }
    free(want);
    for (int k = 0; k < FRAMES; k++)
        tlog_frame_release(frames[k]);
    tlog_summary_destroy(ref);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Large frames counted later                                               */
/* ------------------------------------------------------------------------ */

/* Frames of 1 + 64 + 64 * 65 = 4225 rows: large enough for a summary to
 * count them later, when they are like the frame before. */
enum { LATER_PARENTS = 64, LATER_LEAVES = 65 };

/* What a large frame has besides leaves of 1 to 40 ns. */
enum later_event {
    LATER_PLAIN,
    LATER_SPREAD,   /* one leaf in 50 far slower than any before */
    LATER_TWICE,    /* P3/L7 run twice: its count parts from 1, or is 2 again */
    LATER_HUGE,     /* P9/L9 past 2^32 ns */
    LATER_INNER,    /* P5/L2 with a child: another shape */
    LATER_SMALL,    /* only P10 and P11: the same group, far fewer rows */
    LATER_OTHER,    /* another root: another group, as large */
    LATER_RENAMED,  /* P4/L5 titled R5: the same shape, another row */
    LATER_RESITED   /* P4/L6 from another call site of the same title */
};

static enum later_event later_event_of(int k)
{
    switch (k) {
    case 3: case 40: return LATER_SPREAD;
    case 7: case 44: return LATER_TWICE;
    case 11: case 50: return LATER_HUGE;
    case 20: return LATER_INNER;
    case 26: return LATER_SMALL;
    case 31: case 32: return LATER_OTHER;
    case 36: case 37: return LATER_RENAMED;
    case 46: case 47: return LATER_RESITED;
    default: return LATER_PLAIN;
    }
}

static void later_frame(tlog_log *log, uint64_t *t, enum later_event e)
{
    char name[16];
    const char *root = e == LATER_OTHER ? "Other" : "Frame";
    at_ns(*t);
    tlog_log_begin(log, site_named(root));
    int first = e == LATER_SMALL ? 10 : 0, parents = e == LATER_SMALL ? 12 : LATER_PARENTS;
    for (int p = first; p < parents; p++) {
        snprintf(name, sizeof name, "P%d", p);
        const tlog_site *parent = site_named(name);
        at_ns(*t += 1 + rng() % 20);
        tlog_log_begin(log, parent);
        for (int i = 0; i < LATER_LEAVES; i++) {
            snprintf(name, sizeof name, "%c%d", e == LATER_RENAMED && p == 4 && i == 5 ? 'R' : 'L',
                     i);
            const tlog_site *leaf =
                e == LATER_RESITED && p == 4 && i == 6
                    ? tlog_site_intern(name, "other.c", "test", 2, TLOG_LEVEL_COARSE)
                    : site_named(name);
            int runs = e == LATER_TWICE && p == 3 && i == 7 ? 2 : 1;
            for (int r = 0; r < runs; r++) {
                at_ns(*t += 1 + rng() % 5);
                tlog_log_begin(log, leaf);
                if (e == LATER_INNER && p == 5 && i == 2) {
                    at_ns(*t += 3);
                    tlog_log_begin(log, site_named("Inner"));
                    at_ns(*t += 4);
                    tlog_log_end(log, site_named("Inner"));
                }
                uint64_t ns = 1 + rng() % 40;
                if (e == LATER_SPREAD && rng() % 50 == 0)
                    ns = 100000 + rng() % 1000000;
                if (e == LATER_HUGE && p == 9 && i == 9)
                    ns = 5000000000ull;
                at_ns(*t += ns);
                tlog_log_end(log, leaf);
            }
        }
        at_ns(*t += 1 + rng() % 20);
        tlog_log_end(log, parent);
    }
    at_ns(*t += 5);
    tlog_log_end(log, site_named(root));
    *t += 1;
}

static tlog_log *later_log(bool stats)
{
    tlog_config c = test_config(NULL);
    c.max_frames = 4;
    c.thread_budget = 1u << 20;
    if (stats)
        c.flags |= TLOG_CONFIG_STATS;
    return make_log(&c);
}

/* A large frame recorded in `log` with event e, fed to `s` and, by a
 * summary of it alone, to `merged` (add_twice). */
static void later_add_twice(tlog_log *log, uint64_t *t, enum later_event e, tlog_summary *s,
                            tlog_summary *merged)
{
    later_frame(log, t, e);
    tlog_frame *f = pop(log);
    add_twice(s, merged, f);
    tlog_frame_release(f);
}

/* Large frames like the one before are counted later, and what is read
 * of them is what counting each at once gives, whether read after each
 * frame (a frame waits) or only at the end (parts counted after each
 * frame), from the log's own statistics (titles known by address) or a
 * summary's, through a merge either way, and after a reset; frames that part a count, widen
 * a histogram, go past 2^32 ns, change shape or group, or title a node
 * otherwise (another text, or the same from another call site) come
 * between. */
static void large_frames_counted_later_match_frames_counted_at_once(void **state)
{
    (void)state;
    enum { FRAMES = 60 };
    rng_state = 41;
    tlog_log *log = later_log(true);
    tlog_summary *each = make_summary(NULL), *last = make_summary(NULL),
                 *merged = make_summary(NULL), *fed = make_summary(NULL);
    uint64_t t = 0;
    for (int k = 0; k < FRAMES; k++) {
        later_frame(log, &t, later_event_of(k));
        tlog_frame *f = pop(log);
        add_twice(each, merged, f);
        assert_int_equal(tlog_summary_add(last, f), TLOG_OK);
        assert_int_equal(tlog_summary_add(fed, f), TLOG_OK);
        tlog_frame_release(f);
        same_csv(each, merged);
        if (k % 10 == 9) {
            tlog_summary *own = NULL;
            assert_int_equal(tlog_log_summary(log, &own), TLOG_OK);
            same_csv(own, merged);
            tlog_summary_destroy(own);
        }
    }
    /* Read through a merge first: `last` has frames waiting. */
    tlog_summary *copy = make_summary(NULL);
    assert_int_equal(tlog_summary_merge(copy, last), TLOG_OK);
    same_csv(copy, merged);
    same_csv(last, merged);
    char *x = json_of(last), *y = json_of(merged);
    assert_string_equal(x, y);
    free(x);
    free(y);
    /* Merged into while frames wait, then fed more. */
    assert_int_equal(tlog_summary_merge(fed, merged), TLOG_OK);
    tlog_summary *twice = make_summary(NULL);
    assert_int_equal(tlog_summary_merge(twice, merged), TLOG_OK);
    assert_int_equal(tlog_summary_merge(twice, merged), TLOG_OK);
    for (int k = 0; k < 20; k++) {
        later_frame(log, &t, LATER_PLAIN);
        tlog_frame *f = pop(log);
        add_twice(fed, twice, f);
        assert_int_equal(tlog_summary_add(last, f), TLOG_OK);
        tlog_frame_release(f);
    }
    same_csv(fed, twice);
    /* Emptied while frames wait, then fed afresh. */
    assert_int_equal(tlog_summary_reset(last), TLOG_OK);
    tlog_summary *fresh = make_summary(NULL);
    for (int k = 0; k < 5; k++)
        later_add_twice(log, &t, LATER_PLAIN, last, fresh);
    same_csv(last, fresh);
    assert_int_equal(summary_info(last).frames, 5);
    tlog_summary *summaries[] = {each, last, merged, fed, copy, twice, fresh};
    for (size_t i = 0; i < sizeof summaries / sizeof *summaries; i++)
        tlog_summary_destroy(summaries[i]);
    tlog_destroy(log);
}

/* A long run of large frames like each other, read now and then (in the
 * middle of a turn of the frames whose values wait, and after many), counts
 * each frame once, as counting each at once would. */
static void a_long_run_of_large_frames_counts_each_once(void **state)
{
    (void)state;
    rng_state = 61;
    tlog_log *log = later_log(false);
    tlog_summary *s = make_summary(NULL), *merged = make_summary(NULL);
    uint64_t t = 0;
    for (int k = 1; k <= 150; k++) {
        later_add_twice(log, &t, k % 40 == 0 ? LATER_SPREAD : LATER_PLAIN, s, merged);
        if (k == 45 || k == 117 || k == 150)
            same_csv(s, merged);
    }
    assert_int_equal(stat_info(tlog_summary_root(s, 0)).frames, 150);
    tlog_summary_destroy(s);
    tlog_summary_destroy(merged);
    tlog_destroy(log);
}

/* A summary of a large plain frame recorded in `log`, merged into itself
 * until its rows have seen 2^64 frames and more (saturated). */
static tlog_summary *saturated_summary(tlog_log *log, uint64_t *t)
{
    later_frame(log, t, LATER_PLAIN);
    tlog_frame *f = pop(log);
    tlog_summary *s = make_summary(NULL);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    tlog_frame_release(f);
    for (int k = 0; k < 64; k++) {   /* twice the frames each time */
        tlog_summary *twice = make_summary(NULL);
        assert_int_equal(tlog_summary_merge(twice, s), TLOG_OK);
        assert_int_equal(tlog_summary_merge(twice, s), TLOG_OK);
        tlog_summary_destroy(s);
        s = twice;
    }
    assert_int_equal(summary_info(s).frames, UINT64_MAX);
    return s;
}

/* A saturated summary (saturated_summary) that `frames` large frames with
 * event e recorded in `log` were then added to, checked against a merge
 * of it that took each of them through a summary of its own (add_twice). */
static tlog_summary *later_into_saturated(tlog_log *log, enum later_event e, int frames)
{
    uint64_t t = 0;
    tlog_summary *s = saturated_summary(log, &t);
    tlog_summary *merged = make_summary(NULL);
    assert_int_equal(tlog_summary_merge(merged, s), TLOG_OK);
    for (int k = 0; k < frames; k++)
        later_add_twice(log, &t, e, s, merged);
    same_csv(s, merged);
    tlog_summary_destroy(merged);
    return s;
}

/* Rows whose frames saturated (merged summaries of 2^64 frames and more)
 * stay saturated when large frames are counted later into them, buckets
 * too, as when the frames are merged in one by one. */
static void large_frames_counted_later_into_saturated_rows(void **state)
{
    (void)state;
    rng_state = 59;
    tlog_log *log = later_log(false);
    tlog_summary *s = later_into_saturated(log, LATER_PLAIN, 5);
    tlog_stat_info i = stat_info(stat_child(stat_child(tlog_summary_root(s, 0), "P1"), "L1"));
    assert_int_equal(i.frames, UINT64_MAX);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* The same where a frame's rows are saturated but for the few it has
 * that earlier frames did not: blocks of slots counted in part on their
 * own (saturating), in part side by side. */
static void large_frames_counted_later_into_partly_saturated_rows(void **state)
{
    (void)state;
    rng_state = 61;
    tlog_log *log = later_log(false);
    tlog_summary *s = later_into_saturated(log, LATER_INNER, 40);
    tlog_stat_info leaf = stat_info(stat_child(stat_child(tlog_summary_root(s, 0), "P5"), "L2"));
    tlog_stat_info inner = stat_info(
        stat_child(stat_child(stat_child(tlog_summary_root(s, 0), "P5"), "L2"), "Inner"));
    assert_int_equal(leaf.frames, UINT64_MAX);
    assert_int_equal(inner.frames, 40);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

typedef struct reader_arg {
    const tlog_summary *s;
    char *csv;
} reader_arg;

static void *read_csv(void *p)
{
    reader_arg *a = p;
    FILE *fp = tmpfile();
    if (fp && tlog_summary_export_csv(a->s, fp) == TLOG_OK)
        a->csv = read_back(fp);
    else if (fp)
        fclose(fp);
    return NULL;
}

/* Readers that run together on a summary with frames waiting each read
 * every frame: the first counts them, the others wait for it. */
static void readers_together_read_the_frames_waiting(void **state)
{
    (void)state;
    enum { READERS = 4 };
    rng_state = 47;
    tlog_log *log = later_log(false);
    tlog_summary *s = make_summary(NULL), *merged = make_summary(NULL);
    uint64_t t = 0;
    for (int k = 0; k < 9; k++)
        later_add_twice(log, &t, LATER_PLAIN, s, merged);
    char *want = csv_of(merged);
    pthread_t th[READERS];
    reader_arg args[READERS];
    for (int i = 0; i < READERS; i++) {
        args[i] = (reader_arg){s, NULL};
        assert_int_equal(pthread_create(&th[i], NULL, read_csv, &args[i]), 0);
    }
    for (int i = 0; i < READERS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_non_null(args[i].csv);
        assert_string_equal(args[i].csv, want);
        free(args[i].csv);
    }
    free(want);
    tlog_summary_destroy(s);
    tlog_summary_destroy(merged);
    tlog_destroy(log);
}

/* An add of a large frame that runs out of memory while it would be
 * counted later (a histogram to widen) or counted at once (rows to make)
 * changes nothing, and the frames after it count as they would have: the
 * one before it again, then itself. */
static void a_large_add_out_of_memory_changes_nothing(void **state)
{
    (void)state;
    if (!tlog_test_fail_alloc || !tlog_test_alloc_failed)
        skip();   /* a build without the hooks */
    enum { FRAMES = 8 };
    rng_state = 53;
    tlog_log *log = later_log(false);
    tlog_frame *frames[FRAMES];
    uint64_t t = 0;
    for (int k = 0; k < FRAMES; k++) {
        later_frame(log, &t, k == 3 || k == 5 ? LATER_SPREAD
                             : k == 4         ? LATER_INNER
                             : k == 6         ? LATER_TWICE
                                              : LATER_PLAIN);
        frames[k] = pop(log);
    }
    /* `twin` is fed what `s` counts, with no allocation failing. The first
     * frame makes thousands of rows: failing each of its allocations is
     * an_add_out_of_memory_changes_nothing's business. */
    tlog_summary *s = make_summary(NULL), *twin = make_summary(NULL);
    assert_int_equal(tlog_summary_add(s, frames[0]), TLOG_OK);
    assert_int_equal(tlog_summary_add(twin, frames[0]), TLOG_OK);
    int failures = 0;
    for (int k = 1; k < FRAMES; k++) {
        for (uint64_t n = 1;; n++) {
            char *before = csv_of(s);
            tlog_test_fail_alloc(n);
            int rc = tlog_summary_add(s, frames[k]);
            bool failed = tlog_test_alloc_failed();
            tlog_test_fail_alloc(0);
            if (rc == TLOG_OK) {
                assert_int_equal(tlog_summary_add(twin, frames[k]), TLOG_OK);
                free(before);
                break;
            }
            failures++;
            assert_int_equal(rc, TLOG_ENOMEM);
            assert_true(failed);
            char *after = csv_of(s);
            assert_string_equal(after, before);
            free(after);
            free(before);
            assert_int_equal(tlog_summary_add(s, frames[k - 1]), TLOG_OK);
            assert_int_equal(tlog_summary_add(twin, frames[k - 1]), TLOG_OK);
        }
    }
    assert_true(failures > 0);
    same_csv(s, twin);
    for (int k = 0; k < FRAMES; k++)
        tlog_frame_release(frames[k]);
    tlog_summary_destroy(s);
    tlog_summary_destroy(twin);
    tlog_destroy(log);
}

/* Frames read back from a stream give the statistics the log kept live,
 * device rows included. */
static void stream_read_back_gives_the_same_statistics(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/timerlog-summary-%d.tlog",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    sim_options so = {.stream_path = path, .max_frames = 4};
    /* The fixture's log, with statistics on. */
    sim_fixture *fx = calloc(1, sizeof *fx);
    tlog_sim_config simc = {.size = sizeof simc};
    assert_int_equal(tlog_sim_create(&simc, &fx->sim), TLOG_OK);
    tlog_config c = test_config(&fx->errors);
    c.clock = tlog_sim_clock;
    c.clock_user = fx->sim;
    c.max_frames = so.max_frames;
    c.stream_path = path;
    c.flags |= TLOG_CONFIG_STATS;
    c.stats.hitch_ns = 6000000;
    fx->log = make_log(&c);
    assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, NULL, &fx->dev), TLOG_OK);
    fx->q1 = tlog_sim_queue_create(fx->sim);
    for (int k = 0; k < 20; k++) {
        double t0 = sim_ms(fx);
        host_begin(fx, "Frame");
        host_begin(fx, "Launch");
        kernel(fx, fx->q1, "Kernel", 1.0 + (k % 5));
        host_end(fx, "Launch");
        sync_until(fx, "Wait", t0 + 2.0 + (k % 5));
        sim_at(fx, sim_ms(fx) + 0.5);
        host_end(fx, "Frame");
    }
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_OK);
    tlog_summary *live;
    assert_int_equal(tlog_log_summary(fx->log, &live), TLOG_OK);
    assert_int_equal(summary_info(live).frames, 20);
    const tlog_stat_row *wait = stat_child(tlog_summary_root(live, 0), "Wait");
    tlog_stat_info k = stat_info(stat_child(wait, "Kernel"));
    assert_int_equal(k.kind, TLOG_KIND_EXECUTION);
    assert_true(k.flags & TLOG_NODE_DEVICE);
    assert_non_null(k.device);
    assert_int_equal(k.frames, 20);
    assert_int_equal(k.total_ns.min, 1000000);
    assert_int_equal(k.total_ns.max, 5000000);
    assert_true(k.total_ns.mean == 3000000.0);
    assert_int_equal(fx->errors.count, 0);
    char *x = json_of(live);
    tlog_summary_destroy(live);   /* its hitches are the log's frames: before the log */
    sim_fixture_free(fx);

    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_summary *read = make_summary(&c.stats);
    tlog_frame *f;
    int rc;
    while ((rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        assert_int_equal(tlog_summary_add(read, f), TLOG_OK);
        tlog_frame_release(f);
    }
    assert_int_equal(rc, TLOG_ENOFRAME);
    char *y = json_of(read);
    assert_string_equal(x, y);
    assert_non_null(strstr(x, "\"hitches\":[\n{\"number\":1,"));
    free(x);
    free(y);
    tlog_summary_destroy(read);   /* before the reader: its hitches are the reader's */
    tlog_reader_close(r);
    unlink(path);
}

/* A log's own statistics know a frame's rows by the addresses of their
 * titles while the last frame of their group is held. With frames that
 * change shape (rows come, go and swap places, titles recur at other
 * depths) and more root titles than the frames held, they are what a
 * summary fed the same frames, which reads every title, gives. */
static void log_statistics_match_a_summary_fed_the_same_frames(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = 4;
    c.flags |= TLOG_CONFIG_STATS;
    tlog_log *log = make_log(&c);
    tlog_summary *ref = make_summary(NULL);
    static const char *const roots[] = {"R0", "R1", "R2", "R3", "R4", "R5",
                                        "R6", "R7", "R8", "R9", "R10"};
    static const char *const names[] = {"A", "B", "C", "D", "E"};
    rng_state = 23;
    uint64_t t = 0;
    for (int k = 0; k < 800; k++) {
        /* Three roots in turn, then any of eleven. */
        const char *root = roots[k < 400 ? (uint64_t)k % 3 : rng() % 11];
        at_ns(t);
        tlog_log_begin(log, site_named(root));
        int rows = 1 + (int)(rng() % 4);
        for (int i = 0; i < rows; i++) {
            /* The same rows for a while, then others, in another order. */
            const char *name = names[(k / 40 + i * (k / 40 % 2 ? 1 : 3)) % 5];
            if (rng() % 8 == 0)
                name = names[rng() % 5];
            at_ns(t += 1 + rng() % 50);
            tlog_log_begin(log, site_named(name));
            if (rng() % 3 == 0) {
                const char *inner = names[rng() % 5];
                at_ns(t += 1 + rng() % 50);
                tlog_log_begin(log, site_named(inner));
                at_ns(t += 1 + rng() % 500);
                tlog_log_end(log, site_named(inner));
            }
            at_ns(t += 1 + rng() % 1000);
            tlog_log_end(log, site_named(name));
        }
        at_ns(t += 5);
        tlog_log_end(log, site_named(root));
        t++;
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(ref, f), TLOG_OK);
        tlog_frame_release(f);
    }
    tlog_summary *own;
    assert_int_equal(tlog_log_summary(log, &own), TLOG_OK);
    assert_int_equal(summary_info(own).frames, 800);
    assert_int_equal(summary_info(own).groups, 11);
    char *x = csv_of(own), *y = csv_of(ref);
    assert_string_equal(x, y);
    free(x);
    free(y);
    tlog_summary_destroy(own);
    tlog_summary_destroy(ref);
    tlog_destroy(log);
}

/* A frame still waiting for its device work is counted once resolved;
 * frames pushed out of the queue unread are counted too. */
static void log_counts_every_frame_read_or_not(void **state)
{
    (void)state;
    sim_fixture *fx = calloc(1, sizeof *fx);
    tlog_sim_config simc = {.size = sizeof simc};
    assert_int_equal(tlog_sim_create(&simc, &fx->sim), TLOG_OK);
    tlog_config c = test_config(&fx->errors);
    c.clock = tlog_sim_clock;
    c.clock_user = fx->sim;
    c.max_frames = 2;
    c.flags |= TLOG_CONFIG_STATS;
    fx->log = make_log(&c);
    assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, NULL, &fx->dev), TLOG_OK);
    fx->q1 = tlog_sim_queue_create(fx->sim);
    /* A kernel that outlives its frame: the frame waits for it. */
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Long", 10.0);
    sim_at(fx, 1.0);
    host_end(fx, "Frame");
    tlog_summary *s;
    assert_int_equal(tlog_log_summary(fx->log, &s), TLOG_OK);
    assert_int_equal(summary_info(s).frames, 0);   /* not resolved yet */
    tlog_summary_destroy(s);
    sim_at(fx, 20.0);
    for (int k = 0; k < 5; k++) {   /* pushes it out, unread */
        host_begin(fx, "Frame");
        sim_at(fx, sim_ms(fx) + 1);
        host_end(fx, "Frame");
    }
    assert_int_equal(tlog_log_summary(fx->log, &s), TLOG_OK);
    assert_int_equal(summary_info(s).frames, 6);
    const tlog_stat_row *past = stat_child(tlog_summary_root(s, 0), "Device past frame end");
    assert_non_null(past);
    tlog_stat_info l = stat_info(stat_child(past, "Long"));
    assert_int_equal(l.frames, 1);
    assert_int_equal(l.total_ns.min, 10000000);
    tlog_summary_destroy(s);
    tlog_stats st = stats_of(fx->log);
    assert_int_equal(st.frames_dropped, 4);
    assert_int_equal(fx->errors.count, 0);
    sim_fixture_free(fx);
}

/* Threads record frames into a log that keeps statistics while another
 * pops frames (resolving some before their own thread does) and others
 * copy the statistics: every frame is counted once, in its thread's
 * group. */
enum { RECORDERS = 3, FRAMES_EACH = 300 };

static tlog_log *shared_log;
static atomic_int recording;

static void *record_frames(void *arg)
{
    char name[32];
    snprintf(name, sizeof name, "Recorder %d", (int)(intptr_t)arg);
    tlog_thread_name(name);
    for (int k = 0; k < FRAMES_EACH; k++)
        known_frame(shared_log, 1000u * (uint64_t)k, 100 + (uint64_t)(k % 7), 10);
    atomic_fetch_sub(&recording, 1);
    return NULL;
}

static void *read_frames(void *arg)
{
    (void)arg;
    while (atomic_load(&recording))
        tlog_frame_release(tlog_frame_pop(shared_log));
    return NULL;
}

static void *copy_statistics(void *arg)
{
    (void)arg;
    while (atomic_load(&recording)) {
        tlog_summary *s = NULL;
        assert_int_equal(tlog_log_summary(shared_log, &s), TLOG_OK);
        tlog_summary_info si = summary_info(s);
        assert_true(si.frames <= RECORDERS * FRAMES_EACH);
        tlog_summary_destroy(s);
    }
    return NULL;
}

static void threads_record_while_statistics_are_read(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.flags |= TLOG_CONFIG_STATS;
    c.max_frames = 2;
    c.stats.hitch_ns = 105;   /* a few hitches, kept and evicted as they come */
    c.stats.max_hitches = 4;
    shared_log = make_log(&c);
    atomic_store(&recording, RECORDERS);
    pthread_t rec[RECORDERS], reader, copier;
    assert_int_equal(pthread_create(&reader, NULL, read_frames, NULL), 0);
    assert_int_equal(pthread_create(&copier, NULL, copy_statistics, NULL), 0);
    for (intptr_t k = 0; k < RECORDERS; k++)
        assert_int_equal(pthread_create(&rec[k], NULL, record_frames, (void *)k), 0);
    for (int k = 0; k < RECORDERS; k++)
        pthread_join(rec[k], NULL);
    pthread_join(reader, NULL);
    pthread_join(copier, NULL);
    tlog_summary *s;
    assert_int_equal(tlog_log_summary(shared_log, &s), TLOG_OK);
    tlog_summary_info si = summary_info(s);
    assert_int_equal(si.frames, RECORDERS * FRAMES_EACH);
    assert_int_equal(si.groups, RECORDERS);
    for (size_t g = 0; g < RECORDERS; g++) {
        tlog_stat_info r = stat_info(tlog_summary_root(s, g));
        assert_int_equal(r.frames, FRAMES_EACH);
        assert_non_null(strstr(r.thread_name, "Recorder "));
        tlog_stat_info w = stat_info(stat_child(tlog_summary_root(s, g), "Work"));
        assert_int_equal(w.total_ns.min, 100);
        assert_int_equal(w.total_ns.max, 106);
    }
    assert_int_equal(si.hitches, 4);
    tlog_summary_destroy(s);
    tlog_destroy(shared_log);
    assert_int_equal(errors.count, 0);
}

/* ------------------------------------------------------------------------ */
/* Across ranks                                                             */
/* ------------------------------------------------------------------------ */

/* Exported for libtimerlog-mpi (lib/exchange.h). */
int tlog_summary_encode_(const tlog_summary *summary, void **data, size_t *len);
int tlog_summary_decode_(const void *data, size_t len, tlog_summary **out);

/* A summary of `frames` frames whose Work takes base, 2 base, ... ns, with
 * a child row on odd frames and, for rank 0 only, a Checkpoint row. */
static tlog_summary *rank_summary(tlog_log *log, int rank, int frames, uint64_t base)
{
    tlog_summary *s = make_summary(NULL);
    for (int k = 0; k < frames; k++) {
        at_ns(1000000u * (uint64_t)k);
        tlog_log_begin(log, site_named("Frame"));
        tlog_log_begin(log, site_named("Work"));
        if (k % 2) {
            tlog_log_begin(log, site_named("Inner"));
            at_ns(test_now + 7);
            tlog_log_end(log, site_named("Inner"));
        }
        at_ns(test_now + base * (uint64_t)(k + 1));
        tlog_log_end(log, site_named("Work"));
        if (rank == 0) {
            tlog_log_begin(log, site_named("Checkpoint"));
            at_ns(test_now + 300);
            tlog_log_end(log, site_named("Checkpoint"));
        }
        tlog_log_end(log, site_named("Frame"));
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
    }
    return s;
}

/* Three ranks (the second without statistics): the reduction is their
 * merge, and each row says how its ranks spread. */
static void reduce_keeps_each_rank_s_spread(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary *r0 = rank_summary(log, 0, 5, 100), *r2 = rank_summary(log, 2, 9, 1000);
    const tlog_summary *in[] = {r0, NULL, r2};
    tlog_summary *out = (tlog_summary *)1;
    assert_int_equal(tlog_summary_reduce(in, 0, &out), TLOG_EINVAL);
    assert_null(out);
    assert_int_equal(tlog_summary_reduce(in, 3, &out), TLOG_OK);
    tlog_summary_info si = summary_info(out);
    assert_int_equal(si.reduced_ranks, 3);
    assert_int_equal(si.frames, 14);
    /* The figures over all frames are those of a plain merge. */
    tlog_summary *merged = make_summary(NULL);
    assert_int_equal(tlog_summary_merge(merged, r0), TLOG_OK);
    assert_int_equal(tlog_summary_merge(merged, r2), TLOG_OK);
    tlog_stat_info w = stat_info(stat_child(tlog_summary_root(out, 0), "Work"));
    tlog_stat_info m = stat_info(stat_child(tlog_summary_root(merged, 0), "Work"));
    assert_int_equal(w.frames, 14);
    assert_true(w.total_ns.mean == m.total_ns.mean);
    assert_int_equal(w.total_ns.median, m.total_ns.median);
    assert_int_equal(m.ranks, 0);
    /* The spread: the mean of Work's medians on ranks 0 and 2, and its
     * largest p99 (of fewer than 100 frames, the maximum: 9000 ns on rank
     * 2's last frame). */
    tlog_stat_info w0 = stat_info(stat_child(tlog_summary_root(r0, 0), "Work"));
    tlog_stat_info w2 = stat_info(stat_child(tlog_summary_root(r2, 0), "Work"));
    assert_int_equal(w.ranks, 2);
    assert_true(w.rank_median_mean_ns ==
                ((double)w0.total_ns.median + (double)w2.total_ns.median) / 2);
    assert_int_equal(w.rank_p99_max_ns, w2.total_ns.p99);
    assert_int_equal(w.rank_p99_max_ns, 9000);
    assert_int_equal(w.rank_p99_max_rank, 2);
    tlog_stat_info cp = stat_info(stat_child(tlog_summary_root(out, 0), "Checkpoint"));
    assert_int_equal(cp.ranks, 1);
    assert_int_equal(cp.rank_p99_max_rank, 0);
    FILE *fp = tmpfile();
    assert_int_equal(tlog_summary_dump(out, fp, NULL), TLOG_OK);
    char *text = read_back(fp);
    contains(text, "# reduced over 3 ranks: ");
    contains(text, " (rank 2) | (C) Work [on 2/3 ranks]\n");   /* rank 1 kept none */
    contains(text, " (rank 0) | (C) Checkpoint [in 5/14 frames] [on 1/3 ranks]\n");
    free(text);
    tlog_summary_destroy(merged);
    tlog_summary_destroy(out);
    tlog_summary_destroy(r0);
    tlog_summary_destroy(r2);
    tlog_destroy(log);
}

/* A summary as bytes and back is the same summary; every shorter piece of
 * the bytes, and bytes flipped anywhere, are refused or read as something
 * whole, never read past. */
static void encoded_summary_reads_back_the_same(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary *s = rank_summary(log, 0, 7, 1000);
    /* Another group. */
    at_ns(0);
    tlog_log_begin(log, site_named("Load"));
    tlog_log_begin(log, site_named("Read"));
    at_ns(40);
    tlog_log_end(log, site_named("Read"));
    tlog_log_end(log, site_named("Load"));
    tlog_frame *f = pop(log);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    tlog_frame_release(f);
    assert_int_equal(summary_info(s).groups, 2);
    void *bytes;
    size_t len;
    assert_int_equal(tlog_summary_encode_(s, &bytes, &len), TLOG_OK);
    tlog_summary *back;
    assert_int_equal(tlog_summary_decode_(bytes, len, &back), TLOG_OK);
    char *x = csv_of(s), *y = csv_of(back);
    assert_string_equal(x, y);
    free(y);
    assert_int_equal(summary_info(back).frames, summary_info(s).frames);
    tlog_summary_destroy(back);
    for (size_t n = 0; n < len; n++) {
        tlog_summary *cut = (tlog_summary *)1;
        assert_int_equal(tlog_summary_decode_(bytes, n, &cut), TLOG_EFORMAT);
        assert_null(cut);
    }
    /* Frames of the same rows, one of values within those read back and
     * one past them. */
    tlog_frame *more[2];
    for (int j = 0; j < 2; j++) {
        known_frame(log, 1000000, j ? 5000000 : 1000, j ? 100000 : 3);
        more[j] = pop(log);
    }
    rng_state = 5;
    uint8_t *copy = malloc(len);
    for (int k = 0; k < 2000; k++) {
        memcpy(copy, bytes, len);
        copy[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
        tlog_summary *d = NULL;
        int rc = tlog_summary_decode_(copy, len, &d);
        assert_true(rc == TLOG_OK || rc == TLOG_EFORMAT);
        if (d) {   /* what reads must be whole: every output works */
            char *z = csv_of(d);
            free(z);
            FILE *fp = tmpfile();
            assert_int_equal(tlog_summary_dump(d, fp, NULL), TLOG_OK);
            fclose(fp);
            /* and counting more frames, there or after a merge, stays
             * within its histograms (the sanitizers watch) */
            tlog_summary *m = make_summary(NULL);
            assert_int_equal(tlog_summary_merge(m, d), TLOG_OK);
            for (int j = 0; j < 2; j++) {
                assert_int_equal(tlog_summary_add(d, more[j]), TLOG_OK);
                assert_int_equal(tlog_summary_add(m, more[j]), TLOG_OK);
            }
            tlog_summary_destroy(m);
        }
        tlog_summary_destroy(d);
    }
    free(copy);
    for (int j = 0; j < 2; j++)
        tlog_frame_release(more[j]);
    free(x);
    free(bytes);
    assert_int_equal(tlog_summary_decode_(NULL, 0, &back), TLOG_EINVAL);
    assert_int_equal(tlog_summary_encode_(NULL, &bytes, &len), TLOG_EINVAL);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* An encoded summary written by hand, little-endian as the codec's. */
typedef struct blob {
    uint8_t b[4096];
    size_t n;
} blob;

static void put_le(blob *w, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        w->b[w->n++] = (uint8_t)(v >> (8 * i));
}

static void put_text(blob *w, const char *t)
{
    size_t n = strlen(t);
    put_le(w, n, 4);
    memcpy(w->b + w->n, t, n);
    w->n += n;
}

/* One group of one row, "Frame" of that thread and kind, a leaf (its self
 * time its total), up to its quantities. */
static void one_row_blob(blob *w, const char *thread, unsigned kind, uint64_t frames)
{
    memcpy(w->b, "TLSU", 4);
    w->n = 4;
    put_le(w, 2, 4);        /* version */
    put_le(w, frames, 8);
    put_le(w, 0, 8);        /* rows refused */
    put_le(w, 0, 8);        /* hitches seen */
    put_le(w, 1, 4);        /* groups */
    put_le(w, 1, 4);        /* rows */
    put_text(w, thread);
    put_le(w, 1, 4);        /* rows of the group */
    put_le(w, UINT32_MAX, 4);
    put_le(w, kind, 1);
    put_le(w, 0, 1);        /* flags */
    put_le(w, 1, 1);        /* self_same */
    put_text(w, "Frame");
    put_le(w, 0, 1);        /* no device */
    put_le(w, 0, 8);        /* site id */
    put_le(w, frames, 8);
}

/* A quantity: its figures and n buckets from lo, empty but the last. */
static void put_quantity(blob *w, uint64_t sum, uint64_t min, uint64_t max, unsigned lo,
                         unsigned n, uint64_t last)
{
    put_le(w, sum, 8);
    put_le(w, min, 8);
    put_le(w, max, 8);
    put_le(w, lo, 2);
    put_le(w, n, 2);
    for (unsigned k = 0; k < n; k++)
        put_le(w, k + 1 == n ? last : 0, 8);
}

/* A row of no frames read back has seen nothing: extremes it claims would
 * let later frames count into buckets its histogram lacks. */
static void a_row_of_no_frames_read_back_has_seen_nothing(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    at_ns(0);
    tlog_log_begin(log, site_named("Frame"));
    at_ns(100);
    tlog_log_end(log, site_named("Frame"));
    tlog_frame *f[2] = {pop(log)};
    at_ns(1000);
    tlog_log_begin(log, site_named("Frame"));
    at_ns(1000 + (1ull << 40));
    tlog_log_end(log, site_named("Frame"));
    f[1] = pop(log);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_node_info ni = {.size = sizeof ni};
    assert_int_equal(tlog_frame_get_info(f[0], &fi), TLOG_OK);
    assert_int_equal(tlog_node_get_info(tlog_frame_root(f[0]), &ni), TLOG_OK);
    for (int claims = 0; claims < 2; claims++) {
        blob w;
        one_row_blob(&w, fi.thread_name, ni.kind, 0);
        uint64_t min = claims ? 0 : UINT64_MAX, max = claims ? UINT64_MAX : 0;
        put_quantity(&w, 0, min, max, 0, 2, 0);   /* total */
        put_quantity(&w, 0, min, max, 0, 2, 0);   /* count */
        put_quantity(&w, 0, 0, 0, 0, 0, 0);       /* self: its total */
        tlog_summary *d = NULL;
        int rc = tlog_summary_decode_(w.b, w.n, &d);
        if (claims) {
            assert_int_equal(rc, TLOG_EFORMAT);
            assert_null(d);
            continue;
        }
        assert_int_equal(rc, TLOG_OK);
        for (int k = 0; k < 2; k++)
            assert_int_equal(tlog_summary_add(d, f[k]), TLOG_OK);
        tlog_stat_info si = stat_info(tlog_summary_root(d, 0));
        assert_int_equal(si.frames, 2);
        assert_int_equal(si.total_ns.min, 100);
        assert_int_equal(si.total_ns.max, 1ull << 40);
        tlog_summary_destroy(d);
    }
    for (int k = 0; k < 2; k++)
        tlog_frame_release(f[k]);
    tlog_destroy(log);
}

/* Quantiles of a row of 2^64 - 1 frames read back: the top one is the
 * largest value's bucket, not a conversion past what a uint64 holds. */
static void quantiles_of_a_row_of_the_most_frames(void **state)
{
    (void)state;
    blob w;
    one_row_blob(&w, "main", 0, UINT64_MAX);
    /* All frames at 1 ns but one of 100 ns: buckets 1 to 100. */
    put_le(&w, UINT64_MAX, 8);
    put_le(&w, 1, 8);
    put_le(&w, 100, 8);
    put_le(&w, 1, 2);
    put_le(&w, 100, 2);
    put_le(&w, UINT64_MAX - 1, 8);
    for (int k = 1; k < 99; k++)
        put_le(&w, 0, 8);
    put_le(&w, 1, 8);
    put_quantity(&w, UINT64_MAX, 1, 1, 1, 1, UINT64_MAX);   /* count: 1 */
    put_quantity(&w, 0, 0, 0, 0, 0, 0);
    tlog_summary *d = NULL;
    assert_int_equal(tlog_summary_decode_(w.b, w.n, &d), TLOG_OK);
    uint64_t q;
    assert_int_equal(tlog_stat_row_quantile(tlog_summary_root(d, 0), TLOG_STAT_TOTAL, 1.0, &q),
                     TLOG_OK);
    assert_int_equal(q, 100);
    assert_int_equal(tlog_stat_row_quantile(tlog_summary_root(d, 0), TLOG_STAT_TOTAL, 0.5, &q),
                     TLOG_OK);
    assert_int_equal(q, 1);
    tlog_summary_destroy(d);
}

/* Titles of any length pass through bytes whole: two siblings that differ
 * only past their first 65,535 bytes stay two rows. */
static void titles_of_any_length_pass_through_bytes_whole(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    enum { LONG = 70000 };
    char *title[2];
    for (int k = 0; k < 2; k++) {
        title[k] = malloc(LONG + 2);
        memset(title[k], 'x', LONG);
        title[k][LONG] = k ? 'B' : 'A';
        title[k][LONG + 1] = '\0';
    }
    at_ns(0);
    tlog_log_begin(log, site_named("Frame"));
    for (int k = 0; k < 2; k++) {
        tlog_log_begin(log, site_named(title[k]));
        at_ns(test_now + 10 + 10 * (uint64_t)k);
        tlog_log_end(log, site_named(title[k]));
    }
    tlog_log_end(log, site_named("Frame"));
    tlog_frame *f = pop(log);
    tlog_summary *s = make_summary(NULL);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    tlog_frame_release(f);
    void *bytes;
    size_t len;
    assert_int_equal(tlog_summary_encode_(s, &bytes, &len), TLOG_OK);
    tlog_summary *back = NULL;
    assert_int_equal(tlog_summary_decode_(bytes, len, &back), TLOG_OK);
    const tlog_stat_row *row = tlog_stat_row_first_child(tlog_summary_root(back, 0));
    for (int k = 0; k < 2; k++, row = tlog_stat_row_next_sibling(row)) {
        tlog_stat_info i = stat_info(row);
        assert_string_equal(i.name, title[k]);
        assert_int_equal(i.total_ns.max, 10 + 10 * k);
    }
    assert_null(row);
    free(bytes);
    tlog_summary_destroy(back);
    tlog_summary_destroy(s);
    for (int k = 0; k < 2; k++)
        free(title[k]);
    tlog_destroy(log);
}

/* The bytes of a root "Frame" of 2 frames at 10 and 20 ns, its total's
 * figures as given and its histogram's counts in buckets `lo` on. */
static void two_frame_blob(blob *w, uint64_t sum, const uint64_t *counts, unsigned lo,
                           unsigned n)
{
    one_row_blob(w, "main", 0, 2);
    put_le(w, sum, 8);
    put_le(w, 10, 8);
    put_le(w, 20, 8);
    put_le(w, lo, 2);
    put_le(w, n, 2);
    for (unsigned k = 0; k < n; k++)
        put_le(w, counts[k], 8);
    put_quantity(w, 2, 1, 1, 1, 1, 2);   /* count: once in each */
    put_quantity(w, 0, 0, 0, 0, 0, 0);   /* self: its total */
}

static int decode_blob(const blob *w)
{
    tlog_summary *d = (tlog_summary *)1;
    int rc = tlog_summary_decode_(w->b, w->n, &d);
    if (rc != TLOG_OK)
        assert_null(d);
    tlog_summary_destroy(d);
    return rc;
}

/* Bytes whose figures contradict each other are refused, not read as a
 * summary that says two things: a sum no two values between the extremes
 * make, counts outside the extremes' buckets, groups of more frames than
 * the summary, a title with a NUL in it. */
static void figures_that_contradict_each_other_are_refused(void **state)
{
    (void)state;
    uint64_t counts[12] = {0};
    counts[0] = counts[10] = 1;   /* buckets 10 and 20: the values */
    blob w;
    two_frame_blob(&w, 30, counts, 10, 11);
    assert_int_equal(decode_blob(&w), TLOG_OK);
    two_frame_blob(&w, 30, counts, 10, 12);   /* an empty bucket past them */
    assert_int_equal(decode_blob(&w), TLOG_OK);
    two_frame_blob(&w, 19, counts, 10, 11);   /* below twice the minimum */
    assert_int_equal(decode_blob(&w), TLOG_EFORMAT);
    two_frame_blob(&w, 41, counts, 10, 11);   /* above twice the maximum */
    assert_int_equal(decode_blob(&w), TLOG_EFORMAT);
    two_frame_blob(&w, 30, counts, 9, 12);    /* the minimum's count in 9 */
    assert_int_equal(decode_blob(&w), TLOG_EFORMAT);
    two_frame_blob(&w, 30, counts, 11, 11);   /* the maximum's count in 21 */
    assert_int_equal(decode_blob(&w), TLOG_EFORMAT);
    counts[10] = 0;
    counts[9] = 1;
    two_frame_blob(&w, 30, counts, 10, 11);   /* the maximum's count in 19 */
    assert_int_equal(decode_blob(&w), TLOG_EFORMAT);
    counts[9] = 0;
    counts[10] = 1;
    two_frame_blob(&w, 30, counts, 10, 11);
    w.b[8] = 1;   /* the summary's frames: 1, its group's 2 */
    assert_int_equal(decode_blob(&w), TLOG_EFORMAT);
    two_frame_blob(&w, 30, counts, 10, 11);
    size_t at = 0;
    while (at + 5 <= w.n && memcmp(w.b + at, "Frame", 5) != 0)
        at++;
    assert_true(at + 5 <= w.n);
    w.b[at + 2] = '\0';
    assert_int_equal(decode_blob(&w), TLOG_EFORMAT);
}

/* Frame and bucket counts that merging would take past 2^64 - 1 stay
 * there, as sums do, rather than wrap to small ones. */
static void merged_counts_saturate(void **state)
{
    (void)state;
    blob w;
    one_row_blob(&w, "main", 0, 1ull << 63);
    put_quantity(&w, 1ull << 63, 1, 1, 1, 1, 1ull << 63);   /* total: 1 ns each */
    put_quantity(&w, 1ull << 63, 1, 1, 1, 1, 1ull << 63);   /* count: 1 */
    put_quantity(&w, 0, 0, 0, 0, 0, 0);
    tlog_summary *d = NULL, *m = make_summary(NULL);
    assert_int_equal(tlog_summary_decode_(w.b, w.n, &d), TLOG_OK);
    for (int k = 0; k < 3; k++)
        assert_int_equal(tlog_summary_merge(m, d), TLOG_OK);
    assert_int_equal(summary_info(m).frames, UINT64_MAX);
    tlog_stat_info i = stat_info(tlog_summary_root(m, 0));
    assert_int_equal(i.frames, UINT64_MAX);
    assert_int_equal(i.total_ns.median, 1);
    assert_int_equal(i.count.p99, 1);
    /* and what it holds passes through bytes */
    void *bytes;
    size_t len;
    assert_int_equal(tlog_summary_encode_(m, &bytes, &len), TLOG_OK);
    tlog_summary *back = NULL;
    assert_int_equal(tlog_summary_decode_(bytes, len, &back), TLOG_OK);
    assert_int_equal(stat_info(tlog_summary_root(back, 0)).frames, UINT64_MAX);
    free(bytes);
    tlog_summary_destroy(back);
    tlog_summary_destroy(m);
    tlog_summary_destroy(d);
}

/* A frame added to a row that has counted all the frames a count holds
 * (only decoded or merged counts get there) leaves its counts saturated,
 * as merging does, instead of wrapping them to nothing. */
static void adding_to_a_saturated_row_keeps_it_saturated(void **state)
{
    (void)state;
    blob w;
    one_row_blob(&w, "Thread 1", 0, UINT64_MAX);
    put_quantity(&w, UINT64_MAX, 1, 1, 1, 1, UINT64_MAX);   /* total: 1 ns each */
    put_quantity(&w, UINT64_MAX, 1, 1, 1, 1, UINT64_MAX);   /* count: 1 */
    put_quantity(&w, 0, 0, 0, 0, 0, 0);
    tlog_summary *s = NULL;
    assert_int_equal(tlog_summary_decode_(w.b, w.n, &s), TLOG_OK);
    tlog_log *log = plain_log();
    at_ns(0);
    tlog_log_begin(log, site_named("Frame"));
    at_ns(1);
    tlog_log_end(log, site_named("Frame"));
    tlog_frame *f = pop(log);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    assert_int_equal(summary_info(s).groups, 1);
    assert_int_equal(summary_info(s).frames, UINT64_MAX);
    tlog_stat_info i = stat_info(tlog_summary_root(s, 0));
    assert_int_equal(i.frames, UINT64_MAX);
    assert_int_equal(i.total_ns.median, 1);
    assert_int_equal(i.total_ns.max, 1);
    assert_int_equal(i.count.p99, 1);
    tlog_frame_release(f);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* Merging keeps each row's first site, the root's as the others'. */
static void merge_keeps_each_row_s_first_site(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    const tlog_site *first[2] = {site_named("Frame"), site_named("Work")};
    const tlog_site *later[2] = {
        tlog_site_intern("Frame", "other.c", "test", 20, TLOG_LEVEL_COARSE),
        tlog_site_intern("Work", "other.c", "test", 21, TLOG_LEVEL_COARSE)};
    tlog_summary *s[2] = {make_summary(NULL), make_summary(NULL)};
    for (int k = 0; k < 2; k++) {
        const tlog_site *const *site = k ? later : first;
        at_ns(0);
        tlog_log_begin(log, site[0]);
        tlog_log_begin(log, site[1]);
        at_ns(50);
        tlog_log_end(log, site[1]);
        tlog_log_end(log, site[0]);
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s[k], f), TLOG_OK);
        tlog_frame_release(f);
    }
    assert_int_equal(tlog_summary_merge(s[0], s[1]), TLOG_OK);
    const tlog_stat_row *root = tlog_summary_root(s[0], 0);
    assert_int_equal(stat_info(root).frames, 2);
    assert_int_equal(stat_info(root).site_id, tlog_site_id(first[0]));
    assert_int_equal(stat_info(stat_child(root, "Work")).site_id, tlog_site_id(first[1]));
    tlog_summary_destroy(s[0]);
    tlog_summary_destroy(s[1]);
    tlog_destroy(log);
}

/* Means of a quarter of an hour and more are written whole, beside the
 * minimum and maximum they lie between. */
static void long_means_are_written_whole(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary *s = make_summary(NULL);
    for (int k = 0; k < 2; k++) {
        uint64_t t = (uint64_t)k * 3000000000000u;
        at_ns(t);
        tlog_log_begin(log, site_named("Frame"));
        at_ns(t + 2000000000001u + (uint64_t)k * 2);   /* 2000 s and a bit */
        tlog_log_end(log, site_named("Frame"));
        tlog_frame *f = pop(log);
        assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
        tlog_frame_release(f);
    }
    char *json = json_of(s), *csv = csv_of(s);
    contains(json, "\"mean\":2000000000002.000");
    contains(csv, ",2000000000002.000,");
    lacks(json, "1e12");
    lacks(csv, "1e12");
    free(json);
    free(csv);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

/* Every writer says a write that failed, also when the stream buffered it
 * (into a full device, the failure comes at the flush). */
static void writers_say_a_buffered_write_that_failed(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_summary *s = make_summary(NULL);
    known_frame(log, 0, 100, 10);
    tlog_frame *f = pop(log);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    const tlog_frame *frames[] = {f};
    for (int k = 0; k < 7; k++) {
        FILE *full = fopen("/dev/full", "w");
        if (!full)
            skip();
        int rc = k == 0   ? tlog_dump_frame(f, full, NULL)
                 : k == 1 ? tlog_export_json(frames, 1, full)
                 : k == 2 ? tlog_export_csv(frames, 1, full)
                 : k == 3 ? tlog_export_chrome(frames, 1, full)
                 : k == 4 ? tlog_summary_dump(s, full, NULL)
                 : k == 5 ? tlog_summary_export_json(s, full)
                          : tlog_summary_export_csv(s, full);
        if (rc != TLOG_EIO)
            fail_msg("writer %d into /dev/full: %d, not TLOG_EIO", k, rc);
        fclose(full);
    }
    tlog_frame_release(f);
    tlog_summary_destroy(s);
    tlog_destroy(log);
}

static void bad_settings_are_refused(void **state)
{
    (void)state;
    tlog_summary *s = (tlog_summary *)1;
    tlog_summary_config sc = {.size = sizeof sc, .hitch_quantile = 1.0};
    assert_int_equal(tlog_summary_create(&sc, &s), TLOG_EINVAL);
    assert_null(s);
    sc = (tlog_summary_config){.size = sizeof sc, .hitch_quantile = -0.5};
    assert_int_equal(tlog_summary_create(&sc, &s), TLOG_EINVAL);
    sc = (tlog_summary_config){.size = sizeof sc, .hitch_quantile = NAN};
    assert_int_equal(tlog_summary_create(&sc, &s), TLOG_EINVAL);
    sc = (tlog_summary_config){.size = sizeof sc, .max_hitches = 5000};
    assert_int_equal(tlog_summary_create(&sc, &s), TLOG_EINVAL);
    sc = (tlog_summary_config){.size = sizeof sc, .hitch_window = 70000};
    assert_int_equal(tlog_summary_create(&sc, &s), TLOG_EINVAL);
    assert_int_equal(tlog_summary_create(NULL, NULL), TLOG_EINVAL);
    tlog_config c = test_config(NULL);
    c.flags |= TLOG_CONFIG_STATS;
    c.stats.hitch_quantile = 2;
    tlog_log *log = (tlog_log *)1;
    assert_int_equal(tlog_create(&c, &log), TLOG_EINVAL);
    assert_null(log);
    /* NULLs. */
    assert_int_equal(tlog_summary_add(NULL, NULL), TLOG_EINVAL);
    s = make_summary(NULL);
    assert_int_equal(tlog_summary_add(s, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_dump(NULL, stdout, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_export_json(NULL, stdout), TLOG_EINVAL);
    assert_int_equal(tlog_summary_export_csv(NULL, stdout), TLOG_EINVAL);
    assert_int_equal(tlog_summary_export_hitches_csv(NULL, stdout), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_get_info(NULL, NULL), TLOG_EINVAL);
    assert_null(tlog_summary_root(NULL, 0));
    tlog_summary_info si = {.size = 0};
    assert_int_equal(tlog_summary_get_info(s, &si), TLOG_EINVAL);
    tlog_summary_destroy(s);
    tlog_summary_destroy(NULL);
}

/* ------------------------------------------------------------------------ */
/* TIMERLOG_REPORT                                                          */
/* ------------------------------------------------------------------------ */

static void report_variable_writes_the_statistics_when_the_log_goes(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/timerlog-report-%d.csv",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    char value[300];
    snprintf(value, sizeof value, "stats:format=csv:hitch=0.001:file=%s", path);
    setenv("TIMERLOG_REPORT", value, 1);
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.flags &= ~(unsigned)TLOG_CONFIG_IGNORE_ENV;   /* statistics from the variable alone */
    tlog_log *log = make_log(&c);
    known_frame(log, 0, 500, 10);
    known_frame(log, 10000, 5000, 10);   /* over 1 us: a hitch */
    tlog_summary *s;
    assert_int_equal(tlog_log_summary(log, &s), TLOG_OK);
    assert_int_equal(summary_info(s).hitches, 1);
    tlog_summary_destroy(s);
    tlog_destroy(log);
    assert_int_equal(errors.count, 0);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    char *text = read_back(fp);
    contains(text, "thread,root,path,kind,device,frames,total_mean,");
    contains(text, "\nThread 1,Frame,Frame / Work,C,,2,2750.000,500,");
    free(text);
    unlink(path);

    /* A value that is not one is said, and ignored. */
    setenv("TIMERLOG_REPORT", "stats:format=xml", 1);
    memset(&errors, 0, sizeof errors);
    log = make_log(&c);
    assert_int_equal(count_code(&errors, TLOG_EINVAL), 1);
    assert_non_null(strstr(errors.last, "TIMERLOG_REPORT=stats:format=xml is not stats"));
    assert_int_equal(tlog_log_summary(log, &s), TLOG_EINVAL);
    tlog_destroy(log);

    /* TLOG_CONFIG_IGNORE_ENV: not read at all. Asking a log without
     * statistics for them is said, with what switches them on. */
    setenv("TIMERLOG_REPORT", "stats", 1);
    c.flags |= TLOG_CONFIG_IGNORE_ENV;
    memset(&errors, 0, sizeof errors);
    log = make_log(&c);
    assert_int_equal(tlog_log_summary(log, &s), TLOG_EINVAL);
    assert_int_equal(count_code(&errors, TLOG_EINVAL), 1);
    assert_non_null(strstr(errors.last, "keeps no statistics (TLOG_CONFIG_STATS"));
    assert_int_equal(tlog_log_summary_reset(log), TLOG_EINVAL);
    tlog_destroy(log);
    unsetenv("TIMERLOG_REPORT");
}

/* The text of the file at `path`, which must exist. */
static char *text_of(const char *path)
{
    size_t n;
    return file_bytes(path, &n);
}

/* Frames still waiting at the report for device work that never runs (a
 * gate on the queue nobody opens) are waited for one sync timeout in all,
 * not one each: twenty such frames take the report less than ten timeouts,
 * where a timeout each takes twenty. They are counted, their device rows
 * unresolved. */
static void frames_on_a_hung_device_hold_the_report_one_timeout(void **state)
{
    (void)state;
    enum { FRAMES = 20 };
    const double timeout_s = 0.1;
    char path[256], value[300];
    snprintf(path, sizeof path, "%s/timerlog-hung-%d.csv",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(value, sizeof value, "stats:format=csv:file=%s", path);
    setenv("TIMERLOG_REPORT", value, 1);
    sim_fixture *fx = calloc(1, sizeof *fx);
    tlog_sim_config simc = {.size = sizeof simc};
    assert_int_equal(tlog_sim_create(&simc, &fx->sim), TLOG_OK);
    tlog_config c = test_config(&fx->errors);
    c.flags &= ~(unsigned)TLOG_CONFIG_IGNORE_ENV;
    c.clock = tlog_sim_clock;
    c.clock_user = fx->sim;
    c.max_frames = FRAMES;
    c.sync_timeout_ns = (uint64_t)(timeout_s * 1e9);
    fx->log = make_log(&c);
    assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, NULL, &fx->dev), TLOG_OK);
    fx->q1 = tlog_sim_queue_create(fx->sim);
    tlog_sim_gate *gate;
    assert_int_equal(tlog_sim_hold(fx->sim, fx->q1, &gate), TLOG_OK);
    for (int k = 0; k < FRAMES; k++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Kernel", 1.0);
        host_end(fx, "Frame");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tlog_destroy(fx->log);   /* the report first, then the device */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (took > 10 * timeout_s)
        fail_msg("the report waited %.2f s for %d frames (timeout %.2f s)", took, FRAMES,
                 timeout_s);
    unsetenv("TIMERLOG_REPORT");
    char *text = text_of(path);
    contains(text, "\nThread 1,Frame,Frame,C,,20,");
    free(text);
    unlink(path);
    assert_true(count_code(&fx->errors, TLOG_ETIMEDOUT) >= 1);
    tlog_sim_gate_destroy(fx->sim, gate);
    tlog_sim_destroy(fx->sim);
    free(fx);
}

/* Two logs given one report file by the variable: the second is told and
 * writes beside it (path-2, numbered before the extension), so that
 * neither report overwrites the other, whichever log goes first. */
static void two_logs_given_one_report_file_keep_both(void **state)
{
    (void)state;
    char dir[] = "/tmp/timerlog-report-XXXXXX", path[300], second[300], value[400];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/report.csv", dir);
    snprintf(second, sizeof second, "%s/report-2.csv", dir);
    snprintf(value, sizeof value, "stats:format=csv:file=%s", path);
    setenv("TIMERLOG_REPORT", value, 1);
    collected_errors first_errors = {0}, second_errors = {0};
    tlog_config c = test_config(&first_errors);
    c.flags &= ~(unsigned)TLOG_CONFIG_IGNORE_ENV;
    tlog_log *first = make_log(&c);
    c.error_user = &second_errors;
    tlog_log *other = make_log(&c);
    assert_int_equal(first_errors.count, 0);
    assert_int_equal(count_code(&second_errors, TLOG_EBUSY), 1);
    assert_non_null(strstr(second_errors.last, second));
    known_frame(first, 0, 500, 10);
    known_frame(other, 1000, 700, 10);
    known_frame(other, 2000, 700, 10);
    tlog_destroy(first);
    tlog_destroy(other);
    unsetenv("TIMERLOG_REPORT");
    char *text = text_of(path);
    contains(text, "\nThread 1,Frame,Frame / Work,C,,1,500.000,");
    free(text);
    text = text_of(second);
    contains(text, "\nThread 1,Frame,Frame / Work,C,,2,700.000,");
    free(text);
    unlink(path);
    unlink(second);
    rmdir(dir);
}

/* A report file that cannot be opened is said when the log is made, and
 * the report goes to stderr instead of being lost. */
static void a_report_file_that_cannot_be_opened_goes_to_stderr(void **state)
{
    (void)state;
    setenv("TIMERLOG_REPORT", "stats:format=csv:file=/nonexistent/dir/report.csv", 1);
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.flags &= ~(unsigned)TLOG_CONFIG_IGNORE_ENV;
    tlog_log *log = make_log(&c);
    unsetenv("TIMERLOG_REPORT");
    assert_int_equal(count_code(&errors, TLOG_EIO), 1);
    contains(errors.last, "/nonexistent/dir/report.csv: No such file or directory; it goes "
                          "to stderr");
    known_frame(log, 0, 500, 10);
    FILE *capture = tmpfile();
    assert_non_null(capture);
    fflush(stderr);
    int saved = dup(fileno(stderr));
    dup2(fileno(capture), fileno(stderr));
    tlog_destroy(log);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    assert_int_equal(errors.count, 1);
    fseek(capture, 0, SEEK_END);
    char *text = read_back(capture);
    contains(text, "\nThread 1,Frame,Frame / Work,C,,1,500.000,");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_statistics_of_manual_clock_frames),
        cmocka_unit_test(rows_count_only_the_frames_that_have_them),
        cmocka_unit_test(self_time_of_a_row_that_gains_children),
        cmocka_unit_test(quantiles_within_bound_on_skewed_data),
        cmocka_unit_test(quantiles_within_bound_on_bimodal_data),
        cmocka_unit_test(quantiles_within_bound_over_the_whole_range),
        cmocka_unit_test(memory_stays_bounded_over_a_million_frames),
        cmocka_unit_test(a_title_shared_by_many_rows_is_kept_once),
        cmocka_unit_test(rows_past_the_limit_are_left_out_and_counted),
        cmocka_unit_test(a_row_left_out_counts_with_its_subtree),
        cmocka_unit_test(hitches_over_the_budget_are_kept_and_the_oldest_evicted),
        cmocka_unit_test(paths_mark_work_done_elsewhere),
        cmocka_unit_test(hitches_over_a_quantile_of_recent_frames),
        cmocka_unit_test(hitch_quantile_is_named_as_configured),
        cmocka_unit_test(hitch_quantile_follows_the_window_frame_by_frame),
        cmocka_unit_test(dump_prints_statistics_columns),
        cmocka_unit_test(reset_empties_the_statistics),
        cmocka_unit_test(walk_visits_every_row_of_every_group),
        cmocka_unit_test(frame_rows_have_a_statistics_view),
        cmocka_unit_test(merging_halves_gives_the_whole),
        cmocka_unit_test(frames_that_change_shape_count_as_frames_counted_apart),
        cmocka_unit_test(titles_at_an_address_used_again_are_told_apart),
        cmocka_unit_test(an_add_out_of_memory_changes_nothing),
        cmocka_unit_test(large_frames_counted_later_match_frames_counted_at_once),
        cmocka_unit_test(a_long_run_of_large_frames_counts_each_once),
        cmocka_unit_test(large_frames_counted_later_into_saturated_rows),
        cmocka_unit_test(large_frames_counted_later_into_partly_saturated_rows),
        cmocka_unit_test(readers_together_read_the_frames_waiting),
        cmocka_unit_test(a_large_add_out_of_memory_changes_nothing),
        cmocka_unit_test(stream_read_back_gives_the_same_statistics),
        cmocka_unit_test(log_statistics_match_a_summary_fed_the_same_frames),
        cmocka_unit_test(log_counts_every_frame_read_or_not),
        cmocka_unit_test(threads_record_while_statistics_are_read),
        cmocka_unit_test(reduce_keeps_each_rank_s_spread),
        cmocka_unit_test(encoded_summary_reads_back_the_same),
        cmocka_unit_test(a_row_of_no_frames_read_back_has_seen_nothing),
        cmocka_unit_test(quantiles_of_a_row_of_the_most_frames),
        cmocka_unit_test(titles_of_any_length_pass_through_bytes_whole),
        cmocka_unit_test(figures_that_contradict_each_other_are_refused),
        cmocka_unit_test(merged_counts_saturate),
        cmocka_unit_test(adding_to_a_saturated_row_keeps_it_saturated),
        cmocka_unit_test(merge_keeps_each_row_s_first_site),
        cmocka_unit_test(long_means_are_written_whole),
        cmocka_unit_test(writers_say_a_buffered_write_that_failed),
        cmocka_unit_test(bad_settings_are_refused),
        cmocka_unit_test(report_variable_writes_the_statistics_when_the_log_goes),
        cmocka_unit_test(frames_on_a_hung_device_hold_the_report_one_timeout),
        cmocka_unit_test(two_logs_given_one_report_file_keep_both),
        cmocka_unit_test(a_report_file_that_cannot_be_opened_goes_to_stderr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
