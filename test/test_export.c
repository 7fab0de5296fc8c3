/* Exports, parsed back by real parsers (test/check_export.py, Python's json
 * and csv modules): Chrome trace rules, the JSON tree's fields, CSV rows. */
#include <pthread.h>
#include <unistd.h>

#include "device_fixture.h"

static char dir[256];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/timerlog-export-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int check(const char *kind, const char *file, const char *extra)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "python3 %s %s %s/%s %s", CHECK_EXPORT, kind, dir, file,
             extra ? extra : "");
    return system(cmd);
}

static FILE *create(const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    return fp;
}

typedef struct worker_arg {
    sim_fixture *fx;
    tlog_token token;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    /* 32 two-byte characters: cut at 63 bytes, on a character boundary. */
    tlog_thread_name("Worker \"A\", with a comma, "
                     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    tlog_adopt_begin(&a->token);
    tlog_log_begin(a->fx->log, site_named("Tile"));
    tlog_log_end(a->fx->log, site_named("Tile"));
    tlog_adopt_end(&a->token);
    return NULL;
}

/* Host rows, a worker's share, device work on two queues with launch rows,
 * a sync scope, an inserted timing and a forced sync. */
static tlog_frame *busy_frame(sim_fixture *fx, double t0)
{
    host_begin(fx, "Frame");
    host_begin(fx, "Parallel");
    worker_arg a = {fx, tlog_handoff(fx->log)};
    pthread_t th;
    pthread_create(&th, NULL, worker, &a);
    pthread_join(th, NULL);
    kernel(fx, fx->q1, "Known 2ms", 2.0);
    kernel(fx, fx->q2, "Other queue", 1.0);
    host_end(fx, "Parallel");
    sync_until(fx, "GPU Sync", t0 + 3.0);
    tlog_ticks now = tlog_now(fx->log);
    tlog_insert(fx->log, site_named("Inserted \xff not UTF-8"), TLOG_KIND_EXECUTION,
                now - 500000, now);
    kernel(fx, fx->q1, "Draw", 4.0);
    host_end(fx, "Frame");
    return tlog_frame_latest(fx->log);   /* forced sync for "Draw" */
}

static void exports_parse_and_follow_the_rules(void **state)
{
    (void)state;
    sim_options o = {.device_flags = TLOG_DEVICE_LAUNCH_ROWS};
    sim_fixture *fx = sim_fixture_make(&o);
    tlog_frame *frames[3];
    for (int k = 0; k < 3; k++)
        frames[k] = busy_frame(fx, sim_ms(fx));
    const tlog_frame *const *all = (const tlog_frame *const *)frames;
    FILE *fp = create("trace.json");
    assert_int_equal(tlog_export_chrome(all, 3, fp), TLOG_OK);
    fclose(fp);
    fp = create("tree.json");
    assert_int_equal(tlog_export_json(all, 3, fp), TLOG_OK);
    fclose(fp);
    fp = create("rows.csv");
    assert_int_equal(tlog_export_csv(all, 3, fp), TLOG_OK);
    fclose(fp);
    for (int k = 0; k < 3; k++)
        tlog_frame_release(frames[k]);
    sim_fixture_free(fx);
    assert_int_equal(check("chrome", "trace.json", "'Known 2ms=2000.000' --ranks=1"), 0);
    assert_int_equal(check("json", "tree.json", NULL), 0);
    assert_int_equal(check("csv", "rows.csv", NULL), 0);
}

/* The checker itself catches a partial overlap. */
static void checker_rejects_partial_overlap(void **state)
{
    (void)state;
    FILE *fp = create("bad.json");
    fputs("{\"traceEvents\":["
          "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"r\"}},"
          "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":1,\"args\":{\"name\":\"t\"}},"
          "{\"name\":\"a\",\"cat\":\"c\",\"ph\":\"X\",\"ts\":0,\"dur\":10,\"pid\":0,\"tid\":1},"
          "{\"name\":\"b\",\"cat\":\"c\",\"ph\":\"X\",\"ts\":5,\"dur\":10,\"pid\":0,\"tid\":1}"
          "]}",
          fp);
    fclose(fp);
    assert_int_not_equal(check("chrome", "bad.json", NULL), 0);
}

/* Two ranks' streams, read back and exported together: one process each. */
static void ranks_become_processes(void **state)
{
    (void)state;
    char paths[2][512];
    for (int rank = 0; rank < 2; rank++) {
        snprintf(paths[rank], sizeof paths[rank], "%s/rank-%%.tlog", dir);
        char value[8];
        snprintf(value, sizeof value, "%d", rank);
        setenv("PMI_RANK", value, 1);
        sim_fixture *fx = sim_fixture_make(NULL);
        tlog_destroy(fx->log);
        tlog_config c = test_config(&fx->errors);
        c.clock = tlog_sim_clock;
        c.clock_user = fx->sim;
        c.stream_path = paths[rank];
        fx->log = make_log(&c);
        assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, NULL, &fx->dev), TLOG_OK);
        tlog_frame_release(busy_frame(fx, sim_ms(fx)));
        sim_fixture_free(fx);
        unsetenv("PMI_RANK");
        snprintf(paths[rank], sizeof paths[rank], "%s/rank-%d.tlog", dir, rank);
    }
    tlog_reader *r[2];
    tlog_frame *f[2];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(tlog_reader_open(paths[k], &r[k]), TLOG_OK);
        assert_int_equal(tlog_reader_next(r[k], &f[k]), TLOG_OK);
    }
    FILE *fp = create("ranks.json");
    assert_int_equal(tlog_export_chrome((const tlog_frame *const *)f, 2, fp), TLOG_OK);
    fclose(fp);
    for (int k = 0; k < 2; k++) {
        tlog_frame_release(f[k]);
        tlog_reader_close(r[k]);
    }
    assert_int_equal(check("chrome", "ranks.json", "--ranks=2"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exports_parse_and_follow_the_rules),
        cmocka_unit_test(checker_rejects_partial_overlap),
        cmocka_unit_test(ranks_become_processes),
    };
    return cmocka_run_group_tests(tests, make_dir, NULL);
}
