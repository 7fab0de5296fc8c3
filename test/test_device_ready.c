/* Production mode: readiness checks and frames taken without any sync; the
 * bounded queue; no blocking wait anywhere but the forced sync. */
#include <time.h>

#include "device_fixture.h"

static void frame_waits_until_its_device_work_is_resolved(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    host_begin(fx, "Render");
    kernel(fx, fx->q1, "Draw", 4.0);
    host_end(fx, "Render");
    sim_at(fx, 1.0);
    host_end(fx, "Frame");

    assert_int_equal(tlog_frame_count(fx->log), 1);
    assert_int_equal(tlog_frame_ready(fx->log), 0);
    assert_null(tlog_frame_pop_ready(fx->log));
    sim_at(fx, 4.0);
    assert_int_equal(tlog_frame_ready(fx->log), 1);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    /* No sync scope, and it ran past the frame's end (1 ms). */
    const tlog_node *draw = path(f, "Device past frame end", "Draw", NULL);
    assert_non_null(draw);
    assert_int_equal(info_of(draw).total_ns, 4 * NS_PER_MS);
    assert_ptr_equal(info_of(draw).launcher, path(f, "Render", NULL, NULL));
    assert_int_equal(info_of(path(f, "Device past frame end", NULL, NULL)).total_ns,
                     3 * NS_PER_MS);
    tlog_frame_release(f);
    assert_int_equal(tlog_frame_ready(fx->log), TLOG_ENOFRAME);
}

static void frames_without_device_work_are_ready(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    host_end(fx, "Frame");
    assert_int_equal(tlog_frame_ready(fx->log), 1);
}

static void ready_frames_come_out_in_order(void **state)
{
    sim_fixture *fx = *state;
    for (int i = 0; i < 3; i++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Kernel", 1.0);
        host_end(fx, "Frame");
    }
    sim_at(fx, 3.0);
    tlog_frame_info info = {.size = sizeof info};
    for (uint64_t serial = 1; serial <= 3; serial++) {
        tlog_frame *f = tlog_frame_pop_ready(fx->log);
        assert_non_null(f);
        assert_int_equal(tlog_frame_get_info(f, &info), TLOG_OK);
        assert_int_equal(info.serial, serial);
        assert_int_equal(info.device_intervals, 1);
        tlog_frame_release(f);
    }
}

static void no_blocking_wait_outside_the_forced_sync(void **state)
{
    sim_fixture *fx = *state;
    uint64_t waits = sim_stats(fx).waits;
    double t = sim_ms(fx);
    for (int frame = 0; frame < 20; frame++) {
        host_begin(fx, "Frame");
        for (int k = 0; k < 5; k++)
            kernel(fx, k % 2 ? fx->q1 : fx->q2, "Kernel", 0.1);
        sync_until(fx, "Sync", t += 0.2);
        kernel(fx, fx->q1, "Tail", 0.1);
        host_end(fx, "Frame");
        tlog_frame_ready(fx->log);
        tlog_frame_release(tlog_frame_pop_ready(fx->log));
    }
    assert_int_equal(sim_stats(fx).waits, waits);
    assert_int_equal(device_info(fx).waits, 0);

    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Last", 5.0);
    host_end(fx, "Frame");
    FILE *sink = tmpfile();
    assert_int_equal(tlog_dump(fx->log, sink), TLOG_OK);
    fclose(sink);
    assert_true(sim_stats(fx).waits > waits);
    assert_true(device_info(fx).waits > 0);
}

static void dropped_frames_give_their_markers_back_safely(void **state)
{
    (void)state;
    sim_options o = {.max_frames = 2, .max_scopes = 8, .pool_batch = 8};
    sim_fixture *fx = sim_fixture_make(&o);
    for (int i = 0; i < 5; i++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Kernel", 10.0);
        host_end(fx, "Frame");
    }
    assert_int_equal(stats_of(fx->log).frames_dropped, 3);
    sim_at(fx, 60.0);
    assert_int_equal(tlog_frame_ready(fx->log), 1);
    assert_int_equal(device_info(fx).late, 3);   /* their frames are gone */
    for (int i = 0; i < 20; i++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Kernel", 0.1);
        host_end(fx, "Frame");
        sim_at(fx, sim_ms(fx) + 0.1);
        tlog_frame_release(tlog_frame_pop_ready(fx->log));
    }
    tlog_device_info di = device_info(fx);
    assert_int_equal(di.pool_scopes, 8);
    assert_int_equal(di.scopes_dropped, 0);
    assert_int_equal(sim_stats(fx).rerecords_in_flight, 0);
    sim_fixture_free(fx);
}

static void pool_stops_growing_in_a_long_frame_loop(void **state)
{
    sim_fixture *fx = *state;
    double t = sim_ms(fx);
    for (int frame = 0; frame < 200; frame++) {
        host_begin(fx, "Frame");
        for (int k = 0; k < 50; k++)
            kernel(fx, fx->q1, "Kernel", 0.001);
        sync_until(fx, "Sync", t += 0.1);
        host_end(fx, "Frame");
        tlog_frame_release(tlog_frame_pop_ready(fx->log));
    }
    /* A refill starts at half a batch free (32) and adds one batch (64):
     * the pool stays within 50 in flight + 32 + 64. */
    tlog_device_info di = device_info(fx);
    assert_true(di.pool_scopes <= 50 + 32 + 64);
    assert_int_equal(di.resolved, 200 * 50);
    assert_int_equal(di.pending, 0);
    tlog_sim_stats ss = sim_stats(fx);
    assert_true(ss.markers_live <= 2 * (50 + 32 + 64) + 2);
    assert_int_equal(ss.rerecords_in_flight, 0);
}

/* Markers are made in batches off the recording path: when the device is
 * made, and when a read of the device (here a readiness check) finds the
 * pool low. Neither a device scope's begin nor a root's end makes any while
 * the pool has some. */
static void markers_are_made_in_batches_off_the_recording_path(void **state)
{
    (void)state;
    sim_options o = {.max_scopes = 64, .pool_batch = 8,
                     .device_flags = TLOG_DEVICE_NO_MARKER_THREAD};
    sim_fixture *fx = sim_fixture_make(&o);
    tlog_device_info di = device_info(fx);
    assert_int_equal(di.pool_scopes, 8);
    assert_int_equal(di.pool_free, 8);
    uint64_t made = sim_stats(fx).markers_created;
    host_begin(fx, "Frame");
    for (int i = 0; i < 8; i++)
        kernel(fx, fx->q1, "Kernel", 0.1);
    assert_int_equal(sim_stats(fx).markers_created, made);
    host_end(fx, "Frame");
    assert_int_equal(sim_stats(fx).markers_created, made);
    assert_int_equal(tlog_frame_ready(fx->log), 0);   /* finds the pool low */
    assert_int_equal(sim_stats(fx).markers_created, made + 16);
    di = device_info(fx);
    assert_int_equal(di.pool_scopes, 16);
    assert_int_equal(di.pool_free, 8);
    sim_at(fx, 1.0);
    tlog_frame_release(tlog_frame_pop_ready(fx->log));
    sim_fixture_free(fx);
}

/* With no marker ready, a device scope is dropped and counted, never given
 * a marker made on the spot; one report says why and what to do. */
static void empty_pool_drops_a_scope_rather_than_make_a_marker(void **state)
{
    (void)state;
    sim_options o = {.max_scopes = 64, .pool_batch = 2,
                     .device_flags = TLOG_DEVICE_NO_MARKER_THREAD};
    sim_fixture *fx = sim_fixture_make(&o);
    uint64_t made = sim_stats(fx).markers_created;
    host_begin(fx, "Frame");
    for (int i = 0; i < 5; i++)
        kernel(fx, fx->q1, "Kernel", 0.1);
    assert_int_equal(sim_stats(fx).markers_created, made);
    host_end(fx, "Frame");
    tlog_device_info di = device_info(fx);
    assert_int_equal(di.scopes, 2);
    assert_int_equal(di.scopes_dropped, 3);
    assert_int_equal(count_code(&fx->errors, TLOG_EFULL), 1);
    assert_non_null(strstr(fx->errors.last, "no marker ready"));
    assert_non_null(strstr(fx->errors.last, "tlog_device_reserve"));
    sim_at(fx, 1.0);
    tlog_frame_release(tlog_frame_pop_ready(fx->log));
    sim_fixture_free(fx);
}

/* tlog_device_reserve makes the markers beforehand, on the calling thread:
 * then a frame of many device scopes makes none, and drops none. */
static void reserved_markers_let_a_burst_make_none(void **state)
{
    (void)state;
    sim_options o = {.max_scopes = 256, .pool_batch = 4,
                     .device_flags = TLOG_DEVICE_NO_MARKER_THREAD};
    sim_fixture *fx = sim_fixture_make(&o);
    assert_int_equal(tlog_device_reserve(fx->dev, 100), TLOG_OK);
    assert_true(device_info(fx).pool_free >= 100);
    assert_int_equal(tlog_device_reserve(fx->dev, 1000), TLOG_OK);   /* held to max */
    assert_int_equal(device_info(fx).pool_scopes, 256);
    assert_int_equal(tlog_device_reserve(NULL, 1), TLOG_EINVAL);
    uint64_t made = sim_stats(fx).markers_created;
    host_begin(fx, "Frame");
    for (int i = 0; i < 200; i++)
        kernel(fx, fx->q1, "Kernel", 0.001);
    host_end(fx, "Frame");
    assert_int_equal(sim_stats(fx).markers_created, made);
    assert_int_equal(device_info(fx).scopes_dropped, 0);
    sim_at(fx, 1.0);
    tlog_frame_release(tlog_frame_pop_ready(fx->log));
    sim_fixture_free(fx);
}

/* The log's marker thread refills a pool that falls to half a batch while
 * the recording thread reads nothing. */
static void marker_thread_refills_a_low_pool_in_the_background(void **state)
{
    (void)state;
    sim_options o = {.max_scopes = 64, .pool_batch = 8};
    sim_fixture *fx = sim_fixture_make(&o);
    uint64_t made = sim_stats(fx).markers_created;
    host_begin(fx, "Frame");
    for (int i = 0; i < 5; i++)
        kernel(fx, fx->q1, "Kernel", 0.1);
    /* Waits (at most 10 s: a bound, not a timing) for the refill. */
    for (int tries = 0; tries < 10000 && device_info(fx).pool_free < 8; tries++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    tlog_device_info di = device_info(fx);
    assert_true(di.pool_free >= 8);
    assert_int_equal(di.pool_scopes, 16);
    assert_int_equal(sim_stats(fx).markers_created, made + 16);
    host_end(fx, "Frame");
    sim_at(fx, 1.0);
    tlog_frame_release(tlog_frame_pop_ready(fx->log));
    sim_fixture_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(markers_are_made_in_batches_off_the_recording_path),
        cmocka_unit_test(empty_pool_drops_a_scope_rather_than_make_a_marker),
        cmocka_unit_test(reserved_markers_let_a_burst_make_none),
        cmocka_unit_test(marker_thread_refills_a_low_pool_in_the_background),
        cmocka_unit_test_setup_teardown(frame_waits_until_its_device_work_is_resolved,
                                        sim_setup, sim_teardown),
        cmocka_unit_test_setup_teardown(frames_without_device_work_are_ready, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(ready_frames_come_out_in_order, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(no_blocking_wait_outside_the_forced_sync, sim_setup,
                                        sim_teardown),
        cmocka_unit_test(dropped_frames_give_their_markers_back_safely),
        cmocka_unit_test_setup_teardown(pool_stops_growing_in_a_long_frame_loop, sim_setup,
                                        sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
