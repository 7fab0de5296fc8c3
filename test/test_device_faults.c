/* What goes wrong on devices: markers that never complete, errors from the
 * device, captured queues, a full pool, scopes outside frames, wrong ends,
 * threads. Each is reported, counted, and loses nothing else. */
#include <pthread.h>

#include "device_fixture.h"

static void marker_that_never_completes_times_out_and_is_shown_unresolved(void **state)
{
    (void)state;
    sim_options o = {.sync_timeout_ns = 50 * NS_PER_MS};
    sim_fixture *fx = sim_fixture_make(&o);
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Fine", 1.0);
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q2, site_named("Stuck"));
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_HANG, 1);
    tlog_device_end(&s);
    host_end(fx, "Frame");

    int rc;
    char *text = dump_log(fx, &rc);
    assert_int_equal(rc, TLOG_OK);   /* the frame is still dumped */
    assert_non_null(strstr(text, "(E) Fine\n"));
    assert_non_null(strstr(text, "(E) Stuck [unresolved]\n"));
    assert_non_null(strstr(text, "# 1 device intervals unresolved"));
    free(text);
    assert_int_equal(count_code(&fx->errors, TLOG_ETIMEDOUT), 1);
    assert_non_null(strstr(fx->errors.last, "gave up"));
    tlog_device_info di = device_info(fx);
    assert_int_equal(di.unresolved, 1);
    assert_int_equal(di.resolved, 1);

    /* The stuck marker is never recorded again while in flight. */
    for (int i = 0; i < 100; i++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q2, "Later", 0.01);
        sync_until(fx, "Sync", sim_ms(fx) + 0.02);
        host_end(fx, "Frame");
    }
    assert_int_equal(sim_stats(fx).rerecords_in_flight, 0);
    sim_fixture_free(fx);
}

static void refused_end_after_a_stuck_begin_never_reuses_the_begin(void **state)
{
    (void)state;
    sim_options o = {.sync_timeout_ns = 20 * NS_PER_MS};
    sim_fixture *fx = sim_fixture_make(&o);
    host_begin(fx, "Frame");
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_HANG, 1);
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Stuck begin"));
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_RECORD_ERROR, 1);
    assert_int_equal(tlog_device_end(&s), TLOG_EDEVICE);
    host_end(fx, "Frame");
    assert_int_equal(tlog_sync(fx->log), TLOG_ETIMEDOUT);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    /* Without a timing: under its launcher, the frame's root. */
    assert_true(info_of(path(f, "Stuck begin", NULL, NULL)).flags & TLOG_NODE_UNRESOLVED);
    tlog_frame_release(f);
    for (int i = 0; i < 100; i++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Later", 0.01);
        host_end(fx, "Frame");
        tlog_frame_ready(fx->log);
    }
    assert_int_equal(sim_stats(fx).rerecords_in_flight, 0);
    sim_fixture_free(fx);
}

/* An error callback may call the library, even while device work resolves. */
static void reentrant_error(void *user, const tlog_error *e)
{
    sim_fixture *fx = user;
    fx->errors.count++;
    fx->errors.codes[0] = e->code;
    tlog_frame_ready(fx->log);
}

static void error_callback_may_call_the_library(void **state)
{
    (void)state;
    sim_fixture *fx = sim_fixture_make(NULL);
    tlog_log *log;
    tlog_config c = {.size = sizeof c, .clock = tlog_sim_clock, .clock_user = fx->sim,
                     .flags = TLOG_CONFIG_IGNORE_ENV, .on_error = reentrant_error,
                     .error_user = fx};
    assert_int_equal(tlog_create(&c, &log), TLOG_OK);
    tlog_device *dev;
    assert_int_equal(tlog_sim_device_create(fx->sim, log, NULL, &dev), TLOG_OK);
    tlog_destroy(fx->log);
    fx->log = log;
    fx->dev = dev;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Broken", 1.0);
    sim_at(fx, 2.0);
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_QUERY_ERROR, 1);
    sync_until(fx, "Sync", 2.0);
    host_end(fx, "Frame");
    assert_int_equal(fx->errors.count, 1);
    assert_int_equal(fx->errors.codes[0], TLOG_EDEVICE);
    sim_fixture_free(fx);
}

static void stalled_queue_loses_only_its_own_intervals(void **state)
{
    (void)state;
    sim_options o = {.sync_timeout_ns = 50 * NS_PER_MS};
    sim_fixture *fx = sim_fixture_make(&o);
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Hangs"));
    tlog_sim_launch(fx->sim, fx->q1, NS_PER_MS);
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_STALL, 1);
    tlog_device_end(&s);
    kernel(fx, fx->q1, "Behind it", 1.0);
    kernel(fx, fx->q2, "Elsewhere", 1.0);
    host_end(fx, "Frame");
    assert_int_equal(tlog_sync(fx->log), TLOG_ETIMEDOUT);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    const tlog_node *root = tlog_frame_root(f);
    assert_true(info_of(child_named(root, "Hangs")).flags & TLOG_NODE_UNRESOLVED);
    assert_true(info_of(child_named(root, "Behind it")).flags & TLOG_NODE_UNRESOLVED);
    /* It ran past the frame's end, which was at once. */
    tlog_node_info fine = info_of(path(f, "Device past frame end", "Elsewhere", NULL));
    assert_false(fine.flags & TLOG_NODE_UNRESOLVED);
    assert_int_equal(fine.total_ns, NS_PER_MS);
    tlog_frame_release(f);
    sim_fixture_free(fx);
}

static void refused_begin_marker_drops_the_scope(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_RECORD_ERROR, 1);
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Refused"));
    assert_null(s.slot_);
    assert_int_equal(tlog_device_end(&s), TLOG_ENOTOPEN);
    kernel(fx, fx->q1, "Accepted", 1.0);
    sync_until(fx, "Sync", 2.0);
    host_end(fx, "Frame");
    assert_int_equal(device_info(fx).scopes_failed, 1);
    assert_int_equal(count_code(&fx->errors, TLOG_EDEVICE), 1);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(path(f, "Sync", "Accepted", NULL));
    assert_null(path(f, "Sync", "Refused", NULL));
    tlog_frame_release(f);
}

static void refused_end_marker_shows_the_interval_unresolved(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Half"));
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_RECORD_ERROR, 1);
    assert_int_equal(tlog_device_end(&s), TLOG_EDEVICE);
    sync_until(fx, "Sync", 1.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    /* Without a timing, it shows under its launcher, not the sync scope. */
    assert_true(info_of(path(f, "Half", NULL, NULL)).flags & TLOG_NODE_UNRESOLVED);
    assert_null(path(f, "Sync", "Half", NULL));
    tlog_frame_release(f);
}

static void failed_query_shows_unresolved_and_retires_the_markers(void **state)
{
    sim_fixture *fx = *state;
    tlog_sim_stats before = sim_stats(fx);
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Broken", 1.0);
    kernel(fx, fx->q2, "Fine", 1.0);
    sim_at(fx, 2.0);
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_QUERY_ERROR, 1);
    sync_until(fx, "Sync", 2.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    assert_true(info_of(path(f, "Broken", NULL, NULL)).flags & TLOG_NODE_UNRESOLVED);
    assert_false(info_of(path(f, "Sync", "Fine", NULL)).flags & TLOG_NODE_UNRESOLVED);
    tlog_frame_release(f);
    assert_true(count_code(&fx->errors, TLOG_EDEVICE) >= 1);
    /* The slot gets fresh markers when it is used again. */
    host_begin(fx, "Frame");
    for (int i = 0; i < 40; i++)
        kernel(fx, fx->q1, "Again", 0.01);
    host_end(fx, "Frame");
    /* Exactly the broken pair was destroyed. */
    tlog_sim_stats after = sim_stats(fx);
    assert_int_equal(after.markers_created - after.markers_live,
                     before.markers_created - before.markers_live + 2);
}

static void captured_queue_is_skipped_and_counted(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_CAPTURE, 1);
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("In graph"));
    assert_null(s.slot_);
    host_end(fx, "Frame");
    assert_int_equal(device_info(fx).scopes_captured, 1);
    assert_int_equal(count_code(&fx->errors, TLOG_ECAPTURE), 1);
    assert_int_equal(tlog_frame_ready(fx->log), 1);
}

static void full_pool_drops_scopes_with_one_warning(void **state)
{
    (void)state;
    sim_options o = {.max_scopes = 4, .pool_batch = 2};
    sim_fixture *fx = sim_fixture_make(&o);
    assert_int_equal(tlog_device_reserve(fx->dev, 7), TLOG_OK);   /* held to 4 */
    host_begin(fx, "Frame");
    for (int i = 0; i < 7; i++)
        kernel(fx, fx->q1, "Kernel", 1.0);
    sync_until(fx, "Sync", 10.0);
    host_end(fx, "Frame");
    tlog_device_info di = device_info(fx);
    assert_int_equal(di.scopes, 4);
    assert_int_equal(di.scopes_dropped, 3);
    assert_int_equal(di.pool_scopes, 4);
    assert_int_equal(count_code(&fx->errors, TLOG_EFULL), 1);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_int_equal(info_of(path(f, "Sync", "Kernel", NULL)).count, 4);
    tlog_frame_release(f);
    /* Resolved scopes free their slots for the next frame. */
    host_begin(fx, "Frame");
    for (int i = 0; i < 4; i++)
        kernel(fx, fx->q1, "Kernel", 1.0);
    host_end(fx, "Frame");
    assert_int_equal(device_info(fx).scopes_dropped, 3);
    sim_fixture_free(fx);
}

static void device_scope_outside_a_frame_is_not_timed(void **state)
{
    sim_fixture *fx = *state;
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Loose"));
    assert_null(s.slot_);
    assert_int_equal(device_info(fx).scopes_outside_frame, 1);
    assert_int_equal(count_code(&fx->errors, TLOG_ENOTOPEN), 1);
    assert_int_equal(tlog_frame_count(fx->log), 0);
}

static void second_end_of_a_device_scope_is_an_error(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Once"));
    tlog_device_scope copy = s;
    assert_int_equal(tlog_device_end(&s), TLOG_OK);
    assert_int_equal(tlog_device_end(&s), TLOG_ENOTOPEN);
    assert_int_equal(tlog_device_end(&copy), TLOG_ENOTOPEN);
    assert_int_equal(tlog_device_end(NULL), TLOG_ENOTOPEN);
    host_end(fx, "Frame");
    assert_int_equal(device_info(fx).scopes, 1);
}

static void destroying_a_device_resolves_what_it_can(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Done", 1.0);
    kernel(fx, fx->q2, "Never waited for", 50.0);
    sim_at(fx, 2.0);
    host_end(fx, "Frame");
    tlog_device_destroy(fx->dev);
    fx->dev = NULL;
    assert_int_equal(tlog_frame_ready(fx->log), 1);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    assert_false(info_of(path(f, "Done", NULL, NULL)).flags & TLOG_NODE_UNRESOLVED);
    assert_true(info_of(path(f, "Never waited for", NULL, NULL)).flags &
                TLOG_NODE_UNRESOLVED);
    tlog_frame_release(f);
    assert_int_equal(sim_stats(fx).markers_live, 0);
}

/* Workers launch device work for the main thread's scope; main syncs. */
typedef struct worker_arg {
    sim_fixture *fx;
    tlog_token token;
    tlog_sim_queue *queue;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    tlog_thread_name("Worker");
    tlog_adopt_begin(&a->token);
    for (int i = 0; i < 50; i++) {
        tlog_device_scope s = tlog_device_begin(a->fx->dev, a->queue, site_named("Work"));
        tlog_sim_launch(a->fx->sim, a->queue, 1000);
        tlog_device_end(&s);
    }
    tlog_adopt_end(&a->token);
    return NULL;
}

static void device_scopes_from_adopting_threads_join_the_owner_frame(void **state)
{
    sim_fixture *fx = *state;
    assert_int_equal(tlog_device_reserve(fx->dev, 100), TLOG_OK);   /* a burst of 100 */
    host_begin(fx, "Frame");
    host_begin(fx, "Parallel");
    pthread_t th[2];
    worker_arg args[2];
    for (int i = 0; i < 2; i++) {
        args[i] = (worker_arg){fx, tlog_handoff(fx->log), i ? fx->q1 : fx->q2};
        pthread_create(&th[i], NULL, worker, &args[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    host_end(fx, "Parallel");
    sync_until(fx, "Sync", 1.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    tlog_node_info i = info_of(path(f, "Sync", "Work", NULL));
    assert_int_equal(i.count, 100);
    assert_ptr_equal(i.launcher, path(f, "Parallel", NULL, NULL));
    tlog_frame_release(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(marker_that_never_completes_times_out_and_is_shown_unresolved),
        cmocka_unit_test(refused_end_after_a_stuck_begin_never_reuses_the_begin),
        cmocka_unit_test(stalled_queue_loses_only_its_own_intervals),
        cmocka_unit_test(error_callback_may_call_the_library),
        cmocka_unit_test_setup_teardown(refused_begin_marker_drops_the_scope, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(refused_end_marker_shows_the_interval_unresolved,
                                        sim_setup, sim_teardown),
        cmocka_unit_test_setup_teardown(failed_query_shows_unresolved_and_retires_the_markers,
                                        sim_setup, sim_teardown),
        cmocka_unit_test_setup_teardown(captured_queue_is_skipped_and_counted, sim_setup,
                                        sim_teardown),
        cmocka_unit_test(full_pool_drops_scopes_with_one_warning),
        cmocka_unit_test_setup_teardown(device_scope_outside_a_frame_is_not_timed,
                                        sim_setup, sim_teardown),
        cmocka_unit_test_setup_teardown(second_end_of_a_device_scope_is_an_error, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(destroying_a_device_resolves_what_it_can, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(
            device_scopes_from_adopting_threads_join_the_owner_frame, sim_setup,
            sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
