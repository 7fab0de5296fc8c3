/*
 * OpenCL: a device scope next to its floor, two bare
 * clEnqueueMarkerWithWaitList (each with its event, released after the
 * drain) on the same in-order profiling queue (see backend_bench.h). Runs
 * on whatever platform the ICD loader finds (pocl on a machine without a
 * GPU).
 *
 * Usage: bench_opencl [runs]   (default 21). Exits 0 with a note without a
 * platform.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <timerlog/opencl.h>

#include "backend_bench.h"

static cl_context context;
static cl_device_id device;
static cl_event events[2 * BENCH_BATCH];

static int available(void)
{
    cl_platform_id platform;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0)
        return 0;
    return clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &n) == CL_SUCCESS && n > 0;
}

/* Markers for a whole batch beforehand: the frames begin BENCH_BATCH
 * scopes before their first read, which would otherwise outrun the marker
 * thread and time dropped scopes. */
static int open_device(tlog_log *log, tlog_device **out)
{
    int rc = tlog_cl_device_create(log, NULL, NULL, NULL, out);
    if (rc == TLOG_OK)
        rc = tlog_device_reserve(*out, BENCH_BATCH);
    context = rc == TLOG_OK ? tlog_cl_context(*out) : NULL;
    return rc;
}

static void *prepare(void)
{
    cl_int e = CL_SUCCESS;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(context, device, props, &e);
    return e == CL_SUCCESS ? q : NULL;
}

static void bare_markers(void *queue)
{
    for (int i = 0; i < 2 * BENCH_BATCH; i++)
        clEnqueueMarkerWithWaitList(queue, 0, NULL, &events[i]);
}

static void drain(void *queue)
{
    clFinish(queue);
    for (int i = 0; i < 2 * BENCH_BATCH; i++) {
        if (events[i])
            clReleaseEvent(events[i]);
        events[i] = NULL;
    }
}

static void release(void *queue)
{
    clReleaseCommandQueue(queue);
}

int main(int argc, char **argv)
{
    const bench_backend b = {"two bare clEnqueueMarkerWithWaitList", available, open_device,
                             prepare, bare_markers, drain, release};
    return bench_backend_main(&b, argc, argv);
}
