/* Many threads recording at once: every scope arrives, in its own thread's
 * tree or under the scope it was handed to. */
#include <pthread.h>

#include "common.h"

#define THREADS 4
#define SCOPES 100000

typedef struct shared {
    tlog_log *log;
    tlog_token token;
    int index;
    int adopt_rc, release_rc; /* checked on the main thread */
} shared;

static void record_scopes(tlog_log *log, const char *name)
{
    const tlog_site *s = site_named(name);
    for (int i = 0; i < SCOPES; i++) {
        tlog_log_begin(log, s);
        tlog_log_end(log, s);
    }
}

static void *own_frame(void *arg)
{
    shared *sh = arg;
    const tlog_site *frame = site_named("Thread frame");
    tlog_log_begin(sh->log, frame);
    record_scopes(sh->log, "Work");
    tlog_log_end(sh->log, frame);
    return NULL;
}

static void each_thread_keeps_all_its_scopes(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = THREADS};
    tlog_log *log = make_log(&c);
    pthread_t t[THREADS];
    shared sh[THREADS];
    for (int i = 0; i < THREADS; i++) {
        sh[i] = (shared){log, {0}, i, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, own_frame, &sh[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);

    uint32_t seen_threads = 0;
    for (int i = 0; i < THREADS; i++) {
        tlog_frame *f = tlog_frame_pop(log);
        assert_non_null(f);
        const tlog_node *root = tlog_frame_root(f);
        assert_int_equal(child_count(root), 1);
        assert_int_equal(info_of(child_named(root, "Work")).count, SCOPES);
        tlog_frame_info fi = {.size = sizeof fi};
        tlog_frame_get_info(f, &fi);
        assert_int_equal(fi.instances, SCOPES + 1);
        seen_threads |= 1u << fi.thread;
        tlog_frame_release(f);
    }
    assert_int_equal(__builtin_popcount(seen_threads), THREADS);
    tlog_stats s = stats_of(log);
    assert_int_equal(s.scopes_dropped + s.frames_dropped + s.alloc_failures, 0);
    tlog_destroy(log);
}

static void *adopted_work(void *arg)
{
    shared *sh = arg;
    char name[32];
    snprintf(name, sizeof name, "Worker %d", sh->index + 1);
    tlog_thread_name(name);
    sh->adopt_rc = tlog_adopt_begin(&sh->token);
    record_scopes(sh->log, "Item");
    sh->release_rc = tlog_adopt_end(&sh->token);
    return NULL;
}

static void workers_hand_all_their_scopes_to_the_parent(void **state)
{
    (void)state;
    /* The frame holds every worker's scopes: give it room for them. */
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .thread_budget = (THREADS * (SCOPES + 1) + 16) * 32};
    tlog_log *log = make_log(&c);
    const tlog_site *frame = site_named("Frame"), *par = site_named("Parallel");
    tlog_log_begin(log, frame);
    tlog_log_begin(log, par);
    pthread_t t[THREADS];
    shared sh[THREADS];
    for (int i = 0; i < THREADS; i++) {
        sh[i] = (shared){log, tlog_handoff(log), i, -1, -1};
        assert_int_equal(pthread_create(&t[i], NULL, adopted_work, &sh[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(sh[i].adopt_rc, TLOG_OK);
        assert_int_equal(sh[i].release_rc, TLOG_OK);
    }
    tlog_log_end(log, par);
    tlog_log_end(log, frame);

    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    const tlog_node *p = child_named(tlog_frame_root(f), "Parallel");
    assert_int_equal(child_count(p), THREADS);
    for (int i = 0; i < THREADS; i++) {
        char name[32];
        snprintf(name, sizeof name, "Worker %d", i + 1);
        const tlog_node *row = child_named(p, name);
        assert_non_null(row);
        assert_int_equal(info_of(row).kind, TLOG_KIND_EXECUTION);
        assert_int_equal(info_of(child_named(row, "Item")).count, SCOPES);
    }
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.instances, 2 + THREADS * (SCOPES + 1));
    tlog_frame_release(f);
    tlog_stats s = stats_of(log);
    assert_int_equal(s.scopes_dropped + s.late_work + s.alloc_failures, 0);
    tlog_destroy(log);
}

/* A thread that records into a log and exits while the log is destroyed;
 * and a long-lived thread whose logs are destroyed under it. */
static void *record_and_leave(void *arg)
{
    shared *sh = arg;
    const tlog_site *s = site_named("Short");
    tlog_log_begin(sh->log, s);
    tlog_log_begin(sh->log, site_named("Left open"));
    __atomic_store_n(&sh->index, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void destroy_races_cleanly_with_exiting_threads(void **state)
{
    (void)state;
    for (int round = 0; round < 50; round++) {
        tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                         .on_error = collect_error,
                         .error_user = &(collected_errors){0}};
        shared sh = {make_log(&c), {0}, 0, 0, 0};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, record_and_leave, &sh), 0);
        while (!__atomic_load_n(&sh.index, __ATOMIC_ACQUIRE))
            ;
        tlog_destroy(sh.log); /* the thread may be exiting right now */
        pthread_join(t, NULL);
    }
}

/* An error callback may call the library, even while a thread exits. */
static tlog_log *victim;

static void destroy_victim(void *user, const tlog_error *e)
{
    (void)user;
    if (e->code == TLOG_ETHREADEXIT && victim) {
        tlog_stats s = {.size = sizeof s};
        tlog_get_stats(NULL, &s);
        tlog_destroy(victim);
        victim = NULL;
    }
}

static void error_callback_may_call_the_library_at_thread_exit(void **state)
{
    (void)state;
    tlog_config vc = {.size = sizeof vc, .flags = TLOG_CONFIG_IGNORE_ENV};
    victim = make_log(&vc);
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .on_error = destroy_victim};
    shared sh = {make_log(&c), {0}, 0, 0, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, record_and_leave, &sh), 0);
    assert_int_equal(pthread_join(t, NULL), 0); /* a deadlock would hang here */
    assert_null(victim);
    assert_int_equal(tlog_frame_count(sh.log), 1);
    tlog_destroy(sh.log);
}

typedef struct relay {
    tlog_log *volatile log;
    int turn;   /* 1: the worker records, 2: main destroys, 0: stop */
} relay;

static void *long_lived(void *arg)
{
    relay *r = arg;
    for (;;) {
        int turn;
        while ((turn = __atomic_load_n(&r->turn, __ATOMIC_ACQUIRE)) == 2)
            ;
        if (turn == 0)
            return NULL;
        tlog_log *log = __atomic_load_n(&r->log, __ATOMIC_ACQUIRE);
        const tlog_site *s = site_named("Frame");
        tlog_log_begin(log, s);
        tlog_log_end(log, s);
        __atomic_store_n(&r->turn, 2, __ATOMIC_RELEASE);
    }
}

static void threads_outlive_destroyed_logs(void **state)
{
    (void)state;
    relay r = {NULL, 2};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, long_lived, &r), 0);
    for (int i = 0; i < 200; i++) {
        tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .max_depth = 4096};
        tlog_log *log = make_log(&c);
        __atomic_store_n(&r.log, log, __ATOMIC_RELEASE);
        __atomic_store_n(&r.turn, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&r.turn, __ATOMIC_ACQUIRE) != 2)
            ;
        assert_int_equal(tlog_frame_count(log), 1);
        tlog_destroy(log);
    }
    __atomic_store_n(&r.turn, 0, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
}

typedef struct orphan {
    tlog_log *log;
    pthread_barrier_t turns;
} orphan;

static void *record_before_and_after(void *arg)
{
    orphan *o = arg;
    const tlog_site *s = site_named("Before");
    tlog_log_begin(o->log, s);
    tlog_log_end(o->log, s);
    pthread_barrier_wait(&o->turns);   /* main destroys the log */
    pthread_barrier_wait(&o->turns);
    s = site_named("After destroy");
    tlog_log_begin(NULL, s);
    tlog_log_end(NULL, s);
    return NULL;
}

/* A thread whose log another thread destroyed still holds its state there
 * until it next looks: a scope it then records into the default log (NULL)
 * goes there, not to that state. */
static void a_destroyed_logs_thread_records_into_the_default_log(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    orphan o = {make_log(&c), {{0}}};
    pthread_barrier_init(&o.turns, NULL, 2);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, record_before_and_after, &o), 0);
    pthread_barrier_wait(&o.turns);
    tlog_destroy(o.log);
    pthread_barrier_wait(&o.turns);
    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_barrier_destroy(&o.turns);
    tlog_frame *f = tlog_frame_latest(NULL);
    assert_non_null(f);
    assert_string_equal(info_of(tlog_frame_root(f)).name, "After destroy");
    tlog_frame_release(f);
}

/* ---- frames belong to their thread ---- */

typedef struct loader {
    tlog_log *log;
    int frames;
    uint32_t id;
} loader;

/* A side thread's frames, titled "Load chunk", with a manual clock. */
static void *load_chunks(void *p)
{
    loader *l = p;
    tlog_thread_name("Loader");
    for (int i = 0; i < l->frames; i++) {
        begin_at(l->log, "Load chunk", i);
        end_at(l->log, "Load chunk", i + 0.5);
    }
    l->id = tlog_thread_id(l->log);
    return NULL;
}

static void run_loader(loader *l)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, load_chunks, l), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static char *dump_text(tlog_log *log, int *rc)
{
    FILE *fp = tmpfile();
    assert_non_null(fp);
    *rc = tlog_dump(log, fp);
    return read_back(fp);
}

/* tlog_dump prints the calling thread's newest frame, whatever another
 * thread completed since; a thread without frames gets TLOG_ENOFRAME. */
static void dump_prints_the_calling_threads_frame(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    int rc;
    char *none = dump_text(log, &rc);
    assert_int_equal(rc, TLOG_ENOFRAME);
    free(none);
    assert_int_equal(tlog_thread_id(log), 0);   /* never recorded here */
    loader l = {log, 3, 0};
    run_loader(&l);
    none = dump_text(log, &rc);
    assert_int_equal(rc, TLOG_ENOFRAME);
    free(none);
    for (int frame = 0; frame < 5; frame++) {
        begin_at(log, "Frame", 10 * frame);
        end_at(log, "Frame", 10 * frame + 1 + frame);   /* frame N lasts N ms */
        run_loader(&l);   /* its frames complete after ours */
        char *text = dump_text(log, &rc);
        assert_int_equal(rc, TLOG_OK);
        char want[64];
        snprintf(want, sizeof want, "> 100.00%% 0.00%d000s | (C) Frame\n", frame + 1);
        assert_string_equal(text, want);
        free(text);
    }
    assert_true(tlog_thread_id(log) != 0);
    assert_true(tlog_thread_id(log) != l.id);
    tlog_destroy(log);
}

/* The queue's bound is per thread: a busy side thread drops its own oldest
 * frames, never the main loop's. */
static void side_thread_cannot_push_out_the_main_threads_frames(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = 4;
    tlog_log *log = make_log(&c);
    for (int frame = 0; frame < 3; frame++) {
        begin_at(log, "Frame", frame);
        end_at(log, "Frame", frame + 0.5);
    }
    loader l = {log, 50, 0};
    run_loader(&l);
    uint32_t me = tlog_thread_id(log);
    assert_int_equal(tlog_frame_count_of(log, me), 3);
    assert_int_equal(tlog_frame_count_of(log, TLOG_THREAD_SELF), 3);
    assert_int_equal(tlog_frame_count_of(log, l.id), 4);
    assert_int_equal(tlog_frame_count(log), 7);
    assert_int_equal(stats_of(log).frames_dropped, 46);

    /* Selected by thread: newest of one, oldest of one, readiness. */
    tlog_frame *f = tlog_frame_latest_of(log, l.id);
    assert_string_equal(info_of(tlog_frame_root(f)).name, "Load chunk");
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.thread, l.id);
    assert_string_equal(fi.thread_name, "Loader");
    tlog_frame_release(f);
    assert_int_equal(tlog_frame_ready_of(log, TLOG_THREAD_SELF), 1);
    int64_t first = 0;
    for (int frame = 0; frame < 3; frame++) {   /* oldest first */
        f = tlog_frame_pop_ready_of(log, me);
        assert_non_null(f);
        assert_string_equal(info_of(tlog_frame_root(f)).name, "Frame");
        tlog_frame_get_info(f, &fi);
        if (frame == 0)
            first = fi.start_ns;
        assert_int_equal(fi.start_ns - first, frame * 1000000);
        tlog_frame_release(f);
    }
    assert_null(tlog_frame_pop_of(log, me));
    assert_int_equal(tlog_frame_ready_of(log, me), TLOG_ENOFRAME);
    assert_int_equal(tlog_frame_count_of(log, l.id), 4);
    tlog_destroy(log);
}

static void *one_frame(void *p)
{
    tlog_log *log = p;
    begin_at(log, "Short", 0);
    end_at(log, "Short", 1);
    return NULL;
}

/* Short-lived threads cannot grow the queue without bound: frames of threads
 * that exited go first once it holds max_frames per live thread. */
static void exited_threads_frames_make_room(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = 2;
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    end_at(log, "Frame", 1);
    for (int i = 0; i < 50; i++) {
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, one_frame, log), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
    }
    /* At the last push two threads recorded: room for 2 frames each. */
    assert_true(tlog_frame_count(log) <= 4);
    assert_int_equal(tlog_frame_count_of(log, TLOG_THREAD_SELF), 1);
    assert_int_equal(stats_of(log).frames_dropped, 51 - tlog_frame_count(log));
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_thread_keeps_all_its_scopes),
        cmocka_unit_test(dump_prints_the_calling_threads_frame),
        cmocka_unit_test(side_thread_cannot_push_out_the_main_threads_frames),
        cmocka_unit_test(exited_threads_frames_make_room),
        cmocka_unit_test(workers_hand_all_their_scopes_to_the_parent),
        cmocka_unit_test(destroy_races_cleanly_with_exiting_threads),
        cmocka_unit_test(threads_outlive_destroyed_logs),
        cmocka_unit_test(a_destroyed_logs_thread_records_into_the_default_log),
        cmocka_unit_test(error_callback_may_call_the_library_at_thread_exit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
