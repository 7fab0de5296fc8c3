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

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "timerlog/timerlog.h"

/* A backend's marker (a CUDA or HIP event, a simulated marker, ...). */
typedef uintptr_t tlog_marker;

/* What query and wait return for a marker not reached yet. */
#define TLOG_PENDING 1

/* Bumped whenever tlog_device_ops changes shape. */
#define TLOG_DEVICE_ABI 3

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

    /* Optional: blocks until the marker is reached, at most timeout_ns:
     * TLOG_OK, TLOG_ETIMEDOUT or an error. Only the forced sync and device
     * set-up wait. Without it the core polls query, spinning for the first
     * 200 us (a completion a few us away is seen at once), then napping. */
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

    /* Optional, and preferred to enqueue_busy: stops the own queue until
     * release_own, so that the calibration's markers run back to back
     * however slowly the host records them (a wait for an event that the
     * host signals). *hold is the backend's, passed back to release_own,
     * which is called once for every hold that succeeded. */
    int (*hold_own)(void *impl, void **hold);
    int (*release_own)(void *impl, void *hold);

    /* Optional: sets `marker` to the device clock's reading now, reached at
     * once, without going through a queue (Level Zero's
     * zeDeviceGetGlobalTimestamps). The core then anchors the device clock
     * to the host's with it, between two host clock reads, rather than with
     * a marker on the backend's own queue. */
    int (*mark_now)(void *impl, tlog_marker marker);

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

/* A caller's device configuration (NULL: all defaults) into *out, zeroed
 * first, with out->size set: the fields the caller's struct has, whatever
 * its version. TLOG_EINVAL if its size cannot even hold the size field, or
 * for flags this version does not know or max_scopes past 2^20. */
TLOG_API int tlog_device_config_copy_(tlog_device_config *out, const tlog_device_config *in);

/* The backend state given to tlog_device_register_. */
TLOG_API void *tlog_device_impl_(const tlog_device *dev);

/* `ns` (a product of a device reading and a scale) to the nearest integer,
 * halves away from zero. */
static inline int64_t tlog_round_ns_(double ns)
{
    return (int64_t)(ns < 0 ? ns - 0.5 : ns + 0.5);
}

/* Reports a backend problem as every recording error is reported on `log`
 * (NULL: the default log): each report reaches its on_error callback;
 * without one, the first of each kind is printed on stderr. */
TLOG_API void tlog_backend_report_(tlog_log *log, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));


/*
 * The default log's devices of a backend whose scopes name only a queue
 * (CUDA and HIP streams): one per ordinal, created on first use with the
 * configuration given beforehand, never again after a failed try. A
 * backend keeps one table, statically initialised.
 */
#define TLOG_DEFAULT_DEVICES_MAX 64

typedef struct tlog_default_devices {
    pthread_mutex_t lock;
    pthread_cond_t created;      /* a creation finished */
    _Atomic(tlog_device *) devices[TLOG_DEFAULT_DEVICES_MAX];
    bool tried[TLOG_DEFAULT_DEVICES_MAX];
    bool creating[TLOG_DEFAULT_DEVICES_MAX];
    bool configured;
    tlog_device_config config;
    atomic_bool absent;          /* the backend has no usable device */
    _Atomic uint64_t untimed;    /* scopes skipped for want of a device */
} tlog_default_devices;

#define TLOG_DEFAULT_DEVICES_INIT                                            \
    {.lock = PTHREAD_MUTEX_INITIALIZER, .created = PTHREAD_COND_INITIALIZER}

/* Creates the default log's device `ordinal` with the table's configuration
 * (NULL when none was given). */
typedef int (*tlog_default_create_fn)(int ordinal, const tlog_device_config *config,
                                      tlog_device **out);

/* The backend's tlog_xxx_configure: TLOG_EBUSY once a device was tried,
 * TLOG_EINVAL for a config too small to hold its size. */
TLOG_API int tlog_default_configure_(tlog_default_devices *t, const tlog_device_config *config);

/* Device `ordinal`, created on first use; NULL if it cannot be. A creation
 * that returns TLOG_ENODEVICE marks the backend absent. `create` runs with
 * no lock held, since it reports through the error callback, which may use
 * the backend: such a call from inside the creation gets NULL; other threads
 * wait for the creation. */
TLOG_API tlog_device *tlog_default_device_(tlog_default_devices *t, int ordinal,
                                           tlog_default_create_fn create);

/* Whether the backend was found to have no usable device (relaxed). */
static inline bool tlog_default_absent_(tlog_default_devices *t)
{
    return atomic_load_explicit(&t->absent, memory_order_relaxed);
}

/* A device scope begun with no device: counted, nothing else. */
static inline tlog_device_scope tlog_default_untimed_(tlog_default_devices *t)
{
    tlog_device_scope none = {NULL, 0};
    atomic_fetch_add_explicit(&t->untimed, 1, memory_order_relaxed);
    return none;
}

#endif
