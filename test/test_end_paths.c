/* Which way an end goes. The short way writes the record where the
 * innermost scope is, with no search of the stack. An explicit pair's end
 * (TIMERLOG_BEGIN / TIMERLOG_END: a site at each end) goes the way the
 * end of a scope with one site goes: the short way but for a frame's root
 * and a frame's first record (which takes a chunk). A repair and a dropped
 * scope go the slow way. Either way the record is the begin's. Counts the
 * slow ends through the hook of a -Dtest_hooks=true build. */
#include "common.h"

uint64_t tlog_test_slow_ends(void);

static const tlog_site frame_site = {"Frame", "pairs.c", "f", 1, TLOG_LEVEL_COARSE};
static const tlog_site begin_site = {"Upload", "pairs.c", "f", 2, TLOG_LEVEL_COARSE};
static const tlog_site end_site = {"Upload", "pairs.c", "f", 3, TLOG_LEVEL_COARSE};
/* The same title, its text at an address of its own. */
static char upload_text[] = "Upload";
static const tlog_site end_copy_site = {upload_text, "pairs.c", "f", 4, TLOG_LEVEL_COARSE};
static const tlog_site other_site = {"Download", "pairs.c", "f", 5, TLOG_LEVEL_COARSE};

enum { PAIRS = 100 };

/* A frame of PAIRS pairs begun at begin_site, each 1 ms, ended by
 * `closing`; the ends that went the slow way. */
static uint64_t record_pairs(tlog_log *log, const tlog_site *closing)
{
    uint64_t slow = tlog_test_slow_ends();
    at_ms(0);
    tlog_log_begin(log, &frame_site);
    for (int i = 0; i < PAIRS; i++) {
        at_ms(1 + 2 * i);
        tlog_log_begin(log, &begin_site);
        at_ms(2 + 2 * i);
        tlog_log_end(log, closing);
    }
    at_ms(1000);
    tlog_log_end(log, &frame_site);
    return tlog_test_slow_ends() - slow;
}

/* The frame's one row of pairs, from their begin's site; their time
 * exact on the test clock. */
static void check_pairs(tlog_log *log, bool exact)
{
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    assert_int_equal(child_count(tlog_frame_root(f)), 1);
    const tlog_node *pairs = child_named(tlog_frame_root(f), "Upload");
    assert_non_null(pairs);
    tlog_node_info info = info_of(pairs);
    assert_int_equal(info.count, PAIRS);
    assert_ptr_equal(info.site, &begin_site);
    if (exact)
        assert_int_equal(info.total_ns, PAIRS * NS_PER_MS);
    tlog_frame_release(f);
}

/* The slow ends of a frame of pairs with one site (the frame's root and
 * first record), the frame checked. */
static uint64_t slow_ends_of_one_site(tlog_log *log, bool exact)
{
    uint64_t slow = record_pairs(log, &begin_site);
    assert_true(slow <= 2);
    check_pairs(log, exact);
    return slow;
}

static void explicit_pairs_take_the_short_way_on_an_application_clock(void **state)
{
    fixture *fx = *state;
    uint64_t slow = slow_ends_of_one_site(fx->log, true);
    assert_int_equal(record_pairs(fx->log, &end_site), slow);
    assert_int_equal(fx->errors.count, 0);
    check_pairs(fx->log, true);
}

static void explicit_pairs_take_the_short_way_on_the_hardware_clock(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.clock = NULL;
    tlog_log *log = make_log(&c);
    uint64_t slow = slow_ends_of_one_site(log, false);
    assert_int_equal(record_pairs(log, &end_site), slow);
    assert_int_equal(errors.count, 0);
    check_pairs(log, false);
    tlog_destroy(log);
}

static void an_end_whose_title_is_a_copy_takes_the_short_way(void **state)
{
    fixture *fx = *state;
    uint64_t slow = slow_ends_of_one_site(fx->log, true);
    assert_int_equal(record_pairs(fx->log, &end_copy_site), slow);
    check_pairs(fx->log, true);
}

static void an_end_of_another_title_takes_the_slow_way_and_repairs(void **state)
{
    fixture *fx = *state;
    uint64_t slow = tlog_test_slow_ends();
    at_ms(0);
    tlog_log_begin(fx->log, &frame_site);
    tlog_log_begin(fx->log, &begin_site);
    at_ms(1);
    tlog_log_begin(fx->log, &other_site);
    at_ms(3);
    tlog_log_end(fx->log, &end_site);   /* Download is innermost: repaired */
    assert_int_equal(tlog_test_slow_ends() - slow, 1);
    assert_int_equal(count_code(&fx->errors, TLOG_EMISMATCH), 1);
    at_ms(4);
    tlog_log_end(fx->log, &frame_site);
    tlog_frame *f = tlog_frame_pop(fx->log);
    const tlog_node *up = child_named(tlog_frame_root(f), "Upload");
    const tlog_node *down = child_named(up, "Download");
    assert_non_null(down);
    assert_int_equal(info_of(up).total_ns, 3 * NS_PER_MS);
    assert_int_equal(info_of(down).total_ns, 2 * NS_PER_MS);
    assert_int_equal(info_of(down).flags & TLOG_NODE_REPAIRED, TLOG_NODE_REPAIRED);
    tlog_frame_release(f);
}

/* A frame of pairs ended by `closing` on a log whose budget drops most of
 * them: its slow ends, less the dropped scopes; the frame checked. */
static uint64_t slow_ends_past_dropped(const tlog_site *closing)
{
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.thread_budget = 16 * SCOPE_RECORD_BYTES;
    tlog_log *log = make_log(&c);
    uint64_t slow = record_pairs(log, closing);
    tlog_stats s = stats_of(log);
    assert_true(s.scopes_dropped > PAIRS / 2);
    assert_true(s.scopes_dropped < PAIRS);
    tlog_frame *f = tlog_frame_pop(log);
    const tlog_node *pairs = child_named(tlog_frame_root(f), "Upload");
    assert_non_null(pairs);
    assert_int_equal(info_of(pairs).count, PAIRS - s.scopes_dropped);
    tlog_frame_release(f);
    tlog_destroy(log);
    return slow - s.scopes_dropped;
}

static void ends_of_dropped_scopes_take_the_slow_way(void **state)
{
    (void)state;
    uint64_t one_site = slow_ends_past_dropped(&begin_site);
    assert_true(one_site <= 2);
    assert_int_equal(slow_ends_past_dropped(&end_site), one_site);
}

typedef struct told {
    int begins, ends;
    uint64_t instance;        /* the last begin's */
    bool ends_match;          /* every end had its begin's site and number */
} told;

static void on_begin(void *user, const tlog_scope_event *e)
{
    told *t = user;
    if (e->site != &begin_site)
        return;
    t->begins++;
    t->instance = e->instance;
}

static void on_end(void *user, const tlog_scope_event *e)
{
    told *t = user;
    if (e->site == &frame_site)
        return;
    t->ends++;
    t->ends_match &= e->site == &begin_site && e->instance == t->instance;
}

static void subscribers_are_told_of_an_explicit_pairs_end(void **state)
{
    fixture *fx = *state;
    told t = {.ends_match = true};
    tlog_subscriber sub = {.size = sizeof sub, .user = &t, .scope_begin = on_begin,
                           .scope_end = on_end};
    tlog_subscription *s = NULL;
    uint64_t slow = slow_ends_of_one_site(fx->log, true);
    assert_int_equal(tlog_subscribe(fx->log, &sub, &s), TLOG_OK);
    assert_int_equal(record_pairs(fx->log, &end_site), slow);
    tlog_unsubscribe(s);
    assert_int_equal(t.begins, PAIRS);
    assert_int_equal(t.ends, PAIRS);
    assert_true(t.ends_match);
    check_pairs(fx->log, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(explicit_pairs_take_the_short_way_on_an_application_clock,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test(explicit_pairs_take_the_short_way_on_the_hardware_clock),
        cmocka_unit_test_setup_teardown(an_end_whose_title_is_a_copy_takes_the_short_way,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(an_end_of_another_title_takes_the_slow_way_and_repairs,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test(ends_of_dropped_scopes_take_the_slow_way),
        cmocka_unit_test_setup_teardown(subscribers_are_told_of_an_explicit_pairs_end,
                                        fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
