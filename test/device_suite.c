#define _POSIX_C_SOURCE 200809L
/*
 * The device behaviour suite (see device_suite.h). Each case makes a log and
 * a device of its own, records frames with device scopes around work of
 * known length, and checks what comes out.
 */
#include "device_suite.h"
#include "check.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const suite_backend *be;

#define MS 1000000ull

/* ------------------------------------------------------------------------ */
/* Fixture                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct fixture {
    tlog_log *log;
    tlog_device *dev;
    void *q1, *q2;
    bool held1, held2;     /* by hold() */
    check_errors errors;
} fixture;

static int fixture_open(fixture *fx, uint64_t sync_timeout_ns)
{
    memset(fx, 0, sizeof *fx);
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = 64,
                     .sync_timeout_ns = sync_timeout_ns, .on_error = check_collect,
                     .error_user = &fx->errors};
    if (tlog_create(&c, &fx->log) != TLOG_OK)
        return TLOG_ENOMEM;
    int rc = be->open(fx->log, &fx->dev);
    if (rc != TLOG_OK) {
        tlog_destroy(fx->log);
        return rc;
    }
    fx->q1 = be->queue_create();
    fx->q2 = be->queue_create();
    return fx->q1 && fx->q2 ? TLOG_OK : TLOG_ENOMEM;
}

static void finish(fixture *fx, void *q);

static void fixture_close(fixture *fx)
{
    finish(fx, fx->q1);
    finish(fx, fx->q2);
    tlog_destroy(fx->log);   /* destroys the device too */
    be->queue_destroy(fx->q1);
    be->queue_destroy(fx->q2);
}

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, "device_suite.c", "suite", 1, TLOG_LEVEL_COARSE);
}

static void *handle(void *q)
{
    return be->handle ? be->handle(q) : q;
}

static void submit(void *q)
{
    if (be->submit)
        CHECK(be->submit(q) == 0);
}

static void host_begin(fixture *fx, const char *name)
{
    tlog_log_begin(fx->log, site(name));
}

static void host_end(fixture *fx, const char *name)
{
    tlog_log_end(fx->log, site(name));
}

static tlog_device_scope dev_begin(fixture *fx, void *q, const char *name)
{
    tlog_device_scope s = tlog_device_begin(fx->dev, handle(q), site(name));
    CHECK(s.slot_ != NULL);
    return s;
}

static void dev_end(tlog_device_scope *s)
{
    CHECK(tlog_device_end(s) == TLOG_OK);
}

/* A device scope around work of `ns` on q. */
static void timed(fixture *fx, void *q, const char *name, uint64_t ns)
{
    tlog_device_scope s = dev_begin(fx, q, name);
    CHECK(be->launch(handle(q), ns) == 0);
    dev_end(&s);
}

static bool *held(fixture *fx, void *q)
{
    return q == fx->q1 ? &fx->held1 : &fx->held2;
}

/* Stops q until release() (or, where the backend cannot, keeps it busy for
 * longer than a slow host takes to enqueue a case's scopes), so that the
 * scopes enqueued behind it do not see the host's gaps between enqueues: a
 * scope on an idle queue includes them, as it should. */
static void hold(fixture *fx, void *q)
{
    if (!be->hold) {
        CHECK(be->launch(handle(q), 20 * MS) == 0);
        return;
    }
    CHECK(be->hold(q) == 0);
    *held(fx, q) = true;
}

static void release(fixture *fx, void *q)
{
    if (*held(fx, q))
        CHECK(be->release(q) == 0);
    *held(fx, q) = false;
}

/* The application's wait for q, once released. */
static void finish(fixture *fx, void *q)
{
    release(fx, q);
    be->finish(q);
}

/* How far a device duration of `ns` may read off: the backend's tolerance,
 * and the host clock's rate, measured over 10 ms at start-up, through which
 * device rows are placed (0.1-0.2 %). */
static uint64_t near(uint64_t ns)
{
    return be->tolerance_ns + ns / 300;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&t, NULL);
}

static tlog_device_info info(fixture *fx)
{
    tlog_device_info i = {.size = sizeof i};
    CHECK(tlog_device_get_info(fx->dev, &i) == TLOG_OK);
    return i;
}

/* ------------------------------------------------------------------------ */
/* Reading frames                                                           */
/* ------------------------------------------------------------------------ */

typedef struct found {
    const char *name;
    const tlog_node *node;
    tlog_node_info info;
} found;

static int match(void *user, const tlog_node *node, const tlog_node_info *i)
{
    found *f = user;
    if (strcmp(i->name, f->name) != 0)
        return 0;
    f->node = node;
    f->info = *i;
    return 1;
}

/* The first row named `name`, depth first; its info in *out. */
static const tlog_node *row(const tlog_frame *frame, const char *name, tlog_node_info *out)
{
    found f = {.name = name, .info = {.size = sizeof f.info}};
    tlog_frame_walk(frame, match, &f);
    if (out)
        *out = f.info;
    return f.node;
}

/* The first instance of `node`. */
static tlog_instance instance(const tlog_frame *frame, const tlog_node *node)
{
    tlog_instance in = {.size = sizeof in};
    for (size_t k = 0; tlog_frame_get_instance(frame, k, &in) == TLOG_OK; k++)
        if (in.node == node)
            return in;
    tlog_instance none = {.size = sizeof none};
    return none;
}

static const char *parent_name(const tlog_node *node)
{
    tlog_node_info i = {.size = sizeof i};
    const tlog_node *p = node ? tlog_node_parent(node) : NULL;
    return p && tlog_node_get_info(p, &i) == TLOG_OK ? i.name : "";
}

static void finish_queues(fixture *fx)
{
    finish(fx, fx->q1);
    finish(fx, fx->q2);
}

/* Records one frame "frame" with `body` inside, then pops it (forcing a
 * sync if its device work is pending). */
static tlog_frame *frame_of(fixture *fx, void (*body)(fixture *), bool wait)
{
    host_begin(fx, "frame");
    body(fx);
    host_end(fx, "frame");
    submit(fx->q1);
    submit(fx->q2);
    if (wait) {
        /* Read by the readiness check: where rows go does not depend on it. */
        finish_queues(fx);
        CHECK(tlog_frame_ready(fx->log) == 1);
    }
    tlog_frame *f = tlog_frame_pop(fx->log);
    CHECK(f != NULL);
    return f;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

static void body_one_kernel(fixture *fx)
{
    hold(fx, fx->q1);
    timed(fx, fx->q1, "work", 3 * MS);
}

/* The interval is the work's length. The queue was held until after the
 * frame ended, so it shows under the frame's `Device past frame end` row. */
static void interval_times_the_work_it_encloses(fixture *fx)
{
    tlog_frame *f = frame_of(fx, body_one_kernel, true);
    tlog_node_info i = {0};
    const tlog_node *n = row(f, "work", &i);
    CHECK(n != NULL);
    if (n) {
        CHECK(i.device != NULL);
        CHECK(i.count == 1);
        CHECK_NEAR(i.total_ns, 3 * MS, near(3 * MS));
        CHECK(strcmp(parent_name(n), "Device past frame end") == 0);
        CHECK(i.percent_of_parent > 0);
        CHECK(i.launcher == tlog_frame_root(f));
    }
    tlog_frame_release(f);
}

/* Work the application waited for inside the frame, without a sync scope,
 * shows under the scope that launched it. */
static void work_done_in_the_frame_shows_under_its_launcher(fixture *fx)
{
    host_begin(fx, "frame");
    host_begin(fx, "launcher");
    hold(fx, fx->q1);
    timed(fx, fx->q1, "inside", 1 * MS);
    host_end(fx, "launcher");
    submit(fx->q1);
    finish(fx, fx->q1);
    host_end(fx, "frame");
    tlog_frame *f = tlog_frame_pop(fx->log);
    tlog_node_info i = {0};
    const tlog_node *n = f ? row(f, "inside", &i) : NULL;
    CHECK(n != NULL);
    if (n) {
        CHECK(strcmp(parent_name(n), "launcher") == 0);
        CHECK_NEAR(i.total_ns, 1 * MS, near(1 * MS));
    }
    CHECK(f && row(f, "Device past frame end", NULL) == NULL);
    tlog_frame_release(f);
}

/* A sync scope bound to one queue shows only that queue's work; an unbound
 * one after it takes the rest. The backend's queue handles are what binds. */
static void queue_bound_sync_scope_takes_only_its_queue(fixture *fx)
{
    /* The handle the work is recorded on (a Level Zero regular list is
     * replaced by a new one when submitted). */
    void *recorded_on = handle(fx->q1);
    host_begin(fx, "frame");
    timed(fx, fx->q1, "on q1", 1 * MS);
    timed(fx, fx->q2, "on q2", 1 * MS);
    submit(fx->q1);
    submit(fx->q2);
    host_begin(fx, "wait q1");
    finish(fx, fx->q1);
    finish(fx, fx->q2);
    tlog_sync_end_queue(fx->dev, recorded_on, site("wait q1"));
    host_begin(fx, "wait all");
    tlog_sync_end(fx->dev, site("wait all"));
    host_end(fx, "frame");
    tlog_frame *f = tlog_frame_pop(fx->log);
    const tlog_node *one = f ? row(f, "on q1", NULL) : NULL;
    const tlog_node *two = f ? row(f, "on q2", NULL) : NULL;
    CHECK(one && two);
    if (one && two) {
        CHECK(strcmp(parent_name(one), "wait q1") == 0);
        CHECK(strcmp(parent_name(two), "wait all") == 0);
    }
    tlog_frame_release(f);
}

static void body_two_kernels(fixture *fx)
{
    hold(fx, fx->q1);
    tlog_device_scope s = dev_begin(fx, fx->q1, "two");
    CHECK(be->launch(handle(fx->q1), 1 * MS) == 0);
    CHECK(be->launch(handle(fx->q1), 3 * MS) == 0);
    dev_end(&s);
}

/* The end marker lands after all the scope's work, not beside its last
 * kernel (commands need only start in order). */
static void end_follows_the_work_it_closes(fixture *fx)
{
    tlog_frame *f = frame_of(fx, body_two_kernels, true);
    tlog_node_info i = {0};
    CHECK(row(f, "two", &i) != NULL);
    CHECK_NEAR(i.total_ns, 4 * MS, near(4 * MS));
    tlog_frame_release(f);
}

static void body_work_before(fixture *fx)
{
    hold(fx, fx->q1);
    CHECK(be->launch(handle(fx->q1), 4 * MS) == 0);
    timed(fx, fx->q1, "after", 1 * MS);
}

/* The begin marker waits for the work enqueued before the scope. */
static void begin_follows_the_work_before_it(fixture *fx)
{
    tlog_frame *f = frame_of(fx, body_work_before, true);
    tlog_node_info i = {0};
    CHECK(row(f, "after", &i) != NULL);
    CHECK_NEAR(i.total_ns, 1 * MS, near(1 * MS));
    tlog_frame_release(f);
}

static void body_consecutive(fixture *fx)
{
    hold(fx, fx->q1);
    timed(fx, fx->q1, "a", 2 * MS);
    timed(fx, fx->q1, "b", 2 * MS);
}

/* Consecutive scopes on one queue do not overlap: each interval belongs to
 * exactly one scope. */
static void consecutive_scopes_do_not_overlap(fixture *fx)
{
    tlog_frame *f = frame_of(fx, body_consecutive, true);
    const tlog_node *a = row(f, "a", NULL), *b = row(f, "b", NULL);
    CHECK(a && b);
    if (a && b) {
        tlog_instance ia = instance(f, a), ib = instance(f, b);
        CHECK_NEAR(ia.duration_ns, 2 * MS, near(2 * MS));
        CHECK_NEAR(ib.duration_ns, 2 * MS, near(2 * MS));
        CHECK(ib.start_ns + (int64_t)be->tolerance_ns >= ia.start_ns + (int64_t)ia.duration_ns);
    }
    tlog_frame_release(f);
}

static void body_empty(fixture *fx);

/* A device interval is placed on the host timeline where its queue ran it:
 * here an idle queue, so after the host began the scope and no later than
 * the host saw the work submitted. (An empty scope first fills the marker
 * pool, which would otherwise widen the window.) */
static void interval_is_placed_on_the_host_timeline(fixture *fx)
{
    host_begin(fx, "frame");
    body_empty(fx);
    finish(fx, fx->q1);
    host_begin(fx, "host work");
    sleep_ns(5 * MS);
    host_end(fx, "host work");
    timed(fx, fx->q1, "placed", 1 * MS);
    submit(fx->q1);
    host_begin(fx, "submitted");
    host_end(fx, "submitted");
    host_end(fx, "frame");
    finish(fx, fx->q1);
    CHECK(tlog_frame_ready(fx->log) == 1);
    tlog_frame *f = tlog_frame_pop(fx->log);
    const tlog_node *host = f ? row(f, "host work", NULL) : NULL;
    const tlog_node *dev = f ? row(f, "placed", NULL) : NULL;
    const tlog_node *sub = f ? row(f, "submitted", NULL) : NULL;
    CHECK(host && dev && sub);
    if (host && dev && sub) {
        tlog_instance ih = instance(f, host), id = instance(f, dev), is = instance(f, sub);
        /* Besides the backend's tolerance: the host clock's rate, measured
         * over 10 ms at start-up, may be off by 0.1-0.2 %, and the anchor
         * can be a few ms old. */
        int64_t tol = (int64_t)be->tolerance_ns + 100000;
        CHECK(id.start_ns >= ih.start_ns + (int64_t)ih.duration_ns - tol);
        CHECK(id.start_ns <= is.start_ns + tol);
        printf("placement: host work ends %lld ns, device begins %lld ns, submitted %lld ns\n",
               (long long)(ih.start_ns + (int64_t)ih.duration_ns), (long long)id.start_ns,
               (long long)is.start_ns);
    }
    tlog_frame_release(f);
}

/* A sync scope shows the intervals complete by its end, without waiting for
 * the rest; what ran past the frame's end shows under its own row. */
static void sync_scope_takes_only_completed_work(fixture *fx)
{
    host_begin(fx, "frame");
    hold(fx, fx->q1);
    timed(fx, fx->q1, "long", 60 * MS);
    hold(fx, fx->q2);
    timed(fx, fx->q2, "short", 1 * MS);
    submit(fx->q1);
    submit(fx->q2);
    host_begin(fx, "wait short");
    finish(fx, fx->q2);
    tlog_sync_end(fx->dev, site("wait short"));
    release(fx, fx->q1);
    host_end(fx, "frame");
    CHECK(info(fx).waits == 0);
    tlog_frame *f = tlog_frame_pop(fx->log);
    CHECK(f != NULL);
    tlog_node_info i = {0};
    const tlog_node *s = row(f, "short", &i), *l = row(f, "long", NULL);
    CHECK(s && l);
    if (s && l) {
        CHECK(strcmp(parent_name(s), "wait short") == 0);
        CHECK(strcmp(parent_name(l), "Device past frame end") == 0);
        CHECK_NEAR(i.total_ns, 1 * MS, near(1 * MS));
    }
    tlog_frame_release(f);
}

static void body_long(fixture *fx)
{
    hold(fx, fx->q1);
    timed(fx, fx->q1, "slow", 40 * MS);
}

/* A frame waits, without any blocking wait, until its device work is
 * resolved; then it comes out whole. */
static void frame_is_ready_only_when_its_work_is(fixture *fx)
{
    host_begin(fx, "frame");
    body_long(fx);
    host_end(fx, "frame");
    submit(fx->q1);
    CHECK(tlog_frame_ready(fx->log) == 0);
    CHECK(tlog_frame_pop_ready(fx->log) == NULL);
    finish(fx, fx->q1);
    CHECK(tlog_frame_ready(fx->log) == 1);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    CHECK(f != NULL);
    tlog_node_info i = {0};
    CHECK(f && row(f, "slow", &i) != NULL);
    CHECK_NEAR(i.total_ns, 40 * MS, near(40 * MS));
    CHECK(info(fx).waits == 0);
    tlog_frame_release(f);
}

static void body_empty(fixture *fx)
{
    hold(fx, fx->q1);
    tlog_device_scope s = dev_begin(fx, fx->q1, "empty");
    dev_end(&s);
}

/* An empty scope reads the calibrated offset, which is small. */
static void empty_scope_reads_the_offset(fixture *fx)
{
    int64_t offset = info(fx).empty_scope_ns;
    CHECK(offset >= 0 && offset < 100000);
    tlog_frame *f = frame_of(fx, body_empty, true);
    tlog_node_info i = {0};
    CHECK(row(f, "empty", &i) != NULL);
    CHECK_NEAR(i.total_ns, offset, be->tolerance_ns);
    tlog_frame_release(f);
}

static void body_four(fixture *fx)
{
    for (int k = 0; k < 4; k++)
        timed(fx, k % 2 ? fx->q2 : fx->q1, "step", 10000);
}

/* Markers are reused frame after frame: the pool stays small. */
static void pool_is_reused_across_frames(fixture *fx)
{
    for (int k = 0; k < 300; k++)
        tlog_frame_release(frame_of(fx, body_four, true));
    tlog_device_info i = info(fx);
    CHECK(i.resolved == 1200);
    CHECK(i.scopes_dropped == 0 && i.unresolved == 0);
    CHECK(i.pool_scopes <= 64);
}

typedef struct worker {
    fixture *fx;
    void *q;
    int index;
} worker;

static void *worker_main(void *p)
{
    worker *w = p;
    char name[32];
    snprintf(name, sizeof name, "thread %d", w->index);
    for (int k = 0; k < 40; k++) {
        tlog_log_begin(w->fx->log, site(name));
        tlog_device_scope s = tlog_device_begin(w->fx->dev, handle(w->q), site("kernel"));
        be->launch(handle(w->q), 20000);
        tlog_device_end(&s);
        tlog_log_end(w->fx->log, site(name));
        be->finish(w->q);
    }
    return NULL;
}

/* Threads each timing work on queues of their own lose nothing. */
static void threads_time_their_own_queues(fixture *fx)
{
    enum { N = 4 };
    pthread_t t[N];
    worker w[N];
    for (int k = 0; k < N; k++) {
        w[k] = (worker){fx, be->queue_create(), k};
        pthread_create(&t[k], NULL, worker_main, &w[k]);
    }
    for (int k = 0; k < N; k++)
        pthread_join(t[k], NULL);
    CHECK(tlog_sync(fx->log) == TLOG_OK);
    tlog_device_info i = info(fx);
    CHECK(i.resolved == N * 40);
    CHECK(i.unresolved == 0 && i.scopes_failed == 0);
    for (int k = 0; k < N; k++)
        be->queue_destroy(w[k].q);
}

/* Work that outlasts the forced sync's timeout shows unresolved, with a
 * clear error; the frame is not lost. */
static void forced_sync_gives_up_at_its_timeout(fixture *fx)
{
    host_begin(fx, "frame");
    timed(fx, fx->q1, "endless", 400 * MS);
    host_end(fx, "frame");
    submit(fx->q1);
    CHECK(tlog_sync(fx->log) == TLOG_ETIMEDOUT);
    CHECK(fx->errors.count > 0);
    tlog_frame *f = tlog_frame_pop(fx->log);
    CHECK(f != NULL);
    tlog_frame_info fi = {.size = sizeof fi};
    CHECK(f && tlog_frame_get_info(f, &fi) == TLOG_OK);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 1);
    tlog_frame_release(f);
}

/* ------------------------------------------------------------------------ */

typedef struct suite_case {
    const char *name;
    void (*run)(fixture *fx);
    uint64_t sync_timeout_ns;
    bool needs_parallel_queues;   /* one queue finishes while another is held */
} suite_case;

static const suite_case cases[] = {
    {"interval_times_the_work_it_encloses", interval_times_the_work_it_encloses, 0, false},
    {"work_done_in_the_frame_shows_under_its_launcher",
     work_done_in_the_frame_shows_under_its_launcher, 0, false},
    {"queue_bound_sync_scope_takes_only_its_queue", queue_bound_sync_scope_takes_only_its_queue,
     0, false},
    {"end_follows_the_work_it_closes", end_follows_the_work_it_closes, 0, false},
    {"begin_follows_the_work_before_it", begin_follows_the_work_before_it, 0, false},
    {"consecutive_scopes_do_not_overlap", consecutive_scopes_do_not_overlap, 0, false},
    {"interval_is_placed_on_the_host_timeline", interval_is_placed_on_the_host_timeline, 0, false},
    {"sync_scope_takes_only_completed_work", sync_scope_takes_only_completed_work, 0, true},
    {"frame_is_ready_only_when_its_work_is", frame_is_ready_only_when_its_work_is, 0, false},
    {"empty_scope_reads_the_offset", empty_scope_reads_the_offset, 0, false},
    {"pool_is_reused_across_frames", pool_is_reused_across_frames, 0, false},
    {"threads_time_their_own_queues", threads_time_their_own_queues, 0, false},
    {"forced_sync_gives_up_at_its_timeout", forced_sync_gives_up_at_its_timeout, 50 * MS, false},
};

int suite_run(const suite_backend *backend)
{
    be = backend;
    int run = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (be->serial_queues && cases[k].needs_parallel_queues) {
            printf("skip %s %s: its queues run in one submission order\n", be->name,
                   cases[k].name);
            continue;
        }
        int before = check_failures;
        for (int attempt = 0; attempt <= be->retries; attempt++) {
            if (attempt > 0) {
                printf("again %s %s: run %d failed\n", be->name, cases[k].name, attempt);
                check_failures = before;
            }
            fixture fx;
            int rc = fixture_open(&fx, cases[k].sync_timeout_ns);
            if (rc == TLOG_ENODEVICE) {
                printf("%s: no device, suite skipped\n", be->name);
                return SKIP;
            }
            if (rc != TLOG_OK) {
                fprintf(stderr, "%s: %s: cannot set up: %s\n", be->name, cases[k].name,
                        tlog_strerror(rc));
                check_failures++;
                continue;
            }
            cases[k].run(&fx);
            fixture_close(&fx);
            if (check_failures == before)
                break;
        }
        printf("%s %s: %s\n", check_failures == before ? "ok" : "FAIL", be->name, cases[k].name);
        run++;
    }
    if (be->close)
        be->close();
    printf("%s: %d cases, %d failed checks\n", be->name, run, check_failures);
    return check_failures ? 1 : 0;
}
