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

typedef struct popper {
    tlog_log *log;
    int stop;
    int popped;
} popper;

static void *pop_until_stopped(void *p)
{
    popper *r = p;
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        tlog_frame *f = tlog_frame_pop_ready(r->log);
        if (f) {
            __atomic_fetch_add(&r->popped, 1, __ATOMIC_RELAXED);
            tlog_frame_release(f);
        }
    }
    return NULL;
}

/* A sync scope that is the frame's root: the frame may be read the moment
 * the scope ends, by a reader on another thread, while the end is still
 * being finished. */
static void root_sync_scope_races_readers_cleanly(void **state)
{
    sim_fixture *fx = *state;
    popper r = {fx->log, 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, pop_until_stopped, &r), 0);
    for (int i = 0; i < 300; i++) {
        host_begin(fx, "Root sync");
        kernel(fx, fx->q1, "Kernel", 0.01);
        sim_at(fx, sim_ms(fx) + 0.02);
        tlog_sync_end(fx->dev, site_named("Root sync"));
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    tlog_frame *f;
    while ((f = tlog_frame_pop_ready(fx->log)) != NULL) {
        assert_non_null(path(f, "Kernel", NULL, NULL));   /* under the root sync */
        r.popped++;
        tlog_frame_release(f);
    }
    assert_int_equal(r.popped + (int)stats_of(fx->log).frames_dropped, 300);
}

/* A device scope begun and never ended: destroying the device shows it
 * unresolved and lets its frame go (no leak, the frame becomes ready). */
static void device_scope_never_ended_is_let_go_with_its_device(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    tlog_device_scope forgotten = tlog_device_begin(fx->dev, fx->q1, site_named("Forgotten"));
    assert_non_null(forgotten.slot_);
    host_end(fx, "Frame");
    assert_int_equal(tlog_frame_ready(fx->log), 0);
    tlog_device_destroy(fx->dev);
    fx->dev = NULL;
    assert_int_equal(tlog_frame_ready(fx->log), 1);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_true(info_of(path(f, "Forgotten", NULL, NULL)).flags & TLOG_NODE_UNRESOLVED);
    tlog_frame_release(f);
}

/* A subscriber told of intervals read at a root's end may record: it is told
 * once the frame is queued, so its own frame comes after. */
static void record_from_interval(void *user, const tlog_device_event *e)
{
    (void)e;
    tlog_log *log = user;
    tlog_log_begin(log, site_named("From callback"));
    tlog_log_end(log, site_named("From callback"));
}

static void subscriber_told_at_a_roots_end_may_record(void **state)
{
    (void)state;
    sim_options o = {.max_scopes = 8};
    sim_fixture *fx = sim_fixture_make(&o);
    tlog_subscriber sub = {.size = sizeof sub, .device_interval = record_from_interval,
                           .user = fx->log};
    tlog_subscription *handle;
    assert_int_equal(tlog_subscribe(fx->log, &sub, &handle), TLOG_OK);
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 1.0);
    sim_at(fx, 2.0);
    host_end(fx, "Frame");   /* reads the kernel; the callback records */
    tlog_unsubscribe(handle);
    tlog_frame *first = tlog_frame_pop(fx->log), *second = tlog_frame_pop(fx->log);
    assert_non_null(first);
    assert_non_null(second);
    assert_string_equal(info_of(tlog_frame_root(first)).name, "Frame");
    assert_string_equal(info_of(tlog_frame_root(second)).name, "From callback");
    assert_non_null(path(first, "Kernel", NULL, NULL));
    tlog_frame_release(first);
    tlog_frame_release(second);
    sim_fixture_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(root_sync_scope_races_readers_cleanly, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(device_scope_never_ended_is_let_go_with_its_device,
                                        sim_setup, sim_teardown),
        cmocka_unit_test(subscriber_told_at_a_roots_end_may_record),
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
