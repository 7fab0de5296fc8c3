/*
 * Overhead and throughput of the core, as ratios against the physical floor
 * measured in the same run:
 *  - cost of one scope (begin + end) against two raw reads of the clock the
 *    library uses, on 1, 2 and all cores' worth of threads at once;
 *  - cost of a site above the active level;
 *  - cost of a scope with one subscriber (empty callbacks) against none,
 *    and with scopes at 256 sites in turn against one;
 *  - cost of a scope in a log that forwards to NVTX, with no tool attached;
 *  - cost of an explicit pair (TIMERLOG_BEGIN / TIMERLOG_END: a call site
 *    at each end) against a scope;
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
#include "core.h"

#define BATCH 20000

static int runs = 21;

/* Frames each thread records before its runs: the default log's queue full,
 * so that records land in chunks its oldest frame gave back. */
#define WARMUP_FRAMES 10

static double skipped_ns_per_op(void)
{
    double t0 = now_ns();
    for (int i = 0; i < BATCH; i++) {
        TIMERLOG_SCOPE_L(TLOG_LEVEL_FINE, "above the level");
    }
    return (now_ns() - t0) / BATCH;
}

static void scopes_on_threads(int nthreads)
{
    int n = nthreads * runs;
    double *scope = malloc(sizeof(double) * (size_t)n), *flr = malloc(sizeof(double) * (size_t)n),
           *ratio = malloc(sizeof(double) * (size_t)n), first[BENCH_MAX_THREADS];
    bench_threads(nthreads, runs, BATCH, WARMUP_FRAMES, scope, flr, ratio, first);
    printf("scope begin+end, %2d thread(s): %6.2f ns   floor (2 clock reads): %6.2f ns   "
           "ratio %.2f\n",
           nthreads, median(scope, n), median(flr, n), median(ratio, n));
    /* An earlier frame, resolved, gave its chunks back to the log's pool:
     * this frame's records land in them, not in fresh memory
     * (bench_table's row 2 times fresh memory, in a new process). */
    if (nthreads == 1)
        printf("  first frame of a new thread (records in chunks an earlier frame gave back): "
               "%.2f ns per scope\n", first[0]);
    free(scope);
    free(flr);
    free(ratio);
}

/* Alternates runs without and with one subscriber whose begin and end
 * callbacks do nothing: what being told costs the recording thread. */
static void subscriber_cost(void)
{
    double none[64], one[64], ratio[64], flr[64];
    if (!bench_subscriber(runs, BATCH, none, one, flr))
        return;
    for (int k = 0; k < runs; k++)
        ratio[k] = one[k] / none[k];
    printf("scope with one subscriber (empty callbacks): %.2f ns, with none: %.2f ns, "
           "ratio %.2f   floor %.2f ns\n",
           median(one, runs), median(none, runs), median(ratio, runs), median(flr, runs));
}

/* Sites a frame takes in turn, as a program of many call sites does. */
#define TURN_SITES 256
static const tlog_site *turn_sites[TURN_SITES];

/* One frame of BATCH scopes, each at the next of TURN_SITES sites. */
static double turns_ns_per_op(void)
{
    double t;
    {
        TIMERLOG_SCOPE("bench frame");
        double t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            const tlog_site *site = turn_sites[i % TURN_SITES];
            tlog_begin(site);
            tlog_end(site);
        }
        t = (now_ns() - t0) / BATCH;
    }
    return t;
}

/* A subscriber told of scopes at many sites in turn, against one site:
 * each thread keeps what it needs of every site it reports. */
static void subscriber_sites_cost(void)
{
    for (int i = 0; i < TURN_SITES; i++) {
        char name[32];
        snprintf(name, sizeof name, "bench site %d", i);
        turn_sites[i] = tlog_site_intern(name, __FILE__, "turns", i, TLOG_LEVEL_COARSE);
    }
    tlog_subscription *s = bench_subscribe_empty();
    if (!s)
        return;
    turns_ns_per_op();
    double one[64], many[64], ratio[64];
    for (int k = 0; k < runs; k++) {
        one[k] = bench_scopes_ns(BATCH);
        many[k] = turns_ns_per_op();
        ratio[k] = many[k] / one[k];
    }
    tlog_unsubscribe(s);
    printf("  the same, %d sites in turn: %.2f ns, ratio %.2f to one site (%.2f ns)\n",
           TURN_SITES, median(many, runs), median(ratio, runs), median(one, runs));
}

/* A log that asks for NVTX forwarding beside one that does not: with no
 * tool attached (NVTX_INJECTION64_PATH unset), forwarding should cost
 * nothing. */
static void nvtx_cost(void)
{
    double t_off[64], t_on[64], ratio[64], flr[64];
    uint64_t subscribers;
    bool built;
    const char *clock;
    if (!bench_nvtx(runs, BATCH, t_off, t_on, flr, &subscribers, &built, &clock))
        return;
    for (int k = 0; k < runs; k++)
        ratio[k] = t_on[k] / t_off[k];
    const char *tool = getenv("NVTX_INJECTION64_PATH");
    printf("NVTX forwarding on, %s: %.2f ns, off: %.2f ns, ratio %.2f   floor %.2f ns; "
           "%llu subscriber(s)\n",
           !built ? "built without NVTX" : tool && *tool ? "a tool attached" : "no tool attached",
           median(t_on, runs),
           median(t_off, runs), median(ratio, runs), median(flr, runs),
           (unsigned long long)subscribers);
}

/* One frame holding BATCH explicit pairs: TIMERLOG_BEGIN and TIMERLOG_END
 * are a call site each, of one title. */
static double pairs_ns_per_op(void)
{
    double t;
    {
        TIMERLOG_SCOPE("bench frame");
        double t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            TIMERLOG_BEGIN("bench pair");
            TIMERLOG_END("bench pair");
        }
        t = (now_ns() - t0) / BATCH;
    }
    return t;
}

/* Whether the thread's newest frame has BATCH scopes in its first row: a
 * timed loop really recorded; says what it holds when not. */
static bool recorded_batch(const char *what)
{
    tlog_frame *f = tlog_frame_latest(NULL);
    tlog_node_info info = {.size = sizeof info};
    tlog_node_get_info(tlog_node_first_child(tlog_frame_root(f)), &info);
    tlog_frame_release(f);
    if (info.count == BATCH)
        return true;
    fprintf(stderr, "bench frame holds %llu %s, expected %d\n", (unsigned long long)info.count,
            what, BATCH);
    return false;
}

/* Explicit pairs against scopes, run alternately, and the floor. */
static bool pair_cost(void)
{
    pairs_ns_per_op();
    if (!recorded_batch("pairs"))
        return false;
    double pair[64], scope[64], flr[64], r_floor[64], r_scope[64];
    for (int k = 0; k < runs; k++) {
        flr[k] = bench_floor_ns(NULL, BATCH);
        scope[k] = bench_scopes_ns(BATCH);
        pair[k] = pairs_ns_per_op();
        r_floor[k] = pair[k] / flr[k];
        r_scope[k] = pair[k] / scope[k];
    }
    printf("explicit pair (TIMERLOG_BEGIN / TIMERLOG_END): %.2f ns, ratio %.2f to the floor "
           "(%.2f ns), %.2f to a scope (%.2f ns)\n",
           median(pair, runs), median(r_floor, runs), median(flr, runs), median(r_scope, runs),
           median(scope, runs));
    return true;
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
        bench_scopes_ns(BATCH);
    for (int k = 0; k < runs; k++) {
        pthread_barrier_wait(&named_line);
        a->literal[k] = bench_scopes_ns(BATCH);
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
        literal[k] = bench_scopes_ns(BATCH);
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

static void resolve_and_dump(const char *name, bench_shape shape, size_t n)
{
    bench_resolve r;
    bench_resolve_dump(shape, n, n > 100000 ? 5 : runs, &r);
    printf("%s frame, %7.0f scopes in %7.0f rows: resolve %8.3f ms (%.1f ns/scope)   "
           "dump %8.3f ms   (a log's first frame: both %.3f ms)   memory: records %.1f "
           "B/scope, resolved %.1f B/scope\n",
           name, r.scopes, r.rows, r.resolve_ms, r.resolve_ms * 1e6 / r.scopes, r.dump_ms,
           r.first_total_ms, r.record_bytes, r.tree_bytes);
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
    printf("timerlog %d.%d.%d bench: clock %s, %d core(s), medians of %d runs x %d scopes\n",
           TIMERLOG_VERSION_MAJOR, TIMERLOG_VERSION_MINOR, TIMERLOG_VERSION_PATCH, clock,
           cores, runs, BATCH);
    printf("first tick conversion of the process: %.1f us (no sleep; the rate is "
           "measured over the process's run so far, at least 20 us)\n",
           first_conversion / 1000.0);
    if (resolve_only)
        goto resolve;

    bench_scopes_ns(BATCH);
    if (!recorded_batch("scopes"))
        return 1;

    scopes_on_threads(1);
    scopes_on_threads(2);
    if (cores > 2)
        scopes_on_threads(cores);

    double skipped[64], flr[64];
    for (int k = 0; k < runs; k++) {
        flr[k] = bench_floor_ns(NULL, BATCH);
        skipped[k] = skipped_ns_per_op();
    }
    printf("site above the active level: %.2f ns (floor %.2f ns)\n", median(skipped, runs),
           median(flr, runs));
    subscriber_cost();
    subscriber_sites_cost();
    nvtx_cost();
    if (!pair_cost() || !named_cost())
        return 1;

resolve:
    resolve_and_dump("loop", BENCH_LOOP, 10000);
    resolve_and_dump("loop", BENCH_LOOP, 1000000);
    resolve_and_dump("tree", BENCH_TREE, 10000);
    resolve_and_dump("tree", BENCH_TREE, 100000);
    resolve_and_dump("tree", BENCH_TREE, 1000000);
    return 0;
}
