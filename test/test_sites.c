/* Call sites: ids from the source location, stable across runs; sites made
 * at run time; instance counts. */
#include "common.h"

static void id_depends_on_location_not_name(void **state)
{
    (void)state;
    const tlog_site a = {"one", "f.c", "fn", 10, 1};
    const tlog_site b = {"two", "f.c", "fn", 10, 1};
    const tlog_site c = {"one", "f.c", "fn", 11, 1};
    const tlog_site d = {"one", "g.c", "fn", 10, 1};
    assert_int_not_equal(tlog_site_id(&a), 0);
    assert_int_equal(tlog_site_id(&a), tlog_site_id(&b));
    assert_int_not_equal(tlog_site_id(&a), tlog_site_id(&c));
    assert_int_not_equal(tlog_site_id(&a), tlog_site_id(&d));
    assert_int_equal(tlog_site_id(NULL), 0);
}

static void id_is_the_same_in_every_run(void **state)
{
    (void)state;
    /* A known answer: ids must never depend on addresses or run order. */
    const tlog_site s = {"x", "src/solver.c", "solve", 120, 1};
    assert_int_equal(tlog_site_id(&s), KNOWN_SITE_ID);
}

static void intern_returns_one_site_per_location_and_title(void **state)
{
    (void)state;
    char name[16] = "dynamic";
    const tlog_site *s1 = tlog_site_intern(name, "f.c", "fn", 3, 1);
    strcpy(name, "changed");
    const tlog_site *s2 = tlog_site_intern("dynamic", "f.c", "fn", 3, 1);
    const tlog_site *s3 = tlog_site_intern("dynamic", "f.c", "fn", 4, 1);
    assert_non_null(s1);
    assert_ptr_equal(s1, s2);
    assert_ptr_not_equal(s1, s3);
    assert_string_equal(s1->name, "dynamic");
    assert_null(tlog_site_intern(NULL, "f.c", "fn", 3, 1));
    assert_non_null(tlog_site_intern("no location", NULL, NULL, 0, 1));
}

static void instances_count_resolved_scopes(void **state)
{
    (void)state;
    static const tlog_site frame = {"Frame", "i.c", "f", 1, 1};
    static const tlog_site work = {"Work", "i.c", "f", 2, 1};
    static const tlog_site work_elsewhere = {"Work", "i.c", "f", 3, 1};
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    tlog_log_begin(log, &frame);
    for (int i = 0; i < 3; i++) {
        tlog_log_begin(log, &work);
        tlog_log_end(log, &work);
    }
    tlog_log_begin(log, &work_elsewhere);
    tlog_log_end(log, &work_elsewhere);
    tlog_log_end(log, &frame);
    assert_int_equal(tlog_site_instances(&work), 0); /* not resolved yet */
    tlog_frame *f = tlog_frame_latest(log);
    assert_int_equal(info_of(tlog_node_first_child(tlog_frame_root(f))).count, 4);
    tlog_frame_release(f);
    assert_int_equal(tlog_site_instances(&work), 3);
    assert_int_equal(tlog_site_instances(&work_elsewhere), 1);
    assert_int_equal(tlog_site_instances(&frame), 1);
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(id_depends_on_location_not_name),
        cmocka_unit_test(id_is_the_same_in_every_run),
        cmocka_unit_test(intern_returns_one_site_per_location_and_title),
        cmocka_unit_test(instances_count_resolved_scopes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
