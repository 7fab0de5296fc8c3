/* Nesting errors: each is reported once, counted, and repaired so that the
 * tree stays well-formed and no recorded timing is lost. */
#include <pthread.h>

#include <unistd.h>

#include "common.h"


static void end_of_outer_scope_closes_inner_ones_at_that_instant(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    begin_at(fx->log, "A", 1);
    begin_at(fx->log, "B", 2);
    begin_at(fx->log, "C", 3);
    end_at(fx->log, "A", 10); /* B and C are still open */
    assert_int_equal(fx->errors.count, 1);
    assert_int_equal(count_code(&fx->errors, TLOG_EMISMATCH), 1);
    assert_int_equal(tlog_depth(fx->log), 1);
    end_at(fx->log, "Frame", 20);

    tlog_stats s = stats_of(fx->log);
    assert_int_equal(s.mismatched_ends, 1);
    assert_int_equal(s.scopes_repaired, 2);

    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    const tlog_node *a = child_named(tlog_frame_root(f), "A");
    const tlog_node *b = child_named(a, "B");
    const tlog_node *c = child_named(b, "C");
    assert_non_null(c);
    assert_int_equal(info_of(a).total_ns, 9 * NS_PER_MS);
    assert_int_equal(info_of(a).flags & TLOG_NODE_REPAIRED, 0);
    assert_int_equal(info_of(b).total_ns, 8 * NS_PER_MS);
    assert_int_equal(info_of(c).total_ns, 7 * NS_PER_MS);
    assert_int_equal(info_of(b).flags & TLOG_NODE_REPAIRED, TLOG_NODE_REPAIRED);
    assert_int_equal(info_of(c).flags & TLOG_NODE_REPAIRED, TLOG_NODE_REPAIRED);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.scopes_repaired, 2);
    char *dump = dump_string(f, NULL);
    assert_non_null(strstr(dump, "# 2 scopes closed by a repair rule\n"));
    free(dump);
    tlog_frame_release(f);
}

static void end_with_nothing_open_is_ignored(void **state)
{
    fixture *fx = *state;
    end_at(fx->log, "Nothing", 1);
    assert_int_equal(count_code(&fx->errors, TLOG_ENOTOPEN), 1);
    assert_int_equal(stats_of(fx->log).unmatched_ends, 1);
    assert_int_equal(tlog_frame_count(fx->log), 0);
    assert_int_equal(tlog_depth(fx->log), 0);
}

static void end_of_a_scope_that_is_not_open_keeps_the_others(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    begin_at(fx->log, "A", 1);
    end_at(fx->log, "Z", 2);
    assert_int_equal(count_code(&fx->errors, TLOG_ENOTOPEN), 1);
    assert_int_equal(tlog_depth(fx->log), 2);
    end_at(fx->log, "A", 3);
    end_at(fx->log, "Frame", 4);
    assert_int_equal(fx->errors.count, 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_node *a = child_named(tlog_frame_root(f), "A");
    assert_non_null(a);
    assert_int_equal(info_of(a).total_ns, 2 * NS_PER_MS);
    assert_int_equal(stats_of(fx->log).scopes_repaired, 0);
    tlog_frame_release(f);
}

static void ending_the_frame_closes_everything_inside(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    begin_at(fx->log, "A", 1);
    begin_at(fx->log, "B", 2);
    end_at(fx->log, "Frame", 5);
    assert_int_equal(count_code(&fx->errors, TLOG_EMISMATCH), 1);
    assert_int_equal(tlog_depth(fx->log), 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    const tlog_node *b = child_named(child_named(tlog_frame_root(f), "A"), "B");
    assert_int_equal(info_of(b).total_ns, 3 * NS_PER_MS);
    tlog_frame_release(f);
    /* The next frame starts clean. */
    begin_at(fx->log, "Frame", 10);
    end_at(fx->log, "Frame", 11);
    assert_int_equal(fx->errors.count, 1);
    assert_int_equal(tlog_frame_count(fx->log), 2);
}

static void different_sites_with_the_same_title_match(void **state)
{
    fixture *fx = *state;
    static const tlog_site open_site = {"Pair", "x.c", "f", 1, 1};
    static const tlog_site close_site = {"Pair", "x.c", "f", 9, 1};
    begin_at(fx->log, "Frame", 0);
    tlog_log_begin(fx->log, &open_site);
    at_ms(2);
    tlog_log_end(fx->log, &close_site);
    end_at(fx->log, "Frame", 3);
    assert_int_equal(fx->errors.count, 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(child_named(tlog_frame_root(f), "Pair"));
    tlog_frame_release(f);
}

static tlog_log *exit_log;

static void *exit_inside_scopes(void *arg)
{
    (void)arg;
    tlog_thread_name("Leaver");
    begin_at(exit_log, "Frame", 0);
    begin_at(exit_log, "Unfinished", 1);
    at_ms(4);
    return NULL; /* both scopes still open */
}

static void thread_exit_closes_open_scopes_and_keeps_the_frame(void **state)
{
    fixture *fx = *state;
    exit_log = fx->log;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, exit_inside_scopes, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(count_code(&fx->errors, TLOG_ETHREADEXIT), 1);
    assert_non_null(strstr(fx->errors.last, "ended with 2 scope(s) open"));
    tlog_stats s = stats_of(fx->log);
    assert_int_equal(s.open_at_thread_exit, 1);
    assert_int_equal(s.scopes_repaired, 2);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    tlog_node_info root = info_of(tlog_frame_root(f));
    assert_string_equal(root.thread_name, "Leaver");
    assert_int_equal(root.total_ns, 4 * NS_PER_MS);
    const tlog_node *u = child_named(tlog_frame_root(f), "Unfinished");
    assert_int_equal(info_of(u).total_ns, 3 * NS_PER_MS);
    tlog_frame_release(f);
}

static void default_handler_prints_a_kind_once_then_counts(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    fflush(stderr);
    int saved = dup(fileno(stderr));
    FILE *capture = tmpfile();
    dup2(fileno(capture), fileno(stderr));
    for (int i = 0; i < 5; i++)
        end_at(log, "Nothing", i);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    assert_int_equal(stats_of(log).unmatched_ends, 5);
    /* The report, then once the news that the rest are only counted. */
    rewind(capture);
    char line[512];
    assert_non_null(fgets(line, sizeof line, capture));
    assert_non_null(strstr(line, "timerlog: end of \"Nothing\""));
    assert_null(strstr(line, "counted"));
    assert_non_null(fgets(line, sizeof line, capture));
    assert_non_null(strstr(line, "only counted: see tlog_get_stats"));
    assert_null(fgets(line, sizeof line, capture));
    fclose(capture);
    tlog_destroy(log);
}

static collected_errors default_errors;

/* tlog_begin(NULL) and tlog_end(NULL) open and close nothing, are reported,
 * and leave the frame around them whole. */
static void null_site_is_reported_and_ignored(void **state)
{
    (void)state;
    static const tlog_site frame = {"Frame", __FILE__, __func__, __LINE__, TLOG_LEVEL_COARSE};
    tlog_begin(&frame);
    tlog_begin(NULL);
    assert_int_equal(tlog_depth(NULL), 1);
    tlog_end(NULL);
    assert_int_equal(tlog_depth(NULL), 1);
    tlog_end(&frame);
    tlog_end(NULL);   /* nothing open, no thread state needed */
    assert_int_equal(count_code(&default_errors, TLOG_EINVAL), 3);
    assert_non_null(strstr(default_errors.last, "tlog_end(NULL)"));
    tlog_frame *f = tlog_frame_pop(NULL);
    assert_non_null(f);
    char *text = dump_string(f, NULL);
    assert_non_null(strstr(text, "> 100.00% "));
    assert_non_null(strstr(text, "| (C) Frame\n"));
    assert_int_equal(child_count(tlog_frame_root(f)), 0);
    free(text);
    tlog_frame_release(f);
    assert_int_equal(stats_of(NULL).unmatched_ends + stats_of(NULL).mismatched_ends, 0);
}

static void begin_now(const char *name, double ms)
{
    at_ms(ms);
    tlog_begin(site_named(name));
}

static void end_now(const char *name, double ms)
{
    at_ms(ms);
    tlog_end(site_named(name));
}

/* A plain end, a repaired one, one too long for a compact record, then a
 * plain one again. */
static void *record_custom_clock_frame(void *unused)
{
    (void)unused;
    begin_now("Frame", 0);
    begin_now("A", 1);
    end_now("A", 3);
    begin_now("B", 4);
    begin_now("C", 5);
    end_now("B", 9);
    begin_now("D", 10);
    end_now("D", 5010);
    begin_now("E", 5011);
    end_now("E", 5012);
    end_now("Frame", 6000);
    return NULL;
}

static void check_custom_clock_frame(void)
{
    tlog_frame *f = tlog_frame_pop(NULL);
    assert_non_null(f);
    const tlog_node *root = tlog_frame_root(f);
    assert_int_equal(info_of(root).total_ns, 6000 * NS_PER_MS);
    assert_int_equal(info_of(child_named(root, "A")).total_ns, 2 * NS_PER_MS);
    const tlog_node *b = child_named(root, "B");
    assert_int_equal(info_of(b).total_ns, 5 * NS_PER_MS);
    const tlog_node *c = child_named(b, "C");
    assert_int_equal(info_of(c).total_ns, 4 * NS_PER_MS);
    assert_int_equal(info_of(c).flags & TLOG_NODE_REPAIRED, TLOG_NODE_REPAIRED);
    assert_int_equal(info_of(child_named(root, "D")).total_ns, 5000 * NS_PER_MS);
    assert_int_equal(info_of(child_named(root, "E")).total_ns, 1 * NS_PER_MS);
    assert_int_equal(child_count(root), 4);
    tlog_frame_release(f);
}

/* The default log reads the test's clock: tlog_begin and tlog_end reach
 * its state off their fast paths, on the first thread and a new one. */
static void default_log_on_a_custom_clock_times_every_kind_of_end(void **state)
{
    (void)state;
    int mismatches = count_code(&default_errors, TLOG_EMISMATCH);
    record_custom_clock_frame(NULL);
    assert_int_equal(tlog_depth(NULL), 0);
    check_custom_clock_frame();
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, record_custom_clock_frame, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    check_custom_clock_frame();
    assert_int_equal(count_code(&default_errors, TLOG_EMISMATCH), mismatches + 2);
}

int main(void)
{
    tlog_config dc = test_config(&default_errors);
    if (tlog_default_config(&dc) != TLOG_OK)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_site_is_reported_and_ignored),
        cmocka_unit_test(default_log_on_a_custom_clock_times_every_kind_of_end),
        cmocka_unit_test_setup_teardown(end_of_outer_scope_closes_inner_ones_at_that_instant,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(end_with_nothing_open_is_ignored, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(end_of_a_scope_that_is_not_open_keeps_the_others,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(ending_the_frame_closes_everything_inside, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(different_sites_with_the_same_title_match, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(thread_exit_closes_open_scopes_and_keeps_the_frame,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test(default_handler_prints_a_kind_once_then_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
