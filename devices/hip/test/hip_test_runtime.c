/*
 * The test HIP runtime: the HIP entry points that libtimerlog-hip uses, on
 * the simulated device, built as a shared library that stands in for
 * libamdhip64 in the backend's tests (see hip_test_runtime.h for its hooks).
 *
 * What it keeps of HIP 5.2:
 *  - devices: a count from TLOG_TEST_HIP_DEVICES (0: hipErrorNoDevice, as
 *    without /dev/kfd), a current device per thread (0 at first);
 *  - streams: in-order queues that run independently of each other; the
 *    null stream is one queue per device, hipStreamPerThread one queue per
 *    thread and device. Not kept: the null stream's implicit
 *    synchronization with blocking streams;
 *  - events: timestamps taken when their stream reaches them, each costing
 *    1 us of queue time; an event belongs to the device current at its
 *    creation and can be recorded only on that device's streams; at most
 *    TLOG_TEST_HIP_MAX_EVENTS live at once (the KFD signal budget);
 *  - host callbacks (hipStreamAddCallback), each called on a thread of its
 *    own once its stream reaches it; later work in the stream waits until
 *    the callback returns;
 *  - graph capture, reduced to a flag per stream that the tests set:
 *    nothing can be recorded into a stream being captured;
 *  - a last error per thread, set by the calls that fail (not by
 *    hipErrorNotReady, which is no failure);
 *  - device errors, injected as simulator query faults: the event whose
 *    query took one reads hipErrorLaunchFailure from then on (query,
 *    synchronize, elapsed time) until it is recorded again, as a device
 *    error on a GPU stays.
 *
 * The simulator is created at the first call and lives until the process
 * ends. Streams are freed when destroyed; their simulator queues stay (the
 * simulator owns them, and work enqueued before the destroy still runs).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hip_test_runtime.h"
#include "timerlog/sim.h"

/* Built with -fvisibility=hidden: the HIP entry points and the hooks are
 * the library's interface. */
#define API __attribute__((visibility("default")))

#define MAX_DEVICES 64
#define DEFAULT_MAX_EVENTS 4096
#define MARKER_NS 1000u
#define SIM_PENDING 1                 /* the simulator's "not yet" */
#define FOREVER_NS (UINT64_C(1) << 62)

#define STREAM_MAGIC 0x48495053u      /* "HIPS" */
#define EVENT_MAGIC 0x48495045u       /* "HIPE" */

#define STREAM_FLAGS ((unsigned)hipStreamNonBlocking)
#define EVENT_FLAGS                                                           \
    ((unsigned)(hipEventBlockingSync | hipEventDisableTiming |                \
                hipEventInterprocess | hipEventReleaseToDevice |              \
                hipEventReleaseToSystem))

struct ihipStream_t {
    uint32_t magic;
    int device;                /* current device of the creating thread */
    unsigned flags;
    tlog_sim_queue *queue;
    _Atomic int capturing;     /* set by tlog_test_hip_set_capturing */
    tlog_sim_gate *gate;       /* set by tlog_test_hip_hold */
};

struct ihipEvent_t {
    uint32_t magic;
    int device;                /* current device at creation */
    unsigned flags;
    tlog_sim_marker *marker;
    _Atomic bool failed;       /* a query took a device error: sticky until
                                * the event is recorded again */
};

/* Every simulator queue with its device, for hipDeviceSynchronize: pushed
 * at the head, never removed, so a list read from the head stays valid. */
typedef struct queue_entry {
    struct queue_entry *next;
    tlog_sim_queue *queue;
    int device;
} queue_entry;

static struct {
    tlog_sim *sim;             /* NULL without devices */
    int devices;
    uint64_t max_events;
    bool ok;                   /* set up (or nothing to set up) */
    tlog_sim_queue *null_queue[MAX_DEVICES];
    _Atomic(queue_entry *) queues;
} rt;

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static struct {
    _Atomic uint64_t live, max_live, created, records, queries, syncs, exchanges, callbacks;
    _Atomic uint64_t record_delay_ns;  /* tlog_test_hip_set_record_delay */
} stats;

static _Thread_local int tl_device;
static _Thread_local hipError_t tl_last_error = hipSuccess;
static _Thread_local hipStreamCaptureMode tl_capture_mode = hipStreamCaptureModeGlobal;
/* hipStreamPerThread: this thread's queue on each device, made when first
 * used; the simulator owns it and keeps it after the thread ends. */
static _Thread_local tlog_sim_queue *tl_per_thread[MAX_DEVICES];
static _Thread_local _Atomic int tl_per_thread_capturing[MAX_DEVICES];

#define COUNT(f) atomic_fetch_add_explicit(&stats.f, 1, memory_order_relaxed)

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

static uint64_t monotonic_ns(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* An integer from the environment, held to [lo, hi]; `def` if unset or
 * not a number. */
static long env_long(const char *name, long def, long lo, long hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end)
        return def;
    return v < lo ? lo : v > hi ? hi : v;
}

static tlog_sim_queue *new_queue(int device)
{
    queue_entry *e = malloc(sizeof *e);
    if (!e)
        return NULL;
    e->queue = tlog_sim_queue_create(rt.sim);
    if (!e->queue) {
        free(e);
        return NULL;
    }
    e->device = device;
    e->next = atomic_load_explicit(&rt.queues, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&rt.queues, &e->next, e,
                                                  memory_order_release,
                                                  memory_order_relaxed))
        ;
    return e->queue;
}

static void rt_init(void)
{
    rt.devices = (int)env_long("TLOG_TEST_HIP_DEVICES", 1, 0, MAX_DEVICES);
    rt.max_events = (uint64_t)env_long("TLOG_TEST_HIP_MAX_EVENTS", DEFAULT_MAX_EVENTS,
                                       0, LONG_MAX);
    if (rt.devices == 0) {
        rt.ok = true;          /* nothing to run work on */
        return;
    }
    tlog_sim_config cfg = {.size = sizeof cfg, .clock = monotonic_ns,
                           .marker_ns = MARKER_NS};
    if (tlog_sim_create(&cfg, &rt.sim) != TLOG_OK)
        return;
    for (int d = 0; d < rt.devices; d++)
        if (!(rt.null_queue[d] = new_queue(d)))
            return;
    rt.ok = true;
}

/* hipSuccess once the runtime is up with a device, or why not. */
static hipError_t ready(void)
{
    pthread_once(&rt_once, rt_init);
    if (!rt.ok)
        return hipErrorNotInitialized;
    return rt.devices ? hipSuccess : hipErrorNoDevice;
}

/* Returns `e`, kept as the thread's last error if it is a failure. */
static hipError_t done(hipError_t e)
{
    if (e != hipSuccess && e != hipErrorNotReady)
        tl_last_error = e;
    return e;
}

static hipError_t from_sim(int rc)
{
    switch (rc) {
    case TLOG_OK: return hipSuccess;
    case SIM_PENDING: return hipErrorNotReady;
    case TLOG_ENOMEM: return hipErrorOutOfMemory;
    case TLOG_ECAPTURE: return hipErrorStreamCaptureUnsupported;
    case TLOG_EDEVICE: return hipErrorLaunchFailure;   /* an injected fault */
    case TLOG_ETIMEDOUT: return hipErrorLaunchTimeOut;
    case TLOG_EINVAL: return hipErrorInvalidValue;
    default: return hipErrorUnknown;
    }
}

/* ------------------------------------------------------------------------ */
/* Streams                                                                  */
/* ------------------------------------------------------------------------ */

/* Where a stream handle puts its work. */
typedef struct target {
    tlog_sim_queue *queue;
    int device;
    _Atomic int *capturing;    /* NULL: never captured (the null stream) */
} target;

/* Caller checked ready(). */
static hipError_t resolve(hipStream_t stream, target *t)
{
    int d = tl_device;
    if (stream == NULL) {
        *t = (target){rt.null_queue[d], d, NULL};
        return hipSuccess;
    }
    if (stream == hipStreamPerThread) {
        if (!tl_per_thread[d] && !(tl_per_thread[d] = new_queue(d)))
            return hipErrorOutOfMemory;
        *t = (target){tl_per_thread[d], d, &tl_per_thread_capturing[d]};
        return hipSuccess;
    }
    if (stream->magic != STREAM_MAGIC)
        return hipErrorInvalidHandle;
    *t = (target){stream->queue, stream->device, &stream->capturing};
    return hipSuccess;
}

static bool is_capturing(const target *t)
{
    return t->capturing && atomic_load_explicit(t->capturing, memory_order_acquire);
}

API hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!stream || (flags & ~STREAM_FLAGS))
        return done(hipErrorInvalidValue);
    struct ihipStream_t *s = calloc(1, sizeof *s);
    if (!s)
        return done(hipErrorOutOfMemory);
    s->device = tl_device;
    s->flags = flags;
    s->queue = new_queue(s->device);
    if (!s->queue) {
        free(s);
        return done(hipErrorOutOfMemory);
    }
    atomic_init(&s->capturing, 0);
    s->magic = STREAM_MAGIC;
    *stream = s;
    return hipSuccess;
}

API hipError_t hipStreamCreate(hipStream_t *stream)
{
    return hipStreamCreateWithFlags(stream, hipStreamDefault);
}

/* Work already enqueued still runs, as in HIP. */
API hipError_t hipStreamDestroy(hipStream_t stream)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!stream || stream == hipStreamPerThread || stream->magic != STREAM_MAGIC)
        return done(hipErrorInvalidHandle);
    stream->magic = 0;
    tlog_sim_gate_destroy(rt.sim, stream->gate);
    free(stream);
    return hipSuccess;
}

/* A host callback: called once its stream reaches `reached`; `gate` holds
 * the stream's later work until it returns. */
typedef struct callback_job {
    hipStream_t stream;
    hipStreamCallback_t fn;
    void *user;
    tlog_sim_marker *reached;
    tlog_sim_gate *gate;
} callback_job;

static void *callback_main(void *arg)
{
    callback_job *j = arg;
    int rc = tlog_sim_marker_wait(rt.sim, j->reached, UINT64_MAX / 2);
    j->fn(j->stream, rc == TLOG_OK ? hipSuccess : hipErrorLaunchFailure, j->user);
    tlog_sim_gate_destroy(rt.sim, j->gate);   /* opens it */
    tlog_sim_marker_destroy(rt.sim, j->reached);
    free(j);
    return NULL;
}

static hipError_t callback_enqueue(const target *t, callback_job *j)
{
    if (tlog_sim_marker_create(rt.sim, &j->reached) != TLOG_OK)
        return hipErrorOutOfMemory;
    int rc = tlog_sim_gate_create(rt.sim, &j->gate);
    if (rc == TLOG_OK)
        rc = tlog_sim_marker_record(rt.sim, t->queue, j->reached);
    if (rc == TLOG_OK)
        rc = tlog_sim_gate_wait(rt.sim, t->queue, j->gate);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (rc == TLOG_OK && pthread_create(&thread, &attr, callback_main, j) != 0)
        rc = TLOG_ENOMEM;
    pthread_attr_destroy(&attr);
    if (rc != TLOG_OK) {
        tlog_sim_gate_destroy(rt.sim, j->gate);
        tlog_sim_marker_destroy(rt.sim, j->reached);
    }
    return from_sim(rc);
}

API hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback,
                                    void *user, unsigned int flags)
{
    hipError_t e = ready();
    target t;
    if (e == hipSuccess)
        e = resolve(stream, &t);
    if (e == hipSuccess && (!callback || flags != 0))
        e = hipErrorInvalidValue;
    if (e == hipSuccess && is_capturing(&t))
        e = hipErrorStreamCaptureUnsupported;
    callback_job *j = e == hipSuccess ? calloc(1, sizeof *j) : NULL;
    if (e == hipSuccess && !j)
        e = hipErrorOutOfMemory;
    if (e == hipSuccess) {
        *j = (callback_job){.stream = stream, .fn = callback, .user = user};
        e = callback_enqueue(&t, j);
        if (e != hipSuccess)
            free(j);
    }
    if (e == hipSuccess)
        COUNT(callbacks);
    return done(e);
}

API hipError_t hipStreamSynchronize(hipStream_t stream)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    target t;
    if ((e = resolve(stream, &t)) != hipSuccess)
        return done(e);
    COUNT(syncs);
    if (is_capturing(&t))
        return done(hipErrorStreamCaptureUnsupported);
    return done(from_sim(tlog_sim_queue_sync(rt.sim, t.queue)));
}

/* Waits for every queue of the current device, those of destroyed streams
 * and of other threads' hipStreamPerThread included. */
API hipError_t hipDeviceSynchronize(void)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    COUNT(syncs);
    int d = tl_device;
    for (queue_entry *q = atomic_load_explicit(&rt.queues, memory_order_acquire); q;
         q = q->next) {
        if (q->device != d)
            continue;
        int rc = tlog_sim_queue_sync(rt.sim, q->queue);
        if (rc != TLOG_OK)
            return done(from_sim(rc));
    }
    return hipSuccess;
}

API hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!pCaptureStatus)
        return done(hipErrorInvalidValue);
    target t;
    if ((e = resolve(stream, &t)) != hipSuccess)
        return done(e);
    *pCaptureStatus = is_capturing(&t) ? hipStreamCaptureStatusActive
                                       : hipStreamCaptureStatusNone;
    return hipSuccess;
}

/* Only swapped and counted: the mode does not change what other calls do. */
API hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode)
{
    if (!mode || (*mode != hipStreamCaptureModeGlobal &&
                  *mode != hipStreamCaptureModeThreadLocal &&
                  *mode != hipStreamCaptureModeRelaxed))
        return done(hipErrorInvalidValue);
    COUNT(exchanges);
    hipStreamCaptureMode prev = tl_capture_mode;
    tl_capture_mode = *mode;
    *mode = prev;
    return hipSuccess;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */
/* ------------------------------------------------------------------------ */

static bool valid_event(hipEvent_t event)
{
    return event && event->magic == EVENT_MAGIC;
}

/* Takes a place among the live events: false at the cap. */
static bool reserve_event(uint64_t *live_now)
{
    uint64_t live = atomic_load_explicit(&stats.live, memory_order_relaxed);
    do {
        if (live >= rt.max_events)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&stats.live, &live, live + 1,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    *live_now = live + 1;
    return true;
}

static void note_max_live(uint64_t live)
{
    uint64_t max = atomic_load_explicit(&stats.max_live, memory_order_relaxed);
    while (live > max && !atomic_compare_exchange_weak_explicit(&stats.max_live, &max, live,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed))
        ;
}

API hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!event || (flags & ~EVENT_FLAGS))
        return done(hipErrorInvalidValue);
    uint64_t live = 0;
    if (!reserve_event(&live))
        return done(hipErrorOutOfMemory);   /* out of signals */
    struct ihipEvent_t *ev = calloc(1, sizeof *ev);
    if (!ev || tlog_sim_marker_create(rt.sim, &ev->marker) != TLOG_OK) {
        free(ev);
        atomic_fetch_sub_explicit(&stats.live, 1, memory_order_relaxed);
        return done(hipErrorOutOfMemory);
    }
    ev->device = tl_device;
    ev->flags = flags;
    atomic_init(&ev->failed, false);
    ev->magic = EVENT_MAGIC;
    note_max_live(live);
    COUNT(created);
    *event = ev;
    return hipSuccess;
}

API hipError_t hipEventCreate(hipEvent_t *event)
{
    return hipEventCreateWithFlags(event, hipEventDefault);
}

/* Allowed while the event is pending: its stream forgets it. */
API hipError_t hipEventDestroy(hipEvent_t event)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!valid_event(event))
        return done(hipErrorInvalidHandle);
    event->magic = 0;
    tlog_sim_marker_destroy(rt.sim, event->marker);
    free(event);
    atomic_fetch_sub_explicit(&stats.live, 1, memory_order_relaxed);
    return hipSuccess;
}

/* The injected cost of a record (tlog_test_hip_set_record_delay). */
static void slow_host(void)
{
    uint64_t ns = atomic_load(&stats.record_delay_ns);
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    if (ns)
        nanosleep(&t, NULL);
}

API hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!valid_event(event))
        return done(hipErrorInvalidHandle);
    COUNT(records);
    slow_host();
    target t;
    if ((e = resolve(stream, &t)) != hipSuccess)
        return done(e);
    if (t.device != event->device)
        return done(hipErrorInvalidHandle);
    /* HIP invalidates the capture too; the flag stays as the test set it. */
    if (is_capturing(&t))
        return done(hipErrorStreamCaptureUnsupported);
    /* Recording a pending event again is counted by the simulator. */
    e = from_sim(tlog_sim_marker_record(rt.sim, t.queue, event->marker));
    if (e == hipSuccess)
        atomic_store_explicit(&event->failed, false, memory_order_relaxed);
    return done(e);
}

API hipError_t hipEventQuery(hipEvent_t event)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!valid_event(event))
        return done(hipErrorInvalidHandle);
    COUNT(queries);
    if (atomic_load_explicit(&event->failed, memory_order_relaxed))
        return done(hipErrorLaunchFailure);
    /* Never recorded: hipSuccess. A TLOG_SIM_FAULT_QUERY_ERROR fault reads as
     * a device error, which stays with the event. */
    e = from_sim(tlog_sim_marker_query(rt.sim, event->marker));
    if (e == hipErrorLaunchFailure)
        atomic_store_explicit(&event->failed, true, memory_order_relaxed);
    return done(e);
}

/* Blocks until the event is reached: for good if it never will be (a hang
 * or stall fault), as on a hung GPU. */
API hipError_t hipEventSynchronize(hipEvent_t event)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!valid_event(event))
        return done(hipErrorInvalidHandle);
    COUNT(syncs);
    if (atomic_load_explicit(&event->failed, memory_order_relaxed))
        return done(hipErrorLaunchFailure);
    return done(from_sim(tlog_sim_marker_wait(rt.sim, event->marker, FOREVER_NS)));
}

API hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!ms)
        return done(hipErrorInvalidValue);
    if (!valid_event(start) || !valid_event(stop))
        return done(hipErrorInvalidHandle);
    if ((start->flags | stop->flags) & hipEventDisableTiming)
        return done(hipErrorInvalidHandle);
    if (start->device != stop->device)
        return done(hipErrorInvalidHandle);
    if (atomic_load_explicit(&start->failed, memory_order_relaxed) ||
        atomic_load_explicit(&stop->failed, memory_order_relaxed))
        return done(hipErrorLaunchFailure);
    uint64_t a = 0, b = 0;
    int ra = tlog_sim_marker_time(rt.sim, start->marker, &a);
    int rb = tlog_sim_marker_time(rt.sim, stop->marker, &b);
    if (ra == TLOG_EINVAL || rb == TLOG_EINVAL)
        return done(hipErrorInvalidHandle);   /* never recorded */
    if (ra != TLOG_OK || rb != TLOG_OK)
        return done(hipErrorNotReady);
    double ns = b >= a ? (double)(b - a) : -(double)(a - b);
    *ms = (float)(ns / 1e6);
    return hipSuccess;
}

/* ------------------------------------------------------------------------ */
/* Devices and errors                                                       */
/* ------------------------------------------------------------------------ */

API hipError_t hipGetDeviceCount(int *count)
{
    if (!count)
        return done(hipErrorInvalidValue);
    pthread_once(&rt_once, rt_init);
    *count = rt.ok ? rt.devices : 0;
    return done(ready());
}

API hipError_t hipGetDevice(int *deviceId)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!deviceId)
        return done(hipErrorInvalidValue);
    *deviceId = tl_device;
    return hipSuccess;
}

API hipError_t hipSetDevice(int deviceId)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (deviceId < 0 || deviceId >= rt.devices)
        return done(hipErrorInvalidDevice);
    tl_device = deviceId;
    return hipSuccess;
}

API hipError_t hipGetDeviceProperties(hipDeviceProp_t *prop, int deviceId)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return done(e);
    if (!prop)
        return done(hipErrorInvalidValue);
    if (deviceId < 0 || deviceId >= rt.devices)
        return done(hipErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "timerlog test HIP device %d", deviceId);
    return hipSuccess;
}

API const char *hipGetErrorName(hipError_t hip_error)
{
#define NAME(e) case e: return #e
    switch (hip_error) {
    NAME(hipSuccess);
    NAME(hipErrorInvalidValue);
    NAME(hipErrorOutOfMemory);
    NAME(hipErrorNotInitialized);
    NAME(hipErrorDeinitialized);
    NAME(hipErrorProfilerDisabled);
    NAME(hipErrorProfilerNotInitialized);
    NAME(hipErrorProfilerAlreadyStarted);
    NAME(hipErrorProfilerAlreadyStopped);
    NAME(hipErrorInvalidConfiguration);
    NAME(hipErrorInvalidPitchValue);
    NAME(hipErrorInvalidSymbol);
    NAME(hipErrorInvalidDevicePointer);
    NAME(hipErrorInvalidMemcpyDirection);
    NAME(hipErrorInsufficientDriver);
    NAME(hipErrorMissingConfiguration);
    NAME(hipErrorPriorLaunchFailure);
    NAME(hipErrorInvalidDeviceFunction);
    NAME(hipErrorNoDevice);
    NAME(hipErrorInvalidDevice);
    NAME(hipErrorInvalidImage);
    NAME(hipErrorInvalidContext);
    NAME(hipErrorContextAlreadyCurrent);
    NAME(hipErrorMapFailed);
    NAME(hipErrorUnmapFailed);
    NAME(hipErrorArrayIsMapped);
    NAME(hipErrorAlreadyMapped);
    NAME(hipErrorNoBinaryForGpu);
    NAME(hipErrorAlreadyAcquired);
    NAME(hipErrorNotMapped);
    NAME(hipErrorNotMappedAsArray);
    NAME(hipErrorNotMappedAsPointer);
    NAME(hipErrorECCNotCorrectable);
    NAME(hipErrorUnsupportedLimit);
    NAME(hipErrorContextAlreadyInUse);
    NAME(hipErrorPeerAccessUnsupported);
    NAME(hipErrorInvalidKernelFile);
    NAME(hipErrorInvalidGraphicsContext);
    NAME(hipErrorInvalidSource);
    NAME(hipErrorFileNotFound);
    NAME(hipErrorSharedObjectSymbolNotFound);
    NAME(hipErrorSharedObjectInitFailed);
    NAME(hipErrorOperatingSystem);
    NAME(hipErrorInvalidHandle);
    NAME(hipErrorIllegalState);
    NAME(hipErrorNotFound);
    NAME(hipErrorNotReady);
    NAME(hipErrorIllegalAddress);
    NAME(hipErrorLaunchOutOfResources);
    NAME(hipErrorLaunchTimeOut);
    NAME(hipErrorPeerAccessAlreadyEnabled);
    NAME(hipErrorPeerAccessNotEnabled);
    NAME(hipErrorSetOnActiveProcess);
    NAME(hipErrorContextIsDestroyed);
    NAME(hipErrorAssert);
    NAME(hipErrorHostMemoryAlreadyRegistered);
    NAME(hipErrorHostMemoryNotRegistered);
    NAME(hipErrorLaunchFailure);
    NAME(hipErrorCooperativeLaunchTooLarge);
    NAME(hipErrorNotSupported);
    NAME(hipErrorStreamCaptureUnsupported);
    NAME(hipErrorStreamCaptureInvalidated);
    NAME(hipErrorStreamCaptureMerge);
    NAME(hipErrorStreamCaptureUnmatched);
    NAME(hipErrorStreamCaptureUnjoined);
    NAME(hipErrorStreamCaptureIsolation);
    NAME(hipErrorStreamCaptureImplicit);
    NAME(hipErrorCapturedEvent);
    NAME(hipErrorStreamCaptureWrongThread);
    NAME(hipErrorGraphExecUpdateFailure);
    NAME(hipErrorUnknown);
    NAME(hipErrorRuntimeMemory);
    NAME(hipErrorRuntimeOther);
    NAME(hipErrorTbd);
    default: return "hipErrorUnknown";
    }
#undef NAME
}

/* As in HIP 5.2 on AMD: the error's name. */
API const char *hipGetErrorString(hipError_t hipError)
{
    return hipGetErrorName(hipError);
}

API hipError_t hipGetLastError(void)
{
    hipError_t e = tl_last_error;
    tl_last_error = hipSuccess;
    return e;
}

API hipError_t hipPeekAtLastError(void)
{
    return tl_last_error;
}

/* ------------------------------------------------------------------------ */
/* Test hooks                                                               */
/* ------------------------------------------------------------------------ */

API hipError_t tlog_test_hip_launch(hipStream_t stream, uint64_t ns)
{
    hipError_t e = ready();
    target t;
    if (e == hipSuccess)
        e = resolve(stream, &t);
    if (e != hipSuccess)
        return e;
    if (is_capturing(&t))
        return hipSuccess;     /* into the graph: it does not run */
    return from_sim(tlog_sim_launch(rt.sim, t.queue, ns));
}

/* A created stream, for the hooks that take no other kind. */
static hipError_t created(hipStream_t stream)
{
    hipError_t e = ready();
    if (e == hipSuccess && (!stream || stream == hipStreamPerThread))
        e = hipErrorInvalidValue;
    if (e == hipSuccess && stream->magic != STREAM_MAGIC)
        e = hipErrorInvalidHandle;
    return e;
}

API hipError_t tlog_test_hip_hold(hipStream_t stream)
{
    hipError_t e = created(stream);
    if (e != hipSuccess)
        return e;
    if (stream->gate)
        return hipErrorInvalidValue;
    return from_sim(tlog_sim_hold(rt.sim, stream->queue, &stream->gate));
}

API hipError_t tlog_test_hip_release(hipStream_t stream)
{
    hipError_t e = created(stream);
    if (e != hipSuccess)
        return e;
    if (!stream->gate)
        return hipErrorInvalidValue;
    tlog_sim_gate_destroy(rt.sim, stream->gate);   /* opens it */
    stream->gate = NULL;
    return hipSuccess;
}

API hipError_t tlog_test_hip_set_capturing(hipStream_t stream, int capturing)
{
    hipError_t e = ready();
    if (e != hipSuccess)
        return e;
    if (stream == NULL)
        return hipErrorStreamCaptureUnsupported;
    target t;
    if ((e = resolve(stream, &t)) != hipSuccess)
        return e;
    atomic_store_explicit(t.capturing, capturing != 0, memory_order_release);
    return hipSuccess;
}

API void tlog_test_hip_set_record_delay(uint64_t ns)
{
    atomic_store(&stats.record_delay_ns, ns);
}

API int tlog_test_hip_inject(int fault, unsigned count)
{
    pthread_once(&rt_once, rt_init);
    return tlog_sim_inject(rt.sim, fault, count);   /* TLOG_EINVAL without devices */
}

API void tlog_test_hip_get_stats(tlog_test_hip_stats *out)
{
    if (!out)
        return;
    pthread_once(&rt_once, rt_init);
    tlog_sim_stats s = {.size = sizeof s};
    if (!rt.sim || tlog_sim_get_stats(rt.sim, &s) != TLOG_OK)
        s.rerecords_in_flight = 0;
    *out = (tlog_test_hip_stats){
        .events_live = atomic_load(&stats.live),
        .events_max_live = atomic_load(&stats.max_live),
        .events_created = atomic_load(&stats.created),
        .records = atomic_load(&stats.records),
        .queries = atomic_load(&stats.queries),
        .syncs = atomic_load(&stats.syncs),
        .rerecords_in_flight = s.rerecords_in_flight,
        .capture_mode_exchanges = atomic_load(&stats.exchanges),
        .callbacks = atomic_load(&stats.callbacks),
    };
}
