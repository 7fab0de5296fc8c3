/* Resolving reuses its scratch memory (the row map, per-record sizes, the
 * walks' stacks) and the node and instance arrays of the frame released
 * before: once a log has resolved a frame, resolving another of the same
 * shape allocates only two small blocks, whatever number of scopes it
 * holds. Counted with the allocation hook of a -Dtest_hooks=true build,
 * not timed. */
#include "common.h"

void tlog_test_fail_alloc(uint64_t n);
uint64_t tlog_test_alloc_count(void);

/* The blocks a resolved frame of host scopes allocates once its log keeps
 * a released frame's arrays (its nodes and instances): its instances'
 * device side data and its worker threads' names, one small block each
 * even when empty. Scratch that is kept adds none; scratch made anew adds
 * several, and a block per scope or per row would add thousands. */
#define FRAME_BLOCKS 2

#define STEPS 200   /* 10 scopes a step: 2,001 scopes in 6 rows */

static void record_frame(tlog_log *log, double at)
{
    begin_at(log, "Frame", at);
    for (int i = 0; i < STEPS; i++) {
        double t = at + 1 + i;
        begin_at(log, "Step", t);
        for (int k = 0; k < 3; k++) {
            begin_at(log, "Kernel", t + 0.1 * k);
            end_at(log, "Kernel", t + 0.1 * k + 0.05);
        }
        begin_at(log, "Solve", t + 0.4);
        for (int k = 0; k < 4; k++) {
            begin_at(log, "Iteration", t + 0.4 + 0.1 * k);
            end_at(log, "Iteration", t + 0.45 + 0.1 * k);
        }
        end_at(log, "Solve", t + 0.9);
        begin_at(log, "Copy", t + 0.9);
        end_at(log, "Copy", t + 0.95);
        end_at(log, "Step", t + 0.99);
    }
    end_at(log, "Frame", at + STEPS + 2);
}

/* Frames of LARGE_ROWS rows (common.h): their scratch is less than four
 * times what such a frame holds (about 10 MiB). */

/* Allocations made by taking one frame resolved, with its counts checked. */
static uint64_t allocations_to_resolve_shape(tlog_log *log, bool pop, size_t instances,
                                             size_t nodes)
{
    tlog_test_fail_alloc(0);   /* counts from zero, fails none */
    tlog_frame *f = pop ? tlog_frame_pop(log) : tlog_frame_latest(log);
    uint64_t n = tlog_test_alloc_count();
    assert_non_null(f);
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    assert_int_equal(fi.instances, instances);
    assert_int_equal(fi.nodes, nodes);
    tlog_frame_release(f);
    return n;
}

/* Allocations made by taking one frame of record_frame's resolved. */
static uint64_t allocations_to_resolve(tlog_log *log, bool pop)
{
    return allocations_to_resolve_shape(log, pop, 1 + STEPS * 10, 6);
}

static void check_reuse(bool pop)
{
    tlog_config c = test_config(NULL);
    c.max_frames = 1;
    tlog_log *log = make_log(&c);
    record_frame(log, 0);
    uint64_t first = allocations_to_resolve(log, pop);
    /* The first resolve makes the scratch: the count sees it. */
    assert_true(first > FRAME_BLOCKS);
    for (int k = 1; k <= 2; k++) {
        record_frame(log, 1000.0 * k);
        uint64_t again = allocations_to_resolve(log, pop);
        if (again > FRAME_BLOCKS)
            fail_msg("resolve %d of the same shape made %llu allocations, at most %d expected "
                     "(the first made %llu)",
                     k + 1, (unsigned long long)again, FRAME_BLOCKS,
                     (unsigned long long)first);
    }
    tlog_destroy(log);
}

static void second_and_third_pop_allocate_only_the_frame(void **state)
{
    (void)state;
    check_reuse(true);
}

static void second_and_third_latest_allocate_only_the_frame(void **state)
{
    (void)state;
    check_reuse(false);
}

/* Large frames one after another reuse their scratch and arrays; a
 * smaller frame after them gives the scratch and the node array back, so
 * the next one makes its own. */
static void large_scratch_is_kept_while_frames_need_it(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = 1;
    c.thread_budget = (size_t)16 << 20;
    tlog_log *log = make_log(&c);
    record_large_frame(log, 0);
    uint64_t first = allocations_to_resolve_shape(log, true, LARGE_ROWS, LARGE_ROWS);
    assert_true(first > FRAME_BLOCKS);
    record_large_frame(log, 1e6);
    assert_int_equal(allocations_to_resolve_shape(log, true, LARGE_ROWS, LARGE_ROWS),
                     FRAME_BLOCKS);
    record_frame(log, 2e6);   /* still finds the large scratch, then gives it back */
    assert_int_equal(allocations_to_resolve(log, true), FRAME_BLOCKS);
    record_frame(log, 3e6);
    assert_true(allocations_to_resolve(log, true) > FRAME_BLOCKS);
    record_frame(log, 4e6);
    assert_int_equal(allocations_to_resolve(log, true), FRAME_BLOCKS);
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(second_and_third_pop_allocate_only_the_frame),
        cmocka_unit_test(second_and_third_latest_allocate_only_the_frame),
        cmocka_unit_test(large_scratch_is_kept_while_frames_need_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
