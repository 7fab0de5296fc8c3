/*
 * `timerlog diff` on runs of known distributions, written as real stream
 * files through the library on the simulated clock: a planted slowdown of
 * one row is found and named first, pure noise is not flagged (the false
 * positive rate measured over 200 seeds), rows of one run only are listed,
 * the files of ranks are averaged frame by frame, and bad files and bad
 * arguments give clear messages and exit status 2. The command runs in this
 * process (timerlog_main), as in the program.
 */
#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "diff.h"
#include "diff_stats.h"

static char dir[256];

static char *path_in_dir(const char *name)
{
    static char p[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/timerlog-diff-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Synthetic runs                                                           */
/* ------------------------------------------------------------------------ */

/* What a run's frames look like. Every duration is log-normal: its median
 * times exp(0.2 Z), Z standard normal. */
typedef struct run_spec {
    uint64_t seed;
    int frames;
    const char *slow_row;   /* a leaf whose times are multiplied by factor */
    double factor;
    const char *thread;     /* the recording thread's name */
    const char *extra_row;  /* a leaf under Frame in every frame, or NULL */
    tlog_kind extra_kind;
    double extra_ms;        /* its time; 0: 0.5 ms */
} run_spec;

static double normal(diffstat_rng *rng)
{
    double u1 = ((double)(diffstat_rng_next(rng) >> 11) + 1) / 9007199254740993.0;
    double u2 = (double)(diffstat_rng_next(rng) >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static double lognormal_ms(diffstat_rng *rng, double median_ms)
{
    return median_ms * exp(0.2 * normal(rng));
}

static double leaf(tlog_log *log, diffstat_rng *rng, const run_spec *s, const char *name,
                   double median_ms, double t)
{
    double ms = lognormal_ms(rng, median_ms);
    if (s->slow_row && strcmp(s->slow_row, name) == 0)
        ms *= s->factor;
    begin_at(log, name, t);
    end_at(log, name, t + ms);
    return t + ms;
}

/* One frame: Frame { Update, Render { Draw }, Stream (in about a third of
 * the frames), Present }, about 7 ms. */
static double record_frame(tlog_log *log, diffstat_rng *rng, const run_spec *s, double t)
{
    begin_at(log, "Frame", t);
    t = leaf(log, rng, s, "Update", 2.0, t + 0.1);
    begin_at(log, "Render", t);
    t = leaf(log, rng, s, "Draw", 3.0, t + lognormal_ms(rng, 0.3));
    end_at(log, "Render", t + 0.2);
    t += 0.2;
    if (diffstat_rng_below(rng, 3) == 0)
        t = leaf(log, rng, s, "Stream", 0.8, t);
    t = leaf(log, rng, s, "Present", 1.0, t);
    if (s->extra_row) {
        double ms = s->extra_ms > 0 ? s->extra_ms : 0.5;
        at_ms(t);
        tlog_insert(log, site_named(s->extra_row), s->extra_kind, tlog_now(log),
                    tlog_now(log) + (tlog_ticks)(ms * 1e6));
        t += ms;
    }
    end_at(log, "Frame", t + 0.1);
    return t + 1;
}

static void write_run(const char *path, const run_spec *s)
{
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.stream_path = path;
    tlog_log *log = make_log(&c);
    tlog_thread_name(s->thread ? s->thread : "Main");
    diffstat_rng rng;
    diffstat_rng_seed(&rng, s->seed);
    double t = 0;
    for (int k = 0; k < s->frames; k++)
        t = record_frame(log, &rng, s, t);
    tlog_destroy(log);   /* ends the file */
    assert_int_equal(errors.count, 0);
}

/* ------------------------------------------------------------------------ */
/* Running the command                                                      */
/* ------------------------------------------------------------------------ */

/* Times in ns, to the few ns that rounding the simulated clock costs. */
static void assert_close_ns(double value, double expected)
{
    if (!(fabs(value - expected) <= 4))
        fail_msg("%.17g, expected %.17g", value, expected);
}

typedef struct result {
    int status;
    char *out, *err;
} result;

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

/* `timerlog diff ARGS...`, args ended by NULL. */
static result diff_args(const char *const *args)
{
    char *argv[64] = {"timerlog", "diff"};
    int argc = 2;
    for (; *args && argc < 63; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    FILE *out = tmpfile(), *err = tmpfile();
    assert_non_null(out);
    assert_non_null(err);
    result r;
    r.status = timerlog_main(argc, argv, out, err);
    r.out = read_back(out);
    r.err = read_back(err);
    return r;
}

static result diff(const char *first, ...)
{
    const char *args[64] = {first};
    va_list ap;
    va_start(ap, first);
    for (int n = 1; n < 63 && args[n - 1]; n++)
        args[n] = va_arg(ap, const char *);
    va_end(ap);
    return diff_args(args);
}

/* The first row of the first table: the line after its heading. */
static char *first_row(const char *text)
{
    const char *head = strstr(text, "  impact ");
    assert_non_null(head);
    const char *line = strchr(head, '\n') + 1, *end = strchr(line, '\n');
    return strndup(line, (size_t)(end - line));
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The first row of r's first table ends with `suffix`. */
static void first_row_is(const result *r, const char *suffix)
{
    char *first = first_row(r->out);
    if (!ends_with(first, suffix))
        fail_msg("first row: %s\n%s", first, r->out);
    free(first);
}

/* The line of `text` whose row path is `path`, or NULL. */
static char *row_line(const char *text, const char *path)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, n);
        char want[256];
        snprintf(want, sizeof want, "  %s", path);
        if (ends_with(copy, want))
            return copy;
        free(copy);
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

enum { FRAMES = 200 };

static void planted_slowdown_is_found_and_named_first(void **state)
{
    (void)state;
    const char *base = path_in_dir("base.tlog"), *new = path_in_dir("new.tlog");
    write_run(base, &(run_spec){.seed = 1, .frames = FRAMES});
    write_run(new, &(run_spec){.seed = 2, .frames = FRAMES, .slow_row = "Draw", .factor = 1.1});
    result r = diff(base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SLOWER);
    first_row_is(&r, "  slower  Frame / Render / Draw");
    /* Render holds Draw: slower too (by about 8%), but its own time did not
     * change, so it comes after. Rows of pure noise are not called slower. */
    char *render = row_line(r.out, "Frame / Render");
    assert_non_null(render);
    assert_non_null(strstr(render, "  slower  "));
    free(render);
    static const char *const quiet[] = {"Frame / Update", "Frame / Present", "Frame / Stream"};
    for (size_t k = 0; k < sizeof quiet / sizeof *quiet; k++) {
        char *line = row_line(r.out, quiet[k]);
        assert_non_null(line);
        if (strstr(line, "slower") || strstr(line, "faster"))
            fail_msg("noise called a change: %s", line);
        free(line);
    }
    assert_non_null(strstr(r.out, "\n2 rows slower\n"));
    result_free(&r);

    /* The same in JSON: rows by impact, Draw first, its change near 10%. */
    r = diff("--json", base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SLOWER);
    const char *rows = strstr(r.out, "\"rows\":[");
    assert_non_null(rows);
    assert_ptr_equal(strstr(rows, "{\"path\":"), strstr(rows, "{\"path\":\"Frame / Render / Draw\""));
    const char *change = strstr(rows, "\"change_percent\":");
    assert_non_null(change);
    double percent = strtod(change + strlen("\"change_percent\":"), NULL);
    assert_true(percent > 5 && percent < 15);
    assert_non_null(strstr(r.out, "\"slower\":"));
    result_free(&r);

    /* Above the threshold only: at 20% nothing is slower. */
    r = diff("--threshold", "20%", base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SAME);
    assert_non_null(strstr(r.out, "\nno row slower\n"));
    result_free(&r);
}

static void speedup_is_faster_and_passes(void **state)
{
    (void)state;
    const char *base = path_in_dir("base.tlog"), *new = path_in_dir("new.tlog");
    write_run(base, &(run_spec){.seed = 3, .frames = FRAMES});
    write_run(new, &(run_spec){.seed = 4, .frames = FRAMES, .slow_row = "Update", .factor = 0.85});
    result r = diff(base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SAME);
    first_row_is(&r, "  faster  Frame / Update");
    result_free(&r);
}

/* Runs of one distribution, 200 seeds: the share of them that exit with 1
 * is the false positive rate of the gate. Measured at alpha 0.1 with no
 * threshold, where the test alone decides (slower is one side of a
 * two-sided test, and Holm's method holds the chance of any false call
 * among the rows to alpha: at most 0.1 expected), and with the defaults. */
static void noise_is_not_flagged(void **state)
{
    (void)state;
    enum { SEEDS = 200 };
    int flagged_test_only = 0, flagged_default = 0;
    const char *base = path_in_dir("noise-base.tlog"), *new = path_in_dir("noise-new.tlog");
    for (int s = 0; s < SEEDS; s++) {
        write_run(base, &(run_spec){.seed = 1000 + 2 * (uint64_t)s, .frames = FRAMES});
        write_run(new, &(run_spec){.seed = 1001 + 2 * (uint64_t)s, .frames = FRAMES});
        result r = diff("--alpha", "0.1", "--threshold", "0", "--resamples", "0", base, new,
                        NULL);
        assert_true(r.status == TIMERLOG_DIFF_SAME || r.status == TIMERLOG_DIFF_SLOWER);
        flagged_test_only += r.status == TIMERLOG_DIFF_SLOWER;
        result_free(&r);
        r = diff("--resamples", "100", base, new, NULL);
        assert_true(r.status == TIMERLOG_DIFF_SAME || r.status == TIMERLOG_DIFF_SLOWER);
        flagged_default += r.status == TIMERLOG_DIFF_SLOWER;
        result_free(&r);
    }
    print_message("false positives over %d seeds: %d at alpha 0.1 without threshold, "
                  "%d with the defaults (alpha 0.01, threshold 5%%)\n",
                  SEEDS, flagged_test_only, flagged_default);
    /* alpha plus a margin of about three binomial standard deviations. */
    assert_true(flagged_test_only <= SEEDS * (0.1 + 0.065));
    assert_true(flagged_default <= SEEDS * (0.01 + 0.025));
}

static void rows_of_one_run_only_are_listed(void **state)
{
    (void)state;
    const char *base = path_in_dir("old.tlog"), *new = path_in_dir("renamed.tlog");
    write_run(base, &(run_spec){.seed = 5, .frames = 50, .extra_row = "Old step"});
    write_run(new, &(run_spec){.seed = 6, .frames = 50, .extra_row = "New step"});
    result r = diff(base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SAME);
    const char *only_base = strstr(r.out, "  only in base"), *only_new = strstr(r.out, "  only in new");
    assert_non_null(only_base);
    assert_non_null(only_new);
    assert_true(strstr(only_base, "Frame / Old step") < only_new);
    assert_non_null(strstr(only_new, "Frame / New step"));
    /* Not among the rows compared. */
    char *compared = strndup(r.out, (size_t)(only_base - r.out));
    assert_null(strstr(compared, "step"));
    free(compared);
    result_free(&r);

    r = diff("--csv", base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SAME);
    assert_non_null(strstr(r.out, "\nFrame,Frame / Old step,C,,base,"));
    assert_non_null(strstr(r.out, "\nFrame,Frame / New step,C,,new,"));
    result_free(&r);
}

/* Work done elsewhere (an (E) row) is listed after the rows of the frame's
 * thread, whose self times make up the frame's time, though its own change
 * weighs more: the frame's row, which waited for it, comes first. */
static void work_done_elsewhere_comes_after_the_frame_s_thread(void **state)
{
    (void)state;
    const char *base = path_in_dir("offload-base.tlog"), *new = path_in_dir("offload-new.tlog");
    write_run(base, &(run_spec){.seed = 9, .frames = 100, .extra_row = "Offload",
                                .extra_kind = TLOG_KIND_EXECUTION, .extra_ms = 0.5});
    write_run(new, &(run_spec){.seed = 10, .frames = 100, .extra_row = "Offload",
                               .extra_kind = TLOG_KIND_EXECUTION, .extra_ms = 3.0,
                               .slow_row = "Draw", .factor = 1.1});
    result r = diff(base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SLOWER);
    first_row_is(&r, "  Frame");
    const char *offload = strstr(r.out, "  Frame / (E) Offload\n");
    assert_non_null(offload);
    static const char *const own[] = {"  Frame / Render / Draw\n", "  Frame / Update\n",
                                      "  Frame / Present\n", "  Frame / Render\n"};
    for (size_t k = 0; k < sizeof own / sizeof *own; k++) {
        const char *at = strstr(r.out, own[k]);
        assert_non_null(at);
        if (at > offload)
            fail_msg("%s listed after the (E) row:\n%s", own[k], r.out);
    }
    result_free(&r);
}

/* Rows match by title and kind: an (E) row is not the (C) row of the same
 * title. Frames match by root title, whatever thread ran them. */
static void rows_match_by_kind_not_by_thread(void **state)
{
    (void)state;
    const char *base = path_in_dir("kind-c.tlog"), *new = path_in_dir("kind-e.tlog");
    write_run(base, &(run_spec){.seed = 7, .frames = 30, .extra_row = "Work",
                                .extra_kind = TLOG_KIND_CONTROL, .thread = "Main"});
    write_run(new, &(run_spec){.seed = 8, .frames = 30, .extra_row = "Work",
                               .extra_kind = TLOG_KIND_EXECUTION, .thread = "Render loop"});
    result r = diff(base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SAME);
    assert_non_null(strstr(r.out, "# root \"Frame\": 30 frames in base, 30 in new"));
    const char *only_base = strstr(r.out, "  only in base"), *only_new = strstr(r.out, "  only in new");
    assert_non_null(only_base);
    assert_non_null(only_new);
    assert_non_null(strstr(only_base, "  Frame / Work\n"));
    assert_non_null(strstr(only_new, "  Frame / (E) Work\n"));
    char *update = row_line(r.out, "Frame / Update");
    assert_non_null(update);
    free(update);
    result_free(&r);
}

/* Frames titled `root`: "Step" takes `ms` in frame k when k % every == 0,
 * and is absent from the others. */
static void write_steps_of(const char *path, const char *root, int frames, double ms,
                           int every)
{
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.stream_path = path;
    tlog_log *log = make_log(&c);
    for (int k = 0; k < frames; k++) {
        double t = 10.0 * k;
        begin_at(log, root, t);
        if (k % every == 0) {
            begin_at(log, "Step", t + 1);
            end_at(log, "Step", t + 1 + ms);
        }
        end_at(log, root, t + 9);
    }
    tlog_destroy(log);
    assert_int_equal(errors.count, 0);
}

static void write_steps(const char *path, int frames, double ms, int every)
{
    write_steps_of(path, "Frame", frames, ms, every);
}

static double json_number(const char *json, const char *path, const char *field)
{
    char key[256];
    snprintf(key, sizeof key, "{\"path\":\"%s\"", path);
    const char *row = strstr(json, key);
    assert_non_null(row);
    snprintf(key, sizeof key, "\"%s\":", field);
    const char *at = strstr(row, key);
    assert_non_null(at);
    return strtod(at + strlen(key), NULL);
}

/* Frames of a host row and a worker's row of one title, each with a child
 * "X" (record_twin_titles): the worker's X takes `worker_ms`. */
static void write_twins(const char *path, int frames, double worker_ms)
{
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.stream_path = path;
    tlog_log *log = make_log(&c);
    double t = 0;
    for (int k = 0; k < frames; k++)
        t = record_twin_titles(log, t, 2, worker_ms) + 1;
    tlog_destroy(log);
    assert_int_equal(errors.count, 0);
}

/* Only the worker's X got slower: the CSV and JSON paths, like the text,
 * keep it apart from the host's X by the kinds of their titles. */
static void flat_paths_keep_rows_of_two_kinds_apart(void **state)
{
    (void)state;
    const char *base = path_in_dir("twins-base.tlog"), *new = path_in_dir("twins-new.tlog");
    write_twins(base, 30, 5);
    write_twins(new, 30, 6);
    result r = diff("--csv", base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SLOWER);
    char *host = NULL, *worker = NULL;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "Frame,Frame / W / (E) X,E,,both,", 32) == 0)
            host = line;
        else if (strncmp(line, "Frame,Frame / (E) W / (E) X,E,,both,", 36) == 0)
            worker = line;
    }
    assert_non_null(host);
    assert_non_null(worker);
    assert_true(ends_with(host, ",none"));
    assert_true(ends_with(worker, ",slower"));
    result_free(&r);

    r = diff("--json", base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SLOWER);
    assert_close_ns(json_number(r.out, "Frame / W / (E) X", "new_median_ns"), 2e6);
    assert_close_ns(json_number(r.out, "Frame / (E) W / (E) X", "new_median_ns"), 6e6);
    result_free(&r);
}

/* The k-th frames of a run's files are one sample: their mean. Ranks whose
 * Step takes 2, 2 and 5 ms give samples of 3 ms (pooled, the median would
 * be 2 ms), and 20 frames, not 60. */
static void rank_files_average_frame_by_frame(void **state)
{
    (void)state;
    const char *b0 = path_in_dir("base.0.tlog"), *b1 = path_in_dir("base.1.tlog"),
               *b2 = path_in_dir("base.2.tlog"), *n0 = path_in_dir("new.0.tlog"),
               *n1 = path_in_dir("new.1.tlog"), *n2 = path_in_dir("new.2.tlog");
    write_steps(b0, 20, 2, 1);
    write_steps(b1, 20, 2, 1);
    write_steps(b2, 20, 5, 1);
    write_steps(n0, 20, 2.2, 1);
    write_steps(n1, 20, 2.2, 1);
    write_steps(n2, 20, 5.5, 1);
    result r = diff("--json", b0, b1, b2, "--vs", n0, n1, n2, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SLOWER);
    assert_non_null(strstr(r.out, "\"base_frames\":20,\"new_frames\":20"));
    assert_close_ns(json_number(r.out, "Frame / Step", "base_median_ns"), 3e6);
    assert_close_ns(json_number(r.out, "Frame / Step", "new_median_ns"), 3.3e6);
    assert_non_null(strstr(r.out, "\"verdict\":\"slower\""));
    result_free(&r);
}

/* A frame without the row counts 0: a Step of 4 ms in one frame of four
 * has a mean of 1 ms and a median of 0; its change is then weighed on the
 * mean. */
static void absent_rows_count_as_zero(void **state)
{
    (void)state;
    const char *base = path_in_dir("sparse-base.tlog"), *new = path_in_dir("sparse-new.tlog");
    write_steps(base, 200, 4, 4);
    write_steps(new, 200, 4, 2);   /* twice as often: twice the cost per frame */
    result r = diff("--json", base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SLOWER);
    assert_close_ns(json_number(r.out, "Frame / Step", "base_mean_ns"), 1e6);
    assert_close_ns(json_number(r.out, "Frame / Step", "new_mean_ns"), 2e6);
    assert_close_ns(json_number(r.out, "Frame / Step", "base_median_ns"), 0);
    assert_close_ns(json_number(r.out, "Frame / Step", "change_percent"), 100);
    result_free(&r);
}

/* Runs with no root title in common: their rows are listed, and the status
 * says nothing was compared. */
static void runs_without_a_common_root_are_trouble(void **state)
{
    (void)state;
    const char *base = path_in_dir("frames.tlog"), *new = path_in_dir("loading.tlog");
    write_steps_of(base, "Frame", 10, 2, 1);
    write_steps_of(new, "Loading", 10, 2, 1);
    result r = diff(base, new, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_TROUBLE);
    assert_non_null(strstr(r.err, "no root title is in both runs"));
    assert_non_null(strstr(r.out, "# root \"Frame\": only in base (10 frames)"));
    assert_non_null(strstr(r.out, "# root \"Loading\": only in new (10 frames)"));
    assert_non_null(strstr(r.out, "  Loading / Step\n"));
    result_free(&r);
}

static void output_repeats_for_a_seed(void **state)
{
    (void)state;
    const char *base = path_in_dir("base.tlog"), *new = path_in_dir("new.tlog");
    write_run(base, &(run_spec){.seed = 9, .frames = 60});
    write_run(new, &(run_spec){.seed = 10, .frames = 60, .slow_row = "Present", .factor = 1.2});
    result a = diff("--seed", "5", base, new, NULL), b = diff("--seed", "5", base, new, NULL),
           c = diff("--seed", "6", base, new, NULL);
    assert_string_equal(a.out, b.out);
    assert_true(strcmp(a.out, c.out) != 0);   /* only the intervals differ */
    assert_int_equal(a.status, c.status);
    result_free(&a);
    result_free(&b);
    result_free(&c);
}

static void expect_trouble(result r, const char *path, const char *why)
{
    if (r.status != TIMERLOG_DIFF_TROUBLE || !strstr(r.err, path) || !strstr(r.err, why))
        fail_msg("status %d, expected 2 and a message naming %s and saying \"%s\":\n%s",
                 r.status, path, why, r.err);
    result_free(&r);
}

static void unreadable_files_say_why_and_exit_2(void **state)
{
    (void)state;
    const char *good = path_in_dir("good.tlog");
    write_run(good, &(run_spec){.seed = 11, .frames = 40});
    const char *missing = path_in_dir("missing.tlog");
    expect_trouble(diff(good, missing, NULL), missing, "No such file or directory");
    expect_trouble(diff(dir, good, NULL), dir, "Is a directory");

    const char *text = path_in_dir("notes.txt");
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    fputs("not a stream\n", f);
    fclose(f);
    expect_trouble(diff(good, text, NULL), text, "not a timerlog stream");

    /* Damage in the middle: the frames before it are still compared, and
     * the status says the comparison is not to be trusted. */
    const char *broken = path_in_dir("broken.tlog");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, broken);
    assert_int_equal(system(cmd), 0);
    struct stat st;
    assert_int_equal(stat(broken, &st), 0);
    f = fopen(broken, "r+b");
    assert_non_null(f);
    fseek(f, st.st_size / 2, SEEK_SET);
    for (int k = 0; k < 64; k++)
        fputc(0xa5, f);
    fclose(f);
    result r = diff(good, broken, NULL);
    assert_non_null(strstr(r.out, "# root \"Frame\""));
    expect_trouble(r, broken, "at byte");

    /* An output that cannot be written. */
    char *out = path_in_dir("no/such/dir/out.txt");
    expect_trouble(diff("-o", out, good, good, NULL), out, "No such file or directory");
}

/* -o naming a file of either run is refused before anything is read: the
 * recording stays as it was, however its path is spelt. */
static void output_over_an_input_is_refused(void **state)
{
    (void)state;
    const char *base = path_in_dir("base-run.tlog"), *new = path_in_dir("new-run.tlog");
    write_run(base, &(run_spec){.seed = 13, .frames = 10});
    write_run(new, &(run_spec){.seed = 14, .frames = 10});
    const char *const outs[] = {base, new};
    for (size_t k = 0; k < 2; k++) {
        size_t n;
        char *was = file_bytes(outs[k], &n);
        char spelt[600];
        snprintf(spelt, sizeof spelt, "%s/.%s", dir, outs[k] + strlen(dir));
        expect_trouble(diff("-o", spelt, base, "--vs", new, NULL), outs[k], "names the input");
        assert_file_holds(outs[k], was, n);
    }
}

/* A report written to a file leaves the status the comparison's, every
 * time: the file's state is read before it is closed. */
static void output_to_a_file_keeps_the_status(void **state)
{
    (void)state;
    const char *good = path_in_dir("same.tlog"), *out = path_in_dir("report.txt");
    write_run(good, &(run_spec){.seed = 12, .frames = 40});
    for (int k = 0; k < 20; k++) {
        result r = diff("--resamples", "10", "-o", out, good, good, NULL);
        if (r.status != 0)
            fail_msg("run %d: status %d: %s", k, r.status, r.err);
        result_free(&r);
    }
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char line[256] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_true(line[0] != '\0');
}

static void usage_errors_exit_2_with_the_help(void **state)
{
    (void)state;
    const char *good = path_in_dir("good.tlog");
    write_run(good, &(run_spec){.seed = 12, .frames = 10});
    static const struct {
        const char *args[6], *says;
    } bad[] = {
        {{NULL}, "give two files"},
        {{"a.tlog", NULL}, "give two files"},
        {{"a.tlog", "b.tlog", "c.tlog", NULL}, "--vs"},
        {{"a.tlog", "--vs", NULL}, "--vs needs files on both sides"},
        {{"a", "--vs", "b", "--vs", "c", NULL}, "--vs is given twice"},
        {{"--alpha", "1", "a", "b", NULL}, "--alpha takes"},
        {{"--alpha", "0", "a", "b", NULL}, "--alpha takes"},
        {{"--threshold", "-1%", "a", "b", NULL}, "--threshold takes"},
        {{"--threshold", "five", "a", "b", NULL}, "\"five\""},
        {{"--resamples", "-3", "a", "b", NULL}, "--resamples takes"},
        {{"--seed", NULL}, "--seed takes"},
        {{"--frobnicate", "a", "b", NULL}, "unknown option --frobnicate"},
        {{"--json", "--csv", "a", "b", NULL}, "--json and --csv: give one of them"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        result r = diff_args(bad[k].args);
        if (r.status != TIMERLOG_DIFF_TROUBLE || !strstr(r.err, bad[k].says) ||
            !strstr(r.err, "usage: timerlog diff"))
            fail_msg("case %zu: status %d, said:\n%s", k, r.status, r.err);
        assert_string_equal(r.out, "");
        result_free(&r);
    }
    result r = diff("--help", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: timerlog diff"));
    result_free(&r);
    /* Options take their values: "5%" and "5" are the same threshold. */
    result a = diff("--threshold", "5%", good, good, NULL), b = diff("--threshold", "5", good, good, NULL);
    assert_int_equal(a.status, TIMERLOG_DIFF_SAME);
    assert_string_equal(a.out, b.out);
    result_free(&a);
    result_free(&b);
}

/* Selections work as in dump: --root picks frames, and a selection that
 * leaves a run empty is trouble. Too few frames to tell anything is said. */
static void selection_that_leaves_nothing_is_trouble(void **state)
{
    (void)state;
    const char *good = path_in_dir("good.tlog");
    write_run(good, &(run_spec){.seed = 13, .frames = 10});
    result r = diff("--root", "Frame", good, good, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SAME);
    result_free(&r);
    /* Too few frames for any change to be significant: said, not hidden. */
    const char *few = path_in_dir("few.tlog");
    write_run(few, &(run_spec){.seed = 14, .frames = 3});
    r = diff(few, few, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SAME);
    assert_non_null(strstr(r.err, "with 3 and 3 frames no change can be significant at "
                                  "alpha 0.01 (the smallest p is 0.1; "));
    result_free(&r);
    /* 6 and 6: a complete separation gives p = 2 / 924 alone, but the
     * rows are adjusted together, and the smallest p is weighed by all. */
    const char *six = path_in_dir("six.tlog");
    write_run(six, &(run_spec){.seed = 15, .frames = 6});
    r = diff(six, six, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_SAME);
    assert_non_null(strstr(r.err, "with 6 and 6 frames no change can be significant at "
                                  "alpha 0.01 (the smallest p is 0.0022; "));
    result_free(&r);
    r = diff(good, good, NULL);
    assert_string_equal(r.err, "");
    result_free(&r);
    r = diff("--root", "Loading", good, good, NULL);
    assert_int_equal(r.status, TIMERLOG_DIFF_TROUBLE);
    assert_non_null(strstr(r.err, "the base run holds no frames of the selection"));
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(planted_slowdown_is_found_and_named_first),
        cmocka_unit_test(speedup_is_faster_and_passes),
        cmocka_unit_test(noise_is_not_flagged),
        cmocka_unit_test(rows_of_one_run_only_are_listed),
        cmocka_unit_test(work_done_elsewhere_comes_after_the_frame_s_thread),
        cmocka_unit_test(rows_match_by_kind_not_by_thread),
        cmocka_unit_test(flat_paths_keep_rows_of_two_kinds_apart),
        cmocka_unit_test(rank_files_average_frame_by_frame),
        cmocka_unit_test(absent_rows_count_as_zero),
        cmocka_unit_test(runs_without_a_common_root_are_trouble),
        cmocka_unit_test(output_repeats_for_a_seed),
        cmocka_unit_test(unreadable_files_say_why_and_exit_2),
        cmocka_unit_test(output_to_a_file_keeps_the_status),
        cmocka_unit_test(output_over_an_input_is_refused),
        cmocka_unit_test(usage_errors_exit_2_with_the_help),
        cmocka_unit_test(selection_that_leaves_nothing_is_trouble),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
