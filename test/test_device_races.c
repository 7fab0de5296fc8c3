/* Device timers under concurrency and at awkward moments: readers and
 * resolvers racing recording threads, a forced sync that must not hold up
 * anyone else, frames that end while work for them is still arriving. Run
 * under AddressSanitizer and ThreadSanitizer in CI. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "device_fixture.h"

static uint64_t monotonic_ns(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct racer {
    tlog_log *log;
    atomic_bool stop;
} racer;

static void *read_latest(void *p)
{
    racer *r = p;
    while (!atomic_load(&r->stop))
        tlog_frame_release(tlog_frame_latest(r->log));
    return NULL;
}

static void *check_ready(void *p)
{
    racer *r = p;
    while (!atomic_load(&r->stop))
        tlog_frame_ready(r->log);
    return NULL;
}

/* Device scopes that end after their frame, while other threads resolve
 * frames and check readiness: nothing is read after it is freed, and every
 * scope is accounted for. */
static void frames_resolve_while_their_intervals_still_arrive(void **state)
{
    (void)state;
    tlog_sim_config sc = {.size = sizeof sc, .clock = monotonic_ns};
    tlog_sim *sim;
    assert_int_equal(tlog_sim_create(&sc, &sim), TLOG_OK);
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.clock = monotonic_ns;
    c.max_frames = 2;
    c.sync_timeout_ns = 1000;
    tlog_log *log = make_log(&c);
    tlog_device *dev;
    assert_int_equal(tlog_sim_device_create(sim, log, NULL, &dev), TLOG_OK);
    racer r = {log, false};
    pthread_t a, b;
    pthread_create(&a, NULL, read_latest, &r);
    pthread_create(&b, NULL, check_ready, &r);
    for (int frame = 0; frame < 300; frame++) {
        tlog_device_scope s[20];
        tlog_log_begin(log, site_named("Frame"));
        for (int k = 0; k < 20; k++)
            s[k] = tlog_device_begin(dev, NULL, site_named("Kernel"));
        tlog_log_end(log, site_named("Frame"));
        for (int k = 0; k < 20; k++)
            tlog_device_end(&s[k]);
    }
    atomic_store(&r.stop, true);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    tlog_sync(log);
    tlog_device_info i = {.size = sizeof i};
    assert_int_equal(tlog_device_get_info(dev, &i), TLOG_OK);
    assert_int_equal(i.resolved + i.unresolved + i.pending + i.scopes_dropped, 300 * 20);
    tlog_destroy(log);
    tlog_sim_destroy(sim);
}

typedef struct syncer {
    tlog_log *log;
    int rc;
    atomic_bool done;
} syncer;

static void *force(void *p)
{
    syncer *s = p;
    s->rc = tlog_sync(s->log);
    atomic_store(&s->done, true);
    return NULL;
}

/* While a forced sync waits for a marker that never completes, readiness
 * checks and sync scopes on other threads go on. */
static void forced_sync_holds_up_no_one(void **state)
{
    (void)state;
    sim_options o = {.sync_timeout_ns = 3000 * NS_PER_MS};
    sim_fixture *fx = sim_fixture_make(&o);
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Stuck"));
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_HANG, 1);
    tlog_device_end(&s);
    host_end(fx, "Frame");

    uint64_t waits = sim_stats(fx).waits;
    syncer sy = {fx->log, 0, false};
    pthread_t th;
    pthread_create(&th, NULL, force, &sy);
    while (sim_stats(fx).waits == waits)   /* until it is waiting */
        sched_yield();
    assert_int_equal(tlog_frame_ready(fx->log), 0);
    assert_null(tlog_frame_pop_ready(fx->log));
    host_begin(fx, "Next frame");
    kernel(fx, fx->q2, "Kernel", 1.0);
    sync_until(fx, "Sync", sim_ms(fx) + 2.0);
    host_end(fx, "Next frame");
    assert_false(atomic_load(&sy.done));   /* all of that while it waited */
    pthread_join(th, NULL);
    assert_int_equal(sy.rc, TLOG_ETIMEDOUT);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    tlog_frame_release(f);
    f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    assert_non_null(path(f, "Sync", "Kernel", NULL));
    tlog_frame_release(f);
    sim_fixture_free(fx);
}

/* The forced sync waits only for frames that have ended: one still in
 * progress keeps its intervals pending, not unresolved, and its own read
 * waits for them later. */
static void forced_sync_gives_up_only_on_what_it_waited_for(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Long kernel", 100.0);
    assert_int_equal(tlog_sync(fx->log), TLOG_OK);
    tlog_device_info i = device_info(fx);
    assert_int_equal(i.unresolved, 0);
    assert_int_equal(i.pending, 1);
    assert_int_equal(i.waits, 0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_latest(fx->log);   /* waits for it now */
    assert_non_null(f);
    tlog_node_info k = info_of(path(f, "Device past frame end", "Long kernel", NULL));
    assert_false(k.flags & TLOG_NODE_UNRESOLVED);
    assert_int_equal(k.total_ns, 100 * NS_PER_MS);
    tlog_frame_release(f);
}

/* A hand-off token outlives its frame: a device scope begun with it after
 * the frame ended is refused and counted, never put in the next frame. */
static void device_scope_for_an_ended_frame_is_refused(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    tlog_token token = tlog_handoff(fx->log);
    host_end(fx, "Frame");
    host_begin(fx, "Frame 2");
    host_begin(fx, "Other");
    assert_int_equal(tlog_adopt_begin(&token), TLOG_OK);
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Late kernel"));
    assert_null(s.slot_);
    tlog_adopt_end(&token);
    host_end(fx, "Other");
    host_end(fx, "Frame 2");
    assert_int_equal(device_info(fx).scopes_outside_frame, 1);
    tlog_frame_release(tlog_frame_pop(fx->log));
    tlog_frame *f = tlog_frame_pop(fx->log);
    assert_null(path(f, "Other", "Late kernel", NULL));
    tlog_frame_release(f);
}

/* Unresolved rows are placed where they were launched, on the frame's
 * timeline, never at the clock's zero. */
static void unresolved_rows_are_placed_on_the_timeline(void **state)
{
    sim_fixture *fx = *state;
    sim_at(fx, 50.0);
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Refused end"));
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_RECORD_ERROR, 1);
    tlog_device_end(&s);
    sync_until(fx, "Sync", 51.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    tlog_node_info i = info_of(path(f, "Refused end", NULL, NULL));
    assert_true(i.flags & TLOG_NODE_UNRESOLVED);
    assert_int_equal(i.start_ns, 0);
    assert_int_equal(i.total_ns, 0);
    tlog_frame_release(f);
}

/* A log destroyed with a frame in progress frees its device state (checked
 * by LeakSanitizer). */
static void destroying_a_log_mid_frame_frees_device_state(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 1.0);
    /* the fixture's teardown destroys the log with "Frame" open */
    assert_int_equal(tlog_depth(fx->log), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_resolve_while_their_intervals_still_arrive),
        cmocka_unit_test(forced_sync_holds_up_no_one),
        cmocka_unit_test_setup_teardown(forced_sync_gives_up_only_on_what_it_waited_for,
                                        sim_setup, sim_teardown),
        cmocka_unit_test_setup_teardown(device_scope_for_an_ended_frame_is_refused, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(unresolved_rows_are_placed_on_the_timeline, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(destroying_a_log_mid_frame_frees_device_state,
                                        sim_setup, sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
