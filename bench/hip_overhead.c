/*
 * HIP: a device scope next to two bare hipEventRecord calls (see
 * backend_bench.h). Built as bench_hip against the HIP runtime (an AMD GPU)
 * and as bench_hip_test against the test runtime that stands in for it.
 *
 * Usage: bench_hip [runs]   (default 21). Exits 0 with a note without a GPU.
 */
#include <timerlog/hip.h>

#include "backend_bench.h"

static hipStream_t stream;
static hipEvent_t events[2 * BENCH_BATCH];

static int available(void)
{
    int n = 0;
    return hipGetDeviceCount(&n) == hipSuccess && n > 0;
}

static int open_device(tlog_log *log, tlog_device **out)
{
    return tlog_hip_device_create(log, 0, NULL, out);
}

static void *prepare(void)
{
    if (hipStreamCreateWithFlags(&stream, hipStreamNonBlocking) != hipSuccess)
        return NULL;
    for (int i = 0; i < 2 * BENCH_BATCH; i++)
        hipEventCreate(&events[i]);
    return stream;
}

static void bare_records(void *queue)
{
    for (int i = 0; i < 2 * BENCH_BATCH; i++)
        hipEventRecord(events[i], queue);
}

static void drain(void *queue)
{
    hipStreamSynchronize(queue);
}

static void release(void *queue)
{
    for (int i = 0; i < 2 * BENCH_BATCH; i++)
        hipEventDestroy(events[i]);
    hipStreamDestroy(queue);
}

int main(int argc, char **argv)
{
    const bench_backend b = {"two bare hipEventRecord", available, open_device, prepare,
                             bare_records, drain, release};
    return bench_backend_main(&b, argc, argv);
}
