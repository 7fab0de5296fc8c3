/*
 * Where device intervals show: one rule per test, from the table in
 * doc/format.md ("Where device intervals show"), on the simulated device
 * with its manual clock. Also their times, percentages, links to their
 * launchers, and the same frames read every way giving the same dump.
 */
#include <pthread.h>
#include <unistd.h>

#include "device_fixture.h"

static const char *past = "Device past frame end";

/* ---- frames ---- */

/* The minimal case: an interval belongs to the frame it was launched
 * in, however late, and wherever the device is read first. */
static void interval_stays_in_the_frame_that_launched_it(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame 1");
    kernel(fx, fx->q1, "k", 2.0);
    host_end(fx, "Frame 1");
    sim_at(fx, 5.0);
    host_begin(fx, "Frame 2");
    sync_until(fx, "sync", 6.0);
    host_end(fx, "Frame 2");

    tlog_frame *first = tlog_frame_pop_ready(fx->log);
    assert_non_null(first);
    tlog_node_info k = info_of(path(first, past, "k", NULL));
    assert_int_equal(k.total_ns, 2 * NS_PER_MS);
    assert_ptr_equal(k.launcher, tlog_frame_root(first));
    tlog_frame_release(first);
    tlog_frame *second = tlog_frame_pop_ready(fx->log);
    assert_non_null(second);
    assert_int_equal(child_count(path(second, "sync", NULL, NULL)), 0);
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(second, &fi), TLOG_OK);
    assert_int_equal(fi.device_intervals, 0);
    tlog_frame_release(second);
}

typedef struct thread_frame {
    sim_fixture *fx;
    tlog_sim_queue *q;
    const char *frame, *kernel, *sync;
    double until_ms;
} thread_frame;

static void *record_thread_frame(void *p)
{
    thread_frame *t = p;
    host_begin(t->fx, t->frame);
    kernel(t->fx, t->q, t->kernel, 1.0);
    if (t->sync)
        sync_until(t->fx, t->sync, t->until_ms);
    host_end(t->fx, t->frame);
    return NULL;
}

static void run_thread(thread_frame *t)
{
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, record_thread_frame, t), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
}

/* Thread B's sync scope never takes thread A's kernel, though it is done by
 * then; A's frame keeps it. */
static void each_thread_keeps_its_own_device_work(void **state)
{
    sim_fixture *fx = *state;
    thread_frame a = {fx, fx->q1, "Frame A", "kernel A", NULL, 0};
    thread_frame b = {fx, fx->q2, "Frame B", "kernel B", "sync B", 10.0};
    run_thread(&a);
    run_thread(&b);
    tlog_frame *fa = tlog_frame_pop_ready(fx->log), *fb = tlog_frame_pop_ready(fx->log);
    assert_non_null(fa);
    assert_non_null(fb);
    assert_non_null(path(fa, past, "kernel A", NULL));
    assert_non_null(path(fb, "sync B", "kernel B", NULL));
    assert_null(path(fb, "sync B", "kernel A", NULL));
    assert_int_equal(child_count(path(fb, "sync B", NULL, NULL)), 1);
    tlog_frame_release(fa);
    tlog_frame_release(fb);
}

/* Two threads' frames open at once, each with its own kernel and its own
 * device-wide sync scope, in lockstep: A's sync scope ends after both
 * kernels are done, yet takes only A's; B's takes B's. */
typedef struct lockstep {
    sim_fixture *fx;
    pthread_barrier_t *step;
    tlog_sim_queue *q;
    const char *frame, *kernel, *sync;
    int sync_turn;
    double sync_until_ms;
    uint32_t thread;
} lockstep;

static void *record_in_lockstep(void *p)
{
    lockstep *t = p;
    host_begin(t->fx, t->frame);
    t->thread = tlog_thread_id(t->fx->log);
    kernel(t->fx, t->q, t->kernel, 1.0);
    pthread_barrier_wait(t->step);   /* both frames open, both kernels queued */
    for (int turn = 0; turn < 2; turn++) {
        if (turn == t->sync_turn)
            sync_until(t->fx, t->sync, t->sync_until_ms);
        pthread_barrier_wait(t->step);
    }
    host_end(t->fx, t->frame);
    return NULL;
}

static void concurrent_frames_keep_their_own_device_work(void **state)
{
    sim_fixture *fx = *state;
    pthread_barrier_t step;
    pthread_barrier_init(&step, NULL, 2);
    lockstep a = {fx, &step, fx->q1, "Frame A", "kernel A", "sync A", 0, 3.0, 0};
    lockstep b = {fx, &step, fx->q2, "Frame B", "kernel B", "sync B", 1, 4.0, 0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, record_in_lockstep, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, record_in_lockstep, &b), 0);
    assert_int_equal(pthread_join(ta, NULL), 0);
    assert_int_equal(pthread_join(tb, NULL), 0);
    pthread_barrier_destroy(&step);

    tlog_frame *fa = tlog_frame_pop_ready_of(fx->log, a.thread);
    tlog_frame *fb = tlog_frame_pop_ready_of(fx->log, b.thread);
    assert_non_null(fa);
    assert_non_null(fb);
    assert_string_equal(info_of(tlog_frame_root(fa)).name, "Frame A");
    assert_string_equal(info_of(tlog_frame_root(fb)).name, "Frame B");
    assert_non_null(path(fa, "sync A", "kernel A", NULL));
    assert_int_equal(child_count(path(fa, "sync A", NULL, NULL)), 1);
    assert_non_null(path(fb, "sync B", "kernel B", NULL));
    assert_int_equal(child_count(path(fb, "sync B", NULL, NULL)), 1);
    assert_null(path(fa, past, NULL, NULL));
    assert_null(path(fb, past, NULL, NULL));
    tlog_frame_release(fa);
    tlog_frame_release(fb);
}

/* ---- rule 1: the first sync scope that waited for it ---- */

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

/* Of two sync scopes both after the work, the first in time takes it. */
static void first_sync_scope_in_time_takes_the_interval(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 1.0);
    sync_until(fx, "First", 2.0);
    sync_until(fx, "Second", 3.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(path(f, "First", "Kernel", NULL));
    assert_int_equal(child_count(path(f, "Second", NULL, NULL)), 0);
    tlog_frame_release(f);
}

/* A sync scope that ends before the work does leaves it to a later one. */
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

/* Work launched after a sync scope ended is not that scope's. */
static void work_launched_after_a_sync_scope_is_not_its(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    sync_until(fx, "Early", 1.0);
    kernel(fx, fx->q1, "Later", 1.0);
    sim_at(fx, 3.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_int_equal(child_count(path(f, "Early", NULL, NULL)), 0);
    assert_non_null(path(f, "Later", NULL, NULL));   /* rule 2: its launcher */
    tlog_frame_release(f);
}

typedef struct adopter {
    sim_fixture *fx;
    tlog_token token;
} adopter;

static void *sync_for_the_owner(void *p)
{
    adopter *a = p;
    tlog_thread_name("Waiter");
    assert_int_equal(tlog_adopt_begin(&a->token), TLOG_OK);
    sync_until(a->fx, "Worker sync", 2.0);
    assert_int_equal(tlog_adopt_end(&a->token), TLOG_OK);
    return NULL;
}

/* A sync scope in work a thread adopted is a sync scope of the frame. */
static void sync_scope_of_an_adopted_worker_counts_for_the_frame(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 1.0);
    adopter a = {fx, tlog_handoff(fx->log)};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, sync_for_the_owner, &a), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    sim_at(fx, 3.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    assert_non_null(path(f, "Waiter", "Worker sync", "Kernel"));
    tlog_frame_release(f);
}

/* A sync scope bound to a queue takes only that queue's work. */
static void queue_bound_sync_scope_ignores_other_queues(void **state)
{
    sim_fixture *fx = *state;
    tlog_sim_queue *q3 = tlog_sim_queue_create(fx->sim);
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "On q1", 1.0);
    kernel(fx, fx->q2, "On q2", 1.0);
    kernel(fx, q3, "On q3", 1.0);
    host_begin(fx, "Wait q2");
    sim_at(fx, 2.0);
    tlog_sync_end_queue(fx->dev, fx->q2, site_named("Wait q2"));
    host_begin(fx, "Wait q3");
    tlog_sync_end_queue(fx->dev, q3, site_named("Wait q3"));
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    assert_non_null(path(f, "Wait q2", "On q2", NULL));
    assert_int_equal(child_count(path(f, "Wait q2", NULL, NULL)), 1);
    assert_non_null(path(f, "On q1", NULL, NULL));   /* its launcher: the root */
    assert_non_null(path(f, "Wait q3", "On q3", NULL));
    tlog_frame_release(f);
}

/* The macro, in the default log, as an application writes it. */
static void queue_bound_sync_scope_macro(void **state)
{
    (void)state;
    tlog_sim *sim;
    tlog_device *gpu;
    assert_int_equal(tlog_sim_create(NULL, &sim), TLOG_OK);
    assert_int_equal(tlog_sim_device_create(sim, NULL, NULL, &gpu), TLOG_OK);
    tlog_sim_queue *a = tlog_sim_queue_create(sim), *b = tlog_sim_queue_create(sim);
    {
        TIMERLOG_SCOPE("Frame");
        {
            TIMERLOG_DEVICE_SCOPE(gpu, a, "On a");
            tlog_sim_launch(sim, a, 1000);
        }
        {
            TIMERLOG_DEVICE_SCOPE(gpu, b, "On b");
            tlog_sim_launch(sim, b, 1000);
        }
        TIMERLOG_SYNC_QUEUE_SCOPE(gpu, b, "Wait b");
        tlog_sim_queue_sync(sim, a);
        tlog_sim_queue_sync(sim, b);
        tlog_sim_settle(sim);
    }
    tlog_frame *f = tlog_frame_latest(NULL);
    assert_non_null(f);
    assert_non_null(path(f, "Wait b", "On b", NULL));
    assert_int_equal(child_count(path(f, "Wait b", NULL, NULL)), 1);
    tlog_frame_release(f);
    tlog_device_destroy(gpu);
    tlog_sim_destroy(sim);
}

/* A sync scope bound to one device takes only that device's work. */
static void each_device_is_read_and_placed_on_its_own(void **state)
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

/* A device whose clock runs fast against the host's maps an interval's end
 * a little after the wait that saw it complete: what the sync scope's end
 * (and the root's) read as done still counts as done by then. */
static void what_the_end_of_a_wait_saw_complete_counts_as_done_by_it(void **state)
{
    sim_fixture *fx = *state;
    tlog_sim *fast;
    assert_int_equal(tlog_sim_create(NULL, &fast), TLOG_OK);
    tlog_device *dev2;
    assert_int_equal(tlog_sim_device_create(fast, fx->log, NULL, &dev2), TLOG_OK);
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(dev2, NULL, site_named("Seen"));
    tlog_sim_launch(fast, NULL, 2 * NS_PER_MS);
    tlog_device_end(&s);
    s = tlog_device_begin(dev2, NULL, site_named("Seen at the end"));
    tlog_sim_launch(fast, NULL, 2 * NS_PER_MS);
    tlog_device_end(&s);
    host_begin(fx, "Sync");
    sim_at(fx, 1.5);                          /* 1.5 ms on the host ... */
    tlog_sim_advance(fast, 2 * NS_PER_MS);    /* ... 2 ms on the device */
    tlog_sim_settle(fast);
    tlog_sync_end_queue(dev2, NULL, site_named("Sync"));
    sim_at(fx, 3.0);
    tlog_sim_advance(fast, 2 * NS_PER_MS);
    tlog_sim_settle(fast);
    host_end(fx, "Frame");

    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    tlog_node_info seen = info_of(path(f, "Sync", "Seen", NULL));
    assert_true(seen.start_ns + (int64_t)seen.total_ns > 1500000);   /* mapped past it */
    assert_non_null(path(f, "Seen at the end", NULL, NULL));         /* its launcher */
    assert_null(path(f, past, NULL, NULL));
    tlog_frame_release(f);
    tlog_device_destroy(dev2);
    tlog_sim_destroy(fast);
}

/* ---- rule 2: done within the frame, no sync scope: its launcher ---- */

static void work_done_long_before_the_dump_shows_under_its_launcher(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    host_begin(fx, "Render");
    kernel(fx, fx->q1, "Draw", 1.0);
    host_end(fx, "Render");
    sim_at(fx, 4.0);
    host_end(fx, "Frame");
    sim_at(fx, 100.0);

    int rc;
    char *text = dump_log(fx, &rc);
    assert_int_equal(rc, TLOG_OK);
    assert_string_equal(text, "> 100.00% 0.004000s | (C) Frame\n"
                              "|-> 0.00% 0.000000s | (C) Render\n"
                              ". ==> >9999.99% 0.001000s | (E) Draw\n");
    free(text);
    assert_int_equal(device_info(fx).waits, 0);   /* done: nothing waited */
}

/* ---- rule 3: still running at the root's end ---- */

static void work_running_past_the_frame_end_shows_under_its_own_row(void **state)
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
    /* The row's time: how far the device ran past the frame's end. */
    assert_string_equal(text, "> 100.00% 0.000500s | (C) Frame\n"
                              "|-> 1100.00% 0.005500s | (C) Device past frame end\n"
                              ". ==> 18.18% 0.001000s | (E) Upload to device\n"
                              ". ==> 90.91% 0.005000s | (E) Draw\n");
    free(text);
}

/* An early sync scope that the work outlasted does not take it. */
static void sync_scope_leaves_incomplete_intervals_to_the_end_of_frame_row(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Draw", 10.0);
    sim_at(fx, 1.0);
    sync_until(fx, "Early sync", 2.0);
    host_end(fx, "Frame");

    assert_int_equal(tlog_frame_ready(fx->log), 0);
    tlog_frame *f = tlog_frame_latest(fx->log);   /* waits for it */
    assert_non_null(f);
    assert_int_equal(child_count(path(f, "Early sync", NULL, NULL)), 0);
    tlog_node_info pi = info_of(path(f, past, NULL, NULL));
    assert_int_equal(pi.kind, TLOG_KIND_CONTROL);
    assert_true(pi.flags & TLOG_NODE_PAST_FRAME);
    assert_int_equal(pi.total_ns, 8 * NS_PER_MS);   /* from 2 ms to 10 ms */
    assert_int_equal(pi.start_ns, 2 * NS_PER_MS);
    assert_int_equal(info_of(path(f, past, "Draw", NULL)).total_ns, 10 * NS_PER_MS);
    tlog_frame_release(f);
}

/* Work after the frame's end is beside the root, not part of it: the
 * root's self time is its own work. */
static void root_self_time_is_its_own_work(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Tail", 20.0);
    host_begin(fx, "Child");
    sim_at(fx, 2.5);
    host_end(fx, "Child");
    sim_at(fx, 10.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    tlog_node_info root = info_of(tlog_frame_root(f));
    assert_int_equal(root.total_ns, 10 * NS_PER_MS);
    assert_int_equal(root.self_ns, 7500 * 1000u);
    assert_int_equal(info_of(path(f, past, NULL, NULL)).total_ns, 10 * NS_PER_MS);
    tlog_frame_release(f);
}

/* ---- rule 4: no timing: its launcher ---- */

static void interval_without_a_timing_shows_under_its_launcher(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    host_begin(fx, "Launcher");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, site_named("Half"));
    tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_RECORD_ERROR, 1);
    assert_int_equal(tlog_device_end(&s), TLOG_EDEVICE);
    host_end(fx, "Launcher");
    sync_until(fx, "Sync", 1.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    tlog_node_info i = info_of(path(f, "Launcher", "Half", NULL));
    assert_true(i.flags & TLOG_NODE_UNRESOLVED);
    assert_int_equal(i.total_ns, 0);
    tlog_frame_release(f);
}

/* ---- printing ---- */

/* A sync scope that did not wait: no percentage past 9999.99% is printed,
 * and the walk API still has the ratio. */
static void percentages_past_a_hundredfold_print_as_a_bound(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Kernel", 3.0);
    sim_at(fx, 3.0);
    sync_until(fx, "No wait", 3.0);
    sim_at(fx, 4.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    char *text = dump_string(f, NULL);
    assert_non_null(strstr(text, "|-> 0.00% 0.000000s | (C) No wait\n"
                                 ". ==> >9999.99% 0.003000s | (E) Kernel\n"));
    free(text);
    tlog_frame_release(f);
}

/* A frame of 10 us whose kernel ran 3 ms past it: the past-frame row, a
 * (C) row, prints the bound too; a row of 0 under a parent of 0 prints 0.00%. */
static void past_frame_row_of_a_short_frame_prints_as_a_bound(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    host_begin(fx, "Empty");
    host_begin(fx, "Empty inside");
    host_end(fx, "Empty inside");
    host_end(fx, "Empty");
    kernel(fx, fx->q1, "Kernel", 3.0);
    sim_at(fx, 0.01);
    host_end(fx, "Frame");
    sim_at(fx, 5.0);
    int rc;
    char *text = dump_log(fx, &rc);
    assert_int_equal(rc, TLOG_OK);
    assert_string_equal(text, "> 100.00% 0.000010s | (C) Frame\n"
                              "|-> 0.00% 0.000000s | (C) Empty\n"
                              ". |-> 0.00% 0.000000s | (C) Empty inside\n"
                              "|-> >9999.99% 0.002990s | (C) Device past frame end\n"
                              ". ==> 100.33% 0.003000s | (E) Kernel\n");
    free(text);
}

/* ---- who reads first changes nothing ---- */

enum route { BY_DUMP, BY_POP_READY, BY_LATEST, BY_STREAM, ROUTES };

/* Appends `text` (freed) to the malloc'd *all. */
static void append(char **all, char *text)
{
    size_t have = *all ? strlen(*all) : 0, more = strlen(text);
    char *grown = realloc(*all, have + more + 1);
    assert_non_null(grown);
    memcpy(grown + have, text, more + 1);
    *all = grown;
    free(text);
}

/* Reads the frame just completed, for the routes that read as they go. */
static void read_as_it_ends(sim_fixture *fx, enum route how, char **all)
{
    if (how == BY_DUMP) {
        int rc;
        append(all, dump_log(fx, &rc));
        assert_int_equal(rc, TLOG_OK);
    } else if (how == BY_LATEST) {
        tlog_frame *f = tlog_frame_latest(fx->log);
        append(all, dump_string(f, NULL));
        tlog_frame_release(f);
    } else if (how == BY_POP_READY) {
        tlog_frame_ready(fx->log);   /* reads the device, takes nothing */
    }
}

/* Frames with every placement: sync scopes, a bound one, launcher rows and
 * work past the end; each route reads the device at its own moments. Frames
 * start 50 ms apart: a dump's wait moves the simulated clock to the end of
 * the work it waits for (33 ms into the frame), as a real wait takes time. */
static void record_script(sim_fixture *fx, enum route how, char **all)
{
    for (int frame = 0; frame < 3; frame++) {
        double t = frame * 50.0;
        sim_at(fx, t);
        host_begin(fx, "Frame");
        host_begin(fx, "Simulate");
        kernel(fx, fx->q1, "Filter", 2.0);
        kernel(fx, fx->q2, "Copy", 1.0);
        host_end(fx, "Simulate");
        host_begin(fx, "Wait filter");
        sim_at(fx, t + 3.0);
        if (how == BY_POP_READY)
            tlog_frame_ready(fx->log);   /* reads the device mid-frame */
        tlog_sync_end_queue(fx->dev, fx->q1, site_named("Wait filter"));
        host_begin(fx, "Render");
        kernel(fx, fx->q2, "Draw", 30.0);
        host_end(fx, "Render");
        sim_at(fx, t + 5.0);
        host_end(fx, "Frame");
        read_as_it_ends(fx, how, all);
    }
}

/* Every frame of the script, as read by one route, one dump after another. */
static char *read_route(enum route how, const char *stream_path)
{
    sim_options o = {.max_frames = 8, .stream_path = how == BY_STREAM ? stream_path : NULL};
    sim_fixture *fx = sim_fixture_make(&o);
    char *all = NULL;
    record_script(fx, how, &all);
    if (how == BY_POP_READY) {
        sim_at(fx, 300.0);
        tlog_frame *f;
        while ((f = tlog_frame_pop_ready(fx->log)) != NULL) {
            append(&all, dump_string(f, NULL));
            tlog_frame_release(f);
        }
    }
    sim_fixture_free(fx);
    if (how == BY_STREAM) {
        tlog_reader *r;
        assert_int_equal(tlog_reader_open(stream_path, &r), TLOG_OK);
        tlog_frame *f;
        while (tlog_reader_next(r, &f) == TLOG_OK) {
            append(&all, dump_string(f, NULL));
            tlog_frame_release(f);
        }
        tlog_reader_close(r);
        unlink(stream_path);
    }
    return all;
}

static void every_reader_sees_the_same_frames(void **state)
{
    (void)state;
    char stream_path[] = "/tmp/tlog_routes_XXXXXX";
    int fd = mkstemp(stream_path);
    assert_true(fd >= 0);
    close(fd);
    char *texts[ROUTES];
    for (int how = 0; how < ROUTES; how++)
        texts[how] = read_route((enum route)how, stream_path);
    const char *p = texts[BY_DUMP];
    int frames = 0;
    while ((p = strstr(p, "| (C) Frame\n")) != NULL) {
        frames++;
        p++;
    }
    assert_int_equal(frames, 3);
    assert_non_null(strstr(texts[BY_DUMP], "| (C) Wait filter\n. ==> "));
    assert_non_null(strstr(texts[BY_DUMP], "| (C) Device past frame end\n"));
    for (int how = 1; how < ROUTES; how++)
        assert_string_equal(texts[how], texts[BY_DUMP]);
    for (int how = 0; how < ROUTES; how++)
        free(texts[how]);
}

/* ---- links and times ---- */

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

#define SIM_TEST(fn) cmocka_unit_test_setup_teardown(fn, sim_setup, sim_teardown)

/* Merged frames count time as a resolved frame does: `Device past frame end`
 * ran after the root, so it is not taken from the root's self time. */
static void merged_root_keeps_the_past_row_out_of_its_self_time(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Late", 5.0);
    host_begin(fx, "Host work");
    sim_at(fx, sim_ms(fx) + 1.0);
    host_end(fx, "Host work");
    sim_at(fx, sim_ms(fx) + 1.0);
    host_end(fx, "Frame");
    assert_int_equal(tlog_sync(fx->log), TLOG_OK);
    tlog_frame *f = tlog_frame_pop_ready(fx->log);
    assert_non_null(f);
    assert_non_null(path(f, past, "Late", NULL));
    tlog_node_info root = info_of(tlog_frame_root(f));
    assert_int_equal(root.self_ns, NS_PER_MS);
    const tlog_frame *two[] = {f, f};
    tlog_frame *m = NULL;
    assert_int_equal(tlog_frame_merge(two, 2, &m), TLOG_OK);
    assert_int_equal(info_of(tlog_frame_root(m)).self_ns, 2 * NS_PER_MS);
    assert_int_equal(info_of(path(m, past, NULL, NULL)).total_ns,
                     2 * info_of(path(f, past, NULL, NULL)).total_ns);
    tlog_frame_release(m);
    tlog_frame_release(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SIM_TEST(interval_stays_in_the_frame_that_launched_it),
        SIM_TEST(each_thread_keeps_its_own_device_work),
        SIM_TEST(concurrent_frames_keep_their_own_device_work),
        SIM_TEST(sync_scope_shows_completed_intervals_under_it),
        SIM_TEST(device_row_may_exceed_its_sync_scope),
        SIM_TEST(first_sync_scope_in_time_takes_the_interval),
        SIM_TEST(queues_complete_out_of_order),
        SIM_TEST(work_launched_after_a_sync_scope_is_not_its),
        SIM_TEST(sync_scope_of_an_adopted_worker_counts_for_the_frame),
        SIM_TEST(queue_bound_sync_scope_ignores_other_queues),
        cmocka_unit_test(queue_bound_sync_scope_macro),
        SIM_TEST(each_device_is_read_and_placed_on_its_own),
        SIM_TEST(what_the_end_of_a_wait_saw_complete_counts_as_done_by_it),
        SIM_TEST(work_done_long_before_the_dump_shows_under_its_launcher),
        SIM_TEST(work_running_past_the_frame_end_shows_under_its_own_row),
        SIM_TEST(sync_scope_leaves_incomplete_intervals_to_the_end_of_frame_row),
        SIM_TEST(root_self_time_is_its_own_work),
        SIM_TEST(interval_without_a_timing_shows_under_its_launcher),
        SIM_TEST(percentages_past_a_hundredfold_print_as_a_bound),
        SIM_TEST(past_frame_row_of_a_short_frame_prints_as_a_bound),
        cmocka_unit_test(every_reader_sees_the_same_frames),
        SIM_TEST(interval_links_to_the_scope_that_launched_it),
        cmocka_unit_test(launch_rows_time_the_host_side),
        cmocka_unit_test(launch_row_of_a_scope_ended_on_another_thread),
        cmocka_unit_test(offset_is_measured_and_can_be_subtracted),
        cmocka_unit_test_setup_teardown(merged_root_keeps_the_past_row_out_of_its_self_time,
                                        sim_setup, sim_teardown),
        SIM_TEST(many_instances_merge_into_one_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
