/* The measurements bench/core.h describes. */
#include "core.h"

#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "clock_now.h"

/* ---- the floor ---- */

static inline uint64_t monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One loop per clock, so that the loop reads nothing but the clock. */
#define FLOOR_LOOP(read, pairs, sink)        \
    for (int i = 0; i < (pairs); i++) {     \
        uint64_t a = read();                \
        uint64_t b = read();                \
        (sink) += b - a;                    \
    }

double bench_floor_ns(tlog_log *log, int pairs)
{
    bool monotonic = strcmp(tlog_clock_name(log), "monotonic") == 0;
    uint64_t sink = 0;
    double t0 = now_ns();
    if (monotonic) {
        FLOOR_LOOP(monotonic_now, pairs, sink);
    } else {
        FLOOR_LOOP(tlog_clock_now_, pairs, sink);
    }
    double t = (now_ns() - t0) / pairs;
    __asm__ volatile("" : : "r"(sink));
    return t;
}

/* ---- the least a scope can do ---- */

typedef struct bare_open {
    const void *site;
    uint64_t start;
} bare_open;

typedef struct bare_state {
    bare_open *top, *stack;
    uint64_t *wr;
    uint64_t base;
} bare_state;

static _Thread_local bare_state bare;

static __attribute__((noinline)) void bare_begin(const void *site)
{
    bare_open *o = bare.top++;
    o->site = site;
    o->start = tlog_clock_now_();
}

static __attribute__((noinline)) void bare_end(const void *site)
{
    uint64_t now = tlog_clock_now_();
    bare_open *o = --bare.top;
    uint64_t *w = bare.wr;
    bare.wr = w + 2;
    w[0] = (uint64_t)(uintptr_t)site | (uint64_t)(o - bare.stack) << 48;
    w[1] = (o->start - bare.base) | (now - o->start) << 32;
}

double bench_bare_scopes_ns(int scopes)
{
    static const char site[] = "bare scope";
    bare_open stack[4];
    uint64_t *recs = malloc((size_t)scopes * 2 * sizeof *recs);
    if (!recs)
        return 0;
    memset(recs, 0, (size_t)scopes * 2 * sizeof *recs);   /* its pages are mapped */
    bare = (bare_state){stack, stack, recs, tlog_clock_now_()};
    double t0 = now_ns();
    for (int i = 0; i < scopes; i++) {
        bare_begin(site);
        bare_end(site);
    }
    double t = (now_ns() - t0) / scopes;
    free(recs);
    return t;
}

/* ---- scopes in the default log ---- */

double bench_scopes_ns(int scopes)
{
    double t;
    {
        TIMERLOG_SCOPE("bench frame");
        double t0 = now_ns();
        for (int i = 0; i < scopes; i++) {
            TIMERLOG_SCOPE("bench scope");
        }
        t = (now_ns() - t0) / scopes;
    }
    return t;
}

typedef struct thread_run {
    int runs, scopes, warm_frames;
    pthread_barrier_t *start_line;
    double first;
    double *scope, *floor, *ratio;   /* `runs` each */
} thread_run;

static void *measure_thread(void *arg)
{
    thread_run *r = arg;
    r->first = bench_scopes_ns(r->scopes);
    for (int k = 1; k < r->warm_frames; k++)
        bench_scopes_ns(r->scopes);
    for (int k = 0; k < r->runs; k++) {
        pthread_barrier_wait(r->start_line);
        r->floor[k] = bench_floor_ns(NULL, r->scopes);
        r->scope[k] = bench_scopes_ns(r->scopes);
        r->ratio[k] = r->scope[k] / r->floor[k];
    }
    return NULL;
}

void bench_threads(int nthreads, int runs, int scopes, int warm_frames, double *scope,
                   double *floor, double *ratio, double *first)
{
    pthread_t t[BENCH_MAX_THREADS];
    thread_run r[BENCH_MAX_THREADS];
    pthread_barrier_t start_line;
    if (nthreads > BENCH_MAX_THREADS)
        nthreads = BENCH_MAX_THREADS;
    pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++) {
        r[i] = (thread_run){runs, scopes, warm_frames, &start_line, 0, scope + i * runs,
                            floor + i * runs, ratio + i * runs};
        pthread_create(&t[i], NULL, measure_thread, &r[i]);
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        if (first)
            first[i] = r[i].first;
    }
    pthread_barrier_destroy(&start_line);
}

static void empty_callback(void *user, const tlog_scope_event *event)
{
    (void)user;
    __asm__ volatile("" : : "r"(event) : "memory");
}

tlog_subscription *bench_subscribe_empty(void)
{
    tlog_subscriber sub = {.size = sizeof sub, .scope_begin = empty_callback,
                           .scope_end = empty_callback};
    tlog_subscription *s;
    return tlog_subscribe(NULL, &sub, &s) == TLOG_OK ? s : NULL;
}

bool bench_subscriber(int runs, int scopes, double *none, double *one, double *floor)
{
    for (int k = 0; k < runs; k++) {
        floor[k] = bench_floor_ns(NULL, scopes);
        none[k] = bench_scopes_ns(scopes);
        tlog_subscription *s = bench_subscribe_empty();
        if (!s)
            return false;
        one[k] = bench_scopes_ns(scopes);
        tlog_unsubscribe(s);
    }
    return true;
}

/* ---- scopes of a log of the bench's own ---- */

static double log_scopes_ns(tlog_log *log, int scopes)
{
    static const tlog_site frame = {"bench frame", __FILE__, "log_scopes_ns", 1, 1};
    static const tlog_site scope = {"bench scope", __FILE__, "log_scopes_ns", 2, 1};
    tlog_log_begin(log, &frame);
    double t0 = now_ns();
    for (int i = 0; i < scopes; i++) {
        tlog_log_begin(log, &scope);
        tlog_log_end(log, &scope);
    }
    double t = (now_ns() - t0) / scopes;
    tlog_log_end(log, &frame);
    tlog_frame_release(tlog_frame_pop(log));
    return t;
}

/* Notes that NVTX forwarding was refused: a build without NVTX. */
static void note_refusal(void *user, const tlog_error *e)
{
    if (e->code == TLOG_ENODEVICE)
        *(bool *)user = false;
}

/* With no tool attached (NVTX_INJECTION64_PATH unset), forwarding should
 * cost nothing: the forwarder subscribes nothing. */
bool bench_nvtx(int runs, int scopes, double *off, double *on, double *floor,
                uint64_t *subscribers, bool *built, const char **clock)
{
    *built = true;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .on_error = note_refusal, .error_user = built};
    tlog_log *plain, *forwarding;
    if (tlog_create(&c, &plain) != TLOG_OK)
        return false;
    c.flags |= TLOG_CONFIG_NVTX;
    if (tlog_create(&c, &forwarding) != TLOG_OK) {
        tlog_destroy(plain);
        return false;
    }
    tlog_stats st = {.size = sizeof st};
    tlog_get_stats(forwarding, &st);
    *subscribers = st.subscribers;
    *clock = tlog_clock_name(forwarding);
    for (int k = 0; k < runs; k++) {
        floor[k] = bench_floor_ns(forwarding, scopes);
        if (k % 2) {   /* in turn first: the first of a pair runs colder */
            off[k] = log_scopes_ns(plain, scopes);
            on[k] = log_scopes_ns(forwarding, scopes);
        } else {
            on[k] = log_scopes_ns(forwarding, scopes);
            off[k] = log_scopes_ns(plain, scopes);
        }
    }
    tlog_destroy(forwarding);
    tlog_destroy(plain);
    return true;
}

/* ---- streaming ---- */

static const tlog_site stream_frame = {"Frame", __FILE__, "bench_stream", 1, 1};
static const tlog_site stream_scope = {"Scope", __FILE__, "bench_stream", 2, 1};

tlog_log *bench_stream_log(const char *path, size_t buffer)
{
    /* The same frame queue either way, so that record memory is reused the
     * same way: the difference is the stream alone. */
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .stream_path = path,
                     .stream_buffer = buffer, .max_frames = 64};
    tlog_log *log = NULL;
    return tlog_create(&c, &log) == TLOG_OK ? log : NULL;
}

static void other_work(double ns)
{
    double until = now_ns() + ns;
    while (now_ns() < until)
        ;
}

double bench_stream_frames_ns(tlog_log *log, int frames, double gap_ns)
{
    double spent = 0;
    for (int f = 0; f < frames; f++) {
        double t0 = now_ns();
        tlog_log_begin(log, &stream_frame);
        for (int i = 0; i < BENCH_STREAM_SCOPES; i++) {
            tlog_log_begin(log, &stream_scope);
            tlog_log_end(log, &stream_scope);
        }
        tlog_log_end(log, &stream_frame);
        spent += now_ns() - t0;
        if (gap_ns > 0)
            other_work(gap_ns);
    }
    return spent / ((double)frames * (BENCH_STREAM_SCOPES + 1));
}

/* ns per scope of `frames` frames back to back in `log`, until the stream
 * holds them; NaN if the stream could not be written. */
static double stream_written_ns(tlog_log *log, int frames)
{
    double t0 = now_ns();
    bench_stream_frames_ns(log, frames, 0);
    if (tlog_stream_flush(log) != TLOG_OK)
        return NAN;
    return (now_ns() - t0) / ((double)frames * (BENCH_STREAM_SCOPES + 1));
}

static bool stream_runs(int runs, int frames, double gap_ns, bool written, const char *dir,
                        double *on, double *off, double *ratio)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bench-stream-ratio.tlog", dir);
    tlog_log *plain = bench_stream_log(NULL, 0), *streaming = bench_stream_log(path, 0);
    bool ok = plain && streaming;
    if (ok) {
        bench_stream_frames_ns(plain, 20, 0);
        bench_stream_frames_ns(streaming, 20, 0);
        ok = tlog_stream_flush(streaming) == TLOG_OK;   /* the first run starts as the rest */
        for (int i = 0; i < runs && ok; i++) {
            off[i] = bench_stream_frames_ns(plain, frames, gap_ns);
            on[i] = written ? stream_written_ns(streaming, frames)
                            : bench_stream_frames_ns(streaming, frames, gap_ns);
            ratio[i] = on[i] / off[i];
            ok = !isnan(on[i]);
        }
        ok = ok && tlog_stream_flush(streaming) == TLOG_OK;
    }
    tlog_destroy(plain);
    tlog_destroy(streaming);
    unlink(path);
    return ok;
}

bool bench_stream_ratio(int runs, int frames, double gap_ns, const char *dir, double *on,
                        double *off, double *ratio)
{
    return stream_runs(runs, frames, gap_ns, false, dir, on, off, ratio);
}

bool bench_stream_written_ratio(int runs, int frames, const char *dir, double *on,
                                double *off, double *ratio)
{
    return stream_runs(runs, frames, 0, true, dir, on, off, ratio);
}

/* ---- resolve and dump ---- */

/* Sites titled `prefix` then 0, 1, ... n - 1, made once per call. */
static void intern_numbered(const tlog_site **sites, int n, const char *prefix,
                            const char *func, int line)
{
    for (int k = 0; k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "%s%d", prefix, k);
        sites[k] = tlog_site_intern(name, __FILE__, func, line, 1);
    }
}

/* Steps of one "Step" with nine "Kernel" children, the shape of a solver
 * loop (rows merge: 11 rows in all). */
static void record_loop(tlog_log *log, size_t n)
{
    static const tlog_site frame = {"Frame", __FILE__, "record_loop", 1, 1};
    static const tlog_site step = {"Step", __FILE__, "record_loop", 2, 1};
    static const tlog_site *kernels[9];
    intern_numbered(kernels, 9, "Kernel ", "record_loop", 3);
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

/* Siblings have distinct titles, so every scope is a row of its own (the
 * worst case for resolving and dumping). */
static void record_subtree(tlog_log *log, const tlog_site *const *digits, int depth)
{
    for (int k = 0; k < 10; k++) {
        tlog_log_begin(log, digits[k]);
        if (depth > 1)
            record_subtree(log, digits, depth - 1);
        tlog_log_end(log, digits[k]);
    }
}

static void record_tree(tlog_log *log, size_t n)
{
    static const tlog_site frame = {"Frame", __FILE__, "record_tree", 1, 1};
    static const tlog_site *digits[10];
    intern_numbered(digits, 10, "", "record_tree", 2);
    int depth = 0;
    for (size_t total = 1, level = 1; total < n; depth++)
        total += (level *= 10);
    tlog_log_begin(log, &frame);
    record_subtree(log, digits, depth);
    tlog_log_end(log, &frame);
}

void bench_record(tlog_log *log, bench_shape shape, size_t n)
{
    if (shape == BENCH_TREE)
        record_tree(log, n);
    else
        record_loop(log, n);
}

/* One frame of `shape` recorded in `log`, resolved and dumped. */
typedef struct resolve_sample {
    double resolve_ms, dump_ms, total_ms, record_bytes, tree_bytes, scopes, rows;
} resolve_sample;

static bool resolve_once(tlog_log *log, bench_shape shape, size_t n, FILE *devnull,
                         resolve_sample *out)
{
    bench_record(log, shape, n);
    tlog_stats s = {.size = sizeof s};
    tlog_get_stats(log, &s);
    double t0 = now_ns();
    tlog_frame *f = tlog_frame_latest(log);
    double t1 = now_ns();
    if (!f)
        return false;
    tlog_dump_frame(f, devnull, NULL);
    double t2 = now_ns();
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    *out = (resolve_sample){(t1 - t0) / 1e6,
                            (t2 - t1) / 1e6,
                            (t2 - t0) / 1e6,
                            (double)s.record_bytes / (double)fi.instances,
                            (double)fi.tree_bytes / (double)fi.instances,
                            (double)fi.instances,
                            (double)fi.nodes};
    tlog_frame_release(f);
    return fi.instances > 0;
}

void bench_resolve_dump(bench_shape shape, size_t n, int runs, bench_resolve *out)
{
    double *v = calloc((size_t)runs * 6, sizeof *v);
    double *resolve = v, *dump = v + runs, *total = v + 2 * runs, *rec = v + 3 * runs,
           *tree = v + 4 * runs, *first = v + 5 * runs;
    FILE *devnull = fopen("/dev/null", "w");
    *out = (bench_resolve){0};
    int k = 0;
    for (; k < runs && v && devnull; k++) {
        tlog_config c = {.size = sizeof c, .thread_budget = (n + n / 5 + 64) * 32,
                         .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = 1};
        tlog_log *log;
        if (tlog_create(&c, &log) != TLOG_OK)
            break;
        resolve_sample one, two;
        bool ok = resolve_once(log, shape, n, devnull, &one) &&
                  resolve_once(log, shape, n, devnull, &two);
        tlog_destroy(log);
        if (!ok)
            break;
        out->scopes = two.scopes;
        out->rows = two.rows;
        resolve[k] = two.resolve_ms;
        dump[k] = two.dump_ms;
        total[k] = two.total_ms;
        rec[k] = two.record_bytes;
        tree[k] = two.tree_bytes;
        first[k] = one.total_ms;
    }
    if (devnull)
        fclose(devnull);
    if (k > 0) {
        out->resolve_ms = median(resolve, k);
        out->dump_ms = median(dump, k);
        out->total_ms = median(total, k);
        out->record_bytes = median(rec, k);
        out->tree_bytes = median(tree, k);
        out->first_total_ms = median(first, k);
    }
    free(v);
}
