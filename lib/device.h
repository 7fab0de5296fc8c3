/*
 * The backend interface: what a device backend (devices/<name>/) gives the
 * core so that device scopes, sync scopes and the forced sync work the same
 * on every backend. Shared code calls only these operations and never names
 * a vendor API.
 *
 * Not installed: backends are built with the core, from the same tree, and
 * the entry points below are exported only for them.
 */
#ifndef TIMERLOG_DEVICE_H
#define TIMERLOG_DEVICE_H

#include <stdint.h>

#include "timerlog/timerlog.h"

/* A backend's marker (a CUDA or HIP event, a simulated marker, ...). */
typedef uintptr_t tlog_marker;

/* What query and wait return for a marker not reached yet. */
#define TLOG_PENDING 1

/* Bumped whenever tlog_device_ops changes shape. */
#define TLOG_DEVICE_ABI 1

typedef struct tlog_device_ops {
    size_t size;             /* sizeof(tlog_device_ops) */
    int abi;                 /* TLOG_DEVICE_ABI */
    const char *backend;     /* "sim", "cuda", ... */

    /* Markers come from a pool: created here, recycled by the core only once
     * nothing can read them any more, destroyed when the device goes. */
    int (*marker_create)(void *impl, tlog_marker *out);
    void (*marker_destroy)(void *impl, tlog_marker marker);

    /* Puts `marker` in the application's `queue` (NULL: what the backend's
     * header says NULL means). Must not block. TLOG_ECAPTURE when the queue
     * is being captured into a graph and the marker was not recorded. */
    int (*record)(void *impl, void *queue, tlog_marker marker);

    /* Puts `marker` in the backend's own queue, idle but for the core's
     * anchors and calibration. */
    int (*record_own)(void *impl, tlog_marker marker);

    /* TLOG_OK when the marker has been reached, TLOG_PENDING when not yet,
     * or an error; never blocks. Must be safe while other threads capture
     * graphs. */
    int (*query)(void *impl, tlog_marker marker);

    /* Blocks until the marker is reached, at most timeout_ns: TLOG_OK,
     * TLOG_ETIMEDOUT or an error. Only the forced sync calls it. */
    int (*wait)(void *impl, tlog_marker marker, uint64_t timeout_ns);

    /* Device time from `from` to `to`, both reached, in nanoseconds (may
     * be negative). */
    int (*elapsed_ns)(void *impl, tlog_marker from, tlog_marker to, int64_t *ns);

    /* Optional: what identifies `queue` for ordering. Work on one key runs
     * in order; NULL means the handle itself (a per-thread default stream
     * returns a key of the calling thread). */
    void *(*queue_key)(void *impl, void *queue);

    /* Optional, for calibration on the backend's own queue: the smallest
     * unit of work (an empty kernel), and work that keeps the queue busy for
     * about `ns` so that the markers measured behind it are not delayed by
     * the host. */
    int (*enqueue_empty)(void *impl);
    int (*enqueue_busy)(void *impl, uint64_t ns);

    /* Called once by tlog_device_destroy, after every marker is destroyed. */
    void (*destroy)(void *impl);
} tlog_device_ops;

/*
 * Registers a backend device with `log` (NULL: the default log): measures
 * the empty-scope offset and anchors the device clock to the host clock
 * (both wait briefly on the backend's own queue). `name` is copied. On
 * failure the impl is not destroyed: the caller still owns it.
 */
TLOG_API int tlog_device_register_(tlog_log *log, const tlog_device_ops *ops,
                                   void *impl, const char *name,
                                   const tlog_device_config *config,
                                   tlog_device **out);

/* The backend state given to tlog_device_register_. */
TLOG_API void *tlog_device_impl_(const tlog_device *dev);

/* Reports a backend problem through the error callback of `log` (NULL: the
 * default log), deduplicated like every recording error. */
TLOG_API void tlog_backend_report_(tlog_log *log, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
