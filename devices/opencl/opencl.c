/*
 * The OpenCL backend: marker (or barrier) commands with profiled events as
 * markers, behind the backend interface.
 *
 * Rules this file keeps (see the header for what users see):
 *  - no clFinish, clWaitForEvents or blocking enqueue anywhere: readiness is
 *    clGetEventInfo's execution status, and the one wait (the forced sync)
 *    is the core's poll of it, which gives up at a timeout;
 *  - a marker's time is read once, when its command is found complete; its
 *    event (and the queue reference taken for it) is released then, never
 *    before, except when the device goes;
 *  - the queue of a marker found still CL_QUEUED is flushed, once: OpenCL
 *    need not run commands that were never flushed;
 *  - every queue a scope names is checked at each record (profiling on, the
 *    device's own), and refused with a report saying why;
 *  - nothing is reported while a lock is held: a command's failure seen by
 *    a resolver (which holds the core's poll lock) is kept, and reported by
 *    the next record on the application's thread.
 *
 * A tlog_marker is a cl_marker below. OpenCL events cannot be recorded
 * again, so a marker holds the event of its last enqueue until that is
 * read; the core's pool decides how many markers exist.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "timerlog/opencl.h"

/* clGetDeviceAndHostTimer is used only where it answers within this (the
 * core refuses anchors taken in windows wider than 100 us). */
#define HOST_TIMER_MAX_NS 50000
#define HOST_TIMER_TRIES 5

enum marker_state { MARK_IDLE, MARK_FLIGHT, MARK_DONE, MARK_FAILED };

typedef struct cl_marker {
    _Atomic int state;          /* marker_state */
    cl_event event;             /* MARK_FLIGHT: the command's event */
    cl_command_queue queue;     /* MARK_FLIGHT: retained for the flush */
    bool flushed;
    bool queued_time;           /* an anchor: reads CL_PROFILING_COMMAND_QUEUED */
    cl_ulong stamp;             /* MARK_DONE: device time, ns */
} cl_marker;

typedef struct cl_impl {
    tlog_log *log;
    cl_context context;         /* retained, or made here */
    cl_device_id device;
    cl_command_queue own;       /* in-order, profiled: anchors, calibration */
    bool held;                  /* own queue held by hold_own */
    /* Settling a marker: the forced sync's wait and a resolver may settle
     * the same marker at once. Also guards the failure kept for report. */
    pthread_mutex_t lock;
    struct {
        uint64_t count;
        cl_int status;
        bool query_failed;      /* clGetEventInfo itself failed */
    } failure;
    atomic_bool failure_kept;
    /* The last queue reported: the impl itself before any (NULL is a queue
     * that gets reported). */
    _Atomic(cl_command_queue) refused_queue;
} cl_impl;

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static const char *cl_error_name(cl_int e)
{
    switch (e) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_PROFILING_INFO_NOT_AVAILABLE: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
        return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_EVENT_WAIT_LIST: return "CL_INVALID_EVENT_WAIT_LIST";
    case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return e < 0 ? "an OpenCL error" : "an unknown status";
    }
}

/* A negative execution status: the error codes a command may end with,
 * else a value the application gave a user event it waited for. */
static const char *exec_status_name(cl_int status)
{
    switch (status) {
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
    case CL_INVALID_OPERATION:
        return cl_error_name(status);
    default: return "an error";
    }
}

static int status_of(cl_int e)
{
    switch (e) {
    case CL_SUCCESS: return TLOG_OK;
    case CL_OUT_OF_HOST_MEMORY: return TLOG_ENOMEM;
    case CL_DEVICE_NOT_FOUND:
    case CL_DEVICE_NOT_AVAILABLE:
    case -1001:   /* CL_PLATFORM_NOT_FOUND_KHR, from the ICD loader */
        return TLOG_ENODEVICE;
    default: return TLOG_EDEVICE;
    }
}

/* Reports the failure a resolver kept, if any; called with no lock held. */
static void report_kept_failure(cl_impl *c)
{
    if (!atomic_load_explicit(&c->failure_kept, memory_order_acquire))
        return;
    pthread_mutex_lock(&c->lock);
    uint64_t count = c->failure.count;
    cl_int status = c->failure.status;
    bool query_failed = c->failure.query_failed;
    c->failure.count = 0;
    atomic_store_explicit(&c->failure_kept, false, memory_order_relaxed);
    pthread_mutex_unlock(&c->lock);
    if (count == 0)
        return;
    tlog_backend_report_(c->log, TLOG_EDEVICE,
                         "OpenCL: %s %d (%s) for %llu marker(s); the device scopes around "
                         "them show unresolved",
                         query_failed ? "reading a marker's event failed with"
                                      : "a command ended with execution status",
                         (int)status,
                         query_failed ? cl_error_name(status) : exec_status_name(status),
                         (unsigned long long)count);
}

/* ------------------------------------------------------------------------ */
/* Markers                                                                  */
/* ------------------------------------------------------------------------ */

static int cl_marker_create(void *impl, tlog_marker *out)
{
    (void)impl;
    cl_marker *m = calloc(1, sizeof *m);
    if (!m)
        return TLOG_ENOMEM;
    atomic_init(&m->state, MARK_IDLE);
    *out = (tlog_marker)m;
    return TLOG_OK;
}

static void let_go(cl_marker *m)
{
    if (m->event)
        clReleaseEvent(m->event);
    if (m->queue)
        clReleaseCommandQueue(m->queue);
    m->event = NULL;
    m->queue = NULL;
}

/* A marker still in flight is destroyed only when its device goes: OpenCL
 * lets the command run on after its event is released. */
static void cl_marker_destroy(void *impl, tlog_marker marker)
{
    (void)impl;
    cl_marker *m = (cl_marker *)marker;
    let_go(m);
    free(m);
}

/* Puts m on q: a barrier on an out-of-order queue, a marker on an in-order
 * one (see the header for why). */
static cl_int enqueue(cl_command_queue q, bool out_of_order, cl_marker *m, bool queued_time)
{
    if (atomic_load_explicit(&m->state, memory_order_relaxed) == MARK_FLIGHT)
        return CL_INVALID_OPERATION;   /* the core never re-records one in flight */
    cl_event ev = NULL;
    cl_int e = out_of_order ? clEnqueueBarrierWithWaitList(q, 0, NULL, &ev)
                            : clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
    if (e != CL_SUCCESS)
        return e;
    clRetainCommandQueue(q);
    m->event = ev;
    m->queue = q;
    m->flushed = false;
    m->queued_time = queued_time;
    atomic_store_explicit(&m->state, MARK_FLIGHT, memory_order_release);
    return CL_SUCCESS;
}

/* A queue that scopes cannot be timed on, reported once in a row. */
static int refuse_queue(cl_impl *c, cl_command_queue q, const char *why)
{
    if (atomic_exchange(&c->refused_queue, q) != q)
        tlog_backend_report_(c->log, TLOG_EINVAL,
                             "OpenCL: queue %p %s; device scopes on it are not timed "
                             "(counted in scopes_failed)",
                             (void *)q, why);
    return TLOG_EINVAL;
}

static int cl_record(void *impl, void *queue, tlog_marker marker)
{
    cl_impl *c = impl;
    cl_command_queue q = queue;
    report_kept_failure(c);
    if (!q)
        return refuse_queue(c, q, "is NULL (OpenCL has no default queue)");
    cl_command_queue_properties props = 0;
    cl_device_id device = NULL;
    cl_int e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (e == CL_SUCCESS)
        e = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
    if (e != CL_SUCCESS)
        return refuse_queue(c, q, "cannot be asked for its properties (not a queue?)");
    if (device != c->device)
        return refuse_queue(c, q, "belongs to another device than the tlog_device's");
    if (!(props & CL_QUEUE_PROFILING_ENABLE))
        return refuse_queue(c, q, "was created without CL_QUEUE_PROFILING_ENABLE");
    e = enqueue(q, props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, (cl_marker *)marker, false);
    if (e != CL_SUCCESS) {
        tlog_backend_report_(c->log, TLOG_EDEVICE,
                             "OpenCL: queue %p refused a marker: %d (%s)", (void *)q, (int)e,
                             cl_error_name(e));
        return TLOG_EDEVICE;
    }
    return TLOG_OK;
}

/* Markers on the own queue while it is not held are anchors: they read the
 * device time at which the host enqueued them, taken inside the enqueue
 * call (see the header). The flush bounds that time on an implementation
 * that would stamp it only when the queue is flushed. Markers recorded
 * while the queue is held (the calibration) read their completion, as
 * scopes do. */
static int cl_record_own(void *impl, tlog_marker marker)
{
    cl_impl *c = impl;
    cl_int e = enqueue(c->own, false, (cl_marker *)marker, !c->held);
    if (e == CL_SUCCESS && !c->held)
        e = clFlush(c->own);
    return status_of(e);
}

/* Keeps a failure for report_kept_failure. Caller holds c->lock. */
static void keep_failure(cl_impl *c, cl_int status, bool query_failed)
{
    if (c->failure.count++ == 0) {
        c->failure.status = status;
        c->failure.query_failed = query_failed;
    }
    atomic_store_explicit(&c->failure_kept, true, memory_order_release);
}

/* Caller holds c->lock. */
static int settle_locked(cl_impl *c, cl_marker *m)
{
    int state = atomic_load_explicit(&m->state, memory_order_acquire);
    if (state != MARK_FLIGHT)
        return state == MARK_FAILED ? TLOG_EDEVICE : TLOG_OK;
    cl_int status = CL_QUEUED;
    cl_int e = clGetEventInfo(m->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                              &status, NULL);
    if (e == CL_SUCCESS && status == CL_COMPLETE) {
        cl_ulong t = 0;
        e = clGetEventProfilingInfo(m->event,
                                    m->queued_time ? CL_PROFILING_COMMAND_QUEUED
                                                   : CL_PROFILING_COMMAND_END,
                                    sizeof t, &t, NULL);
        if (e == CL_SUCCESS) {
            m->stamp = t;
            let_go(m);
            atomic_store_explicit(&m->state, MARK_DONE, memory_order_release);
            return TLOG_OK;
        }
    }
    if (e == CL_SUCCESS && status > CL_COMPLETE) {
        if (status == CL_QUEUED && !m->flushed) {
            clFlush(m->queue);
            m->flushed = true;
        }
        return TLOG_PENDING;
    }
    keep_failure(c, e != CL_SUCCESS ? e : status, e != CL_SUCCESS);
    let_go(m);
    atomic_store_explicit(&m->state, MARK_FAILED, memory_order_release);
    return TLOG_EDEVICE;
}

/* Whether the marker's command has completed, reading its time if so.
 * Never blocks. A marker never recorded counts as reached. */
static int settle(cl_impl *c, cl_marker *m)
{
    int state = atomic_load_explicit(&m->state, memory_order_acquire);
    if (state != MARK_FLIGHT)
        return state == MARK_FAILED ? TLOG_EDEVICE : TLOG_OK;
    pthread_mutex_lock(&c->lock);
    int rc = settle_locked(c, m);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static int cl_query(void *impl, tlog_marker marker)
{
    return settle(impl, (cl_marker *)marker);
}

static int cl_elapsed(void *impl, tlog_marker from, tlog_marker to, int64_t *ns)
{
    cl_marker *a = (cl_marker *)from, *b = (cl_marker *)to;
    int rc = settle(impl, a);
    if (rc == TLOG_OK)
        rc = settle(impl, b);
    if (rc != TLOG_OK)
        return rc;
    if (atomic_load(&a->state) != MARK_DONE || atomic_load(&b->state) != MARK_DONE)
        return TLOG_EDEVICE;   /* never recorded: no time to read */
    *ns = (int64_t)(b->stamp - a->stamp);
    return TLOG_OK;
}

/* The own queue waits for a user event until release_own completes it, so
 * that the calibration's markers run back to back however slowly the host
 * enqueues them. */
static int cl_hold_own(void *impl, void **hold)
{
    cl_impl *c = impl;
    cl_int e = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(c->context, &e);
    if (e == CL_SUCCESS)
        e = clEnqueueMarkerWithWaitList(c->own, 1, &gate, NULL);
    if (e != CL_SUCCESS) {
        if (gate)
            clReleaseEvent(gate);
        *hold = NULL;
        return status_of(e);
    }
    c->held = true;
    *hold = gate;
    return TLOG_OK;
}

static int cl_release_own(void *impl, void *hold)
{
    cl_impl *c = impl;
    cl_event gate = hold;
    cl_int e = clSetUserEventStatus(gate, CL_COMPLETE);
    clReleaseEvent(gate);
    c->held = false;
    if (e == CL_SUCCESS)
        e = clFlush(c->own);
    return status_of(e);
}

/* Platforms with clGetDeviceAndHostTimer: the device clock read now. */
static int cl_mark_now(void *impl, tlog_marker marker)
{
    cl_impl *c = impl;
    cl_marker *m = (cl_marker *)marker;
    if (atomic_load(&m->state) == MARK_FLIGHT)
        return TLOG_EBUSY;
    cl_ulong device = 0, host = 0;
    cl_int e = clGetDeviceAndHostTimer(c->device, &device, &host);
    if (e != CL_SUCCESS)
        return status_of(e);
    m->stamp = device;
    atomic_store_explicit(&m->state, MARK_DONE, memory_order_release);
    return TLOG_OK;
}

static void impl_free(cl_impl *c)
{
    if (c->own)
        clReleaseCommandQueue(c->own);
    if (c->context)
        clReleaseContext(c->context);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void cl_destroy(void *impl)
{
    impl_free(impl);
}

#define CL_OPS_COMMON                                                        \
    .size = sizeof(tlog_device_ops), .abi = TLOG_DEVICE_ABI, .backend = "opencl", \
    .marker_create = cl_marker_create, .marker_destroy = cl_marker_destroy,   \
    .record = cl_record, .record_own = cl_record_own, .query = cl_query,      \
    .elapsed_ns = cl_elapsed, .hold_own = cl_hold_own,                        \
    .release_own = cl_release_own, .destroy = cl_destroy

/* Anchors from a marker on the own queue (no device clock read). */
static const tlog_device_ops cl_ops = {CL_OPS_COMMON};
/* Anchors from clGetDeviceAndHostTimer. */
static const tlog_device_ops cl_timer_ops = {CL_OPS_COMMON, .mark_now = cl_mark_now};

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

static int no_device(tlog_log *log, const char *why, cl_int e)
{
    tlog_backend_report_(log, TLOG_ENODEVICE, "OpenCL: %s (%d, %s); OpenCL scopes are not timed",
                         why, (int)e, cl_error_name(e));
    return TLOG_ENODEVICE;
}

/* The first device of the first platform that has one, in a context of its
 * own. */
static int find_device(tlog_log *log, cl_impl *c)
{
    cl_uint n = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &n);
    if (e != CL_SUCCESS || n == 0)
        return no_device(log, "no platform (clGetPlatformIDs)", e);
    cl_platform_id *platforms = calloc(n, sizeof *platforms);
    if (!platforms)
        return TLOG_ENOMEM;
    e = clGetPlatformIDs(n, platforms, NULL);
    cl_platform_id platform = NULL;
    for (cl_uint i = 0; e == CL_SUCCESS && i < n && !platform; i++) {
        cl_uint found = 0;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &c->device, &found) ==
                CL_SUCCESS &&
            found > 0)
            platform = platforms[i];
    }
    free(platforms);
    if (!platform)
        return no_device(log, "no device on any platform", e != CL_SUCCESS ? e : CL_DEVICE_NOT_FOUND);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    c->context = clCreateContext(props, 1, &c->device, NULL, NULL, &e);
    return status_of(e);
}

static bool version_at_least(const char *text, int major, int minor)
{
    int ma = 0, mi = 0;
    if (sscanf(text, "OpenCL %d.%d", &ma, &mi) != 2)
        return false;
    return ma > major || (ma == major && mi >= minor);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether the platform has clGetDeviceAndHostTimer, and answers it quickly
 * enough to anchor with. */
static bool host_timer_usable(cl_impl *c)
{
    cl_platform_id platform = NULL;
    char version[128] = "";
    if (clGetDeviceInfo(c->device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) !=
            CL_SUCCESS ||
        clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof version - 1, version, NULL) !=
            CL_SUCCESS ||
        !version_at_least(version, 2, 1))
        return false;
    memset(version, 0, sizeof version);
    cl_ulong resolution = 0;
    if (clGetDeviceInfo(c->device, CL_DEVICE_VERSION, sizeof version - 1, version, NULL) !=
            CL_SUCCESS ||
        !version_at_least(version, 2, 1) ||
        clGetPlatformInfo(platform, CL_PLATFORM_HOST_TIMER_RESOLUTION, sizeof resolution,
                          &resolution, NULL) != CL_SUCCESS ||
        resolution == 0)
        return false;
    int64_t took[HOST_TIMER_TRIES];
    for (int i = 0; i < HOST_TIMER_TRIES; i++) {
        cl_ulong device = 0, host = 0;
        int64_t t0 = mono_ns();
        if (clGetDeviceAndHostTimer(c->device, &device, &host) != CL_SUCCESS)
            return false;
        took[i] = mono_ns() - t0;
    }
    qsort(took, HOST_TIMER_TRIES, sizeof took[0], cmp_i64);
    return took[HOST_TIMER_TRIES / 2] <= HOST_TIMER_MAX_NS;
}

/* Where `device` is among every platform's devices in turn (UINT32_MAX if
 * not found, as a sub-device is), which tells two devices of one model
 * apart, as CUDA's ordinal does. */
static uint32_t place_of(cl_device_id device)
{
    cl_uint nplatforms = 0;
    uint32_t place = UINT32_MAX, before = 0;
    if (clGetPlatformIDs(0, NULL, &nplatforms) != CL_SUCCESS || nplatforms == 0)
        return place;
    cl_platform_id *platforms = calloc(nplatforms, sizeof *platforms);
    if (!platforms || clGetPlatformIDs(nplatforms, platforms, NULL) != CL_SUCCESS)
        nplatforms = 0;
    for (cl_uint i = 0; i < nplatforms && place == UINT32_MAX; i++) {
        cl_uint n = 0;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 0, NULL, &n) != CL_SUCCESS || !n)
            continue;
        cl_device_id *devices = calloc(n, sizeof *devices);
        if (devices && clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, n, devices, NULL) ==
                           CL_SUCCESS)
            for (cl_uint k = 0; k < n && place == UINT32_MAX; k++)
                if (devices[k] == device)
                    place = before + k;
        free(devices);
        before += n;
    }
    free(platforms);
    return place;
}

/* The device's name ("model (N)", N its place_of), and its own in-order
 * profiled queue. */
static int impl_setup(tlog_log *log, cl_impl *c, cl_context context, cl_device_id device,
                      char *name, size_t name_size)
{
    int rc = TLOG_OK;
    if (!device) {
        rc = find_device(log, c);
    } else {
        cl_int e = clRetainContext(context);
        if (e != CL_SUCCESS)
            return status_of(e);
        c->context = context;
        c->device = device;
    }
    if (rc != TLOG_OK)
        return rc;
    char text[256] = "";
    if (clGetDeviceInfo(c->device, CL_DEVICE_NAME, sizeof text - 1, text, NULL) == CL_SUCCESS &&
        text[0]) {
        uint32_t place = place_of(c->device);
        if (place == UINT32_MAX)
            snprintf(name, name_size, "%s", text);
        else
            snprintf(name, name_size, "%s (%u)", text, place);
    }
    cl_int e = CL_SUCCESS;
    c->own = clCreateCommandQueue(c->context, c->device, CL_QUEUE_PROFILING_ENABLE, &e);
    return status_of(e);
}

int tlog_cl_device_create(tlog_log *log, cl_context context, cl_device_id device,
                          const tlog_device_config *config, tlog_device **out)
{
    if (!out || (!context) != (!device))
        return TLOG_EINVAL;
    *out = NULL;
    cl_impl *c = calloc(1, sizeof *c);
    if (!c)
        return TLOG_ENOMEM;
    pthread_mutex_init(&c->lock, NULL);
    atomic_init(&c->refused_queue, (cl_command_queue)(void *)c);
    c->log = log;
    char name[280] = "OpenCL device";   /* CL_DEVICE_NAME and " (N)" */
    int rc = impl_setup(log, c, context, device, name, sizeof name);
    if (rc == TLOG_OK) {
        const tlog_device_ops *ops = host_timer_usable(c) ? &cl_timer_ops : &cl_ops;
        rc = tlog_device_register_(log, ops, c, name, config, out);
    }
    if (rc != TLOG_OK && rc != TLOG_ENODEVICE)
        tlog_backend_report_(log, rc, "OpenCL: cannot set up %s: %s", name, tlog_strerror(rc));
    if (rc != TLOG_OK)
        impl_free(c);
    return rc;
}

cl_context tlog_cl_context(const tlog_device *dev)
{
    if (!dev)
        return NULL;
    tlog_device_info info = {.size = sizeof info};
    if (tlog_device_get_info(dev, &info) != TLOG_OK || strcmp(info.backend, cl_ops.backend))
        return NULL;
    return ((cl_impl *)tlog_device_impl_(dev))->context;
}

static _Atomic uint64_t untimed;

uint64_t tlog_cl_scopes_untimed(void)
{
    return atomic_load(&untimed);
}

tlog_device_scope tlog_cl_begin(tlog_device *dev, cl_command_queue queue, const tlog_site *site)
{
    if (!dev) {
        tlog_device_scope none = {NULL, 0};
        atomic_fetch_add_explicit(&untimed, 1, memory_order_relaxed);
        return none;
    }
    return tlog_device_begin(dev, queue, site);
}
