/*
 * The device behaviour suite on a CUDA GPU (skips with 77 without one).
 * Work is a kernel that spins on the GPU's global timer.
 */
#include <stdio.h>

#include <timerlog/cuda.h>

#include "device_suite.h"
#include "test_kernels_ptx.h"

static cudaKernel_t spin;
static uint64_t *scratch;   /* device memory the spin kernel writes */

static int open_device(tlog_log *log, tlog_device **out)
{
    return tlog_cuda_device_create(log, 0, NULL, out);
}

static void *queue_create(void)
{
    cudaStream_t s = NULL;
    return cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess ? s : NULL;
}

static void queue_destroy(void *queue)
{
    cudaStreamDestroy(queue);
}

static int launch(void *queue, uint64_t ns)
{
    dim3 one = {1, 1, 1};
    void *args[] = {&ns, &scratch};
    return cudaLaunchKernel((const void *)spin, one, one, args, 0, queue) != cudaSuccess;
}

static int finish(void *queue)
{
    return cudaStreamSynchronize(queue) != cudaSuccess;
}

int main(void)
{
    int n = 0;
    cudaLibrary_t lib;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        puts("no CUDA device: suite skipped");
        return 77;
    }
    if (cudaLibraryLoadData(&lib, tlog_test_kernels_ptx, NULL, NULL, 0, NULL, NULL, 0) !=
            cudaSuccess ||
        cudaLibraryGetKernel(&spin, lib, "tlog_test_spin") != cudaSuccess ||
        cudaMalloc((void **)&scratch, sizeof *scratch) != cudaSuccess)
        return 1;
    const suite_backend b = {
        .name = "cuda",
        .open = open_device,
        .queue_create = queue_create,
        .queue_destroy = queue_destroy,
        .launch = launch,
        .finish = finish,
        /* Launch gaps are hidden behind a busy stream; what is left is the
         * event pair's own cost and the spin's exit. */
        .tolerance_ns = 50000,
    };
    int rc = suite_run(&b);
    cudaFree(scratch);
    cudaLibraryUnload(lib);
    return rc;
}
