/*
 * What the library adds to each device scope, apart from the backend's own
 * marker calls: device scopes on a backend whose markers cost nothing, so
 * the figures are the core's bookkeeping alone (pool, pending lists, frame
 * accounting) on the recording path, and per interval at a sync scope.
 * On a real device, a scope costs this plus two marker records (about
 * 2.5 us for CUDA events, see bench_cuda).
 *
 * Usage: bench_device [runs]   (default 21); medians of the runs.
 */
#include <stdio.h>
#include <stdlib.h>

#include <timerlog/timerlog.h>

#include "bench_util.h"
#include "device.h"

#define SCOPES 1000

static int null_create(void *impl, tlog_marker *out)
{
    static char slot;
    (void)impl;
    *out = (tlog_marker)&slot;
    return TLOG_OK;
}
static void null_destroy(void *impl, tlog_marker m) { (void)impl; (void)m; }
static int null_record(void *impl, void *q, tlog_marker m) { (void)impl; (void)q; (void)m; return TLOG_OK; }
static int null_record_own(void *impl, tlog_marker m) { (void)impl; (void)m; return TLOG_OK; }
static int null_query(void *impl, tlog_marker m) { (void)impl; (void)m; return TLOG_OK; }
static int null_wait(void *impl, tlog_marker m, uint64_t t) { (void)impl; (void)m; (void)t; return TLOG_OK; }
static int null_elapsed(void *impl, tlog_marker a, tlog_marker b, int64_t *ns)
{
    (void)impl; (void)a; (void)b;
    *ns = 1000;
    return TLOG_OK;
}

static const tlog_device_ops null_ops = {
    .size = sizeof(tlog_device_ops), .abi = TLOG_DEVICE_ABI, .backend = "null",
    .marker_create = null_create, .marker_destroy = null_destroy,
    .record = null_record, .record_own = null_record_own, .query = null_query,
    .wait = null_wait, .elapsed_ns = null_elapsed,
};

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    if (runs < 1)
        runs = 1;
    tlog_log *log;
    tlog_device *dev;
    if (tlog_create(NULL, &log) != TLOG_OK ||
        tlog_device_register_(log, &null_ops, NULL, "null", NULL, &dev) != TLOG_OK)
        return 1;
    static const tlog_site frame = {"Frame", __FILE__, "main", __LINE__, 1};
    static const tlog_site sync = {"Sync", __FILE__, "main", __LINE__, 1};
    static const tlog_site kernel = {"Kernel", __FILE__, "main", __LINE__, 1};
    double *record = calloc((size_t)runs, sizeof *record);
    double *resolve = calloc((size_t)runs, sizeof *resolve);
    for (int r = 0; r < runs + 1; r++) {
        tlog_log_begin(log, &frame);
        double t0 = now_ns();
        for (int i = 0; i < SCOPES; i++) {
            tlog_device_scope s = tlog_device_begin(dev, NULL, &kernel);
            tlog_device_end(&s);
        }
        double t1 = now_ns();
        tlog_log_begin(log, &sync);
        tlog_sync_end(dev, &sync);
        double t2 = now_ns();
        tlog_log_end(log, &frame);
        tlog_frame_release(tlog_frame_pop_ready(log));
        if (r > 0) {   /* the first run fills the pool */
            record[r - 1] = (t1 - t0) / SCOPES;
            resolve[r - 1] = (t2 - t1) / SCOPES;
        }
    }
    printf("device scope, library share (no marker cost): %.1f ns to record, "
           "%.1f ns to resolve at a sync scope (medians of %d runs x %d scopes)\n",
           median(record, runs), median(resolve, runs), runs, SCOPES);
    free(record);
    free(resolve);
    tlog_destroy(log);
    return 0;
}
