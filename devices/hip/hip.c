/*
 * The HIP backend: HIP events as markers, behind the backend interface.
 *
 * Rules this file keeps (see the header for what users see):
 *  - no hipEventSynchronize, hipStreamSynchronize or hipDeviceSynchronize
 *    anywhere: the one wait (the forced sync) is the core's poll of
 *    hipEventQuery, which can give up at a timeout;
 *  - an event is never recorded while pending (undefined in HIP): the core
 *    recycles a marker only once it has been reached and read;
 *  - the live events stay well under the process's HSA signal budget
 *    (max_scopes is capped per device, and all devices share one count);
 *  - nothing is recorded into a stream being captured, and queries run with
 *    the thread in relaxed capture mode;
 *  - events are created on the device they time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "device.h"
#include "timerlog/hip.h"

/* Scopes in flight per device: each holds two events (see the header). */
#define DEFAULT_MAX_SCOPES 512u
#define MAX_SCOPES 1000u
/* Events all HIP devices of the process may hold: half the kernel driver's
 * 4096 signals, the other half left to the application and the runtime. */
#define PROCESS_EVENTS 2048

static atomic_int process_events;

typedef struct hip_impl {
    int ordinal;
    hipStream_t own;           /* non-blocking: anchors and calibration */
} hip_impl;

static int status_of(hipError_t e)
{
    switch (e) {
    case hipSuccess: return TLOG_OK;
    case hipErrorNotReady: return TLOG_PENDING;
    case hipErrorStreamCaptureUnsupported:
    case hipErrorStreamCaptureInvalidated:
    case hipErrorStreamCaptureMerge:
    case hipErrorStreamCaptureUnmatched:
    case hipErrorStreamCaptureUnjoined:
    case hipErrorStreamCaptureIsolation:
    case hipErrorStreamCaptureImplicit:
    case hipErrorCapturedEvent:
    case hipErrorStreamCaptureWrongThread:
        return TLOG_ECAPTURE;
    case hipErrorNoDevice:
    case hipErrorInsufficientDriver:
        return TLOG_ENODEVICE;
    case hipErrorOutOfMemory: return TLOG_ENOMEM;
    default:
        /* Clear the error so that the application does not see it later
         * from an unrelated call. */
        hipGetLastError();
        return TLOG_EDEVICE;
    }
}

/* Runs `fn` with `ordinal` as the calling thread's device, then restores. */
static int on_device(int ordinal, int (*fn)(void *), void *arg)
{
    int prev = -1;
    if (hipGetDevice(&prev) != hipSuccess) {
        hipGetLastError();
        prev = -1;
    }
    if (prev != ordinal && hipSetDevice(ordinal) != hipSuccess)
        return status_of(hipGetLastError());
    int rc = fn(arg);
    if (prev >= 0 && prev != ordinal)
        hipSetDevice(prev);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The backend interface                                                    */
/* ------------------------------------------------------------------------ */

static int create_event(void *out)
{
    return status_of(hipEventCreateWithFlags((hipEvent_t *)out, hipEventDefault));
}

static int hip_marker_create(void *impl, tlog_marker *out)
{
    if (atomic_fetch_add(&process_events, 1) >= PROCESS_EVENTS) {
        atomic_fetch_sub(&process_events, 1);
        return TLOG_ENOMEM;
    }
    hipEvent_t ev = NULL;
    int rc = on_device(((hip_impl *)impl)->ordinal, create_event, &ev);
    if (rc != TLOG_OK)
        atomic_fetch_sub(&process_events, 1);
    *out = (tlog_marker)ev;
    return rc;
}

static void hip_marker_destroy(void *impl, tlog_marker marker)
{
    (void)impl;
    hipEventDestroy((hipEvent_t)marker);
    atomic_fetch_sub(&process_events, 1);
}

static int hip_record(void *impl, void *queue, tlog_marker marker)
{
    (void)impl;
    hipStream_t stream = (hipStream_t)queue;
    hipStreamCaptureStatus capture = hipStreamCaptureStatusNone;
    hipError_t e = hipStreamIsCapturing(stream, &capture);
    if (e != hipSuccess)
        return status_of(e);
    if (capture != hipStreamCaptureStatusNone)
        return TLOG_ECAPTURE;
    return status_of(hipEventRecord((hipEvent_t)marker, stream));
}

static int hip_record_own(void *impl, tlog_marker marker)
{
    return status_of(hipEventRecord((hipEvent_t)marker, ((hip_impl *)impl)->own));
}

static int hip_query(void *impl, tlog_marker marker)
{
    (void)impl;
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    hipThreadExchangeStreamCaptureMode(&mode);
    hipError_t e = hipEventQuery((hipEvent_t)marker);
    hipThreadExchangeStreamCaptureMode(&mode);
    return status_of(e);
}

static int hip_elapsed(void *impl, tlog_marker from, tlog_marker to, int64_t *ns)
{
    (void)impl;
    float ms = 0;
    int rc = status_of(hipEventElapsedTime(&ms, (hipEvent_t)from, (hipEvent_t)to));
    if (rc == TLOG_OK)
        *ns = tlog_round_ns_((double)ms * 1e6);
    return rc;
}

/* A hold of the own stream: a host callback, which blocks later work in its
 * stream until it returns, waits for the release. Shared by the callback and
 * the releaser, freed by whichever lets go last. */
typedef struct hip_hold {
    pthread_mutex_t lock;
    pthread_cond_t opened;
    bool open;
    int refs;
} hip_hold;

/* How long a hold lasts at most, should its release never come. */
#define HOLD_LIMIT_S 2

static void hold_put(hip_hold *g)
{
    pthread_mutex_lock(&g->lock);
    bool last = --g->refs == 0;
    pthread_mutex_unlock(&g->lock);
    if (last) {
        pthread_cond_destroy(&g->opened);
        pthread_mutex_destroy(&g->lock);
        free(g);
    }
}

static void hold_callback(hipStream_t stream, hipError_t status, void *user)
{
    (void)stream;
    (void)status;
    hip_hold *g = user;
    struct timespec limit;
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += HOLD_LIMIT_S;
    pthread_mutex_lock(&g->lock);
    while (!g->open && pthread_cond_timedwait(&g->opened, &g->lock, &limit) == 0)
        ;
    pthread_mutex_unlock(&g->lock);
    hold_put(g);
}

static int hip_hold_own(void *impl, void **hold)
{
    hip_hold *g = calloc(1, sizeof *g);
    if (!g)
        return TLOG_ENOMEM;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->opened, NULL);
    g->refs = 2;
    int rc = status_of(hipStreamAddCallback(((hip_impl *)impl)->own, hold_callback, g, 0));
    if (rc != TLOG_OK) {
        g->refs = 1;
        hold_put(g);
        return rc;
    }
    *hold = g;
    return TLOG_OK;
}

static int hip_release_own(void *impl, void *hold)
{
    (void)impl;
    hip_hold *g = hold;
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->opened);
    pthread_mutex_unlock(&g->lock);
    hold_put(g);
    return TLOG_OK;
}

/* hipStreamPerThread runs in order per thread only: each thread's gets a
 * pending list of its own. */
static _Thread_local char per_thread_stream;

static void *hip_queue_key(void *impl, void *queue)
{
    (void)impl;
    return queue == (void *)hipStreamPerThread ? (void *)&per_thread_stream : queue;
}

static void impl_free(hip_impl *h)
{
    if (h->own)
        hipStreamDestroy(h->own);
    free(h);
}

static void hip_destroy(void *impl)
{
    impl_free(impl);
}

static const tlog_device_ops hip_ops = {
    .size = sizeof(tlog_device_ops),
    .abi = TLOG_DEVICE_ABI,
    .backend = "hip",
    .marker_create = hip_marker_create,
    .marker_destroy = hip_marker_destroy,
    .record = hip_record,
    .record_own = hip_record_own,
    .query = hip_query,
    .elapsed_ns = hip_elapsed,
    .queue_key = hip_queue_key,
    .hold_own = hip_hold_own,
    .release_own = hip_release_own,
    .destroy = hip_destroy,
};

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

static int impl_setup(void *arg)
{
    hip_impl *h = arg;
    return status_of(hipStreamCreateWithFlags(&h->own, hipStreamNonBlocking));
}

/* Holds max_scopes to the event budget. */
static void cap_scopes(tlog_log *log, tlog_device_config *c)
{
    if (c->max_scopes == 0)
        c->max_scopes = DEFAULT_MAX_SCOPES;
    if (c->max_scopes > MAX_SCOPES) {
        tlog_backend_report_(log, TLOG_EINVAL,
                             "HIP: max_scopes %u exceeds the event budget; using %u",
                             (unsigned)c->max_scopes, MAX_SCOPES);
        c->max_scopes = MAX_SCOPES;
    }
}

static int no_device(tlog_log *log, int ordinal, hipError_t e, int count)
{
    if (e != hipSuccess)
        tlog_backend_report_(log, TLOG_ENODEVICE,
                             "HIP: no usable device (%s); HIP scopes are not timed",
                             hipGetErrorString(e));
    else
        tlog_backend_report_(log, TLOG_ENODEVICE,
                             "HIP: no device %d (%d found); its scopes are not timed",
                             ordinal, count);
    return TLOG_ENODEVICE;
}

int tlog_hip_device_create(tlog_log *log, int ordinal, const tlog_device_config *config,
                           tlog_device **out)
{
    tlog_device_config c;
    if (!out || ordinal < 0 || tlog_device_config_copy_(&c, config) != TLOG_OK)
        return TLOG_EINVAL;
    *out = NULL;
    int count = 0;
    hipError_t e = hipGetDeviceCount(&count);
    if (e != hipSuccess || ordinal >= count) {
        hipGetLastError();
        return no_device(log, ordinal, e, count);
    }
    hip_impl *h = calloc(1, sizeof *h);
    if (!h)
        return TLOG_ENOMEM;
    h->ordinal = ordinal;
    int rc = on_device(ordinal, impl_setup, h);
    char name[300] = "HIP device";
    hipDeviceProp_t prop;
    if (rc == TLOG_OK && hipGetDeviceProperties(&prop, ordinal) == hipSuccess)
        snprintf(name, sizeof name, "%s (%d)", prop.name, ordinal);
    if (rc == TLOG_OK) {
        cap_scopes(log, &c);
        rc = tlog_device_register_(log, &hip_ops, h, name, &c, out);
    }
    if (rc != TLOG_OK) {
        tlog_backend_report_(log, rc, "HIP: cannot set up device %d: %s", ordinal,
                             tlog_strerror(rc));
        impl_free(h);
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The default log's devices                                                */
/* ------------------------------------------------------------------------ */

static tlog_default_devices defaults = TLOG_DEFAULT_DEVICES_INIT;

int tlog_hip_configure(const tlog_device_config *config)
{
    return tlog_default_configure_(&defaults, config);
}

static int create_default(int ordinal, const tlog_device_config *config, tlog_device **out)
{
    return tlog_hip_device_create(NULL, ordinal, config, out);
}

static bool capturing(hipStream_t stream)
{
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    if (hipStreamIsCapturing(stream, &status) != hipSuccess) {
        hipGetLastError();
        return true;
    }
    return status != hipStreamCaptureStatusNone;
}

tlog_device *tlog_hip_device(hipStream_t stream)
{
    if (tlog_default_absent_(&defaults))
        return NULL;
    int ordinal = -1;
    if (hipGetDevice(&ordinal) != hipSuccess) {
        hipGetLastError();
        tlog_default_device_(&defaults, 0, create_default); /* reports why, once */
        return NULL;
    }
    if (ordinal < 0 || ordinal >= TLOG_DEFAULT_DEVICES_MAX)
        return NULL;
    tlog_device *dev = atomic_load_explicit(&defaults.devices[ordinal], memory_order_acquire);
    if (dev)
        return dev;
    /* A scope in a capture is not timed anyway: make the device later, when
     * setting it up cannot touch a graph being built. */
    return capturing(stream) ? NULL : tlog_default_device_(&defaults, ordinal, create_default);
}

uint64_t tlog_hip_scopes_untimed(void)
{
    return atomic_load(&defaults.untimed);
}

tlog_device_scope tlog_hip_begin(hipStream_t stream, const tlog_site *site)
{
    tlog_device *dev = tlog_hip_device(stream);
    if (!dev)
        return tlog_default_untimed_(&defaults);
    return tlog_device_begin(dev, stream, site);
}
