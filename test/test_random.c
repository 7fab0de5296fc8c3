/*
 * Random nesting, mismatched ends, inserts, tight budgets and depth limits,
 * checked against a model of the repair rules: every frame resolves into a
 * well-formed tree, and every scope begun is either in it or counted as
 * dropped.
 */
#include "common.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static const char *titles[] = {"a", "b", "c", "d", "e"};

/* Scopes past max_depth are dropped but still matched by title, so the
 * model is one stack of titles. */
typedef struct model {
    int stack[64];
    int depth;
    uint64_t begun;       /* scopes begun and timings inserted this frame */
    uint64_t mismatched;  /* ends that closed inner scopes */
    uint64_t unmatched;   /* ends that matched nothing */
} model;

/* Checks the shape of a resolved frame; returns the instances it holds. */
static uint64_t check_tree(const tlog_frame *f)
{
    uint64_t instances = 0;
    const tlog_node *n = tlog_frame_root(f);
    assert_non_null(n);
    assert_int_equal(info_of(n).count, 1);
    while (n) {
        tlog_node_info in = info_of(n);
        instances += in.count;
        assert_true(in.count >= 1);
        assert_true(in.min_ns <= in.max_ns);
        assert_true(in.self_ns <= in.total_ns);
        const tlog_node *p = tlog_node_parent(n);
        if (p)
            assert_int_equal(in.depth, info_of(p).depth + 1);
        int64_t last_start = INT64_MIN;
        for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c)) {
            assert_ptr_equal(tlog_node_parent(c), n);
            assert_true(info_of(c).start_ns >= last_start);
            last_start = info_of(c).start_ns;
        }
        if (tlog_node_first_child(n)) {
            n = tlog_node_first_child(n);
            continue;
        }
        while (n && !tlog_node_next_sibling(n))
            n = tlog_node_parent(n);
        n = n ? tlog_node_next_sibling(n) : NULL;
    }
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.instances, instances);
    return instances;
}

static void end_title(tlog_log *log, model *m, int title, double t)
{
    int match = -1;
    for (int i = m->depth - 1; i >= 0; i--)
        if (m->stack[i] == title) {
            match = i;
            break;
        }
    if (match < 0)
        m->unmatched++;
    else {
        if (match < m->depth - 1)
            m->mismatched++;
        m->depth = match;
    }
    end_at(log, titles[title], t);
}

static void one_configuration(size_t budget_records, uint32_t max_depth, int frames)
{
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.thread_budget = budget_records * SCOPE_RECORD_BYTES;
    c.max_depth = max_depth;
    c.max_frames = 1;
    tlog_log *log = make_log(&c);
    uint64_t mismatched = 0, unmatched = 0;
    double t = 0;
    for (int frame = 0; frame < frames; frame++) {
        model m = {.depth = 1};
        m.stack[0] = 0;
        m.begun = 1;
        begin_at(log, titles[0], t += 1);
        int ops = 1 + (int)rnd(300);
        for (int k = 0; k < ops && m.depth > 0; k++) {
            uint32_t op = rnd(100);
            t += 0.001 * (1 + rnd(5));
            if (op < 45 && m.depth < 60) {
                int title = 1 + (int)rnd(4);
                m.stack[m.depth++] = title;
                m.begun++;
                begin_at(log, titles[title], t);
            } else if (op < 85 && m.depth > 1) {
                end_title(log, &m, m.stack[m.depth - 1], t);
            } else if (op < 92 && m.depth > 1) {
                end_title(log, &m, m.stack[1 + rnd((uint32_t)m.depth - 1)], t);
            } else if (op < 96) {
                end_title(log, &m, (int)rnd(5), t);   /* may close the frame */
            } else {
                tlog_ticks now = (tlog_ticks)(t * 1e6);
                if (tlog_insert(log, site_named("ins"), TLOG_KIND_EXECUTION, now - 10, now) ==
                    TLOG_OK)
                    m.begun++;
                else
                    m.begun++; /* refused and counted as dropped */
            }
        }
        if (m.depth > 0)
            end_title(log, &m, 0, t += 1);
        mismatched += m.mismatched;
        unmatched += m.unmatched;

        tlog_frame *f = tlog_frame_pop(log);
        assert_non_null(f);
        uint64_t got = check_tree(f);
        tlog_frame_info fi = {.size = sizeof fi};
        tlog_frame_get_info(f, &fi);
        if (got + fi.scopes_dropped != m.begun)
            fail_msg("frame %d: %llu in tree + %llu dropped != %llu begun", frame,
                     (unsigned long long)got, (unsigned long long)fi.scopes_dropped,
                     (unsigned long long)m.begun);
        tlog_frame_release(f);
    }
    tlog_stats s = stats_of(log);
    assert_int_equal(s.mismatched_ends, mismatched);
    assert_int_equal(s.unmatched_ends, unmatched);
    assert_int_equal(s.frames_completed, (uint64_t)frames);
    tlog_destroy(log);
}

static void random_nesting_with_room_to_spare(void **state)
{
    (void)state;
    one_configuration(1 << 16, 128, 300);
}

static void random_nesting_with_tight_budgets(void **state)
{
    (void)state;
    for (int i = 0; i < 20; i++)
        one_configuration(4 + rnd(60), 0, 30);
}

static void random_nesting_with_shallow_stacks(void **state)
{
    (void)state;
    for (int i = 0; i < 20; i++)
        one_configuration(1 << 12, 1 + rnd(6), 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_nesting_with_room_to_spare),
        cmocka_unit_test(random_nesting_with_tight_budgets),
        cmocka_unit_test(random_nesting_with_shallow_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
