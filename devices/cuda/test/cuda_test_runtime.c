/*
 * The test CUDA runtime: the CUDA runtime calls that libtimerlog-cuda and its
 * tests make, on the simulated device, built as a shared library that stands
 * in for the toolkit's libcudart (see cuda_test_runtime.h for its hooks).
 * It follows the CUDA runtime API documentation, not what the backend
 * expects of it; where the documentation leaves room, it takes the stricter
 * reading, so that a backend that passes here does not lean on leniency.
 *
 * What it keeps of CUDA:
 *  - devices: a count from TLOG_TEST_CUDA_DEVICES (0: cudaErrorNoDevice), a
 *    current device per thread (0 at first), one simulator and clock per
 *    device;
 *  - streams: in-order queues. Non-blocking streams run independently; the
 *    legacy stream (NULL), blocking streams and cudaStreamPerThread of a
 *    device share one queue, which keeps the legacy stream's implicit
 *    synchronization (CUDA may also run blocking streams concurrently;
 *    here they never do). A kernel launches on the calling thread's current
 *    device: a stream of another device is refused;
 *  - events: timestamps taken when their stream reaches them, 1 us of queue
 *    time each; an event belongs to the device current at its creation and
 *    is recorded only on that device's streams; elapsed time in float
 *    milliseconds, rounded to 0.5 us; never-recorded, timing-disabled or
 *    cross-device pairs are cudaErrorInvalidResourceHandle;
 *  - stream capture (cudaStreamBeginCapture/EndCapture), as the CUDA
 *    programming guide's rules: work and events on a capturing stream go
 *    into the capture and do not run; synchronizing a capturing stream or
 *    its device, reading an event recorded in a capture, or using the
 *    legacy stream while a blocking stream of its device captures is
 *    refused and invalidates the capture, whatever the thread's mode.
 *    Potentially unsafe calls (event query, synchronize and elapsed time,
 *    stream and device synchronize, cudaMalloc/cudaFree, library load and
 *    unload) follow cudaThreadExchangeStreamCaptureMode: refused with
 *    cudaErrorStreamCaptureUnsupported, and the captures that forbid them
 *    invalidated, unless the calling thread is in relaxed mode. CUDA names
 *    cudaMalloc and cudaEventQuery but leaves the rest open: elapsed time,
 *    library load and unload, event creation and destruction are counted
 *    here (stricter); stream creation and destruction, records and launches
 *    are not;
 *  - errors: a last error per thread, set by every failing call but
 *    cudaErrorNotReady ("not actually an error", says CUDA); a lost device
 *    (an injected fault) fails every later call on it with a sticky
 *    cudaErrorLaunchFailure, which cudaGetLastError cannot clear;
 *  - libraries: PTX text only (a cubin or fatbin is cudaErrorInvalidPtx), of
 *    PTX ISA 9.0 or older for targets up to sm_90, the simulated devices'
 *    compute capability.
 *
 * The simulators are created at the first call and live until the process
 * ends. Streams, events, libraries and graphs are freed when destroyed;
 * simulator queues stay (work enqueued before a destroy still runs).
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_test_runtime.h"
#include "timerlog/sim.h"

/* Built with -fvisibility=hidden: the CUDA entry points and the hooks are
 * the library's interface. */
#define API __attribute__((visibility("default")))

#define MAX_DEVICES 16
#define MARKER_NS 1000u
#define RESOLUTION_NS 500          /* cudaEventElapsedTime: "around 0.5 us" */
#define ORIGIN_NS UINT64_C(1000000000000)   /* device d's clock starts at d x this */
#define DRIFT_PPM 50               /* and runs d x this fast */
#define SIM_PENDING 1              /* the simulator's "not yet" */
#define FOREVER_NS (UINT64_C(1) << 62)
#define PTX_ISA_MAX 90             /* PTX ISA 9.0, CUDA 13 */
#define SM_MAX 90

#define STREAM_MAGIC 0x43555354u   /* "CUST" */
#define EVENT_MAGIC 0x43554556u    /* "CUEV" */
#define LIBRARY_MAGIC 0x43554c42u  /* "CULB" */
#define GRAPH_MAGIC 0x43554752u    /* "CUGR" */

#define EVENT_FLAGS                                                           \
    ((unsigned)(cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess))

enum event_state { EV_EMPTY, EV_RECORDED, EV_CAPTURED };

typedef struct capture capture;

struct CUstream_st {
    uint32_t magic;
    int device;
    unsigned flags;
    tlog_sim_queue *queue;      /* the device's shared queue unless non-blocking */
    capture *capture;           /* under rt.lock */
    tlog_sim_gate *gate;        /* tlog_test_cuda_hold */
};

struct CUevent_st {
    uint32_t magic;
    int device;                 /* current device at creation */
    unsigned flags;
    tlog_sim_marker *marker;
    _Atomic int state;
    _Atomic unsigned long long capture_id;   /* EV_CAPTURED: where (0: gone) */
};

struct CUgraphNode_st {
    uint64_t ns;                /* a kernel's duration */
};

struct CUgraph_st {
    uint32_t magic;
    size_t n, cap;
    struct CUgraphNode_st *nodes;
};

/* A capture sequence, from cudaStreamBeginCapture to cudaStreamEndCapture. */
struct capture {
    capture *next;
    struct CUstream_st *stream;
    int device;
    bool blocking;              /* its stream synchronizes with the legacy stream */
    enum cudaStreamCaptureMode mode;
    pthread_t thread;           /* the one that began it */
    unsigned long long id;
    bool invalidated;
    struct CUgraph_st *graph;
};

struct CUkern_st {
    char name[128];
    unsigned params;
    bool timed;                 /* its first parameter is a .u64 *_ns */
};

struct CUlib_st {
    uint32_t magic;
    struct CUlib_st *next;      /* in rt.libraries */
    size_t n;
    struct CUkern_st kernels[];
};

/* Every queue of a device, for cudaDeviceSynchronize: pushed at the head,
 * never removed, so a list read from the head stays valid. */
typedef struct queue_entry {
    struct queue_entry *next;
    tlog_sim_queue *queue;
} queue_entry;

typedef struct device {
    tlog_sim *sim;
    tlog_sim_queue *shared;     /* legacy, blocking and per-thread streams */
    _Atomic(queue_entry *) queues;
    uint64_t origin;
    uint64_t drift_ppm;
    atomic_bool lost;           /* a sticky error */
} device;

static struct {
    int count;
    bool ok;                    /* set up (or nothing to set up) */
    uint64_t t0;
    device dev[MAX_DEVICES];
    pthread_mutex_t lock;       /* libraries and captures */
    struct CUlib_st *libraries;
    capture *captures;
    atomic_int ncaptures;       /* read without the lock by every call */
    unsigned long long capture_ids;
} rt = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static struct {
    _Atomic uint64_t live, max_live, created, records, records_captured, queries, syncs,
        launches, exchanges, invalidated;
    _Atomic uint64_t record_delay_ns;   /* tlog_test_cuda_set_record_delay */
    _Atomic unsigned faults[TLOG_SIM_FAULT_STALL + 1];
} stats;

static _Thread_local int tl_device;
static _Thread_local cudaError_t tl_last_error;
static _Thread_local enum cudaStreamCaptureMode tl_mode;   /* Global */
/* cudaStreamPerThread on each device: made when first used. */
static _Thread_local struct CUstream_st tl_per_thread[MAX_DEVICES];

#define COUNT(f) atomic_fetch_add_explicit(&stats.f, 1, memory_order_relaxed)

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* Device d's clock: its own origin and rate, so that nothing can pass for
 * another device's time. */
static uint64_t device_clock(void *user)
{
    const device *d = user;
    uint64_t t = monotonic_ns() - rt.t0;
    return d->origin + t + t * d->drift_ppm / 1000000u;
}

/* The device count from the environment; 1 if unset or not a number. */
static int env_devices(void)
{
    const char *s = getenv("TLOG_TEST_CUDA_DEVICES");
    if (!s || !*s)
        return 1;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end)
        return 1;
    return v < 0 ? 0 : v > MAX_DEVICES ? MAX_DEVICES : (int)v;
}

static tlog_sim_queue *new_queue(int d)
{
    queue_entry *e = malloc(sizeof *e);
    if (!e)
        return NULL;
    e->queue = tlog_sim_queue_create(rt.dev[d].sim);
    if (!e->queue) {
        free(e);
        return NULL;
    }
    e->next = atomic_load_explicit(&rt.dev[d].queues, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&rt.dev[d].queues, &e->next, e,
                                                  memory_order_release,
                                                  memory_order_relaxed))
        ;
    return e->queue;
}

static void rt_init(void)
{
    rt.count = env_devices();
    rt.t0 = monotonic_ns();
    for (int d = 0; d < rt.count; d++) {
        device *dv = &rt.dev[d];
        dv->origin = (uint64_t)d * ORIGIN_NS;
        dv->drift_ppm = (uint64_t)d * DRIFT_PPM;
        tlog_sim_config cfg = {.size = sizeof cfg, .clock = device_clock, .clock_user = dv,
                               .marker_ns = MARKER_NS};
        if (tlog_sim_create(&cfg, &dv->sim) != TLOG_OK || !(dv->shared = new_queue(d)))
            return;
    }
    rt.ok = true;
}

/* cudaSuccess once the runtime is up with a device, or why not. */
static cudaError_t ready(void)
{
    pthread_once(&rt_once, rt_init);
    if (!rt.ok)
        return cudaErrorInitializationError;
    return rt.count ? cudaSuccess : cudaErrorNoDevice;
}

/* Returns `e`, kept as the thread's last error if it is a failure. */
static cudaError_t done(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        tl_last_error = e;
    return e;
}

/* The sticky error of a lost device. */
static cudaError_t usable(int d)
{
    return atomic_load_explicit(&rt.dev[d].lost, memory_order_acquire) ? cudaErrorLaunchFailure
                                                                       : cudaSuccess;
}

static cudaError_t from_sim(int rc)
{
    switch (rc) {
    case TLOG_OK: return cudaSuccess;
    case SIM_PENDING: return cudaErrorNotReady;
    case TLOG_ENOMEM: return cudaErrorMemoryAllocation;
    case TLOG_EINVAL: return cudaErrorInvalidValue;
    default: return cudaErrorUnknown;
    }
}

/* Takes one armed occurrence of `fault`. */
static bool take_fault(int fault)
{
    unsigned n = atomic_load_explicit(&stats.faults[fault], memory_order_relaxed);
    while (n && !atomic_compare_exchange_weak_explicit(&stats.faults[fault], &n, n - 1,
                                                       memory_order_relaxed,
                                                       memory_order_relaxed))
        ;
    return n != 0;
}

/* ------------------------------------------------------------------------ */
/* Streams                                                                  */
/* ------------------------------------------------------------------------ */

/* Where a stream handle puts its work. */
typedef struct target {
    struct CUstream_st *s;      /* NULL: the legacy stream */
    int device;
    tlog_sim_queue *queue;
} target;

static struct CUstream_st *per_thread(int d)
{
    struct CUstream_st *s = &tl_per_thread[d];
    if (s->magic != STREAM_MAGIC)
        *s = (struct CUstream_st){.magic = STREAM_MAGIC, .device = d,
                                  .flags = cudaStreamDefault, .queue = rt.dev[d].shared};
    return s;
}

/* Caller checked ready(). NULL is the legacy stream: this library is the
 * runtime of code built without per-thread default streams. */
static cudaError_t resolve(cudaStream_t stream, target *t)
{
    int d = tl_device;
    if (stream == NULL || stream == cudaStreamLegacy) {
        *t = (target){NULL, d, rt.dev[d].shared};
        return usable(d);
    }
    struct CUstream_st *s = stream == cudaStreamPerThread ? per_thread(d) : stream;
    if (s->magic != STREAM_MAGIC)
        return cudaErrorInvalidResourceHandle;
    *t = (target){s, s->device, s->queue};
    return usable(s->device);
}

static bool any_captures(void)
{
    return atomic_load_explicit(&rt.ncaptures, memory_order_acquire) > 0;
}

/* Caller holds rt.lock. */
static void invalidate(capture *c)
{
    if (!c->invalidated)
        COUNT(invalidated);
    c->invalidated = true;
}

/*
 * A potentially unsafe call (one not enqueued in a stream, which a capture
 * cannot record): refused, and the captures that forbid it invalidated,
 * unless the calling thread is in relaxed mode. Its own captures forbid it
 * unless begun in relaxed mode; in global mode, so do other threads'
 * captures begun in global mode. A capture already invalidated forbids
 * nothing more: the first violation was the one reported.
 */
static cudaError_t unsafe_call(void)
{
    if (!any_captures() || tl_mode == cudaStreamCaptureModeRelaxed)
        return cudaSuccess;
    pthread_t self = pthread_self();
    bool refused = false;
    pthread_mutex_lock(&rt.lock);
    for (capture *c = rt.captures; c; c = c->next) {
        if (c->invalidated)
            continue;
        bool forbids = pthread_equal(c->thread, self)
                           ? c->mode != cudaStreamCaptureModeRelaxed
                           : tl_mode == cudaStreamCaptureModeGlobal &&
                                 c->mode == cudaStreamCaptureModeGlobal;
        if (forbids) {
            invalidate(c);
            refused = true;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return refused ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

/* Use of device d's legacy stream while a blocking stream of d captures:
 * it would depend on the capture. `breaks`: the use invalidates it
 * (cudaStreamIsCapturing, which only asks, does not). */
static cudaError_t legacy_use(int d, bool breaks)
{
    if (!any_captures())
        return cudaSuccess;
    bool hit = false;
    pthread_mutex_lock(&rt.lock);
    for (capture *c = rt.captures; c; c = c->next) {
        if (c->device != d || !c->blocking)
            continue;
        hit = true;
        if (breaks)
            invalidate(c);
    }
    pthread_mutex_unlock(&rt.lock);
    return hit ? cudaErrorStreamCaptureImplicit : cudaSuccess;
}

/* Synchronizing with stream s (NULL: all of device d) while it captures:
 * invalid in any mode, and the capture is invalidated. */
static cudaError_t sync_conflict(struct CUstream_st *s, int d)
{
    if (!any_captures())
        return cudaSuccess;
    bool hit = false;
    pthread_mutex_lock(&rt.lock);
    for (capture *c = rt.captures; c; c = c->next) {
        if (s ? c->stream != s : c->device != d)
            continue;
        hit = true;
        invalidate(c);
    }
    pthread_mutex_unlock(&rt.lock);
    return hit ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

/* Using an event last recorded in capture `id`: invalid in any mode, and
 * that capture, if still open, is invalidated. */
static cudaError_t captured_event_use(unsigned long long id)
{
    pthread_mutex_lock(&rt.lock);
    for (capture *c = rt.captures; c; c = c->next)
        if (c->id == id)
            invalidate(c);
    pthread_mutex_unlock(&rt.lock);
    return cudaErrorCapturedEvent;
}

static cudaError_t graph_add(struct CUgraph_st *g, uint64_t ns)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        struct CUgraphNode_st *grown = realloc(g->nodes, cap * sizeof *grown);
        if (!grown)
            return cudaErrorMemoryAllocation;
        g->nodes = grown;
        g->cap = cap;
    }
    g->nodes[g->n++].ns = ns;
    return cudaSuccess;
}

/* Whether what is enqueued on t goes into a capture rather than run: *id is
 * the capture's (0: it runs). A kernel becomes a node of its graph. Once the
 * capture is invalidated, its stream refuses work. */
static cudaError_t into_capture(const target *t, bool kernel, uint64_t ns,
                                unsigned long long *id)
{
    *id = 0;
    if (!t->s || !any_captures())
        return cudaSuccess;
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&rt.lock);
    capture *c = t->s->capture;
    if (c && c->invalidated)
        e = cudaErrorStreamCaptureInvalidated;
    else if (c && kernel)
        e = graph_add(c->graph, ns);
    if (c && e == cudaSuccess)
        *id = c->id;
    pthread_mutex_unlock(&rt.lock);
    return e;
}

/* Work of `ns` on t, as cudaLaunchKernel puts it there. */
static cudaError_t enqueue(const target *t, uint64_t ns)
{
    cudaError_t e = t->s ? cudaSuccess : legacy_use(t->device, true);
    unsigned long long id = 0;
    if (e == cudaSuccess)
        e = into_capture(t, true, ns, &id);
    if (e != cudaSuccess || id)
        return e;
    COUNT(launches);
    return from_sim(tlog_sim_launch(rt.dev[t->device].sim, t->queue, ns));
}

API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    cudaError_t e = ready();
    if (e == cudaSuccess && (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking)))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = usable(tl_device);
    struct CUstream_st *s = e == cudaSuccess ? calloc(1, sizeof *s) : NULL;
    if (e == cudaSuccess && !s)
        e = cudaErrorMemoryAllocation;
    if (e != cudaSuccess)
        return done(e);
    s->device = tl_device;
    s->flags = flags;
    s->queue = (flags & cudaStreamNonBlocking) ? new_queue(s->device)
                                               : rt.dev[s->device].shared;
    if (!s->queue) {
        free(s);
        return done(cudaErrorMemoryAllocation);
    }
    s->magic = STREAM_MAGIC;
    *pStream = s;
    return cudaSuccess;
}

API cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

/* Work already enqueued still runs, as in CUDA. A stream being captured
 * cannot go before its capture ends. */
API cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return done(e);
    if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread ||
        stream->magic != STREAM_MAGIC)
        return done(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&rt.lock);
    bool capturing = stream->capture != NULL;
    pthread_mutex_unlock(&rt.lock);
    if (capturing)
        return done(cudaErrorStreamCaptureUnsupported);
    stream->magic = 0;
    tlog_sim_gate_destroy(rt.dev[stream->device].sim, stream->gate);
    e = usable(stream->device);
    free(stream);
    return done(e);
}

API cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    cudaError_t e = ready();
    target t;
    if (e == cudaSuccess)
        e = resolve(stream, &t);
    if (e != cudaSuccess)
        return done(e);
    COUNT(syncs);
    e = t.s ? sync_conflict(t.s, t.device) : legacy_use(t.device, true);
    if (e == cudaSuccess)
        e = unsafe_call();
    if (e == cudaSuccess)
        e = from_sim(tlog_sim_queue_sync(rt.dev[t.device].sim, t.queue));
    return done(e);
}

API cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
    cudaError_t e = ready();
    target t;
    if (e == cudaSuccess && !device)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = resolve(hStream, &t);
    if (e == cudaSuccess)
        *device = t.device;
    return done(e);
}

API cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                      enum cudaStreamCaptureStatus *pCaptureStatus)
{
    cudaError_t e = ready();
    target t;
    if (e == cudaSuccess && !pCaptureStatus)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = resolve(stream, &t);
    if (e == cudaSuccess && !t.s)
        e = legacy_use(t.device, false);
    if (e != cudaSuccess)
        return done(e);
    *pCaptureStatus = cudaStreamCaptureStatusNone;
    if (t.s && any_captures()) {
        pthread_mutex_lock(&rt.lock);
        capture *c = t.s->capture;
        if (c)
            *pCaptureStatus = c->invalidated ? cudaStreamCaptureStatusInvalidated
                                             : cudaStreamCaptureStatusActive;
        pthread_mutex_unlock(&rt.lock);
    }
    return cudaSuccess;
}

API cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (!mode || (*mode != cudaStreamCaptureModeGlobal &&
                  *mode != cudaStreamCaptureModeThreadLocal &&
                  *mode != cudaStreamCaptureModeRelaxed))
        return done(cudaErrorInvalidValue);
    COUNT(exchanges);
    enum cudaStreamCaptureMode prev = tl_mode;
    tl_mode = *mode;
    *mode = prev;
    return cudaSuccess;
}

API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    cudaError_t e = ready();
    target t;
    if (e == cudaSuccess && mode != cudaStreamCaptureModeGlobal &&
        mode != cudaStreamCaptureModeThreadLocal && mode != cudaStreamCaptureModeRelaxed)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = resolve(stream, &t);
    if (e == cudaSuccess && !t.s)
        e = cudaErrorStreamCaptureUnsupported;   /* the legacy stream */
    capture *c = e == cudaSuccess ? calloc(1, sizeof *c) : NULL;
    struct CUgraph_st *g = c ? calloc(1, sizeof *g) : NULL;
    if (e == cudaSuccess && !g)
        e = cudaErrorMemoryAllocation;
    if (e != cudaSuccess) {
        free(c);
        return done(e);
    }
    g->magic = GRAPH_MAGIC;
    *c = (capture){.stream = t.s, .device = t.device, .mode = mode, .graph = g,
                   .blocking = !(t.s->flags & cudaStreamNonBlocking),
                   .thread = pthread_self()};
    pthread_mutex_lock(&rt.lock);
    if (t.s->capture) {
        e = cudaErrorIllegalState;
    } else {
        c->id = ++rt.capture_ids;
        c->next = rt.captures;
        rt.captures = t.s->capture = c;
        atomic_fetch_add_explicit(&rt.ncaptures, 1, memory_order_release);
    }
    pthread_mutex_unlock(&rt.lock);
    if (e != cudaSuccess) {
        free(g);
        free(c);
    }
    return done(e);
}

/* Caller holds rt.lock. */
static void capture_unlink(capture *c)
{
    for (capture **p = &rt.captures; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    c->stream->capture = NULL;
    atomic_fetch_sub_explicit(&rt.ncaptures, 1, memory_order_release);
}

API cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (!graph || graph->magic != GRAPH_MAGIC)
        return done(cudaErrorInvalidValue);
    graph->magic = 0;
    free(graph->nodes);
    free(graph);
    return cudaSuccess;
}

API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    cudaError_t e = ready();
    target t;
    if (e == cudaSuccess && !pGraph)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = resolve(stream, &t);
    if (e != cudaSuccess)
        return done(e);
    pthread_mutex_lock(&rt.lock);
    capture *c = t.s ? t.s->capture : NULL;
    if (!c)
        e = cudaErrorIllegalState;
    else if (c->mode != cudaStreamCaptureModeRelaxed &&
             !pthread_equal(c->thread, pthread_self()))
        e = cudaErrorStreamCaptureWrongThread;
    else
        capture_unlink(c);
    pthread_mutex_unlock(&rt.lock);
    if (e != cudaSuccess)
        return done(e);
    *pGraph = c->invalidated ? NULL : c->graph;
    if (c->invalidated) {
        cudaGraphDestroy(c->graph);
        e = cudaErrorStreamCaptureInvalidated;
    }
    free(c);
    return done(e);
}

API cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
    if (!graph || graph->magic != GRAPH_MAGIC || !numNodes)
        return done(cudaErrorInvalidValue);
    if (nodes) {
        for (size_t i = 0; i < *numNodes; i++)
            nodes[i] = i < graph->n ? &graph->nodes[i] : NULL;
        if (*numNodes < graph->n)
            return cudaSuccess;
    }
    *numNodes = graph->n;
    return cudaSuccess;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                   */
/* ------------------------------------------------------------------------ */

static bool valid_event(cudaEvent_t event)
{
    return event && event->magic == EVENT_MAGIC;
}

static void note_live(void)
{
    uint64_t live = atomic_fetch_add_explicit(&stats.live, 1, memory_order_relaxed) + 1;
    uint64_t max = atomic_load_explicit(&stats.max_live, memory_order_relaxed);
    while (live > max && !atomic_compare_exchange_weak_explicit(&stats.max_live, &max, live,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed))
        ;
}

API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    cudaError_t e = ready();
    if (e == cudaSuccess && (!event || (flags & ~EVENT_FLAGS)))
        e = cudaErrorInvalidValue;
    /* An interprocess event must not time. */
    if (e == cudaSuccess && (flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = usable(tl_device);
    if (e == cudaSuccess)
        e = unsafe_call();
    struct CUevent_st *ev = e == cudaSuccess ? calloc(1, sizeof *ev) : NULL;
    if (e == cudaSuccess &&
        (!ev || tlog_sim_marker_create(rt.dev[tl_device].sim, &ev->marker) != TLOG_OK))
        e = cudaErrorMemoryAllocation;
    if (e != cudaSuccess) {
        free(ev);
        return done(e);
    }
    ev->device = tl_device;
    ev->flags = flags;
    atomic_init(&ev->state, EV_EMPTY);
    atomic_init(&ev->capture_id, 0);
    ev->magic = EVENT_MAGIC;
    note_live();
    COUNT(created);
    *event = ev;
    return cudaSuccess;
}

API cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

/* Allowed while the event is pending: its stream forgets it. */
API cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return done(e);
    if (!valid_event(event))
        return done(cudaErrorInvalidResourceHandle);
    e = unsafe_call();
    if (e != cudaSuccess)
        return done(e);
    event->magic = 0;
    e = usable(event->device);
    tlog_sim_marker_destroy(rt.dev[event->device].sim, event->marker);
    free(event);
    atomic_fetch_sub_explicit(&stats.live, 1, memory_order_relaxed);
    return done(e);
}

/* The injected cost of a record (tlog_test_cuda_set_record_delay): spent
 * on the CPU, as a slow host would, and exact where a sleep is not. */
static void slow_host(void)
{
    uint64_t ns = atomic_load_explicit(&stats.record_delay_ns, memory_order_relaxed);
    if (!ns)
        return;
    uint64_t until = monotonic_ns() + ns;
    while (monotonic_ns() < until)
        ;
}

/* Where an event goes when a fault makes it never complete: a queue of its
 * own, stopped for good (the gate stays with the simulator). */
static tlog_sim_queue *hung_queue(int d)
{
    tlog_sim_gate *gate = NULL;
    tlog_sim_queue *q = tlog_sim_queue_create(rt.dev[d].sim);
    return q && tlog_sim_hold(rt.dev[d].sim, q, &gate) == TLOG_OK ? q : NULL;
}

/* Records `event` on t's queue, taking the injected faults. */
static cudaError_t record_on(cudaEvent_t event, const target *t)
{
    tlog_sim *sim = rt.dev[t->device].sim;
    tlog_sim_queue *q = t->queue;
    tlog_sim_gate *stalled = NULL;
    if (take_fault(TLOG_SIM_FAULT_RECORD_ERROR))
        return cudaErrorInvalidResourceHandle;
    if (take_fault(TLOG_SIM_FAULT_CAPTURE)) {
        atomic_store_explicit(&event->capture_id, 0, memory_order_relaxed);
        atomic_store_explicit(&event->state, EV_CAPTURED, memory_order_release);
        COUNT(records_captured);
        return cudaSuccess;
    }
    if (take_fault(TLOG_SIM_FAULT_HANG) && !(q = hung_queue(t->device)))
        return cudaErrorMemoryAllocation;
    if (take_fault(TLOG_SIM_FAULT_STALL) && tlog_sim_hold(sim, q, &stalled) != TLOG_OK)
        return cudaErrorMemoryAllocation;
    /* Recording a pending event again is counted by the simulator. */
    cudaError_t e = from_sim(tlog_sim_marker_record(sim, q, event->marker));
    if (e == cudaSuccess)
        atomic_store_explicit(&event->state, EV_RECORDED, memory_order_release);
    return e;
}

API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return done(e);
    if (!valid_event(event))
        return done(cudaErrorInvalidResourceHandle);
    COUNT(records);
    slow_host();
    target t;
    e = resolve(stream, &t);
    if (e == cudaSuccess)
        e = usable(event->device);
    if (e == cudaSuccess && t.device != event->device)
        e = cudaErrorInvalidResourceHandle;   /* not the same context */
    if (e == cudaSuccess && !t.s)
        e = legacy_use(t.device, true);
    unsigned long long id = 0;
    if (e == cudaSuccess)
        e = into_capture(&t, false, 0, &id);
    if (e != cudaSuccess)
        return done(e);
    if (id) {
        /* A plain record in a capture adds no node; the event now stands
         * for captured work, which never runs as such. */
        atomic_store_explicit(&event->capture_id, id, memory_order_relaxed);
        atomic_store_explicit(&event->state, EV_CAPTURED, memory_order_release);
        COUNT(records_captured);
        return cudaSuccess;
    }
    return done(record_on(event, &t));
}

/* The checks every read of an event makes first. */
static cudaError_t readable(cudaEvent_t event)
{
    cudaError_t e = usable(event->device);
    if (e == cudaSuccess &&
        atomic_load_explicit(&event->state, memory_order_acquire) == EV_CAPTURED)
        e = captured_event_use(atomic_load_explicit(&event->capture_id, memory_order_relaxed));
    return e == cudaSuccess ? unsafe_call() : e;
}

API cudaError_t cudaEventQuery(cudaEvent_t event)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return done(e);
    if (!valid_event(event))
        return done(cudaErrorInvalidResourceHandle);
    COUNT(queries);
    if ((e = readable(event)) != cudaSuccess)
        return done(e);
    if (take_fault(TLOG_SIM_FAULT_QUERY_ERROR)) {
        atomic_store_explicit(&rt.dev[event->device].lost, true, memory_order_release);
        return done(cudaErrorLaunchFailure);
    }
    if (atomic_load_explicit(&event->state, memory_order_acquire) == EV_EMPTY)
        return cudaSuccess;    /* an empty set of work */
    return done(from_sim(tlog_sim_marker_query(rt.dev[event->device].sim, event->marker)));
}

/* Blocks until the event is reached: for good if it never will be (a hang
 * or stall fault), as on a hung GPU. */
API cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return done(e);
    if (!valid_event(event))
        return done(cudaErrorInvalidResourceHandle);
    COUNT(syncs);
    if ((e = readable(event)) != cudaSuccess)
        return done(e);
    if (atomic_load_explicit(&event->state, memory_order_acquire) == EV_EMPTY)
        return cudaSuccess;
    return done(from_sim(
        tlog_sim_marker_wait(rt.dev[event->device].sim, event->marker, FOREVER_NS)));
}

/* The device time at which `event` was reached. */
static cudaError_t reached_at(cudaEvent_t event, uint64_t *ns)
{
    if (atomic_load_explicit(&event->state, memory_order_acquire) == EV_EMPTY)
        return cudaErrorInvalidResourceHandle;   /* never recorded */
    int rc = tlog_sim_marker_time(rt.dev[event->device].sim, event->marker, ns);
    return rc == TLOG_OK ? cudaSuccess : rc == SIM_PENDING ? cudaErrorNotReady
                                                           : cudaErrorInvalidResourceHandle;
}

/* `ns` to milliseconds at the documented resolution, halves away from 0. */
static float to_ms(int64_t ns)
{
    int64_t steps = (ns + (ns < 0 ? -RESOLUTION_NS / 2 : RESOLUTION_NS / 2)) / RESOLUTION_NS;
    return (float)((double)(steps * RESOLUTION_NS) / 1e6);
}

API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    cudaError_t e = ready();
    if (e == cudaSuccess && !ms)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && (!valid_event(start) || !valid_event(end)))
        e = cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess && ((start->flags | end->flags) & cudaEventDisableTiming))
        e = cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess && start->device != end->device)
        e = cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess)
        e = readable(start);
    if (e == cudaSuccess)
        e = readable(end);
    uint64_t a = 0, b = 0;
    cudaError_t ea = e == cudaSuccess ? reached_at(start, &a) : e;
    cudaError_t eb = e == cudaSuccess ? reached_at(end, &b) : e;
    /* A never-recorded event outranks a pending one. */
    e = ea == cudaErrorInvalidResourceHandle || eb == cudaErrorInvalidResourceHandle
            ? cudaErrorInvalidResourceHandle
            : ea != cudaSuccess ? ea : eb;
    if (e == cudaSuccess)
        *ms = to_ms(b >= a ? (int64_t)(b - a) : -(int64_t)(a - b));
    return done(e);
}

/* ------------------------------------------------------------------------ */
/* Devices and memory                                                       */
/* ------------------------------------------------------------------------ */

API cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return done(cudaErrorInvalidValue);
    cudaError_t e = ready();
    *count = e == cudaSuccess ? rt.count : 0;
    return done(e);
}

API cudaError_t cudaGetDevice(int *device)
{
    cudaError_t e = ready();
    if (e == cudaSuccess && !device)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        *device = tl_device;
    return done(e);
}

API cudaError_t cudaSetDevice(int device)
{
    cudaError_t e = ready();
    if (e == cudaSuccess && (device < 0 || device >= rt.count))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess)
        tl_device = device;
    return done(e);
}

API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    cudaError_t e = ready();
    if (e == cudaSuccess && !prop)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && (device < 0 || device >= rt.count))
        e = cudaErrorInvalidDevice;
    if (e != cudaSuccess)
        return done(e);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "timerlog test CUDA device %d", device);
    prop->uuid.bytes[0] = (char)device;
    prop->totalGlobalMem = (size_t)80 << 30;
    prop->sharedMemPerBlock = 48 << 10;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->major = SM_MAX / 10;
    prop->minor = SM_MAX % 10;
    prop->multiProcessorCount = 132;
    return cudaSuccess;
}

/* Waits for every queue of the current device, those of destroyed streams
 * included. */
API cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return done(e);
    COUNT(syncs);
    int d = tl_device;
    e = usable(d);
    if (e == cudaSuccess)
        e = sync_conflict(NULL, d);
    if (e == cudaSuccess)
        e = unsafe_call();
    for (queue_entry *q = atomic_load_explicit(&rt.dev[d].queues, memory_order_acquire);
         q && e == cudaSuccess; q = q->next)
        e = from_sim(tlog_sim_queue_sync(rt.dev[d].sim, q->queue));
    return done(e);
}

/* Device memory is host memory here: nothing reads it but kernels, which
 * do not run. */
API cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    cudaError_t e = ready();
    if (e == cudaSuccess && !devPtr)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = usable(tl_device);
    if (e == cudaSuccess)
        e = unsafe_call();
    if (e == cudaSuccess && !(*devPtr = calloc(1, size ? size : 1)))
        e = cudaErrorMemoryAllocation;
    return done(e);
}

API cudaError_t cudaFree(void *devPtr)
{
    cudaError_t e = ready();
    if (e == cudaSuccess)
        e = unsafe_call();
    if (e == cudaSuccess)
        free(devPtr);
    return done(e);
}

/* ------------------------------------------------------------------------ */
/* Libraries and kernels                                                    */
/* ------------------------------------------------------------------------ */

/* `p` past spaces. */
static const char *skip_space(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

/* PTX's "X.Y" after `directive` as 10X+Y, or -1. */
static int ptx_number(const char *text, const char *directive, const char *prefix)
{
    const char *p = strstr(text, directive);
    if (!p)
        return -1;
    p = skip_space(p + strlen(directive));
    if (strncmp(p, prefix, strlen(prefix)) != 0)
        return -1;
    p += strlen(prefix);
    int major = 0, minor = 0;
    if (sscanf(p, "%d.%d", &major, &minor) == 2)
        return major * 10 + minor;
    return sscanf(p, "%d", &major) == 1 ? major : -1;
}

/* One .entry's name and parameters, from just after the keyword; false if
 * the text is not a well-formed entry. */
static bool parse_entry(const char *p, struct CUkern_st *k)
{
    p = skip_space(p);
    size_t len = strcspn(p, " \t\r\n(");
    if (len == 0 || len >= sizeof k->name)
        return false;
    memcpy(k->name, p, len);
    k->name[len] = '\0';
    p = skip_space(p + len);
    if (*p != '(')
        return true;   /* no parameters */
    const char *close = strchr(p, ')');
    if (!close)
        return false;
    for (const char *q = strstr(p, ".param"); q && q < close; q = strstr(q + 6, ".param")) {
        if (k->params++ > 0)
            continue;
        char type[16] = "", name[128] = "";
        if (sscanf(q + 6, " %15s %127[A-Za-z0-9_$]", type, name) == 2) {
            size_t n = strlen(name);
            k->timed = strcmp(type, ".u64") == 0 && n > 3 && strcmp(name + n - 3, "_ns") == 0;
        }
    }
    return true;
}

/* The kernels of PTX text into lib (NULL: only counted); -1 if malformed. */
static long parse_kernels(const char *text, struct CUlib_st *lib)
{
    long n = 0;
    for (const char *p = strstr(text, ".entry"); p; p = strstr(p + 6, ".entry")) {
        struct CUkern_st k = {0};
        if (!parse_entry(p + 6, &k))
            return -1;
        if (lib)
            lib->kernels[n] = k;
        n++;
    }
    return n;
}

static cudaError_t check_ptx(const char *text)
{
    int isa = ptx_number(text, ".version", "");
    int sm = ptx_number(text, ".target", "sm_");
    if (isa < 0 || sm < 0)
        return cudaErrorInvalidPtx;
    if (isa > PTX_ISA_MAX)
        return cudaErrorUnsupportedPtxVersion;
    return sm > SM_MAX ? cudaErrorNoKernelImageForDevice : cudaSuccess;
}

API cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                    enum cudaJitOption *jitOptions, void **jitOptionsValues,
                                    unsigned int numJitOptions,
                                    enum cudaLibraryOption *libraryOptions,
                                    void **libraryOptionValues, unsigned int numLibraryOptions)
{
    cudaError_t e = ready();
    if (e == cudaSuccess &&
        (!library || !code || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
         (numLibraryOptions && (!libraryOptions || !libraryOptionValues))))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = unsafe_call();
    if (e == cudaSuccess)
        e = check_ptx(code);
    long n = e == cudaSuccess ? parse_kernels(code, NULL) : 0;
    if (e == cudaSuccess && n < 0)
        e = cudaErrorInvalidPtx;
    struct CUlib_st *lib =
        e == cudaSuccess ? calloc(1, sizeof *lib + (size_t)n * sizeof lib->kernels[0]) : NULL;
    if (e == cudaSuccess && !lib)
        e = cudaErrorMemoryAllocation;
    if (e != cudaSuccess)
        return done(e);
    lib->n = (size_t)parse_kernels(code, lib);
    lib->magic = LIBRARY_MAGIC;
    pthread_mutex_lock(&rt.lock);
    lib->next = rt.libraries;
    rt.libraries = lib;
    pthread_mutex_unlock(&rt.lock);
    *library = lib;
    return cudaSuccess;
}

/* Caller holds rt.lock. */
static bool library_loaded(cudaLibrary_t library)
{
    for (struct CUlib_st *l = rt.libraries; l; l = l->next)
        if (l == library)
            return true;
    return false;
}

API cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library,
                                     const char *name)
{
    cudaError_t e = ready();
    if (e == cudaSuccess && (!pKernel || !name))
        e = cudaErrorInvalidValue;
    if (e != cudaSuccess)
        return done(e);
    e = cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&rt.lock);
    if (library_loaded(library)) {
        e = cudaErrorSymbolNotFound;
        for (size_t i = 0; i < library->n && e != cudaSuccess; i++) {
            if (strcmp(library->kernels[i].name, name) == 0) {
                *pKernel = &library->kernels[i];
                e = cudaSuccess;
            }
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return done(e);
}

/* Its kernels go with it. */
API cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    cudaError_t e = ready();
    if (e == cudaSuccess)
        e = unsafe_call();
    if (e != cudaSuccess)
        return done(e);
    pthread_mutex_lock(&rt.lock);
    bool found = false;
    for (struct CUlib_st **p = &rt.libraries; *p; p = &(*p)->next) {
        if (*p == library) {
            *p = library->next;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    if (!found)
        return done(cudaErrorInvalidResourceHandle);
    library->magic = 0;
    free(library);
    return cudaSuccess;
}

/* A copy of the kernel `func` names, if a loaded library holds it. */
static bool kernel_of(const void *func, struct CUkern_st *out)
{
    bool found = false;
    pthread_mutex_lock(&rt.lock);
    for (struct CUlib_st *l = rt.libraries; l && !found; l = l->next) {
        for (size_t i = 0; i < l->n && !found; i++) {
            if (func == (const void *)&l->kernels[i]) {
                *out = l->kernels[i];
                found = true;
            }
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return found;
}

static bool valid_dims(dim3 grid, dim3 block)
{
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    return grid.x >= 1 && grid.y >= 1 && grid.z >= 1 && grid.x <= 0x7fffffffu &&
           grid.y <= 65535 && grid.z <= 65535 && block.x >= 1 && block.y >= 1 &&
           block.z >= 1 && block.x <= 1024 && block.y <= 1024 && block.z <= 64 &&
           threads <= 1024;
}

/* Only kernels of loaded libraries (cudaKernel_t), on the calling thread's
 * current device. */
API cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                 size_t sharedMem, cudaStream_t stream)
{
    cudaError_t e = ready();
    struct CUkern_st k;
    if (e == cudaSuccess && !kernel_of(func, &k))
        e = cudaErrorInvalidDeviceFunction;
    if (e == cudaSuccess && (!valid_dims(gridDim, blockDim) || sharedMem > (48u << 10)))
        e = cudaErrorInvalidConfiguration;
    if (e == cudaSuccess && k.params && !args)
        e = cudaErrorInvalidValue;
    target t;
    if (e == cudaSuccess)
        e = resolve(stream, &t);
    if (e == cudaSuccess && t.device != tl_device)
        e = cudaErrorInvalidResourceHandle;   /* another device's stream */
    uint64_t ns = 0;
    if (e == cudaSuccess && k.timed)
        memcpy(&ns, args[0], sizeof ns);
    if (e == cudaSuccess)
        e = enqueue(&t, ns);
    return done(e);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

API cudaError_t cudaGetLastError(void)
{
    if (ready() == cudaSuccess && usable(tl_device) != cudaSuccess)
        return cudaErrorLaunchFailure;   /* sticky: stays */
    cudaError_t e = tl_last_error;
    tl_last_error = cudaSuccess;
    return e;
}

API cudaError_t cudaPeekAtLastError(void)
{
    if (ready() == cudaSuccess && usable(tl_device) != cudaSuccess)
        return cudaErrorLaunchFailure;
    return tl_last_error;
}

#define ERRORS(X)                                                                       \
    X(cudaSuccess, "no error")                                                          \
    X(cudaErrorInvalidValue, "invalid argument")                                        \
    X(cudaErrorMemoryAllocation, "out of memory")                                       \
    X(cudaErrorInitializationError, "initialization error")                            \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument")                  \
    X(cudaErrorInsufficientDriver,                                                      \
      "CUDA driver version is insufficient for CUDA runtime version")                   \
    X(cudaErrorInvalidDeviceFunction, "invalid device function")                        \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected")                          \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                                 \
    X(cudaErrorNoKernelImageForDevice,                                                  \
      "no kernel image is available for execution on the device")                       \
    X(cudaErrorInvalidPtx, "a PTX JIT compilation failed")                              \
    X(cudaErrorUnsupportedPtxVersion,                                                   \
      "the provided PTX was compiled with an unsupported toolchain.")                   \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle")                        \
    X(cudaErrorIllegalState, "the operation cannot be performed in the present state")  \
    X(cudaErrorSymbolNotFound, "named symbol not found")                                \
    X(cudaErrorNotReady, "device not ready")                                            \
    X(cudaErrorLaunchFailure, "unspecified launch failure")                             \
    X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
    X(cudaErrorStreamCaptureInvalidated,                                                \
      "operation failed due to a previous error during capture")                        \
    X(cudaErrorStreamCaptureImplicit,                                                   \
      "operation would make the legacy stream depend on a capturing blocking stream")   \
    X(cudaErrorCapturedEvent,                                                           \
      "operation not permitted on an event last recorded in a capturing stream")        \
    X(cudaErrorStreamCaptureWrongThread,                                                \
      "attempt to terminate a thread-local capture sequence from another thread")       \
    X(cudaErrorUnknown, "unknown error")

API const char *cudaGetErrorName(cudaError_t error)
{
#define NAME(e, text) case e: return #e;
    switch (error) {
    ERRORS(NAME)
    default: return "unrecognized error code";
    }
#undef NAME
}

API const char *cudaGetErrorString(cudaError_t error)
{
#define TEXT(e, text) case e: return text;
    switch (error) {
    ERRORS(TEXT)
    default: return "unrecognized error code";
    }
#undef TEXT
}

/* ------------------------------------------------------------------------ */
/* Test hooks                                                               */
/* ------------------------------------------------------------------------ */

API cudaError_t tlog_test_cuda_launch(cudaStream_t stream, uint64_t ns)
{
    cudaError_t e = ready();
    target t;
    if (e == cudaSuccess)
        e = resolve(stream, &t);
    return e == cudaSuccess ? enqueue(&t, ns) : e;
}

/* A created stream, for the hooks that take no other kind. */
static cudaError_t created(cudaStream_t stream)
{
    cudaError_t e = ready();
    if (e == cudaSuccess &&
        (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && stream->magic != STREAM_MAGIC)
        e = cudaErrorInvalidResourceHandle;
    return e;
}

API cudaError_t tlog_test_cuda_hold(cudaStream_t stream)
{
    cudaError_t e = created(stream);
    if (e != cudaSuccess)
        return e;
    if (stream->gate)
        return cudaErrorInvalidValue;
    return from_sim(tlog_sim_hold(rt.dev[stream->device].sim, stream->queue, &stream->gate));
}

API cudaError_t tlog_test_cuda_release(cudaStream_t stream)
{
    cudaError_t e = created(stream);
    if (e != cudaSuccess)
        return e;
    if (!stream->gate)
        return cudaErrorInvalidValue;
    tlog_sim_gate_destroy(rt.dev[stream->device].sim, stream->gate);   /* opens it */
    stream->gate = NULL;
    return cudaSuccess;
}

API void tlog_test_cuda_set_record_delay(uint64_t ns)
{
    atomic_store(&stats.record_delay_ns, ns);
}

API int tlog_test_cuda_inject(int fault, unsigned count)
{
    if (ready() != cudaSuccess || fault < TLOG_SIM_FAULT_HANG || fault > TLOG_SIM_FAULT_STALL)
        return TLOG_EINVAL;
    atomic_fetch_add(&stats.faults[fault], count);
    return 0;
}

API void tlog_test_cuda_get_stats(tlog_test_cuda_stats *out)
{
    if (!out)
        return;
    pthread_once(&rt_once, rt_init);
    uint64_t rerecords = 0;
    for (int d = 0; d < rt.count; d++) {
        tlog_sim_stats s = {.size = sizeof s};
        if (rt.dev[d].sim && tlog_sim_get_stats(rt.dev[d].sim, &s) == TLOG_OK)
            rerecords += s.rerecords_in_flight;
    }
    *out = (tlog_test_cuda_stats){
        .events_live = atomic_load(&stats.live),
        .events_max_live = atomic_load(&stats.max_live),
        .events_created = atomic_load(&stats.created),
        .records = atomic_load(&stats.records),
        .records_captured = atomic_load(&stats.records_captured),
        .queries = atomic_load(&stats.queries),
        .syncs = atomic_load(&stats.syncs),
        .launches = atomic_load(&stats.launches),
        .rerecords_in_flight = rerecords,
        .capture_mode_exchanges = atomic_load(&stats.exchanges),
        .captures_invalidated = atomic_load(&stats.invalidated),
    };
}
