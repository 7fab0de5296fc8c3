/* The tree-walk API: every field of a node, navigation, the visitor, the
 * timeline of instances, frame info and the bounded frame queue. */
#include <pthread.h>

#include "common.h"

static tlog_log *walk_log;
static tlog_token frame_token;

static void *worker_w(void *arg)
{
    (void)arg;
    tlog_thread_name("W");
    at_ms(1035);
    assert_int_equal(tlog_adopt_begin(&frame_token), TLOG_OK);
    begin_at(walk_log, "Job", 1040);
    end_at(walk_log, "Job", 1050);
    at_ms(1075);
    assert_int_equal(tlog_adopt_end(&frame_token), TLOG_OK);
    return NULL;
}

/*
 * Frame  [1000, 1100] on "Main"
 *   Dev  (E, inserted) [1005, 1095]
 *   A    [1010, 1030]
 *     A1 [1012, 1015]
 *   B    [1030, 1040] and [1050, 1065]  -> one row, count 2
 *   W    (E, worker row) [1035, 1075]
 *     Job [1040, 1050]
 */
static const tlog_site frame_site = {"Frame", "walk.c", "record", 42, 1};

static void record_known_frame(tlog_log *log)
{
    walk_log = log;
    at_ms(1000);
    tlog_log_begin(log, &frame_site);
    frame_token = tlog_handoff(log);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, worker_w, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(tlog_insert(log, site_named("Dev"), TLOG_KIND_EXECUTION,
                                 1005 * NS_PER_MS, 1095 * NS_PER_MS), TLOG_OK);
    begin_at(log, "A", 1010);
    begin_at(log, "A1", 1012);
    end_at(log, "A1", 1015);
    end_at(log, "A", 1030);
    begin_at(log, "B", 1030);
    end_at(log, "B", 1040);
    begin_at(log, "B", 1050);
    end_at(log, "B", 1065);
    at_ms(1100);
    tlog_log_end(log, &frame_site);
}

static int setup(void **state)
{
    at_ms(0);
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    tlog_thread_name("Main");
    record_known_frame(log);
    *state = log;
    return 0;
}

static int teardown(void **state)
{
    tlog_destroy(*state);
    return 0;
}

static void root_fields(void **state)
{
    tlog_frame *f = tlog_frame_latest(*state);
    assert_non_null(f);
    const tlog_node *root = tlog_frame_root(f);
    tlog_node_info r = info_of(root);
    assert_string_equal(r.name, "Frame");
    assert_int_equal(r.kind, TLOG_KIND_CONTROL);
    assert_string_equal(r.thread_name, "Main");
    assert_int_not_equal(r.thread, 0);
    assert_int_equal(r.depth, 0);
    assert_int_equal(r.start_ns, 0);
    assert_int_equal(r.total_ns, 100 * NS_PER_MS);
    /* Control children A (20) and B (25) count; Dev and W ran elsewhere. */
    assert_int_equal(r.self_ns, 55 * NS_PER_MS);
    assert_true(r.percent_of_parent == 100.0);
    assert_int_equal(r.count, 1);
    assert_int_equal(r.min_ns, 100 * NS_PER_MS);
    assert_int_equal(r.max_ns, 100 * NS_PER_MS);
    assert_ptr_equal(r.site, &frame_site);
    assert_string_equal(r.file, "walk.c");
    assert_int_equal(r.line, 42);
    assert_int_equal(r.site_id, tlog_site_id(&frame_site));
    assert_int_not_equal(r.site_id, 0);
    assert_int_equal(r.flags, 0);
    assert_null(tlog_node_parent(root));
    assert_null(tlog_node_next_sibling(root));
    tlog_frame_release(f);
}

static void children_in_order_of_first_start(void **state)
{
    tlog_frame *f = tlog_frame_latest(*state);
    const tlog_node *root = tlog_frame_root(f);
    const char *want[] = {"Dev", "A", "B", "W"};
    const tlog_node *c = tlog_node_first_child(root);
    for (int i = 0; i < 4; i++, c = tlog_node_next_sibling(c)) {
        assert_non_null(c);
        assert_string_equal(info_of(c).name, want[i]);
        assert_ptr_equal(tlog_node_parent(c), root);
    }
    assert_null(c);
    tlog_frame_release(f);
}

static void nested_and_merged_fields(void **state)
{
    tlog_frame *f = tlog_frame_latest(*state);
    const tlog_node *root = tlog_frame_root(f);
    const tlog_node *a = child_named(root, "A");
    tlog_node_info ai = info_of(a);
    assert_int_equal(ai.start_ns, 10 * NS_PER_MS);
    assert_int_equal(ai.total_ns, 20 * NS_PER_MS);
    assert_int_equal(ai.self_ns, 17 * NS_PER_MS);
    assert_true(ai.percent_of_parent > 19.999 && ai.percent_of_parent < 20.001);
    const tlog_node *a1 = child_named(a, "A1");
    assert_ptr_equal(tlog_node_parent(a1), a);
    tlog_node_info a1i = info_of(a1);
    assert_int_equal(a1i.depth, 2);
    assert_true(a1i.percent_of_parent > 14.999 && a1i.percent_of_parent < 15.001);
    assert_null(tlog_node_first_child(a1));

    tlog_node_info b = info_of(child_named(root, "B"));
    assert_int_equal(b.count, 2);
    assert_int_equal(b.total_ns, 25 * NS_PER_MS);
    assert_int_equal(b.min_ns, 10 * NS_PER_MS);
    assert_int_equal(b.max_ns, 15 * NS_PER_MS);
    assert_int_equal(b.start_ns, 30 * NS_PER_MS);
    tlog_frame_release(f);
}

static void execution_rows(void **state)
{
    tlog_frame *f = tlog_frame_latest(*state);
    const tlog_node *root = tlog_frame_root(f);
    tlog_node_info dev = info_of(child_named(root, "Dev"));
    assert_int_equal(dev.kind, TLOG_KIND_EXECUTION);
    assert_int_equal(dev.start_ns, 5 * NS_PER_MS);
    assert_int_equal(dev.total_ns, 90 * NS_PER_MS);

    const tlog_node *w = child_named(root, "W");
    tlog_node_info wi = info_of(w);
    assert_int_equal(wi.kind, TLOG_KIND_EXECUTION);
    assert_string_equal(wi.thread_name, "W");
    assert_int_not_equal(wi.thread, info_of(root).thread);
    assert_int_equal(wi.start_ns, 35 * NS_PER_MS);
    assert_int_equal(wi.total_ns, 40 * NS_PER_MS);
    assert_int_equal(wi.self_ns, 30 * NS_PER_MS);
    assert_null(wi.site);
    assert_int_equal(wi.site_id, 0);
    tlog_node_info job = info_of(child_named(w, "Job"));
    assert_int_equal(job.kind, TLOG_KIND_CONTROL);
    assert_int_equal(job.thread, wi.thread);
    assert_string_equal(job.thread_name, "W");
    assert_int_equal(job.depth, 2);
    assert_int_equal(job.start_ns, 40 * NS_PER_MS);
    tlog_frame_release(f);
}

typedef struct visit_log {
    const char *names[16];
    int depths[16];
    int n;
    int stop_at;
} visit_log;

static int visit(void *user, const tlog_node *node, const tlog_node_info *info)
{
    visit_log *v = user;
    assert_non_null(node);
    v->names[v->n] = info->name;
    v->depths[v->n] = info->depth;
    v->n++;
    return v->n == v->stop_at ? 7 : 0;
}

/* Collapses the rows titled "A" and "W". */
static int visit_collapsed(void *user, const tlog_node *node, const tlog_node_info *info)
{
    visit(user, node, info);
    return strcmp(info->name, "A") == 0 || strcmp(info->name, "W") == 0
               ? TLOG_WALK_SKIP_CHILDREN : 0;
}

static void visitor_can_skip_a_subtree(void **state)
{
    tlog_frame *f = tlog_frame_latest(*state);
    visit_log v = {.stop_at = -1};
    assert_int_equal(tlog_frame_walk(f, visit_collapsed, &v), TLOG_OK);
    const char *want[] = {"Frame", "Dev", "A", "B", "W"};
    assert_int_equal(v.n, 5);
    for (int i = 0; i < 5; i++)
        assert_string_equal(v.names[i], want[i]);
    tlog_frame_release(f);
}

static void visitor_walks_parents_first(void **state)
{
    tlog_frame *f = tlog_frame_latest(*state);
    visit_log v = {.stop_at = -1};
    assert_int_equal(tlog_frame_walk(f, visit, &v), TLOG_OK);
    const char *want[] = {"Frame", "Dev", "A", "A1", "B", "W", "Job"};
    const int depth[] = {0, 1, 1, 2, 1, 1, 2};
    assert_int_equal(v.n, 7);
    for (int i = 0; i < 7; i++) {
        assert_string_equal(v.names[i], want[i]);
        assert_int_equal(v.depths[i], depth[i]);
    }
    visit_log stop = {.stop_at = 3};
    assert_int_equal(tlog_frame_walk(f, visit, &stop), 7);
    assert_int_equal(stop.n, 3);
    assert_int_equal(tlog_frame_walk(f, NULL, NULL), TLOG_EINVAL);
    tlog_frame_release(f);
}

static void frame_info_and_instances(void **state)
{
    tlog_frame *f = tlog_frame_latest(*state);
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    assert_int_equal(fi.serial, 1);
    assert_string_equal(fi.thread_name, "Main");
    assert_int_equal(fi.start_ns, 1000 * NS_PER_MS);
    assert_int_equal(fi.duration_ns, 100 * NS_PER_MS);
    assert_int_equal(fi.nodes, 7);
    assert_int_equal(fi.instances, 8);
    assert_int_equal(fi.scopes_dropped, 0);

    uint64_t b_durations = 0;
    int b_count = 0;
    for (size_t i = 0; i < fi.instances; i++) {
        tlog_instance in = {.size = sizeof in};
        assert_int_equal(tlog_frame_get_instance(f, i, &in), TLOG_OK);
        tlog_node_info ni = info_of(in.node);
        if (strcmp(ni.name, "B") == 0) {
            b_durations = b_durations * 1000 + in.duration_ns / NS_PER_MS;
            b_count++;
        }
    }
    assert_int_equal(b_count, 2);
    assert_int_equal(b_durations, 10 * 1000 + 15); /* in begin order */
    tlog_instance bad = {.size = sizeof bad};
    assert_int_equal(tlog_frame_get_instance(f, fi.instances, &bad), TLOG_EINVAL);
    tlog_frame_release(f);
}

/* The names of a frame's instances, in the order listed, joined by ' '. */
static void instance_names(const tlog_frame *f, char *out, size_t size)
{
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    out[0] = '\0';
    for (size_t i = 0; i < fi.instances; i++) {
        tlog_instance in = {.size = sizeof in};
        assert_int_equal(tlog_frame_get_instance(f, i, &in), TLOG_OK);
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", len ? " " : "", info_of(in.node).name);
    }
}

/* However deep and wide, a thread's instances are listed in the order its
 * scopes began (records are written as scopes end). */
static void instances_are_listed_in_begin_order(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    double t = 0;
    begin_at(log, "F", t++);
    begin_at(log, "A", t++);
    begin_at(log, "B", t++);
    begin_at(log, "C", t++);
    end_at(log, "C", t++);
    end_at(log, "B", t++);
    begin_at(log, "D", t++);
    end_at(log, "D", t++);
    end_at(log, "A", t++);
    begin_at(log, "E", t++);
    begin_at(log, "G", t++);
    end_at(log, "G", t++);
    end_at(log, "E", t++);
    begin_at(log, "A", t++);
    end_at(log, "A", t++);
    end_at(log, "F", t++);
    tlog_frame *f = tlog_frame_latest(log);
    char names[256];
    instance_names(f, names, sizeof names);
    assert_string_equal(names, "F A B C D E G A");
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* Two call sites of one title under one parent are one row; each site
 * counts its own instances. */
static void sites_of_one_title_share_a_row(void **state)
{
    (void)state;
    static const tlog_site here = {"Same", "walk.c", "one", 1, 1};
    static const tlog_site there = {"Same", "walk.c", "two", 2, 1};
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    uint64_t here0 = tlog_site_instances(&here), there0 = tlog_site_instances(&there);
    begin_at(log, "Frame", 0);
    tlog_log_begin(log, &here);
    tlog_log_end(log, &here);
    tlog_log_begin(log, &there);
    tlog_log_end(log, &there);
    tlog_log_begin(log, &there);
    tlog_log_end(log, &there);
    end_at(log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(log);
    const tlog_node *root = tlog_frame_root(f);
    assert_null(tlog_node_next_sibling(tlog_node_first_child(root)));
    tlog_node_info same = info_of(child_named(root, "Same"));
    assert_int_equal(same.count, 3);
    assert_ptr_equal(same.site, &here);   /* the first instance's */
    assert_int_equal(tlog_site_instances(&here) - here0, 1);
    assert_int_equal(tlog_site_instances(&there) - there0, 2);
    tlog_frame_release(f);
    tlog_destroy(log);
}

static void shorter_info_struct_is_filled_only_up_to_its_size(void **state)
{
    tlog_frame *f = tlog_frame_latest(*state);
    tlog_node_info info;
    memset(&info, 0xab, sizeof info);
    info.size = offsetof(tlog_node_info, kind);
    assert_int_equal(tlog_node_get_info(tlog_frame_root(f), &info), TLOG_OK);
    assert_string_equal(info.name, "Frame");
    unsigned char *tail = (unsigned char *)&info + offsetof(tlog_node_info, kind);
    assert_int_equal(tail[0], 0xab);
    info.size = 0;
    assert_int_equal(tlog_node_get_info(tlog_frame_root(f), &info), TLOG_EINVAL);
    tlog_frame_release(f);
}

/* Frames read as they end (tlog_frame_latest, tlog_dump) and later pushed
 * out of the queue were not lost: frames_dropped counts unread ones only. */
static void frames_read_then_pushed_out_are_not_dropped(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = 8;
    tlog_log *log = make_log(&c);
    for (int i = 0; i < 12; i++) {
        begin_at(log, "F", i * 10);
        end_at(log, "F", i * 10 + 5);
        tlog_frame_release(tlog_frame_latest(log));
    }
    assert_int_equal(stats_of(log).frames_dropped, 0);
    for (int i = 12; i < 24; i++) {   /* unread: they push out 8 read ones */
        begin_at(log, "F", i * 10);
        end_at(log, "F", i * 10 + 5);
    }
    assert_int_equal(stats_of(log).frames_dropped, 4);   /* then 4 of their own */
    tlog_destroy(log);
}

static void queue_keeps_newest_and_counts_dropped(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = 3;
    tlog_log *log = make_log(&c);
    assert_null(tlog_frame_latest(log));
    assert_null(tlog_frame_pop(log));
    for (int i = 0; i < 5; i++) {
        begin_at(log, "F", i * 10);
        end_at(log, "F", i * 10 + 5);
    }
    assert_int_equal(tlog_frame_count(log), 3);
    tlog_stats s = stats_of(log);
    assert_int_equal(s.frames_completed, 5);
    assert_int_equal(s.frames_dropped, 2);
    tlog_frame *latest = tlog_frame_latest(log);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(latest, &fi);
    assert_int_equal(fi.serial, 5);
    tlog_frame_release(latest);
    for (uint64_t want = 3; want <= 5; want++) {
        tlog_frame *f = tlog_frame_pop(log);
        assert_non_null(f);
        tlog_frame_get_info(f, &fi);
        assert_int_equal(fi.serial, want);
        tlog_frame_release(f);
    }
    assert_int_equal(tlog_frame_count(log), 0);
    tlog_destroy(log);
}

/* A dashboard thread reads frames while the application records. */
typedef struct reader_state {
    tlog_log *log;
    int stop;
    int frames_seen;
} reader_state;

static void *dashboard(void *arg)
{
    reader_state *r = arg;
    while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
        tlog_frame *f = tlog_frame_latest(r->log);
        if (!f)
            continue;
        const tlog_node *root = tlog_frame_root(f);
        assert_string_equal(info_of(root).name, "F");
        assert_int_equal(child_count(root), 1);
        assert_int_equal(info_of(tlog_node_first_child(root)).count, 10);
        __atomic_fetch_add(&r->frames_seen, 1, __ATOMIC_RELAXED);
        tlog_frame_release(f);
    }
    return NULL;
}

static void frames_can_be_walked_while_recording(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = 2};
    reader_state r = {.log = make_log(&c)};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, dashboard, &r), 0);
    const tlog_site *fs = site_named("F"), *ws = site_named("work");
    for (int i = 0; i < 2000; i++) {
        tlog_log_begin(r.log, fs);
        for (int k = 0; k < 10; k++) {
            tlog_log_begin(r.log, ws);
            tlog_log_end(r.log, ws);
        }
        tlog_log_end(r.log, fs);
        if (i == 1000)
            while (__atomic_load_n(&r.frames_seen, __ATOMIC_RELAXED) == 0)
                ;
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    assert_true(r.frames_seen > 0);
    tlog_destroy(r.log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(root_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(children_in_order_of_first_start, setup, teardown),
        cmocka_unit_test_setup_teardown(nested_and_merged_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(execution_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(visitor_walks_parents_first, setup, teardown),
        cmocka_unit_test_setup_teardown(visitor_can_skip_a_subtree, setup, teardown),
        cmocka_unit_test_setup_teardown(frame_info_and_instances, setup, teardown),
        cmocka_unit_test(instances_are_listed_in_begin_order),
        cmocka_unit_test(sites_of_one_title_share_a_row),
        cmocka_unit_test_setup_teardown(shorter_info_struct_is_filled_only_up_to_its_size,
                                        setup, teardown),
        cmocka_unit_test(queue_keeps_newest_and_counts_dropped),
        cmocka_unit_test(frames_read_then_pushed_out_are_not_dropped),
        cmocka_unit_test(frames_can_be_walked_while_recording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
