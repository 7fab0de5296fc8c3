/*
 * The CUDA backend: CUDA events as markers, behind the backend interface.
 *
 * Rules this file keeps (see the header for what users see):
 *  - no cudaEventSynchronize, cudaStreamSynchronize or cudaDeviceSynchronize
 *    anywhere: the one wait (the forced sync) is the core's poll of
 *    cudaEventQuery, which can give up at a timeout and runs in relaxed
 *    capture mode;
 *  - before recording into an application stream, check whether it is being
 *    captured; if so, record nothing (a plain event left in a capture stays
 *    unreadable, and recording changes the graph);
 *  - every query, wait and elapsed-time read, every event made or destroyed
 *    (the marker thread makes them while the application may be capturing),
 *    and the setting up and tearing down of a device (kernels loaded and
 *    unloaded, its own stream), runs
 *    with the thread in relaxed capture mode: in the default mode such a
 *    call invalidates a capture running on another thread (CUDA names
 *    cudaEventQuery; it does not list the rest, so every call that is not
 *    stream-ordered is treated alike);
 *  - no error is left behind: a call that failed has its error cleared, so
 *    that the application does not see it later from an unrelated call (a
 *    sticky error stays, as CUDA keeps it);
 *  - events are created on the device they time (an event and a stream of
 *    different devices cannot be paired).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "kernels_ptx.h"
#include "timerlog/cuda.h"

typedef struct cuda_impl {
    int ordinal;
    cudaStream_t own;           /* non-blocking: anchors and calibration */
    cudaLibrary_t kernels;
    cudaKernel_t empty, spin;
} cuda_impl;

static int status_of(cudaError_t e)
{
    /* cudaErrorNotReady is no failure and sets no error. */
    if (e != cudaSuccess && e != cudaErrorNotReady)
        cudaGetLastError();
    switch (e) {
    case cudaSuccess: return TLOG_OK;
    case cudaErrorNotReady: return TLOG_PENDING;
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorCapturedEvent:
    case cudaErrorStreamCaptureWrongThread:
        return TLOG_ECAPTURE;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
        return TLOG_ENODEVICE;
    case cudaErrorMemoryAllocation: return TLOG_ENOMEM;
    default: return TLOG_EDEVICE;
    }
}

/* The calling thread's capture mode, while relaxed_begin has it relaxed. */
typedef struct relaxed_mode {
    enum cudaStreamCaptureMode prev;
    bool switched;
} relaxed_mode;

static relaxed_mode relaxed_begin(void)
{
    relaxed_mode m = {cudaStreamCaptureModeRelaxed, false};
    m.switched = cudaThreadExchangeStreamCaptureMode(&m.prev) == cudaSuccess;
    if (!m.switched)
        cudaGetLastError();
    return m;
}

static void relaxed_end(relaxed_mode m)
{
    if (m.switched)
        cudaThreadExchangeStreamCaptureMode(&m.prev);
}

/* Runs `fn` with `ordinal` as the calling thread's device, then restores. */
static int on_device(int ordinal, int (*fn)(void *), void *arg)
{
    int prev = -1;
    if (status_of(cudaGetDevice(&prev)) != TLOG_OK)
        prev = -1;
    cudaError_t e = prev != ordinal ? cudaSetDevice(ordinal) : cudaSuccess;
    if (e != cudaSuccess)
        return status_of(e);
    int rc = fn(arg);
    if (prev >= 0 && prev != ordinal)
        status_of(cudaSetDevice(prev));
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The backend interface                                                    */
/* ------------------------------------------------------------------------ */

static int create_event(void *out)
{
    return status_of(cudaEventCreateWithFlags((cudaEvent_t *)out, cudaEventDefault));
}

static int cuda_marker_create(void *impl, tlog_marker *out)
{
    cudaEvent_t ev = NULL;
    relaxed_mode m = relaxed_begin();
    int rc = on_device(((cuda_impl *)impl)->ordinal, create_event, &ev);
    relaxed_end(m);
    *out = (tlog_marker)ev;
    return rc;
}

static void cuda_marker_destroy(void *impl, tlog_marker marker)
{
    (void)impl;
    /* Allowed while the event is in flight: released once it completes. */
    relaxed_mode m = relaxed_begin();
    status_of(cudaEventDestroy((cudaEvent_t)marker));
    relaxed_end(m);
}

static int cuda_record(void *impl, void *queue, tlog_marker marker)
{
    (void)impl;
    cudaStream_t stream = (cudaStream_t)queue;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(stream, &capture);
    if (e != cudaSuccess)
        return status_of(e);   /* the legacy stream beside a capture: ECAPTURE */
    if (capture != cudaStreamCaptureStatusNone)
        return TLOG_ECAPTURE;
    return status_of(cudaEventRecord((cudaEvent_t)marker, stream));
}

static int cuda_record_own(void *impl, tlog_marker marker)
{
    return status_of(cudaEventRecord((cudaEvent_t)marker, ((cuda_impl *)impl)->own));
}

static int cuda_query(void *impl, tlog_marker marker)
{
    (void)impl;
    relaxed_mode m = relaxed_begin();
    cudaError_t e = cudaEventQuery((cudaEvent_t)marker);
    relaxed_end(m);
    return status_of(e);
}

static int cuda_elapsed(void *impl, tlog_marker from, tlog_marker to, int64_t *ns)
{
    (void)impl;
    float ms = 0;
    relaxed_mode m = relaxed_begin();
    cudaError_t e = cudaEventElapsedTime(&ms, (cudaEvent_t)from, (cudaEvent_t)to);
    relaxed_end(m);
    int rc = status_of(e);
    if (rc == TLOG_OK)
        *ns = tlog_round_ns_((double)ms * 1e6);
    return rc;
}

typedef struct launch {
    cuda_impl *c;
    cudaKernel_t kernel;
    void **args;
} launch;

static int launch_own(void *arg)
{
    launch *l = arg;
    dim3 one = {1, 1, 1};
    return status_of(cudaLaunchKernel((const void *)l->kernel, one, one, l->args, 0,
                                      l->c->own));
}

/* Kernels launch on the calling thread's current device: switch to ours. */
static int cuda_enqueue_empty(void *impl)
{
    cuda_impl *c = impl;
    launch l = {c, c->empty, NULL};
    return on_device(c->ordinal, launch_own, &l);
}

static int cuda_enqueue_busy(void *impl, uint64_t ns)
{
    cuda_impl *c = impl;
    void *args[] = {&ns};
    launch l = {c, c->spin, args};
    return on_device(c->ordinal, launch_own, &l);
}

/* Work on cudaStreamPerThread runs in order per thread only: each thread's
 * gets a pending list of its own. */
static _Thread_local char per_thread_stream;

static void *cuda_queue_key(void *impl, void *queue)
{
    (void)impl;
    return queue == (void *)cudaStreamPerThread ? (void *)&per_thread_stream : queue;
}

static void impl_free(cuda_impl *c)
{
    if (c->own)
        status_of(cudaStreamDestroy(c->own));
    if (c->kernels)
        status_of(cudaLibraryUnload(c->kernels));
    free(c);
}

static void cuda_destroy(void *impl)
{
    relaxed_mode m = relaxed_begin();
    impl_free(impl);
    relaxed_end(m);
}

static const tlog_device_ops cuda_ops = {
    .size = sizeof(tlog_device_ops),
    .abi = TLOG_DEVICE_ABI,
    .backend = "cuda",
    .marker_create = cuda_marker_create,
    .marker_destroy = cuda_marker_destroy,
    .record = cuda_record,
    .record_own = cuda_record_own,
    .query = cuda_query,
    .elapsed_ns = cuda_elapsed,
    .queue_key = cuda_queue_key,
    .enqueue_empty = cuda_enqueue_empty,
    .enqueue_busy = cuda_enqueue_busy,
    .destroy = cuda_destroy,
};

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

static int impl_setup(void *arg)
{
    cuda_impl *c = arg;
    cudaError_t e = cudaStreamCreateWithFlags(&c->own, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaLibraryLoadData(&c->kernels, tlog_cuda_kernels_ptx, NULL, NULL, 0, NULL,
                                NULL, 0);
    if (e == cudaSuccess)
        e = cudaLibraryGetKernel(&c->empty, c->kernels, "tlog_cuda_empty");
    if (e == cudaSuccess)
        e = cudaLibraryGetKernel(&c->spin, c->kernels, "tlog_cuda_spin");
    return status_of(e);
}

static int no_device(tlog_log *log, int ordinal, cudaError_t e, int count)
{
    if (e != cudaSuccess)
        tlog_backend_report_(log, TLOG_ENODEVICE,
                             "CUDA: no usable device (%s); CUDA scopes are not timed",
                             cudaGetErrorString(e));
    else
        tlog_backend_report_(log, TLOG_ENODEVICE,
                             "CUDA: no device %d (%d found); its scopes are not timed",
                             ordinal, count);
    return TLOG_ENODEVICE;
}

static int device_create(tlog_log *log, int ordinal, const tlog_device_config *config,
                         tlog_device **out);

/* Creating a device makes a stream, loads kernels and waits on its own
 * stream: all in relaxed capture mode, so that a capture under way on any
 * thread is left intact. */
int tlog_cuda_device_create(tlog_log *log, int ordinal, const tlog_device_config *config,
                            tlog_device **out)
{
    if (!out || ordinal < 0)
        return TLOG_EINVAL;
    *out = NULL;
    relaxed_mode m = relaxed_begin();
    int rc = device_create(log, ordinal, config, out);
    relaxed_end(m);
    return rc;
}

static int device_create(tlog_log *log, int ordinal, const tlog_device_config *config,
                         tlog_device **out)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || ordinal >= count) {
        cudaGetLastError();
        return no_device(log, ordinal, e, count);
    }
    cuda_impl *c = calloc(1, sizeof *c);
    if (!c)
        return TLOG_ENOMEM;
    c->ordinal = ordinal;
    int rc = on_device(ordinal, impl_setup, c);
    char name[300] = "CUDA device";
    struct cudaDeviceProp prop;
    if (rc == TLOG_OK && status_of(cudaGetDeviceProperties(&prop, ordinal)) == TLOG_OK)
        snprintf(name, sizeof name, "%s (%d)", prop.name, ordinal);
    if (rc == TLOG_OK)
        rc = tlog_device_register_(log, &cuda_ops, c, name, config, out);
    if (rc != TLOG_OK) {
        tlog_backend_report_(log, rc, "CUDA: cannot set up device %d: %s", ordinal,
                             tlog_strerror(rc));
        impl_free(c);
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The default log's devices                                                */
/* ------------------------------------------------------------------------ */

static tlog_default_devices defaults = TLOG_DEFAULT_DEVICES_INIT;

/* The last explicit stream seen on this thread and its device. */
static __thread cudaStream_t cached_stream;
static __thread int cached_ordinal = -1;

int tlog_cuda_configure(const tlog_device_config *config)
{
    return tlog_default_configure_(&defaults, config);
}

/* The device that owns `stream`; NULL and the legacy and per-thread
 * handles follow the calling thread's current device. */
static int ordinal_of(cudaStream_t stream)
{
    int ordinal = -1;
    bool special = (uintptr_t)stream <= (uintptr_t)cudaStreamPerThread;
    if (!special && stream == cached_stream && cached_ordinal >= 0)
        return cached_ordinal;
    cudaError_t e = special ? cudaGetDevice(&ordinal) : cudaStreamGetDevice(stream, &ordinal);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    if (!special) {
        cached_stream = stream;
        cached_ordinal = ordinal;
    }
    return ordinal;
}

/* Whether `stream` is being captured (or cannot be asked: the legacy
 * stream while another stream captures). */
static bool capturing(cudaStream_t stream)
{
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
        cudaGetLastError();
        return true;
    }
    return status != cudaStreamCaptureStatusNone;
}

static int create_default(int ordinal, const tlog_device_config *config, tlog_device **out)
{
    return tlog_cuda_device_create(NULL, ordinal, config, out);
}

tlog_device *tlog_cuda_device(cudaStream_t stream)
{
    if (tlog_default_absent_(&defaults))
        return NULL;
    int ordinal = ordinal_of(stream);
    if (ordinal < 0) {
        tlog_default_device_(&defaults, 0, create_default); /* reports why, once */
        return NULL;
    }
    if (ordinal >= TLOG_DEFAULT_DEVICES_MAX)
        return NULL;
    tlog_device *dev = atomic_load_explicit(&defaults.devices[ordinal], memory_order_acquire);
    if (dev)
        return dev;
    /* A scope in a capture is not timed anyway: make the device later, when
     * setting it up cannot touch a graph being built. */
    return capturing(stream) ? NULL : tlog_default_device_(&defaults, ordinal, create_default);
}

uint64_t tlog_cuda_scopes_untimed(void)
{
    return atomic_load(&defaults.untimed);
}

tlog_device_scope tlog_cuda_begin(cudaStream_t stream, const tlog_site *site)
{
    tlog_device *dev = tlog_cuda_device(stream);
    if (!dev)
        return tlog_default_untimed_(&defaults);
    return tlog_device_begin(dev, stream, site);
}
