/*
 * The device behaviour suite: the rules every backend keeps, written once
 * and run against each (the simulated device, CUDA on a GPU, HIP through
 * the test runtime, Level Zero through the real loader and the test
 * driver). A backend gives a harness: how to make its device and queues and
 * how to put work of a known length on a queue. Time is real time on every
 * backend. Plain C, no cmocka, so that it builds on GPU machines that have
 * only the vendor toolkit.
 */
#ifndef TIMERLOG_TEST_DEVICE_SUITE_H
#define TIMERLOG_TEST_DEVICE_SUITE_H

#include <stdbool.h>
#include <stdint.h>

#include <timerlog/timerlog.h>

typedef struct suite_backend {
    const char *name;
    /* The device for `log`: TLOG_ENODEVICE skips the suite. */
    int (*open)(tlog_log *log, tlog_device **out);
    /* An application queue (a stream, a command list ...). */
    void *(*queue_create)(void);
    void (*queue_destroy)(void *queue);
    /* The handle device scopes take for `queue` now; NULL: the queue. */
    void *(*handle)(void *queue);
    /* Work on `queue` that runs for about `ns` once the queue reaches it. */
    int (*launch)(void *queue, uint64_t ns);
    /* Makes what was enqueued on `queue` run (regular command lists);
     * NULL where enqueued work runs by itself. */
    int (*submit)(void *queue);
    /* The application's own wait for `queue` (submits first). */
    int (*finish)(void *queue);
    /* Optional: stops `queue` at this point (a wait for an event that the
     * host signals) until release, so that what is enqueued meanwhile runs
     * back to back whatever the host's gaps between enqueues. NULL: the
     * suite keeps the queue busy for 20 ms instead. */
    int (*hold)(void *queue);
    int (*release)(void *queue);
    /* Called after the suite, once every log is destroyed; may be NULL. */
    void (*close)(void);
    /* How far a measured interval may be from the work it encloses: launch
     * gaps on a real GPU; the markers' own cost on simulated devices. */
    uint64_t tolerance_ns;
    /* Every queue runs on one device queue, in submission order (Mesa's
     * lavapipe has a single VkQueue): the cases that need one queue to
     * finish while another is held are left out, and say so. */
    bool serial_queues;
    /* A case that fails is run again, up to this many times, and fails
     * only if every run fails: for a device that runs on the host's CPUs
     * (lavapipe), whose intervals take in whatever the host's scheduler
     * keeps its threads waiting. A rule that is broken fails every run. */
    int retries;
} suite_backend;

/* Runs every case: 0 when all pass, 1 when one fails, 77 (skipped) when
 * the backend has no device. */
int suite_run(const suite_backend *backend);

#endif
