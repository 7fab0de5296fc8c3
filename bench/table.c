/*
 * The performance table that README.md and doc/guide.md publish, one line a
 * row, each a median of repeated runs; ratios are to the physical floor (two
 * back-to-back raw reads of the library's clock) measured in the same
 * process as the row, unless the row says otherwise:
 *  1. an empty TIMERLOG_SCOPE, warm: after the default log's queue of unread
 *     frames is full, so that records land in chunks its oldest frame gave
 *     back; 1 warm-up frame, then runs of a floor and a frame; beside it, the
 *     least a scope can cost here (bench_bare_scopes_ns: a bare push and
 *     16-byte record written in the bench, no test), on the hardware clock;
 *  2. the same scopes in the first frames of a fresh process (the bench runs
 *     itself again, /proc/self/exe, once per process): 1 warm-up frame and
 *     the runs from the process's start: the first frame's records land on
 *     fresh pages, later frames' in chunks made ready when they begin;
 *  3. a scope with one subscriber whose callbacks do nothing;
 *  4. a scope of a log that forwards to NVTX with no tool attached;
 *  5. a scope with streaming on, frames back to back, as a ratio to the
 *     same frames with streaming off; then the same timed until the file
 *     holds each run's frames (the writer's pace);
 *  6. resolve + dump of a frame of 1,000,000 scopes in 11 rows;
 *  7. resolve + dump of a frame whose 111,111 scopes are rows of their own;
 *  8. memory: record bytes per recorded scope; what a warm resolve
 *     allocates per scope (whether its scratch is reused); record memory a
 *     log still holds after a burst of 16 threads once their frames are
 *     read, against its pool bound;
 *  9. row 1 on 16 threads at once (oversubscribed on fewer cores).
 *
 * Usage: bench_table [runs] [quick]   (default 11 runs; quick: 3 runs and
 *        frames a tenth as big, for CI, not for publishing)
 *        TIMERLOG_CLOCK=monotonic bench_table   measures the fallback clock
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <timerlog/timerlog.h>

#include "alloc_count.h"
#include "bench_util.h"
#include "core.h"

#define MAX_RUNS 64
#define MAX_PROCESSES 16
#define BURST_THREADS 16

typedef struct plan {
    int runs;
    int scopes;           /* per frame, rows 1-4 and 9 */
    int processes;        /* row 2 */
    int stream_frames;    /* row 5, per run */
    size_t loop_scopes;   /* row 6 */
    size_t tree_scopes;   /* row 7 */
    size_t burst_scopes;  /* row 8, per thread */
    size_t resolve_small, resolve_large;   /* row 8 */
    bool quick;
} plan;

static const plan full_plan = {11, 200000, 5, 200, 1000000, 100000, 100000, 10000, 1000000,
                               false};
static const plan quick_plan = {3, 20000, 2, 50, 100000, 10000, 10000, 10000, 100000, true};

static double median_of(const double *v, int n)
{
    double copy[MAX_RUNS * BENCH_MAX_THREADS];
    memcpy(copy, v, sizeof *v * (size_t)n);
    return median(copy, n);
}

static void ratios(const double *num, const double *den, double *out, int n)
{
    for (int k = 0; k < n; k++)
        out[k] = num[k] / den[k];
}

/* ---- 1. warm ---- */

/* Runs of a floor and a frame of `scopes` scopes in the default log, after
 * `warm_frames` frames not timed. */
static void floor_and_frames(int runs, int scopes, int warm_frames, double *scope,
                             double *floor)
{
    for (int k = 0; k < warm_frames; k++)
        bench_scopes_ns(scopes);
    for (int k = 0; k < runs; k++) {
        floor[k] = bench_floor_ns(NULL, scopes);
        scope[k] = bench_scopes_ns(scopes);
    }
}

/* The timed frames really record: the latest holds every scope. */
static bool frames_record(int scopes)
{
    tlog_frame *f = tlog_frame_latest(NULL);
    tlog_node_info info = {.size = sizeof info};
    tlog_node_get_info(tlog_node_first_child(tlog_frame_root(f)), &info);
    tlog_frame_release(f);
    if (info.count == (uint64_t)scopes)
        return true;
    fprintf(stderr, "bench frame holds %llu scopes, expected %d\n",
            (unsigned long long)info.count, scopes);
    return false;
}

/* Runs of a floor and a bare loop (bench_bare_scopes_ns): what a scope
 * that tests nothing costs here, for scale beside row 1. */
static double bare_ratio(const plan *p)
{
    double bare[MAX_RUNS], floor[MAX_RUNS], r[MAX_RUNS];
    bench_bare_scopes_ns(p->scopes);
    for (int k = 0; k < p->runs; k++) {
        floor[k] = bench_floor_ns(NULL, p->scopes);
        bare[k] = bench_bare_scopes_ns(p->scopes);
    }
    ratios(bare, floor, r, p->runs);
    return median_of(r, p->runs);
}

static bool row_warm(const plan *p)
{
    double scope[MAX_RUNS], floor[MAX_RUNS], r[MAX_RUNS];
    floor_and_frames(p->runs, p->scopes, BENCH_QUEUE_FRAMES + 1, scope, floor);
    if (!frames_record(p->scopes))
        return false;
    ratios(scope, floor, r, p->runs);
    printf("1 scope, warm: %.2f ns, floor %.2f ns, ratio %.2f to the floor (after %d frames "
           "that fill the queue, 1 warm-up + %d runs of %d scopes)",
           median_of(scope, p->runs), median_of(floor, p->runs), median_of(r, p->runs),
           BENCH_QUEUE_FRAMES, p->runs, p->scopes);
    if (strcmp(tlog_clock_name(NULL), "monotonic") != 0)
        printf("; a bare push and record with no test, written in the bench: ratio %.2f",
               bare_ratio(p));
    printf("\n");
    return true;
}

/* ---- 2. first frames of a fresh process ---- */

#define FRESH_ARG "--fresh-process"

/* In the fresh process: the frames from its start, one line a run. */
static int fresh_process(int runs, int scopes)
{
    double scope[MAX_RUNS], floor[MAX_RUNS];
    floor_and_frames(runs, scopes, 1, scope, floor);
    for (int k = 0; k < runs; k++)
        printf("%.6f %.6f\n", scope[k], floor[k]);
    return fflush(stdout) == 0 && frames_record(scopes) ? 0 : 1;
}

/* Runs this program again with FRESH_ARG; the medians of its runs. */
static bool run_fresh(const plan *p, double *scope, double *floor, double *ratio)
{
    int fd[2];
    if (pipe(fd) != 0)
        return false;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return false;
    }
    if (pid == 0) {
        char runs[16], scopes[16];
        snprintf(runs, sizeof runs, "%d", p->runs);
        snprintf(scopes, sizeof scopes, "%d", p->scopes);
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        execl("/proc/self/exe", "bench_table", FRESH_ARG, runs, scopes, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *in = fdopen(fd[0], "r");
    double s[MAX_RUNS], f[MAX_RUNS], r[MAX_RUNS];
    int n = 0;
    while (in && n < p->runs && fscanf(in, "%lf %lf", &s[n], &f[n]) == 2)
        n++;
    if (in)
        fclose(in);
    else
        close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (n != p->runs || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return false;
    ratios(s, f, r, n);
    *scope = median(s, n);
    *floor = median(f, n);
    *ratio = median(r, n);
    return true;
}

static bool row_fresh(const plan *p)
{
    double scope[MAX_PROCESSES], floor[MAX_PROCESSES], r[MAX_PROCESSES];
    char each[MAX_PROCESSES * 12] = "";
    for (int i = 0; i < p->processes; i++) {
        if (!run_fresh(p, &scope[i], &floor[i], &r[i])) {
            fprintf(stderr, "the fresh process did not run (%s " FRESH_ARG ")\n",
                    "/proc/self/exe");
            return false;
        }
        size_t at = strlen(each);
        snprintf(each + at, sizeof each - at, "%s%.2f", i ? " " : "", scope[i]);
    }
    printf("2 scope, first frames of a fresh process: %.2f ns, floor %.2f ns, ratio %.2f to "
           "the floor (median over %d processes of each one's median, %s ns; 1 warm-up + %d "
           "runs of %d scopes from the process's start)\n",
           median_of(scope, p->processes), median_of(floor, p->processes),
           median_of(r, p->processes), p->processes, each, p->runs, p->scopes);
    return true;
}

/* ---- 3, 4, 5 ---- */

static bool row_subscriber(const plan *p)
{
    double none[MAX_RUNS], one[MAX_RUNS], floor[MAX_RUNS], r[MAX_RUNS], r_none[MAX_RUNS];
    if (!bench_subscriber(p->runs, p->scopes, none, one, floor))
        return false;
    ratios(one, floor, r, p->runs);
    ratios(one, none, r_none, p->runs);
    printf("3 scope with one subscriber (empty callbacks): %.2f ns, floor %.2f ns, ratio %.2f "
           "to the floor (%.2f to a scope with none, %.2f ns, run alternately)\n",
           median_of(one, p->runs), median_of(floor, p->runs), median_of(r, p->runs),
           median_of(r_none, p->runs), median_of(none, p->runs));
    return true;
}

static bool row_nvtx(const plan *p)
{
    double off[MAX_RUNS], on[MAX_RUNS], floor[MAX_RUNS], r[MAX_RUNS], r_off[MAX_RUNS];
    uint64_t subscribers;
    bool built;
    const char *clock;
    if (!bench_nvtx(p->runs, p->scopes, off, on, floor, &subscribers, &built, &clock))
        return false;
    ratios(on, floor, r, p->runs);
    ratios(on, off, r_off, p->runs);
    const char *tool = getenv("NVTX_INJECTION64_PATH");
    char other_clock[96] = "";
    if (strcmp(clock, tlog_clock_name(NULL)) != 0)
        snprintf(other_clock, sizeof other_clock,
                 " (the %s clock: these logs ignore the environment)", clock);
    printf("4 scope of a log forwarding to NVTX, %s: %.2f ns, floor %.2f ns%s, ratio %.2f to "
           "the floor (%.2f to a log without forwarding, %.2f ns); %llu subscriber(s) "
           "registered\n",
           !built ? "built without NVTX" : tool && *tool ? "a tool attached" : "no tool attached",
           median_of(on, p->runs), median_of(floor, p->runs), other_clock,
           median_of(r, p->runs), median_of(r_off, p->runs), median_of(off, p->runs),
           (unsigned long long)subscribers);
    return true;
}

static bool row_stream(const plan *p)
{
    double on[MAX_RUNS], off[MAX_RUNS], r[MAX_RUNS];
    double won[MAX_RUNS], woff[MAX_RUNS], wr[MAX_RUNS];
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    if (!bench_stream_ratio(p->runs, p->stream_frames, 0, dir, on, off, r) ||
        !bench_stream_written_ratio(p->runs, p->stream_frames, dir, won, woff, wr)) {
        fprintf(stderr, "streaming to %s failed\n", dir);
        return false;
    }
    printf("5 scope with streaming on, frames back to back: %.2f ns, off %.2f ns, ratio %.2f to "
           "streaming off (runs of %d frames of %d scopes, frame ends included, the writer "
           "going on during the runs without streaming); timed until the file holds each run's "
           "frames: %.2f ns, off %.2f ns, ratio %.2f (the writer's pace)\n",
           median_of(on, p->runs), median_of(off, p->runs), median_of(r, p->runs),
           p->stream_frames, BENCH_STREAM_SCOPES, median_of(won, p->runs),
           median_of(woff, p->runs), median_of(wr, p->runs));
    return true;
}

/* ---- 6, 7 ---- */

static bool row_resolve(const plan *p, int row, bench_shape shape, size_t n,
                        bench_resolve *out)
{
    bench_resolve_dump(shape, n, p->runs, out);
    if (out->scopes <= 0)
        return false;
    printf("%d resolve + dump, %.0f scopes in %.0f rows: %.2f M scopes/s, %.1f ns/scope "
           "(resolve %.3f ms, dump %.3f ms; a log's first frame, which makes the "
           "resolver's scratch: %.2f M scopes/s)\n",
           row, out->scopes, out->rows, out->scopes / out->total_ms / 1e3,
           out->total_ms * 1e6 / out->scopes, out->resolve_ms, out->dump_ms,
           out->scopes / out->first_total_ms / 1e3);
    return true;
}

/* ---- 8. memory ---- */

#ifdef BENCH_COUNT_ALLOC
typedef struct resolve_allocs {
    double bytes[3];      /* per scope, by the first, second and third resolve */
    uint64_t blocks[3];
    double kept;          /* per scope, tlog_frame_info.tree_bytes */
} resolve_allocs;

/* What each of three resolves (tlog_frame_pop) of frames of one shape in
 * one log allocates: the first makes the scratch and the frame's arrays,
 * later ones find the scratch and the released frame's arrays kept unless
 * they are over the bound the log keeps. */
static bool count_resolves(bench_shape shape, size_t n, resolve_allocs *out)
{
    tlog_config c = {.size = sizeof c, .thread_budget = (n + n / 5 + 64) * 32,
                     .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = 1};
    tlog_log *log;
    if (tlog_create(&c, &log) != TLOG_OK)
        return false;
    tlog_frame_info fi = {.size = sizeof fi};
    for (int k = 0; k < 3; k++) {
        bench_record(log, shape, n);
        uint64_t bytes;
        bench_alloc_count_start();
        tlog_frame *f = tlog_frame_pop(log);
        bench_alloc_count_stop(&bytes, &out->blocks[k]);
        tlog_frame_get_info(f, &fi);
        tlog_frame_release(f);
        out->bytes[k] = fi.instances ? (double)bytes / (double)fi.instances : 0;
    }
    tlog_destroy(log);
    out->kept = fi.instances ? (double)fi.tree_bytes / (double)fi.instances : 0;
    return fi.instances > 0;
}

static void print_resolve_allocations(const plan *p)
{
    size_t n[2] = {p->resolve_small, p->resolve_large};
    for (int i = 0; i < 2; i++) {
        resolve_allocs a;
        if (!count_resolves(BENCH_LOOP, n[i], &a)) {
            printf("  resolve allocations: not measured (no log)\n");
            return;
        }
        printf("  resolve allocations, frames of %zu scopes: the first %.1f B/scope in %llu "
               "blocks, the second %.1f B/scope in %llu, the third %.1f B/scope in %llu; the "
               "frame keeps %.1f B/scope\n",
               n[i], a.bytes[0], (unsigned long long)a.blocks[0], a.bytes[1],
               (unsigned long long)a.blocks[1], a.bytes[2], (unsigned long long)a.blocks[2],
               a.kept);
    }
}
#else
static void print_resolve_allocations(const plan *p)
{
    (void)p;
    printf("  resolve allocations: not measured in this build (a sanitizer's allocator, or "
           "not glibc's, takes the place where the bench counts)\n");
}
#endif

typedef struct burst {
    tlog_log *log;
    size_t scopes;
    pthread_barrier_t recorded, read;
} burst;

/* A frame, then alive until the frames are read: frames of threads that
 * have exited are kept only while the queue has room for them. */
static void *burst_thread(void *arg)
{
    static const tlog_site frame = {"Burst frame", __FILE__, "burst_thread", 1, 1};
    static const tlog_site scope = {"Burst scope", __FILE__, "burst_thread", 2, 1};
    burst *b = arg;
    tlog_log_begin(b->log, &frame);
    for (size_t i = 0; i < b->scopes; i++) {
        tlog_log_begin(b->log, &scope);
        tlog_log_end(b->log, &scope);
    }
    tlog_log_end(b->log, &frame);
    pthread_barrier_wait(&b->recorded);
    pthread_barrier_wait(&b->read);
    return NULL;
}

/* Record memory the log holds with the burst's frames unread, and once
 * they are read and the threads gone. */
static bool burst_memory(const plan *p, size_t pool, uint64_t *unread, uint64_t *left)
{
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .pool_bytes = pool,
                     .thread_budget = (p->burst_scopes + p->burst_scopes / 5 + 64) * 32};
    burst b = {.scopes = p->burst_scopes};
    if (tlog_create(&c, &b.log) != TLOG_OK)
        return false;
    pthread_barrier_init(&b.recorded, NULL, BURST_THREADS + 1);
    pthread_barrier_init(&b.read, NULL, BURST_THREADS + 1);
    pthread_t t[BURST_THREADS];
    for (int i = 0; i < BURST_THREADS; i++)
        pthread_create(&t[i], NULL, burst_thread, &b);
    pthread_barrier_wait(&b.recorded);
    tlog_stats s = {.size = sizeof s};
    tlog_get_stats(b.log, &s);
    *unread = s.record_bytes;
    int frames = 0;
    for (tlog_frame *f; (f = tlog_frame_pop(b.log)) != NULL; frames++)
        tlog_frame_release(f);
    pthread_barrier_wait(&b.read);
    for (int i = 0; i < BURST_THREADS; i++)
        pthread_join(t[i], NULL);
    tlog_get_stats(b.log, &s);
    *left = s.record_bytes;
    tlog_destroy(b.log);
    pthread_barrier_destroy(&b.recorded);
    pthread_barrier_destroy(&b.read);
    if (frames != BURST_THREADS)
        fprintf(stderr, "the burst left %d frames, expected %d\n", frames, BURST_THREADS);
    return frames == BURST_THREADS;
}

static bool row_memory(const plan *p, const bench_resolve *loop)
{
    const size_t pool = (size_t)16 << 20;
    uint64_t unread, left;
    if (!burst_memory(p, pool, &unread, &left))
        return false;
    printf("8 memory: %.1f B of records per recorded scope (row 6's frame, tlog_stats)\n",
           loop->record_bytes);
    print_resolve_allocations(p);
    printf("  %d threads, a frame of %zu scopes each, then the frames read: the log holds "
           "%.1f MiB of record memory, its pool bound %.1f MiB (%.1f MiB while the frames "
           "were unread)\n",
           BURST_THREADS, p->burst_scopes, (double)left / (1 << 20), (double)pool / (1 << 20),
           (double)unread / (1 << 20));
    return true;
}

/* ---- 9. threads at once ---- */

static void row_threads(const plan *p, int cores)
{
    enum { N = 16 };
    static double scope[N * MAX_RUNS], floor[N * MAX_RUNS], r[N * MAX_RUNS];
    bench_threads(N, p->runs, p->scopes, BENCH_QUEUE_FRAMES + 1, scope, floor, r, NULL);
    int n = N * p->runs;
    char cores_said[64];
    if (cores < N)
        snprintf(cores_said, sizeof cores_said, "on %d core(s): oversubscribed, ", cores);
    else
        snprintf(cores_said, sizeof cores_said, "on %d cores, ", cores);
    printf("9 scope, warm, %d threads at once %s%.2f ns, floor %.2f ns, ratio %.2f to the "
           "floor (medians of %d threads x %d runs of %d scopes)\n",
           N, cores_said, median_of(scope, n), median_of(floor, n), median_of(r, n), N,
           p->runs, p->scopes);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], FRESH_ARG) == 0) {
        int runs = atoi(argv[2]), scopes = atoi(argv[3]);
        return runs >= 1 && runs <= MAX_RUNS && scopes >= 1 ? fresh_process(runs, scopes) : 2;
    }
    plan p = full_plan;
    int runs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "quick") == 0)
            p = quick_plan;
        else
            runs = atoi(argv[i]);
    }
    if (runs >= 1 && runs <= MAX_RUNS)
        p.runs = runs;
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    const char *clock = tlog_clock_name(NULL);
    printf("timerlog %d.%d.%d bench_table%s: clock %s, %d core(s); medians of %d runs; "
           "floor: two back-to-back reads of the %s clock, in the row's process\n",
           TIMERLOG_VERSION_MAJOR, TIMERLOG_VERSION_MINOR, TIMERLOG_VERSION_PATCH,
           p.quick ? " quick (not for publishing)" : "", clock, cores, p.runs, clock);
    bench_resolve loop, tree;
    if (!row_warm(&p) || !row_fresh(&p) || !row_subscriber(&p) || !row_nvtx(&p) ||
        !row_stream(&p) || !row_resolve(&p, 6, BENCH_LOOP, p.loop_scopes, &loop) ||
        !row_resolve(&p, 7, BENCH_TREE, p.tree_scopes, &tree) || !row_memory(&p, &loop))
        return 1;
    row_threads(&p, cores);
    return 0;
}
