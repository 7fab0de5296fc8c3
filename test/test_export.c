/* Exports, parsed back by real parsers (test/check_export.py, Python's json
 * and csv modules): Chrome trace rules, the JSON tree's fields, CSV rows. */
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
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

typedef int (*export_fn)(const tlog_frame *const *frames, size_t n, FILE *out);

/* The export of n frames by `fn` (tlog_export_chrome, _json or _csv), in
 * `file` of the test's directory. */
static void write_export(const char *file, export_fn fn, const tlog_frame *const *frames,
                         size_t n)
{
    FILE *fp = create(file);
    assert_int_equal(fn(frames, n, fp), TLOG_OK);
    fclose(fp);
}

static void write_chrome(const char *file, const tlog_frame *const *frames, size_t n)
{
    write_export(file, tlog_export_chrome, frames, n);
}

/* A frame's CSV export, as one malloc'd string. */
static char *csv_of(const tlog_frame *f)
{
    FILE *fp = tmpfile();
    assert_non_null(fp);
    assert_int_equal(tlog_export_csv(&f, 1, fp), TLOG_OK);
    return read_back(fp);
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
    write_chrome("trace.json", all, 3);
    write_export("tree.json", tlog_export_json, all, 3);
    write_export("rows.csv", tlog_export_csv, all, 3);
    for (int k = 0; k < 3; k++)
        tlog_frame_release(frames[k]);
    sim_fixture_free(fx);
    assert_int_equal(check("chrome", "trace.json", "'Known 2ms=2000.000' --ranks=1"), 0);
    assert_int_equal(check("json", "tree.json", NULL), 0);
    assert_int_equal(check("csv", "rows.csv", NULL), 0);
}

/* Every queue a track of its own, whatever its number: queue 1 and queue
 * 1001 of one device overlap in time, and not on one track. */
static void every_queue_has_a_track_of_its_own(void **state)
{
    (void)state;
    sim_fixture *fx = sim_fixture_make(NULL);
    assert_int_equal(tlog_device_reserve(fx->dev, 1001), TLOG_OK);   /* none dropped */
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "On queue 1", 1000.0);   /* [0, 1000] ms */
    for (int k = 2; k < 1001; k++) {   /* queues 2 to 1000, used once each */
        tlog_sim_queue *q = tlog_sim_queue_create(fx->sim);
        tlog_device_scope d = tlog_device_begin(fx->dev, q, site_named("Short"));
        tlog_device_end(&d);
        if (k % 100 == 0)   /* their slots go back to the pool */
            sync_until(fx, "Sync", sim_ms(fx) + 0.001);
    }
    tlog_sim_queue *late = tlog_sim_queue_create(fx->sim);   /* the 1001st */
    kernel(fx, late, "On queue 1001", 1000.0);   /* from about 0.01 ms on */
    sync_until(fx, "Sync", 1010.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    uint32_t first = info_of(path(f, "Sync", "On queue 1", NULL)).queue,
             last = info_of(path(f, "Sync", "On queue 1001", NULL)).queue;
    assert_int_equal(last - first, 1000);
    const tlog_frame *const one[] = {f};
    write_chrome("queues.json", one, 1);
    tlog_frame_release(f);
    sim_fixture_free(fx);
    assert_int_equal(check("chrome", "queues.json", NULL), 0);
}

/* Timings inserted by the application may overlap what the thread timed
 * and each other in part: a host timing across the end of a scope, two
 * workers' timings that overlap. Such slices go on lanes of their track,
 * so that every track still nests, and none is left out. */
static void overlapping_inserts_keep_every_track_nested(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    begin_at(log, "Scope", 1);
    end_at(log, "Scope", 10);
    at_ms(20);
    const tlog_ticks ms = 1000000;
    assert_int_equal(tlog_insert(log, site_named("Host across"), TLOG_KIND_CONTROL, 5 * ms,
                                 15 * ms), TLOG_OK);
    assert_int_equal(tlog_insert(log, site_named("Worker 1"), TLOG_KIND_EXECUTION, 2 * ms,
                                 12 * ms), TLOG_OK);
    assert_int_equal(tlog_insert(log, site_named("Worker 2"), TLOG_KIND_EXECUTION, 6 * ms,
                                 18 * ms), TLOG_OK);
    assert_int_equal(tlog_insert(log, site_named("Worker 3"), TLOG_KIND_EXECUTION, 7 * ms,
                                 8 * ms), TLOG_OK);
    end_at(log, "Frame", 20);
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    const tlog_frame *const one[] = {f};
    write_chrome("overlaps.json", one, 1);
    tlog_frame_release(f);
    tlog_destroy(log);
    assert_int_equal(errors.count, 0);
    assert_int_equal(check("chrome", "overlaps.json",
                           "'Host across=10000.000' 'Worker 1=10000.000' "
                           "'Worker 2=12000.000' 'Worker 3=1000.000' 'Scope=9000.000'"),
                     0);
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
    write_chrome("ranks.json", (const tlog_frame *const *)f, 2);
    for (int k = 0; k < 2; k++) {
        tlog_frame_release(f[k]);
        tlog_reader_close(r[k]);
    }
    assert_int_equal(check("chrome", "ranks.json", "--ranks=2"), 0);
}

/* A device that runs behind its host: each frame's `Device past frame
 * end` reaches into the next frame's, on the thread's side track. Slices
 * of different frames are placed together, so that every track nests. */
static void frames_that_overlap_keep_every_track_nested(void **state)
{
    (void)state;
    sim_fixture *fx = sim_fixture_make(NULL);
    for (int k = 0; k < 2; k++) {   /* frames [0, 10] and [10, 20] ms */
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, k ? "Next" : "Long", k ? 10.0 : 30.0);   /* [0, 30], [30, 40] */
        sim_at(fx, 10.0 * (k + 1));
        host_end(fx, "Frame");
    }
    sim_at(fx, 50.0);
    tlog_frame *f[2] = {tlog_frame_pop(fx->log), tlog_frame_pop(fx->log)};
    for (int k = 0; k < 2; k++) {
        assert_non_null(f[k]);
        assert_non_null(path(f[k], "Device past frame end", k ? "Next" : "Long", NULL));
    }
    write_chrome("behind.json", (const tlog_frame *const *)f, 2);
    for (int k = 0; k < 2; k++)
        tlog_frame_release(f[k]);
    sim_fixture_free(fx);
    assert_int_equal(check("chrome", "behind.json", "'Long=30000.000' 'Next=10000.000'"), 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "grep -q '\"Thread 1 (inserted and sync rows), lane 2\"' %s/behind.json", dir);
    assert_int_equal(system(cmd), 0);
}

/* Two runs of a program that is not an MPI job, exported together: both
 * are rank 0, and still two processes, each with its own tracks. */
static void two_logs_of_one_rank_are_two_processes(void **state)
{
    (void)state;
    sim_fixture *fx[2];
    tlog_frame *f[2];
    for (int k = 0; k < 2; k++) {
        fx[k] = sim_fixture_make(NULL);
        host_begin(fx[k], "Frame");
        host_begin(fx[k], k ? "Second run" : "First run");
        sim_at(fx[k], 1.0 + k);
        host_end(fx[k], k ? "Second run" : "First run");
        host_end(fx[k], "Frame");
        f[k] = tlog_frame_pop(fx[k]->log);
        assert_non_null(f[k]);
        nanosleep(&(struct timespec){0, 1000000}, NULL);   /* the next log comes later */
    }
    write_chrome("runs.json", (const tlog_frame *const *)f, 2);
    for (int k = 0; k < 2; k++) {
        tlog_frame_release(f[k]);
        sim_fixture_free(fx[k]);
    }
    assert_int_equal(check("chrome", "runs.json", "--ranks=2"), 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "grep -q '\"rank 0, log 2\"' %s/runs.json", dir);
    assert_int_equal(system(cmd), 0);
}

/* The tids the Chrome trace at `file` puts slices titled `name` on. */
static int tracks_of(const char *file, const char *name)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import json, sys; e = json.load(open('%s/%s'))['traceEvents']; "
             "sys.exit(len({x['tid'] for x in e if x['ph'] == 'X' and x['name'] == '%s'}))\"",
             dir, file, name);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Whether, in the JSON export at `file`, the rows titled `name` list
 * exactly the queues `want` (a Python list of [device, queue]; "None" for
 * no "queues" key), in every frame. */
static int json_queues_are(const char *file, const char *name, const char *want)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import json, sys\n"
             "def rows(r):\n    yield r\n    for c in r['children']: yield from rows(c)\n"
             "got = [None if 'queues' not in r else [[q['device'], q['queue']] for q in "
             "r['queues']] for f in json.load(open('%s/%s'))['frames'] for r in rows(f['root']) "
             "if r['name'] == '%s']\n"
             "sys.exit(0 if got and all(g == %s for g in got) else print(got) or 1)\"",
             dir, file, name, want);
    return system(cmd);
}

/* One row whose kernels ran on two queues: each interval keeps its own
 * queue, in the frame, in the stream read back, in the Chrome trace and in
 * the JSON tree's list of the row's queues. */
static void a_row_s_intervals_keep_their_own_queues(void **state)
{
    (void)state;
    char stream[512];
    snprintf(stream, sizeof stream, "%s/queues.tlog", dir);
    sim_options o = {.stream_path = stream};
    sim_fixture *fx = sim_fixture_make(&o);
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Work", 1.0);
    kernel(fx, fx->q2, "Work", 1.0);
    sync_until(fx, "Sync", 3.0);
    host_end(fx, "Frame");
    tlog_frame *f[2] = {tlog_frame_pop(fx->log)};
    assert_non_null(f[0]);
    sim_fixture_free(fx);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(stream, &r), TLOG_OK);
    assert_int_equal(tlog_reader_next(r, &f[1]), TLOG_OK);
    for (int k = 0; k < 2; k++) {
        uint32_t queues[2];
        size_t found = 0;
        tlog_frame_info fi = {.size = sizeof fi};
        assert_int_equal(tlog_frame_get_info(f[k], &fi), TLOG_OK);
        for (size_t i = 0; i < fi.instances; i++) {
            tlog_instance in = {.size = sizeof in};
            assert_int_equal(tlog_frame_get_instance(f[k], i, &in), TLOG_OK);
            if (strcmp(info_of(in.node).name, "Work") != 0)
                continue;
            assert_true(found < 2);
            assert_non_null(in.device);
            queues[found++] = in.queue;
        }
        assert_int_equal(found, 2);
        assert_int_not_equal(queues[0], queues[1]);
        assert_int_equal(info_of(path(f[k], "Sync", "Work", NULL)).queue, queues[0]);
        write_chrome(k ? "queues-read.json" : "queues-live.json",
                     (const tlog_frame *const *)&f[k], 1);
        const char *tree = k ? "tree-read.json" : "tree-live.json";
        write_export(tree, tlog_export_json, (const tlog_frame *const *)&f[k], 1);
        char want[64];
        snprintf(want, sizeof want, "[['sim', %u], ['sim', %u]]",
                 queues[0] < queues[1] ? queues[0] : queues[1],
                 queues[0] < queues[1] ? queues[1] : queues[0]);
        assert_int_equal(json_queues_are(tree, "Work", want), 0);
        assert_int_equal(json_queues_are(tree, "Sync", "None"), 0);   /* host rows */
    }
    tlog_frame *merged;
    assert_int_equal(tlog_frame_merge((const tlog_frame *const *)f, 2, &merged), TLOG_OK);
    write_export("tree-merged.json", tlog_export_json, (const tlog_frame *const *)&merged, 1);
    assert_int_equal(json_queues_are("tree-merged.json", "Work", "None"), 0);   /* no timeline */
    tlog_frame_release(merged);
    for (int k = 0; k < 2; k++)
        tlog_frame_release(f[k]);
    tlog_reader_close(r);
    assert_int_equal(tracks_of("queues-live.json", "Work"), 2);
    assert_int_equal(tracks_of("queues-read.json", "Work"), 2);
    assert_int_equal(check("chrome", "queues-read.json", NULL), 0);
}

/* Three runs of one frame reduced: each row's spread over the inputs, rows
 * only some inputs have, the dump's columns, and the JSON's rank fields. */
static void reduce_keeps_the_spread_over_inputs(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = 4;
    tlog_log *log = make_log(&c);
    tlog_frame *runs[3];
    for (int r = 0; r < 3; r++) {
        double t = r * 100.0;
        begin_at(log, "Frame", t);
        begin_at(log, "Solve", t);
        end_at(log, "Solve", t + 2.0 * (r + 1));   /* 2, 4, 6 ms */
        if (r == 1) {
            begin_at(log, "Only in run 2", t + 8);
            end_at(log, "Only in run 2", t + 9);
        }
        end_at(log, "Frame", t + 10);
        runs[r] = tlog_frame_latest(log);
    }
    tlog_frame *red, *merged;
    assert_int_equal(tlog_frame_reduce((const tlog_frame *const *)runs, 3, &red), TLOG_OK);
    assert_int_equal(tlog_frame_merge((const tlog_frame *const *)runs, 3, &merged), TLOG_OK);
    for (int r = 0; r < 3; r++)
        tlog_frame_release(runs[r]);

    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(red, &fi), TLOG_OK);
    assert_int_equal(fi.reduced_ranks, 3);
    assert_int_equal(fi.partial_rows, 1);
    assert_int_equal(fi.duration_ns, 10 * NS_PER_MS);
    tlog_node_info solve = info_of(child_named(tlog_frame_root(red), "Solve"));
    assert_int_equal(solve.ranks, 3);
    assert_int_equal(solve.rank_min_ns, 2 * NS_PER_MS);
    assert_int_equal(solve.rank_max_ns, 6 * NS_PER_MS);
    assert_true(solve.rank_mean_ns == 4.0 * NS_PER_MS);
    assert_true(solve.imbalance == 1.5);
    assert_int_equal(solve.total_ns, 12 * NS_PER_MS);
    tlog_node_info once = info_of(child_named(tlog_frame_root(red), "Only in run 2"));
    assert_int_equal(once.ranks, 1);
    assert_int_equal(once.rank_min_ns, 0);
    assert_true(once.imbalance > 2.999 && once.imbalance < 3.001);
    /* A plain merge has no spread. */
    assert_int_equal(info_of(child_named(tlog_frame_root(merged), "Solve")).ranks, 0);

    char *text = dump_string(red, NULL);
    assert_non_null(strstr(text, "> 100.00% 0.010000s | min 0.010000s | max 0.010000s | "
                                 "imbalance 1.00 | (C) Frame\n"));
    assert_non_null(strstr(text, "|-> 40.00% 0.004000s | min 0.002000s | max 0.006000s | "
                                 "imbalance 1.50 | (C) Solve\n"));
    assert_non_null(strstr(text, "(C) Only in run 2 [on 1/3 ranks]\n"));
    assert_non_null(strstr(text, "# reduced over 3 ranks"));
    free(text);

    const tlog_frame *one[] = {red};
    write_export("reduced.json", tlog_export_json, one, 1);
    assert_int_equal(check("json", "reduced.json", NULL), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/reduced.json", dir);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    fseek(in, 0, SEEK_END);
    char *json = read_back(in);
    assert_non_null(strstr(json, "\"reduced_ranks\":3,\"partial_rows\":1,\"root\":"));
    free(json);
    /* Merged and reduced frames have rows but no timeline: the Chrome
     * trace refuses them rather than write an empty one. */
    const tlog_frame *untimed[] = {red, merged};
    for (int k = 0; k < 2; k++) {
        FILE *fp = tmpfile();
        assert_int_equal(tlog_export_chrome(&untimed[k], 1, fp), TLOG_EINVAL);
        assert_int_equal(ftell(fp), 0);
        assert_int_equal(tlog_export_csv(&untimed[k], 1, fp), TLOG_OK);
        fclose(fp);
    }
    tlog_frame_release(red);
    tlog_frame_release(merged);
    tlog_destroy(log);
}

/* A mean of 3,500,499.5 ns is 3,500.4995 us: printed 0.003500s, rounded
 * once, not via 3,500,500 ns. */
static void reduced_means_are_rounded_once(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_frames = 4;
    tlog_log *log = make_log(&c);
    tlog_frame *runs[2];
    for (int r = 0; r < 2; r++) {
        begin_at(log, "Frame", 0);
        end_at(log, "Frame", r ? 3.5005 : 3.500499);
        runs[r] = tlog_frame_latest(log);
    }
    tlog_frame *red;
    assert_int_equal(tlog_frame_reduce((const tlog_frame *const *)runs, 2, &red), TLOG_OK);
    char *text = dump_string(red, NULL);
    assert_non_null(strstr(text, "> 100.00% 0.003500s | min 0.003500s | max 0.003501s"));
    free(text);
    tlog_frame_release(red);
    for (int r = 0; r < 2; r++)
        tlog_frame_release(runs[r]);
    tlog_destroy(log);
}

/* The "ts" of every event of the trace with `kind` in it, in order. */
static size_t stamps(const char *trace, const char *kind, double *ts, size_t most)
{
    size_t n = 0;
    for (const char *p = strstr(trace, kind); p && n < most; p = strstr(p + 1, kind)) {
        const char *at = strstr(p, "\"ts\":"), *end = strchr(p, '}');
        if (at && at < end)
            ts[n++] = strtod(at + 5, NULL);
    }
    return n;
}

/* A loop that launches a kernel an iteration: each kernel's arrow starts at
 * the iteration that launched it, not all at the first. */
static void launch_arrows_start_at_their_own_iteration(void **state)
{
    (void)state;
    sim_fixture *fx = sim_fixture_make(NULL);
    host_begin(fx, "Frame");
    for (int k = 0; k < 3; k++) {
        sim_at(fx, 10.0 * k);
        host_begin(fx, "Dispatch");
        kernel(fx, fx->q1, "Work", 1.0);
        sim_at(fx, 10.0 * k + 2);
        host_end(fx, "Dispatch");
    }
    sync_until(fx, "Sync", 40.0);
    host_end(fx, "Frame");
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    FILE *fp = tmpfile();
    assert_non_null(fp);
    assert_int_equal(tlog_export_chrome((const tlog_frame *const *)&f, 1, fp), TLOG_OK);
    char *trace = read_back(fp);
    double dispatch[4], arrows[4];
    assert_int_equal(stamps(trace, "\"name\":\"Dispatch\"", dispatch, 4), 3);
    assert_int_equal(stamps(trace, "\"ph\":\"s\"", arrows, 4), 3);
    for (int k = 0; k < 3; k++)
        assert_true(arrows[k] == dispatch[k]);
    free(trace);
    tlog_frame_release(f);
    sim_fixture_free(fx);
}

enum { DEEP = 2100 };   /* scopes each side of a hand-off: 4,202 rows deep */

static void *deep_worker(void *p)
{
    tlog_token *token = p;
    tlog_thread_name("Deep");
    tlog_adopt_begin(token);
    for (int k = 0; k < DEEP; k++)
        tlog_log_begin(token->log, site_named("B"));
    for (int k = 0; k < DEEP; k++)
        tlog_log_end(token->log, site_named("B"));
    tlog_adopt_end(token);
    return NULL;
}

/* Nesting on either side of a hand-off adds up past one thread's deepest:
 * a CSV row's path still names every row from the root. */
static void csv_paths_deeper_than_a_thread_nests_are_whole(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.max_depth = 4096;
    tlog_log *log = make_log(&c);
    tlog_log_begin(log, site_named("Frame"));
    for (int k = 0; k < DEEP; k++)
        tlog_log_begin(log, site_named("A"));
    tlog_token token = tlog_handoff(log);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, deep_worker, &token), 0);
    pthread_join(th, NULL);
    for (int k = 0; k < DEEP; k++)
        tlog_log_end(log, site_named("A"));
    tlog_log_end(log, site_named("Frame"));
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    char *text = csv_of(f);
    /* The deepest row's line: the one of the most parts (counted byte by
     * byte: a sanitizer's strstr measures the whole text at each call). */
    const char *deepest = NULL, *line = text;
    size_t most = 0, parts = 1;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            if (parts > most) {
                deepest = line;
                most = parts;
            }
            line = p + 1;
            parts = 1;
        } else if (p[0] == ' ' && p[1] == '/' && p[2] == ' ') {
            parts++;
        }
    }
    assert_int_equal(most, 1 + DEEP + 1 + DEEP);   /* Frame, A..., Deep, B... */
    assert_true(strncmp(deepest, "0,1,Frame / A / A / ", 20) == 0);
    free(text);
    tlog_frame_release(f);
    tlog_destroy(log);
}

/* The line of CSV `text` that starts with `lead`, as a malloc'd string. */
static char *csv_line(const char *text, const char *lead)
{
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        if (strncmp(line, lead, strlen(lead)) == 0)
            return strndup(line, n);
        line += n + (line[n] != '\0');
    }
    fail_msg("no line starts with \"%s\"", lead);
    return NULL;
}

/* A host row and a worker's row of one title, each with a child of one
 * title: the children's paths differ by the kind of their parents. */
static void csv_paths_mark_work_done_elsewhere(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    tlog_log *log = make_log(&c);
    record_twin_titles(log, 0, 2, 5);
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    char *text = csv_of(f);
    static const struct {
        const char *lead, *rest;
    } rows[] = {
        {"0,1,Frame / W,C,", ",1,4000000,"},
        {"0,1,Frame / W / (E) X,E,", ",1,2000000,"},
        {"0,1,Frame / (E) W,E,W,", "1,7000000,"},
        {"0,1,Frame / (E) W / (E) X,E,W,", "1,5000000,"},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        char *line = csv_line(text, rows[k].lead);
        assert_non_null(strstr(line + strlen(rows[k].lead), rows[k].rest));
        free(line);
    }
    free(text);
    tlog_frame_release(f);
    tlog_destroy(log);
    assert_int_equal(errors.count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exports_parse_and_follow_the_rules),
        cmocka_unit_test(checker_rejects_partial_overlap),
        cmocka_unit_test(overlapping_inserts_keep_every_track_nested),
        cmocka_unit_test(every_queue_has_a_track_of_its_own),
        cmocka_unit_test(ranks_become_processes),
        cmocka_unit_test(frames_that_overlap_keep_every_track_nested),
        cmocka_unit_test(two_logs_of_one_rank_are_two_processes),
        cmocka_unit_test(a_row_s_intervals_keep_their_own_queues),
        cmocka_unit_test(reduce_keeps_the_spread_over_inputs),
        cmocka_unit_test(reduced_means_are_rounded_once),
        cmocka_unit_test(csv_paths_deeper_than_a_thread_nests_are_whole),
        cmocka_unit_test(csv_paths_mark_work_done_elsewhere),
        cmocka_unit_test(launch_arrows_start_at_their_own_iteration),
    };
    return cmocka_run_group_tests(tests, make_dir, NULL);
}
