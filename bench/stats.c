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
 *    frame reference included.
 * Prints ns per frame and what statistics add to record+resolve, by either
 * measure, in percent (the target is at most 10%); every figure is the
 * median of repeated runs, each of many frames (fewer for bigger frames).
 *
 * Usage: bench_stats [runs]   (default 11)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

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

static void measure(const shape *sh)
{
    double base[64], add[64], ratio_add[64], ratio_log[64];
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
    for (int k = 0; k < runs; k++) {
        double off = record_and_resolve(plain, sh);
        double on = record_and_resolve(with, sh);
        add[k] = add_cost(s, f, sh);
        base[k] = off;
        ratio_add[k] = add[k] / off;
        ratio_log[k] = on / off;
    }
    tlog_summary_info si = {.size = sizeof si};
    tlog_summary_get_info(s, &si);
    double ra = median(ratio_add, runs), rl = median(ratio_log, runs);
    printf("%7zu rows: record+resolve %11.0f ns/frame | add %10.0f ns/frame: +%.1f%% | "
           "log on/off %.3f: +%.1f%% | summary %.1f MiB\n",
           fi.nodes, median(base, runs), median(add, runs), 100 * ra, rl, 100 * (rl - 1),
           (double)si.bytes / (1 << 20));
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
    const shape shapes[] = {{9, 0, 20000}, {27, 36, 400}, {369, 270, 4}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        measure(&shapes[i]);
    return 0;
}
