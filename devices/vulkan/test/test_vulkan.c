/*
 * The Vulkan backend's own rules, on the device the loader finds (Mesa's
 * lavapipe in CI; each case skips with 77 without one). One case per
 * process, since the shim between the library and the driver is the
 * process's, and a lost device stays lost:
 *
 *     test_vulkan CASE
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <timerlog/vulkan.h>

#include "check.h"
#include "vk_app.h"
#include "vk_shim.h"

#define US 1000ull
#define MS 1000000ull
/* lavapipe runs the device on the host's cores: each timestamp flushes its
 * queue, and a dispatch costs microseconds to tens of microseconds. */
#define TOLERANCE_NS (300 * US)

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static vk_app app;

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, __FILE__, "test", 0, TLOG_LEVEL_COARSE);
}

static tlog_device_info info(tlog_device *dev)
{
    tlog_device_info i = {.size = sizeof i};
    CHECK(tlog_device_get_info(dev, &i) == TLOG_OK);
    return i;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A device on `app`, through the shim; NULL (and a failed check) if it
 * cannot be made. */
static tlog_device *device_on(tlog_log *log, const tlog_device_config *config)
{
    tlog_vk_target t = vk_app_target(&app);
    t.get_instance_proc_addr = shim_get_instance_proc_addr;
    tlog_device *dev = NULL;
    CHECK(tlog_vk_device_create(log, &t, config, &dev) == TLOG_OK);
    return dev;
}

/* A device scope around a spin of `ns` on the stream's open command
 * buffer. */
static void timed(tlog_device *dev, vk_stream *s, const char *name, uint64_t ns)
{
    tlog_device_scope d = tlog_vk_begin(dev, s->open, site(name));
    CHECK(d.slot_ != NULL);
    vk_app_spin(&app, s->open, ns, 0);
    CHECK(tlog_device_end(&d) == TLOG_OK);
}

typedef struct found {
    const char *name;
    const tlog_node *node;   /* the first */
    tlog_node_info info;
    int count;
} found;

static int match(void *user, const tlog_node *node, const tlog_node_info *i)
{
    found *f = user;
    if (strcmp(i->name, f->name) == 0 && f->count++ == 0) {
        f->node = node;
        f->info = *i;
    }
    return 0;
}

/* The name the library gives the app's device: its model, then its place
 * among the instance's physical devices, "model (N)", as CUDA's ordinal. */
static const char *ordinal_name(const vk_app *app)
{
    static char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE + 16];
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(app->instance, &n, NULL);
    VkPhysicalDevice all[16];
    n = n < 16 ? n : 16;
    vkEnumeratePhysicalDevices(app->instance, &n, all);
    for (uint32_t k = 0; k < n; k++)
        if (all[k] == app->physical)
            snprintf(name, sizeof name, "%s (%u)", app->name, k);
    return name;
}

/* How many rows are named `name`; the first one's info in *out. */
static int row(const tlog_frame *frame, const char *name, tlog_node_info *out)
{
    found f = {.name = name, .info = {.size = sizeof f.info}};
    tlog_frame_walk(frame, match, &f);
    if (out)
        *out = f.info;
    return f.count;
}

/* The name of the parent of the first row named `name` ("" if none). */
static const char *parent_of(const tlog_frame *frame, const char *name)
{
    static tlog_node_info p;
    found f = {.name = name, .info = {.size = sizeof f.info}};
    tlog_frame_walk(frame, match, &f);
    const tlog_node *parent = f.node ? tlog_node_parent(f.node) : NULL;
    p.size = sizeof p;
    return parent && tlog_node_get_info(parent, &p) == TLOG_OK ? p.name : "";
}

/* Every report's message, one a line, besides what check_collect keeps. */
typedef struct reports {
    check_errors errs;
    char all[8192];
} reports;

static void collect_all(void *user, const tlog_error *e)
{
    reports *r = user;
    check_collect(&r->errs, e);
    size_t n = strlen(r->all);
    snprintf(r->all + n, sizeof r->all - n, "%s\n", e->message);
}

static tlog_log *log_reporting_to(reports *r, uint64_t sync_timeout_ns)
{
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .sync_timeout_ns = sync_timeout_ns, .on_error = collect_all,
                     .error_user = r};
    tlog_log *log = NULL;
    CHECK(tlog_create(&c, &log) == TLOG_OK);
    return log;
}

static tlog_frame_info frame_info(const tlog_frame *f)
{
    tlog_frame_info fi = {.size = sizeof fi};
    CHECK(f && tlog_frame_get_info(f, &fi) == TLOG_OK);
    return fi;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/* Bad targets are refused with a report that says what is wrong; a NULL
 * device only counts its scopes; a NULL command buffer is refused. */
static void misuse(void)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = (tlog_device *)&errs;
    CHECK(tlog_vk_device_create(log, NULL, NULL, &dev) == TLOG_EINVAL);
    CHECK(dev == NULL);
    CHECK(errs.count == 1 && errs.last_code == TLOG_EINVAL && strstr(errs.last, "no target"));

    tlog_vk_target good = vk_app_target(&app);
    CHECK(tlog_vk_device_create(log, &good, NULL, NULL) == TLOG_EINVAL);
    struct {
        const char *why;
        tlog_vk_target t;
    } bad[6];
    for (int k = 0; k < 6; k++)
        bad[k].t = good;
    bad[0].why = "hostQueryReset";
    bad[0].t.flags &= ~(unsigned)TLOG_VK_HOST_QUERY_RESET;
    bad[1].why = "unknown flags";
    bad[1].t.flags |= 1u << 9;
    bad[2].why = "needs an instance";
    bad[2].t.device = VK_NULL_HANDLE;
    bad[3].why = "go together";
    bad[3].t.unlock_queue = NULL;
    bad[4].why = "size";
    bad[4].t.size = sizeof(size_t);
    bad[5].why = "needs an instance";
    bad[5].t.queue = VK_NULL_HANDLE;
    for (int k = 0; k < 6; k++) {
        int before = errs.count;
        dev = (tlog_device *)&errs;
        CHECK(tlog_vk_device_create(log, &bad[k].t, NULL, &dev) == TLOG_EINVAL);
        CHECK(dev == NULL);
        CHECK(errs.count == before + 1 && strstr(errs.last, bad[k].why) != NULL);
    }
    tlog_device_config odd = {.size = sizeof odd, .flags = 1u << 20};
    CHECK(tlog_vk_device_create(log, &good, &odd, &dev) == TLOG_EINVAL && dev == NULL);

    CHECK(tlog_vk_device_create(log, &good, NULL, &dev) == TLOG_OK);
    tlog_device_info i = info(dev);
    CHECK(strcmp(i.backend, "vulkan") == 0 && strcmp(i.name, ordinal_name(&app)) == 0);
    printf("%s: empty-scope offset %lld ns\n", i.name, (long long)i.empty_scope_ns);

    vk_stream *s = vk_stream_create(&app);
    tlog_log_begin(log, site("Frame"));
    uint64_t untimed = tlog_vk_scopes_untimed();
    tlog_device_scope d = tlog_vk_begin(NULL, s->open, site("No device"));
    CHECK(d.slot_ == NULL && tlog_vk_scopes_untimed() == untimed + 1);
    int before = errs.count;
    d = tlog_vk_begin(dev, VK_NULL_HANDLE, site("No command buffer"));
    CHECK(d.slot_ == NULL && info(dev).scopes_failed == 1);
    CHECK(errs.count == before + 1 && errs.last_code == TLOG_EINVAL);
    tlog_log_end(log, site("Frame"));
    tlog_frame_release(tlog_frame_pop(log));
    vk_stream_destroy(s);
    tlog_destroy(log);
}

/* Work of known relative cost reads in proportion: the work shader's
 * rounds, 1x, 2x and 4x, medians over frames. */
static void relative_cost(void)
{
    enum { FRAMES = 7, ROUNDS = 3000 };
    const int mult[3] = {1, 2, 4};
    const char *names[3] = {"Work x1", "Work x2", "Work x4"};
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = device_on(log, NULL);
    vk_stream *s = vk_stream_create(&app);
    int64_t ns[3][FRAMES];
    for (int f = 0; f < FRAMES && dev; f++) {
        tlog_log_begin(log, site("Frame"));
        for (int k = 0; k < 3; k++) {
            tlog_device_scope d = tlog_vk_begin(dev, s->open, site(names[k]));
            vk_app_work(&app, s->open, ROUNDS * (uint32_t)mult[k], (uint32_t)k);
            tlog_device_end(&d);
        }
        tlog_log_begin(log, site("Wait"));
        CHECK(vk_stream_finish(s) == 0);
        tlog_sync_end(dev, site("Wait"));
        tlog_log_end(log, site("Frame"));
        tlog_frame *fr = tlog_frame_pop_ready(log);
        CHECK(fr != NULL);
        for (int k = 0; k < 3; k++) {
            tlog_node_info i = {0};
            CHECK(fr && row(fr, names[k], &i) == 1);
            ns[k][f] = (int64_t)i.total_ns;
        }
        tlog_frame_release(fr);
    }
    int64_t med[3];
    for (int k = 0; k < 3; k++) {
        for (int a = 1; a < FRAMES; a++)   /* insertion sort */
            for (int b = a; b > 0 && ns[k][b - 1] > ns[k][b]; b--) {
                int64_t t = ns[k][b];
                ns[k][b] = ns[k][b - 1];
                ns[k][b - 1] = t;
            }
        med[k] = ns[k][FRAMES / 2];
    }
    double r2 = (double)med[1] / (double)med[0], r4 = (double)med[2] / (double)med[0];
    printf("work of %d, %d and %d rounds: medians %.3f, %.3f, %.3f ms; ratios %.2f and %.2f\n",
           ROUNDS, 2 * ROUNDS, 4 * ROUNDS, med[0] / 1e6, med[1] / 1e6, med[2] / 1e6, r2, r4);
    CHECK(med[0] > 100000);
    CHECK(r2 > 1.6 && r2 < 2.4);
    CHECK(r4 > 3.2 && r4 < 4.8);
    CHECK(errs.count == 0);
    vk_stream_destroy(s);
    tlog_destroy(log);
}

/* A lost device: the pending interval shows unresolved without waiting
 * out the sync timeout, the loss is reported as such, later scopes are
 * refused and counted, and the device can still be destroyed. */
static void device_loss(void)
{
    static reports r;
    check_errors *e = &r.errs;
    tlog_log *log = log_reporting_to(&r, 2000 * MS);
    tlog_device *dev = device_on(log, NULL);
    vk_stream *s = vk_stream_create(&app);
    if (!dev || !s)
        return;
    tlog_log_begin(log, site("Frame"));
    CHECK(vk_stream_hold(s) == 0);   /* pending until released */
    timed(dev, s, "Lost", 1 * MS);
    tlog_log_end(log, site("Frame"));
    CHECK(vk_stream_submit(s) == 0);
    atomic_store(&shim.lose, true);
    int64_t t0 = now_ns();
    tlog_frame *f = tlog_frame_pop(log);
    CHECK(now_ns() - t0 < 1000 * (int64_t)MS);
    tlog_frame_info fi = frame_info(f);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 1);
    CHECK(e->count >= 1 && e->last_code == TLOG_EDEVICE);
    tlog_frame_release(f);

    tlog_log_begin(log, site("Frame"));
    tlog_device_scope d = tlog_vk_begin(dev, s->open, site("After"));
    CHECK(d.slot_ == NULL);
    tlog_log_end(log, site("Frame"));
    CHECK(info(dev).scopes_failed == 1);
    CHECK(strstr(r.all, "was lost (VK_ERROR_DEVICE_LOST)") != NULL);
    printf("reports:\n%s", r.all);
    tlog_frame_release(tlog_frame_pop(log));

    /* The loss is the shim's: the application's device still runs. */
    CHECK(vk_stream_release(s) == 0);
    CHECK(vk_stream_finish(s) == 0);
    t0 = now_ns();
    tlog_destroy(log);
    CHECK(now_ns() - t0 < 1000 * (int64_t)MS);
    vk_stream_destroy(s);
}

/* max_scopes in flight: later scopes are dropped, counted and reported
 * once; the frame keeps the others, and the next frame times all. */
static void pool_cap(void)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device_config c = {.size = sizeof c, .max_scopes = 8, .pool_batch = 8};
    tlog_device *dev = device_on(log, &c);
    vk_stream *s = vk_stream_create(&app);
    if (!dev || !s)
        return;
    for (int frame = 0; frame < 2; frame++) {
        tlog_log_begin(log, site("Frame"));
        int n = frame == 0 ? 20 : 8;
        for (int k = 0; k < n; k++) {
            tlog_device_scope d = tlog_vk_begin(dev, s->open, site("Scope"));
            vk_app_spin(&app, s->open, 10 * US, 0);
            tlog_device_end(&d);
        }
        tlog_log_begin(log, site("Wait"));
        CHECK(vk_stream_finish(s) == 0);
        tlog_sync_end(dev, site("Wait"));
        tlog_log_end(log, site("Frame"));
        tlog_frame *f = tlog_frame_pop_ready(log);
        tlog_frame_info fi = frame_info(f);
        CHECK(fi.device_intervals == 8 && fi.device_unresolved == 0);
        tlog_frame_release(f);
        CHECK(info(dev).scopes_dropped == 12);
        CHECK(errs.count == 1 && errs.last_code == TLOG_EFULL);
    }
    vk_stream_destroy(s);
    tlog_destroy(log);
}

/* Query pools that cannot be made: scopes beyond the markers made are
 * dropped and counted, the reason is reported, and once pools can be made
 * again the pool grows. */
static void pool_exhaustion(void)
{
    static reports r;
    tlog_log *log = log_reporting_to(&r, 0);
    tlog_device_config c = {.size = sizeof c, .flags = TLOG_DEVICE_NO_MARKER_THREAD};
    tlog_device *dev = device_on(log, &c);
    vk_stream *s = vk_stream_create(&app);
    if (!dev || !s)
        return;
    uint64_t ready = info(dev).pool_free;
    printf("markers ready for %llu scopes; %llu query pool(s)\n", (unsigned long long)ready,
           (unsigned long long)atomic_load(&shim.pools));
    atomic_store(&shim.fail_pools, true);
    CHECK(tlog_device_reserve(dev, (uint32_t)ready + 100) == TLOG_ENOMEM);
    int more = (int)(info(dev).pool_free - ready);
    tlog_log_begin(log, site("Frame"));
    for (uint64_t k = 0; k < ready + (uint64_t)more + 30; k++) {
        tlog_device_scope d = tlog_vk_begin(dev, s->open, site("Scope"));
        tlog_device_end(&d);
    }
    tlog_log_end(log, site("Frame"));
    CHECK(info(dev).scopes_dropped == 30);
    CHECK(strstr(r.all, "a query pool for more markers could not be made") != NULL);
    CHECK(strstr(r.all, "no marker ready") != NULL);
    printf("reports:\n%s", r.all);
    CHECK(vk_stream_finish(s) == 0);
    tlog_frame *f = tlog_frame_pop(log);
    tlog_frame_info fi = frame_info(f);
    CHECK(fi.device_intervals == ready + (uint64_t)more && fi.device_unresolved == 0);
    tlog_frame_release(f);

    atomic_store(&shim.fail_pools, false);
    CHECK(tlog_device_reserve(dev, (uint32_t)ready + 100) == TLOG_OK);
    tlog_log_begin(log, site("Frame"));
    for (uint64_t k = 0; k < ready + 100; k++) {
        tlog_device_scope d = tlog_vk_begin(dev, s->open, site("Scope"));
        tlog_device_end(&d);
    }
    tlog_log_end(log, site("Frame"));
    CHECK(vk_stream_finish(s) == 0);
    f = tlog_frame_pop(log);
    fi = frame_info(f);
    CHECK(fi.device_intervals == ready + 100 && fi.device_unresolved == 0);
    CHECK(info(dev).scopes_dropped == 30);
    tlog_frame_release(f);
    vk_stream_destroy(s);
    tlog_destroy(log);
}

/* A long frame loop on two command buffers a frame: the marker pool, the
 * query pools and resident memory stay flat (memory is not measured under
 * AddressSanitizer, whose quarantine holds on to freed memory). */
static void long_loop_flat_memory(void)
{
    enum { FRAMES = 3000, SCOPES = 8 };
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = device_on(log, NULL);
    vk_stream *s[2] = {vk_stream_create(&app), vk_stream_create(&app)};
    if (!dev || !s[0] || !s[1])
        return;
    uint64_t pool_at_100 = 0, pools_at_100 = 0;
    long rss_at_500 = 0;
    for (int frame = 0; frame < FRAMES; frame++) {
        tlog_log_begin(log, site("Frame"));
        for (int k = 0; k < SCOPES; k++) {
            tlog_device_scope d = tlog_vk_begin(dev, s[k % 2]->open, site("Tiny"));
            vk_app_work(&app, s[k % 2]->open, 1, (uint32_t)k);
            tlog_device_end(&d);
        }
        tlog_log_begin(log, site("Wait"));
        CHECK(vk_stream_finish(s[0]) == 0 && vk_stream_finish(s[1]) == 0);
        tlog_sync_end(dev, site("Wait"));
        tlog_log_end(log, site("Frame"));
        tlog_frame *f = tlog_frame_pop_ready(log);
        CHECK(f != NULL);
        tlog_frame_release(f);
        if (frame == 99) {
            pool_at_100 = info(dev).pool_scopes;
            pools_at_100 = atomic_load(&shim.pools_live);
        }
        if (frame == 499)
            rss_at_500 = check_rss_kib();
    }
    tlog_device_info i = info(dev);
    long rss_end = check_rss_kib();
    printf("%d frames x %d scopes: pool %llu scopes and %llu query pool(s) after 100 frames, "
           "%llu and %llu at the end; resident %ld KiB after 500 frames, %ld KiB at the end\n",
           FRAMES, SCOPES, (unsigned long long)pool_at_100, (unsigned long long)pools_at_100,
           (unsigned long long)i.pool_scopes, (unsigned long long)atomic_load(&shim.pools_live),
           rss_at_500, rss_end);
    CHECK(i.pool_scopes == pool_at_100);
    CHECK(atomic_load(&shim.pools_live) == pools_at_100);
    CHECK(i.scopes_dropped == 0 && i.unresolved == 0);
    CHECK(i.resolved == (uint64_t)FRAMES * SCOPES);
    CHECK(errs.count == 0);
#ifndef UNDER_ASAN
    CHECK(rss_end - rss_at_500 < 1024);
#endif
    vk_stream_destroy(s[0]);
    vk_stream_destroy(s[1]);
    tlog_destroy(log);
    CHECK(atomic_load(&shim.pools_live) == 0);
}

/* A scope recorded into a secondary command buffer is timed where the
 * primary runs it; a sync scope bound to the secondary takes it. */
static void secondary_command_buffer(void)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = device_on(log, NULL);
    vk_stream *s = vk_stream_create(&app);
    VkCommandBuffer sec = VK_NULL_HANDLE;
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = s ? s->pool : VK_NULL_HANDLE,
                                      .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY,
                                      .commandBufferCount = 1};
    VkCommandBufferInheritanceInfo inherit = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
                                   .pInheritanceInfo = &inherit};
    if (!dev || !s || vkAllocateCommandBuffers(app.device, &ai, &sec) != VK_SUCCESS ||
        vkBeginCommandBuffer(sec, &bi) != VK_SUCCESS) {
        CHECK(!"set up");
        return;
    }
    tlog_log_begin(log, site("Frame"));
    {
        tlog_device_scope d = tlog_vk_begin(dev, sec, site("In the secondary"));
        vk_app_spin(&app, sec, 2 * MS, 1);
        CHECK(tlog_device_end(&d) == TLOG_OK);
    }
    CHECK(vkEndCommandBuffer(sec) == VK_SUCCESS);
    timed(dev, s, "Before it", 1 * MS);
    vkCmdExecuteCommands(s->open, 1, &sec);
    tlog_log_begin(log, site("Wait for the secondary"));
    CHECK(vk_stream_finish(s) == 0);
    tlog_sync_end_queue(dev, (void *)sec, site("Wait for the secondary"));
    tlog_log_end(log, site("Frame"));
    tlog_frame *f = tlog_frame_pop_ready(log);
    tlog_node_info i = {0};
    CHECK(f && row(f, "In the secondary", &i) == 1);
    /* The spin's own time: what the device ran, however long the host's
     * scheduler held its thread up inside it. */
    int64_t self = (int64_t)app.words[1];
    CHECK(self >= (int64_t)(2 * MS));
    CHECK_NEAR(i.total_ns, self + (int64_t)TOLERANCE_NS / 2, TOLERANCE_NS / 2);
    CHECK(f && strcmp(parent_of(f, "In the secondary"), "Wait for the secondary") == 0);
    CHECK(f && strcmp(parent_of(f, "Before it"), "Frame") == 0);
    CHECK(errs.count == 0);
    tlog_frame_release(f);
    vk_stream_destroy(s);
    tlog_destroy(log);
}

/* Sync scopes around the application's own waits: one bound to a command
 * buffer (its fence) takes only that command buffer's intervals; one
 * around vkQueueWaitIdle takes the rest. */
static void sync_scopes(void)
{
    check_errors errs = {0};
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .on_error = check_collect, .error_user = &errs};
    CHECK(tlog_default_config(&c) == TLOG_OK);
    tlog_log *log = tlog_default();   /* the macros' */
    tlog_device *dev = device_on(log, NULL);
    vk_stream *a = vk_stream_create(&app), *b = vk_stream_create(&app);
    if (!dev || !a || !b)
        return;
    {
        TIMERLOG_SCOPE("Frame");
        VkCommandBuffer first = a->open;
        {
            TIMERLOG_VK_SCOPE(dev, a->open, "On a");
            vk_app_spin(&app, a->open, 1 * MS, 2);
        }
        {
            TIMERLOG_VK_SCOPE(dev, b->open, "On b");
            vk_app_spin(&app, b->open, 1 * MS, 3);
        }
        CHECK(vk_stream_submit(a) == 0 && vk_stream_submit(b) == 0);
        {
            TIMERLOG_VK_SYNC_CMD_SCOPE(dev, first, "Fence of a");
            CHECK(vkWaitForFences(app.device, 1, &a->ran[0].fence, VK_TRUE, UINT64_MAX) ==
                  VK_SUCCESS);
        }
        {
            TIMERLOG_VK_SYNC_SCOPE(dev, "Queue idle");
            CHECK(vk_app_wait_idle(&app) == VK_SUCCESS);
        }
    }
    tlog_frame *f = tlog_frame_pop_ready(log);
    CHECK(f != NULL);
    CHECK(f && strcmp(parent_of(f, "On a"), "Fence of a") == 0);
    CHECK(f && strcmp(parent_of(f, "On b"), "Queue idle") == 0);
    FILE *out = tmpfile();
    CHECK(tlog_dump_frame(f, out, NULL) == TLOG_OK);
    rewind(out);
    char text[2048] = {0};
    CHECK(fread(text, 1, sizeof text - 1, out) > 0);
    fclose(out);
    fputs(text, stdout);
    CHECK(strstr(text, ". ==> ") && strstr(text, "(E) On a\n") && strstr(text, "(E) On b\n"));
    CHECK(errs.count == 0);
    tlog_frame_release(f);
    vk_stream_destroy(a);
    vk_stream_destroy(b);
    tlog_device_destroy(dev);
}

static uint64_t locks, unlocks;

static void count_lock(void *user)
{
    locks++;
    pthread_mutex_lock(&((vk_app *)user)->queue_lock);
}

static void count_unlock(void *user)
{
    unlocks++;
    pthread_mutex_unlock(&((vk_app *)user)->queue_lock);
}

/* The library's own submissions: with calibrated timestamps, only while the
 * device is made; without, one anchor a frame. Each one under the queue
 * lock the application gave. */
static void own_submissions(void)
{
    enum { FRAMES = 20 };
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_vk_target t = vk_app_target(&app);
    t.get_instance_proc_addr = shim_get_instance_proc_addr;
    t.lock_queue = count_lock;
    t.unlock_queue = count_unlock;
    tlog_device *dev = NULL;
    CHECK(tlog_vk_device_create(log, &t, NULL, &dev) == TLOG_OK);
    vk_stream *s = vk_stream_create(&app);
    if (!dev || !s)
        return;
    uint64_t made = atomic_load(&shim.submits);
    CHECK(made >= 1 && locks == made && unlocks == made);
    for (int frame = 0; frame < FRAMES; frame++) {
        tlog_log_begin(log, site("Frame"));
        timed(dev, s, "Work", 100 * US);
        tlog_log_begin(log, site("Wait"));
        CHECK(vk_stream_finish(s) == 0);
        tlog_sync_end(dev, site("Wait"));
        tlog_log_end(log, site("Frame"));
        tlog_frame_release(tlog_frame_pop(log));
    }
    uint64_t later = atomic_load(&shim.submits) - made;
    bool calibrated = app.flags & TLOG_VK_CALIBRATED_TIMESTAMPS;
    printf("%s: %llu submission(s) making the device, %llu in %d frames\n",
           calibrated ? "calibrated timestamps" : "anchors by submission",
           (unsigned long long)made, (unsigned long long)later, FRAMES);
    if (calibrated)
        CHECK(later == 0);
    else
        CHECK(later >= FRAMES / 2 && later <= FRAMES + 1);
    CHECK(locks == made + later && unlocks == locks);
    CHECK(info(dev).resolved == FRAMES && errs.count == 0);
    vk_stream_destroy(s);
    tlog_destroy(log);
}

/* A command buffer recorded and never submitted: the forced sync gives up
 * at its timeout and shows the interval unresolved; later frames are timed,
 * and the device can be destroyed. */
static void never_submitted(void)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 50 * MS);
    tlog_device *dev = device_on(log, NULL);
    vk_stream *s = vk_stream_create(&app);
    if (!dev || !s)
        return;
    VkCommandBuffer dropped = s->open;
    tlog_log_begin(log, site("Frame"));
    timed(dev, s, "Never run", 1 * MS);
    tlog_log_end(log, site("Frame"));
    CHECK(tlog_sync(log) == TLOG_ETIMEDOUT);
    tlog_frame *f = tlog_frame_pop(log);
    tlog_frame_info fi = frame_info(f);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 1);
    tlog_frame_release(f);
    /* The application records it anew instead. */
    CHECK(vkResetCommandBuffer(dropped, 0) == VK_SUCCESS);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(dropped, &bi) == VK_SUCCESS);
    tlog_log_begin(log, site("Frame"));
    timed(dev, s, "Run", 1 * MS);
    tlog_log_end(log, site("Frame"));
    CHECK(vk_stream_finish(s) == 0);
    f = tlog_frame_pop(log);
    fi = frame_info(f);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 0);
    tlog_frame_release(f);
    vk_stream_destroy(s);
    tlog_destroy(log);
}

typedef struct worker {
    tlog_log *log;
    tlog_device *dev;
    int index;
} worker;

static void *worker_main(void *p)
{
    worker *w = p;
    char name[32];
    snprintf(name, sizeof name, "Thread %d", w->index);
    vk_stream *s = vk_stream_create(&app);
    for (int k = 0; s && k < 40; k++) {
        tlog_log_begin(w->log, site(name));
        tlog_device_scope d = tlog_vk_begin(w->dev, s->open, site("Work"));
        vk_app_work(&app, s->open, 1, (uint32_t)w->index);
        tlog_device_end(&d);
        tlog_log_end(w->log, site(name));
        CHECK(vk_stream_finish(s) == 0);
    }
    vk_stream_destroy(s);
    return NULL;
}

static atomic_bool polling;

static void *poller_main(void *p)
{
    tlog_log *log = p;
    while (atomic_load(&polling))
        tlog_frame_release(tlog_frame_pop_ready(log));
    return NULL;
}

/* Threads recording on command buffers of their own while another takes
 * frames as they become ready: nothing is lost (and, under
 * ThreadSanitizer, nothing races). */
static void threads(void)
{
    enum { N = 4 };
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = device_on(log, NULL);
    if (!dev)
        return;
    pthread_t t[N], poller;
    worker w[N];
    atomic_store(&polling, true);
    pthread_create(&poller, NULL, poller_main, log);
    for (int k = 0; k < N; k++) {
        w[k] = (worker){log, dev, k};
        pthread_create(&t[k], NULL, worker_main, &w[k]);
    }
    for (int k = 0; k < N; k++)
        pthread_join(t[k], NULL);
    CHECK(tlog_sync(log) == TLOG_OK);
    atomic_store(&polling, false);
    pthread_join(poller, NULL);
    tlog_device_info i = info(dev);
    CHECK(i.resolved == N * 40);
    CHECK(i.unresolved == 0 && i.scopes_failed == 0 && i.scopes_dropped == 0);
    CHECK(errs.count == 0);
    tlog_destroy(log);
}

typedef struct rule {
    const char *name;
    void (*run)(void);
    unsigned want;
    bool timed;          /* checks how long the device took */
} rule;

#define ALL (VK_APP_SYNC2 | VK_APP_CALIBRATED)

static const rule rules[] = {
    {"misuse", misuse, ALL, false},
    {"relative-cost", relative_cost, ALL, true},
    {"device-loss", device_loss, ALL, false},
    {"device-loss-submitted", device_loss, 0, false},
    {"pool-cap", pool_cap, ALL, false},
    {"pool-exhaustion", pool_exhaustion, ALL, false},
    {"long-loop-flat-memory", long_loop_flat_memory, ALL, false},
    {"secondary-command-buffer", secondary_command_buffer, ALL, true},
    {"sync-scopes", sync_scopes, ALL, false},
    {"own-submissions", own_submissions, ALL, false},
    {"own-submissions-submitted", own_submissions, 0, false},
    {"never-submitted", never_submitted, ALL, false},
    {"threads", threads, ALL, false},
};

int main(int argc, char **argv)
{
    const rule *r = NULL;
    for (size_t k = 0; argc > 1 && k < sizeof rules / sizeof rules[0]; k++)
        if (strcmp(argv[1], rules[k].name) == 0)
            r = &rules[k];
    if (!r) {
        fprintf(stderr, "usage: test_vulkan CASE; cases:");
        for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++)
            fprintf(stderr, " %s", rules[k].name);
        fprintf(stderr, "\n");
        return 2;
    }
#ifdef VK_APP_UNDER_TSAN
    if (r->timed) {
        printf("%s: timings are not checked under ThreadSanitizer: lavapipe's allocations and "
               "locks go through its interceptors, and the device runs several times slower\n",
               r->name);
        return SKIP;
    }
#endif
    int rc = vk_app_open(&app, r->want);
    if (rc != 0)
        return rc;
    r->run();
    vk_app_close(&app);
    printf("%s: %s\n", r->name, check_failures ? "FAILED" : "ok");
    return check_failures ? 1 : 0;
}
