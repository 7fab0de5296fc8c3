/*
 * Overhead and throughput of the core, as ratios against the physical floor
 * measured in the same run:
 *  - cost of one scope (begin + end) against two raw reads of the clock the
 *    library uses, on 1, 2 and all cores' worth of threads at once;
 *  - cost of a site above the active level;
 *  - cost of a scope with one subscriber (empty callbacks) against none;
 *  - cost of a scope in a log that forwards to NVTX, with no tool attached;
 *  - cost of a scope of a run-time name (TIMERLOG_SCOPE_NAMED) against a
 *    literal site: one name, names in turn, and one call site shared by
 *    threads with a name each;
 *  - memory per recorded scope (record chunks held) and per resolved scope;
 *  - time to resolve and to dump frames of 10,000 to 1,000,000 scopes.
 * Every figure is the median of repeated runs.
 *
 * Usage: bench_overhead [runs] [resolve]   (default 21 runs; `resolve`: only
 *        the resolve and dump figures)
 *        TIMERLOG_CLOCK=monotonic bench_overhead   measures the fallback clock
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <timerlog/timerlog.h>

#include "bench_util.h"
#include "clock_now.h"

#define BATCH 20000

static int runs = 21;


/* The floor: two back-to-back reads of the clock the library uses. */
static bool floor_is_monotonic;

static inline uint64_t raw_clock(void)
{
    if (floor_is_monotonic) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    return tlog_clock_now_();
}

static double floor_ns_per_op(void)
{
    uint64_t sink = 0;
    double t0 = now_ns();
    for (int i = 0; i < BATCH; i++) {
        uint64_t a = raw_clock();
        uint64_t b = raw_clock();
        sink += b - a;
    }
    double t = (now_ns() - t0) / BATCH;
    __asm__ volatile("" : : "r"(sink));
    return t;
}

/* One frame holding BATCH empty scopes; the frame's own begin and end are
 * outside the timed loop. */
static double scope_ns_per_op(void)
{
    double t;
    {
        TIMERLOG_SCOPE("bench frame");
        double t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            TIMERLOG_SCOPE("bench scope");
        }
        t = (now_ns() - t0) / BATCH;
    }
    return t;
}

static double skipped_ns_per_op(void)
{
    double t0 = now_ns();
    for (int i = 0; i < BATCH; i++) {
        TIMERLOG_SCOPE_L(TLOG_LEVEL_FINE, "above the level");
    }
    return (now_ns() - t0) / BATCH;
}

typedef struct thread_result {
    double cold;
    double scope[64], floor[64], ratio[64];
} thread_result;

/* Frames the default log keeps: until that many have passed, each new frame
 * writes into fresh (page-faulting) memory instead of recycled chunks. */
#define WARMUP_FRAMES 10

static pthread_barrier_t start_line;

static void *measure_thread(void *arg)
{
    thread_result *r = arg;
    r->cold = scope_ns_per_op();
    for (int k = 1; k < WARMUP_FRAMES; k++)
        scope_ns_per_op();
    for (int k = 0; k < runs; k++) {
        pthread_barrier_wait(&start_line);
        r->floor[k] = floor_ns_per_op();
        r->scope[k] = scope_ns_per_op();
        r->ratio[k] = r->scope[k] / r->floor[k];
    }
    return NULL;
}

static void scopes_on_threads(int nthreads)
{
    pthread_t t[64];
    thread_result *res = calloc((size_t)nthreads, sizeof *res);
    pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, measure_thread, &res[i]);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start_line);
    int n = nthreads * runs;
    double *scope = malloc(sizeof(double) * (size_t)n), *flr = malloc(sizeof(double) * (size_t)n),
           *ratio = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < nthreads; i++)
        for (int k = 0; k < runs; k++) {
            scope[i * runs + k] = res[i].scope[k];
            flr[i * runs + k] = res[i].floor[k];
            ratio[i * runs + k] = res[i].ratio[k];
        }
    printf("scope begin+end, %2d thread(s): %6.2f ns   floor (2 clock reads): %6.2f ns   "
           "ratio %.2f\n",
           nthreads, median(scope, n), median(flr, n), median(ratio, n));
    if (nthreads == 1)
        printf("  first frame of a new thread (cold memory): %.2f ns per scope\n", res[0].cold);
    free(scope);
    free(flr);
    free(ratio);
    free(res);
}

static void empty_callback(void *user, const tlog_scope_event *event)
{
    (void)user;
    __asm__ volatile("" : : "r"(event) : "memory");
}

/* Alternates runs without and with one subscriber whose begin and end
 * callbacks do nothing: what being told costs the recording thread. */
static void subscriber_cost(void)
{
    double none[64], one[64], ratio[64], flr[64];
    tlog_subscriber sub = {.size = sizeof sub, .scope_begin = empty_callback,
                           .scope_end = empty_callback};
    for (int k = 0; k < runs; k++) {
        flr[k] = floor_ns_per_op();
        none[k] = scope_ns_per_op();
        tlog_subscription *s;
        if (tlog_subscribe(NULL, &sub, &s) != TLOG_OK)
            return;
        one[k] = scope_ns_per_op();
        tlog_unsubscribe(s);
        ratio[k] = one[k] / none[k];
    }
    printf("scope with one subscriber (empty callbacks): %.2f ns, with none: %.2f ns, "
           "ratio %.2f   floor %.2f ns\n",
           median(one, runs), median(none, runs), median(ratio, runs), median(flr, runs));
}

static double log_scope_ns_per_op(tlog_log *log)
{
    static const tlog_site frame = {"bench frame", __FILE__, "log_scope_ns_per_op", 1, 1};
    static const tlog_site scope = {"bench scope", __FILE__, "log_scope_ns_per_op", 2, 1};
    tlog_log_begin(log, &frame);
    double t0 = now_ns();
    for (int i = 0; i < BATCH; i++) {
        tlog_log_begin(log, &scope);
        tlog_log_end(log, &scope);
    }
    double t = (now_ns() - t0) / BATCH;
    tlog_log_end(log, &frame);
    tlog_frame_release(tlog_frame_pop(log));
    return t;
}

static void quiet(void *user, const tlog_error *e)
{
    (void)user;
    (void)e;
}

/* A log that asks for NVTX forwarding beside one that does not, both
 * through tlog_log_begin/end: with no tool attached (NVTX_INJECTION64_PATH
 * unset), forwarding should cost nothing. */
static void nvtx_cost(void)
{
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .on_error = quiet};
    tlog_log *off, *on;
    if (tlog_create(&c, &off) != TLOG_OK)
        return;
    c.flags |= TLOG_CONFIG_NVTX;
    if (tlog_create(&c, &on) != TLOG_OK) {
        tlog_destroy(off);
        return;
    }
    tlog_stats st = {.size = sizeof st};
    tlog_get_stats(on, &st);
    double t_off[64], t_on[64], ratio[64], flr[64];
    for (int k = 0; k < runs; k++) {
        flr[k] = floor_ns_per_op();
        if (k % 2) {   /* in turn first: the first of a pair runs colder */
            t_off[k] = log_scope_ns_per_op(off);
            t_on[k] = log_scope_ns_per_op(on);
        } else {
            t_on[k] = log_scope_ns_per_op(on);
            t_off[k] = log_scope_ns_per_op(off);
        }
        ratio[k] = t_on[k] / t_off[k];
    }
    const char *tool = getenv("NVTX_INJECTION64_PATH");
    printf("NVTX forwarding on, %s: %.2f ns, off: %.2f ns, ratio %.2f   floor %.2f ns; "
           "%llu subscriber(s)\n",
           tool && *tool ? "a tool attached" : "no tool attached", median(t_on, runs),
           median(t_off, runs), median(ratio, runs), median(flr, runs),
           (unsigned long long)st.subscribers);
    tlog_destroy(on);
    tlog_destroy(off);
}

/* Names made at run time, as a renderer or a solver makes kernel names. */
#define NAMES 8
static char run_names[NAMES][32];

/* One frame holding BATCH scopes from one TIMERLOG_SCOPE_NAMED call site;
 * scope i takes name first + i % n (n = 1: the name is always the last one
 * the thread gave the call site; n > 1: it never is). */
static double named_ns_per_op(int first, int n)
{
    double t;
    {
        TIMERLOG_SCOPE("bench frame");
        double t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            TIMERLOG_SCOPE_NAMED(run_names[first + i % n]);
        }
        t = (now_ns() - t0) / BATCH;
    }
    return t;
}

/* Two threads alternate runs of literal scopes and of one shared
 * TIMERLOG_SCOPE_NAMED call site, each with a name of its own, at the same
 * time: what one call site named differently by threads costs. */
static pthread_barrier_t named_line;

typedef struct named_arg {
    int index;
    double named[64], literal[64], ratio[64];
} named_arg;

static void *named_shared_thread(void *arg)
{
    named_arg *a = arg;
    for (int k = 1; k < WARMUP_FRAMES; k++)
        scope_ns_per_op();
    for (int k = 0; k < runs; k++) {
        pthread_barrier_wait(&named_line);
        a->literal[k] = scope_ns_per_op();
        pthread_barrier_wait(&named_line);
        a->named[k] = named_ns_per_op(a->index, 1);
        a->ratio[k] = a->named[k] / a->literal[k];
    }
    return NULL;
}

static bool named_cost(void)
{
    for (int k = 0; k < NAMES; k++)
        snprintf(run_names[k], sizeof run_names[k], "filter kernel %d", k);
    /* The timed loop really records: one row per name. */
    named_ns_per_op(0, NAMES);
    tlog_frame *f = tlog_frame_latest(NULL);
    int rows = 0;
    uint64_t scopes = 0;
    for (const tlog_node *c = tlog_node_first_child(tlog_frame_root(f)); c;
         c = tlog_node_next_sibling(c), rows++) {
        tlog_node_info info = {.size = sizeof info};
        tlog_node_get_info(c, &info);
        scopes += info.count;
    }
    tlog_frame_release(f);
    if (rows != NAMES || scopes != BATCH) {
        fprintf(stderr, "bench frame holds %llu scopes in %d rows, expected %d in %d\n",
                (unsigned long long)scopes, rows, BATCH, NAMES);
        return false;
    }
    double literal[64], one[64], many[64], r_one[64], r_many[64];
    for (int k = 0; k < runs; k++) {
        literal[k] = scope_ns_per_op();
        one[k] = named_ns_per_op(0, 1);
        many[k] = named_ns_per_op(0, NAMES);
        r_one[k] = one[k] / literal[k];
        r_many[k] = many[k] / literal[k];
    }
    printf("scope of a run-time name (TIMERLOG_SCOPE_NAMED): one name %.2f ns (ratio %.2f), "
           "%d names in turn %.2f ns (ratio %.2f), literal site %.2f ns\n",
           median(one, runs), median(r_one, runs), NAMES, median(many, runs),
           median(r_many, runs), median(literal, runs));

    pthread_t t[2];
    named_arg args[2];
    pthread_barrier_init(&named_line, NULL, 2);
    for (int i = 0; i < 2; i++) {
        args[i].index = i;
        pthread_create(&t[i], NULL, named_shared_thread, &args[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&named_line);
    double named[128], lit[128], ratio[128];
    int n = 0;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < runs; k++, n++) {
            named[n] = args[i].named[k];
            lit[n] = args[i].literal[k];
            ratio[n] = args[i].ratio[k];
        }
    printf("  one call site, 2 threads with a name each: %.2f ns (ratio %.2f to %.2f ns)\n",
           median(named, n), median(ratio, n), median(lit, n));
    tlog_names_info info = {.size = sizeof info};
    tlog_names_get_info(&info);
    printf("  names in the table: %llu, %llu bytes\n", (unsigned long long)info.names,
           (unsigned long long)info.bytes);
    return true;
}

/* A frame of `n` scopes: steps of one "Step" with nine "Kernel" children,
 * the shape of a solver loop (rows merge: 11 rows in all). */
static void record_frame(tlog_log *log, size_t n)
{
    static const tlog_site frame = {"Frame", __FILE__, "record_frame", 1, 1};
    static const tlog_site step = {"Step", __FILE__, "record_frame", 2, 1};
    static const tlog_site *kernels[9];
    for (int k = 0; k < 9; k++) {
        char name[32];
        snprintf(name, sizeof name, "Kernel %d", k);
        kernels[k] = tlog_site_intern(name, __FILE__, "record_frame", 3, 1);
    }
    tlog_log_begin(log, &frame);
    for (size_t i = 1; i + 10 <= n; i += 10) {
        tlog_log_begin(log, &step);
        for (int k = 0; k < 9; k++) {
            tlog_log_begin(log, kernels[k]);
            tlog_log_end(log, kernels[k]);
        }
        tlog_log_end(log, &step);
    }
    tlog_log_end(log, &frame);
}

/* A full ten-way tree: siblings have distinct titles, so every scope is a
 * row of its own (the worst case for resolving and dumping). */
static void record_tree(tlog_log *log, const tlog_site *const *digits, int depth)
{
    for (int k = 0; k < 10; k++) {
        tlog_log_begin(log, digits[k]);
        if (depth > 1)
            record_tree(log, digits, depth - 1);
        tlog_log_end(log, digits[k]);
    }
}

static void record_wide_frame(tlog_log *log, size_t n)
{
    static const tlog_site frame = {"Frame", __FILE__, "record_wide_frame", 1, 1};
    static const tlog_site *digits[10];
    for (int k = 0; k < 10; k++) {
        char name[8];
        snprintf(name, sizeof name, "%d", k);
        digits[k] = tlog_site_intern(name, __FILE__, "record_wide_frame", 2, 1);
    }
    int depth = 0;
    for (size_t total = 1, level = 1; total < n; depth++)
        total += (level *= 10);
    tlog_log_begin(log, &frame);
    record_tree(log, digits, depth);
    tlog_log_end(log, &frame);
}

typedef void (*record_fn)(tlog_log *log, size_t n);

static void resolve_and_dump(const char *shape, record_fn record, size_t n)
{
    double resolve[64], dump[64], rec_bytes[64], tree_bytes[64], scopes = 0, rows = 0;
    int reps = n > 100000 ? 5 : runs;
    FILE *devnull = fopen("/dev/null", "w");
    for (int k = 0; k < reps; k++) {
        tlog_config c = {.size = sizeof c, .thread_budget = (n + n / 5 + 64) * 32,
                         .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = 1};
        tlog_log *log;
        tlog_create(&c, &log);
        record(log, n);
        tlog_stats s = {.size = sizeof s};
        tlog_get_stats(log, &s);
        double t0 = now_ns();
        tlog_frame *f = tlog_frame_latest(log);
        double t1 = now_ns();
        tlog_dump_frame(f, devnull, NULL);
        double t2 = now_ns();
        tlog_frame_info fi = {.size = sizeof fi};
        tlog_frame_get_info(f, &fi);
        scopes = (double)fi.instances;
        rows = (double)fi.nodes;
        resolve[k] = (t1 - t0) / 1e6;
        dump[k] = (t2 - t1) / 1e6;
        rec_bytes[k] = (double)s.record_bytes / (double)fi.instances;
        tree_bytes[k] = (double)fi.tree_bytes / (double)fi.instances;
        tlog_frame_release(f);
        tlog_destroy(log);
    }
    fclose(devnull);
    printf("%s frame, %7.0f scopes in %7.0f rows: resolve %8.3f ms (%.1f ns/scope)   "
           "dump %8.3f ms   memory: records %.1f B/scope, resolved %.1f B/scope\n",
           shape, scopes, rows, median(resolve, reps), median(resolve, reps) * 1e6 / scopes,
           median(dump, reps), median(rec_bytes, reps), median(tree_bytes, reps));
}

int main(int argc, char **argv)
{
    /* The environment applies: TIMERLOG_CLOCK=monotonic measures that clock.
     * Set before anything makes the default log, which would refuse it. */
    tlog_config c = {.size = sizeof c, .level = TLOG_LEVEL_COARSE};
    if (tlog_default_config(&c) != TLOG_OK) {
        fprintf(stderr, "the default log's config was refused\n");
        return 1;
    }
    /* First of all: the process's first conversion of ticks, which waits for
     * no baseline (a spin only in the process's first 20 us). */
    double first0 = now_ns();
    tlog_ticks_to_ns(NULL, tlog_now(NULL));
    double first_conversion = now_ns() - first0;
    if (argc > 1)
        runs = atoi(argv[1]);
    if (runs < 1 || runs > 64)
        runs = 21;
    bool resolve_only = argc > 2 && strcmp(argv[2], "resolve") == 0;
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1 || cores > 64)
        cores = 1;
    const char *clock = tlog_clock_name(NULL);
    floor_is_monotonic = strcmp(clock, "monotonic") == 0;
    printf("timerlog %d.%d.%d bench: clock %s, %d core(s), medians of %d runs x %d scopes\n",
           TIMERLOG_VERSION_MAJOR, TIMERLOG_VERSION_MINOR, TIMERLOG_VERSION_PATCH, clock,
           cores, runs, BATCH);
    printf("first tick conversion of the process: %.1f us (no sleep; the rate is "
           "measured over the process's run so far, at least 20 us)\n",
           first_conversion / 1000.0);
    if (resolve_only)
        goto resolve;

    /* The timed loop really records: check the frame it leaves. */
    scope_ns_per_op();
    tlog_frame *f = tlog_frame_latest(NULL);
    tlog_node_info info = {.size = sizeof info};
    tlog_node_get_info(tlog_node_first_child(tlog_frame_root(f)), &info);
    tlog_frame_release(f);
    if (info.count != BATCH) {
        fprintf(stderr, "bench frame holds %llu scopes, expected %d\n",
                (unsigned long long)info.count, BATCH);
        return 1;
    }

    scopes_on_threads(1);
    scopes_on_threads(2);
    if (cores > 2)
        scopes_on_threads(cores);

    double skipped[64], flr[64];
    for (int k = 0; k < runs; k++) {
        flr[k] = floor_ns_per_op();
        skipped[k] = skipped_ns_per_op();
    }
    printf("site above the active level: %.2f ns (floor %.2f ns)\n", median(skipped, runs),
           median(flr, runs));
    subscriber_cost();
    nvtx_cost();
    if (!named_cost())
        return 1;

resolve:
    resolve_and_dump("loop", record_frame, 10000);
    resolve_and_dump("loop", record_frame, 1000000);
    resolve_and_dump("tree", record_wide_frame, 10000);
    resolve_and_dump("tree", record_wide_frame, 100000);
    resolve_and_dump("tree", record_wide_frame, 1000000);
    return 0;
}
