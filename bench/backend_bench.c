/* The measuring loop shared by the backend benches (backend_bench.h). */
#include <stdio.h>
#include <stdlib.h>

#include "backend_bench.h"
#include "bench_util.h"

static double floor_ns(const bench_backend *b, void *queue)
{
    double t0 = now_ns();
    b->floor(queue);
    double t = (now_ns() - t0) / BENCH_BATCH;
    b->drain(queue);
    return t;
}

static double scope_ns(const bench_backend *b, tlog_log *log, tlog_device *dev, void *queue)
{
    static const tlog_site frame = {"Frame", __FILE__, "scope_ns", __LINE__, 1};
    static const tlog_site sync = {"Sync", __FILE__, "scope_ns", __LINE__, 1};
    static const tlog_site kernel = {"Kernel", __FILE__, "scope_ns", __LINE__, 1};
    tlog_log_begin(log, &frame);
    double t0 = now_ns();
    for (int i = 0; i < BENCH_BATCH; i++) {
        tlog_device_scope scope = tlog_device_begin(dev, queue, &kernel);
        tlog_device_end(&scope);
    }
    double t = (now_ns() - t0) / BENCH_BATCH;
    tlog_log_begin(log, &sync);
    b->drain(queue);
    tlog_sync_end(dev, &sync);
    tlog_log_end(log, &frame);
    tlog_frame_release(tlog_frame_pop_ready(log));
    return t;
}

int bench_backend_main(const bench_backend *b, int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    if (runs < 1)
        runs = 1;
    if (!b->available()) {
        printf("%s: no device; nothing measured\n", argv[0]);
        return 0;
    }
    tlog_log *log;
    tlog_device *dev;
    tlog_config cfg = {.size = sizeof cfg, .flags = TLOG_CONFIG_IGNORE_ENV};
    if (tlog_create(&cfg, &log) != TLOG_OK || b->open(log, &dev) != TLOG_OK)
        return 1;
    void *queue = b->prepare();
    if (!queue)
        return 1;
    double *lib = calloc((size_t)runs, sizeof *lib), *flr = calloc((size_t)runs, sizeof *flr);
    double *ratio = calloc((size_t)runs, sizeof *ratio);
    /* Markers for a whole batch, made now: a scope that found none would be
     * dropped, and timing it would time nothing. */
    if (tlog_device_reserve(dev, BENCH_BATCH) != TLOG_OK)
        fprintf(stderr, "%s: could not reserve markers for %d scopes\n", argv[0], BENCH_BATCH);
    scope_ns(b, log, dev, queue);
    floor_ns(b, queue);
    tlog_device_info before = {.size = sizeof before};
    tlog_device_get_info(dev, &before);
    for (int r = 0; r < runs; r++) {
        flr[r] = floor_ns(b, queue);
        lib[r] = scope_ns(b, log, dev, queue);
        ratio[r] = lib[r] / flr[r];
    }
    tlog_device_info info = {.size = sizeof info};
    tlog_device_get_info(dev, &info);
    printf("%s: device scope %.0f ns, %s %.0f ns, ratio %.3f "
           "(medians of %d runs x %d); empty-scope offset %lld ns; %llu of the timed scopes "
           "dropped\n",
           info.name, median(lib, runs), b->floor_name, median(flr, runs), median(ratio, runs),
           runs, BENCH_BATCH, (long long)info.empty_scope_ns,
           (unsigned long long)(info.scopes_dropped - before.scopes_dropped));
    tlog_destroy(log);
    b->release(queue);
    free(lib);
    free(flr);
    free(ratio);
    return 0;
}
