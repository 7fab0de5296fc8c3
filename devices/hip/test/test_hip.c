/*
 * The HIP backend's own rules, against the test runtime standing in for
 * libamdhip64 (the behaviour every backend shares is in suite_hip.c): the
 * live-event budget, streams being captured, the default devices, device
 * errors. Run with TLOG_TEST_HIP_DEVICES=2.
 */
#include <stdio.h>
#include <string.h>

#include <timerlog/hip.h>

#include "check.h"
#include "hip_test_runtime.h"

#define MS 1000000ull
#define CALIBRATION_EVENTS 30

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

/* `n` scopes in one frame behind a long kernel: all in flight at once. */
static void scopes_in_flight(tlog_log *log, tlog_device *dev, hipStream_t s, int n)
{
    tlog_device_reserve(dev, (uint32_t)n);   /* markers up to the cap or budget */
    tlog_log_begin(log, site("frame"));
    CHECK(tlog_test_hip_launch(s, 50 * MS) == hipSuccess);
    for (int k = 0; k < n; k++) {
        tlog_device_scope d = tlog_device_begin(dev, s, site("kernel"));
        tlog_device_end(&d);
    }
    tlog_log_end(log, site("frame"));
}

/* A device never holds more events than its budget, whatever the load:
 * scopes past it are dropped and counted. */
static void events_stay_within_the_budget(void)
{
    tlog_test_hip_stats before;
    tlog_test_hip_get_stats(&before);
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = NULL;
    CHECK(tlog_hip_device_create(log, 0, NULL, &dev) == TLOG_OK);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking) == hipSuccess);
    scopes_in_flight(log, dev, s, 600);
    tlog_device_info i = info(dev);
    CHECK(i.scopes_dropped == 600 - 512);
    tlog_test_hip_stats st;
    tlog_test_hip_get_stats(&st);
    CHECK(st.events_max_live <= 2 * 512 + 2 + CALIBRATION_EVENTS);
    CHECK(tlog_sync(log) == TLOG_OK);
    CHECK(info(dev).resolved == 512);
    tlog_destroy(log);
    hipStreamDestroy(s);
    tlog_test_hip_get_stats(&st);
    CHECK(st.events_live == before.events_live);   /* every event destroyed */
}

/* A larger max_scopes is held to the cap, with a report saying so. */
static void max_scopes_is_capped(void)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = NULL;
    tlog_device_config c = {.size = sizeof c, .max_scopes = 5000};
    CHECK(tlog_hip_device_create(log, 0, &c, &dev) == TLOG_OK);
    CHECK(errs.count == 1 && strstr(errs.last, "exceeds the event budget") != NULL);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking) == hipSuccess);
    scopes_in_flight(log, dev, s, 1100);
    CHECK(info(dev).scopes_dropped == 1100 - 1000);
    tlog_destroy(log);
    hipStreamDestroy(s);
}

/* All devices of the process share one event budget. */
static void devices_share_the_process_budget(void)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *d0 = NULL, *d1 = NULL;
    tlog_device_config c = {.size = sizeof c, .max_scopes = 1000};
    CHECK(tlog_hip_device_create(log, 0, &c, &d0) == TLOG_OK);
    CHECK(tlog_hip_device_create(log, 1, &c, &d1) == TLOG_OK);
    hipStream_t s0, s1;
    CHECK(hipSetDevice(0) == hipSuccess);
    CHECK(hipStreamCreateWithFlags(&s0, hipStreamNonBlocking) == hipSuccess);
    CHECK(hipSetDevice(1) == hipSuccess);
    CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking) == hipSuccess);
    scopes_in_flight(log, d1, s1, 1100);
    CHECK(hipSetDevice(0) == hipSuccess);
    scopes_in_flight(log, d0, s0, 1100);
    uint64_t timed = 2200 - info(d0).scopes_dropped - info(d1).scopes_dropped;
    CHECK(2 * timed + 4 <= 2048);
    CHECK(info(d0).scopes_dropped > 1100 - 1000);
    CHECK(tlog_sync(log) == TLOG_OK);
    tlog_destroy(log);
    hipStreamDestroy(s0);
    hipStreamDestroy(s1);
}

/* Nothing is recorded into a stream being captured; the scope is counted. */
static void captured_stream_is_left_alone(void)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = NULL;
    CHECK(tlog_hip_device_create(log, 0, NULL, &dev) == TLOG_OK);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking) == hipSuccess);
    CHECK(tlog_test_hip_set_capturing(s, 1) == hipSuccess);
    tlog_test_hip_stats a, b;
    tlog_test_hip_get_stats(&a);
    tlog_log_begin(log, site("frame"));
    tlog_device_scope d = tlog_device_begin(dev, s, site("captured"));
    CHECK(d.slot_ == NULL);
    tlog_log_end(log, site("frame"));
    tlog_test_hip_get_stats(&b);
    CHECK(b.records == a.records);
    CHECK(info(dev).scopes_captured == 1);
    CHECK(tlog_test_hip_set_capturing(s, 0) == hipSuccess);
    tlog_destroy(log);
    hipStreamDestroy(s);
}

/* The default log's device is the calling thread's current device. */
static void default_device_follows_the_current_device(void)
{
    CHECK(hipSetDevice(1) == hipSuccess);
    tlog_device *dev = tlog_hip_device(NULL);
    CHECK(dev != NULL);
    tlog_device_info i = info(dev);
    CHECK(strstr(i.name, "(1)") != NULL);
    CHECK(strcmp(i.backend, "hip") == 0);
    CHECK(hipSetDevice(0) == hipSuccess);
    CHECK(tlog_hip_device(NULL) != dev);
    CHECK(tlog_hip_configure(NULL) == TLOG_EBUSY);
    {
        TIMERLOG_SCOPE("Frame");
        TIMERLOG_HIP_SCOPE(NULL, "Kernel");
        CHECK(tlog_test_hip_launch(NULL, 1 * MS) == hipSuccess);
    }
    tlog_frame *f = tlog_frame_pop(NULL);
    CHECK(f != NULL);
    tlog_frame_info fi = {.size = sizeof fi};
    CHECK(f && tlog_frame_get_info(f, &fi) == TLOG_OK);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 0);
    tlog_frame_release(f);
    CHECK(tlog_hip_scopes_untimed() == 0);
}

/* A device error while resolving is reported; the interval shows
 * unresolved and recording goes on. */
static void device_error_leaves_the_interval_unresolved(void)
{
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = NULL;
    CHECK(tlog_hip_device_create(log, 0, NULL, &dev) == TLOG_OK);
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking) == hipSuccess);
    tlog_log_begin(log, site("frame"));
    tlog_device_scope d = tlog_device_begin(dev, s, site("faulty"));
    tlog_device_end(&d);
    /* The first read is at the frame's end. */
    CHECK(tlog_test_hip_inject(3 /* TLOG_SIM_FAULT_QUERY_ERROR */, 1) == 0);
    tlog_log_end(log, site("frame"));
    tlog_frame *f = tlog_frame_pop(log);
    tlog_frame_info fi = {.size = sizeof fi};
    CHECK(f && tlog_frame_get_info(f, &fi) == TLOG_OK);
    CHECK(fi.device_unresolved == 1);
    CHECK(errs.count >= 1);
    tlog_frame_release(f);
    tlog_destroy(log);
    hipStreamDestroy(s);
}

/* The empty-scope offset is the device's cost per event (the test
 * runtime's 1 us), not the host's time per record: a host callback holds
 * the device's own stream while the calibration's events are recorded. */
static void calibration_ignores_a_slow_host(void)
{
    tlog_test_hip_stats before, after;
    tlog_test_hip_get_stats(&before);
    check_errors errs = {0};
    tlog_log *log = check_make_log(&errs, 0);
    tlog_device *dev = NULL;
    tlog_test_hip_set_record_delay(200000);
    CHECK(tlog_hip_device_create(log, 0, NULL, &dev) == TLOG_OK);
    tlog_test_hip_set_record_delay(0);
    CHECK_NEAR(info(dev).empty_scope_ns, 1000, 200);
    tlog_test_hip_get_stats(&after);
    CHECK(after.callbacks - before.callbacks == 1);
    tlog_destroy(log);
}

/* What creating a device refuses, configuring the default ones refuses
 * too, before any is made: a setting that would fail later, when the
 * first default device is made, would leave every scope untimed. */
static void configure_refuses_what_a_device_would(void)
{
    tlog_device_config too_many = {.size = sizeof too_many, .max_scopes = (1u << 20) + 1};
    CHECK(tlog_hip_configure(&too_many) == TLOG_EINVAL);
    tlog_device_config bad_flags = {.size = sizeof bad_flags, .flags = 1u << 30};
    CHECK(tlog_hip_configure(&bad_flags) == TLOG_EINVAL);
    tlog_device_config most = {.size = sizeof most, .max_scopes = 1u << 20};
    CHECK(tlog_hip_configure(&most) == TLOG_OK);
    CHECK(tlog_hip_configure(NULL) == TLOG_OK);   /* back to the defaults */
}

int main(void)
{
    configure_refuses_what_a_device_would();
    events_stay_within_the_budget();
    max_scopes_is_capped();
    devices_share_the_process_budget();
    captured_stream_is_left_alone();
    default_device_follows_the_current_device();
    device_error_leaves_the_interval_unresolved();
    calibration_ignores_a_slow_host();
    printf("%d failed checks\n", check_failures);
    return check_failures ? 1 : 0;
}
