/*
 * Measurements that more than one bench prints: the physical floor, empty
 * scopes in the default log (on one thread or several at once, with a
 * subscriber), scopes of a log that forwards to NVTX or streams, and the
 * resolve and dump of large frames. Each fills one sample per run (the
 * caller takes medians, bench_util.h, and prints), so that a figure printed
 * by two benches comes from one piece of code.
 */
#ifndef TIMERLOG_BENCH_CORE_H
#define TIMERLOG_BENCH_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <timerlog/timerlog.h>

/* Threads bench_threads starts at most. */
#define BENCH_MAX_THREADS 64

/* Frames the default log keeps unread (its max_frames), plus one: after
 * that many, each new frame's records land in chunks the oldest frame gave
 * back, not in fresh memory. */
#define BENCH_QUEUE_FRAMES 9

/* The physical floor: ns for two back-to-back raw reads of the clock `log`
 * reads (NULL: the default log; the TSC, or clock_gettime with the
 * monotonic clock), the mean over `pairs` pairs. */
double bench_floor_ns(tlog_log *log, int pairs);

/* ns per scope of one frame in the default log holding `scopes` empty
 * TIMERLOG_SCOPE scopes; the frame's own begin and end are not timed. */
double bench_scopes_ns(int scopes);

/* The least a scope can cost in this process: ns per scope of a loop of
 * bare begins and ends written in the bench, each a call that pushes the
 * site and reads the clock, or reads it and writes a 16-byte record, with
 * no test of any kind. Not the library: a reference beside the floor. */
double bench_bare_scopes_ns(int scopes);

/* `nthreads` threads at once (at most BENCH_MAX_THREADS), each recording
 * `warm_frames` frames of `scopes` scopes, then `runs` runs started together
 * at a barrier, each a floor and a frame. Fills nthreads * runs samples of
 * scope (ns per scope), floor and their ratio, and, if `first` is not NULL,
 * the ns per scope of each thread's first frame. */
void bench_threads(int nthreads, int runs, int scopes, int warm_frames, double *scope,
                   double *floor, double *ratio, double *first);

/* Subscribes to the default log callbacks that do nothing; NULL when
 * refused. */
tlog_subscription *bench_subscribe_empty(void);
/* Runs alternately without and with one subscriber of the default log whose
 * callbacks do nothing: `runs` samples of each, and of the floor. False if
 * the subscription was refused. */
bool bench_subscriber(int runs, int scopes, double *none, double *one, double *floor);

/* A log that forwards to NVTX beside one that does not, scopes through
 * tlog_log_begin/end, in turn first: `runs` samples of each and of the
 * floor of their clock, *clock (these logs ignore the environment);
 * *subscribers: the forwarding log's tlog_stats.subscribers; *built: false
 * where the library, built without NVTX, refused to forward. */
bool bench_nvtx(int runs, int scopes, double *off, double *on, double *floor,
                uint64_t *subscribers, bool *built, const char **clock);

/* Scopes per frame of bench_stream_ratio. */
#define BENCH_STREAM_SCOPES 1000

/* A log that streams to `path` (NULL: none) through a buffer of `buffer`
 * bytes (0: the default), keeping 64 frames; NULL if it was refused. */
tlog_log *bench_stream_log(const char *path, size_t buffer);

/* ns per scope (frame ends included) of `frames` frames of
 * BENCH_STREAM_SCOPES scopes in `log`, with `gap_ns` of other work after
 * each frame, not timed. */
double bench_stream_frames_ns(tlog_log *log, int frames, double gap_ns);

/* ns per scope (frame ends included) of `frames` frames of
 * BENCH_STREAM_SCOPES scopes in a log that streams to a file in `dir` and in
 * one that does not, alternately, with `gap_ns` of other work after each
 * frame, not timed: `runs` samples of each and of on / off. A streaming
 * run's frames are left to the writer, which goes on with them during the
 * next run without streaming. */
bool bench_stream_ratio(int runs, int frames, double gap_ns, const char *dir, double *on,
                        double *off, double *ratio);

/* As bench_stream_ratio with frames back to back, each streaming run timed
 * until its frames are in the file (tlog_stream_flush): the writer's pace,
 * which a program that keeps ending frames back to back runs at. */
bool bench_stream_written_ratio(int runs, int frames, const char *dir, double *on,
                                double *off, double *ratio);

typedef enum bench_shape {
    BENCH_LOOP,   /* steps of one "Step" and nine "Kernel"s: 11 rows */
    BENCH_TREE,   /* a full ten-way tree: every scope a row of its own */
} bench_shape;

/* Records a frame of about `n` scopes of `shape` in `log`. */
void bench_record(tlog_log *log, bench_shape shape, size_t n);

/* Resolve and dump of a log's second frame, medians of the runs; and of
 * its first, which also makes the resolver's scratch. */
typedef struct bench_resolve {
    double scopes, rows;
    double resolve_ms, dump_ms, total_ms;   /* total: of each run's sum */
    double first_total_ms;                  /* the same for the log's first frame */
    double record_bytes;   /* per scope, tlog_stats.record_bytes while recorded */
    double tree_bytes;     /* per scope, tlog_frame_info.tree_bytes */
} bench_resolve;

/* `runs` logs, each recording two frames of about `n` scopes of `shape`,
 * each frame resolved (tlog_frame_latest) and dumped to /dev/null. */
void bench_resolve_dump(bench_shape shape, size_t n, int runs, bench_resolve *out);

#endif
