/* What a log keeps for resolving its next frame (tlog_stats.resolve_bytes):
 * a released frame's node and instance arrays hold the next frame of a
 * loop, however busy the allocator is meanwhile; a smaller frame after a
 * large one gives the large arrays back; frames released on another thread
 * while others resolve lose nothing. */
#include <pthread.h>

#include "common.h"

/* The bytes a resolved frame holds a node and an instance in (doc/guide.md,
 * "Memory"). */
#define NODE_BYTES 128
#define INSTANCE_BYTES 24

static void record_small_frame(tlog_log *log, double at)
{
    begin_at(log, "Frame", at);
    for (int i = 0; i < 50; i++) {
        begin_at(log, "Step", at + 1 + i);
        begin_at(log, "Kernel", at + 1.25 + i);
        end_at(log, "Kernel", at + 1.5 + i);
        end_at(log, "Step", at + 1.75 + i);
    }
    end_at(log, "Frame", at + 100);
}

static tlog_log *loop_log(void)
{
    tlog_config c = test_config(NULL);
    c.max_frames = 1;
    c.thread_budget = (size_t)16 << 20;
    return make_log(&c);
}

static tlog_frame_info frame_info(const tlog_frame *f)
{
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    return fi;
}

static uint64_t resolve_bytes(tlog_log *log)
{
    return stats_of(log).resolve_bytes;
}

static void a_new_log_keeps_nothing_for_resolving(void **state)
{
    (void)state;
    tlog_log *log = loop_log();
    assert_int_equal(resolve_bytes(log), 0);
    tlog_destroy(log);
}

/* The test holds a block the size of the first frame's nodes while the
 * second resolves: had the first frame's array gone back to the allocator,
 * that block could take it, and the second frame's nodes would lie
 * elsewhere. */
static void a_released_frames_arrays_hold_the_next_frame(void **state)
{
    (void)state;
    tlog_log *log = loop_log();
    record_small_frame(log, 0);
    tlog_frame *first = tlog_frame_pop(log);
    assert_non_null(first);
    tlog_frame_info fi = frame_info(first);
    uintptr_t first_root = (uintptr_t)tlog_frame_root(first);
    uint64_t scratch_only = resolve_bytes(log);
    tlog_frame_release(first);
    uint64_t with_arrays = resolve_bytes(log);
    uint64_t arrays = fi.nodes * NODE_BYTES + fi.instances * INSTANCE_BYTES;
    assert_true(with_arrays >= scratch_only + arrays);

    void *busy = malloc(fi.nodes * NODE_BYTES);
    assert_non_null(busy);
    record_small_frame(log, 1000);
    tlog_frame *second = tlog_frame_pop(log);
    assert_non_null(second);
    assert_true((uintptr_t)tlog_frame_root(second) == first_root);
    assert_int_equal(frame_info(second).nodes, fi.nodes);
    assert_int_equal(resolve_bytes(log), scratch_only);   /* the arrays are the frame's */
    tlog_frame_release(second);
    assert_int_equal(resolve_bytes(log), with_arrays);
    free(busy);
    tlog_destroy(log);
}

/* Large frames one after another keep their arrays; the small frame after
 * them takes them, and gives back the node array, which is more than
 * 8 MiB and more than four times what it needed; while it holds them, its
 * tree_bytes says so. */
static void a_smaller_frame_gives_back_large_arrays(void **state)
{
    (void)state;
    tlog_log *log = loop_log();
    record_large_frame(log, 0);
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    assert_int_equal(frame_info(f).nodes, LARGE_ROWS);
    uintptr_t large_root = (uintptr_t)tlog_frame_root(f);
    tlog_frame_release(f);
    uint64_t large_nodes = (uint64_t)LARGE_ROWS * NODE_BYTES;
    assert_true(resolve_bytes(log) >= large_nodes);

    record_large_frame(log, 1e6);
    f = tlog_frame_pop(log);
    assert_true((uintptr_t)tlog_frame_root(f) == large_root);
    tlog_frame_release(f);
    assert_true(resolve_bytes(log) >= large_nodes);

    record_small_frame(log, 2e6);
    f = tlog_frame_pop(log);
    assert_true((uintptr_t)tlog_frame_root(f) == large_root);
    assert_true(frame_info(f).tree_bytes >= large_nodes);   /* what it holds, said */
    tlog_frame_release(f);
    assert_true(resolve_bytes(log) < large_nodes);
    tlog_destroy(log);
}

/* Frames pass from the recording thread to a releasing one, which frees
 * each while the next resolves. */
enum { HANDED = 200 };

typedef struct hand_off {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    tlog_frame *frame;   /* one at a time */
    bool done;
} hand_off;

static void *release_handed(void *arg)
{
    hand_off *h = arg;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        while (!h->frame && !h->done)
            pthread_cond_wait(&h->changed, &h->lock);
        if (!h->frame)
            break;
        tlog_frame *f = h->frame;
        h->frame = NULL;
        pthread_cond_broadcast(&h->changed);
        pthread_mutex_unlock(&h->lock);
        tlog_frame_release(f);
        pthread_mutex_lock(&h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void hand(hand_off *h, tlog_frame *f)
{
    pthread_mutex_lock(&h->lock);
    while (h->frame)
        pthread_cond_wait(&h->changed, &h->lock);
    h->frame = f;
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
}

static void frames_released_on_another_thread_lose_nothing(void **state)
{
    (void)state;
    tlog_log *log = loop_log();
    hand_off h = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};
    pthread_t releaser;
    assert_int_equal(pthread_create(&releaser, NULL, release_handed, &h), 0);
    for (int k = 0; k < HANDED; k++) {
        if (k % 10 == 9)
            record_large_frame(log, 1e6 * k);
        else
            record_small_frame(log, 1e6 * k);
        tlog_frame *f = tlog_frame_pop(log);
        assert_non_null(f);
        tlog_frame_info fi = frame_info(f);
        assert_int_equal(fi.nodes, k % 10 == 9 ? LARGE_ROWS : 3);
        const tlog_node *step = child_named(tlog_frame_root(f), k % 10 == 9 ? "p" : "Step");
        assert_non_null(step);
        hand(&h, f);
    }
    pthread_mutex_lock(&h.lock);
    h.done = true;
    pthread_cond_broadcast(&h.changed);
    pthread_mutex_unlock(&h.lock);
    pthread_join(releaser, NULL);
    tlog_stats s = stats_of(log);
    assert_int_equal(s.frames_completed, HANDED);
    assert_int_equal(s.alloc_failures, 0);
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_new_log_keeps_nothing_for_resolving),
        cmocka_unit_test(a_released_frames_arrays_hold_the_next_frame),
        cmocka_unit_test(a_smaller_frame_gives_back_large_arrays),
        cmocka_unit_test(frames_released_on_another_thread_lose_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
