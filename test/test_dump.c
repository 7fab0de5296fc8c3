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
    free(dump);
    tlog_frame_release(f);
    /* 1.045%: 100 times the nearest double is 104.5 hundredths, up. */
    begin_at(log, "Frame", 10);
    begin_at(log, "Small", 10);
    end_at(log, "Small", 10.0836);
    end_at(log, "Frame", 18);
    f = tlog_frame_latest(log);
    dump = dump_string(f, NULL);
    assert_non_null(strstr(dump, "|-> 1.05% 0.000084s | (C) Small\n"));
    free(dump);
    tlog_frame_release(f);
    begin_at(log, "Frame", 20);
    begin_at(log, "Sliver", 23);
    end_at(log, "Sliver", 23.0015);
    end_at(log, "Frame", 28);
    f = tlog_frame_latest(log);
    dump = dump_string(f, NULL);
    assert_non_null(strstr(dump, "(C) Sliver\n"));
    assert_non_null(strstr(dump, " 0.000002s | (C) Sliver\n"));
    free(dump);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* "depth title" of each row, one a line, in the order the walk API visits
 * them (first child, next sibling), into buf. */
static void walk_lines(const tlog_node *n, int depth, char *buf, size_t size)
{
    for (; n; n = tlog_node_next_sibling(n)) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%d %s\n", depth, info_of(n).name);
        walk_lines(tlog_node_first_child(n), depth + 1, buf, size);
    }
}

/* The same from a dump: a row's depth is its prefix's steps, its title
 * what follows "| (C) " up to a count. */
static void dump_lines(char *dump, char *buf, size_t size)
{
    char *save;
    for (char *line = strtok_r(dump, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int depth = line[0] == '>' ? 0 : 1;
        for (const char *p = line; strncmp(p, ". ", 2) == 0; p += 2)
            depth++;
        char *title = strstr(line, "| (C) ") + 6;
        char *count = strstr(title, " [x");
        if (count)
            *count = '\0';
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%d %s\n", depth, title);
    }
}

/* Siblings made out of the order of their starts, nesting, and a parent
 * with more children than a list holds: the dump shows the rows in the
 * walk's order, at the walk's depths. */
static void rows_come_in_the_walks_order(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    double t = 0;
    begin_at(log, "Frame", t);
    for (int round = 0; round < 2; round++) {
        begin_at(log, round ? "B" : "A", t += 1);
        begin_at(log, round ? "y" : "x", t += 1);
        end_at(log, round ? "y" : "x", t += 1);
        begin_at(log, round ? "x" : "y", t += 1);
        begin_at(log, "deep", t += 1);
        end_at(log, "deep", t += 1);
        end_at(log, round ? "x" : "y", t += 1);
        end_at(log, round ? "B" : "A", t += 1);
    }
    begin_at(log, "Wide", t += 1);
    for (int i = 0; i < 40; i++) {
        char name[8];
        snprintf(name, sizeof name, "w%d", (i * 7) % 40);
        begin_at(log, name, t += 1);
        end_at(log, name, t += 1);
    }
    end_at(log, "Wide", t += 1);
    end_at(log, "Frame", t += 1);
    tlog_frame *f = tlog_frame_latest(log);
    static char walked[4096], dumped[4096];
    walked[0] = dumped[0] = '\0';
    walk_lines(tlog_frame_root(f), 0, walked, sizeof walked);
    char *dump = dump_string(f, NULL);
    dump_lines(dump, dumped, sizeof dumped);
    assert_string_equal(dumped, walked);
    assert_non_null(strstr(walked, "1 B\n2 y\n2 x\n3 deep\n"));
    free(dump);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* A row d levels down has d - 1 steps of ". " before its "|-> ", at every
 * depth: 70 levels reach past the 63 whose prefix fits a row's short way. */
static void deep_rows_are_indented_a_step_a_level(void **state)
{
    (void)state;
    enum { DEPTH = 70 };
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    char names[DEPTH + 1][8];
    for (int d = 0; d <= DEPTH; d++) {
        snprintf(names[d], sizeof names[d], "d%d", d);
        begin_at(log, names[d], d);
    }
    for (int d = DEPTH; d >= 0; d--)
        end_at(log, names[d], 2 * DEPTH - d);
    tlog_frame *f = tlog_frame_latest(log);
    char *dump = dump_string(f, NULL);
    const char *row = strchr(dump, '\n') + 1;   /* past the root's */
    for (int d = 1; d <= DEPTH; d++, row = strchr(row, '\n') + 1) {
        char want[2 * DEPTH + 8] = "", title[16];
        for (int k = 1; k < d; k++)
            strcat(want, ". ");
        strcat(want, "|-> ");
        snprintf(title, sizeof title, "| (C) d%d\n", d);
        const char *end = strchr(row, '\n');
        if (strncmp(row, want, strlen(want)) != 0 || row[strlen(want)] == '.' ||
            strncmp(end - strlen(title) + 1, title, strlen(title)) != 0)
            fail_msg("row %d of the dump:\n%s", d, dump);
    }
    assert_int_equal(*row, '\0');   /* the deepest row is the last */
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
    /* Options whose size cannot even hold the size field, as for every
     * sized struct; 0 reads as the current size. */
    tlog_frame *f = tlog_frame_latest(log);
    tlog_summary *s = NULL;
    assert_int_equal(tlog_summary_create(NULL, &s), TLOG_OK);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    FILE *sink2 = fopen("/dev/null", "w");
    tlog_dump_options tiny = {.size = sizeof(size_t) - 1}, zero = {0};
    assert_int_equal(tlog_dump_frame(f, sink2, &tiny), TLOG_EINVAL);
    assert_int_equal(tlog_summary_dump(s, sink2, &tiny), TLOG_EINVAL);
    assert_int_equal(tlog_dump_frame(f, sink2, &zero), TLOG_OK);
    assert_int_equal(tlog_summary_dump(s, sink2, &zero), TLOG_OK);
    fclose(sink2);
    tlog_summary_destroy(s);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* A title holding a newline or a tab (a run-time name) is written with a
 * space for each, in the frame's dump and in the statistics': every row
 * stays one line. */
static void titles_with_control_characters_stay_on_one_line(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    begin_at(log, "Line\nbreak\tand tab", 1);
    end_at(log, "Line\nbreak\tand tab", 2);
    /* A title longer than the room a row's fields take at once, with a
     * tab past it. */
    char long_title[301], want[310];
    memset(long_title, 'x', 300);
    long_title[200] = '\t';
    long_title[300] = '\0';
    begin_at(log, long_title, 3);
    end_at(log, long_title, 4);
    end_at(log, "Frame", 5);
    tlog_frame *f = tlog_frame_latest(log);
    char *text = dump_string(f, NULL);
    if (!strstr(text, "| (C) Line break and tab\n") || strchr(text, '\t'))
        fail_msg("dump:\n%s", text);
    snprintf(want, sizeof want, "| (C) %.200s %s\n", long_title, long_title + 201);
    if (!strstr(text, want))
        fail_msg("dump:\n%s", text);
    free(text);
    tlog_summary *s = NULL;
    assert_int_equal(tlog_summary_create(NULL, &s), TLOG_OK);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    FILE *fp = tmpfile();
    assert_int_equal(tlog_summary_dump(s, fp, NULL), TLOG_OK);
    text = read_back(fp);
    if (!strstr(text, "| (C) Line break and tab\n") || strchr(text, '\t'))
        fail_msg("statistics:\n%s", text);
    free(text);
    tlog_summary_destroy(s);
    tlog_frame_release(f);
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
        cmocka_unit_test(rows_come_in_the_walks_order),
        cmocka_unit_test(deep_rows_are_indented_a_step_a_level),
        cmocka_unit_test(titles_with_control_characters_stay_on_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
