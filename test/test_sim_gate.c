/* The simulator's gates, and the calibration that holds the device's own
 * queue with one so that a slow host does not show in the offset. */
#include <stdatomic.h>

#include "device_fixture.h"

#define US 1000u

typedef struct gate_fixture {
    tlog_sim *sim;
    tlog_sim_queue *q;
    tlog_sim_gate *gate;
    tlog_sim_marker *m;
} gate_fixture;

static int gate_setup(void **state)
{
    gate_fixture *g = calloc(1, sizeof *g);
    tlog_sim_config c = {.size = sizeof c, .marker_ns = 1 * US};
    assert_int_equal(tlog_sim_create(&c, &g->sim), TLOG_OK);
    g->q = tlog_sim_queue_create(g->sim);
    assert_non_null(g->q);
    assert_int_equal(tlog_sim_gate_create(g->sim, &g->gate), TLOG_OK);
    assert_int_equal(tlog_sim_marker_create(g->sim, &g->m), TLOG_OK);
    *state = g;
    return 0;
}

static int gate_teardown(void **state)
{
    gate_fixture *g = *state;
    tlog_sim_marker_destroy(g->sim, g->m);
    tlog_sim_gate_destroy(g->sim, g->gate);
    tlog_sim_destroy(g->sim);
    free(g);
    return 0;
}

static void advance_to(tlog_sim *sim, uint64_t ns)
{
    tlog_sim_advance(sim, ns - tlog_sim_now(sim));
    tlog_sim_settle(sim);
}

/* The time the marker was reached; asserts it was. */
static uint64_t reached_at(gate_fixture *g)
{
    uint64_t t = 0;
    assert_int_equal(tlog_sim_marker_time(g->sim, g->m, &t), TLOG_OK);
    return t;
}

static void held_queue_runs_nothing_until_the_gate_opens(void **state)
{
    gate_fixture *g = *state;
    assert_int_equal(tlog_sim_gate_wait(g->sim, g->q, g->gate), TLOG_OK);
    assert_int_equal(tlog_sim_launch(g->sim, g->q, 2 * US), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(g->sim, g->q, g->m), TLOG_OK);
    advance_to(g->sim, 50 * US);
    assert_int_equal(tlog_sim_marker_query(g->sim, g->m), 1);
    tlog_sim_gate_open(g->sim, g->gate);
    advance_to(g->sim, 60 * US);
    /* What waited runs from the opening on, back to back. */
    assert_int_equal(reached_at(g), 52 * US);
}

static void open_gate_lets_waits_pass(void **state)
{
    gate_fixture *g = *state;
    tlog_sim_gate_open(g->sim, g->gate);
    advance_to(g->sim, 10 * US);
    assert_int_equal(tlog_sim_gate_wait(g->sim, g->q, g->gate), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(g->sim, g->q, g->m), TLOG_OK);
    advance_to(g->sim, 11 * US);
    assert_int_equal(reached_at(g), 10 * US);
}

static void closed_again_it_stops_later_waits(void **state)
{
    gate_fixture *g = *state;
    tlog_sim_gate_open(g->sim, g->gate);
    tlog_sim_gate_close(g->sim, g->gate);
    assert_int_equal(tlog_sim_gate_wait(g->sim, g->q, g->gate), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(g->sim, g->q, g->m), TLOG_OK);
    advance_to(g->sim, 10 * US);
    assert_int_equal(tlog_sim_marker_query(g->sim, g->m), 1);
    tlog_sim_gate_open(g->sim, g->gate);
    advance_to(g->sim, 20 * US);
    assert_int_equal(reached_at(g), 10 * US);
}

static void destroying_a_gate_opens_it(void **state)
{
    gate_fixture *g = *state;
    assert_int_equal(tlog_sim_gate_wait(g->sim, g->q, g->gate), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(g->sim, g->q, g->m), TLOG_OK);
    advance_to(g->sim, 5 * US);
    tlog_sim_gate_destroy(g->sim, g->gate);   /* the queue's wait keeps it */
    g->gate = NULL;
    advance_to(g->sim, 6 * US);
    assert_int_equal(reached_at(g), 5 * US);
}

/* A device clock that moves 50 us at every read: a host that takes that
 * long between any two things it asks of the device. */
static _Atomic uint64_t slow_now;

static uint64_t slow_clock(void *user)
{
    (void)user;
    return atomic_fetch_add(&slow_now, 50 * US);
}

static void calibration_ignores_the_host_time_between_records(void **state)
{
    (void)state;
    tlog_sim *sim;
    tlog_sim_config sc = {.size = sizeof sc, .clock = slow_clock, .marker_ns = 1 * US};
    assert_int_equal(tlog_sim_create(&sc, &sim), TLOG_OK);
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    tlog_device *dev = NULL;
    assert_int_equal(tlog_sim_device_create(sim, log, NULL, &dev), TLOG_OK);
    tlog_device_info i = {.size = sizeof i};
    assert_int_equal(tlog_device_get_info(dev, &i), TLOG_OK);
    assert_int_equal(i.empty_scope_ns, 1 * US);
    tlog_destroy(log);
    tlog_sim_destroy(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(held_queue_runs_nothing_until_the_gate_opens,
                                        gate_setup, gate_teardown),
        cmocka_unit_test_setup_teardown(open_gate_lets_waits_pass, gate_setup, gate_teardown),
        cmocka_unit_test_setup_teardown(closed_again_it_stops_later_waits, gate_setup,
                                        gate_teardown),
        cmocka_unit_test_setup_teardown(destroying_a_gate_opens_it, gate_setup, gate_teardown),
        cmocka_unit_test(calibration_ignores_the_host_time_between_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
