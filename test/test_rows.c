/* Rows: a scope's instances merge into one row per (parent row, title),
 * however many children the parent has (a few are kept in a list, many in
 * a map) and in whatever order they come, in every frame a log resolves. */
#include "common.h"

static const int widths[] = {1, 15, 16, 17, 40};
#define NWIDTHS (sizeof widths / sizeof widths[0])
#define PASSES 3

static void child_name(char *buf, size_t size, int i)
{
    snprintf(buf, size, "c%d", i);
}

/* The child met at step i of a pass over w children: forwards, backwards,
 * then by a stride of 7 (a permutation: 7 divides none of the widths). */
static int child_at(int pass, int i, int w)
{
    if (pass == 0)
        return i;
    if (pass == 1)
        return w - 1 - i;
    return (i * 7 + 3) % w;
}

/* Under `parent`, w children, each met `passes` times. */
static void record_parent(tlog_log *log, const char *parent, int w, int passes, double *t)
{
    char name[16];
    begin_at(log, parent, *t);
    for (int pass = 0; pass < passes; pass++)
        for (int i = 0; i < w; i++) {
            child_name(name, sizeof name, child_at(pass, i, w));
            begin_at(log, name, *t += 1);
            end_at(log, name, *t += 1);
        }
    end_at(log, parent, *t += 1);
}

/* Node `parent` has w children c0 .. c(w-1), each of `count` instances. */
static void check_parent(const tlog_node *root, const char *parent, int w, uint64_t count)
{
    const tlog_node *p = child_named(root, parent);
    assert_non_null(p);
    bool seen[64] = {0};
    int children = 0;
    for (const tlog_node *c = tlog_node_first_child(p); c; c = tlog_node_next_sibling(c)) {
        tlog_node_info in = info_of(c);
        int i = atoi(in.name + 1);
        assert_true(in.name[0] == 'c' && i >= 0 && i < w);
        if (seen[i])
            fail_msg("%s has two rows titled %s", parent, in.name);
        seen[i] = true;
        assert_int_equal(in.count, count);
        children++;
    }
    assert_int_equal(children, w);
}

static void parent_name(char *buf, size_t size, int w)
{
    snprintf(buf, size, "P%d", w);
}

static void record_wide_frame(tlog_log *log, int passes, double t)
{
    char name[16];
    begin_at(log, "Frame", t);
    for (size_t k = 0; k < NWIDTHS; k++) {
        parent_name(name, sizeof name, widths[k]);
        record_parent(log, name, widths[k], passes, &t);
    }
    end_at(log, "Frame", t += 1);
}

static void check_wide_frame(tlog_log *log, uint64_t passes)
{
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    const tlog_node *root = tlog_frame_root(f);
    char name[16];
    for (size_t k = 0; k < NWIDTHS; k++) {
        parent_name(name, sizeof name, widths[k]);
        check_parent(root, name, widths[k], passes);
    }
    tlog_frame_release(f);
}

static void children_merge_however_many_and_in_any_order(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    record_wide_frame(log, PASSES, 0);
    check_wide_frame(log, PASSES);
    tlog_destroy(log);
}

/* The second frame reuses the first one's scratch: what the first frame's
 * rows held (lists, map entries) does not leak into the second's. */
static void a_later_frame_merges_afresh(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    record_wide_frame(log, PASSES, 0);
    check_wide_frame(log, PASSES);
    record_wide_frame(log, 1, 100000);
    check_wide_frame(log, 1);
    tlog_destroy(log);
}

/* Parents that were met before each meet their children again. */
static void a_parent_met_again_finds_its_children(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    double t = 0;
    begin_at(log, "Frame", t);
    for (int round = 0; round < 4; round++)
        record_parent(log, "P40", 40, 1, &t);
    for (int round = 0; round < 4; round++)
        record_parent(log, "P15", 15, 1, &t);
    end_at(log, "Frame", t += 1);
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    check_parent(tlog_frame_root(f), "P40", 40, 4);
    check_parent(tlog_frame_root(f), "P15", 15, 4);
    assert_int_equal(info_of(child_named(tlog_frame_root(f), "P40")).count, 4);
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void scope_at(tlog_log *log, const char *name, double *t)
{
    begin_at(log, name, *t += 1);
    end_at(log, name, *t += 1);
}

/* Frame > W > (b3, with `b3_first`), z, b15 .. b0, then a > z
 * (`z_under_a`) or z, a. The
 * resolver meets a frame's scopes from its end back, so it makes W's rows
 * for a, its z (if any), b0 .. b15 and W's z, in that order: more than a
 * list holds. */
static void record_w_frame(tlog_log *log, bool z_under_a, bool b3_first, double *t)
{
    char name[16];
    begin_at(log, "Frame", *t += 1000);
    begin_at(log, "W", *t += 1);
    if (b3_first)   /* met last: after all the rows the frame makes */
        scope_at(log, "b3", t);
    scope_at(log, "z", t);
    for (int i = 15; i >= 0; i--) {
        snprintf(name, sizeof name, "b%d", i);
        scope_at(log, name, t);
    }
    if (!z_under_a)
        scope_at(log, "z", t);
    begin_at(log, "a", *t += 1);
    if (z_under_a)
        scope_at(log, "z", t);
    end_at(log, "a", *t += 1);
    end_at(log, "W", *t += 1);
    end_at(log, "Frame", *t += 1);
}

/* Frame after frame of the same rows, resolved without looking them up,
 * until a frame parts from the last. Here the frame after one whose a has
 * a child z moves that z up beside a: W's last z then comes where the last
 * frame made W's row z, but W has that row already. */
static void a_frame_that_parts_from_the_last_still_merges(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    double t = 0;
    record_w_frame(log, true, false, &t);
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    const tlog_node *w = child_named(tlog_frame_root(f), "W");
    assert_int_equal(info_of(child_named(w, "z")).count, 1);
    assert_int_equal(info_of(child_named(child_named(w, "a"), "z")).count, 1);
    tlog_frame_release(f);
    /* The same rows, all made without a lookup; then b3 met again. */
    record_w_frame(log, true, true, &t);
    f = tlog_frame_pop(log);
    assert_non_null(f);
    w = child_named(tlog_frame_root(f), "W");
    assert_int_equal(info_of(child_named(w, "b3")).count, 2);
    assert_int_equal(info_of(child_named(w, "b4")).count, 1);
    tlog_frame_release(f);
    record_w_frame(log, true, false, &t);
    tlog_frame_release(tlog_frame_pop(log));
    record_w_frame(log, false, false, &t);
    f = tlog_frame_pop(log);
    assert_non_null(f);
    w = child_named(tlog_frame_root(f), "W");
    int rows = 0;
    for (const tlog_node *n = tlog_node_first_child(w); n; n = tlog_node_next_sibling(n))
        rows++;
    assert_int_equal(rows, 18);   /* z, b15 .. b0, a */
    assert_int_equal(info_of(child_named(w, "z")).count, 2);
    assert_null(tlog_node_first_child(child_named(w, "a")));
    tlog_frame_release(f);
    /* Frames of the same rows, one of them met again, in another order. */
    record_wide_frame(log, 1, t += 1000);
    check_wide_frame(log, 1);
    record_wide_frame(log, 1, t += 100000);
    check_wide_frame(log, 1);
    record_wide_frame(log, 3, t += 100000);
    check_wide_frame(log, 3);
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(children_merge_however_many_and_in_any_order),
        cmocka_unit_test(a_later_frame_merges_afresh),
        cmocka_unit_test(a_parent_met_again_finds_its_children),
        cmocka_unit_test(a_frame_that_parts_from_the_last_still_merges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
