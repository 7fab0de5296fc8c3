/*
 * How the library's interval for a dispatch compares with the application's
 * own timestamps written directly around the same dispatch, on the device
 * the loader finds (Mesa's lavapipe in CI; exits 77 without one):
 *
 *     scope begin | app timestamp A | spin dispatch | app timestamp B | scope end
 *
 * For spins of several lengths, REPS scopes each, it prints the offset
 * (library interval - (B - A)) as median and spread (10th to 90th
 * percentile), the same after subtracting the calibrated empty-scope offset
 * (tlog_device_info.empty_scope_ns, as TLOG_DEVICE_SUBTRACT_OFFSET does),
 * and the spin's own time by the shader's clock. It fails only if an offset
 * is negative: the library's markers enclose the application's, so its
 * interval can never be the shorter.
 *
 *     accuracy_vulkan [reps]   (default 31)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerlog/vulkan.h>

#include "check.h"
#include "vk_app.h"

#define MAX_REPS 101


static vk_app app;

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, __FILE__, "accuracy", 0, TLOG_LEVEL_COARSE);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct stats {
    int64_t p10, median, p90;
} stats;

static stats stats_of(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    return (stats){v[n / 10], v[n / 2], v[n - 1 - n / 10]};
}

static void stamp(VkCommandBuffer cmd, VkQueryPool pool, uint32_t q)
{
    if (app.flags & TLOG_VK_SYNCHRONIZATION2)
        vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool, q);
    else
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, q);
}

/* One frame of `reps` scopes around spins of `ns`: the library's intervals,
 * the application's, and the shader's own. */
static int measure(tlog_log *log, tlog_device *dev, vk_stream *s, VkQueryPool pool,
                   uint64_t ns, int reps, int64_t *lib, int64_t *own, int64_t *self)
{
    vkResetQueryPool(app.device, pool, 0, 2 * (uint32_t)reps);
    tlog_log_begin(log, site("Frame"));
    for (int r = 0; r < reps; r++) {
        tlog_device_scope d = tlog_vk_begin(dev, s->open, site("Dispatch"));
        stamp(s->open, pool, 2 * (uint32_t)r);
        vk_app_spin(&app, s->open, ns, (uint32_t)r);
        stamp(s->open, pool, 2 * (uint32_t)r + 1);
        tlog_device_end(&d);
    }
    tlog_log_begin(log, site("Wait"));
    if (vk_stream_finish(s) != 0)
        return 1;
    tlog_sync_end(dev, site("Wait"));
    tlog_log_end(log, site("Frame"));
    tlog_frame *f = tlog_frame_pop_ready(log);
    uint64_t ticks[2 * MAX_REPS];
    if (!f || vkGetQueryPoolResults(app.device, pool, 0, 2 * (uint32_t)reps, sizeof ticks, ticks,
                                    sizeof ticks[0],
                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) !=
                  VK_SUCCESS)
        return 1;
    int n = 0;
    tlog_instance in = {.size = sizeof in};
    for (size_t k = 0; tlog_frame_get_instance(f, k, &in) == TLOG_OK; k++) {
        tlog_node_info i = {.size = sizeof i};
        if (tlog_node_get_info(in.node, &i) == TLOG_OK && i.device && n < reps &&
            strcmp(i.name, "Dispatch") == 0)
            lib[n++] = (int64_t)in.duration_ns;
    }
    tlog_frame_release(f);
    for (int r = 0; r < reps; r++) {
        own[r] = (int64_t)((double)(ticks[2 * r + 1] - ticks[2 * r]) * app.period + 0.5);
        self[r] = (int64_t)app.words[r];
    }
    return n == reps ? 0 : 1;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 31;
    if (reps < 3 || reps > MAX_REPS)
        reps = 31;
#ifdef VK_APP_UNDER_TSAN
    puts("accuracy_vulkan: not measured under ThreadSanitizer, which slows lavapipe itself");
    return 77;
#endif
    int rc = vk_app_open(&app, VK_APP_SYNC2 | VK_APP_CALIBRATED);
    if (rc != 0)
        return rc;
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_vk_target t = vk_app_target(&app);
    tlog_device *dev = NULL;
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2 * MAX_REPS};
    VkQueryPool pool = VK_NULL_HANDLE;
    vk_stream *s = vk_stream_create(&app);
    if (!s || tlog_vk_device_create(log, &t, NULL, &dev) != TLOG_OK ||
        vkCreateQueryPool(app.device, &qi, NULL, &pool) != VK_SUCCESS) {
        fprintf(stderr, "cannot set up\n");
        return 1;
    }
    tlog_device_info info = {.size = sizeof info};
    tlog_device_get_info(dev, &info);
    int64_t empty = info.empty_scope_ns;
    printf("%s: %d scopes per spin length; empty-scope offset %.1f us\n", app.name, reps,
           empty / 1e3);
    printf("offset = library interval - application's timestamps around the same dispatch;\n"
           "corrected = offset - empty-scope offset; median [10th..90th percentile], in us\n");
    printf("%9s %11s %30s %30s\n", "spin", "self", "offset", "corrected");
    const uint64_t spins[] = {0, 10000, 100000, 1000000, 10000000};
    int64_t lib[MAX_REPS], own[MAX_REPS], self[MAX_REPS], off[MAX_REPS], cor[MAX_REPS];
    int64_t *warm = calloc((size_t)reps, 3 * sizeof *warm);
    if (warm)   /* fills the pool, so that no frame waits for markers */
        measure(log, dev, s, pool, 0, reps, warm, warm + reps, warm + 2 * reps);
    free(warm);
    for (size_t k = 0; k < sizeof spins / sizeof spins[0]; k++) {
        if (measure(log, dev, s, pool, spins[k], reps, lib, own, self) != 0) {
            fprintf(stderr, "spin %llu ns: frame not read\n", (unsigned long long)spins[k]);
            return 1;
        }
        for (int r = 0; r < reps; r++) {
            off[r] = lib[r] - own[r];
            cor[r] = off[r] - empty;
            CHECK(off[r] >= 0);
        }
        stats so = stats_of(off, reps), sc = stats_of(cor, reps), ss = stats_of(self, reps);
        printf("%7.1fus %9.1fus %10.1f [%6.1f..%7.1f] %14.1f [%6.1f..%7.1f]\n", spins[k] / 1e3,
               ss.median / 1e3, so.median / 1e3, so.p10 / 1e3, so.p90 / 1e3, sc.median / 1e3,
               sc.p10 / 1e3, sc.p90 / 1e3);
    }
    CHECK(errs.count == 0);
    vkDestroyQueryPool(app.device, pool, NULL);
    vk_stream_destroy(s);
    tlog_destroy(log);
    vk_app_close(&app);
    return check_failures ? 1 : 0;
}
