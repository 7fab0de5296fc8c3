/* The bound of the run-time name table (TLOG_RUNTIME_NAMES_MAX per
 * process): past it, new names are timed under their call site's
 * "(other names)" row, counted, and reported once; names already in the
 * table keep their sites, and the table's memory stays within what the
 * header says. A process of its own: the table is the process's. */
#include "common.h"

static collected_errors errors;

static tlog_names_info names_info(void)
{
    tlog_names_info info = {.size = sizeof info};
    assert_int_equal(tlog_names_get_info(&info), TLOG_OK);
    return info;
}

/* The longest names the table keeps, distinct in their first bytes. */
static void long_name(char *buf, size_t size, int i)
{
    memset(buf, 'n', size - 1);
    buf[size - 1] = '\0';
    char head[16];
    int n = snprintf(head, sizeof head, "name %d ", i);
    memcpy(buf, head, (size_t)n);
}

#define PAST 10

/* Names are kept per call site: every name of these tests goes through
 * this one. */
static int scope_line;

static void named_scope(const char *name)
{
    TIMERLOG_SCOPE_NAMED(name); scope_line = __LINE__;
}

static void table_full_gives_other_names(void **state)
{
    (void)state;
    assert_int_equal(names_info().names, 0);
    char name[TLOG_RUNTIME_NAME_BYTES + 40];
    {
        TIMERLOG_SCOPE("Frame");
        for (int i = 0; i < TLOG_RUNTIME_NAMES_MAX + PAST; i++) {
            long_name(name, sizeof name, i);
            named_scope(name);
        }
    }
    tlog_names_info info = names_info();
    assert_int_equal(info.names, TLOG_RUNTIME_NAMES_MAX);
    assert_int_equal(info.refused, PAST);
    /* The bound the header states, with the longest names. */
    assert_true(info.bytes > (uint64_t)TLOG_RUNTIME_NAMES_MAX * TLOG_RUNTIME_NAME_BYTES);
    assert_true(info.bytes <= (uint64_t)TLOG_RUNTIME_NAMES_MAX * (TLOG_RUNTIME_NAME_BYTES + 100));

    /* One report, naming the first name refused. */
    assert_int_equal(errors.count, 1);
    assert_int_equal(errors.codes[0], TLOG_EFULL);
    assert_non_null(strstr(errors.last, "(other names)"));
    assert_non_null(strstr(errors.last, "name 4096 "));

    tlog_frame *f = tlog_frame_latest_of(NULL, TLOG_THREAD_SELF);
    assert_non_null(f);
    const tlog_node *root = tlog_frame_root(f);
    assert_int_equal(child_count(root), TLOG_RUNTIME_NAMES_MAX + 1);
    const tlog_node *other = child_named(root, "(other names)");
    assert_non_null(other);
    tlog_node_info in = info_of(other);
    assert_int_equal(in.count, PAST);
    assert_string_equal(in.file, __FILE__);          /* the call site's own site */
    assert_int_equal(in.line, scope_line);
    long_name(name, sizeof name, 0);
    name[TLOG_RUNTIME_NAME_BYTES] = '\0';
    const tlog_node *first = tlog_node_first_child(root);
    assert_memory_equal(info_of(first).name, name, TLOG_RUNTIME_NAME_BYTES);
    tlog_frame_release(f);
}

static void names_in_the_table_keep_their_sites(void **state)
{
    (void)state;
    char name[TLOG_RUNTIME_NAME_BYTES + 40];
    {
        TIMERLOG_SCOPE("Frame");
        for (int i = 0; i < 2; i++) {
            long_name(name, sizeof name, 5 + i * (TLOG_RUNTIME_NAMES_MAX + 1));
            named_scope(name);                 /* in the table, then not */
        }
        /* The bound is the process's: another call site is refused too,
         * even a name that is in the table for named_scope. */
        long_name(name, sizeof name, 5);
        TIMERLOG_SCOPE_NAMED(name);
    }
    tlog_names_info info = names_info();
    assert_int_equal(info.names, TLOG_RUNTIME_NAMES_MAX);
    assert_int_equal(info.refused, PAST + 2);
    assert_int_equal(errors.count, 1);           /* still the one report */
    tlog_frame *f = tlog_frame_latest_of(NULL, TLOG_THREAD_SELF);
    assert_non_null(f);
    const tlog_node *root = tlog_frame_root(f);
    assert_int_equal(child_count(root), 2);       /* "name 5 ..." and (other names) */
    assert_int_equal(info_of(child_named(root, "(other names)")).count, 2);
    assert_memory_equal(info_of(tlog_node_first_child(root)).name, "name 5 ", 7);
    tlog_frame_release(f);
    tlog_stats s = stats_of(NULL);
    assert_int_equal(s.unmatched_ends + s.mismatched_ends, 0);
}

int main(void)
{
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .on_error = collect_error, .error_user = &errors};
    if (tlog_default_config(&c) != TLOG_OK)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_full_gives_other_names),
        cmocka_unit_test(names_in_the_table_keep_their_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
