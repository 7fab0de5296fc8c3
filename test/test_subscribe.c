/* Subscribers: what they are told of scopes, frames and device intervals,
 * balance of begins and ends, and unsubscribing while threads record. */
#include <pthread.h>
#include <stdatomic.h>

#include "device_fixture.h"

enum { EV_BEGIN, EV_END, EV_FRAME, EV_DEVICE };

typedef struct event {
    int kind;
    const tlog_site *site;
    uint64_t site_id, instance, serial;
    uint32_t thread;
    unsigned flags;
    tlog_ticks time, start, end;
    const char *device;
    uint32_t queue;
    const tlog_site *launch_site;
} event;

typedef struct recorder {
    event ev[256];
    int n;
    /* Optional actions from inside the callbacks. */
    tlog_log *log;
    const char *record_inside;       /* a scope recorded on each begin */
    tlog_subscription *drop_on_end;  /* unsubscribed at the first end */
} recorder;

static void add(recorder *r, event e)
{
    if (r->n < 256)
        r->ev[r->n] = e;
    r->n++;
}

static void on_begin(void *user, const tlog_scope_event *e)
{
    recorder *r = user;
    add(r, (event){.kind = EV_BEGIN, .site = e->site, .site_id = e->site_id,
                   .instance = e->instance, .thread = e->thread, .time = e->time});
    if (r->record_inside) {
        tlog_log_begin(r->log, site_named(r->record_inside));
        tlog_log_end(r->log, site_named(r->record_inside));
    }
}

static void on_end(void *user, const tlog_scope_event *e)
{
    recorder *r = user;
    add(r, (event){.kind = EV_END, .site = e->site, .site_id = e->site_id,
                   .instance = e->instance, .thread = e->thread, .flags = e->flags,
                   .time = e->time, .start = e->start});
    if (r->drop_on_end) {
        tlog_unsubscribe(r->drop_on_end);
        r->drop_on_end = NULL;
    }
}

static void on_frame(void *user, const tlog_frame_event *e)
{
    add(user, (event){.kind = EV_FRAME, .site = e->site, .site_id = e->site_id,
                      .serial = e->serial, .thread = e->thread, .start = e->start,
                      .end = e->end});
}

static void on_device(void *user, const tlog_device_event *e)
{
    add(user, (event){.kind = EV_DEVICE, .site = e->site, .site_id = e->site_id,
                      .instance = e->instance, .flags = e->flags, .start = e->start,
                      .end = e->end, .device = e->device, .queue = e->queue,
                      .launch_site = e->launch_site});
}

static tlog_subscription *subscribe(tlog_log *log, recorder *r)
{
    tlog_subscriber s = {.size = sizeof s, .user = r, .scope_begin = on_begin,
                         .scope_end = on_end, .frame_end = on_frame,
                         .device_interval = on_device};
    tlog_subscription *sub = NULL;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    assert_non_null(sub);
    return sub;
}

static void expect(const recorder *r, int i, int kind, const char *name)
{
    assert_true(i < r->n);
    assert_int_equal(r->ev[i].kind, kind);
    assert_string_equal(r->ev[i].site->name, name);
}

static tlog_log *plain_log(void)
{
    tlog_config c = test_config(NULL);
    return make_log(&c);
}

static void begins_and_ends_carry_site_id_and_instance(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder r = {0};
    tlog_subscription *sub = subscribe(log, &r);
    begin_at(log, "Frame", 0);
    begin_at(log, "Step", 1);
    end_at(log, "Step", 2);
    begin_at(log, "Step", 3);
    end_at(log, "Step", 5);
    end_at(log, "Frame", 6);

    assert_int_equal(r.n, 7);
    expect(&r, 0, EV_BEGIN, "Frame");
    expect(&r, 1, EV_BEGIN, "Step");
    expect(&r, 2, EV_END, "Step");
    expect(&r, 3, EV_BEGIN, "Step");
    expect(&r, 4, EV_END, "Step");
    expect(&r, 5, EV_END, "Frame");
    expect(&r, 6, EV_FRAME, "Frame");
    const tlog_site *step = site_named("Step");
    assert_ptr_equal(r.ev[1].site, step);
    assert_true(r.ev[1].site_id == tlog_site_id(step));
    assert_true(r.ev[4].site_id == tlog_site_id(step));
    /* Instances count per site; an end carries its begin's number. */
    assert_true(r.ev[3].instance == r.ev[1].instance + 1);
    assert_true(r.ev[2].instance == r.ev[1].instance);
    assert_true(r.ev[4].instance == r.ev[3].instance);
    assert_true(r.ev[5].instance == r.ev[0].instance);
    /* Ends give the scope's own readings of the clock. */
    assert_int_equal(r.ev[4].start, 3 * NS_PER_MS);
    assert_int_equal(r.ev[4].time, 5 * NS_PER_MS);
    assert_int_equal(r.ev[1].time, 1 * NS_PER_MS);
    assert_int_equal(r.ev[4].flags, 0);
    assert_int_equal(r.ev[6].serial, 1);
    assert_int_equal(r.ev[6].start, 0);
    assert_int_equal(r.ev[6].end, 6 * NS_PER_MS);
    assert_true(r.ev[6].site_id == tlog_site_id(site_named("Frame")));
    assert_int_equal(r.ev[0].thread, r.ev[6].thread);
    assert_true(r.ev[0].thread >= 1);

    tlog_unsubscribe(sub);
    tlog_destroy(log);
}

static void repaired_scopes_are_reported_closed_and_unmatched_ends_not(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder r = {0};
    subscribe(log, &r);   /* left for tlog_destroy */
    begin_at(log, "Frame", 0);
    begin_at(log, "Left open", 1);
    end_at(log, "Never begun", 2);
    end_at(log, "Frame", 3);

    assert_int_equal(r.n, 5);
    expect(&r, 2, EV_END, "Left open");
    assert_int_equal(r.ev[2].flags, TLOG_SCOPE_EVENT_REPAIRED);
    assert_int_equal(r.ev[2].time, 3 * NS_PER_MS);
    expect(&r, 3, EV_END, "Frame");
    assert_int_equal(r.ev[3].flags, 0);
    expect(&r, 4, EV_FRAME, "Frame");
    tlog_destroy(log);
}

static void dropped_scopes_are_reported_and_scopes_past_max_depth_are_not(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.thread_budget = 4 * 32;   /* room for four records */
    c.max_depth = 5;
    tlog_log *log = make_log(&c);
    recorder r = {0};
    subscribe(log, &r);
    begin_at(log, "Frame", 0);
    begin_at(log, "A", 0);
    begin_at(log, "B", 0);
    begin_at(log, "Kept", 1);
    begin_at(log, "Dropped", 2);    /* the budget is used up */
    begin_at(log, "Past depth", 3); /* beyond max_depth */
    end_at(log, "Past depth", 4);
    end_at(log, "Dropped", 5);
    end_at(log, "Kept", 6);
    end_at(log, "B", 7);
    end_at(log, "A", 7);
    end_at(log, "Frame", 7);

    int begins = 0, ends = 0;
    for (int i = 0; i < r.n; i++) {
        assert_string_not_equal(r.ev[i].site->name, "Past depth");
        begins += r.ev[i].kind == EV_BEGIN;
        ends += r.ev[i].kind == EV_END;
    }
    assert_int_equal(begins, 5);
    assert_int_equal(ends, 5);
    expect(&r, 5, EV_END, "Dropped");
    assert_int_equal(r.ev[5].flags, TLOG_SCOPE_EVENT_DROPPED);
    assert_int_equal(r.ev[5].start, 0);
    expect(&r, 6, EV_END, "Kept");
    assert_int_equal(r.ev[6].flags, 0);
    assert_int_equal(r.ev[6].start, 1 * NS_PER_MS);
    tlog_destroy(log);
}

static void scopes_open_before_subscribing_end_unreported(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder r = {0};
    begin_at(log, "Frame", 0);
    subscribe(log, &r);
    begin_at(log, "Inner", 1);
    end_at(log, "Inner", 2);
    end_at(log, "Frame", 3);

    assert_int_equal(r.n, 3);
    expect(&r, 0, EV_BEGIN, "Inner");
    expect(&r, 1, EV_END, "Inner");
    expect(&r, 2, EV_FRAME, "Frame");   /* frames are not balanced events */
    tlog_destroy(log);
}

static void second_subscriber_only_sees_ends_of_begins_it_saw(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder first = {0}, second = {0};
    subscribe(log, &first);
    begin_at(log, "Frame", 0);
    subscribe(log, &second);
    begin_at(log, "Inner", 1);
    end_at(log, "Inner", 2);
    end_at(log, "Frame", 3);

    assert_int_equal(first.n, 5);
    assert_int_equal(second.n, 3);
    expect(&second, 0, EV_BEGIN, "Inner");
    expect(&second, 1, EV_END, "Inner");
    expect(&second, 2, EV_FRAME, "Frame");
    tlog_destroy(log);
}

static void unsubscribed_callbacks_are_never_called_again(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder r = {0};
    tlog_subscription *sub = subscribe(log, &r);
    begin_at(log, "Frame", 0);
    begin_at(log, "Inner", 1);
    tlog_unsubscribe(sub);
    end_at(log, "Inner", 2);
    end_at(log, "Frame", 3);
    begin_at(log, "Frame", 4);
    end_at(log, "Frame", 5);

    assert_int_equal(r.n, 2);
    expect(&r, 1, EV_BEGIN, "Inner");
    tlog_unsubscribe(NULL);   /* does nothing */
    tlog_destroy(log);
}

static void callbacks_may_record_and_what_they_record_is_not_reported(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder r = {.log = log, .record_inside = "From callback"};
    subscribe(log, &r);
    begin_at(log, "Frame", 0);
    begin_at(log, "Work", 1);
    end_at(log, "Work", 2);
    end_at(log, "Frame", 3);

    for (int i = 0; i < r.n; i++)
        assert_string_not_equal(r.ev[i].site->name, "From callback");
    assert_int_equal(r.n, 5);
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    const tlog_node *inside = child_named(tlog_frame_root(f), "From callback");
    assert_non_null(inside);   /* recorded all the same */
    assert_non_null(child_named(tlog_frame_root(f), "Work"));
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void unsubscribing_from_a_callback_stops_further_calls(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder r = {0};
    r.drop_on_end = subscribe(log, &r);
    begin_at(log, "Frame", 0);
    begin_at(log, "Inner", 1);
    end_at(log, "Inner", 2);   /* unsubscribes */
    end_at(log, "Frame", 3);

    assert_int_equal(r.n, 3);
    expect(&r, 2, EV_END, "Inner");
    tlog_destroy(log);   /* frees the subscription */
}

static void subscribe_checks_its_arguments(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    tlog_subscriber s = {.size = sizeof s};
    tlog_subscription *sub = (tlog_subscription *)&s;
    assert_int_equal(tlog_subscribe(log, NULL, &sub), TLOG_EINVAL);
    assert_int_equal(tlog_subscribe(log, &s, NULL), TLOG_EINVAL);
    s.size = 1;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_EINVAL);
    assert_null(sub);
    s.size = 0;   /* the current size */
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    begin_at(log, "Frame", 0);   /* no callbacks set: nothing to call */
    end_at(log, "Frame", 1);
    tlog_unsubscribe(sub);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Device intervals                                                         */
/* ------------------------------------------------------------------------ */

static void resolved_device_intervals_are_reported(void **state)
{
    sim_fixture *fx = *state;
    recorder r = {0};
    subscribe(fx->log, &r);
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 2.0);
    sim_at(fx, 1.0);
    sync_until(fx, "GPU Sync", 4.0);
    host_end(fx, "Frame");

    int found = -1;
    for (int i = 0; i < r.n; i++)
        if (r.ev[i].kind == EV_DEVICE)
            found = i;
    assert_true(found >= 0);
    const event *e = &r.ev[found];
    assert_string_equal(e->site->name, "Kernel");
    assert_true(e->site_id == tlog_site_id(site_named("Kernel")));
    assert_true(e->instance >= 1);
    assert_string_equal(e->device, "sim");
    assert_int_equal(e->queue, 1);
    assert_string_equal(e->launch_site->name, "Frame");
    assert_int_equal(e->start, 0);
    assert_int_equal(e->end, 2 * NS_PER_MS);
    assert_int_equal(e->flags, 0);
    /* Reported once the sync scope resolved it, before the sync scope ends. */
    assert_int_equal(r.ev[found + 1].kind, EV_END);
    assert_string_equal(r.ev[found + 1].site->name, "GPU Sync");
}

static void unresolved_device_intervals_are_reported_flagged(void **state)
{
    (void)state;
    sim_options o = {.sync_timeout_ns = 20 * NS_PER_MS};
    sim_fixture *fx = sim_fixture_make(&o);
    recorder r = {0};
    subscribe(fx->log, &r);
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Stuck"));
    assert_int_equal(tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_HANG, 1), TLOG_OK);
    tlog_device_end(&s);
    host_end(fx, "Frame");
    assert_int_equal(tlog_sync(fx->log), TLOG_ETIMEDOUT);

    int devices = 0;
    for (int i = 0; i < r.n; i++)
        if (r.ev[i].kind == EV_DEVICE) {
            devices++;
            assert_int_equal(r.ev[i].flags, TLOG_DEVICE_EVENT_UNRESOLVED);
            assert_true(r.ev[i].start == r.ev[i].end);
        }
    assert_int_equal(devices, 1);
    sim_fixture_free(fx);
}

/* ------------------------------------------------------------------------ */
/* Unsubscribing while threads record                                       */
/* ------------------------------------------------------------------------ */

#define RECORDERS 3
#define MAX_THREAD_ID 64

/* One per subscription; freed (and poisoned first) right after
 * tlog_unsubscribe returns, so a late call is caught. */
typedef struct counted {
    atomic_int alive;
    atomic_long depth[MAX_THREAD_ID];  /* begins minus ends per thread */
} counted;

static atomic_int late_calls, unbalanced, stop_recording;
static atomic_long calls;

static void counted_begin(void *user, const tlog_scope_event *e)
{
    counted *c = user;
    atomic_fetch_add(&calls, 1);
    if (atomic_load(&c->alive) != 1)
        atomic_fetch_add(&late_calls, 1);
    else if (e->thread < MAX_THREAD_ID)
        atomic_fetch_add(&c->depth[e->thread], 1);
}

static void counted_end(void *user, const tlog_scope_event *e)
{
    counted *c = user;
    if (atomic_load(&c->alive) != 1)
        atomic_fetch_add(&late_calls, 1);
    else if (e->thread < MAX_THREAD_ID && atomic_fetch_sub(&c->depth[e->thread], 1) <= 0)
        atomic_fetch_add(&unbalanced, 1);
}

static void *record_until_stopped(void *arg)
{
    tlog_log *log = arg;
    static const tlog_site frame = {"Frame", __FILE__, "record", __LINE__, 1};
    static const tlog_site inner = {"Inner", __FILE__, "record", __LINE__, 1};
    while (!atomic_load(&stop_recording)) {
        tlog_log_begin(log, &frame);
        for (int i = 0; i < 8; i++) {
            tlog_log_begin(log, &inner);
            tlog_log_end(log, &inner);
        }
        tlog_log_end(log, &frame);
    }
    return NULL;
}

static void unsubscribing_is_safe_while_threads_record(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log = make_log(&c);
    pthread_t th[RECORDERS];
    atomic_store(&stop_recording, 0);
    for (int i = 0; i < RECORDERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, record_until_stopped, log), 0);
    for (int round = 0; round < 300; round++) {
        counted *user = calloc(1, sizeof *user);
        assert_non_null(user);
        atomic_store(&user->alive, 1);
        tlog_subscriber s = {.size = sizeof s, .user = user, .scope_begin = counted_begin,
                             .scope_end = counted_end};
        tlog_subscription *sub;
        assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
        sched_yield();
        tlog_unsubscribe(sub);
        atomic_store(&user->alive, 0);
        free(user);
    }
    atomic_store(&stop_recording, 1);
    for (int i = 0; i < RECORDERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&late_calls), 0);
    assert_int_equal(atomic_load(&unbalanced), 0);
    assert_true(atomic_load(&calls) > 0);   /* callbacks did run meanwhile */
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(begins_and_ends_carry_site_id_and_instance),
        cmocka_unit_test(repaired_scopes_are_reported_closed_and_unmatched_ends_not),
        cmocka_unit_test(dropped_scopes_are_reported_and_scopes_past_max_depth_are_not),
        cmocka_unit_test(scopes_open_before_subscribing_end_unreported),
        cmocka_unit_test(second_subscriber_only_sees_ends_of_begins_it_saw),
        cmocka_unit_test(unsubscribed_callbacks_are_never_called_again),
        cmocka_unit_test(callbacks_may_record_and_what_they_record_is_not_reported),
        cmocka_unit_test(unsubscribing_from_a_callback_stops_further_calls),
        cmocka_unit_test(subscribe_checks_its_arguments),
        cmocka_unit_test_setup_teardown(resolved_device_intervals_are_reported, sim_setup,
                                        sim_teardown),
        cmocka_unit_test(unresolved_device_intervals_are_reported_flagged),
        cmocka_unit_test(unsubscribing_is_safe_while_threads_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
