/*
 * The Level Zero backend's own rules, through the real loader (the shared
 * behaviour is in suite_level_zero.c). A failed zeInit is cached for the
 * life of a process, so each loader set-up is a mode of its own, run as a
 * separate test:
 *
 *   test_level_zero no-driver   ZE_ENABLE_ALT_DRIVERS names no library
 *   test_level_zero no-gpu      the test driver, with no device
 *   test_level_zero driver      the test driver: barriers before every
 *                               timestamp, lists never run, device loss,
 *                               the device's own context
 *   test_level_zero two-devices the test driver with two devices of one
 *                               model: their names tell them apart
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerlog/level_zero.h>

#include "check.h"
#include "ze_test_driver.h"

#define MS 1000000ull

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, __FILE__, "test", 0, TLOG_LEVEL_COARSE);
}

/* Without a device: a clear report, and scopes on the NULL device that
 * only count themselves while frames go on. */
static int no_device(const char *expected)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = (tlog_device *)&errs;
    CHECK(tlog_ze_device_create(log, NULL, NULL, NULL, &dev) == TLOG_ENODEVICE);
    CHECK(dev == NULL);
    CHECK(errs.count == 1 && errs.last_code == TLOG_ENODEVICE);
    CHECK(strstr(errs.last, expected) != NULL);
    for (int frame = 0; frame < 3; frame++) {
        tlog_log_begin(log, site("frame"));
        for (int k = 0; k < 10; k++) {
            tlog_device_scope s = tlog_ze_begin(NULL, NULL, site("kernel"));
            CHECK(tlog_device_end(&s) == TLOG_ENOTOPEN);
        }
        tlog_log_end(log, site("frame"));
    }
    CHECK(tlog_ze_scopes_untimed() == 30);
    CHECK(tlog_frame_count(log) == 3);
    CHECK(tlog_frame_ready(log) == 1);
    tlog_destroy(log);
    printf("no device: %s\n", errs.last);
    return check_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* With the test driver                                                     */
/* ------------------------------------------------------------------------ */

static void (*driver_stats)(tlog_test_ze_stats *);
static int (*driver_inject)(int, unsigned);
static void (*driver_append_delay)(uint64_t);

static tlog_test_ze_stats stats(void)
{
    tlog_test_ze_stats s;
    driver_stats(&s);
    return s;
}

/* The test driver's hooks, from the library the loader loaded. */
static bool hooks(void)
{
    const char *path = getenv("ZE_ENABLE_ALT_DRIVERS");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (!lib)
        return false;
    *(void **)&driver_stats = dlsym(lib, "tlog_test_ze_get_stats");
    *(void **)&driver_inject = dlsym(lib, "tlog_test_ze_inject");
    *(void **)&driver_append_delay = dlsym(lib, "tlog_test_ze_set_append_delay");
    dlclose(lib);
    return driver_stats && driver_inject && driver_append_delay;
}

typedef struct app {
    tlog_log *log;
    tlog_device *dev;
    ze_context_handle_t context;
    ze_device_handle_t device;
    ze_command_list_handle_t immediate;
    check_errors errs;
} app;

/* A device in its own context, and an immediate list in that context. */
static void app_open(app *a, uint64_t sync_timeout_ns)
{
    memset(a, 0, sizeof *a);
    a->log = check_make_log(&a->errs, sync_timeout_ns);
    CHECK(tlog_ze_device_create(a->log, NULL, NULL, NULL, &a->dev) == TLOG_OK);
    a->context = tlog_ze_context(a->dev);
    CHECK(a->context != NULL);
    uint32_t n = 1;
    ze_driver_handle_t driver;
    CHECK(zeDriverGet(&n, &driver) == ZE_RESULT_SUCCESS);
    CHECK(zeDeviceGet(driver, &n, &a->device) == ZE_RESULT_SUCCESS);
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    CHECK(zeCommandListCreateImmediate(a->context, a->device, &qd, &a->immediate) ==
          ZE_RESULT_SUCCESS);
}

static void app_close(app *a)
{
    tlog_destroy(a->log);
    zeCommandListDestroy(a->immediate);
}

static void one_scope(app *a, ze_command_list_handle_t list, const char *name)
{
    tlog_log_begin(a->log, site("frame"));
    tlog_device_scope s = tlog_ze_begin(a->dev, list, site(name));
    CHECK(s.slot_ != NULL);
    CHECK(tlog_device_end(&s) == TLOG_OK);
    tlog_log_end(a->log, site("frame"));
}

/* Every timestamp follows a barrier, so none runs beside a kernel. */
static void every_timestamp_follows_a_barrier(void)
{
    app a;
    app_open(&a, 0);
    tlog_test_ze_stats before = stats();
    for (int k = 0; k < 20; k++)
        one_scope(&a, a.immediate, "kernel");
    CHECK(tlog_sync(a.log) == TLOG_OK);
    tlog_test_ze_stats after = stats();
    CHECK(after.timestamps - before.timestamps == 40);
    CHECK(after.barriers - before.barriers >= 40);
    CHECK(after.overlapped_timestamps == before.overlapped_timestamps);
    CHECK(after.resets_in_flight == 0);
    app_close(&a);
}

/* A regular list the application never runs keeps its frame waiting, and
 * the forced sync gives up at its timeout with the interval unresolved;
 * destroying the device then leaves the list's memory alone. */
static void list_never_run_times_out(void)
{
    app a;
    app_open(&a, 30 * MS);
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list;
    CHECK(zeCommandListCreate(a.context, a.device, &ld, &list) == ZE_RESULT_SUCCESS);
    one_scope(&a, list, "never run");
    CHECK(tlog_frame_ready(a.log) == 0);
    CHECK(tlog_sync(a.log) == TLOG_ETIMEDOUT);
    tlog_frame *f = tlog_frame_pop(a.log);
    tlog_frame_info fi = {.size = sizeof fi};
    CHECK(f && tlog_frame_get_info(f, &fi) == TLOG_OK);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 1);
    tlog_frame_release(f);
    app_close(&a);
    /* Run late: the timestamps land in memory the library kept. */
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    ze_command_queue_handle_t cq;
    CHECK(zeCommandQueueCreate(a.context, a.device, &qd, &cq) == ZE_RESULT_SUCCESS);
    CHECK(zeCommandListClose(list) == ZE_RESULT_SUCCESS);
    CHECK(zeCommandQueueExecuteCommandLists(cq, 1, &list, NULL) == ZE_RESULT_SUCCESS);
    CHECK(zeCommandQueueSynchronize(cq, UINT64_MAX) == ZE_RESULT_SUCCESS);
    zeCommandQueueDestroy(cq);
    zeCommandListDestroy(list);
}

/* A device lost while resolving: reported, interval unresolved, and the
 * application goes on. */
static void device_loss_is_reported(void)
{
    app a;
    app_open(&a, 0);
    /* The first read is at the frame's end. */
    CHECK(driver_inject(3 /* TLOG_SIM_FAULT_QUERY_ERROR */, 1) == 0);
    one_scope(&a, a.immediate, "lost");
    tlog_frame *f = tlog_frame_pop(a.log);
    tlog_frame_info fi = {.size = sizeof fi};
    CHECK(f && tlog_frame_get_info(f, &fi) == TLOG_OK);
    CHECK(fi.device_unresolved == 1);
    CHECK(a.errs.count >= 1);
    tlog_frame_release(f);
    one_scope(&a, a.immediate, "after");
    tlog_frame *g = tlog_frame_pop(a.log);
    CHECK(g && tlog_frame_get_info(g, &fi) == TLOG_OK && fi.device_unresolved == 0);
    tlog_frame_release(g);
    app_close(&a);
}

/* The empty-scope offset is the device's own cost per marker (the test
 * driver's 1 us), not the host's time per append: the own list waits for a
 * gate while the calibration's markers are appended. */
static void calibration_ignores_a_slow_host(void)
{
    tlog_test_ze_stats before = stats();
    driver_append_delay(200000);
    app a;
    app_open(&a, 0);
    driver_append_delay(0);
    tlog_device_info i = {.size = sizeof i};
    CHECK(tlog_device_get_info(a.dev, &i) == TLOG_OK);
    CHECK_NEAR(i.empty_scope_ns, 1000, 200);
    CHECK(stats().host_event_waits - before.host_event_waits == 1);
    one_scope(&a, a.immediate, "after calibration");
    CHECK(tlog_sync(a.log) == TLOG_OK);
    CHECK(tlog_device_get_info(a.dev, &i) == TLOG_OK && i.resolved == 1);
    app_close(&a);
}

/* Handles come in pairs; a device of another backend has no context. */
static void arguments_are_checked(void)
{
    tlog_device *dev = NULL;
    ze_context_handle_t ctx = (ze_context_handle_t)&dev;
    CHECK(tlog_ze_device_create(NULL, ctx, NULL, NULL, &dev) == TLOG_EINVAL);
    CHECK(tlog_ze_device_create(NULL, NULL, NULL, NULL, NULL) == TLOG_EINVAL);
    CHECK(tlog_ze_context(NULL) == NULL);
}

/* Two GPUs of one model are told apart by their place among the drivers'
 * devices, as CUDA's ordinal tells them apart: "model (0)", "model (1)". */
static int two_devices(void)
{
    if (zeInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "the test driver is not loaded (ZE_ENABLE_ALT_DRIVERS)\n");
        return 1;
    }
    uint32_t n = 1, count = 2;
    ze_driver_handle_t driver;
    ze_device_handle_t devices[2];
    CHECK(zeDriverGet(&n, &driver) == ZE_RESULT_SUCCESS);
    CHECK(zeDeviceGet(driver, &count, devices) == ZE_RESULT_SUCCESS && count == 2);
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t context;
    CHECK(zeContextCreate(driver, &cd, &context) == ZE_RESULT_SUCCESS);
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    char names[2][300];
    for (int k = 0; k < 2; k++) {
        tlog_device *dev = NULL;
        CHECK(tlog_ze_device_create(log, context, devices[k], NULL, &dev) == TLOG_OK);
        tlog_device_info i = {.size = sizeof i};
        CHECK(tlog_device_get_info(dev, &i) == TLOG_OK);
        snprintf(names[k], sizeof names[k], "%s", i.name);
        tlog_device_destroy(dev);
    }
    CHECK(strcmp(names[0], names[1]) != 0);
    CHECK(strstr(names[0], " (0)") != NULL);
    CHECK(strstr(names[1], " (1)") != NULL);
    tlog_destroy(log);
    zeContextDestroy(context);
    printf("%d failed checks\n", check_failures);
    return check_failures ? 1 : 0;
}

static int with_driver(void)
{
    /* The loader loads drivers in zeInit only. */
    if (zeInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS || !hooks()) {
        fprintf(stderr, "the test driver is not loaded (ZE_ENABLE_ALT_DRIVERS)\n");
        return 1;
    }
    every_timestamp_follows_a_barrier();
    list_never_run_times_out();
    device_loss_is_reported();
    calibration_ignores_a_slow_host();
    arguments_are_checked();
    printf("%d failed checks\n", check_failures);
    return check_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "no-driver") == 0)
        return no_device("no driver");
    if (strcmp(mode, "no-gpu") == 0)
        return no_device("no GPU");
    if (strcmp(mode, "driver") == 0)
        return with_driver();
    if (strcmp(mode, "two-devices") == 0)
        return two_devices();
    fprintf(stderr, "usage: test_level_zero no-driver|no-gpu|driver|two-devices\n");
    return 2;
}
