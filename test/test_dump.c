/* The text dump: row format at every depth, hiding rows below a threshold
 * (and saying how many), and errors from the output stream. */
#include <regex.h>

#include "common.h"

static tlog_log *make_frame(void)
{
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    begin_at(log, "Big", 0);
    begin_at(log, "L2", 0);
    begin_at(log, "L3", 0);
    begin_at(log, "L4", 0);
    end_at(log, "L4", 10);
    end_at(log, "L3", 20);
    end_at(log, "L2", 30);
    end_at(log, "Big", 500);
    begin_at(log, "Small", 500);      /* 1% */
    begin_at(log, "Small child", 500);
    end_at(log, "Small child", 505);
    end_at(log, "Small", 510);
    begin_at(log, "Tiny", 510);       /* 0.5% */
    end_at(log, "Tiny", 515);
    end_at(log, "Frame", 1000);
    return log;
}

static void every_row_has_the_documented_format(void **state)
{
    (void)state;
    tlog_log *log = make_frame();
    tlog_frame *f = tlog_frame_latest(log);
    char *dump = dump_string(f, NULL);
    regex_t re;
    assert_int_equal(regcomp(&re,
                             "^(> |(\\. )*(\\|->|==>) )[0-9]+\\.[0-9]{2}% [0-9]+\\.[0-9]{6}s "
                             "\\| \\((C|E)\\) .+$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    int rows = 0;
    char *save;
    for (char *line = strtok_r(dump, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (regexec(&re, line, 0, NULL, 0) != 0)
            fail_msg("row does not match the format: %s", line);
        rows++;
    }
    regfree(&re);
    assert_int_equal(rows, 8);
    free(dump);
    dump = dump_string(f, NULL);
    assert_non_null(strstr(dump, "> 100.00% 1.000000s | (C) Frame\n"
                                 "|-> 50.00% 0.500000s | (C) Big\n"
                                 ". |-> 6.00% 0.030000s | (C) L2\n"
                                 ". . |-> 66.67% 0.020000s | (C) L3\n"
                                 ". . . |-> 50.00% 0.010000s | (C) L4\n"));
    free(dump);
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void rows_below_a_percentage_are_hidden_and_counted(void **state)
{
    (void)state;
    tlog_log *log = make_frame();
    tlog_frame *f = tlog_frame_latest(log);
    tlog_dump_options o = {.size = sizeof o, .min_percent = 2.0};
    char *dump = dump_string(f, &o);
    assert_null(strstr(dump, "Small"));
    assert_null(strstr(dump, "Tiny"));
    assert_non_null(strstr(dump, "(C) Big\n"));
    assert_non_null(strstr(dump, "# 3 rows hidden (shorter than 0.000000s or below 2.00% of parent)\n"));
    free(dump);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* The footer, as the rows, writes numbers with a '.' whatever the locale. */
static void footer_keeps_the_point_under_a_comma_locale(void **state)
{
    (void)state;
    if (!use_comma_locale())
        skip();
    tlog_log *log = make_frame();
    tlog_frame *f = tlog_frame_latest(log);
    tlog_dump_options o = {.size = sizeof o, .min_ns = 1500000, .min_percent = 2.5};
    char *dump = dump_string(f, &o);
    setlocale(LC_NUMERIC, "C");
    assert_non_null(strstr(dump, "rows hidden (shorter than 0.001500s or below 2.50% of parent)\n"));
    assert_null(strstr(dump, "0,0"));
    free(dump);
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void rows_shorter_than_a_time_are_hidden_and_counted(void **state)
{
    (void)state;
    tlog_log *log = make_frame();
    tlog_frame *f = tlog_frame_latest(log);
    tlog_dump_options o = {.size = sizeof o, .min_ns = 8 * NS_PER_MS};
    char *dump = dump_string(f, &o);
    assert_non_null(strstr(dump, "(C) Small\n"));   /* 10 ms */
    assert_null(strstr(dump, "Small child"));       /* 5 ms */
    assert_null(strstr(dump, "Tiny"));
    assert_non_null(strstr(dump, "(C) L4\n"));
    assert_non_null(strstr(dump, "# 2 rows hidden"));
    free(dump);
    /* Options all zero (a size of 0 is the current size) hide nothing. */
    tlog_dump_options none = {0};
    dump = dump_string(f, &none);
    assert_null(strstr(dump, "hidden"));
    assert_non_null(strstr(dump, "Tiny"));
    free(dump);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* A long `==>` row under a short parent stays visible, with its parent:
 * what the threshold means to hide is small work, not the device's. */
static void large_execution_rows_stay_visible_under_small_parents(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    begin_at(log, "Launch", 10);   /* 1% of the frame */
    tlog_insert(log, site_named("Kernel"), TLOG_KIND_EXECUTION, 10 * NS_PER_MS,
                610 * NS_PER_MS);  /* 60% of the frame */
    end_at(log, "Launch", 20);
    begin_at(log, "Tiny", 20);
    end_at(log, "Tiny", 21);
    end_at(log, "Frame", 1000);
    tlog_frame *f = tlog_frame_latest(log);
    tlog_dump_options o = {.size = sizeof o, .min_percent = 2.0};
    char *dump = dump_string(f, &o);
    assert_non_null(strstr(dump, "|-> 1.00% 0.010000s | (C) Launch\n"
                                 ". ==> 6000.00% 0.600000s | (E) Kernel\n"));
    assert_null(strstr(dump, "Tiny"));
    assert_non_null(strstr(dump, "# 1 rows hidden"));
    free(dump);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* Percentages and seconds are rounded half up, as doc/format.md says. */
static void figures_are_rounded_half_up(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    begin_at(log, "Part", 0);
    end_at(log, "Part", 2.97);      /* 37.125% of 8 ms */
    begin_at(log, "Sliver", 3);
    end_at(log, "Sliver", 3.0015);  /* 1.5 us */
    end_at(log, "Frame", 8);
    tlog_frame *f = tlog_frame_latest(log);
    char *dump = dump_string(f, NULL);
    assert_non_null(strstr(dump, "|-> 37.13% 0.002970s | (C) Part\n"));
    assert_non_null(strstr(dump, "(C) Sliver\n"));
    assert_non_null(strstr(dump, " 0.000002s | (C) Sliver\n"));
    free(dump);
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void dump_reports_missing_frames_and_write_errors(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *empty = make_log(&c);
    FILE *sink = fopen("/dev/null", "w");
    assert_int_equal(tlog_dump(empty, sink), TLOG_ENOFRAME);
    fclose(sink);
    tlog_destroy(empty);

    tlog_log *log = make_frame();
    FILE *read_only = fopen("/dev/null", "r");
    assert_non_null(read_only);
    assert_int_equal(tlog_dump(log, read_only), TLOG_EIO);
    fclose(read_only);
    assert_int_equal(tlog_dump_frame(NULL, stdout, NULL), TLOG_EINVAL);
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_has_the_documented_format),
        cmocka_unit_test(rows_below_a_percentage_are_hidden_and_counted),
        cmocka_unit_test(rows_shorter_than_a_time_are_hidden_and_counted),
        cmocka_unit_test(footer_keeps_the_point_under_a_comma_locale),
        cmocka_unit_test(dump_reports_missing_frames_and_write_errors),
        cmocka_unit_test(large_execution_rows_stay_visible_under_small_parents),
        cmocka_unit_test(figures_are_rounded_half_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
