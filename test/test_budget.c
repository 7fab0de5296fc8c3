/* Bounded memory: a full thread budget or stack drops new scopes (with their
 * children), counts them, and leaves what was recorded intact. */
#include <pthread.h>

#include "common.h"

static fixture *make_fixture(size_t budget_records, uint32_t max_depth)
{
    fixture *fx = calloc(1, sizeof *fx);
    tlog_config c = test_config(&fx->errors);
    c.thread_budget = budget_records * SCOPE_RECORD_BYTES;
    c.max_depth = max_depth;
    fx->log = make_log(&c);
    return fx;
}

static void free_fixture(fixture *fx)
{
    tlog_destroy(fx->log);
    free(fx);
}

static void full_budget_drops_new_scopes_and_counts_them(void **state)
{
    (void)state;
    fixture *fx = make_fixture(64, 0);
    begin_at(fx->log, "Frame", 0);
    for (int i = 0; i < 100; i++) {
        begin_at(fx->log, "Child", i);
        end_at(fx->log, "Child", i + 0.5);
    }
    end_at(fx->log, "Frame", 100);
    /* 64 records: the frame's own and 63 children. */
    assert_int_equal(stats_of(fx->log).scopes_dropped, 37);
    assert_int_equal(count_code(&fx->errors, TLOG_EFULL), 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    assert_int_equal(info_of(child_named(tlog_frame_root(f), "Child")).count, 63);
    assert_int_equal(info_of(tlog_frame_root(f)).total_ns, 100 * NS_PER_MS);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.scopes_dropped, 37);
    char *dump = dump_string(f, NULL);
    assert_non_null(strstr(dump, "# 37 scopes dropped"));
    free(dump);
    tlog_frame_release(f);
    free_fixture(fx);
}

static void dropped_scope_takes_its_children_along(void **state)
{
    (void)state;
    fixture *fx = make_fixture(4, 0);
    begin_at(fx->log, "Frame", 0);
    begin_at(fx->log, "A", 1);
    begin_at(fx->log, "A1", 2);
    end_at(fx->log, "A1", 3);
    begin_at(fx->log, "B", 4);   /* takes the last record */
    begin_at(fx->log, "C", 5);   /* dropped */
    begin_at(fx->log, "C1", 6);  /* dropped with its parent */
    end_at(fx->log, "C1", 7);
    end_at(fx->log, "C", 8);
    end_at(fx->log, "B", 9);
    end_at(fx->log, "A", 10);
    end_at(fx->log, "Frame", 11);
    assert_int_equal(stats_of(fx->log).scopes_dropped, 2);
    assert_int_equal(stats_of(fx->log).mismatched_ends + stats_of(fx->log).unmatched_ends, 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_node *a = child_named(tlog_frame_root(f), "A");
    const tlog_node *b = child_named(a, "B");
    assert_non_null(child_named(a, "A1"));
    assert_non_null(b);
    assert_null(tlog_node_first_child(b));
    assert_int_equal(info_of(b).total_ns, 5 * NS_PER_MS);
    tlog_frame_release(f);
    free_fixture(fx);
}

static void next_frame_has_the_whole_budget_again(void **state)
{
    (void)state;
    fixture *fx = make_fixture(8, 0);
    for (int frame = 0; frame < 3; frame++) {
        double t0 = frame * 100;
        begin_at(fx->log, "Frame", t0);
        for (int i = 0; i < 7; i++) {
            begin_at(fx->log, "Child", t0 + i);
            end_at(fx->log, "Child", t0 + i + 1);
        }
        end_at(fx->log, "Frame", t0 + 50);
        tlog_frame *f = tlog_frame_latest(fx->log);
        assert_int_equal(info_of(child_named(tlog_frame_root(f), "Child")).count, 7);
        tlog_frame_release(f);
    }
    assert_int_equal(stats_of(fx->log).scopes_dropped, 0);
    free_fixture(fx);
}

static void scopes_past_max_depth_are_dropped_and_ends_still_balance(void **state)
{
    (void)state;
    fixture *fx = make_fixture(1024, 4);
    const char *names[] = {"L0", "L1", "L2", "L3", "L4", "L5"};
    for (int d = 0; d < 6; d++)
        begin_at(fx->log, names[d], d);
    assert_int_equal(tlog_depth(fx->log), 6);
    assert_int_equal(tlog_insert(fx->log, site_named("deep"), TLOG_KIND_CONTROL, 0, 1),
                     TLOG_EDEPTH);
    for (int d = 5; d >= 0; d--)
        end_at(fx->log, names[d], 10 + (5 - d));
    assert_int_equal(stats_of(fx->log).depth_overflows, 3);
    assert_int_equal(count_code(&fx->errors, TLOG_EDEPTH), 1);
    assert_int_equal(stats_of(fx->log).mismatched_ends + stats_of(fx->log).unmatched_ends, 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_node *n = tlog_frame_root(f);
    for (int d = 1; d < 4; d++)
        n = child_named(n, names[d]);
    assert_non_null(n);
    assert_null(tlog_node_first_child(n));
    tlog_frame_release(f);
    free_fixture(fx);
}

static void insert_into_full_budget_fails_cleanly(void **state)
{
    (void)state;
    fixture *fx = make_fixture(4, 0);
    begin_at(fx->log, "Frame", 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tlog_insert(fx->log, site_named("x"), TLOG_KIND_EXECUTION, 0, 1),
                         TLOG_OK);
    assert_int_equal(tlog_insert(fx->log, site_named("x"), TLOG_KIND_EXECUTION, 0, 1),
                     TLOG_EFULL);
    end_at(fx->log, "Frame", 5);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_int_equal(info_of(child_named(tlog_frame_root(f), "x")).count, 3);
    tlog_frame_release(f);
    free_fixture(fx);
}

static void insert_needs_an_open_scope(void **state)
{
    (void)state;
    fixture *fx = make_fixture(64, 0);
    assert_int_equal(tlog_insert(fx->log, site_named("x"), TLOG_KIND_CONTROL, 0, 1),
                     TLOG_ENOTOPEN);
    assert_int_equal(tlog_insert(fx->log, NULL, TLOG_KIND_CONTROL, 0, 1), TLOG_EINVAL);
    begin_at(fx->log, "Frame", 0);
    assert_int_equal(tlog_insert(fx->log, site_named("x"), TLOG_KIND_CONTROL, 5, 1),
                     TLOG_EINVAL);
    end_at(fx->log, "Frame", 1);
    free_fixture(fx);
}

static void handed_off_work_is_bounded_by_the_owner_budget(void **state)
{
    (void)state;
    const size_t budget = 128 * SCOPE_RECORD_BYTES;
    fixture *fx = make_fixture(128, 0);
    begin_at(fx->log, "Frame", 0);
    tlog_token token = tlog_handoff(fx->log);
    uint64_t before = stats_of(fx->log).record_bytes;
    int accepted = 0, refused = 0;
    for (int i = 0; i < 1000; i++) {
        int rc = tlog_insert_to(&token, site_named("Handed"), TLOG_KIND_EXECUTION, 0, 1);
        accepted += rc == TLOG_OK;
        refused += rc == TLOG_EFULL;
    }
    assert_true(accepted > 0);
    assert_int_equal(accepted + refused, 1000);
    assert_int_equal(count_code(&fx->errors, TLOG_EFULL), 1);
    /* What was handed over fits in the budget, in bytes. */
    uint64_t held = stats_of(fx->log).record_bytes - before;
    assert_true(held <= budget);
    assert_true(held > budget / 2);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_int_equal(info_of(child_named(tlog_frame_root(f), "Handed")).count, accepted);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.scopes_dropped, refused);
    tlog_frame_release(f);
    assert_int_equal(stats_of(fx->log).scopes_dropped, refused);
    free_fixture(fx);
}

static void ends_past_max_depth_are_matched_by_title(void **state)
{
    (void)state;
    fixture *fx = make_fixture(1024, 2);
    begin_at(fx->log, "R", 0);
    begin_at(fx->log, "A", 10);
    begin_at(fx->log, "B", 20);   /* past max_depth: dropped */
    end_at(fx->log, "A", 30);     /* B's end never comes */
    end_at(fx->log, "R", 100);
    tlog_stats s = stats_of(fx->log);
    assert_int_equal(s.mismatched_ends, 1);
    assert_non_null(strstr(fx->errors.last, "closed 1 inner scope(s)"));
    assert_int_equal(s.depth_overflows, 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    tlog_node_info a = info_of(child_named(tlog_frame_root(f), "A"));
    assert_int_equal(a.total_ns, 20 * NS_PER_MS);
    assert_int_equal(a.flags, 0);
    assert_int_equal(info_of(tlog_frame_root(f)).flags, 0);
    tlog_frame_release(f);

    /* Recursion past the limit: every end pairs with its own begin. */
    begin_at(fx->log, "R", 200);
    for (int d = 0; d < 6; d++)
        begin_at(fx->log, "f", 201 + d);
    assert_int_equal(tlog_depth(fx->log), 7);
    for (int d = 0; d < 6; d++)
        end_at(fx->log, "f", 210 + d);
    end_at(fx->log, "R", 220);
    assert_int_equal(stats_of(fx->log).mismatched_ends, 1);
    f = tlog_frame_latest(fx->log);
    assert_int_equal(info_of(child_named(tlog_frame_root(f), "f")).total_ns, 14 * NS_PER_MS);
    tlog_frame_release(f);
    free_fixture(fx);
}

/* A begin whose end never comes (a loop's) fills the stack with one title:
 * the report at max_depth names it and where it began. */
static void forgotten_end_is_named_at_max_depth(void **state)
{
    (void)state;
    fixture *fx = make_fixture(1024, 8);
    begin_at(fx->log, "Frame", 0);
    for (int k = 0; k < 10; k++)
        begin_at(fx->log, "Update", 1 + k);   /* its end is missing */
    assert_int_equal(fx->errors.count, 1);
    assert_int_equal(fx->errors.codes[0], TLOG_EDEPTH);
    assert_non_null(strstr(fx->errors.last, "\"Update\" (test.c:1) is open 7 times"));
    assert_non_null(strstr(fx->errors.last, "is its end missing?"));
    free_fixture(fx);
}

/* Deeper than max_depth + 65536, the titles are no longer kept: said once,
 * and ends still balance by count, so the frame completes. */
static void nesting_past_the_kept_titles_is_said_and_balances(void **state)
{
    (void)state;
    fixture *fx = make_fixture(1024, 2);
    enum { DEEP = 65536 + 10 };
    begin_at(fx->log, "R", 0);
    begin_at(fx->log, "A", 1);
    for (int d = 0; d < DEEP; d++)
        begin_at(fx->log, "f", 2);
    assert_int_equal(fx->errors.count, 2);
    assert_int_equal(count_code(&fx->errors, TLOG_EDEPTH), 2);
    assert_non_null(strstr(fx->errors.last, "65537 levels past max_depth (2)"));
    assert_non_null(strstr(fx->errors.last, "matched by count, not by title"));
    for (int d = 0; d < DEEP; d++)
        end_at(fx->log, "f", 3);
    end_at(fx->log, "A", 4);
    end_at(fx->log, "R", 5);
    assert_int_equal(fx->errors.count, 2);
    tlog_stats s = stats_of(fx->log);
    assert_int_equal(s.depth_overflows, DEEP);
    assert_int_equal(s.mismatched_ends + s.unmatched_ends, 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    assert_int_equal(info_of(child_named(tlog_frame_root(f), "A")).total_ns, 3 * NS_PER_MS);
    tlog_frame_release(f);
    free_fixture(fx);
}

/* An arena that hands out `budget` large blocks (chunks, reserves), then
 * refuses them; small blocks (hand-off work) it always has. */
typedef struct stingy {
    int budget;
    int live;
} stingy;

static void *stingy_alloc(void *user, size_t bytes)
{
    stingy *s = user;
    if (bytes > 4096) {
        if (s->budget == 0)
            return NULL;
        s->budget--;
    }
    s->live++;
    return malloc(bytes);
}

static void stingy_free(void *user, void *block)
{
    stingy *s = user;
    s->live--;
    free(block);
}

/* The records a chunk holds (64 KiB of them), and more scopes than that. */
#define CHUNK_RECORDS (64 * 1024 / SCOPE_RECORD_BYTES)
#define SCOPES_PAST_A_CHUNK (CHUNK_RECORDS * 3 / 2)

static tlog_log *stingy_log(stingy *mem, collected_errors *errors, uint32_t max_frames)
{
    tlog_config c = test_config(errors);
    c.record_alloc = stingy_alloc;
    c.record_free = stingy_free;
    c.alloc_user = mem;
    c.max_frames = max_frames;
    return make_log(&c);
}

/* Record memory that fails while `failing` is set. */
static void *failing_alloc(void *user, size_t bytes)
{
    return *(bool *)user ? NULL : malloc(bytes);
}

static void plain_free(void *user, void *block)
{
    (void)user;
    free(block);
}

/* A frame that begins when no reserve can be made for the ends of its
 * scopes records its root alone: a later end that found no memory would
 * be lost, and its scope's children hung under another row. Its scopes
 * are dropped, counted, and the cause is said once. */
static void frame_without_a_reserve_records_its_root_alone(void **state)
{
    (void)state;
    bool failing = false;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.record_alloc = failing_alloc;
    c.record_free = plain_free;
    c.alloc_user = &failing;
    tlog_log *log = make_log(&c);
    failing = true;   /* the reserve of the frame begun now */
    begin_at(log, "Frame", 0);
    failing = false;
    for (int i = 0; i < 10; i++) {
        begin_at(log, "P", 1);
        begin_at(log, "C", 2);
        end_at(log, "C", 3);
        end_at(log, "P", 4);
    }
    end_at(log, "Frame", 5);
    tlog_stats s = stats_of(log);
    assert_int_equal(s.scopes_dropped, 20);
    assert_true(s.alloc_failures >= 1);
    assert_int_equal(count_code(&errors, TLOG_ENOMEM), 1);
    assert_int_equal(count_code(&errors, TLOG_EFULL), 0);
    assert_non_null(strstr(errors.last, "no reserve"));
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    assert_int_equal(child_count(tlog_frame_root(f)), 0);
    assert_int_equal(info_of(tlog_frame_root(f)).total_ns, 5 * NS_PER_MS);
    tlog_frame_release(f);
    /* The next frame has its reserve again, and records whole. */
    begin_at(log, "Frame", 10);
    begin_at(log, "P", 11);
    end_at(log, "P", 12);
    end_at(log, "Frame", 13);
    f = tlog_frame_latest(log);
    assert_non_null(child_named(tlog_frame_root(f), "P"));
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void out_of_record_memory_keeps_open_scopes_and_hand_offs_in_place(void **state)
{
    (void)state;
    stingy mem = {.budget = 2}; /* the reserve and one chunk of CHUNK_RECORDS */
    collected_errors errors = {0};
    tlog_log *log = stingy_log(&mem, &errors, 0);
    begin_at(log, "Frame", 0);
    begin_at(log, "A", 1);
    for (int i = 0; i < SCOPES_PAST_A_CHUNK; i++) {
        begin_at(log, "c", 2);
        end_at(log, "c", 2);
    }
    tlog_token token = tlog_handoff(log); /* A, after memory ran out */
    assert_int_equal(tlog_insert_to(&token, site_named("into A"), TLOG_KIND_EXECUTION, 1, 2),
                     TLOG_OK);
    end_at(log, "A", 3);
    end_at(log, "Frame", 4);
    tlog_stats s = stats_of(log);
    assert_int_equal(s.alloc_failures, 1);
    assert_int_equal(count_code(&errors, TLOG_ENOMEM), 1);
    /* CHUNK_RECORDS records fill the chunk, the next end goes to the reserve. */
    assert_int_equal(s.scopes_dropped, SCOPES_PAST_A_CHUNK - (CHUNK_RECORDS + 1));
    tlog_frame *f = tlog_frame_latest(log);
    const tlog_node *a = child_named(tlog_frame_root(f), "A");
    assert_non_null(a);
    assert_int_equal(info_of(a).total_ns, 2 * NS_PER_MS);
    assert_int_equal(info_of(child_named(a, "c")).count, CHUNK_RECORDS + 1);
    assert_non_null(child_named(a, "into A"));
    assert_int_equal(info_of(tlog_frame_root(f)).total_ns, 4 * NS_PER_MS);
    tlog_frame_release(f);
    tlog_destroy(log);
    assert_int_equal(mem.live, 0);
    tlog_config half = {.size = sizeof half, .record_alloc = stingy_alloc};
    assert_int_equal(tlog_create(&half, &log), TLOG_EINVAL);
}

static void out_of_record_memory_inside_adopted_work(void **state)
{
    (void)state;
    stingy mem = {.budget = 2};
    collected_errors errors = {0};
    tlog_log *log = stingy_log(&mem, &errors, 0);
    begin_at(log, "Frame", 0);
    begin_at(log, "A", 1);
    tlog_token token = tlog_handoff(log);
    assert_int_equal(tlog_adopt_begin(&token), TLOG_OK); /* this thread works for A */
    for (int i = 0; i < SCOPES_PAST_A_CHUNK; i++) {
        begin_at(log, "c", 2);
        end_at(log, "c", 2);
    }
    mem.budget = 100; /* memory is back for handing the work over */
    assert_int_equal(tlog_adopt_end(&token), TLOG_OK);
    begin_at(log, "after", 3); /* dropped: new scopes wait for the next frame */
    end_at(log, "after", 3);
    end_at(log, "A", 4);
    end_at(log, "Frame", 5);
    assert_int_equal(stats_of(log).alloc_failures, 1);
    tlog_frame *f = tlog_frame_latest(log);
    const tlog_node *a = child_named(tlog_frame_root(f), "A");
    assert_int_equal(info_of(a).total_ns, 3 * NS_PER_MS);
    assert_null(child_named(a, "after"));
    const tlog_node *row = tlog_node_first_child(a);
    assert_non_null(row);
    assert_int_equal(info_of(row).kind, TLOG_KIND_EXECUTION);
    assert_int_equal(info_of(child_named(row, "c")).count, CHUNK_RECORDS + 1);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.scopes_dropped, SCOPES_PAST_A_CHUNK - (CHUNK_RECORDS + 1) + 1);
    tlog_frame_release(f);
    tlog_destroy(log);
    assert_int_equal(mem.live, 0);
}

typedef struct late_adopter {
    tlog_log *log;
    stingy *mem;
    tlog_token token;
    int adopt_rc, end_rc;
} late_adopter;

static void *adopt_when_memory_is_gone(void *arg)
{
    late_adopter *w = arg;
    begin_at(w->log, "Own frame", 0); /* sets aside this thread's reserve */
    end_at(w->log, "Own frame", 1);
    w->mem->budget = 0;
    w->adopt_rc = tlog_adopt_begin(&w->token);
    for (int i = 0; i < 300; i++) {
        begin_at(w->log, "c", 2);
        end_at(w->log, "c", 2);
    }
    w->mem->budget = 100;
    w->end_rc = tlog_adopt_end(&w->token);
    return NULL;
}

static void adopting_with_memory_gone_drops_and_counts_everything(void **state)
{
    (void)state;
    stingy mem = {.budget = 100};
    collected_errors errors = {0};
    tlog_log *log = stingy_log(&mem, &errors, 4);
    begin_at(log, "Frame", 0);
    late_adopter w = {log, &mem, tlog_handoff(log), -1, -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, adopt_when_memory_is_gone, &w), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(w.adopt_rc, TLOG_OK);
    assert_int_equal(w.end_rc, TLOG_OK);
    end_at(log, "Frame", 3);
    tlog_frame *f = tlog_frame_latest(log);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    const tlog_node *row = tlog_node_first_child(tlog_frame_root(f));
    assert_non_null(row);
    const tlog_node *kept = child_named(row, "c");
    uint64_t recorded = kept ? info_of(kept).count : 0;
    assert_int_equal(recorded + fi.scopes_dropped, 300); /* nothing lost unseen */
    assert_int_equal(count_code(&errors, TLOG_ENOMEM), 1);
    tlog_frame_release(f);
    tlog_destroy(log);
    assert_int_equal(mem.live, 0);
}

/* A burst: threads each record a frame of many chunks at once. */
#define BURST_THREADS 8
#define BURST_SCOPES 40000   /* 640 KB of records each: ten chunks */

static void *record_big_frame(void *arg)
{
    tlog_log *log = arg;
    tlog_log_begin(log, site_named("Burst frame"));
    for (int i = 0; i < BURST_SCOPES; i++) {
        tlog_log_begin(log, site_named("Burst scope"));
        tlog_log_end(log, site_named("Burst scope"));
    }
    tlog_log_end(log, site_named("Burst frame"));
    return NULL;
}

/* Record memory once the burst's threads are gone and its frames read. */
static uint64_t after_burst(size_t pool_bytes, uint64_t *peak)
{
    tlog_config c = test_config(NULL);
    c.pool_bytes = pool_bytes;
    tlog_log *log = make_log(&c);
    pthread_t th[BURST_THREADS];
    for (int i = 0; i < BURST_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, record_big_frame, log), 0);
    for (int i = 0; i < BURST_THREADS; i++)
        pthread_join(th[i], NULL);
    tlog_stats s = {.size = sizeof s};
    tlog_get_stats(log, &s);
    *peak = s.record_bytes;
    tlog_frame *f;
    int frames = 0;
    while ((f = tlog_frame_pop(log)) != NULL) {   /* resolved: records given back */
        frames++;
        tlog_frame_release(f);
    }
    assert_int_equal(frames, BURST_THREADS);
    tlog_get_stats(log, &s);
    tlog_destroy(log);
    return s.record_bytes;
}

static void pool_returns_to_its_bound_after_a_burst(void **state)
{
    (void)state;
    uint64_t peak;
    uint64_t left = after_burst((size_t)1 << 20, &peak);
    assert_true(peak > (uint64_t)BURST_THREADS * BURST_SCOPES * SCOPE_RECORD_BYTES);
    assert_true(left <= (uint64_t)1 << 20);
    assert_true(left > 0);   /* what fits is kept for the next frames */
}

static void pool_without_bound_keeps_everything(void **state)
{
    (void)state;
    uint64_t peak;
    uint64_t left = after_burst(SIZE_MAX, &peak);
    assert_true(left >= (uint64_t)BURST_THREADS * BURST_SCOPES * SCOPE_RECORD_BYTES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_budget_drops_new_scopes_and_counts_them),
        cmocka_unit_test(pool_returns_to_its_bound_after_a_burst),
        cmocka_unit_test(pool_without_bound_keeps_everything),
        cmocka_unit_test(dropped_scope_takes_its_children_along),
        cmocka_unit_test(next_frame_has_the_whole_budget_again),
        cmocka_unit_test(scopes_past_max_depth_are_dropped_and_ends_still_balance),
        cmocka_unit_test(insert_into_full_budget_fails_cleanly),
        cmocka_unit_test(insert_needs_an_open_scope),
        cmocka_unit_test(handed_off_work_is_bounded_by_the_owner_budget),
        cmocka_unit_test(ends_past_max_depth_are_matched_by_title),
        cmocka_unit_test(forgotten_end_is_named_at_max_depth),
        cmocka_unit_test(nesting_past_the_kept_titles_is_said_and_balances),
        cmocka_unit_test(out_of_record_memory_keeps_open_scopes_and_hand_offs_in_place),
        cmocka_unit_test(frame_without_a_reserve_records_its_root_alone),
        cmocka_unit_test(out_of_record_memory_inside_adopted_work),
        cmocka_unit_test(adopting_with_memory_gone_drops_and_counts_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
