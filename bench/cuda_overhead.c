/*
 * CUDA: a device scope next to two bare cudaEventRecord calls (see
 * backend_bench.h; target ratio at most 1.1 on a GPU). Built as bench_cuda
 * against the toolkit's libcudart (a GPU) and as bench_cuda_test against
 * the test runtime that stands in for it.
 *
 * Usage: bench_cuda [runs]   (default 21). Exits 0 with a note without a GPU.
 */
#include <timerlog/cuda.h>

#include "backend_bench.h"

static cudaStream_t stream;
static cudaEvent_t events[2 * BENCH_BATCH];

static int available(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

static int open_device(tlog_log *log, tlog_device **out)
{
    return tlog_cuda_device_create(log, 0, NULL, out);
}

static void *prepare(void)
{
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        return NULL;
    for (int i = 0; i < 2 * BENCH_BATCH; i++)
        cudaEventCreate(&events[i]);
    return stream;
}

static void bare_records(void *queue)
{
    for (int i = 0; i < 2 * BENCH_BATCH; i++)
        cudaEventRecord(events[i], queue);
}

static void drain(void *queue)
{
    cudaStreamSynchronize(queue);
}

static void release(void *queue)
{
    for (int i = 0; i < 2 * BENCH_BATCH; i++)
        cudaEventDestroy(events[i]);
    cudaStreamDestroy(queue);
}

int main(int argc, char **argv)
{
    const bench_backend b = {"two bare cudaEventRecord", available, open_device, prepare,
                             bare_records, drain, release};
    return bench_backend_main(&b, argc, argv);
}
