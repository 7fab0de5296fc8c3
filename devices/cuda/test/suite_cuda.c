/*
 * The device behaviour suite on a CUDA GPU (skips with 77 without one).
 * Work is a kernel that spins on the GPU's global timer.
 *
 * Built with TLOG_CUDA_TEST_RUNTIME, the same suite runs on the test
 * runtime that stands in for libcudart (devices/cuda/test), where the
 * kernel is simulated and streams can be held; there a missing device
 * means the wrong runtime was loaded, and fails.
 */
#include <stdio.h>
#include <string.h>

#include <timerlog/cuda.h>

#include "device_suite.h"
#include "test_kernels_ptx.h"
#ifdef TLOG_CUDA_TEST_RUNTIME
#include "cuda_test_runtime.h"
#endif

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

#ifdef TLOG_CUDA_TEST_RUNTIME
static int hold(void *queue)
{
    return tlog_test_cuda_hold(queue) != cudaSuccess;
}

static int release(void *queue)
{
    return tlog_test_cuda_release(queue) != cudaSuccess;
}

/* No launch gaps to hide: the events' own cost and float milliseconds. */
#define TOLERANCE_NS 20000
#else
/* A GPU's streams are kept busy instead (the suite's default). */
static int (*const hold)(void *) = NULL;
static int (*const release)(void *) = NULL;
#define TOLERANCE_NS 50000

/* Whether the test runtime answers in place of the toolkit's libcudart:
 * the suite would then pass without a GPU. */
static int on_test_runtime(void)
{
    struct cudaDeviceProp p;
    return cudaGetDeviceProperties(&p, 0) == cudaSuccess &&
           strncmp(p.name, "timerlog test", 13) == 0;
}
#endif

int main(void)
{
    int n = 0;
    cudaLibrary_t lib;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
#ifdef TLOG_CUDA_TEST_RUNTIME
        fprintf(stderr, "the CUDA test runtime is not the one loaded\n");
        return 1;
#else
        puts("no CUDA device: suite skipped");
        return 77;
#endif
    }
#ifndef TLOG_CUDA_TEST_RUNTIME
    if (on_test_runtime()) {
        fprintf(stderr, "the CUDA test runtime was loaded in place of libcudart\n");
        return 1;
    }
#endif
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
        .hold = hold,
        .release = release,
        /* On a GPU, launch gaps are hidden behind a busy stream; what is
         * left is the event pair's own cost and the spin's exit. */
        .tolerance_ns = TOLERANCE_NS,
    };
    int rc = suite_run(&b);
    cudaFree(scratch);
    cudaLibraryUnload(lib);
    return rc;
}
