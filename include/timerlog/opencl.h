/*
 * libtimerlog-opencl: device scopes on OpenCL command queues (pkg-config
 * timerlog-opencl).
 *
 *     TIMERLOG_CL_SCOPE(dev, queue, "Filter 1: GPU Parallel Operation 1");
 *     clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
 *
 * enqueues a begin and an end marker around the kernel in `queue` and
 * returns at once. A marker is a command whose event carries the device's
 * profiling time of its completion (CL_PROFILING_COMMAND_END):
 *
 *  - on an in-order queue, clEnqueueMarkerWithWaitList with no wait list:
 *    it completes once everything enqueued before it has, and everything
 *    enqueued after it starts only once it has completed (in order);
 *  - on an out-of-order queue (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
 *    clEnqueueBarrierWithWaitList with no wait list. A marker there would
 *    still wait for all the commands before it, but the specification lets
 *    commands enqueued after a marker run before it completes: a scope's
 *    kernels could start before its begin, and the begin would then read
 *    late. A barrier also blocks the commands after it until it completes,
 *    so the begin follows the work before the scope and precedes the
 *    scope's own, and the end follows the scope's work. The cost: work on
 *    either side of a scope boundary does not overlap.
 *
 * Queues must be made with CL_QUEUE_PROFILING_ENABLE, on the device of the
 * tlog_device (the context may differ). Each scope checks its queue when it
 * begins: a queue without profiling, or of another device, is refused with
 * a report naming why (once per queue in a row), and the scope is counted
 * in tlog_device_info.scopes_failed.
 *
 * Nothing here waits for the device. Readiness is clGetEventInfo's
 * CL_EVENT_COMMAND_EXECUTION_STATUS, which never blocks; a marker found
 * still CL_QUEUED has its queue flushed once (clFlush), since OpenCL runs
 * commands only once they have been flushed, so that frames become ready
 * on an application that flushes only when it waits. The forced sync
 * (tlog_dump, tlog_sync) polls the same way, and gives up at the log's
 * sync_timeout_ns. An event is released once its time has been read, or
 * when the device is destroyed (OpenCL lets its command finish on its own).
 *
 * A command that ends with a negative execution status (an error, or an
 * event in its wait list that failed) makes the scopes around it show
 * unresolved; the error is reported, and its status named in a report of
 * the backend at the next device scope on that device. A marker the queue
 * refuses (CL_OUT_OF_RESOURCES, ...) is reported with its error name; the
 * scope is not timed (at its begin) or shows unresolved (at its end).
 *
 * The host timeline: where the platform has clGetDeviceAndHostTimer (OpenCL
 * 2.1, CL_PLATFORM_HOST_TIMER_RESOLUTION > 0) and answers it within 50 us,
 * the device clock is read with it every frame, between two reads of the
 * library's clock. Elsewhere (pocl 3.1 answers CL_INVALID_OPERATION) each
 * frame enqueues a marker on the device's own idle queue and takes its
 * CL_PROFILING_COMMAND_QUEUED, the device time at which the host enqueued
 * it, placed between the library's clock reads around the enqueue.
 */
#ifndef TIMERLOG_OPENCL_H
#define TIMERLOG_OPENCL_H

#include <CL/cl.h>

#include "timerlog/timerlog.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A device for OpenCL `device` in `context` (the context the device's own
 * queue is made in; it is retained until the device is destroyed), bound to
 * `log` (NULL: the default log). With both NULL: the first device of the
 * first platform that has one, in a context of the device's own
 * (tlog_cl_context). Creating it waits briefly on the device's own queue:
 * it measures the empty-scope offset and anchors the device clock to the
 * host's. Returns
 * TLOG_EINVAL when out is NULL or only one of context and device is,
 * TLOG_ENODEVICE (and reports why) when there is no OpenCL platform or
 * device; device scopes on a NULL device then only count themselves.
 */
TLOG_API int tlog_cl_device_create(tlog_log *log, cl_context context, cl_device_id device,
                                   const tlog_device_config *config,
                                   tlog_device **out) TLOG_NOEXCEPT;

/* The context `dev` made its own queue in: the one given, or its own. NULL
 * for a NULL device or one of another backend. */
TLOG_API cl_context tlog_cl_context(const tlog_device *dev) TLOG_NOEXCEPT;

/* Device scopes skipped because their device was NULL. */
TLOG_API uint64_t tlog_cl_scopes_untimed(void) TLOG_NOEXCEPT;

/* Opens a device scope on `queue` (checks the site's level); close it with
 * tlog_device_end. A NULL `dev` gives an empty scope and is counted here; a
 * NULL `queue` has no default and is refused (scopes_failed). */
TLOG_API tlog_device_scope tlog_cl_begin(tlog_device *dev, cl_command_queue queue,
                                         const tlog_site *site) TLOG_NOEXCEPT;

static inline tlog_device_scope tlog_cl_enter_(tlog_device *dev, cl_command_queue queue,
                                               const tlog_site *site)
{
    tlog_device_scope none = {TIMERLOG_NULL_, 0};
    return TIMERLOG_ON_(*site) ? tlog_cl_begin(dev, queue, site) : none;
}

#if defined(TIMERLOG_DISABLE)
#define TIMERLOG_CL_SCOPE(dev, queue, name) ((void)sizeof(dev), (void)sizeof(queue))
#else
/* A device scope on `queue` of `dev` that ends with the enclosing block. */
#define TIMERLOG_CL_SCOPE(dev, queue, name)                                  \
    TIMERLOG_DEVICE_GUARD_(TLOG_LEVEL_COARSE, tlog_cl_enter_, name, dev, queue)
#endif

/* A sync scope around the application's own wait on every queue of `dev`
 * (clFinish of each, clWaitForEvents on events of several queues): the
 * intervals of its frame on `dev` that were complete by its end show under
 * it. */
#define TIMERLOG_CL_SYNC_SCOPE(dev, name) TIMERLOG_SYNC_SCOPE(dev, name)

/* A sync scope around a wait on one queue (clFinish(queue), or
 * clWaitForEvents on an event of that queue): only that queue's intervals
 * show under it. */
#define TIMERLOG_CL_SYNC_QUEUE_SCOPE(dev, queue, name)                       \
    TIMERLOG_SYNC_QUEUE_SCOPE(dev, (void *)(queue), name)

#ifdef __cplusplus
}
#endif

#endif
