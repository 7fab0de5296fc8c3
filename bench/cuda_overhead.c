/*
 * Host cost of a CUDA device scope (begin + end, no kernel between) next to
 * its physical floor measured in the same run: two bare cudaEventRecord
 * calls on the same stream with events made beforehand. Prints both as
 * medians of repeated runs, and their ratio (target: at most 1.1).
 *
 * Batches stay far below the ~1000 commands a stream accepts before
 * cudaEventRecord itself blocks; the stream is drained between batches,
 * outside the timed region.
 *
 * Usage: bench_cuda [runs]   (default 21). Exits 0 with a note without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>

#include <timerlog/cuda.h>

#include "bench_util.h"

#define BATCH 200

static double floor_ns(cudaStream_t s, cudaEvent_t *ev)
{
    double t0 = now_ns();
    for (int i = 0; i < BATCH; i++) {
        cudaEventRecord(ev[2 * i], s);
        cudaEventRecord(ev[2 * i + 1], s);
    }
    double t = (now_ns() - t0) / BATCH;
    cudaStreamSynchronize(s);
    return t;
}

static double scope_ns(tlog_log *log, tlog_device *dev, cudaStream_t s)
{
    static const tlog_site frame = {"Frame", __FILE__, "scope_ns", __LINE__, 1};
    static const tlog_site sync = {"Sync", __FILE__, "scope_ns", __LINE__, 1};
    static const tlog_site kernel = {"Kernel", __FILE__, "scope_ns", __LINE__, 1};
    tlog_log_begin(log, &frame);
    double t0 = now_ns();
    for (int i = 0; i < BATCH; i++) {
        tlog_device_scope scope = tlog_device_begin(dev, s, &kernel);
        tlog_device_end(&scope);
    }
    double t = (now_ns() - t0) / BATCH;
    tlog_log_begin(log, &sync);
    cudaStreamSynchronize(s);
    tlog_sync_end(dev, &sync);
    tlog_log_end(log, &frame);
    tlog_frame_release(tlog_frame_pop_ready(log));
    return t;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    if (runs < 1)
        runs = 1;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        puts("bench_cuda: no CUDA device; nothing measured");
        return 0;
    }
    tlog_log *log;
    tlog_device *dev;
    tlog_config cfg = {.size = sizeof cfg, .flags = TLOG_CONFIG_IGNORE_ENV};
    if (tlog_create(&cfg, &log) != TLOG_OK ||
        tlog_cuda_device_create(log, 0, NULL, &dev) != TLOG_OK)
        return 1;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEvent_t ev[2 * BATCH];
    for (int i = 0; i < 2 * BATCH; i++)
        cudaEventCreate(&ev[i]);
    double *lib = calloc((size_t)runs, sizeof *lib), *flr = calloc((size_t)runs, sizeof *flr);
    double *ratio = calloc((size_t)runs, sizeof *ratio);
    scope_ns(log, dev, s);   /* fills the pool */
    floor_ns(s, ev);
    for (int r = 0; r < runs; r++) {
        flr[r] = floor_ns(s, ev);
        lib[r] = scope_ns(log, dev, s);
        ratio[r] = lib[r] / flr[r];
    }
    tlog_device_info info = {.size = sizeof info};
    tlog_device_get_info(dev, &info);
    printf("%s: device scope %.0f ns, two bare cudaEventRecord %.0f ns, ratio %.3f "
           "(medians of %d runs x %d); empty-scope offset %lld ns\n",
           info.name, median(lib, runs), median(flr, runs), median(ratio, runs), runs, BATCH,
           (long long)info.empty_scope_ns);
    for (int i = 0; i < 2 * BATCH; i++)
        cudaEventDestroy(ev[i]);
    cudaStreamDestroy(s);
    tlog_destroy(log);
    free(lib);
    free(flr);
    free(ratio);
    return 0;
}
