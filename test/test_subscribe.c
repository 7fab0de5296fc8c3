/* Subscribers: what they are told of scopes, frames and device intervals,
 * balance of begins and ends, and unsubscribing while threads record. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

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

static void *record_one_frame(void *arg)
{
    tlog_log *log = arg;
    tlog_log_begin(log, site_named("Frame"));
    tlog_log_end(log, site_named("Frame"));
    return NULL;
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
    c.thread_budget = 4 * SCOPE_RECORD_BYTES;   /* room for four records */
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

/* A frame of Frame and Work on a new log, told to `r`, whose callbacks
 * record a scope "From callback" each; the log. */
static tlog_log *frame_with_callbacks_recording(recorder *r)
{
    tlog_log *log = plain_log();
    *r = (recorder){.log = log, .record_inside = "From callback"};
    subscribe(log, r);
    begin_at(log, "Frame", 0);
    begin_at(log, "Work", 1);
    end_at(log, "Work", 2);
    end_at(log, "Frame", 3);
    return log;
}

static void callbacks_may_record_and_what_they_record_is_not_reported(void **state)
{
    (void)state;
    recorder r;
    tlog_log *log = frame_with_callbacks_recording(&r);

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

/* A clock that moves on at every reading. */
static tlog_ticks ticking_clock(void *user)
{
    tlog_ticks *now = user;
    return *now += 1000;
}

static void told_times_are_the_recorded_start_and_end(void **state)
{
    (void)state;
    tlog_ticks now = 0;
    tlog_config c = {.size = sizeof c, .clock = ticking_clock, .clock_user = &now,
                     .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log = make_log(&c);
    recorder r = {0};
    subscribe(log, &r);
    tlog_log_begin(log, site_named("Frame"));
    tlog_log_begin(log, site_named("Inner"));
    tlog_log_end(log, site_named("Inner"));
    tlog_log_end(log, site_named("Frame"));

    assert_int_equal(r.n, 5);
    expect(&r, 1, EV_BEGIN, "Inner");
    expect(&r, 2, EV_END, "Inner");
    expect(&r, 3, EV_END, "Frame");
    /* Each begin and each end reads the clock once. */
    assert_true(r.ev[1].time == r.ev[0].time + 1000);
    assert_true(r.ev[2].time == r.ev[1].time + 1000);
    assert_true(r.ev[3].time == r.ev[2].time + 1000);
    /* A begin is told the start its end gives. */
    assert_true(r.ev[2].start == r.ev[1].time);
    assert_true(r.ev[3].start == r.ev[0].time);
    assert_true(r.ev[4].start == r.ev[0].time && r.ev[4].end == r.ev[3].time);
    /* ... and both are what the frame recorded. */
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    assert_int_equal(fi.instances, 2);
    tlog_instance in = {.size = sizeof in};
    assert_int_equal(tlog_frame_get_instance(f, 1, &in), TLOG_OK);
    assert_string_equal(info_of(in.node).name, "Inner");
    assert_true(in.start_ns == (int64_t)(r.ev[1].time - r.ev[0].time));
    assert_true(in.duration_ns == r.ev[2].time - r.ev[1].time);
    assert_int_equal(tlog_frame_get_instance(f, 0, &in), TLOG_OK);
    assert_true(in.duration_ns == r.ev[3].time - r.ev[0].time);
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void scopes_a_begin_callback_records_nest_in_the_scope(void **state)
{
    (void)state;
    recorder r;
    tlog_log *log = frame_with_callbacks_recording(&r);

    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    const tlog_node *work = child_named(tlog_frame_root(f), "Work");
    assert_non_null(work);
    assert_non_null(child_named(work, "From callback"));
    assert_non_null(child_named(tlog_frame_root(f), "From callback"));   /* Frame's */
    tlog_frame_release(f);
    tlog_destroy(log);
}

typedef struct ender {
    tlog_log *log;
    bool end_short;   /* its begin callback ends "Short" */
    int begins, ends, short_ends;
} ender;

static void ender_begin(void *user, const tlog_scope_event *e)
{
    ender *x = user;
    x->begins++;
    if (x->end_short && strcmp(e->site->name, "Short") == 0)
        tlog_log_end(x->log, e->site);
}

static void ender_end(void *user, const tlog_scope_event *e)
{
    ender *x = user;
    x->ends++;
    x->short_ends += strcmp(e->site->name, "Short") == 0;
}

static void a_begin_callback_ending_its_scope_is_told_and_later_subscribers_are_not(
    void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    ender first = {.log = log, .end_short = true}, second = {.log = log};
    tlog_subscriber s = {.size = sizeof s, .user = &first, .scope_begin = ender_begin,
                         .scope_end = ender_end};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    s.user = &second;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    begin_at(log, "Frame", 0);
    begin_at(log, "Short", 1);   /* ended by the first subscriber's callback */
    begin_at(log, "Next", 2);
    end_at(log, "Next", 3);
    end_at(log, "Frame", 4);

    assert_int_equal(first.begins, 3);
    assert_int_equal(first.ends, 3);
    assert_int_equal(first.short_ends, 1);
    assert_int_equal(second.begins, 2);   /* Frame and Next */
    assert_int_equal(second.ends, 2);
    assert_int_equal(second.short_ends, 0);
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    assert_non_null(child_named(tlog_frame_root(f), "Short"));
    assert_non_null(child_named(tlog_frame_root(f), "Next"));
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void instances_on_one_thread_count_up_past_a_block(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder r = {0};
    subscribe(log, &r);
    begin_at(log, "Frame", 0);
    for (int i = 0; i < 100; i++) {   /* more than one block of numbers */
        begin_at(log, "Counted", 1);
        end_at(log, "Counted", 1);
    }
    end_at(log, "Frame", 2);
    assert_int_equal(r.n, 203);
    for (int i = 0; i < 100; i++) {
        assert_true(r.ev[1 + 2 * i].instance == (uint64_t)i + 1);
        assert_true(r.ev[2 + 2 * i].instance == (uint64_t)i + 1);
    }
    tlog_destroy(log);
}

/* Sites 1 KiB apart: in a thread's table of sites they have the same home
 * place. */
static struct {
    tlog_site site;
    char pad[1024 - sizeof(tlog_site)];
} apart[2] = {{{"Apart 0", __FILE__, "apart", __LINE__, 1}, {0}},
              {{"Apart 1", __FILE__, "apart", __LINE__, 1}, {0}}};

static void sites_reported_in_turn_on_one_thread_each_count_up(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    recorder r = {0};
    subscribe(log, &r);
    begin_at(log, "Frame", 0);
    for (int i = 0; i < 50; i++)
        for (int k = 0; k < 2; k++) {
            tlog_log_begin(log, &apart[k].site);
            tlog_log_end(log, &apart[k].site);
        }
    end_at(log, "Frame", 2);
    assert_int_equal(r.n, 203);
    for (int i = 0; i < 50; i++)
        for (int k = 0; k < 2; k++) {
            const event *e = &r.ev[1 + 4 * i + 2 * k];
            assert_ptr_equal(e->site, &apart[k].site);
            assert_true(e->instance == (uint64_t)i + 1);
        }
    tlog_destroy(log);
}

/* More sites than a thread's table of sites holds (2,048), each begun
 * three times in turn: the table starts again when full, and every site
 * still counts 1, 2, 3. A begin's number is checked against the round. */
enum { MANY_SITES = 3000 };

typedef struct rounds {
    const tlog_site *sites[MANY_SITES];
    int round;
    int begins, wrong;
} rounds;

static void count_round(void *user, const tlog_scope_event *e)
{
    rounds *x = user;
    if (e->site->line < 1)
        return;   /* the frame */
    x->begins++;
    x->wrong += e->site != x->sites[e->site->line - 1] || e->instance != (uint64_t)x->round;
}

static void many_sites_reported_in_turn_each_count_up(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    rounds *x = calloc(1, sizeof *x);
    for (int i = 0; i < MANY_SITES; i++) {
        char name[32];
        snprintf(name, sizeof name, "Many %d", i);
        x->sites[i] = tlog_site_intern(name, "many.c", "many", i + 1, TLOG_LEVEL_COARSE);
    }
    tlog_subscriber sub = {.size = sizeof sub, .user = x, .scope_begin = count_round};
    tlog_subscription *s = NULL;
    assert_int_equal(tlog_subscribe(log, &sub, &s), TLOG_OK);
    static const tlog_site frame = {"Frame", "many.c", "many", 0, TLOG_LEVEL_COARSE};
    tlog_log_begin(log, &frame);
    for (x->round = 1; x->round <= 3; x->round++)
        for (int i = 0; i < MANY_SITES; i++) {
            tlog_log_begin(log, x->sites[i]);
            tlog_log_end(log, x->sites[i]);
        }
    tlog_log_end(log, &frame);
    tlog_unsubscribe(s);
    assert_int_equal(x->begins, 3 * MANY_SITES);
    assert_int_equal(x->wrong, 0);
    free(x);
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
    /* Reported once the sync scope's end read it, before the scope ends. */
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
/* Events inside callbacks                                                  */
/* ------------------------------------------------------------------------ */

typedef struct inside {
    tlog_log *log;
    int begins, ends, devices;
    bool ended_frame;                /* end_frame_inside: done */
    bool left_open;                  /* leave_one_open: done */
    tlog_frame *popped;              /* pop_in_frame_end: what it took */
} inside;

static void count_end(void *user, const tlog_scope_event *e)
{
    (void)e;
    ((inside *)user)->ends++;
}

static void count_device(void *user, const tlog_device_event *e)
{
    (void)e;
    ((inside *)user)->devices++;
}

static void end_frame_inside(void *user, const tlog_scope_event *e)
{
    inside *in = user;
    in->begins++;
    if (strcmp(e->site->name, "Inner") == 0 && !in->ended_frame) {
        in->ended_frame = true;
        tlog_log_end(in->log, site_named("Frame"));
    }
}

static void ends_inside_callbacks_of_told_begins_are_reported(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    inside in = {.log = log};
    tlog_subscriber s = {.size = sizeof s, .user = &in, .scope_begin = end_frame_inside,
                         .scope_end = count_end};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    begin_at(log, "Frame", 0);
    begin_at(log, "Inner", 1);   /* its callback ends "Frame" */
    end_at(log, "Inner", 2);
    assert_true(in.ended_frame);
    assert_int_equal(in.begins, 2);
    assert_int_equal(in.ends, 2);
    tlog_destroy(log);
}

/* Ends "Frame" from the end callback of a repaired "Inner", or from the
 * error callback that reports the repair. */
static void end_frame_on_repair(void *user, const tlog_scope_event *e)
{
    inside *in = user;
    in->ends++;
    if (strcmp(e->site->name, "Inner") == 0 && !in->ended_frame) {
        in->ended_frame = true;
        tlog_log_end(in->log, site_named("Frame"));
    }
}

static void end_frame_on_error(void *user, const tlog_error *e)
{
    inside *in = user;
    if (e->code == TLOG_EMISMATCH && !in->ended_frame) {
        in->ended_frame = true;
        tlog_log_end(in->log, site_named("Frame"));
    }
}

/* An end that repairs the scopes inside it runs callbacks (the report, and
 * each repaired scope's end), which may end the very scope being ended:
 * nothing is ended twice, and the stack never goes below its bottom. */
static void callbacks_of_a_repair_may_end_the_scope_being_ended(void **state)
{
    (void)state;
    for (int from_error = 0; from_error < 2; from_error++) {
        inside in = {0};
        tlog_config c = test_config(NULL);
        if (from_error) {
            c.on_error = end_frame_on_error;
            c.error_user = &in;
        }
        tlog_log *log = make_log(&c);
        in.log = log;
        tlog_subscriber s = {.size = sizeof s, .user = &in, .scope_end = end_frame_on_repair};
        tlog_subscription *sub;
        assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
        begin_at(log, "Frame", 0);
        begin_at(log, "Inner", 1);
        end_at(log, "Frame", 2);   /* "Inner" is repaired first */
        assert_true(in.ended_frame);
        assert_int_equal(tlog_depth(log), 0);
        assert_int_equal(in.ends, 2);   /* each once */
        begin_at(log, "Frame", 3);     /* the next frame is whole */
        end_at(log, "Frame", 4);
        assert_int_equal(tlog_depth(log), 0);
        tlog_frame *f = tlog_frame_pop(log);
        assert_non_null(f);
        assert_non_null(child_named(tlog_frame_root(f), "Inner"));
        tlog_frame_release(f);
        tlog_destroy(log);
    }
}

/* The same when adopted work ends with scopes open: a callback of a
 * repaired scope ends the one around it, and the adoption still ends. */
static void end_outer_on_repair(void *user, const tlog_scope_event *e)
{
    inside *in = user;
    if (strcmp(e->site->name, "B") == 0 && !in->ended_frame) {
        in->ended_frame = true;
        tlog_log_end(in->log, site_named("A"));
    }
}

typedef struct adopter {
    tlog_log *log;
    tlog_token token;
    int rc, depth;
} adopter;

static void *adopt_and_leave_open(void *arg)
{
    adopter *a = arg;
    tlog_adopt_begin(&a->token);
    tlog_log_begin(a->log, site_named("A"));
    tlog_log_begin(a->log, site_named("B"));
    a->rc = tlog_adopt_end(&a->token);
    a->depth = tlog_depth(a->log);
    return NULL;
}

static void callbacks_of_an_adoption_s_repair_may_end_its_scopes(void **state)
{
    (void)state;
    tlog_log *log = plain_log();
    inside in = {.log = log};
    tlog_subscriber s = {.size = sizeof s, .user = &in, .scope_end = end_outer_on_repair};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    begin_at(log, "Frame", 0);
    adopter a = {.log = log, .token = tlog_handoff(log)};
    pthread_t th;
    pthread_create(&th, NULL, adopt_and_leave_open, &a);
    pthread_join(th, NULL);
    end_at(log, "Frame", 5);
    assert_true(in.ended_frame);
    assert_int_equal(a.rc, TLOG_OK);
    assert_int_equal(a.depth, 0);
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void leave_one_open(void *user, const tlog_scope_event *e)
{
    inside *in = user;
    in->begins++;
    if (strcmp(e->site->name, "Deep") == 0 && !in->left_open) {
        in->left_open = true;
        tlog_log_begin(in->log, site_named("Left open by a callback"));
    }
}

static void begin_pushed_past_max_depth_by_a_callback_still_balances(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_depth = 2;
    tlog_log *log = make_log(&c);
    inside in = {.log = log};
    tlog_subscriber s = {.size = sizeof s, .user = &in, .scope_begin = leave_one_open,
                         .scope_end = count_end};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    begin_at(log, "Frame", 0);
    begin_at(log, "Deep", 1);    /* the callback fills the last level */
    end_at(log, "Deep", 2);
    end_at(log, "Frame", 3);
    assert_true(in.left_open);
    assert_int_equal(in.begins, 2);
    assert_int_equal(in.ends, 2);
    tlog_destroy(log);
}

static void pop_in_frame_end(void *user, const tlog_frame_event *e)
{
    (void)e;
    inside *in = user;
    if (!in->popped)
        in->popped = tlog_frame_pop_ready(in->log);
}

static void device_intervals_resolved_inside_a_callback_are_reported(void **state)
{
    sim_fixture *fx = *state;
    inside in = {.log = fx->log};
    tlog_subscriber s = {.size = sizeof s, .user = &in, .frame_end = pop_in_frame_end,
                         .device_interval = count_device};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(fx->log, &s, &sub), TLOG_OK);
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 1.0);
    sim_at(fx, 2.0);
    host_end(fx, "Frame");   /* frame_end pops it, resolving the kernel */
    assert_non_null(in.popped);
    assert_int_equal(in.devices, 1);
    tlog_frame_release(in.popped);
    tlog_unsubscribe(sub);
}

/* The error callback records a scope while the library closes one: the end
 * reported is still the scope that closed, and the callback's own scope is
 * reported once each way. */
static int allocations;
static void *fail_after_two(void *user, size_t bytes)
{
    (void)user;
    return ++allocations <= 2 ? malloc(bytes) : NULL;
}

static void free_block(void *user, void *block)
{
    (void)user;
    free(block);
}

typedef struct error_recorder {
    tlog_log *log;
} error_recorder;

static void record_on_error(void *user, const tlog_error *e)
{
    (void)e;
    error_recorder *er = user;
    tlog_log_begin(er->log, site_named("From the error callback"));
    tlog_log_end(er->log, site_named("From the error callback"));
}

typedef struct by_name {
    long inner_begins, inner_ends, error_begins, error_ends;
} by_name;

static void name_begin(void *user, const tlog_scope_event *e)
{
    by_name *b = user;
    b->inner_begins += strcmp(e->site->name, "Inner") == 0;
    b->error_begins += strcmp(e->site->name, "From the error callback") == 0;
}

static void name_end(void *user, const tlog_scope_event *e)
{
    by_name *b = user;
    b->inner_ends += strcmp(e->site->name, "Inner") == 0;
    b->error_ends += strcmp(e->site->name, "From the error callback") == 0;
}

static void error_callback_recording_does_not_change_the_end_reported(void **state)
{
    (void)state;
    error_recorder er = {0};
    tlog_config c = test_config(NULL);
    c.thread_budget = 1 << 20;   /* more than one chunk's worth */
    c.record_alloc = fail_after_two;
    c.record_free = free_block;
    c.on_error = record_on_error;
    c.error_user = &er;
    allocations = 0;
    tlog_log *log = make_log(&c);
    er.log = log;
    by_name b = {0};
    tlog_subscriber s = {.size = sizeof s, .user = &b, .scope_begin = name_begin,
                         .scope_end = name_end};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    begin_at(log, "Frame", 0);
    /* Enough ends to fill the first chunk: the next one cannot be had, and
     * the error is reported while an end is being written. */
    for (int i = 0; i < 6000; i++) {   /* a chunk holds 4096 */
        begin_at(log, "Inner", 1);
        end_at(log, "Inner", 2);
    }
    end_at(log, "Frame", 3);
    assert_true(allocations > 2);   /* an allocation did fail */
    assert_int_equal(b.inner_ends, b.inner_begins);
    assert_true(b.inner_begins > 0);
    /* The error callback is no subscriber callback: its scope is reported,
     * once each way. */
    assert_true(b.error_begins > 0);
    assert_int_equal(b.error_ends, b.error_begins);
    tlog_unsubscribe(sub);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */
/* ------------------------------------------------------------------------ */

static void exit_in_callback(void *user, const tlog_scope_event *e)
{
    (void)user;
    if (strcmp(e->site->name, "Exit here") == 0)
        pthread_exit(NULL);
}

static void *begin_and_exit(void *arg)
{
    tlog_log *log = arg;
    tlog_log_begin(log, site_named("Frame"));
    tlog_log_begin(log, site_named("Exit here"));
    return NULL;   /* not reached */
}

static void a_thread_ending_inside_a_callback_does_not_block_unsubscribe(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log = make_log(&c);
    tlog_subscriber s = {.size = sizeof s, .scope_begin = exit_in_callback};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, begin_and_exit, log), 0);
    pthread_join(th, NULL);
    tlog_unsubscribe(sub);   /* returns: the thread is no longer reading */
    recorder r = {0};
    subscribe(log, &r);      /* and threads reusing its slot are reported */
    pthread_create(&th, NULL, record_one_frame, log);
    pthread_join(th, NULL);
    assert_int_equal(r.n, 3);
    tlog_destroy(log);
}

static atomic_int stop_polling;

static void *poll_until_stopped(void *arg)
{
    sim_fixture *fx = arg;
    while (!atomic_load(&stop_polling))
        tlog_frame_ready(fx->log);
    return NULL;
}

static void device_subscribers_come_and_go_while_another_thread_polls(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 1.0);
    host_end(fx, "Frame");   /* stays pending: the clock does not move */
    atomic_store(&stop_polling, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, poll_until_stopped, fx), 0);
    for (int round = 0; round < 300; round++) {
        inside in = {0};
        tlog_subscriber s = {.size = sizeof s, .user = &in, .device_interval = count_device};
        tlog_subscription *sub;
        assert_int_equal(tlog_subscribe(fx->log, &s, &sub), TLOG_OK);
        tlog_unsubscribe(sub);
    }
    atomic_store(&stop_polling, 1);
    pthread_join(th, NULL);
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

/* Subscribes, lets the recorders run for about `ns`, unsubscribes, then
 * poisons and frees the subscriber's data. */
static void subscribe_round(tlog_log *log, long ns)
{
    counted *user = calloc(1, sizeof *user);
    assert_non_null(user);
    atomic_store(&user->alive, 1);
    tlog_subscriber s = {.size = sizeof s, .user = user, .scope_begin = counted_begin,
                         .scope_end = counted_end};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    if (ns) {
        struct timespec t = {0, ns};
        nanosleep(&t, NULL);
    } else {
        sched_yield();
    }
    tlog_unsubscribe(sub);
    atomic_store(&user->alive, 0);
    free(user);
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
    for (int round = 0; round < 300; round++)
        subscribe_round(log, 0);
    /* On a loaded machine the recorders may not have run during those
     * rounds: give them time until some callback has run. */
    for (int round = 0; round < 1000 && atomic_load(&calls) == 0; round++)
        subscribe_round(log, 1000000);
    atomic_store(&stop_recording, 1);
    for (int i = 0; i < RECORDERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&late_calls), 0);
    assert_int_equal(atomic_load(&unbalanced), 0);
    assert_true(atomic_load(&calls) > 0);   /* callbacks did run meanwhile */
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Instances across threads                                                 */
/* ------------------------------------------------------------------------ */

#define NUMBERING_THREADS 4
#define NUMBERED 300

/* What each thread of the log was told, by thread id. */
typedef struct numbered {
    uint64_t begun[MAX_THREAD_ID][NUMBERED];
    int n[MAX_THREAD_ID];
    atomic_int mismatched_ends;
} numbered;

static const tlog_site numbered_site = {"Numbered", __FILE__, "numbered", __LINE__, 1};

static void numbered_begin(void *user, const tlog_scope_event *e)
{
    numbered *x = user;
    if (e->site == &numbered_site && e->thread < MAX_THREAD_ID &&
        x->n[e->thread] < NUMBERED)
        x->begun[e->thread][x->n[e->thread]++] = e->instance;
}

static void numbered_end(void *user, const tlog_scope_event *e)
{
    numbered *x = user;
    if (e->site == &numbered_site &&
        (e->thread >= MAX_THREAD_ID || !x->n[e->thread] ||
         x->begun[e->thread][x->n[e->thread] - 1] != e->instance))
        atomic_fetch_add(&x->mismatched_ends, 1);
}

static pthread_barrier_t numbering_line;

static void *record_numbered(void *arg)
{
    tlog_log *log = arg;
    static const tlog_site frame = {"Frame", __FILE__, "numbered", __LINE__, 1};
    pthread_barrier_wait(&numbering_line);
    tlog_log_begin(log, &frame);
    for (int i = 0; i < NUMBERED; i++) {
        tlog_log_begin(log, &numbered_site);
        tlog_log_end(log, &numbered_site);
        if (i % 16 == 0)
            sched_yield();   /* let the threads take turns */
    }
    tlog_log_end(log, &frame);
    return NULL;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void instances_are_unique_across_threads_and_grow_on_each(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log = make_log(&c);
    numbered *x = calloc(1, sizeof *x);
    assert_non_null(x);
    tlog_subscriber s = {.size = sizeof s, .user = x, .scope_begin = numbered_begin,
                         .scope_end = numbered_end};
    tlog_subscription *sub;
    assert_int_equal(tlog_subscribe(log, &s, &sub), TLOG_OK);
    pthread_t th[NUMBERING_THREADS];
    pthread_barrier_init(&numbering_line, NULL, NUMBERING_THREADS);
    for (int i = 0; i < NUMBERING_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, record_numbered, log), 0);
    for (int i = 0; i < NUMBERING_THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&numbering_line);
    tlog_unsubscribe(sub);

    static uint64_t all[NUMBERING_THREADS * NUMBERED];
    size_t n = 0;
    int threads = 0;
    for (int t = 0; t < MAX_THREAD_ID; t++) {
        if (!x->n[t])
            continue;
        threads++;
        assert_int_equal(x->n[t], NUMBERED);
        for (int i = 0; i < NUMBERED; i++) {
            assert_true(x->begun[t][i] >= 1);
            if (i)
                assert_true(x->begun[t][i] > x->begun[t][i - 1]);
            all[n++] = x->begun[t][i];
        }
    }
    assert_int_equal(threads, NUMBERING_THREADS);
    qsort(all, n, sizeof all[0], compare_u64);
    for (size_t i = 1; i < n; i++)
        assert_true(all[i] != all[i - 1]);
    assert_int_equal(atomic_load(&x->mismatched_ends), 0);
    free(x);
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
        cmocka_unit_test(told_times_are_the_recorded_start_and_end),
        cmocka_unit_test(scopes_a_begin_callback_records_nest_in_the_scope),
        cmocka_unit_test(a_begin_callback_ending_its_scope_is_told_and_later_subscribers_are_not),
        cmocka_unit_test(instances_on_one_thread_count_up_past_a_block),
        cmocka_unit_test(sites_reported_in_turn_on_one_thread_each_count_up),
        cmocka_unit_test(many_sites_reported_in_turn_each_count_up),
        cmocka_unit_test(instances_are_unique_across_threads_and_grow_on_each),
        cmocka_unit_test_setup_teardown(resolved_device_intervals_are_reported, sim_setup,
                                        sim_teardown),
        cmocka_unit_test(unresolved_device_intervals_are_reported_flagged),
        cmocka_unit_test(unsubscribing_is_safe_while_threads_record),
        cmocka_unit_test(ends_inside_callbacks_of_told_begins_are_reported),
        cmocka_unit_test(callbacks_of_a_repair_may_end_the_scope_being_ended),
        cmocka_unit_test(callbacks_of_an_adoption_s_repair_may_end_its_scopes),
        cmocka_unit_test(begin_pushed_past_max_depth_by_a_callback_still_balances),
        cmocka_unit_test_setup_teardown(device_intervals_resolved_inside_a_callback_are_reported,
                                        sim_setup, sim_teardown),
        cmocka_unit_test(error_callback_recording_does_not_change_the_end_reported),
        cmocka_unit_test(a_thread_ending_inside_a_callback_does_not_block_unsubscribe),
        cmocka_unit_test_setup_teardown(
            device_subscribers_come_and_go_while_another_thread_polls, sim_setup,
            sim_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
