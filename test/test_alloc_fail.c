/* The allocation-failure sweep: a representative run (frames with nesting,
 * device scopes on the simulated device, a stream, the dump, the exports,
 * reading the stream back and merging) is repeated with its 1st, 2nd, ...
 * allocation failing, until a run has no allocation left to fail. In each:
 * no crash, no hang, the failure reported (a call answers TLOG_ENOMEM or the
 * error callback receives it), and the frame recorded after the failure is
 * exactly what a run without a failure records, live and read back.
 *
 * Needs a library built with -Dtest_hooks=true. TIMERLOG_ALLOC_SWEEP_STEP=K
 * fails only every K-th allocation (1, every one, is the default). */
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "device_fixture.h"

void tlog_test_fail_alloc(uint64_t n);
void tlog_test_fail_allocs_from(uint64_t n);
/* Exported for libtimerlog-mpi (lib/exchange.h). */
int tlog_summary_encode_(const tlog_summary *summary, void **data, size_t *len);
int tlog_summary_decode_(const void *data, size_t len, tlog_summary **out);
uint64_t tlog_test_alloc_count(void);
bool tlog_test_alloc_failed(void);

typedef struct run {
    sim_fixture fx;
    int enomem_returns;
    bool fired_before_after_frame;
    char *before[3];   /* the dumps of the frames before it (NULL: none) */
    char *outputs[3];  /* their dump with options and exports, when all were OK */
    char *live;     /* the dump of the frame recorded after the failure */
    char *read;     /* the same frame read back from the stream */
    char *merged;   /* the dump of every frame read back, merged */
} run;

static const char *names[] = {"Frame", "Simulation", "Filter: GPU", "GPU Sync", "Draw",
                              "Inserted", "Upload", "Tiny", "Long"};
static char stream_file[256];
static uint64_t failing;   /* the allocation made to fail */

static void note_at(run *r, int rc, const char *call)
{
    if (rc == TLOG_ENOMEM)
        r->enomem_returns++;
    else if (rc != TLOG_OK)
        fail_msg("%s answered %s (allocation %llu failed)", call, tlog_strerror(rc),
                 (unsigned long long)failing);
}

#define note(r, call) note_at(r, call, #call)

static void a_kernel(run *r, tlog_sim_queue *q, const char *name, double ms)
{
    tlog_device_scope s = tlog_device_begin(r->fx.dev, q, site_named(name));
    assert_int_equal(tlog_sim_launch(r->fx.sim, q, (uint64_t)(ms * 1e6 + 0.5)), TLOG_OK);
    int rc = tlog_device_end(&s);
    if (rc != TLOG_ENOTOPEN)   /* a scope dropped at its begin is reported there */
        note(r, rc);
}

static void a_frame(run *r, int k)
{
    sim_fixture *fx = &r->fx;
    host_begin(fx, "Frame");
    host_begin(fx, "Simulation");
    if (fx->dev)
        a_kernel(r, fx->q1, "Filter: GPU", 1.0 + k);
    sim_at(fx, sim_ms(fx) + 0.5);
    host_end(fx, "Simulation");
    host_begin(fx, "GPU Sync");
    sim_at(fx, sim_ms(fx) + 2.0 + k);
    if (fx->dev)
        tlog_sync_end(fx->dev, site_named("GPU Sync"));
    else
        host_end(fx, "GPU Sync");
    note(r, tlog_insert(fx->log, site_named("Inserted"), TLOG_KIND_EXECUTION,
                        tlog_now(fx->log) - 1000, tlog_now(fx->log)));
    host_begin(fx, "Tiny");   /* hidden by the dump's options, but kept: it holds a
                               * long execution */
    note(r, tlog_insert(fx->log, site_named("Long"), TLOG_KIND_EXECUTION,
                        tlog_now(fx->log) - 2000000, tlog_now(fx->log)));
    host_end(fx, "Tiny");
    if (fx->dev)
        a_kernel(r, fx->q2, k % 2 ? "Draw" : "Upload", 3.0);
    sim_at(fx, sim_ms(fx) + 0.25);
    host_end(fx, "Frame");
}

/* Everything a user does with a finished frame; each call may answer
 * TLOG_ENOMEM, nothing else, and what one that answers TLOG_OK writes is
 * whole: the outputs, in `out`, are compared with a run without failure. */
static void use_frame(run *r, const tlog_frame *f, char **out)
{
    FILE *fp = tmpfile();
    assert_non_null(fp);
    tlog_dump_options hide = {.size = sizeof hide, .min_percent = 10};
    int rcs[] = {tlog_dump_frame(f, fp, &hide), (fputs("\n", fp), tlog_export_chrome(&f, 1, fp)),
                 (fputs("\n", fp), tlog_export_json(&f, 1, fp)),
                 (fputs("\n", fp), tlog_export_csv(&f, 1, fp))};
    bool whole = true;
    for (size_t i = 0; i < sizeof rcs / sizeof rcs[0]; i++) {
        note(r, rcs[i]);
        whole = whole && rcs[i] == TLOG_OK;
    }
    char *text = read_back(fp);
    if (whole) {
        *out = text;
    } else {
        free(text);
        *out = NULL;
    }
}

static char *dump_or_null(run *r, const tlog_frame *f)
{
    FILE *fp = tmpfile();
    assert_non_null(fp);
    int rc = tlog_dump_frame(f, fp, NULL);
    char *s = read_back(fp);
    if (rc == TLOG_OK)
        return s;
    note(r, rc);
    free(s);
    return NULL;
}

static void record(run *r)
{
    sim_fixture *fx = &r->fx;
    tlog_sim_config sc = {.size = sizeof sc};
    assert_int_equal(tlog_sim_create(&sc, &fx->sim), TLOG_OK);
    tlog_config c = test_config(&fx->errors);
    c.clock = tlog_sim_clock;
    c.clock_user = fx->sim;
    c.stream_path = stream_file;
    c.max_frames = 64;
    c.sync_timeout_ns = 2000000000ull;
    /* A creation that answers TLOG_ENOMEM is tried again, as an
     * application would: the failure is reported, and then gone. */
    int rc;
    while ((rc = tlog_create(&c, &fx->log)) != TLOG_OK)
        note(r, rc);
    while ((rc = tlog_sim_device_create(fx->sim, fx->log, NULL, &fx->dev)) != TLOG_OK)
        note(r, rc);
    fx->q1 = tlog_sim_queue_create(fx->sim);
    fx->q2 = tlog_sim_queue_create(fx->sim);
    for (int k = 0; k < 3; k++) {
        a_frame(r, k);
        tlog_frame *f = tlog_frame_latest(fx->log);
        if (f) {
            r->before[k] = dump_or_null(r, f);
            use_frame(r, f, &r->outputs[k]);
        }
        tlog_frame_release(f);
    }
    int flushed = tlog_stream_flush(fx->log);
    assert_true(flushed == TLOG_OK || flushed == TLOG_EIO || flushed == TLOG_EINVAL);

    /* The frame after the failure. */
    r->fired_before_after_frame = tlog_test_alloc_failed();
    a_frame(r, 3);
    tlog_frame *f = tlog_frame_latest(fx->log);
    if (f)
        r->live = dump_or_null(r, f);
    tlog_frame_release(f);
    tlog_destroy(fx->log);   /* ends the file */
}

/* Reads the stream back: the last frame's dump and all frames merged.
 * Answers TLOG_ENOMEM when an allocation failed on the way. */
static int read_stream(run *r)
{
    tlog_reader *rd;
    int rc = tlog_reader_open(stream_file, &rd);
    if (rc != TLOG_OK)
        return rc;
    tlog_frame *frames[8] = {0};
    size_t n = 0;
    tlog_frame *f;
    while (n < 8 && (rc = tlog_reader_next(rd, &f)) == TLOG_OK)
        frames[n++] = f;
    if (rc == TLOG_ENOFRAME && n > 0) {
        char *last = dump_or_null(r, frames[n - 1]);
        tlog_frame *merged = NULL;
        int mrc = tlog_frame_merge((const tlog_frame *const *)frames, n, &merged);
        char *all = mrc == TLOG_OK ? dump_or_null(r, merged) : NULL;
        tlog_frame_release(merged);
        if (last && all) {
            free(r->read);
            free(r->merged);
            r->read = last;
            r->merged = all;
        } else {
            free(last);
            free(all);
            rc = TLOG_ENOMEM;
        }
        if (mrc != TLOG_OK)
            rc = mrc;
    }
    for (size_t i = 0; i < n; i++)
        tlog_frame_release(frames[i]);
    tlog_reader_close(rd);
    return rc;
}

static void run_free(run *r)
{
    tlog_sim_destroy(r->fx.sim);
    for (int k = 0; k < 3; k++) {
        free(r->before[k]);
        free(r->outputs[k]);
    }
    free(r->live);
    free(r->read);
    free(r->merged);
}

static run reference;

static bool same_text(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static int sweep_setup(void **state)
{
    (void)state;
    snprintf(stream_file, sizeof stream_file, "%s/timerlog-alloc-fail-%d.tlog",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_non_null(site_named(names[i]));   /* interned before any failure */
    tlog_test_fail_alloc(0);
    record(&reference);
    assert_int_equal(read_stream(&reference), TLOG_ENOFRAME);
    assert_int_equal(reference.fx.errors.count, 0);
    assert_int_equal(reference.enomem_returns, 0);
    assert_non_null(reference.live);
    assert_string_equal(reference.read, reference.live);
    assert_non_null(strstr(reference.live, "(E) Draw"));
    for (int k = 0; k < 3; k++) {
        assert_non_null(reference.outputs[k]);
        assert_non_null(strstr(reference.outputs[k], "(C) Tiny\n"));
    }
    return 0;
}

static int sweep_teardown(void **state)
{
    (void)state;
    run_free(&reference);
    unlink(stream_file);
    return 0;
}

/* Fails the test, showing both texts in full (cmocka cuts its messages). */
static void differs(uint64_t n, const char *what, const char *got, const char *expected)
{
    fprintf(stderr, "%s:\n", what);
    fputs(got ? got : "(none)", stderr);
    fputs("\nexpected:\n", stderr);
    fputs(expected, stderr);
    fail_msg("allocation %llu: %s", (unsigned long long)n, what);
}

/* Fails allocation n of a run; false when the run had fewer. */
static bool run_failing(uint64_t n)
{
    run r = {0};
    failing = n;
    tlog_test_fail_alloc(n);
    record(&r);
    bool fired_in_recording = tlog_test_alloc_failed();
    int rc = read_stream(&r);
    if (!tlog_test_alloc_failed()) {
        tlog_test_fail_alloc(0);
        run_free(&r);
        return false;
    }
    /* A failure the library recovers from loses nothing and needs no
     * report; one that changes what the user sees must be reported. */
    int reported = r.enomem_returns + count_code(&r.fx.errors, TLOG_ENOMEM) +
                   (rc == TLOG_ENOMEM);
    bool same = same_text(r.live, reference.live) && same_text(r.read, reference.read) &&
                same_text(r.merged, reference.merged);
    for (int k = 0; k < 3; k++)
        same = same && same_text(r.before[k], reference.before[k]) &&
               same_text(r.outputs[k], reference.outputs[k]);
    for (int k = 0; k < 3; k++)
        if (reported == 0 && r.outputs[k] && !same_text(r.outputs[k], reference.outputs[k]))
            differs(n, "a dump or an export answered TLOG_OK but differs", r.outputs[k],
                    reference.outputs[k]);
    if (!same && reported == 0) {
        for (int k = 0; k < 3; k++)
            if (!same_text(r.before[k], reference.before[k]))
                print_message("frame %d:\n%s\nexpected:\n%s\n", k + 1,
                              r.before[k] ? r.before[k] : "(none)", reference.before[k]);
        fail_msg("allocation %llu failed, changed the frames and was not reported",
                 (unsigned long long)n);
    }
    if (r.fired_before_after_frame) {
        if (!same_text(r.live, reference.live))
            differs(n, "the frame after the failure differs", r.live, reference.live);
    }
    if (!fired_in_recording) {
        /* Failed while reading: the file is whole, and a second reading
         * gives it all. */
        if (rc == TLOG_ENOMEM)
            assert_int_equal(read_stream(&r), TLOG_ENOFRAME);
        assert_string_equal(r.read, reference.read);
        assert_string_equal(r.merged, reference.merged);
    } else if (r.fired_before_after_frame) {
        /* The stream went on after the failure: the last frame is there. */
        if (!same_text(r.read, reference.read))
            differs(n, "the stream's last frame differs", r.read, reference.read);
    }
    tlog_test_fail_alloc(0);
    run_free(&r);
    return true;
}

static void every_allocation_may_fail(void **state)
{
    (void)state;
    const char *s = getenv("TIMERLOG_ALLOC_SWEEP_STEP");
    uint64_t step = s && atoi(s) > 0 ? (uint64_t)atoi(s) : 1;
    uint64_t n = 1;
    while (run_failing(n))
        n += step;
    print_message("swept %llu allocations\n", (unsigned long long)n - 1);
    assert_true(n > 50);
}

static void *frames_on_a_new_thread(void *arg)
{
    tlog_log *log = arg;
    tlog_test_fail_alloc(1);   /* this thread's state in the log */
    for (int k = 0; k < 2; k++) {   /* the first is lost, the second whole */
        begin_at(log, "Frame", 10.0 * k);
        begin_at(log, "Child", 10.0 * k + 1);
        end_at(log, "Child", 10.0 * k + 2);
        end_at(log, "Frame", 10.0 * k + 3);
    }
    tlog_test_fail_alloc(0);
    return NULL;
}

/* A thread whose state cannot be made loses its frame whole: one report,
 * and no child of the frame becomes a frame of its own. */
static void lost_thread_state_drops_the_frame_with_its_children(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    tlog_log *log = make_log(&c);
    assert_non_null(site_named("Frame"));   /* interned before any failure */
    assert_non_null(site_named("Child"));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, frames_on_a_new_thread, log), 0);
    pthread_join(th, NULL);
    assert_int_equal(errors.count, 1);
    assert_int_equal(count_code(&errors, TLOG_ENOMEM), 1);
    assert_non_null(strstr(errors.last, "\"Frame\" dropped with all it holds"));
    assert_int_equal(tlog_frame_count(log), 1);
    tlog_frame *f = tlog_frame_pop(log);
    assert_string_equal(info_of(tlog_frame_root(f)).name, "Frame");
    assert_non_null(child_named(tlog_frame_root(f), "Child"));
    tlog_frame_release(f);
    tlog_stats st = stats_of(log);
    assert_int_equal(st.unmatched_ends, 0);
    assert_int_equal(st.alloc_failures, 2);   /* the frame and its child */
    tlog_destroy(log);
}

/* Record memory running out in the middle of a frame is said as such, once:
 * the scopes dropped after it are not blamed on the thread budget. */
static void memory_running_out_mid_frame_is_said_as_such(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    tlog_log *log = make_log(&c);
    assert_non_null(site_named("Frame"));   /* interned before any failure */
    assert_non_null(site_named("Step"));
    begin_at(log, "Frame", 0);
    tlog_test_fail_allocs_from(1);   /* the frame's next chunk, and all after */
    for (int k = 0; k < 20000; k++) {
        tlog_log_begin(log, site_named("Step"));
        tlog_log_end(log, site_named("Step"));
    }
    end_at(log, "Frame", 1);
    bool failed = tlog_test_alloc_failed();
    tlog_test_fail_alloc(0);
    assert_true(failed);
    assert_true(count_code(&errors, TLOG_ENOMEM) >= 1);
    assert_int_equal(count_code(&errors, TLOG_EFULL), 0);
    assert_true(stats_of(log).scopes_dropped > 0);
    tlog_destroy(log);
}

/* Adopted work lost for lack of memory when the adoption ends counts its
 * scopes once: those it recorded and its row, not again those it had
 * dropped already. */
static void lost_adopted_work_counts_each_scope_once(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.thread_budget = 64;   /* room for a few records */
    tlog_log *log = make_log(&c);
    assert_non_null(site_named("Frame"));
    assert_non_null(site_named("Step"));
    begin_at(log, "Frame", 0);
    tlog_token token = tlog_handoff(log);
    assert_int_equal(tlog_adopt_begin(&token), TLOG_OK);
    for (int k = 0; k < 6; k++)
        tlog_log_begin(log, site_named("Step"));
    for (int k = 0; k < 6; k++)
        tlog_log_end(log, site_named("Step"));
    tlog_stats before = stats_of(log);
    assert_true(before.scopes_dropped > 0 && before.scopes_dropped < 6);
    uint64_t recorded = 6 - before.scopes_dropped;
    tlog_test_fail_allocs_from(1);
    int rc = tlog_adopt_end(&token);
    tlog_test_fail_alloc(0);
    assert_int_equal(rc, TLOG_ENOMEM);
    assert_int_equal(stats_of(log).scopes_dropped, before.scopes_dropped + recorded + 1);
    end_at(log, "Frame", 1);
    tlog_destroy(log);
}

typedef struct adopt_sweep {
    tlog_log *log;
    tlog_token token;
    uint64_t from;   /* allocations fail from this one on */
    int rc;          /* of the adoption */
    bool failed;     /* an allocation failed */
    int end_rc, insert_rc;
} adopt_sweep;

/* On a new thread: adopts the token with allocations failing from
 * w->from on; after a failed adoption, records a frame of its own and
 * hands work to it. The caller checks what came of it. */
static void *adopt_without_memory(void *arg)
{
    adopt_sweep *w = arg;
    tlog_test_fail_allocs_from(w->from);
    w->rc = tlog_adopt_begin(&w->token);
    w->failed = tlog_test_alloc_failed();
    tlog_test_fail_alloc(0);
    if (w->rc == TLOG_OK) {
        w->end_rc = tlog_adopt_end(&w->token);
        return NULL;
    }
    begin_at(w->log, "Own", 100);
    begin_at(w->log, "Child", 101);
    end_at(w->log, "Child", 103);
    tlog_token own = tlog_handoff(w->log);
    w->insert_rc = tlog_insert_to(&own, site_named("Sent"), TLOG_KIND_EXECUTION,
                                  (tlog_ticks)(103.5 * NS_PER_MS), 104 * NS_PER_MS);
    end_at(w->log, "Own", 104);
    return NULL;
}

static void check_own_frame(tlog_log *log)
{
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    const tlog_node *root = tlog_frame_root(f);
    assert_string_equal(info_of(root).name, "Own");
    assert_int_equal(info_of(root).total_ns, 4 * NS_PER_MS);
    assert_int_equal(info_of(child_named(root, "Child")).total_ns, 2 * NS_PER_MS);
    assert_non_null(child_named(root, "Sent"));
    tlog_frame_release(f);
}

/* An adoption that fails for lack of memory on a thread with nothing open
 * leaves it as it was: its next begin starts a frame. Each allocation the
 * adoption makes on a new thread fails in turn, with all after it. */
static void failed_adoption_leaves_the_thread_ready_for_a_frame(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.pool_bytes = 1;   /* keeps no chunk: every one is allocated */
    tlog_log *log = make_log(&c);
    assert_non_null(site_named("Own"));   /* interned before any failure */
    assert_non_null(site_named("Child"));
    assert_non_null(site_named("Sent"));
    begin_at(log, "Frame", 0);
    tlog_token token = tlog_handoff(log);
    int failures = 0;
    for (uint64_t n = 1;; n++) {
        adopt_sweep w = {log, token, n, 0, false, 0, 0};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, adopt_without_memory, &w), 0);
        pthread_join(th, NULL);
        if (w.rc == TLOG_OK) {
            assert_int_equal(w.end_rc, TLOG_OK);
            if (!w.failed)
                break;
            continue;
        }
        assert_int_equal(w.rc, TLOG_ENOMEM);
        assert_int_equal(w.insert_rc, TLOG_OK);
        check_own_frame(log);
        failures++;
    }
    end_at(log, "Frame", 200);
    assert_true(failures >= 3);   /* the state, its stack, the first chunk */
    tlog_destroy(log);
}

/* A frame that cannot be resolved for lack of memory is not "no frame":
 * tlog_dump says TLOG_ENOMEM, and the frame is there for the next call. */
static void dump_without_memory_says_so_and_keeps_the_frame(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    begin_at(log, "Child", 1);
    end_at(log, "Child", 2);
    end_at(log, "Frame", 3);
    FILE *sink = fopen("/dev/null", "w");
    tlog_test_fail_alloc(1);   /* the first allocation of the resolver */
    assert_int_equal(tlog_dump(log, sink), TLOG_ENOMEM);
    assert_true(tlog_test_alloc_failed());
    assert_int_equal(count_code(&errors, TLOG_ENOMEM), 1);
    assert_non_null(strstr(errors.last, "a later read will try again"));
    assert_int_equal(tlog_dump(log, sink), TLOG_OK);
    tlog_test_fail_alloc(0);
    fclose(sink);
    tlog_destroy(log);
}

/* A JSON, CSV or Chrome trace export that runs out of memory says so and
 * has written nothing: no half file that parses as less than it should, or
 * not at all. */
static void exports_without_memory_write_nothing(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    tlog_log *log = make_log(&c);
    tlog_frame *frames[3];
    for (int k = 0; k < 3; k++) {
        double t = 10.0 * k;
        begin_at(log, "Frame", t);
        for (int j = 0; j <= k; j++) {
            begin_at(log, "Child", t + 1 + j);
            end_at(log, "Child", t + 1.5 + j);
        }
        const tlog_ticks ms = 1000000;   /* across a Child's end: a lane of its own */
        assert_int_equal(tlog_insert(log, site_named("Across"), TLOG_KIND_CONTROL,
                                     (tlog_ticks)((t + 1.2) * ms), (tlog_ticks)((t + 2.2) * ms)),
                         TLOG_OK);
        end_at(log, "Frame", t + 5);
        frames[k] = tlog_frame_pop(log);
        assert_non_null(frames[k]);
    }
    const tlog_frame *const *all = (const tlog_frame *const *)frames;
    for (int e = 0; e < 3; e++) {
        int rc;
        for (uint64_t n = 1;; n++) {
            FILE *fp = tmpfile();
            assert_non_null(fp);
            tlog_test_fail_alloc(n);
            rc = e == 0   ? tlog_export_json(all, 3, fp)
                 : e == 1 ? tlog_export_csv(all, 3, fp) : tlog_export_chrome(all, 3, fp);
            bool failed = tlog_test_alloc_failed();
            tlog_test_fail_alloc(0);
            long written = ftell(fp);
            fclose(fp);
            if (!failed) {
                assert_int_equal(rc, TLOG_OK);
                break;
            }
            assert_int_equal(rc, TLOG_ENOMEM);
            if (written != 0)
                fail_msg("export %d: allocation %llu failed after %ld bytes were written", e,
                         (unsigned long long)n, written);
        }
    }
    for (int k = 0; k < 3; k++)
        tlog_frame_release(frames[k]);
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

/* Frames that make a summary grow every way it can: new rows, a row whose
 * self time parts from its total, a count that changes, a second group, a
 * hitch over the budget and one over the quantile of recent frames. */
static void stats_frame(tlog_log *log, int k)
{
    uint64_t t = 100000u * (uint64_t)k;
    at_ms(0);
    test_now = t;
    const char *root = k == 3 ? "Load" : "Frame";
    tlog_log_begin(log, site_named(root));
    for (int i = 0; i < (k == 5 ? 3 : 1); i++) {
        tlog_log_begin(log, site_named(k == 3 ? "Read" : "Work"));
        test_now += k == 4 ? 50000 : 100 + 100u * (uint64_t)k;
        if (k == 1) {
            tlog_log_begin(log, site_named("Inner"));
            test_now += 50;
            tlog_log_end(log, site_named("Inner"));
        }
        tlog_log_end(log, site_named(k == 3 ? "Read" : "Work"));
    }
    if (k == 2) {
        tlog_log_begin(log, site_named("New"));
        test_now += 10;
        tlog_log_end(log, site_named("New"));
    }
    test_now += 5;
    tlog_log_end(log, site_named(root));
}

enum { STATS_FRAMES = 7 };

static const tlog_summary_config stats_cfg = {.size = sizeof stats_cfg, .hitch_ns = 20000,
                                              .hitch_quantile = 0.5, .hitch_window = 2};

static int walk_stats_node(void *user, const tlog_node *node, const tlog_node_info *info,
                           const tlog_stat_info *stats);

/* Every output of a summary, each call tried again after TLOG_ENOMEM, which
 * must have written nothing. */
static char *stats_outputs(const tlog_summary *s, tlog_frame *const *frames, int *enomem)
{
    FILE *all = tmpfile();
    assert_non_null(all);
    tlog_dump_options cols = {.size = sizeof cols, .summary = s};
    for (int k = 0; k < 8; k++) {
        int rc;
        do {
            FILE *fp = tmpfile();
            assert_non_null(fp);
            switch (k) {
            case 0: rc = tlog_summary_dump(s, fp, NULL); break;
            case 1: rc = tlog_summary_export_csv(s, fp); break;
            case 2: rc = tlog_summary_export_json(s, fp); break;
            case 3: rc = tlog_summary_export_hitches_csv(s, fp); break;
            case 4: rc = tlog_summary_dump_hitch(s, 0, fp, NULL); break;
            case 5: rc = tlog_dump_frame(frames[1], fp, &cols); break;
            case 6: rc = tlog_frame_walk_stats(frames[1], s, walk_stats_node, fp); break;
            default:
                fprintf(fp, "%d\n", tlog_summary_find(s, frames[2], tlog_node_first_child(
                                                         tlog_frame_root(frames[2]))) != NULL);
                rc = TLOG_OK;
            }
            if (rc == TLOG_ENOMEM) {
                assert_int_equal(ftell(fp), 0);
                ++*enomem;
            } else {
                assert_int_equal(rc, TLOG_OK);
                char *text = read_back(fp);
                fputs(text, all);
                free(text);
                fp = NULL;
            }
            if (fp)
                fclose(fp);
        } while (rc == TLOG_ENOMEM);
    }
    return read_back(all);
}

/* A summary made, fed every frame, merged into another and written out
 * while allocation `n` fails (0: none): each call that answers TLOG_ENOMEM
 * is tried again, as an application would, and must have changed nothing.
 * Returns what the outputs were; *failed says whether allocation n came. */
static char *stats_run(tlog_frame *const *frames, uint64_t n, bool *failed, int *enomem)
{
    tlog_test_fail_alloc(n);
    tlog_summary *s = NULL, *m = NULL;
    int rc;
    while ((rc = tlog_summary_create(&stats_cfg, &s)) == TLOG_ENOMEM)
        ++*enomem;
    assert_int_equal(rc, TLOG_OK);
    for (int k = 0; k < STATS_FRAMES; k++) {
        while ((rc = tlog_summary_add(s, frames[k])) == TLOG_ENOMEM)
            ++*enomem;
        assert_int_equal(rc, TLOG_OK);
    }
    while ((rc = tlog_summary_create(&stats_cfg, &m)) == TLOG_ENOMEM)
        ++*enomem;
    while ((rc = tlog_summary_merge(m, s)) == TLOG_ENOMEM)
        ++*enomem;
    assert_int_equal(rc, TLOG_OK);
    /* Reduced with a rank that has none, and passed through bytes. */
    const tlog_summary *ranks[] = {s, NULL, m};
    tlog_summary *reduced = NULL, *back = NULL;
    while ((rc = tlog_summary_reduce(ranks, 3, &reduced)) == TLOG_ENOMEM)
        ++*enomem;
    assert_int_equal(rc, TLOG_OK);
    void *bytes = NULL;
    size_t len = 0;
    while ((rc = tlog_summary_encode_(s, &bytes, &len)) == TLOG_ENOMEM)
        ++*enomem;
    assert_int_equal(rc, TLOG_OK);
    while ((rc = tlog_summary_decode_(bytes, len, &back)) == TLOG_ENOMEM)
        ++*enomem;
    assert_int_equal(rc, TLOG_OK);
    free(bytes);
    FILE *more = tmpfile();
    assert_non_null(more);
    while ((rc = tlog_summary_export_csv(reduced, more)) == TLOG_ENOMEM)
        ++*enomem;
    while ((rc = tlog_summary_export_csv(back, more)) == TLOG_ENOMEM)
        ++*enomem;
    char *extra = read_back(more);
    tlog_summary_destroy(reduced);
    tlog_summary_destroy(back);
    char *out = stats_outputs(m, frames, enomem);
    char *own = stats_outputs(s, frames, enomem);
    /* A summary merged into is the summary it was merged from, hitches
     * and all, but for the median frame each hitch was compared with. */
    assert_non_null(strstr(own, "# hitches: "));
    tlog_summary_destroy(s);
    tlog_summary_destroy(m);
    *failed = tlog_test_alloc_failed();
    tlog_test_fail_alloc(0);
    size_t a = strlen(out), b = strlen(own);
    char *all = realloc(out, a + b + strlen(extra) + 1);
    strcpy(all + a, own);
    strcpy(all + a + b, extra);
    free(own);
    free(extra);
    return all;
}

static int walk_stats_node(void *user, const tlog_node *node, const tlog_node_info *info,
                           const tlog_stat_info *stats)
{
    (void)node;
    fprintf(user, "%s %llu\n", info->name,
            stats ? (unsigned long long)stats->total_ns.median : 0ull);
    return 0;
}

static void statistics_survive_every_allocation_failure(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.max_frames = STATS_FRAMES;
    tlog_log *log = make_log(&c);
    const char *all_names[] = {"Frame", "Work", "Inner", "New", "Load", "Read"};
    for (size_t i = 0; i < sizeof all_names / sizeof all_names[0]; i++)
        assert_non_null(site_named(all_names[i]));
    tlog_frame *frames[STATS_FRAMES];
    for (int k = 0; k < STATS_FRAMES; k++) {
        stats_frame(log, k);
        frames[k] = tlog_frame_pop(log);
        assert_non_null(frames[k]);
    }
    bool failed;
    int enomem = 0;
    char *reference = stats_run(frames, 0, &failed, &enomem);
    assert_false(failed);
    assert_int_equal(enomem, 0);
    assert_non_null(strstr(reference, "# hitches: 3 seen, the last 3 kept"));
    uint64_t n = 1;
    for (;; n++) {
        enomem = 0;
        char *got = stats_run(frames, n, &failed, &enomem);
        if (!failed) {
            free(got);
            break;
        }
        if (strcmp(got, reference) != 0)
            differs(n, "statistics after a failure taken back", got, reference);
        assert_int_equal(enomem, 1);   /* the failure was answered, once */
        free(got);
    }
    print_message("swept %llu allocations of statistics\n", (unsigned long long)n - 1);
    assert_true(n > 20);
    free(reference);
    for (int k = 0; k < STATS_FRAMES; k++)
        tlog_frame_release(frames[k]);
    tlog_destroy(log);
    assert_int_equal(errors.count, 0);
}

static uint32_t le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* `s` passed through bytes with every row's call site taken away, as rows
 * of frames read from files without sites have none (the layout is
 * lib/summary_codec.c's). */
static tlog_summary *without_sites(const tlog_summary *s)
{
    uint8_t *d;
    size_t n, p = 40;
    assert_int_equal(tlog_summary_encode_(s, (void **)&d, &n), TLOG_OK);
    for (uint32_t g = 0, ngroups = le32(d + 32); g < ngroups; g++) {
        p += 4 + le32(d + p);
        uint32_t rows = le32(d + p);
        p += 4;
        for (uint32_t r = 0; r < rows; r++) {
            p += 7;
            p += 4 + le32(d + p);
            if (d[p++])
                p += 4 + le32(d + p);
            memset(d + p, 0, 8);
            p += 16;
            for (int q = 0; q < 3; q++)
                p += 28 + 8u * (d[p + 26] | (unsigned)d[p + 27] << 8);
        }
    }
    assert_int_equal(p, n);
    tlog_summary *out = NULL;
    assert_int_equal(tlog_summary_decode_(d, n, &out), TLOG_OK);
    free(d);
    return out;
}

static char *summary_json(const tlog_summary *s)
{
    FILE *fp = tmpfile();
    assert_non_null(fp);
    assert_int_equal(tlog_summary_export_json(s, fp), TLOG_OK);
    return read_back(fp);
}

/* A merge that runs out of memory leaves the summary merged into as it
 * was, to the call site a row without one would have taken. */
static void a_failed_merge_leaves_the_summary_as_it_was(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = STATS_FRAMES;
    tlog_log *log = make_log(&c);
    tlog_summary *base = NULL, *from = NULL;
    assert_int_equal(tlog_summary_create(NULL, &base), TLOG_OK);
    assert_int_equal(tlog_summary_create(NULL, &from), TLOG_OK);
    for (int k = 0; k < STATS_FRAMES; k++) {
        stats_frame(log, k);
        tlog_frame *f = tlog_frame_pop(log);
        assert_non_null(f);
        if (k < 2)
            assert_int_equal(tlog_summary_add(base, f), TLOG_OK);
        assert_int_equal(tlog_summary_add(from, f), TLOG_OK);
        tlog_frame_release(f);
    }
    uint64_t n = 1;
    for (;; n++) {
        tlog_summary *into = without_sites(base);
        char *before = summary_json(into);
        tlog_test_fail_alloc(n);
        int rc = tlog_summary_merge(into, from);
        bool failed = tlog_test_alloc_failed();
        tlog_test_fail_alloc(0);
        char *after = summary_json(into);
        tlog_stat_info root = {.size = sizeof root};
        assert_int_equal(tlog_stat_row_get_info(tlog_summary_root(into, 0), &root), TLOG_OK);
        tlog_summary_destroy(into);
        if (!failed) {
            assert_int_equal(rc, TLOG_OK);
            assert_int_equal(root.site_id, tlog_site_id(site_named("Frame")));
            free(before);
            free(after);
            break;
        }
        assert_int_equal(root.site_id, 0);
        assert_int_equal(rc, TLOG_ENOMEM);
        if (strcmp(before, after) != 0)
            differs(n, "a summary after a failed merge", after, before);
        free(before);
        free(after);
    }
    print_message("swept %llu allocations of a merge\n", (unsigned long long)n - 1);
    assert_true(n > 5);
    tlog_summary_destroy(base);
    tlog_summary_destroy(from);
    tlog_destroy(log);
}

/* A log that keeps statistics, recording while allocation n fails: a
 * frame the statistics could not take is reported; without a report, they
 * are those of every frame. */
static void log_statistics_report_what_they_lose(void **state)
{
    (void)state;
    char *reference = NULL;
    for (uint64_t n = 0;; n++) {
        collected_errors errors = {0};
        tlog_config c = test_config(&errors);
        c.flags |= TLOG_CONFIG_STATS;
        c.stats = stats_cfg;
        c.max_frames = 2;
        tlog_log *log = NULL;
        assert_int_equal(tlog_create(&c, &log), TLOG_OK);
        tlog_test_fail_alloc(n);
        for (int k = 0; k < STATS_FRAMES; k++)
            stats_frame(log, k);
        bool failed = tlog_test_alloc_failed();
        tlog_test_fail_alloc(0);
        tlog_summary *s = NULL;
        assert_int_equal(tlog_log_summary(log, &s), TLOG_OK);
        FILE *fp = tmpfile();
        assert_int_equal(tlog_summary_export_csv(s, fp), TLOG_OK);
        char *csv = read_back(fp);
        tlog_summary_destroy(s);
        tlog_destroy(log);
        if (n == 0) {
            reference = csv;
            continue;
        }
        if (!failed) {
            free(csv);
            print_message("swept %llu allocations of a log keeping statistics\n",
                          (unsigned long long)n - 1);
            break;
        }
        if (strcmp(csv, reference) != 0 && count_code(&errors, TLOG_ENOMEM) == 0)
            differs(n, "statistics lost a frame without a report", csv, reference);
        free(csv);
    }
    free(reference);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lost_thread_state_drops_the_frame_with_its_children),
        cmocka_unit_test(memory_running_out_mid_frame_is_said_as_such),
        cmocka_unit_test(lost_adopted_work_counts_each_scope_once),
        cmocka_unit_test(dump_without_memory_says_so_and_keeps_the_frame),
        cmocka_unit_test(exports_without_memory_write_nothing),
        cmocka_unit_test(failed_adoption_leaves_the_thread_ready_for_a_frame),
        cmocka_unit_test_setup_teardown(every_allocation_may_fail, sweep_setup, sweep_teardown),
        cmocka_unit_test(statistics_survive_every_allocation_failure),
        cmocka_unit_test(log_statistics_report_what_they_lose),
        cmocka_unit_test(a_failed_merge_leaves_the_summary_as_it_was),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
