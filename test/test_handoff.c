/* Hand-off tokens: workers adopt a parent's scope, timings are inserted
 * under a named scope from other threads, and misuse is refused clearly. */
#include <pthread.h>

#include "common.h"


typedef void (*body_fn)(fixture *fx, tlog_token *token);

typedef struct run_args {
    fixture *fx;
    tlog_token *token;
    body_fn body;
} run_args;

static void *run_body(void *arg)
{
    run_args *a = arg;
    a->body(a->fx, a->token);
    return NULL;
}

static void on_thread(fixture *fx, tlog_token *token, body_fn body)
{
    run_args a = {fx, token, body};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_body, &a), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static void empty_token_cannot_be_adopted(void **state)
{
    fixture *fx = *state;
    tlog_token token = tlog_handoff(fx->log);
    assert_int_equal(token.thread, 0);
    assert_int_equal(tlog_adopt_begin(&token), TLOG_EINVAL);
    assert_int_equal(tlog_adopt_begin(NULL), TLOG_EINVAL);
    assert_int_equal(tlog_insert_to(&token, site_named("x"), TLOG_KIND_CONTROL, 0, 1),
                     TLOG_EINVAL);
}

static void one_adoption_at_a_time_and_matching_ends(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    tlog_token token = tlog_handoff(fx->log);
    assert_int_equal(tlog_adopt_begin(&token), TLOG_OK);
    assert_int_equal(tlog_adopt_begin(&token), TLOG_EBUSY);
    tlog_token other = token;
    other.scope++;
    assert_int_equal(tlog_adopt_end(&other), TLOG_EINVAL);
    assert_int_equal(tlog_adopt_end(&token), TLOG_OK);
    assert_int_equal(tlog_adopt_end(&token), TLOG_EINVAL);
    end_at(fx->log, "Frame", 1);
}

static void late_body(fixture *fx, tlog_token *token)
{
    (void)fx;
    at_ms(5);
    assert_int_equal(tlog_adopt_begin(token), TLOG_OK);
    at_ms(6);
    assert_int_equal(tlog_adopt_end(token), TLOG_ELATE);
}

static void work_after_the_frame_ended_is_dropped_and_counted(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    tlog_token token = tlog_handoff(fx->log);
    end_at(fx->log, "Frame", 1);
    on_thread(fx, &token, late_body);
    assert_int_equal(stats_of(fx->log).late_work, 1);
    assert_int_equal(count_code(&fx->errors, TLOG_ELATE), 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_int_equal(child_count(tlog_frame_root(f)), 0);
    tlog_frame_release(f);
}

static void insert_body(fixture *fx, tlog_token *token)
{
    (void)fx;
    tlog_thread_name("Inserter");
    assert_int_equal(tlog_insert_to(token, site_named("Device work"), TLOG_KIND_EXECUTION,
                                    2 * NS_PER_MS, 9 * NS_PER_MS),
                     TLOG_OK);
}

static void insert_to_lands_under_the_named_scope(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    begin_at(fx->log, "Launch", 1);
    tlog_token launch = tlog_handoff(fx->log);
    end_at(fx->log, "Launch", 2);
    begin_at(fx->log, "Other", 3);
    on_thread(fx, &launch, insert_body); /* "Other" is innermost now */
    end_at(fx->log, "Other", 4);
    end_at(fx->log, "Frame", 10);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_node *root = tlog_frame_root(f);
    const tlog_node *row = child_named(child_named(root, "Launch"), "Device work");
    assert_non_null(row);
    assert_null(tlog_node_first_child(child_named(root, "Other")));
    tlog_node_info ri = info_of(row);
    assert_string_equal(ri.thread_name, "Inserter");
    assert_int_not_equal(ri.thread, info_of(root).thread);
    assert_int_equal(ri.kind, TLOG_KIND_EXECUTION);
    assert_int_equal(ri.total_ns, 7 * NS_PER_MS);
    assert_true(ri.percent_of_parent > 699.99 && ri.percent_of_parent < 700.01);
    tlog_frame_release(f);
}

static tlog_token nested_seen;

static int depth_in_adoption;

static void nested_body(fixture *fx, tlog_token *token)
{
    assert_int_equal(tlog_adopt_begin(token), TLOG_OK);
    depth_in_adoption = tlog_depth(fx->log);
    begin_at(fx->log, "Task", 1);
    nested_seen = tlog_handoff(fx->log);
    begin_at(fx->log, "Left open", 2);
    at_ms(3);
    assert_int_equal(tlog_adopt_end(token), TLOG_OK);
}

static void handoff_inside_adopted_work_passes_the_adopted_token(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    tlog_token token = tlog_handoff(fx->log);
    on_thread(fx, &token, nested_body);
    assert_memory_equal(&nested_seen, &token, sizeof token);
    assert_int_equal(depth_in_adoption, 0); /* adopting opens no scope */
    /* The scopes left open in the adopted work were closed and reported. */
    assert_int_equal(count_code(&fx->errors, TLOG_EMISMATCH), 1);
    end_at(fx->log, "Frame", 10);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_node *row = tlog_node_first_child(tlog_frame_root(f));
    assert_non_null(row);
    const tlog_node *open = child_named(child_named(row, "Task"), "Left open");
    assert_non_null(open);
    assert_int_equal(info_of(open).flags & TLOG_NODE_REPAIRED, TLOG_NODE_REPAIRED);
    /* The repair is counted in the frame the work was done for. */
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.scopes_repaired, 2); /* "Task" and "Left open" */
    char *dump = dump_string(f, NULL);
    assert_non_null(strstr(dump, "# 2 scopes closed by a repair rule\n"));
    free(dump);
    tlog_frame_release(f);
}

static tlog_token worker_scope;

static void busy_worker_body(fixture *fx, tlog_token *token)
{
    tlog_thread_name("Busy");
    begin_at(fx->log, "Worker frame", 0);
    begin_at(fx->log, "Worker scope", 1);
    assert_int_equal(tlog_adopt_begin(token), TLOG_OK);
    begin_at(fx->log, "Job", 2);
    begin_at(fx->log, "Step", 2.5);
    end_at(fx->log, "Step", 3);
    end_at(fx->log, "Job", 4);
    assert_int_equal(tlog_adopt_end(token), TLOG_OK);
    worker_scope = tlog_handoff(fx->log);
    assert_int_equal(tlog_insert_to(&worker_scope, site_named("Into worker scope"),
                                    TLOG_KIND_CONTROL, 5 * NS_PER_MS, 6 * NS_PER_MS),
                     TLOG_OK);
    end_at(fx->log, "Worker scope", 7);
    end_at(fx->log, "Worker frame", 8);
}

static void adopting_inside_an_own_frame_keeps_both_trees_apart(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    tlog_token token = tlog_handoff(fx->log);
    on_thread(fx, &token, busy_worker_body);
    end_at(fx->log, "Frame", 10);

    tlog_frame *worker = tlog_frame_pop(fx->log);
    tlog_frame *main_frame = tlog_frame_pop(fx->log);
    assert_non_null(worker);
    assert_non_null(main_frame);
    const tlog_node *wroot = tlog_frame_root(worker);
    assert_string_equal(info_of(wroot).name, "Worker frame");
    const tlog_node *ws = child_named(wroot, "Worker scope");
    assert_int_equal(child_count(ws), 1);
    assert_non_null(child_named(ws, "Into worker scope"));

    const tlog_node *row = child_named(tlog_frame_root(main_frame), "Busy");
    assert_non_null(row);
    assert_int_equal(info_of(row).total_ns, 3 * NS_PER_MS); /* adopted at 1, ended at 4 */
    assert_non_null(child_named(child_named(row, "Job"), "Step"));
    tlog_frame_release(worker);
    tlog_frame_release(main_frame);
    assert_int_equal(fx->errors.count, 0);
}

static void queries_body(fixture *fx, tlog_token *token)
{
    (void)token;
    assert_int_equal(tlog_depth(fx->log), 0);
    assert_int_equal(tlog_handoff(fx->log).thread, 0);
    assert_int_equal(tlog_adopt_end(token), TLOG_EINVAL);
}

static void queries_do_not_register_a_thread(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    tlog_token token = tlog_handoff(fx->log);
    uint64_t threads = stats_of(fx->log).threads;
    on_thread(fx, &token, queries_body);
    assert_int_equal(stats_of(fx->log).threads, threads);
    end_at(fx->log, "Frame", 1);
}

static void adopt_macro_body(fixture *fx, tlog_token *token)
{
    tlog_thread_name("Macro worker");
    at_ms(1);
    {
        TIMERLOG_ADOPT(*token);
        begin_at(fx->log, "Inside", 2);
        end_at(fx->log, "Inside", 3);
        at_ms(4);
    }
}

static void adopt_macro_ends_with_the_block(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    tlog_token token = tlog_handoff(fx->log);
    on_thread(fx, &token, adopt_macro_body);
    end_at(fx->log, "Frame", 10);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_node *row = child_named(tlog_frame_root(f), "Macro worker");
    assert_non_null(row);
    assert_int_equal(info_of(row).total_ns, 3 * NS_PER_MS);
    assert_non_null(child_named(row, "Inside"));
    tlog_frame_release(f);
}

typedef struct pooled {
    tlog_log *log;
    tlog_token token;
    double at;
    const char *name;
} pooled;

static void *pooled_work(void *arg)
{
    pooled *p = arg;
    tlog_thread_name(p->name);
    at_ms(p->at);
    assert_int_equal(tlog_adopt_begin(&p->token), TLOG_OK);
    at_ms(p->at + 1);
    assert_int_equal(tlog_adopt_end(&p->token), TLOG_OK);
    return NULL;
}

/* Worker rows follow the parent's other children in order of title, then
 * of thread id, whatever order the workers started in: frames line up row
 * for row. */
static void worker_rows_keep_one_order(void **state)
{
    fixture *fx = *state;
    static const char *names[] = {"Worker A", "Worker B", "Worker C"};
    pthread_t t[3];
    pooled p[3];
    for (int frame = 0; frame < 2; frame++) {
        double t0 = 10.0 * frame;
        begin_at(fx->log, "Frame", t0);
        begin_at(fx->log, "Parallel", t0);
        for (int k = 0; k < 3; k++) {
            /* Frame 0: A starts last; frame 1: A starts first. */
            double start = t0 + (frame ? k : 3 - k);
            p[k] = (pooled){fx->log, tlog_handoff(fx->log), start, names[k]};
        }
        for (int k = 0; k < 3; k++) {   /* one after another: ids in order */
            assert_int_equal(pthread_create(&t[k], NULL, pooled_work, &p[k]), 0);
            assert_int_equal(pthread_join(t[k], NULL), 0);
        }
        begin_at(fx->log, "Host part", t0 + 5);
        end_at(fx->log, "Host part", t0 + 6);
        end_at(fx->log, "Parallel", t0 + 7);
        end_at(fx->log, "Frame", t0 + 8);
        tlog_frame *f = tlog_frame_latest(fx->log);
        const tlog_node *c = tlog_node_first_child(child_named(tlog_frame_root(f), "Parallel"));
        const char *want[] = {"Host part", "Worker A", "Worker B", "Worker C"};
        for (int k = 0; k < 4; k++, c = tlog_node_next_sibling(c))
            assert_string_equal(info_of(c).name, want[k]);
        tlog_frame_release(f);
    }
}

/* Workers made afresh every frame, in another order each time: their rows
 * keep the order of their titles, numbers compared as numbers. */
static void new_workers_every_frame_keep_their_titles_order(void **state)
{
    fixture *fx = *state;
    static const char *names[] = {"Worker 10", "Worker 9", "Worker 1"};
    for (int frame = 0; frame < 2; frame++) {
        double t0 = 10.0 * frame;
        begin_at(fx->log, "Frame", t0);
        for (int k = 0; k < 3; k++) {   /* frame 0: 10, 9, 1; frame 1: 1, 9, 10 */
            int w = frame ? 2 - k : k;
            pooled p = {fx->log, tlog_handoff(fx->log), t0 + 1 + k, names[w]};
            pthread_t t;
            assert_int_equal(pthread_create(&t, NULL, pooled_work, &p), 0);
            assert_int_equal(pthread_join(t, NULL), 0);
        }
        end_at(fx->log, "Frame", t0 + 8);
        tlog_frame *f = tlog_frame_latest(fx->log);
        const tlog_node *c = tlog_node_first_child(tlog_frame_root(f));
        const char *want[] = {"Worker 1", "Worker 9", "Worker 10"};
        for (int k = 0; k < 3; k++, c = tlog_node_next_sibling(c))
            assert_string_equal(info_of(c).name, want[k]);
        tlog_frame_release(f);
    }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(empty_token_cannot_be_adopted),
        T(one_adoption_at_a_time_and_matching_ends),
        T(work_after_the_frame_ended_is_dropped_and_counted),
        T(insert_to_lands_under_the_named_scope),
        T(handoff_inside_adopted_work_passes_the_adopted_token),
        T(adopting_inside_an_own_frame_keeps_both_trees_apart),
        T(adopt_macro_ends_with_the_block),
        T(queries_do_not_register_a_thread),
        T(worker_rows_keep_one_order),
        T(new_workers_every_frame_keep_their_titles_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
