/*
 * The cost of keeping statistics across frames, beside the cost of the
 * frame itself, for frames of 10, 1,000 and 100,000 rows (every scope its
 * own row: the worst case for statistics, which work per row):
 *  - "record+resolve": recording a frame on the hardware clock and taking
 *    it resolved (tlog_frame_pop), with statistics off;
 *  - "add": tlog_summary_add of such frames (a few recorded ones in turn,
 *    each with its own timings) to a summary that has seen their rows (the
 *    steady state of a frame loop);
 *  - "log on/off": the first measure with TLOG_CONFIG_STATS on against
 *    off, run alternately: what an application pays per frame, lock and
 *    frame reference included;
 *  - two floors, measured in runs of their own beside a record+resolve and
 *    taking turns with "add" (in memory as far from the caches): "one
 *    line a row", the least that
 *    keeping anything per row that every frame updates costs (a value a
 *    row read from a packed array, one 64-byte line of the row's own read
 *    and written); and "the add's memory", the lines the add reads and
 *    writes with no work besides (a node-sized record's first line read
 *    from the frame, the row's line and one scattered line, as a
 *    histogram's, read and written).
 * Prints ns per frame and what each adds to record+resolve in percent (the
 * target for statistics is at most 10%), and the add against its memory;
 * every figure is the median of repeated runs, each of many frames (fewer
 * for bigger frames). The first line of a size is the steady state, from
 * the 257th frame of a log and a summary on (or later, where the runs
 * before it took more frames); the second, the same measures over the
 * runs before that, from the second run of frames on: at 100,000 rows
 * (sixteen frames a run) the first frames of a log, while histograms still
 * widen to the spread of their rows' timings. A summary counts frames that
 * large in parts, a part after each frame (summary.c: counting later), so
 * every frame of a run pays alike. At 100,000 rows a fourth line times the
 * add of frames of two shapes in turn, which are counted at once: what a
 * frame that large costs when it is not like the one before.
 *
 * Usage: bench_stats [runs]   (default 11)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerlog/timerlog.h>

#include "bench_util.h"

static int runs = 11;
static const tlog_site *root_site;
static const tlog_site *sites[400];

/* A frame of 1 + parents + parents * children rows. */
typedef struct shape {
    int parents, children;
    int frames;   /* per run */
} shape;

/* Frames tlog_summary_add takes in turn. */
enum { DISTINCT = 4 };

static void record(tlog_log *log, const shape *sh)
{
    tlog_log_begin(log, root_site);
    for (int p = 0; p < sh->parents; p++) {
        tlog_log_begin(log, sites[p]);
        for (int c = 0; c < sh->children; c++) {
            tlog_log_begin(log, sites[c]);
            tlog_log_end(log, sites[c]);
        }
        tlog_log_end(log, sites[p]);
    }
    tlog_log_end(log, root_site);
}

static tlog_log *make_log(bool stats)
{
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = 2,
                     .thread_budget = 16u << 20};
    if (stats)
        c.flags |= TLOG_CONFIG_STATS;
    tlog_log *log = NULL;
    if (tlog_create(&c, &log) != TLOG_OK) {
        fprintf(stderr, "no log\n");
        exit(1);
    }
    return log;
}

/* ns per frame to record a frame and take it resolved. */
static double record_and_resolve(tlog_log *log, const shape *sh)
{
    double t0 = now_ns();
    for (int k = 0; k < sh->frames; k++) {
        record(log, sh);
        tlog_frame_release(tlog_frame_pop(log));
    }
    return (now_ns() - t0) / sh->frames;
}

/* ns per frame to add resolved frames to a summary that knows their rows. */
static double add_cost(tlog_summary *s, tlog_frame *const *f, const shape *sh)
{
    double t0 = now_ns();
    for (int k = 0; k < sh->frames; k++)
        if (tlog_summary_add(s, f[k % DISTINCT]) != TLOG_OK) {
            fprintf(stderr, "tlog_summary_add failed\n");
            exit(1);
        }
    return (now_ns() - t0) / sh->frames;
}

/* A row's state in the floors: one line, a sum and counts. */
typedef struct floor_line {
    _Alignas(64) uint64_t sum;
    uint64_t count[7];
} floor_line;

/* A frame's figures as the floors read them: in "one line a row" a value
 * a row, packed; in "the add's memory" a value a node-sized record. */
enum { NODE_WORDS = 16 };   /* a resolved frame's node: two 64-byte lines */

typedef struct floors {
    size_t rows;                /* of the frames measured; at most cap */
    size_t cap;
    floor_line *lines;          /* by row */
    floor_line *scattered;      /* by perm[row]: a histogram's line */
    uint32_t *perm;
    uint64_t *packed[DISTINCT]; /* rows values each */
    uint64_t *nodes[DISTINCT];  /* rows records of NODE_WORDS each */
} floors;

static void *bench_alloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "no memory\n");
        exit(1);
    }
    memset(p, 0, n);
    return p;
}

static floors floors_make(size_t rows)
{
    floors fl = {.rows = rows,
                 .cap = rows,
                 .lines = bench_alloc(rows * sizeof(floor_line)),
                 .scattered = bench_alloc(rows * sizeof(floor_line)),
                 .perm = bench_alloc(rows * sizeof(uint32_t))};
    for (int k = 0; k < DISTINCT; k++) {
        fl.packed[k] = bench_alloc(rows * sizeof(uint64_t));
        fl.nodes[k] = bench_alloc(rows * NODE_WORDS * sizeof(uint64_t));
        for (size_t i = 0; i < rows; i++) {
            uint64_t ns = 20 + (i * 7 + (size_t)k * 3) % 29;   /* as empty scopes */
            fl.packed[k][i] = ns;
            fl.nodes[k][i * NODE_WORDS] = ns;
        }
    }
    return fl;
}

/* The floors measure frames of `rows` rows: their scattered lines are
 * those of `rows` rows, in an order of their own. */
static void floors_for(floors *fl, size_t rows)
{
    fl->rows = rows < fl->cap ? rows : fl->cap;
    for (size_t i = 0; i < fl->rows; i++)
        fl->perm[i] = (uint32_t)i;
    srand(1);
    for (size_t i = fl->rows - 1; i > 0; i--) {
        size_t j = (size_t)rand() % (i + 1);
        uint32_t t = fl->perm[i];
        fl->perm[i] = fl->perm[j];
        fl->perm[j] = t;
    }
}

static void floors_free(floors *fl)
{
    free(fl->lines);
    free(fl->scattered);
    free(fl->perm);
    for (int k = 0; k < DISTINCT; k++) {
        free(fl->packed[k]);
        free(fl->nodes[k]);
    }
}

static inline void floor_count(floor_line *l, uint64_t v)
{
    l->sum += v;
    l->count[v % 7]++;
}

/* ns per frame of "one line a row", over as many frames as add_cost. */
static double one_line_cost(floors *fl, const shape *sh)
{
    double t0 = now_ns();
    for (int k = 0; k < sh->frames; k++) {
        const uint64_t *v = fl->packed[k % DISTINCT];
        for (size_t i = 0; i < fl->rows; i++)
            floor_count(&fl->lines[i], v[i]);
    }
    return (now_ns() - t0) / sh->frames;
}

/* ns per frame of "the add's memory": for each row, its node's first line
 * read, its line and a scattered line read and written (asked for ahead,
 * as the add asks for them). */
static double add_memory_cost(floors *fl, const shape *sh)
{
    enum { AHEAD = 16 };
    double t0 = now_ns();
    for (int k = 0; k < sh->frames; k++) {
        const uint64_t *node = fl->nodes[k % DISTINCT];
        for (size_t i = 0; i < fl->rows; i++) {
            if (i + AHEAD < fl->rows)
                __builtin_prefetch(&fl->scattered[fl->perm[i + AHEAD]]);
            uint64_t v = node[i * NODE_WORDS];
            floor_count(&fl->lines[i], v);
            floor_count(&fl->scattered[fl->perm[i]], v);
        }
    }
    return (now_ns() - t0) / sh->frames;
}

/* Frames as large as those counted later (4,096 rows or more), but of two
 * shapes in turn (one more parent and its children every other frame):
 * each is then counted at once, the add's worst case at that size. Prints
 * the add against recording + resolving the frame of `sh`. */
enum { LATER_FROM_ROWS = 4096 };

static void measure_two_shapes(tlog_log *plain, tlog_frame *const *f, const shape *sh)
{
    shape other = *sh;
    other.parents++;
    tlog_frame *g[DISTINCT];
    for (int k = 0; k < DISTINCT; k++) {
        if (k % 2 == 0) {
            g[k] = f[k];
            continue;
        }
        record(plain, &other);
        g[k] = tlog_frame_pop(plain);
    }
    tlog_summary *s = NULL;
    tlog_summary_create(NULL, &s);
    for (int k = 0; k < DISTINCT; k++)   /* the rows of both shapes */
        tlog_summary_add(s, g[k]);
    double ns[64], ratio[64];
    for (int k = 0; k < runs; k++) {
        double off = record_and_resolve(plain, sh);
        ns[k] = add_cost(s, g, sh);
        ratio[k] = ns[k] / off;
    }
    printf("             frames of two shapes in turn, each counted at once: add %.0f ns/frame: "
           "+%.1f%%\n",
           median(ns, runs), 100 * median(ratio, runs));
    for (int k = 1; k < DISTINCT; k += 2)
        tlog_frame_release(g[k]);
    tlog_summary_destroy(s);
}

/* Made once, for the largest frame, before any log: memory of its own
 * (mapped apart from the heap), which the logs' allocations never meet. */
static floors the_floors;

/* Frames a log and a summary have seen before their steady state is
 * measured: their histograms have by then widened to what the timings
 * spread over, which the first few dozen frames of 100,000 rows still
 * do. */
enum { STEADY_FROM = 256 };

/* One round of the three measures of a shape: record+resolve with
 * statistics off, the add, and the log with statistics on against off. */
typedef struct round_figures {
    double base[64], add[64], ratio_add[64], ratio_log[64];
} round_figures;

static void measure_rounds(tlog_log *plain, tlog_log *with, tlog_summary *s,
                           tlog_frame *const *f, const shape *sh, round_figures *out)
{
    for (int k = 0; k < runs; k++) {
        double off = record_and_resolve(plain, sh);
        double on = record_and_resolve(with, sh);
        out->add[k] = add_cost(s, f, sh);
        out->base[k] = off;
        out->ratio_add[k] = out->add[k] / off;
        out->ratio_log[k] = on / off;
    }
}

static void measure(const shape *sh)
{
    double ratio_line[64], ratio_mem[64], add_mem[64];
    round_figures first, steady;
    floors *fl = &the_floors;
    tlog_log *plain = make_log(false), *with = make_log(true);
    tlog_summary *s = NULL;
    tlog_summary_create(NULL, &s);
    /* Warm up both logs: thread state, chunks, the statistics' rows. */
    record_and_resolve(plain, sh);
    record_and_resolve(with, sh);
    tlog_frame *f[DISTINCT];
    for (int k = 0; k < DISTINCT; k++) {
        record(plain, sh);
        f[k] = tlog_frame_pop(plain);
        tlog_summary_add(s, f[k]);
    }
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f[0], &fi);
    /* The first frames of a log and a summary, then their steady state. */
    measure_rounds(plain, with, s, f, sh, &first);
    const int first_end = sh->frames * (runs + 1);   /* the warm-up run, then these */
    int seen = first_end;
    for (; seen < STEADY_FROM; seen += sh->frames) {
        record_and_resolve(with, sh);
        add_cost(s, f, sh);
    }
    measure_rounds(plain, with, s, f, sh, &steady);
    tlog_summary_info si = {.size = sizeof si};
    tlog_summary_get_info(s, &si);
    double ra = median(steady.ratio_add, runs), rl = median(steady.ratio_log, runs);
    printf("%7zu rows: record+resolve %11.0f ns/frame | add %10.0f ns/frame: +%.1f%% | "
           "log on/off %.3f: +%.1f%% | summary %.1f MiB (from frame %d)\n",
           fi.nodes, median(steady.base, runs), median(steady.add, runs), 100 * ra, rl,
           100 * (rl - 1), (double)si.bytes / (1 << 20), seen + 1);
    double first_add = median(first.ratio_add, runs), first_log = median(first.ratio_log, runs);
    printf("             the runs before, frames %d to %d of a log and summary: "
           "add +%.1f%% | log on/off %.3f: +%.1f%%\n",
           sh->frames + 1, first_end, 100 * first_add, first_log,
           100 * (first_log - 1));
    /* The floors in runs of their own, which leave the runs above as they
     * were: their memory would push the statistics' out of the caches. */
    floors_for(fl, fi.nodes);
    one_line_cost(fl, sh);
    add_memory_cost(fl, sh);
    for (int k = 0; k < runs; k++) {
        double off = record_and_resolve(plain, sh);
        /* The add and the floors in turns, so that none is always first
         * after the frames recorded (whose memory pushes theirs out). */
        double t[3];
        for (int j = 0; j < 3; j++) {
            int which = (j + k) % 3;
            t[which] = which == 0   ? add_cost(s, f, sh)
                       : which == 1 ? one_line_cost(fl, sh)
                                    : add_memory_cost(fl, sh);
        }
        ratio_line[k] = t[1] / off;
        ratio_mem[k] = t[2] / off;
        add_mem[k] = t[0] / t[2];
    }
    printf("             floors: one line a row +%.1f%% | the add's memory (a node line, two "
           "lines a row) +%.1f%%, the add %.2f of it\n",
           100 * median(ratio_line, runs), 100 * median(ratio_mem, runs),
           median(add_mem, runs));
    if (fi.nodes >= LATER_FROM_ROWS)
        measure_two_shapes(plain, f, sh);
    for (int k = 0; k < DISTINCT; k++)
        tlog_frame_release(f[k]);
    tlog_summary_destroy(s);
    tlog_destroy(plain);
    tlog_destroy(with);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        runs = atoi(argv[1]);
    if (runs < 1 || runs > 64)
        runs = 11;
    root_site = tlog_site_intern("Frame", __FILE__, "main", __LINE__, TLOG_LEVEL_COARSE);
    for (int i = 0; i < 400; i++) {
        char name[32];
        snprintf(name, sizeof name, "Row %d", i);
        sites[i] = tlog_site_intern(name, __FILE__, "main", i, TLOG_LEVEL_COARSE);
    }
    printf("timerlog %d.%d.%d statistics bench: clock %s, medians of %d runs; what keeping "
           "statistics adds to record+resolve (statistics off), target at most +10%%\n",
           TIMERLOG_VERSION_MAJOR, TIMERLOG_VERSION_MINOR, TIMERLOG_VERSION_PATCH,
           tlog_clock_name(NULL), runs);
    const shape shapes[] = {{9, 0, 20000}, {27, 36, 400}, {369, 270, 16}};
    the_floors = floors_make(1 + 369 + 369 * 270);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        measure(&shapes[i]);
    floors_free(&the_floors);
    return 0;
}
