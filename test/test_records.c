/* Scope records: whatever form a record takes (compact, or wide for a long
 * scope, a start far into a long frame, a site anywhere in memory), the
 * frame resolves to the same instances, to the nanosecond; budgets and
 * record memory count 16 bytes a record, 32 for a wide one; a frame finds
 * the chunks its thread's last frame took made ready. */
#include "common.h"

#define S (1000ull * NS_PER_MS)   /* a second, in ticks of the test clock */

/* One begin or end of a script, at a time in ticks. */
typedef struct op {
    bool begin;
    const tlog_site *site;
    uint64_t t;
} op;

typedef struct script {
    op *ops;
    size_t n, cap;
} script;

static void add(script *s, bool begin, const tlog_site *site, uint64_t t)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->ops = realloc(s->ops, s->cap * sizeof *s->ops);
        assert_non_null(s->ops);
    }
    s->ops[s->n++] = (op){begin, site, t};
}

static void scope(script *s, const char *name, uint64_t start, uint64_t end)
{
    add(s, true, site_named(name), start);
    add(s, false, site_named(name), end);
}

static void play(tlog_log *log, const script *s)
{
    for (size_t i = 0; i < s->n; i++) {
        test_now = s->ops[i].t;
        if (s->ops[i].begin)
            tlog_log_begin(log, s->ops[i].site);
        else
            tlog_log_end(log, s->ops[i].site);
    }
}

/* Every instance of the frame is the script's scope of its begin order:
 * its row's title, its start from the root's and its duration, exactly. */
static void check_instances(const tlog_frame *f, const script *s)
{
    size_t *open = calloc(s->n, sizeof *open), sp = 0, k = 0;
    uint64_t *end = calloc(s->n, sizeof *end);
    assert_true(open && end);
    for (size_t i = 0; i < s->n; i++)
        if (s->ops[i].begin)
            open[sp++] = i;
        else
            end[open[--sp]] = s->ops[i].t;
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    for (size_t i = 0; i < s->n; i++) {
        if (!s->ops[i].begin)
            continue;
        tlog_instance in = {.size = sizeof in};
        assert_int_equal(tlog_frame_get_instance(f, k++, &in), TLOG_OK);
        assert_string_equal(info_of(in.node).name, s->ops[i].site->name);
        assert_int_equal(in.start_ns, s->ops[i].t - s->ops[0].t);
        assert_int_equal(in.duration_ns, end[i] - s->ops[i].t);
    }
    assert_int_equal(fi.instances, k);
    free(open);
    free(end);
}

static void record_and_check(const script *s, uint32_t max_depth)
{
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.max_depth = max_depth;
    tlog_log *log = make_log(&c);
    play(log, s);
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    check_instances(f, s);
    tlog_frame_release(f);
    assert_int_equal(errors.count, 0);
    tlog_destroy(log);
}

/* The same shape in milliseconds: compact records only. */
static void short_scopes_resolve_exactly(void **state)
{
    (void)state;
    script s = {0};
    add(&s, true, site_named("Frame"), 1000);
    scope(&s, "A", 2000, 3500);
    add(&s, true, site_named("B"), 4000);
    scope(&s, "B1", 4100, 4200);
    scope(&s, "B1", 4300, 4301);
    add(&s, false, site_named("B"), 9000);
    add(&s, false, site_named("Frame"), 10 * NS_PER_MS);
    record_and_check(&s, 0);
    free(s.ops);
}

/* Durations of 2^32 ticks and more, around and inside short ones. */
static void scopes_longer_than_2_to_the_32_ticks_resolve_exactly(void **state)
{
    (void)state;
    script s = {0};
    const uint64_t t0 = 7;
    add(&s, true, site_named("Frame"), t0);
    add(&s, true, site_named("Long"), t0 + 1);
    scope(&s, "Short", t0 + 2, t0 + 3);
    scope(&s, "Exactly 2^32", t0 + 10, t0 + 10 + (1ull << 32));
    scope(&s, "Just under", t0 + 20 + (1ull << 32), t0 + 20 + (1ull << 32) + (1ull << 32) - 1);
    add(&s, false, site_named("Long"), t0 + 9 * S);
    scope(&s, "Short", t0 + 9 * S + 5, t0 + 9 * S + 6);
    add(&s, false, site_named("Frame"), t0 + 12 * S);
    record_and_check(&s, 0);
    free(s.ops);
}

/* Starts from 2^32 ticks and more after the frame's: scopes late in a long
 * frame, in one chunk. */
static void starts_far_into_a_long_frame_resolve_exactly(void **state)
{
    (void)state;
    script s = {0};
    add(&s, true, site_named("Frame"), 0);
    scope(&s, "Early", 1, 2);
    scope(&s, "Late", 5 * S, 5 * S + 1000);
    add(&s, true, site_named("Later"), 11 * S);
    scope(&s, "Inner", 11 * S + 1, 11 * S + 2);
    add(&s, false, site_named("Later"), 11 * S + 3);
    scope(&s, "Last", 40 * S, 40 * S + 1);
    add(&s, false, site_named("Frame"), 40 * S + 2);
    record_and_check(&s, 0);
    free(s.ops);
}

/* A frame of many chunks over a minute: each chunk counts its records'
 * starts from a base of its own. */
static void a_long_frame_of_many_chunks_resolves_exactly(void **state)
{
    (void)state;
    script s = {0};
    add(&s, true, site_named("Frame"), 0);
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t t = 1 + i * 3 * NS_PER_MS;
        add(&s, true, site_named("Step"), t);
        scope(&s, "Work", t + 1, t + 1 + i);
        add(&s, false, site_named("Step"), t + 2 * NS_PER_MS);
    }
    add(&s, false, site_named("Frame"), 61 * S);
    record_and_check(&s, 0);
    free(s.ops);
}

/* Nesting as deep as max_depth allows, with the deepest scopes long. */
static void deep_and_wide_records_resolve_exactly(void **state)
{
    (void)state;
    script s = {0};
    char names[64][8];
    for (int d = 0; d < 64; d++)
        snprintf(names[d], sizeof names[d], "D%d", d);
    for (int d = 0; d < 64; d++)
        add(&s, true, site_named(names[d]), (uint64_t)d);
    for (int d = 63; d >= 0; d--)
        add(&s, false, site_named(names[d]), (uint64_t)(64 - d) * S);
    record_and_check(&s, 64);
    free(s.ops);
}

/* Sites in static memory, on the heap and interned, far apart. */
static void sites_anywhere_in_memory_resolve_exactly(void **state)
{
    (void)state;
    static const tlog_site frame = {"Frame", "test_records.c", "sites", 1, TLOG_LEVEL_COARSE};
    tlog_site *heap = malloc(sizeof *heap);
    assert_non_null(heap);
    *heap = (tlog_site){"On the heap", "test_records.c", "sites", 2, TLOG_LEVEL_COARSE};
    script s = {0};
    add(&s, true, &frame, 0);
    add(&s, true, heap, 10);
    scope(&s, "Interned", 11, 12);
    add(&s, false, heap, 20);
    add(&s, true, heap, 30);
    add(&s, false, heap, 6 * S);
    add(&s, false, &frame, 7 * S);

    tlog_log *log = make_log(&(tlog_config){.size = sizeof(tlog_config), .clock = test_clock,
                                            .flags = TLOG_CONFIG_IGNORE_ENV});
    play(log, &s);
    tlog_frame *f = tlog_frame_latest(log);
    check_instances(f, &s);
    const tlog_node *h = child_named(tlog_frame_root(f), "On the heap");
    assert_ptr_equal(info_of(h).site, heap);
    assert_int_equal(info_of(h).count, 2);
    assert_ptr_equal(info_of(tlog_frame_root(f)).site, &frame);
    tlog_frame_release(f);
    tlog_destroy(log);
    free(heap);
    free(s.ops);
}

/* Work adopted over seconds fills more than one chunk, each with its own
 * base: handed over, it resolves as it was recorded. */
static void adopted_work_across_chunks_resolves_exactly(void **state)
{
    (void)state;
    tlog_log *log = make_log(&(tlog_config){.size = sizeof(tlog_config), .clock = test_clock,
                                            .flags = TLOG_CONFIG_IGNORE_ENV});
    enum { N = 6000 };
    begin_at(log, "Frame", 0);
    begin_at(log, "A", 1);
    tlog_token token = tlog_handoff(log);
    assert_int_equal(tlog_adopt_begin(&token), TLOG_OK);
    begin_at(log, "Long", 1.5);   /* its record is wide: 6 s */
    for (uint64_t i = 0; i < N; i++) {
        test_now = 2 * NS_PER_MS + i * NS_PER_MS;
        tlog_log_begin(log, site_named("c"));
        test_now += i % 7;
        tlog_log_end(log, site_named("c"));
    }
    end_at(log, "Long", 6002);
    assert_int_equal(tlog_adopt_end(&token), TLOG_OK);
    end_at(log, "A", 7000);
    end_at(log, "Frame", 7001);
    tlog_frame *f = tlog_frame_latest(log);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    /* Frame, A, the worker's row, Long, c */
    assert_int_equal(fi.instances, 2 + 1 + 1 + N);
    uint64_t seen = 0;
    for (size_t k = 0; k < fi.instances; k++) {
        tlog_instance in = {.size = sizeof in};
        assert_int_equal(tlog_frame_get_instance(f, k, &in), TLOG_OK);
        if (strcmp(info_of(in.node).name, "Long") == 0) {
            assert_int_equal(in.start_ns, 1500000);
            assert_int_equal(in.duration_ns, 6002 * NS_PER_MS - 1500000);
        }
        if (strcmp(info_of(in.node).name, "c") != 0)
            continue;
        assert_int_equal(in.start_ns, (int64_t)(2 * NS_PER_MS + seen * NS_PER_MS));
        assert_int_equal(in.duration_ns, seen % 7);
        seen++;
    }
    assert_int_equal(seen, N);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* Adopted work refused for the owner's budget is counted by its scopes,
 * however many slots their records took. */
static void refused_adopted_work_counts_scopes_not_slots(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.thread_budget = 8 * SCOPE_RECORD_BYTES;   /* less than any hand-off */
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    begin_at(log, "A", 1);
    tlog_token token = tlog_handoff(log);
    assert_int_equal(tlog_adopt_begin(&token), TLOG_OK);
    begin_at(log, "Long", 2);   /* wide: 5 s */
    begin_at(log, "c", 3);
    end_at(log, "c", 4);
    end_at(log, "Long", 5002);
    begin_at(log, "c", 5003);
    end_at(log, "c", 5004);
    assert_int_equal(tlog_adopt_end(&token), TLOG_EFULL);
    end_at(log, "A", 6000);
    end_at(log, "Frame", 6001);
    tlog_frame *f = tlog_frame_latest(log);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.scopes_dropped, 3 + 1);   /* and the worker's row */
    assert_int_equal(stats_of(log).scopes_dropped, 3 + 1);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* Ten children of one frame, one begun every `every` ticks and lasting
 * `each`, in a budget of 8 record slots: those kept. */
static uint64_t children_kept(uint64_t every, uint64_t each)
{
    tlog_config c = test_config(NULL);
    c.thread_budget = 8 * SCOPE_RECORD_BYTES;
    tlog_log *log = make_log(&c);
    test_now = 0;
    tlog_log_begin(log, site_named("Frame"));
    for (int i = 0; i < 10; i++) {
        test_now = (uint64_t)i * every;
        tlog_log_begin(log, site_named("Child"));
        test_now += each;
        tlog_log_end(log, site_named("Child"));
    }
    test_now = 10 * every;
    tlog_log_end(log, site_named("Frame"));
    tlog_frame *f = tlog_frame_latest(log);
    uint64_t kept = info_of(child_named(tlog_frame_root(f), "Child")).count;
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(kept + fi.scopes_dropped, 10);
    tlog_frame_release(f);
    tlog_destroy(log);
    return kept;
}

/* A record takes 16 bytes of the budget, a wide one 32: the root and seven
 * short children fill 8 slots; children of 5 s each take two, the last
 * begun its second slot past the budget (its end is never lost). */
static void wide_records_take_two_slots_of_the_budget(void **state)
{
    (void)state;
    assert_int_equal(children_kept(10 * NS_PER_MS, NS_PER_MS), 7);
    assert_int_equal(children_kept(10 * S, 5 * S), 4);
}

static uint64_t record_bytes(tlog_log *log)
{
    return stats_of(log).record_bytes;
}

/* Record memory of a frame of compact records: 16 bytes a scope, and the
 * chunks' and reserve's little more. */
static void compact_records_take_16_bytes_a_scope(void **state)
{
    (void)state;
    enum { N = 40000 };
    tlog_log *log = make_log(&(tlog_config){.size = sizeof(tlog_config), .clock = test_clock,
                                            .flags = TLOG_CONFIG_IGNORE_ENV});
    begin_at(log, "Frame", 0);
    for (int i = 0; i < N; i++) {
        test_now = (uint64_t)i * 1000;
        tlog_log_begin(log, site_named("Scope"));
        tlog_log_end(log, site_named("Scope"));
    }
    end_at(log, "Frame", 100);
    uint64_t bytes = record_bytes(log);
    assert_true(bytes >= (N + 1) * 16ull);
    assert_true(bytes < (N + 1) * 17ull);
    tlog_destroy(log);
}

#define CHUNK_BYTES (64 * 1024)

static void frame_of(tlog_log *log, int scopes)
{
    tlog_log_begin(log, site_named("Frame"));
    for (int i = 0; i < scopes; i++) {
        tlog_log_begin(log, site_named("Scope"));
        tlog_log_end(log, site_named("Scope"));
    }
    tlog_log_end(log, site_named("Frame"));
}

/* A frame begins with the chunks its thread's last frame took made ready
 * (that frame still unread holds its own): its scopes then take no memory
 * of their own. */
static void a_frame_finds_the_chunks_of_its_last_frame_ready(void **state)
{
    (void)state;
    tlog_log *log = make_log(&(tlog_config){.size = sizeof(tlog_config), .clock = test_clock,
                                            .flags = TLOG_CONFIG_IGNORE_ENV});
    frame_of(log, 10000);   /* three chunks */
    uint64_t first = record_bytes(log);
    tlog_log_begin(log, site_named("Frame"));
    uint64_t ready = record_bytes(log);
    assert_true(ready - first >= 3ull * CHUNK_BYTES);
    assert_true(ready - first < 4ull * CHUNK_BYTES);
    for (int i = 0; i < 10000; i++) {
        tlog_log_begin(log, site_named("Scope"));
        tlog_log_end(log, site_named("Scope"));
    }
    tlog_log_end(log, site_named("Frame"));
    assert_int_equal(record_bytes(log), ready);
    /* Both frames read: their chunks go back to the pool, and the next
     * frame makes none. */
    tlog_frame_release(tlog_frame_pop(log));
    tlog_frame_release(tlog_frame_pop(log));
    frame_of(log, 10000);
    assert_int_equal(record_bytes(log), ready);
    tlog_destroy(log);
}

/* What is made ready stays within pool_bytes. */
static void chunks_made_ready_stay_within_the_pool_bound(void **state)
{
    (void)state;
    tlog_log *log = make_log(&(tlog_config){.size = sizeof(tlog_config), .clock = test_clock,
                                            .flags = TLOG_CONFIG_IGNORE_ENV,
                                            .pool_bytes = CHUNK_BYTES + 4096});
    frame_of(log, 10000);
    uint64_t first = record_bytes(log);
    tlog_log_begin(log, site_named("Frame"));
    uint64_t ready = record_bytes(log);
    assert_true(ready - first >= CHUNK_BYTES);
    assert_true(ready - first < 2ull * CHUNK_BYTES);
    tlog_log_end(log, site_named("Frame"));
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_scopes_resolve_exactly),
        cmocka_unit_test(scopes_longer_than_2_to_the_32_ticks_resolve_exactly),
        cmocka_unit_test(starts_far_into_a_long_frame_resolve_exactly),
        cmocka_unit_test(a_long_frame_of_many_chunks_resolves_exactly),
        cmocka_unit_test(deep_and_wide_records_resolve_exactly),
        cmocka_unit_test(sites_anywhere_in_memory_resolve_exactly),
        cmocka_unit_test(adopted_work_across_chunks_resolves_exactly),
        cmocka_unit_test(refused_adopted_work_counts_scopes_not_slots),
        cmocka_unit_test(wide_records_take_two_slots_of_the_budget),
        cmocka_unit_test(compact_records_take_16_bytes_a_scope),
        cmocka_unit_test(a_frame_finds_the_chunks_of_its_last_frame_ready),
        cmocka_unit_test(chunks_made_ready_stay_within_the_pool_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
