/*
 * The stream's cost and its memory bound:
 *  1. the cost of a scope (begin + end, frame ends included) with
 *     streaming on, as a ratio to streaming off, in the same run (medians
 *     of runs), with frames back to back (the writer goes on with a run's
 *     frames during the next run without streaming);
 *  2. the same with 1 ms of other work between frames, timing the
 *     recording only (the writer keeps up);
 *  3. 10,000,000 scopes (10,000 frames of 1,000) streamed through a 1 MiB
 *     buffer: resident memory sampled every 500 frames stays flat, and
 *     reading the file back finds every scope;
 *  4. line 1 timed until the file holds each run's frames: the writer's
 *     throughput, which sets the pace of a program that keeps ending
 *     frames back to back, as the stream bounds what waits for it.
 *
 * Usage: bench_stream [runs] [dir]   (default 11 runs, files in /tmp)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <timerlog/timerlog.h>

#include "bench_util.h"
#include "core.h"

#define FRAMES_PER_RUN 200

static tlog_log *make_log(const char *path, size_t buffer)
{
    tlog_log *log = bench_stream_log(path, buffer);
    if (!log)
        exit(1);
    return log;
}

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    if (f)
        fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* gap_ns < 0: frames back to back, timed until the file holds them. */
static void ratio(int runs, const char *dir, double gap_ns, int frames, const char *what)
{
    double *v = calloc((size_t)runs * 3, sizeof *v);
    double *on = v, *off = v + runs, *r = v + 2 * runs;
    if (!v || !(gap_ns < 0 ? bench_stream_written_ratio(runs, frames, dir, on, off, r)
                           : bench_stream_ratio(runs, frames, gap_ns, dir, on, off, r))) {
        fprintf(stderr, "streaming to %s failed\n", dir);
        exit(1);
    }
    printf("scope with streaming on, %s: %.2f ns, off: %.2f ns, ratio %.3f (medians of %d "
           "runs x %d frames of %d scopes)\n",
           what, median(on, runs), median(off, runs), median(r, runs), runs, frames,
           BENCH_STREAM_SCOPES);
    free(v);
}

static void bounded(const char *dir)
{
    enum { FRAMES = 10000, SAMPLE = 500 };
    char path[512];
    snprintf(path, sizeof path, "%s/bench-stream-10M.tlog", dir);
    tlog_log *log = make_log(path, (size_t)1 << 20);
    long lo = 0, hi = 0, first = 0;
    double t0 = now_ns();
    for (int f = 0; f < FRAMES; f += SAMPLE) {
        bench_stream_frames_ns(log, SAMPLE, 0);
        long rss = rss_kib();
        if (f == SAMPLE) {
            first = lo = hi = rss;
        } else if (f > SAMPLE) {
            lo = rss < lo ? rss : lo;
            hi = rss > hi ? rss : hi;
        }
    }
    tlog_stats s = {.size = sizeof s};
    int flushed = tlog_stream_flush(log);
    tlog_get_stats(log, &s);
    double secs = (now_ns() - t0) / 1e9;
    tlog_destroy(log);

    tlog_reader *r;
    uint64_t frames = 0, scopes = 0;
    if (tlog_reader_open(path, &r) == TLOG_OK) {
        tlog_frame *f;
        while (tlog_reader_next(r, &f) == TLOG_OK) {
            tlog_frame_info i = {.size = sizeof i};
            tlog_frame_get_info(f, &i);
            frames++;
            scopes += i.instances;
            tlog_frame_release(f);
        }
    }
    tlog_reader_close(r);
    FILE *fp = fopen(path, "rb");
    long bytes = 0;
    if (fp) {
        fseek(fp, 0, SEEK_END);
        bytes = ftell(fp);
        fclose(fp);
    }
    unlink(path);
    printf("10,000,000 scopes through a 1 MiB buffer: %.2f s; resident memory %ld KiB "
           "after 1,000 frames, %ld-%ld KiB over the rest (growth %ld KiB); %.1f MB "
           "written, %.1f B/scope; read back %llu frames, %llu scopes (%s); "
           "streamed %llu, not streamed %llu%s\n",
           secs, first, lo, hi, hi - first, bytes / 1e6, (double)bytes / 10010000.0,
           (unsigned long long)frames, (unsigned long long)scopes,
           scopes == (uint64_t)FRAMES * (BENCH_STREAM_SCOPES + 1) ? "nothing lost" : "SCOPES LOST",
           (unsigned long long)s.frames_streamed, (unsigned long long)s.frames_not_streamed,
           flushed == TLOG_OK ? "" : " (write error)");
    if (scopes != (uint64_t)FRAMES * (BENCH_STREAM_SCOPES + 1))
        exit(1);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 11;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    if (runs < 1)
        runs = 1;
    ratio(runs, dir, 0, FRAMES_PER_RUN, "frames back to back");
    ratio(runs, dir, 1e6, 50, "1 ms of other work between frames");
    bounded(dir);
    ratio(runs, dir, -1, FRAMES_PER_RUN, "frames back to back until the file holds them");
    return 0;
}
