/* What goes wrong on devices: markers that never complete, errors from the
 * device, captured queues, a full pool, scopes outside frames, wrong ends,
 * threads. Each is reported, counted, and loses nothing else. */
#include <pthread.h>
#include <time.h>

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

/* ------------------------------------------------------------------------ */
/* A forced sync while other threads poll, fail or destroy                  */
/* ------------------------------------------------------------------------ */

/* Until the simulated device has been waited on more than `waits` times
 * (a forced sync is waiting on a marker), or a second has passed: whether
 * it was. */
static bool sim_waited_past(tlog_sim *sim, uint64_t waits)
{
    for (int i = 0; i < 1000; i++) {
        tlog_sim_stats st = {.size = sizeof st};
        if (tlog_sim_get_stats(sim, &st) == TLOG_OK && st.waits > waits)
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return false;
}

static uint64_t sim_waits(tlog_sim *sim)
{
    tlog_sim_stats st = {.size = sizeof st};
    tlog_sim_get_stats(sim, &st);
    return st.waits;
}

/* Lets the device run to `ms` once the forced sync waits on it. */
typedef struct advance_arg {
    sim_fixture *fx;
    double ms[2];
} advance_arg;

static void *advance_when_waited(void *p)
{
    advance_arg *a = p;
    for (int k = 0; k < 2 && a->ms[k] > 0; k++) {
        sim_waited_past(a->fx->sim, sim_waits(a->fx->sim));
        sim_at(a->fx, a->ms[k]);
    }
    return NULL;
}

/* A query that fails once while the forced sync looks at a marker: the
 * sync waits for the marker all the same, and the interval resolves. */
static void failed_query_in_a_forced_sync_is_waited_out(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Long", 100.0);
    host_end(fx, "Frame");
    uint64_t waits = sim_waits(fx->sim);
    advance_arg a = {fx, {100.0, 0}};
    pthread_t th;
    pthread_create(&th, NULL, advance_when_waited, &a);
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_QUERY_ERROR, 1);
    int rc = tlog_sync(fx->log);
    pthread_join(th, NULL);
    assert_true(sim_waits(fx->sim) > waits);
    assert_int_equal(rc, TLOG_OK);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    tlog_node_info i = info_of(path(f, "Device past frame end", "Long", NULL));
    assert_false(i.flags & TLOG_NODE_UNRESOLVED);
    assert_int_equal(i.total_ns, 100 * NS_PER_MS);
    tlog_frame_release(f);
}

/* Another thread's poll meets a failing marker that a forced sync holds:
 * once the sync lets the slot go, its markers are retired, not put back
 * while still in flight. */
typedef struct failing_poll_arg {
    sim_fixture *fx;
    uint64_t waits;
} failing_poll_arg;

static void *fail_and_poll(void *p)
{
    failing_poll_arg *a = p;
    sim_waited_past(a->fx->sim, a->waits);   /* the sync waits on "Stuck" */
    tlog_sim_inject(a->fx->sim, TLOG_SIM_FAULT_QUERY_ERROR, 1);
    tlog_log_begin(a->fx->log, site_named("Other frame"));
    tlog_sync_end(a->fx->dev, site_named("Other frame"));   /* polls */
    return NULL;
}

/* Frame > Stuck: a device scope whose end marker never completes. */
static void stuck_frame(sim_fixture *fx)
{
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Stuck"));
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_HANG, 1);
    tlog_device_end(&s);
    host_end(fx, "Frame");
}

/* A fixture whose stuck frame a forced sync waits on, until it gives up,
 * while `other` runs on a thread of its own. */
static sim_fixture *forced_sync_beside(void *(*other)(void *))
{
    sim_options o = {.sync_timeout_ns = 100 * NS_PER_MS};
    sim_fixture *fx = sim_fixture_make(&o);
    stuck_frame(fx);
    failing_poll_arg a = {fx, sim_waits(fx->sim)};
    pthread_t th;
    pthread_create(&th, NULL, other, &a);
    assert_int_equal(tlog_sync(fx->log), TLOG_ETIMEDOUT);
    pthread_join(th, NULL);
    return fx;
}

static void a_slot_failed_under_a_forced_sync_is_retired(void **state)
{
    (void)state;
    sim_fixture *fx = forced_sync_beside(fail_and_poll);
    assert_true(count_code(&fx->errors, TLOG_EDEVICE) >= 1);   /* the poll's */
    /* The next scopes take slots from the pool: none may record again the
     * marker still in flight. */
    host_begin(fx, "Again");
    for (int i = 0; i < 8; i++)
        kernel(fx, fx->q2, "Short", 0.01);
    host_end(fx, "Again");
    assert_int_equal(sim_stats(fx).rerecords_in_flight, 0);
    sim_fixture_free(fx);
}

/* A device destroyed while a forced sync waits on its markers: the
 * destroy waits for the sync, which reads no freed marker (the sanitizer
 * builds watch). */
static void *destroy_when_waited(void *p)
{
    failing_poll_arg *a = p;
    sim_waited_past(a->fx->sim, a->waits);
    tlog_device_destroy(a->fx->dev);
    return NULL;
}

static void destroying_a_device_waits_for_a_forced_sync(void **state)
{
    (void)state;
    sim_fixture *fx = forced_sync_beside(destroy_when_waited);
    fx->dev = NULL;
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    assert_true(info_of(path(f, "Stuck", NULL, NULL)).flags & TLOG_NODE_UNRESOLVED);
    tlog_frame_release(f);
    sim_fixture_free(fx);
}

/* More queues than are kept once empty, emptied by another thread's poll
 * while a forced sync waits on a queue made after them: the sync still
 * waits on the queues after that one, and nothing it waited for shows
 * unresolved. On a device that runs in real time (waits block). */
static uint64_t wall_ns(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum { EMPTIED = 33 };   /* past the 32 queues kept empty */

typedef struct many_queues_arg {
    tlog_sim *sim;
    tlog_log *log;
    tlog_device *dev;
    tlog_sim_queue *queues[EMPTIED];
    pthread_barrier_t launched;
    uint64_t waits;
} many_queues_arg;

static void *empty_queues_while_waited(void *p)
{
    many_queues_arg *a = p;
    tlog_log_begin(a->log, site_named("Other frame"));
    for (int i = 0; i < EMPTIED; i++) {
        tlog_device_scope s = tlog_device_begin(a->dev, a->queues[i], site_named("Small"));
        tlog_sim_launch(a->sim, a->queues[i], 50 * NS_PER_MS);
        tlog_device_end(&s);
    }
    pthread_barrier_wait(&a->launched);
    pthread_barrier_wait(&a->launched);   /* main's frame ended, its sync begins */
    sim_waited_past(a->sim, a->waits);   /* the sync waits on "First" */
    nanosleep(&(struct timespec){0, 80 * NS_PER_MS}, NULL);   /* "Small" is done */
    tlog_sync_end(a->dev, site_named("Other frame"));   /* empties their queues */
    return NULL;
}

static void queues_emptied_during_a_forced_sync_are_not_skipped(void **state)
{
    (void)state;
    collected_errors errors = {0};
    many_queues_arg a = {0};
    tlog_sim_config sc = {.size = sizeof sc, .clock = wall_ns};
    assert_int_equal(tlog_sim_create(&sc, &a.sim), TLOG_OK);
    tlog_config c = test_config(&errors);
    c.sync_timeout_ns = 5000 * NS_PER_MS;
    a.log = make_log(&c);
    assert_int_equal(tlog_sim_device_create(a.sim, a.log, NULL, &a.dev), TLOG_OK);
    for (int i = 0; i < EMPTIED; i++)
        a.queues[i] = tlog_sim_queue_create(a.sim);
    tlog_sim_queue *first = tlog_sim_queue_create(a.sim), *second = tlog_sim_queue_create(a.sim);
    pthread_barrier_init(&a.launched, NULL, 2);
    pthread_t th;
    pthread_create(&th, NULL, empty_queues_while_waited, &a);
    pthread_barrier_wait(&a.launched);   /* their queues come first */
    tlog_log_begin(a.log, site_named("Frame"));
    const char *names[] = {"First", "Second"};
    tlog_sim_queue *queues[] = {first, second};
    for (int k = 0; k < 2; k++) {
        tlog_device_scope s = tlog_device_begin(a.dev, queues[k], site_named(names[k]));
        tlog_sim_launch(a.sim, queues[k], (uint64_t)(k + 1) * 250 * NS_PER_MS);
        tlog_device_end(&s);
    }
    tlog_log_end(a.log, site_named("Frame"));
    a.waits = sim_waits(a.sim);
    pthread_barrier_wait(&a.launched);
    assert_int_equal(tlog_sync(a.log), TLOG_OK);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&a.launched);
    tlog_frame *f = tlog_frame_pop(a.log);
    assert_non_null(f);
    for (int k = 0; k < 2; k++) {
        const tlog_node *n = child_named(tlog_frame_root(f), names[k]);
        if (!n)
            n = path(f, "Device past frame end", names[k], NULL);
        if (info_of(n).flags & TLOG_NODE_UNRESOLVED)
            fail_msg("\"%s\" shows unresolved", names[k]);
    }
    tlog_frame_release(f);
    assert_int_equal(count_code(&errors, TLOG_ETIMEDOUT), 0);
    tlog_destroy(a.log);
    tlog_sim_destroy(a.sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(marker_that_never_completes_times_out_and_is_shown_unresolved),
        cmocka_unit_test_setup_teardown(failed_query_in_a_forced_sync_is_waited_out, sim_setup,
                                        sim_teardown),
        cmocka_unit_test(a_slot_failed_under_a_forced_sync_is_retired),
        cmocka_unit_test(queues_emptied_during_a_forced_sync_are_not_skipped),
        cmocka_unit_test(destroying_a_device_waits_for_a_forced_sync),
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
