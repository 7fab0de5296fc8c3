/* Device intervals resolved at sync scopes and at the forced sync: where the
 * rows go, their times, percentages, and links to their launchers. */
#include <pthread.h>

#include "device_fixture.h"

static void sync_scope_shows_completed_intervals_under_it(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 2.0);
    sim_at(fx, 1.0);
    sync_until(fx, "GPU Sync", 4.0);
    host_end(fx, "Frame");

    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    const tlog_node *row = path(f, "GPU Sync", "Kernel", NULL);
    assert_non_null(row);
    tlog_node_info i = info_of(row);
    assert_int_equal(i.kind, TLOG_KIND_EXECUTION);
    assert_true(i.flags & TLOG_NODE_DEVICE);
    assert_int_equal(i.total_ns, 2 * NS_PER_MS);
    assert_int_equal(i.start_ns, 0);                 /* placed where it ran */
    assert_true(i.percent_of_parent > 66.66 && i.percent_of_parent < 66.67);
    assert_string_equal(i.device, "sim");
    assert_int_equal(i.queue, 1);
    tlog_frame_release(f);
}

static void device_row_may_exceed_its_sync_scope(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Long kernel", 3.0);
    sim_at(fx, 2.0);
    sync_until(fx, "Sync", 3.0);
    host_end(fx, "Frame");

    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    char *text = dump_string(f, NULL);
    assert_non_null(strstr(text, ". ==> 300.00% 0.003000s | (E) Long kernel\n"));
    free(text);
    tlog_frame_release(f);
}

static void sync_scope_leaves_incomplete_intervals_to_the_forced_sync(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Draw", 10.0);
    sim_at(fx, 1.0);
    sync_until(fx, "Early sync", 2.0);
    host_end(fx, "Frame");

    assert_int_equal(tlog_frame_ready(fx->log), 0);
    tlog_frame *f = tlog_frame_latest(fx->log);   /* forces the sync */
    assert_non_null(f);
    assert_int_equal(child_count(path(f, "Early sync", NULL, NULL)), 0);
    const tlog_node *forced = path(f, "Forced sync \"tlog_frame_latest\"", NULL, NULL);
    assert_non_null(forced);
    tlog_node_info fi = info_of(forced);
    assert_int_equal(fi.kind, TLOG_KIND_CONTROL);
    assert_true(fi.flags & TLOG_NODE_FORCED_SYNC);
    assert_int_equal(fi.total_ns, 8 * NS_PER_MS);   /* waited from 2 ms to 10 ms */
    tlog_node_info di = info_of(child_named(forced, "Draw"));
    assert_int_equal(di.total_ns, 10 * NS_PER_MS);
    tlog_frame_release(f);
}

static void dump_forces_one_sync_titled_after_it(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Upload to device", 1.0);
    kernel(fx, fx->q1, "Draw", 5.0);
    sim_at(fx, 0.5);
    host_end(fx, "Frame");

    int rc;
    char *text = dump_log(fx, &rc);
    assert_int_equal(rc, TLOG_OK);
    assert_string_equal(text,
                        "> 100.00% 0.000500s | (C) Frame\n"
                        "|-> 1100.00% 0.005500s | (C) Forced sync \"tlog_dump\"\n"
                        ". ==> 18.18% 0.001000s | (E) Upload to device\n"
                        ". ==> 90.91% 0.005000s | (E) Draw\n");
    free(text);
}

static void queues_complete_out_of_order(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Slow", 10.0);
    kernel(fx, fx->q2, "Fast", 1.0);
    sync_until(fx, "Sync A", 2.0);
    sync_until(fx, "Sync B", 11.0);
    host_end(fx, "Frame");

    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    assert_non_null(path(f, "Sync A", "Fast", NULL));
    assert_null(path(f, "Sync A", "Slow", NULL));
    assert_non_null(path(f, "Sync B", "Slow", NULL));
    assert_int_equal(info_of(path(f, "Sync B", "Slow", NULL)).queue, 1);
    assert_int_equal(info_of(path(f, "Sync A", "Fast", NULL)).queue, 2);
    tlog_frame_release(f);
}

static void interval_links_to_the_scope_that_launched_it(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    host_begin(fx, "Filter 1");
    kernel(fx, fx->q1, "GPU Operation", 1.0);
    host_end(fx, "Filter 1");
    sync_until(fx, "Sync", 2.0);
    host_end(fx, "Frame");

    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    const tlog_node *launcher = path(f, "Filter 1", NULL, NULL);
    const tlog_node *row = path(f, "Sync", "GPU Operation", NULL);
    tlog_node_info i = info_of(row);
    assert_ptr_equal(i.launcher, launcher);
    assert_ptr_equal(i.launch_site, site_named("Filter 1"));
    int seen = 0;
    tlog_instance in = {.size = sizeof in};
    for (size_t k = 0; tlog_frame_get_instance(f, k, &in) == TLOG_OK; k++)
        if (in.node == row) {
            assert_ptr_equal(in.launcher, launcher);
            seen++;
        }
    assert_int_equal(seen, 1);
    assert_null(info_of(launcher).launcher);
    tlog_frame_release(f);
}

static void sync_in_a_later_frame_shows_earlier_launches(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame 1");
    kernel(fx, fx->q1, "Carried over", 5.0);
    host_end(fx, "Frame 1");
    host_begin(fx, "Frame 2");
    sync_until(fx, "Sync", 6.0);
    host_end(fx, "Frame 2");

    tlog_frame *first = tlog_frame_pop_ready(fx->log);
    assert_non_null(first);   /* its interval went to frame 2 */
    assert_int_equal(child_count(tlog_frame_root(first)), 0);
    tlog_frame_release(first);
    tlog_frame *second = tlog_frame_pop_ready(fx->log);
    assert_non_null(second);
    tlog_node_info i = info_of(path(second, "Sync", "Carried over", NULL));
    assert_null(i.launcher);
    assert_ptr_equal(i.launch_site, site_named("Frame 1"));
    assert_int_equal(i.start_ns, 0);   /* frame 2 began when frame 1 ended */
    tlog_frame_release(second);
}

static void launch_rows_time_the_host_side(void **state)
{
    (void)state;
    sim_options o = {.device_flags = TLOG_DEVICE_LAUNCH_ROWS};
    sim_fixture *fx = sim_fixture_make(&o);
    host_begin(fx, "Frame");
    host_begin(fx, "Filter");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Kernel"));
    sim_at(fx, 0.25);                       /* the launch takes 0.25 ms */
    tlog_sim_launch(fx->sim, fx->q1, NS_PER_MS);
    tlog_device_end(&s);
    host_end(fx, "Filter");
    sync_until(fx, "Sync", 2.0);
    host_end(fx, "Frame");

    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    const tlog_node *launch = path(f, "Filter", "Launch \"Kernel\"", NULL);
    assert_non_null(launch);
    assert_int_equal(info_of(launch).kind, TLOG_KIND_CONTROL);
    assert_int_equal(info_of(launch).total_ns, NS_PER_MS / 4);
    assert_ptr_equal(info_of(path(f, "Sync", "Kernel", NULL)).launcher,
                     path(f, "Filter", NULL, NULL));
    tlog_frame_release(f);
    sim_fixture_free(fx);
}

typedef struct ender {
    tlog_device_scope scope;
    int rc;
} ender;

static void *end_elsewhere(void *p)
{
    ender *e = p;
    e->rc = tlog_device_end(&e->scope);
    return NULL;
}

static void launch_row_of_a_scope_ended_on_another_thread(void **state)
{
    (void)state;
    sim_options o = {.device_flags = TLOG_DEVICE_LAUNCH_ROWS};
    sim_fixture *fx = sim_fixture_make(&o);
    host_begin(fx, "Frame");
    ender e = {tlog_device_begin(fx->dev, fx->q1, site_named("Kernel")), -1};
    tlog_sim_launch(fx->sim, fx->q1, NS_PER_MS);
    pthread_t th;
    pthread_create(&th, NULL, end_elsewhere, &e);
    pthread_join(th, NULL);
    assert_int_equal(e.rc, TLOG_OK);
    sync_until(fx, "Sync", 2.0);
    host_end(fx, "Frame");
    assert_int_equal(fx->errors.count, 0);   /* nothing left open, no repair */
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(path(f, "Launch \"Kernel\"", NULL, NULL));
    assert_non_null(path(f, "Sync", "Kernel", NULL));
    tlog_frame_release(f);
    sim_fixture_free(fx);
}

static void offset_is_measured_and_can_be_subtracted(void **state)
{
    (void)state;
    for (int subtract = 0; subtract < 2; subtract++) {
        sim_options o = {.marker_ns = 1000,
                         .device_flags = subtract ? TLOG_DEVICE_SUBTRACT_OFFSET : 0};
        sim_fixture *fx = sim_fixture_make(&o);
        assert_int_equal(device_info(fx).empty_scope_ns, 1000);
        double t0 = sim_ms(fx);
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Kernel", 0.005);
        sync_until(fx, "Sync", t0 + 1.0);
        host_end(fx, "Frame");
        tlog_frame *f = tlog_frame_pop_ready(fx->log);
        assert_non_null(f);
        assert_int_equal(info_of(path(f, "Sync", "Kernel", NULL)).total_ns,
                         subtract ? 5000 : 6000);
        tlog_frame_release(f);
        sim_fixture_free(fx);
    }
}

static void many_instances_merge_into_one_row(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    for (int i = 0; i < 10; i++)
        kernel(fx, fx->q1, "Step", 0.5);
    sync_until(fx, "Sync", 6.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    tlog_node_info i = info_of(path(f, "Sync", "Step", NULL));
    assert_int_equal(i.count, 10);
    assert_int_equal(i.total_ns, 5 * NS_PER_MS);
    assert_int_equal(i.min_ns, NS_PER_MS / 2);
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    assert_int_equal(fi.device_intervals, 10);
    assert_int_equal(fi.device_unresolved, 0);
    tlog_frame_release(f);
}

/* A second device whose clock reads 1 s ahead of the host's: its intervals
 * are timed by its own markers and placed by its own anchor. */
static void each_device_is_resolved_and_placed_on_its_own(void **state)
{
    sim_fixture *fx = *state;
    tlog_sim *other;
    assert_int_equal(tlog_sim_create(NULL, &other), TLOG_OK);
    tlog_sim_advance(other, 1000 * NS_PER_MS);
    tlog_device *dev2;
    assert_int_equal(tlog_sim_device_create(other, fx->log, NULL, &dev2), TLOG_OK);

    host_begin(fx, "Frame");
    sim_at(fx, 1.0);
    tlog_sim_advance(other, NS_PER_MS);
    kernel(fx, fx->q1, "On device 1", 2.0);
    tlog_device_scope s = tlog_device_begin(dev2, NULL, site_named("On device 2"));
    tlog_sim_launch(other, NULL, 3 * NS_PER_MS);
    tlog_device_end(&s);
    host_begin(fx, "Sync");
    sim_at(fx, 5.0);
    tlog_sim_advance(other, 4 * NS_PER_MS);
    tlog_sim_settle(other);
    /* A sync scope on one device resolves that device's intervals only. */
    tlog_sync_end(fx->dev, site_named("Sync"));
    host_begin(fx, "Sync 2");
    tlog_sync_end(dev2, site_named("Sync 2"));
    host_end(fx, "Frame");

    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    tlog_node_info one = info_of(path(f, "Sync", "On device 1", NULL));
    tlog_node_info two = info_of(path(f, "Sync 2", "On device 2", NULL));
    assert_null(path(f, "Sync", "On device 2", NULL));
    assert_int_equal(one.start_ns, 1 * NS_PER_MS);
    assert_int_equal(one.total_ns, 2 * NS_PER_MS);
    assert_int_equal(two.total_ns, 3 * NS_PER_MS);
    /* Placed on the host timeline despite its clock's 1 s lead. */
    assert_int_equal(two.start_ns, 1 * NS_PER_MS);
    tlog_frame_release(f);
    tlog_device_destroy(dev2);
    tlog_sim_destroy(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sync_scope_shows_completed_intervals_under_it,
                                        sim_setup, sim_teardown),
        cmocka_unit_test_setup_teardown(device_row_may_exceed_its_sync_scope, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(
            sync_scope_leaves_incomplete_intervals_to_the_forced_sync, sim_setup,
            sim_teardown),
        cmocka_unit_test_setup_teardown(dump_forces_one_sync_titled_after_it, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(queues_complete_out_of_order, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(interval_links_to_the_scope_that_launched_it,
                                        sim_setup, sim_teardown),
        cmocka_unit_test_setup_teardown(sync_in_a_later_frame_shows_earlier_launches,
                                        sim_setup, sim_teardown),
        cmocka_unit_test(launch_rows_time_the_host_side),
        cmocka_unit_test(launch_row_of_a_scope_ended_on_another_thread),
        cmocka_unit_test(offset_is_measured_and_can_be_subtracted),
        cmocka_unit_test_setup_teardown(many_instances_merge_into_one_row, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(each_device_is_resolved_and_placed_on_its_own, sim_setup,
                                        sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
