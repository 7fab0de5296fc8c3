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

/* Frames with more (parent, site) pairs than the resolver remembers at once
 * count every instance, and merge every site's instances into one row. */
static void instances_count_with_many_sites_and_parents(void **state)
{
    (void)state;
    enum { SITES = 2000, AGAIN = 3, REPS = 3, FRAMES = 2 };
    static const tlog_site frame = {"Frame", "m.c", "f", 1, 1};
    static const tlog_site parents[2] = {{"A", "m.c", "f", 2, 1}, {"B", "m.c", "f", 3, 1}};
    static const tlog_site *sites[SITES];
    for (int k = 0; k < SITES; k++) {
        char name[16];
        snprintf(name, sizeof name, "S%d", k);
        sites[k] = tlog_site_intern(name, "m.c", "f", 100 + k, 1);
    }
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    for (int fr = 1; fr <= FRAMES; fr++) {
        tlog_log_begin(log, &frame);
        for (int rep = 0; rep < REPS; rep++)
            for (int p = 0; p < 2; p++) {
                tlog_log_begin(log, &parents[p]);
                for (int k = 0; k < SITES; k++)
                    for (int again = 0; again < AGAIN; again++) {
                        tlog_log_begin(log, sites[k]);
                        tlog_log_end(log, sites[k]);
                    }
                tlog_log_end(log, &parents[p]);
            }
        tlog_log_end(log, &frame);
        tlog_frame *f = tlog_frame_latest(log);
        const tlog_node *p = tlog_node_first_child(tlog_frame_root(f));
        for (int n = 0; n < 2; n++, p = tlog_node_next_sibling(p)) {
            assert_non_null(p);
            assert_int_equal(info_of(p).count, REPS);
            int children = 0;
            for (const tlog_node *k = tlog_node_first_child(p); k; k = tlog_node_next_sibling(k)) {
                assert_true(info_of(k).name[0] == 'S');
                assert_int_equal(info_of(k).count, AGAIN * REPS);
                children++;
            }
            assert_int_equal(children, SITES);
        }
        tlog_frame_release(f);
        for (int k = 0; k < SITES; k++)
            assert_int_equal(tlog_site_instances(sites[k]), (uint64_t)(2 * AGAIN * REPS * fr));
    }
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(id_depends_on_location_not_name),
        cmocka_unit_test(id_is_the_same_in_every_run),
        cmocka_unit_test(intern_returns_one_site_per_location_and_title),
        cmocka_unit_test(instances_count_resolved_scopes),
        cmocka_unit_test(instances_count_with_many_sites_and_parents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
