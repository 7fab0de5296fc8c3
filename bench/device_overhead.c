/*
 * What the library adds to each device scope, apart from the backend's own
 * marker calls: device scopes on a backend whose markers cost nothing, so
 * the figures are the core's bookkeeping alone (pool, pending lists, frame
 * accounting) on the recording path, and per interval at a sync scope.
 * On a real device, a scope costs this plus two marker records, which
 * bench_cuda measures on a GPU (not run on one yet).
 *
 * Then the first frame of a new device against later ones, on a backend
 * whose marker creation takes a set time (600 ns, the H100's cudaEventCreate
 * in the notes, modelled by a spin): markers are made in batches when the
 * device is created, by the log's marker thread when the pool runs low, and
 * by tlog_device_reserve, never by a device scope's begin. A frame of 100
 * scopes after tlog_device_reserve(dev, 100), first against tenth; and how
 * many of 100 scopes begun back to back (no launch between them) a new
 * device without a reservation drops while its marker thread catches up.
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

#define CREATE_NS 600.0

/* A marker that takes CREATE_NS to make, as a vendor event does. */
static int slow_create(void *impl, tlog_marker *out)
{
    double until = now_ns() + CREATE_NS;
    while (now_ns() < until)
        ;
    return null_create(impl, out);
}

static const tlog_device_ops null_ops = {
    .size = sizeof(tlog_device_ops), .abi = TLOG_DEVICE_ABI, .backend = "null",
    .marker_create = null_create, .marker_destroy = null_destroy,
    .record = null_record, .record_own = null_record_own, .query = null_query,
    .wait = null_wait, .elapsed_ns = null_elapsed,
};

static const tlog_device_ops slow_create_ops = {
    .size = sizeof(tlog_device_ops), .abi = TLOG_DEVICE_ABI, .backend = "null",
    .marker_create = slow_create, .marker_destroy = null_destroy,
    .record = null_record, .record_own = null_record_own, .query = null_query,
    .wait = null_wait, .elapsed_ns = null_elapsed,
};

#define FIRST_SCOPES 100   /* one frame's device scopes, above the default batch */

/* ns per device scope recorded in one frame of `log` on `dev`. */
static double frame_of_scopes(tlog_log *log, tlog_device *dev)
{
    static const tlog_site frame = {"Frame", __FILE__, "first", __LINE__, 1};
    static const tlog_site kernel = {"Kernel", __FILE__, "first", __LINE__, 1};
    tlog_log_begin(log, &frame);
    double t0 = now_ns();
    for (int i = 0; i < FIRST_SCOPES; i++) {
        tlog_device_scope s = tlog_device_begin(dev, NULL, &kernel);
        tlog_device_end(&s);
    }
    double t1 = now_ns();
    tlog_log_end(log, &frame);
    tlog_frame_release(tlog_frame_pop_ready(log));
    return (t1 - t0) / FIRST_SCOPES;
}

static uint64_t dropped(const tlog_device *dev)
{
    tlog_device_info i = {.size = sizeof i};
    tlog_device_get_info(dev, &i);
    return i.scopes_dropped;
}

/* A new device's first frame, and its tenth, per scope, after a reservation;
 * then a new device's first frame without one: scopes dropped. */
static void quiet(void *user, const tlog_error *e) { (void)user; (void)e; }

static void first_use(int runs)
{
    tlog_config quiet_cfg = {.size = sizeof quiet_cfg, .on_error = quiet};
    double *first = calloc((size_t)runs, sizeof *first);
    double *later = calloc((size_t)runs, sizeof *later);
    double *unreserved = calloc((size_t)runs, sizeof *unreserved);
    uint64_t drops = 0;
    for (int r = 0; r < runs; r++) {
        tlog_log *log;
        tlog_device *dev;
        if (tlog_create(&quiet_cfg, &log) != TLOG_OK)
            return;
        if (tlog_device_register_(log, &slow_create_ops, NULL, "null", NULL, &dev) == TLOG_OK &&
            tlog_device_reserve(dev, FIRST_SCOPES) == TLOG_OK) {
            first[r] = frame_of_scopes(log, dev);
            for (int k = 0; k < 9; k++)
                later[r] = frame_of_scopes(log, dev);
            drops += dropped(dev);
        }
        if (tlog_device_register_(log, &slow_create_ops, NULL, "null", NULL, &dev) == TLOG_OK) {
            frame_of_scopes(log, dev);
            unreserved[r] = (double)dropped(dev);
        }
        tlog_destroy(log);
    }
    double f = median(first, runs), l = median(later, runs);
    printf("device scope with %.0f ns marker creation, after tlog_device_reserve: first frame "
           "of a new device %.1f ns, tenth frame %.1f ns, ratio %.2f, %llu dropped (medians of "
           "%d runs x %d scopes)\n",
           CREATE_NS, f, l, f / l, (unsigned long long)drops, runs, FIRST_SCOPES);
    printf("without a reservation, %d scopes back to back on a new device: %.0f dropped while "
           "its marker thread makes more (median of %d runs)\n",
           FIRST_SCOPES, median(unreserved, runs), runs);
    free(first);
    free(later);
    free(unreserved);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    if (runs < 1)
        runs = 1;
    tlog_log *log;
    tlog_device *dev;
    if (tlog_create(NULL, &log) != TLOG_OK ||
        tlog_device_register_(log, &null_ops, NULL, "null", NULL, &dev) != TLOG_OK ||
        tlog_device_reserve(dev, SCOPES) != TLOG_OK)
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
    first_use(runs);
    return 0;
}
