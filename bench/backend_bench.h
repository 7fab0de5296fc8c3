/*
 * Host cost of a device scope (begin + end, nothing between) on a backend,
 * next to its physical floor measured in the same run: the backend's two
 * bare marker calls (two event records, two timestamp appends ...) on the
 * same queue with markers made beforehand. Prints both as medians of
 * repeated runs, and their ratio.
 *
 * Batches stay far below what a queue accepts before recording itself
 * blocks; the queue is drained between batches, outside the timed region.
 */
#ifndef TIMERLOG_BENCH_BACKEND_H
#define TIMERLOG_BENCH_BACKEND_H

#include <timerlog/timerlog.h>

#define BENCH_BATCH 200

typedef struct bench_backend {
    const char *floor_name;   /* "two bare cudaEventRecord" */
    /* 1 when the backend has a device, 0 without (nothing measured). */
    int (*available)(void);
    int (*open)(tlog_log *log, tlog_device **out);
    /* The queue scopes and the floor use, and BENCH_BATCH pairs of bare
     * markers for the floor. */
    void *(*prepare)(void);
    /* BENCH_BATCH pairs of bare marker calls on the queue: the timed floor. */
    void (*floor)(void *queue);
    /* The application's wait for the queue, outside the timed regions. */
    void (*drain)(void *queue);
    void (*release)(void *queue);
} bench_backend;

int bench_backend_main(const bench_backend *b, int argc, char **argv);

#endif
