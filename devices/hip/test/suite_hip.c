/*
 * The device behaviour suite on HIP: libtimerlog-hip as installed, run
 * against the test runtime that stands in for libamdhip64 (work is the test
 * runtime's stand-in for a kernel launch).
 */
#include <stdio.h>

#include <timerlog/hip.h>

#include "device_suite.h"
#include "hip_test_runtime.h"

static int open_device(tlog_log *log, tlog_device **out)
{
    return tlog_hip_device_create(log, 0, NULL, out);
}

static void *queue_create(void)
{
    hipStream_t s = NULL;
    return hipStreamCreateWithFlags(&s, hipStreamNonBlocking) == hipSuccess ? s : NULL;
}

static void queue_destroy(void *queue)
{
    hipStreamDestroy(queue);
}

static int launch(void *queue, uint64_t ns)
{
    return tlog_test_hip_launch(queue, ns) != hipSuccess;
}

static int hold(void *queue)
{
    return tlog_test_hip_hold(queue) != hipSuccess;
}

static int release(void *queue)
{
    return tlog_test_hip_release(queue) != hipSuccess;
}

static int finish(void *queue)
{
    return hipStreamSynchronize(queue) != hipSuccess;
}

int main(void)
{
    /* The test runtime always has a device: a skip would mean the real
     * runtime was loaded in its place. */
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess || n < 1) {
        fprintf(stderr, "the HIP test runtime is not the one loaded\n");
        return 1;
    }
    const suite_backend b = {
        .name = "hip",
        .open = open_device,
        .queue_create = queue_create,
        .queue_destroy = queue_destroy,
        .launch = launch,
        .finish = finish,
        .hold = hold,
        .release = release,
        /* hipEventElapsedTime reads float milliseconds. */
        .tolerance_ns = 20000,
    };
    int rc = suite_run(&b);
    tlog_test_hip_stats s;
    tlog_test_hip_get_stats(&s);
    /* HIP leaves re-recording a pending event undefined. */
    if (s.rerecords_in_flight != 0)
        rc = 1;
    return rc;
}
