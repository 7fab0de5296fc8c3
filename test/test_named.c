/* Scopes whose names are made at run time (TIMERLOG_SCOPE_NAMED): one site
 * per (call site, name), names copied, long names cut, the level checked
 * before the name is made, the same sites from every thread. The bound of
 * the table is tested by test_named_full.c, in a process of its own. */
#include <pthread.h>

#include "common.h"

static collected_errors errors;

/* The default log's newest frame of this thread, as the tests read it. */
static tlog_frame *last_frame(void)
{
    tlog_frame *f = tlog_frame_latest_of(NULL, TLOG_THREAD_SELF);
    assert_non_null(f);
    return f;
}

static uint64_t names_in_table(void)
{
    tlog_names_info info = {.size = sizeof info};
    assert_int_equal(tlog_names_get_info(&info), TLOG_OK);
    return info.names;
}

static void same_name_twice_is_one_row(void **state)
{
    (void)state;
    uint64_t before = names_in_table();
    char a[32], b[32];
    snprintf(a, sizeof a, "Kernel %d", 7);
    snprintf(b, sizeof b, "Kernel %d", 7);   /* same text, another buffer */
    {
        TIMERLOG_SCOPE("Frame");
        for (int i = 0; i < 2; i++) {
            TIMERLOG_SCOPE_NAMED(i == 0 ? a : b);
        }
    }
    assert_int_equal(names_in_table(), before + 1);
    tlog_frame *f = last_frame();
    const tlog_node *root = tlog_frame_root(f);
    assert_int_equal(child_count(root), 1);
    tlog_node_info in = info_of(tlog_node_first_child(root));
    assert_string_equal(in.name, "Kernel 7");
    assert_int_equal(in.count, 2);
    assert_string_equal(in.file, __FILE__);
    assert_int_equal(tlog_site_instances(in.site), 2);
    tlog_frame_release(f);
}

static void other_names_other_rows(void **state)
{
    (void)state;
    const char *names[] = {"Alpha", "Beta", "Alpha", "Gamma", "Alpha"};
    {
        TIMERLOG_SCOPE("Frame");
        for (int i = 0; i < 5; i++) {
            TIMERLOG_SCOPE_NAMED(names[i]);
        }
        /* The same title at another call site: its own site, the same row
         * (rows merge by title). */
        TIMERLOG_SCOPE_NAMED(names[1]);
    }
    tlog_frame *f = last_frame();
    const tlog_node *root = tlog_frame_root(f);
    assert_int_equal(child_count(root), 3);
    assert_int_equal(info_of(child_named(root, "Alpha")).count, 3);
    assert_int_equal(info_of(child_named(root, "Beta")).count, 2);
    assert_int_equal(info_of(child_named(root, "Gamma")).count, 1);
    tlog_frame_release(f);
}

/* The caller's buffer is overwritten, and freed, as soon as the scope has
 * begun: the row keeps the name it had (AddressSanitizer would see a read
 * of the freed buffer). */
static void buffer_reused_right_after_begin(void **state)
{
    (void)state;
    {
        TIMERLOG_SCOPE("Frame");
        char *asset = malloc(64);
        assert_non_null(asset);
        strcpy(asset, "Load brick.png");
        {
            TIMERLOG_SCOPE_NAMED(asset);
            memset(asset, 'X', 63);
            asset[63] = '\0';
            free(asset);
            char label[32];
            for (int i = 0; i < 3; i++) {
                snprintf(label, sizeof label, "Mip %d", i);
                TIMERLOG_SCOPE_NAMED(label);
                strcpy(label, "overwritten");
            }
        }
    }
    tlog_frame *f = last_frame();
    char *dump = dump_string(f, NULL);
    assert_non_null(strstr(dump, "(C) Load brick.png\n"));
    assert_non_null(strstr(dump, "(C) Mip 0\n"));
    assert_non_null(strstr(dump, "(C) Mip 1\n"));
    assert_non_null(strstr(dump, "(C) Mip 2\n"));
    assert_null(strstr(dump, "XXX"));
    assert_null(strstr(dump, "overwritten"));
    const tlog_node *load = child_named(tlog_frame_root(f), "Load brick.png");
    assert_non_null(load);
    assert_int_equal(child_count(load), 3);
    free(dump);
    tlog_frame_release(f);
}

static int names_made;

static const char *make_name(void)
{
    names_made++;
    return "Made";
}

static void level_is_checked_before_the_name_is_made(void **state)
{
    (void)state;
    assert_int_equal(tlog_set_level(NULL, TLOG_LEVEL_COARSE), TLOG_OK);
    {
        TIMERLOG_SCOPE("Frame");
        TIMERLOG_SCOPE_NAMED_L(TLOG_LEVEL_FINE, make_name());
    }
    assert_int_equal(names_made, 0);
    tlog_frame *f = last_frame();
    assert_int_equal(child_count(tlog_frame_root(f)), 0);
    tlog_frame_release(f);
    assert_int_equal(tlog_set_level(NULL, TLOG_LEVEL_FINE), TLOG_OK);
    {
        TIMERLOG_SCOPE("Frame");
        TIMERLOG_SCOPE_NAMED_L(TLOG_LEVEL_FINE, make_name());
    }
    assert_int_equal(names_made, 1);
    f = last_frame();
    assert_non_null(child_named(tlog_frame_root(f), "Made"));
    tlog_frame_release(f);
}

static const tlog_site here = {"(other names)", "named.c", "here", 10, TLOG_LEVEL_COARSE};
static const tlog_site there = {"(other names)", "named.c", "there", 20, TLOG_LEVEL_FINE};

static void sites_share_the_call_site(void **state)
{
    (void)state;
    const tlog_site *s = tlog_site_named(&here, "Solve");
    assert_non_null(s);
    assert_string_equal(s->name, "Solve");
    assert_string_equal(s->file, "named.c");
    assert_string_equal(s->function, "here");
    assert_int_equal(s->line, 10);
    assert_int_equal(s->level, TLOG_LEVEL_COARSE);
    assert_int_equal(tlog_site_id(s), tlog_site_id(&here));
    assert_ptr_equal(tlog_site_named(&here, "Solve"), s);   /* the thread's last */
    /* Another call site: another site, whatever the name. */
    const tlog_site *t = tlog_site_named(&there, "Solve");
    assert_ptr_not_equal(t, s);
    assert_int_equal(t->level, TLOG_LEVEL_FINE);
    assert_ptr_equal(tlog_site_named(&here, "Solve"), s);
    /* Names that only start like the last one, or that it starts like. */
    const tlog_site *sol = tlog_site_named(&here, "Sol");
    const tlog_site *solver = tlog_site_named(&here, "Solver");
    assert_ptr_not_equal(sol, s);
    assert_ptr_not_equal(solver, s);
    assert_ptr_not_equal(sol, solver);
    assert_ptr_equal(tlog_site_named(&here, "Solve"), s);   /* from the table */
    assert_ptr_equal(tlog_site_named(&here, NULL), &here);
    assert_null(tlog_site_named(NULL, "Solve"));
    tlog_names_info info = {.size = sizeof info};
    assert_int_equal(tlog_names_get_info(&info), TLOG_OK);
    assert_int_equal(info.refused, 0);
    assert_true(info.bytes > 0);
    assert_int_equal(tlog_names_get_info(NULL), TLOG_EINVAL);
    tlog_names_info none = {.size = 0};
    assert_int_equal(tlog_names_get_info(&none), TLOG_EINVAL);
}

static void long_names_are_cut(void **state)
{
    (void)state;
    enum { N = TLOG_RUNTIME_NAME_BYTES };
    char a[N + 64], b[N + 64];
    memset(a, 'a', sizeof a);
    a[sizeof a - 1] = '\0';
    memcpy(b, a, sizeof b);
    b[N + 10] = 'b';             /* differs only past the bytes kept */
    const tlog_site *s = tlog_site_named(&here, a);
    assert_int_equal(strlen(s->name), N + 3);
    assert_memory_equal(s->name, a, N);
    assert_string_equal(s->name + N, "...");
    assert_ptr_equal(tlog_site_named(&here, b), s);     /* the thread's last */
    assert_ptr_equal(tlog_site_named(&there, b), tlog_site_named(&there, a));
    /* Exactly N bytes: kept whole, another site. */
    a[N] = '\0';
    const tlog_site *whole = tlog_site_named(&here, a);
    assert_ptr_not_equal(whole, s);
    assert_string_equal(whole->name, a);
    /* The head of a longer name is not the name of that length. */
    a[N] = 'a';
    assert_ptr_equal(tlog_site_named(&here, a), s);
    /* A two-byte character across the cut is left out whole. */
    char u[N + 8];
    memset(u, 'u', sizeof u);
    u[N - 1] = (char)0xc3;       /* "é": bytes N-1 and N */
    u[N] = (char)0xa9;
    u[sizeof u - 1] = '\0';
    const tlog_site *cut = tlog_site_named(&here, u);
    assert_int_equal(strlen(cut->name), N - 1 + 3);
    assert_memory_equal(cut->name, u, N - 1);
    assert_string_equal(cut->name + N - 1, "...");
}

#define THREADS 4
#define ROUNDS 2000

typedef struct worker {
    pthread_t thread;
    const tlog_site *seen[8];
    int mismatches;
} worker;

static const tlog_site shared = {"(other names)", "named.c", "shared", 30, TLOG_LEVEL_COARSE};

static void *work(void *arg)
{
    worker *w = arg;
    char name[16];
    for (int r = 0; r < ROUNDS; r++) {
        TIMERLOG_SCOPE("Frame");
        for (int k = 0; k < 8; k++) {
            int which = (k * 5 + r) % 8;
            snprintf(name, sizeof name, "Task %d", which);
            TIMERLOG_SCOPE_NAMED(name);   /* one call site for all threads */
            const tlog_site *s = tlog_site_named(&shared, name);
            if (!w->seen[which])
                w->seen[which] = s;
            w->mismatches += w->seen[which] != s || strcmp(s->name, name) != 0;
        }
    }
    return NULL;
}

static void threads_get_the_same_sites(void **state)
{
    (void)state;
    worker w[THREADS] = {0};
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(w[i].thread, NULL), 0);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(w[i].mismatches, 0);
        for (int k = 0; k < 8; k++)
            assert_ptr_equal(w[i].seen[k], w[0].seen[k]);
    }
    tlog_frame *f = tlog_frame_latest(NULL);   /* a worker's last frame */
    assert_non_null(f);
    const tlog_node *root = tlog_frame_root(f);
    assert_int_equal(child_count(root), 8);
    for (int k = 0; k < 8; k++) {
        char name[16];
        snprintf(name, sizeof name, "Task %d", k);
        const tlog_node *row = child_named(root, name);
        assert_non_null(row);
        assert_int_equal(info_of(row).count, 1);
    }
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
        cmocka_unit_test(same_name_twice_is_one_row),
        cmocka_unit_test(other_names_other_rows),
        cmocka_unit_test(buffer_reused_right_after_begin),
        cmocka_unit_test(level_is_checked_before_the_name_is_made),
        cmocka_unit_test(sites_share_the_call_site),
        cmocka_unit_test(long_names_are_cut),
        cmocka_unit_test(threads_get_the_same_sites),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (errors.count) {
        fprintf(stderr, "unexpected error reports: %d, last: %s\n", errors.count, errors.last);
        failed++;
    }
    return failed;
}
