/* The binary stream: round trips, its settings, write failures, and what
 * the reader says about damaged, foreign and future files. */
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device_fixture.h"

static char dir[256];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/timerlog-stream-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static char *path_in_dir(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* A sim fixture whose log streams to `path`. */
static sim_fixture *streaming_fixture(const char *path, size_t buffer)
{
    sim_fixture *fx = sim_fixture_make(NULL);
    tlog_destroy(fx->log);
    tlog_config c = test_config(&fx->errors);
    c.clock = tlog_sim_clock;
    c.clock_user = fx->sim;
    c.stream_path = path;
    c.stream_buffer = buffer;
    c.max_frames = 64;
    fx->log = make_log(&c);
    assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, NULL, &fx->dev), TLOG_OK);
    return fx;
}

/* A frame with nesting, a worker's share, device work at a sync scope and
 * some left for a forced sync, and an inserted timing. */
static void rich_frame(sim_fixture *fx, int k)
{
    host_begin(fx, "Frame");
    host_begin(fx, "Simulation");
    kernel(fx, fx->q1, "Filter: GPU", 1.0 + k);
    sim_at(fx, sim_ms(fx) + 0.5);
    host_end(fx, "Simulation");
    sync_until(fx, "GPU Sync", sim_ms(fx) + 2.0 + k);
    tlog_insert(fx->log, site_named("Inserted"), TLOG_KIND_EXECUTION,
                tlog_now(fx->log) - 1000, tlog_now(fx->log));
    kernel(fx, fx->q2, k % 2 ? "Draw" : "Upload", 3.0);
    sim_at(fx, sim_ms(fx) + 0.25);
    host_end(fx, "Frame");
}

static char *dump_of(const tlog_frame *f)
{
    return dump_string(f, NULL);
}

static void stream_reads_back_as_the_in_process_dump(void **state)
{
    (void)state;
    const char *path = path_in_dir("round.tlog");
    sim_fixture *fx = streaming_fixture(path, 0);
    enum { FRAMES = 6 };
    char *expected[FRAMES];
    for (int k = 0; k < FRAMES; k++) {
        rich_frame(fx, k);
        tlog_frame *f = tlog_frame_latest(fx->log);   /* forces the sync */
        assert_non_null(f);
        expected[k] = dump_of(f);
        tlog_frame_release(f);
    }
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_OK);
    assert_int_equal(stats_of(fx->log).frames_streamed, FRAMES);

    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    for (int k = 0; k < FRAMES; k++) {
        tlog_frame *f;
        assert_int_equal(tlog_reader_next(r, &f), TLOG_OK);
        char *got = dump_of(f);
        assert_string_equal(got, expected[k]);
        assert_non_null(strstr(got, "(E) Filter: GPU"));
        free(got);
        tlog_frame_release(f);
        free(expected[k]);
    }
    tlog_frame *none;
    assert_int_equal(tlog_reader_next(r, &none), TLOG_ENOFRAME);
    tlog_reader_close(r);
    sim_fixture_free(fx);   /* ends the file */
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    while (tlog_reader_next(r, &none) == TLOG_OK)
        tlog_frame_release(none);
    tlog_reader_info info = {.size = sizeof info};
    tlog_reader_get_info(r, &info);
    assert_true(info.ended);
    assert_int_equal(info.end_frames, FRAMES);
    assert_int_equal(info.frames, FRAMES);
    tlog_reader_close(r);
}

/* The device of path Frame > GPU Sync > Kernel, and how often it ran. */
static void shared_row_is_a_device_row(const tlog_frame *f, uint64_t count)
{
    const tlog_node *n = path(f, "GPU Sync", "Kernel", NULL);
    assert_non_null(n);
    tlog_node_info i = info_of(n);
    assert_true(i.flags & TLOG_NODE_DEVICE);
    assert_non_null(i.device);
    assert_int_equal(i.count, count);
}

/* A host execution entry titled as device work under the same scope
 * shares its row: the row keeps its device, whichever came first, and the
 * file reads back whole, the frames after it included. */
static void a_host_entry_in_a_device_row_streams(void **state)
{
    (void)state;
    const char *path_name = path_in_dir("shared-row.tlog");
    sim_fixture *fx = streaming_fixture(path_name, 0);
    enum { FRAMES = 4 };
    char *expected[FRAMES];
    for (int k = 0; k < FRAMES; k++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Kernel", 1.0);
        host_begin(fx, "GPU Sync");
        if (k % 2)   /* the host's entry begins before the device's interval */
            tlog_insert(fx->log, site_named("Kernel"), TLOG_KIND_EXECUTION,
                        tlog_now(fx->log) - 2000000, tlog_now(fx->log));
        sim_at(fx, sim_ms(fx) + 2.0);
        tlog_sync_end(fx->dev, site_named("GPU Sync"));
        host_end(fx, "Frame");
        tlog_frame *f = tlog_frame_latest(fx->log);
        assert_non_null(f);
        shared_row_is_a_device_row(f, k % 2 ? 2 : 1);
        expected[k] = dump_of(f);
        tlog_frame_release(f);
    }
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_OK);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path_name, &r), TLOG_OK);
    for (int k = 0; k < FRAMES; k++) {
        tlog_frame *f;
        assert_int_equal(tlog_reader_next(r, &f), TLOG_OK);
        char *got = dump_of(f);
        assert_string_equal(got, expected[k]);
        shared_row_is_a_device_row(f, k % 2 ? 2 : 1);
        free(got);
        free(expected[k]);
        tlog_frame_release(f);
    }
    tlog_frame *none;
    assert_int_equal(tlog_reader_next(r, &none), TLOG_ENOFRAME);
    tlog_reader_close(r);
    sim_fixture_free(fx);
}

/* Nodes of a frame in walk order: an instance's row compares across
 * frames by its place there. */
typedef struct node_list {
    const tlog_node *at[64];
    size_t n;
} node_list;

static int list_node(void *user, const tlog_node *node, const tlog_node_info *info)
{
    (void)info;
    node_list *l = user;
    assert_true(l->n < 64);
    l->at[l->n++] = node;
    return 0;
}

static size_t place_of(const node_list *l, const tlog_node *node)
{
    if (!node)
        return SIZE_MAX;
    for (size_t i = 0; i < l->n; i++)
        if (l->at[i] == node)
            return i;
    fail_msg("an instance's row is not in its frame");
    return SIZE_MAX;
}

typedef struct instance_cases {
    size_t earlier, other_thread, launched;
} instance_cases;

/* Every instance of `got` is the one of `want` at the same index. */
static void same_instances(const tlog_frame *want, const tlog_frame *got, instance_cases *seen)
{
    node_list lw = {.n = 0}, lg = {.n = 0};
    tlog_frame_walk(want, list_node, &lw);
    tlog_frame_walk(got, list_node, &lg);
    assert_int_equal(lw.n, lg.n);
    tlog_frame_info fw = {.size = sizeof fw}, fg = {.size = sizeof fg};
    tlog_frame_get_info(want, &fw);
    tlog_frame_get_info(got, &fg);
    assert_true(fw.instances > 0);
    assert_int_equal(fw.instances, fg.instances);
    int64_t last = 0;
    for (size_t k = 0; k < fw.instances; k++) {
        tlog_instance a = {.size = sizeof a}, b = {.size = sizeof b};
        assert_int_equal(tlog_frame_get_instance(want, k, &a), TLOG_OK);
        assert_int_equal(tlog_frame_get_instance(got, k, &b), TLOG_OK);
        assert_int_equal(place_of(&lw, a.node), place_of(&lg, b.node));
        assert_int_equal(a.thread, b.thread);
        assert_int_equal(a.start_ns, b.start_ns);
        assert_int_equal(a.duration_ns, b.duration_ns);
        assert_int_equal(place_of(&lw, a.launcher), place_of(&lg, b.launcher));
        seen->earlier += k && a.start_ns < last;
        seen->other_thread += a.thread != fw.thread;
        seen->launched += a.launcher != NULL;
        last = a.start_ns;
    }
}

typedef struct tile_work {
    tlog_token token;
    tlog_log *log;
} tile_work;

static void *tile_worker(void *arg)
{
    tile_work *w = arg;
    tlog_thread_name("Worker 1");
    assert_int_equal(tlog_adopt_begin(&w->token), TLOG_OK);
    tlog_log_begin(w->log, site_named("Tile"));
    tlog_log_end(w->log, site_named("Tile"));
    tlog_adopt_end(&w->token);
    return NULL;
}

/* Whether the reader has thread `id` described. */
static bool thread_described(const tlog_reader *r, uint32_t id)
{
    uint32_t got;
    for (size_t i = 0; tlog_reader_thread(r, i, &got); i++)
        if (got == id)
            return true;
    return false;
}

/* Instances are written as differences from the one before: those that
 * start earlier than it, run on another thread or have a launcher read
 * back exactly too. Two workers of one name merge into one row, whose
 * node names the first's thread: the stream describes both threads all
 * the same, before the frame that refers to them. */
static void instances_read_back_exactly(void **state)
{
    (void)state;
    const char *path = path_in_dir("instances.tlog");
    sim_options o = {.device_flags = TLOG_DEVICE_LAUNCH_ROWS, .max_frames = 64,
                     .stream_path = path};
    sim_fixture *fx = sim_fixture_make(&o);
    enum { FRAMES = 4 };
    tlog_frame *want[FRAMES];
    for (int k = 0; k < FRAMES; k++) {
        host_begin(fx, "Frame");
        host_begin(fx, "Parallel");
        for (int t = 0; t < 2; t++) {
            tile_work w = {tlog_handoff(fx->log), fx->log};
            pthread_t th;
            assert_int_equal(pthread_create(&th, NULL, tile_worker, &w), 0);
            pthread_join(th, NULL);
        }
        host_end(fx, "Parallel");
        host_begin(fx, "Late");
        sim_at(fx, sim_ms(fx) + 0.5);
        /* A timing that began before the scope recorded just before it. */
        tlog_insert(fx->log, site_named("Inserted"), TLOG_KIND_EXECUTION,
                    tlog_now(fx->log) - 2000000 - (uint64_t)k, tlog_now(fx->log));
        host_end(fx, "Late");
        kernel(fx, fx->q1, "Kernel", 1.0 + k);
        sync_until(fx, "Sync", sim_ms(fx) + 2.0 + k);
        host_end(fx, "Frame");
        want[k] = tlog_frame_latest(fx->log);
        assert_non_null(want[k]);
    }
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_OK);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    instance_cases seen = {0, 0, 0};
    for (int k = 0; k < FRAMES; k++) {
        tlog_frame *got;
        assert_int_equal(tlog_reader_next(r, &got), TLOG_OK);
        same_instances(want[k], got, &seen);
        tlog_frame_info fi = {.size = sizeof fi};
        assert_int_equal(tlog_frame_get_info(got, &fi), TLOG_OK);
        for (size_t i = 0; i < fi.instances; i++) {
            tlog_instance in = {.size = sizeof in};
            assert_int_equal(tlog_frame_get_instance(got, i, &in), TLOG_OK);
            if (in.thread != 0 && !thread_described(r, in.thread))   /* 0: a device's */
                fail_msg("frame %d: instance %zu's thread %u is not described", k, i,
                         in.thread);
        }
        tlog_frame_release(got);
        tlog_frame_release(want[k]);
    }
    tlog_reader_close(r);
    assert_true(seen.earlier >= FRAMES);
    assert_true(seen.other_thread >= 2 * FRAMES);
    assert_true(seen.launched >= FRAMES);
    sim_fixture_free(fx);
}

/* One recording (fuzz/make_corpus) as the version 1 writer and the
 * version 2 writer wrote it: a reader reads both to the same frames,
 * instances included. */
static void version_1_and_2_files_read_alike(void **state)
{
    (void)state;
    instance_cases seen = {0, 0, 0};
    const char *names[] = {"host.tlog", "device.tlog"};
    for (int i = 0; i < 2; i++) {
        char p1[512], p2[512];
        snprintf(p1, sizeof p1, "%s/stream-v1/%s", GOLDEN_DIR, names[i]);
        snprintf(p2, sizeof p2, "%s/stream-v2/%s", GOLDEN_DIR, names[i]);
        tlog_reader *r1, *r2;
        assert_int_equal(tlog_reader_open(p1, &r1), TLOG_OK);
        assert_int_equal(tlog_reader_open(p2, &r2), TLOG_OK);
        tlog_frame *f1, *f2;
        int frames = 0;
        while (tlog_reader_next(r1, &f1) == TLOG_OK) {
            assert_int_equal(tlog_reader_next(r2, &f2), TLOG_OK);
            char *d1 = dump_of(f1), *d2 = dump_of(f2);
            assert_string_equal(d1, d2);
            same_instances(f1, f2, &seen);
            free(d1);
            free(d2);
            tlog_frame_release(f1);
            tlog_frame_release(f2);
            frames++;
        }
        assert_true(frames >= 2);
        assert_int_equal(tlog_reader_next(r2, &f2), TLOG_ENOFRAME);
        tlog_reader_info v1 = {.size = sizeof v1}, v2 = {.size = sizeof v2};
        tlog_reader_get_info(r1, &v1);
        tlog_reader_get_info(r2, &v2);
        assert_int_equal(v1.version_major, 1);
        assert_int_equal(v2.version_major, 2);
        assert_true(v1.ended && v2.ended);
        tlog_reader_close(r1);
        tlog_reader_close(r2);
    }
    assert_true(seen.other_thread > 0);
    assert_true(seen.launched > 0);
}

/* The command-line reader prints a frame exactly as the process did. */
static void cli_dump_matches_the_in_process_dump(void **state)
{
    (void)state;
    const char *path = path_in_dir("cli.tlog");
    sim_fixture *fx = streaming_fixture(path, 0);
    rich_frame(fx, 1);
    rich_frame(fx, 2);
    tlog_frame *f = tlog_frame_latest(fx->log);
    char *expected = dump_of(f);
    tlog_frame_release(f);
    sim_fixture_free(fx);

    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s dump --frame 2 %s", TIMERLOG_CLI, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char got[4096] = {0};
    size_t n = fread(got, 1, sizeof got - 1, p);
    assert_int_equal(pclose(p), 0);
    assert_true(n > 0);
    assert_string_equal(got, expected);
    free(expected);
}

static int cli_status(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>&1", TIMERLOG_CLI, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void cli_exit_codes_follow_convention(void **state)
{
    (void)state;
    const char *path = path_in_dir("codes.tlog");
    sim_fixture *fx = streaming_fixture(path, 0);
    rich_frame(fx, 0);
    sim_fixture_free(fx);
    char args[600];
    assert_int_equal(cli_status("--help"), 0);
    assert_int_equal(cli_status("dump --help"), 0);
    assert_int_equal(cli_status("export --help"), 0);
    assert_int_equal(cli_status("info --help"), 0);
    assert_int_equal(cli_status("frobnicate"), 2);
    assert_int_equal(cli_status("export x.tlog"), 2);   /* no format chosen */
    snprintf(args, sizeof args, "info %s", path);
    assert_int_equal(cli_status(args), 0);
    snprintf(args, sizeof args, "dump %s", TIMERLOG_CLI);   /* not a stream */
    assert_int_equal(cli_status(args), 1);
    snprintf(args, sizeof args, "export --csv -o %s %s", path_in_dir("out.csv"), path);
    assert_int_equal(cli_status(args), 0);
}

static void sites_first_seen_late_are_described(void **state)
{
    (void)state;
    const char *path = path_in_dir("late.tlog");
    sim_fixture *fx = streaming_fixture(path, 4096);
    for (int k = 0; k < 40; k++) {
        host_begin(fx, "Frame");
        char name[32];
        snprintf(name, sizeof name, "Phase %d", k / 10);
        host_begin(fx, name);
        host_end(fx, name);
        host_end(fx, "Frame");
    }
    sim_fixture_free(fx);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    int k = 0;
    while (tlog_reader_next(r, &f) == TLOG_OK) {
        char name[32];
        snprintf(name, sizeof name, "Phase %d", k++ / 10);
        tlog_node_info i = info_of(tlog_node_first_child(tlog_frame_root(f)));
        assert_string_equal(i.name, name);
        assert_int_equal(i.site_id, tlog_site_id(site_named(name)));
        tlog_frame_release(f);
    }
    assert_int_equal(k, 40);
    tlog_reader_close(r);
}

/* A site with no file and no function (made by hand, or the library's own
 * rows) streams and reads back with empty ones. */
static void site_without_file_or_function_streams(void **state)
{
    (void)state;
    const char *path = path_in_dir("bare.tlog");
    sim_fixture *fx = streaming_fixture(path, 4096);
    static const tlog_site bare = {"Bare", NULL, NULL, 0, TLOG_LEVEL_COARSE};
    host_begin(fx, "Frame");
    tlog_log_begin(fx->log, &bare);
    tlog_log_end(fx->log, &bare);
    host_end(fx, "Frame");
    sim_fixture_free(fx);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    assert_int_equal(tlog_reader_next(r, &f), TLOG_OK);
    tlog_node_info i = info_of(tlog_node_first_child(tlog_frame_root(f)));
    assert_string_equal(i.name, "Bare");
    assert_true(i.file == NULL || i.file[0] == '\0');
    tlog_frame_release(f);
    tlog_reader_close(r);
}

static void percent_in_the_path_becomes_the_rank(void **state)
{
    (void)state;
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    sim_fixture *fx = streaming_fixture(path_in_dir("rank-%.tlog"), 0);
    unsetenv("OMPI_COMM_WORLD_RANK");
    rich_frame(fx, 0);
    sim_fixture_free(fx);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path_in_dir("rank-3.tlog"), &r), TLOG_OK);
    tlog_reader_info info = {.size = sizeof info};
    tlog_reader_get_info(r, &info);
    assert_int_equal(info.rank, 3);
    tlog_frame *f;
    assert_int_equal(tlog_reader_next(r, &f), TLOG_OK);
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    assert_int_equal(fi.rank, 3);
    tlog_frame_release(f);
    tlog_reader_close(r);

    fx = streaming_fixture(path_in_dir("pid-%.tlog"), 0);   /* no rank: the pid */
    sim_fixture_free(fx);
    char expect[64];
    snprintf(expect, sizeof expect, "pid-%ld.tlog", (long)getpid());
    struct stat st;
    assert_int_equal(stat(path_in_dir(expect), &st), 0);
}

static void unwritable_path_is_reported_and_recording_goes_on(void **state)
{
    (void)state;
    sim_fixture *fx = streaming_fixture("/nonexistent-dir/x.tlog", 0);
    assert_int_equal(count_code(&fx->errors, TLOG_EIO), 1);
    assert_non_null(strstr(fx->errors.last, "/nonexistent-dir/x.tlog"));
    rich_frame(fx, 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    tlog_frame_release(f);
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_EIO);
    assert_int_equal(stats_of(fx->log).frames_not_streamed, 1);
    assert_int_equal(stats_of(fx->log).frames_streamed, 0);
    sim_fixture_free(fx);
}

/* A file that stops growing (full disk, file-size limit): one report, the
 * frames written before it read back, the rest are counted. */
static void full_disk_keeps_what_was_written(void **state)
{
    (void)state;
    const char *path = path_in_dir("full.tlog");
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 20000;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    sim_fixture *fx = streaming_fixture(path, 4096);
    for (int k = 0; k < 200; k++)
        rich_frame(fx, k % 3);
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_EIO);
    tlog_stats s = stats_of(fx->log);
    assert_int_equal(count_code(&fx->errors, TLOG_EIO), 1);
    assert_non_null(strstr(fx->errors.last, "stays readable"));
    sim_fixture_free(fx);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_true(s.frames_not_streamed > 0);

    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    int frames = 0, rc;
    while ((rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        frames++;
        tlog_frame_release(f);
    }
    assert_true(frames > 0 && frames < 200);
    assert_true(rc == TLOG_EFORMAT || rc == TLOG_ENOFRAME);
    tlog_reader_close(r);
}

void tlog_test_stream_block_limit(size_t bytes) __attribute__((weak));

/* A frame whose block would be larger than a reader takes is left out,
 * counted and said, and the frames around it stream and read back: it
 * never ends the readable file. The limit is lowered by the test build's
 * hook rather than by making a frame of hundreds of MiB. */
static void a_frame_too_large_for_a_reader_is_left_out(void **state)
{
    (void)state;
    if (!tlog_test_stream_block_limit)
        skip();   /* a build without the hooks */
    const char *path = path_in_dir("large.tlog");
    sim_fixture *fx = streaming_fixture(path, 0);
    tlog_test_stream_block_limit(2048);
    for (int k = 0; k < 3; k++) {
        host_begin(fx, "Frame");
        for (int i = 0; i < (k == 1 ? 4000 : 10); i++) {   /* the second: ~12 KB */
            host_begin(fx, "Step");
            host_end(fx, "Step");
        }
        host_end(fx, "Frame");
    }
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_OK);
    tlog_test_stream_block_limit(0);
    tlog_stats st = stats_of(fx->log);
    assert_int_equal(st.frames_streamed, 2);
    assert_int_equal(st.frames_not_streamed, 1);
    assert_int_equal(count_code(&fx->errors, TLOG_EIO), 1);
    assert_non_null(strstr(fx->errors.last, "frame 2 not streamed"));
    assert_non_null(strstr(fx->errors.last, "larger than a reader takes"));
    sim_fixture_free(fx);   /* ends the file */
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    static const uint64_t serials[] = {1, 3};
    for (int k = 0; k < 2; k++) {
        tlog_frame *f;
        assert_int_equal(tlog_reader_next(r, &f), TLOG_OK);
        tlog_frame_info fi = {.size = sizeof fi};
        assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
        assert_int_equal(fi.serial, serials[k]);
        tlog_frame_release(f);
    }
    tlog_frame *none;
    assert_int_equal(tlog_reader_next(r, &none), TLOG_ENOFRAME);
    tlog_reader_info info = {.size = sizeof info};
    tlog_reader_get_info(r, &info);
    assert_true(info.ended);
    assert_int_equal(info.frames_lost, 1);
    tlog_reader_close(r);
}

/* A title longer than a stream's string is cut to fit, at a character's
 * start, and said once; the frames stream whole otherwise. */
static void a_title_too_long_for_the_stream_is_cut_and_said(void **state)
{
    (void)state;
    enum { CHARS = 35000 };   /* "é" twice a byte: 70,000 bytes */
    char *title = malloc(2 * CHARS + 1);
    assert_non_null(title);
    for (int i = 0; i < CHARS; i++)
        memcpy(title + 2 * i, "\xc3\xa9", 2);
    title[2 * CHARS] = '\0';
    const char *path = path_in_dir("long-title.tlog");
    sim_fixture *fx = streaming_fixture(path, 0);
    for (int k = 0; k < 2; k++) {
        host_begin(fx, "Frame");
        host_begin(fx, title);
        host_end(fx, title);
        host_end(fx, "Frame");
    }
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_OK);
    assert_int_equal(count_code(&fx->errors, TLOG_EINVAL), 1);
    assert_non_null(strstr(fx->errors.last, "longer than 65535 bytes is cut"));
    assert_int_equal(fx->errors.count, 1);
    sim_fixture_free(fx);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    for (int k = 0; k < 2; k++) {
        tlog_frame *f;
        assert_int_equal(tlog_reader_next(r, &f), TLOG_OK);
        const tlog_node *child = tlog_node_first_child(tlog_frame_root(f));
        assert_non_null(child);
        const char *got = info_of(child).name;
        assert_int_equal(strlen(got), 65534);   /* not inside the last "é" */
        assert_memory_equal(got, title, 65534);
        tlog_frame_release(f);
    }
    tlog_reader_close(r);
    free(title);
}

/* A forked child has none of the writer threads: the parent's log, and so
 * its stream, is refused there, the child never waits for a writer, and the
 * parent's stream goes on. */
static void forked_child_neither_hangs_nor_writes(void **state)
{
    (void)state;
    const char *path = path_in_dir("fork.tlog");
    sim_fixture *fx = streaming_fixture(path, 4096);
    rich_frame(fx, 0);
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_OK);
    pid_t child = fork();
    if (child == 0) {
        for (int k = 0; k < 200; k++) {   /* more than the buffer holds */
            tlog_log_begin(fx->log, site_named("Child frame"));
            tlog_log_end(fx->log, site_named("Child frame"));
        }
        tlog_stats s = {.size = sizeof s};
        _exit(tlog_get_stats(fx->log, &s) == TLOG_EINVAL &&
              tlog_stream_flush(fx->log) == TLOG_EINVAL ? 0 : 1);
    }
    int status = -1;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rich_frame(fx, 1);
    sim_fixture_free(fx);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    int frames = 0;
    while (tlog_reader_next(r, &f) == TLOG_OK) {
        frames++;
        tlog_frame_release(f);
    }
    assert_int_equal(frames, 2);
    tlog_reader_close(r);
}

static void small_buffer_loses_nothing(void **state)
{
    (void)state;
    const char *path = path_in_dir("small.tlog");
    sim_fixture *fx = streaming_fixture(path, 4096);
    for (int k = 0; k < 2000; k++) {
        host_begin(fx, "Frame");
        for (int i = 0; i < 50; i++) {
            host_begin(fx, "Step");
            host_end(fx, "Step");
        }
        host_end(fx, "Frame");
    }
    sim_fixture_free(fx);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    uint64_t frames = 0, scopes = 0;
    while (tlog_reader_next(r, &f) == TLOG_OK) {
        tlog_frame_info i = {.size = sizeof i};
        tlog_frame_get_info(f, &i);
        frames++;
        scopes += i.instances;
        tlog_frame_release(f);
    }
    assert_int_equal(frames, 2000);
    assert_int_equal(scopes, 2000 * 51);
    tlog_reader_close(r);
}

/* ---- damage ---- */

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    *n = (size_t)ftell(fp);
    rewind(fp);
    uint8_t *b = malloc(*n);
    assert_int_equal(fread(b, 1, *n, fp), *n);
    fclose(fp);
    return b;
}

static const char *good_stream(void)
{
    const char *path = path_in_dir("good.tlog");
    sim_fixture *fx = streaming_fixture(path, 0);
    for (int k = 0; k < 3; k++)
        rich_frame(fx, k);
    sim_fixture_free(fx);
    return path;
}

/* Reads all it can; returns the frames and the final code. */
static int read_all(const uint8_t *data, size_t n, int *frames, char *error, size_t size)
{
    tlog_reader *r;
    int rc = tlog_reader_open_memory(data, n, &r);
    *frames = 0;
    tlog_frame *f;
    while (rc == TLOG_OK && (rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        (*frames)++;
        tlog_frame_release(f);
    }
    snprintf(error, size, "%s", tlog_reader_error(r));
    tlog_reader_close(r);
    return rc;
}

/* Frames of `path`, read whole (TLOG_ENOFRAME at its end). */
static int frames_in(const char *path)
{
    size_t n;
    uint8_t *b = read_file(path, &n);
    int frames;
    char err[256];
    assert_int_equal(read_all(b, n, &frames, err, sizeof err), TLOG_ENOFRAME);
    free(b);
    return frames;
}

/* Device work held back: each frame's kernel waits behind a gate of its
 * own on the queue, opened by the test, so the writer has each frame's
 * device work to wait for. */
enum { HELD_FRAMES = 64 };

typedef struct held_writer {
    sim_fixture *fx;
    pthread_mutex_t lock;
    tlog_sim_gate *gates[HELD_FRAMES];
    int made;                 /* gates made */
} held_writer;

/* A frame whose kernel waits behind a gate of its own: done once the test
 * opens it (the simulated time passes it meanwhile). */
static void gated_frame(held_writer *h)
{
    host_begin(h->fx, "Frame");
    pthread_mutex_lock(&h->lock);
    assert_int_equal(tlog_sim_hold(h->fx->sim, h->fx->q1, &h->gates[h->made++]), TLOG_OK);
    pthread_mutex_unlock(&h->lock);
    kernel(h->fx, h->fx->q1, "Kernel", 0.1);
    sim_at(h->fx, sim_ms(h->fx) + 1);
    host_end(h->fx, "Frame");
}

static void *held_recorder(void *arg)
{
    held_writer *h = arg;
    for (int k = 0; k < HELD_FRAMES; k++)
        gated_frame(h);
    return NULL;
}

/* Lets the queue run up to gate k and the simulated time pass it. */
static void open_gate(held_writer *h, int k)
{
    pthread_mutex_lock(&h->lock);
    tlog_sim_gate_destroy(h->fx->sim, h->gates[k]);
    h->gates[k] = NULL;
    pthread_mutex_unlock(&h->lock);
    sim_at(h->fx, sim_ms(h->fx) + 1);
}

/* Frames of `path` whose device work was written unresolved. */
static int unresolved_frames_in(const char *path)
{
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    int unresolved = 0;
    while (tlog_reader_next(r, &f) == TLOG_OK) {
        tlog_frame_info fi = {.size = sizeof fi};
        assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
        unresolved += fi.device_unresolved > 0;
        tlog_frame_release(f);
    }
    tlog_reader_close(r);
    return unresolved;
}

/* Once the frames waiting for the writer hold the buffer's size, a frame's
 * end waits, and is counted, but never for a device: the writer then gives
 * up the device work still pending (written unresolved, said once), so
 * every frame end returns while the device holds all of it back, and the
 * sync timeout (a minute) never comes into it. A waiting end goes on when
 * the waiting frames are down to half the buffer, not as soon as the
 * writer has taken one: a few waits over the frames (here about one per
 * four), not one a frame. Nothing is lost, and frames whose work was not
 * given up are whole once the device lets it run. */
static void frame_ends_wait_for_room_never_for_a_device(void **state)
{
    (void)state;
    const char *path = path_in_dir("held.tlog");
    sim_options o = {.stream_path = path, .stream_buffer = 512 * 1024,
                     .sync_timeout_ns = 60 * 1000000000ull};
    held_writer h = {.fx = sim_fixture_make(&o), .lock = PTHREAD_MUTEX_INITIALIZER};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, held_recorder, &h), 0);
    pthread_join(th, NULL);   /* every gate still shut */
    uint64_t waits = stats_of(h.fx->log).stream_waits;
    if (waits < 2 || waits > HELD_FRAMES / 3)
        fail_msg("%llu frame ends waited for room", (unsigned long long)waits);
    assert_int_equal(count_code(&h.fx->errors, TLOG_ETIMEDOUT), 1);
    assert_non_null(strstr(h.fx->errors.last, "filled the stream's buffer"));

    for (int k = 0; k < HELD_FRAMES; k++)
        open_gate(&h, k);
    assert_int_equal(tlog_stream_flush(h.fx->log), TLOG_OK);
    tlog_stats st = stats_of(h.fx->log);
    assert_int_equal(st.frames_streamed, HELD_FRAMES);
    assert_int_equal(h.fx->errors.count, 1);
    sim_fixture_free(h.fx);
    assert_int_equal(frames_in(path), HELD_FRAMES);
    int unresolved = unresolved_frames_in(path);
    if (unresolved < 1 || unresolved >= HELD_FRAMES)
        fail_msg("%d of %d frames written unresolved", unresolved, HELD_FRAMES);
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* A device that never runs the frames' work (a gate nobody opens): each
 * frame waits at most the sync timeout past its own end, so a backlog of
 * frames costs the stream one timeout in all, not one (or two) a frame,
 * and the giving up is said. The bound checked is ten timeouts, where
 * waiting a timeout a frame takes twenty. */
static void a_hung_device_costs_the_stream_one_timeout_not_one_a_frame(void **state)
{
    (void)state;
    enum { FRAMES = 20 };
    const double timeout_s = 0.1;
    const char *path = path_in_dir("hung.tlog");
    sim_options o = {.stream_path = path, .sync_timeout_ns = (uint64_t)(timeout_s * 1e9)};
    held_writer h = {.fx = sim_fixture_make(&o), .lock = PTHREAD_MUTEX_INITIALIZER};
    double t0 = mono_s();
    for (int k = 0; k < FRAMES; k++)
        gated_frame(&h);
    assert_int_equal(tlog_stream_flush(h.fx->log), TLOG_OK);
    double took = mono_s() - t0;
    if (took > 10 * timeout_s)
        fail_msg("%d frames on a hung device took the stream %.2f s (timeout %.2f s)", FRAMES,
                 took, timeout_s);
    assert_true(count_code(&h.fx->errors, TLOG_ETIMEDOUT) >= 1);
    assert_non_null(strstr(h.fx->errors.last, "after the frame ended"));
    assert_int_equal(stats_of(h.fx->log).frames_streamed, FRAMES);
    for (int k = 0; k < h.made; k++)
        open_gate(&h, k);
    sim_fixture_free(h.fx);
    assert_int_equal(unresolved_frames_in(path), FRAMES);
}

typedef struct syncing {
    tlog_log *log;
    atomic_bool done;
} syncing;

static void *sync_all(void *arg)
{
    syncing *y = arg;
    tlog_sync(y->log);   /* waits on the gated work until its timeout */
    atomic_store(&y->done, true);
    return NULL;
}

/* Another thread's forced sync waits on a hung device (tlog_sync, two
 * seconds) while frame ends fill the stream's buffer: the writer, told not
 * to wait, does not queue behind that sync either, and the frame ends go on
 * before it is over. */
static void frame_ends_do_not_wait_behind_another_forced_sync(void **state)
{
    (void)state;
    const char *path = path_in_dir("behind.tlog");
    sim_options o = {.stream_path = path, .stream_buffer = 512 * 1024,
                     .sync_timeout_ns = 2 * 1000000000ull};
    held_writer h = {.fx = sim_fixture_make(&o), .lock = PTHREAD_MUTEX_INITIALIZER};
    gated_frame(&h);   /* a frame for the sync to wait on */
    syncing y = {h.fx->log, false};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, sync_all, &y), 0);
    struct timespec nap = {0, 50000000};
    nanosleep(&nap, NULL);   /* the sync holds the devices */
    for (int k = 0; k < 24; k++) {
        host_begin(h.fx, "Frame");
        kernel(h.fx, h.fx->q1, "Kernel", 0.1);   /* behind the gate */
        host_end(h.fx, "Frame");
    }
    bool before = !atomic_load(&y.done);
    pthread_join(th, NULL);
    if (!before)
        fail_msg("24 frame ends waited for another thread's forced sync");
    assert_true(stats_of(h.fx->log).stream_waits >= 1);
    open_gate(&h, 0);
    assert_int_equal(tlog_stream_flush(h.fx->log), TLOG_OK);
    assert_int_equal(stats_of(h.fx->log).frames_streamed, 25);
    sim_fixture_free(h.fx);
    assert_int_equal(frames_in(path), 25);
}

/* Two logs given one path (TIMERLOG_OUTPUT reaches every log): the second
 * takes path-2, which is said, rather than write into the first's file;
 * each file holds its own log's frames. The path is free again once its log
 * is gone. */
static void a_path_another_log_streams_to_is_left_to_it(void **state)
{
    (void)state;
    const char *path = path_in_dir("shared.tlog");
    char second[512];
    snprintf(second, sizeof second, "%s", path_in_dir("shared-2.tlog"));
    sim_fixture *a = streaming_fixture(path, 0);
    sim_fixture *b = streaming_fixture(path, 0);
    assert_int_equal(a->errors.count, 0);
    assert_int_equal(count_code(&b->errors, TLOG_EBUSY), 1);
    assert_non_null(strstr(b->errors.last, second));
    for (int k = 0; k < 3; k++) {
        rich_frame(a, k);
        rich_frame(b, k);
    }
    rich_frame(b, 3);
    sim_fixture_free(a);
    sim_fixture_free(b);
    assert_int_equal(frames_in(path), 3);
    assert_int_equal(frames_in(second), 4);
    sim_fixture *c = streaming_fixture(path, 0);
    assert_int_equal(c->errors.count, 0);
    sim_fixture_free(c);
    assert_int_equal(frames_in(path), 0);
}

static void foreign_file_is_named_as_such(void **state)
{
    (void)state;
    char err[256];
    int frames;
    const char text[] = "# not a stream at all\n";
    assert_int_equal(read_all((const uint8_t *)text, sizeof text, &frames, err, sizeof err),
                     TLOG_EFORMAT);
    assert_non_null(strstr(err, "not a timerlog stream"));
    assert_non_null(strstr(err, "at byte 0"));
}

static void future_version_is_refused(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = read_file(good_stream(), &n);
    b[8] = 3;   /* major version 3, minor 0 */
    b[10] = b[11] = 0;
    char err[256];
    int frames;
    assert_int_equal(read_all(b, n, &frames, err, sizeof err), TLOG_EVERSION);
    assert_non_null(strstr(err, "version 3.0"));
    assert_non_null(strstr(err, "reads versions 1 to 2"));
    b[8] = 0;
    assert_int_equal(read_all(b, n, &frames, err, sizeof err), TLOG_EFORMAT);
    free(b);
}

/* Offset of the k-th block (0-based) of a stream. */
static size_t block_offset(const uint8_t *b, size_t n, int k)
{
    size_t at = 64;
    for (; k > 0 && at + 8 <= n; k--)
        at += 8 + (b[at + 4] | b[at + 5] << 8 | b[at + 6] << 16 | (size_t)b[at + 7] << 24) + 4;
    return at;
}

/* A file still being written, opened when it ended inside a frame's block:
 * the rest arrives before the read, and every frame reads, none called
 * truncated. */
static void a_file_that_grows_after_opening_reads_whole(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = read_file(good_stream(), &n);
    char err[256];
    int all;
    assert_int_equal(read_all(b, n, &all, err, sizeof err), TLOG_ENOFRAME);
    const char *path = path_in_dir("growing.tlog");
    for (int k = 1; k <= 4; k++) {   /* cut inside the first blocks, one after another */
        size_t cut = block_offset(b, n, k) + 9;
        if (cut >= n)
            break;
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(b, 1, cut, f), cut);
        fflush(f);
        tlog_reader *r;
        assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
        assert_int_equal(fwrite(b + cut, 1, n - cut, f), n - cut);
        fclose(f);
        int frames = 0, rc;
        tlog_frame *fr;
        while ((rc = tlog_reader_next(r, &fr)) == TLOG_OK) {
            frames++;
            tlog_frame_release(fr);
        }
        if (rc != TLOG_ENOFRAME || frames != all)
            fail_msg("cut at %zu: %d of %d frames, %s", cut, frames, all, tlog_reader_error(r));
        tlog_reader_close(r);
    }
    free(b);
}

static void corrupt_block_is_found_and_what_precedes_kept(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = read_file(good_stream(), &n);
    char err[256];
    int frames, all;
    assert_int_equal(read_all(b, n, &all, err, sizeof err), TLOG_ENOFRAME);
    assert_int_equal(all, 3);
    /* The last frame block is the one before the end block. */
    int blocks = 0;
    while (block_offset(b, n, blocks) < n)
        blocks++;
    size_t last_frame = block_offset(b, n, blocks - 2);
    b[last_frame + 20] ^= 0x40;
    assert_int_equal(read_all(b, n, &frames, err, sizeof err), TLOG_EFORMAT);
    assert_int_equal(frames, 2);
    char at[64];
    snprintf(at, sizeof at, "at byte %zu", last_frame);
    assert_non_null(strstr(err, "checksum"));
    assert_non_null(strstr(err, at));
    free(b);
}

static void truncated_file_keeps_the_frames_before(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = read_file(good_stream(), &n);
    char err[256];
    int frames;
    assert_int_equal(read_all(b, n - 30, &frames, err, sizeof err), TLOG_EFORMAT);
    assert_int_equal(frames, 2);
    assert_non_null(strstr(err, "truncated"));
    /* Cut before the end block: complete, but not ended. */
    int blocks = 0;
    while (block_offset(b, n, blocks) < n)
        blocks++;
    size_t end_block = block_offset(b, n, blocks - 1);
    assert_int_equal(read_all(b, end_block, &frames, err, sizeof err), TLOG_ENOFRAME);
    assert_int_equal(frames, 3);
    assert_non_null(strstr(err, "without its end block"));
    free(b);
}

/* The first three frames of the good stream, read by `r`, and their merge. */
static tlog_frame *merge_of_three(tlog_reader **r, tlog_frame *f[3])
{
    assert_int_equal(tlog_reader_open(good_stream(), r), TLOG_OK);
    for (int k = 0; k < 3; k++)
        assert_int_equal(tlog_reader_next(*r, &f[k]), TLOG_OK);
    tlog_frame *m;
    assert_int_equal(tlog_frame_merge((const tlog_frame *const *)f, 3, &m), TLOG_OK);
    return m;
}

static void frames_merge_into_one_tree(void **state)
{
    (void)state;
    tlog_reader *r;
    tlog_frame *f[3], *m = merge_of_three(&r, f);
    tlog_node_info root = info_of(tlog_frame_root(m));
    assert_int_equal(root.count, 3);
    uint64_t sum = 0;
    for (int k = 0; k < 3; k++) {
        sum += info_of(tlog_frame_root(f[k])).total_ns;
        tlog_frame_release(f[k]);
    }
    assert_int_equal(root.total_ns, sum);
    assert_int_equal(info_of(child_named(tlog_frame_root(m), "Simulation")).count, 3);
    tlog_frame_release(m);
    tlog_reader_close(r);
}

/* The first node of that title, in walk order. */
typedef struct titled {
    const char *name;
    const tlog_node *found;
} titled;

static int find_titled(void *user, const tlog_node *node, const tlog_node_info *info)
{
    titled *t = user;
    if (!t->found && strcmp(info->name, t->name) == 0)
        t->found = node;
    return 0;
}

static const tlog_node *node_titled(const tlog_frame *f, const char *name)
{
    titled t = {name, NULL};
    tlog_frame_walk(f, find_titled, &t);
    assert_non_null(t.found);
    return t.found;
}

int tlog_frame_encode_(const tlog_frame *frame, void **data, size_t *len);

/* A merged device row keeps the device, queue and launcher of the rows it
 * came from, and the merged frame encodes to bytes that read back. */
static void merged_device_rows_keep_their_device(void **state)
{
    (void)state;
    tlog_reader *r;
    tlog_frame *f[3], *m = merge_of_three(&r, f);
    tlog_node_info want = info_of(node_titled(f[0], "Filter: GPU"));
    tlog_node_info got = info_of(node_titled(m, "Filter: GPU"));
    assert_true(got.flags & TLOG_NODE_DEVICE);
    assert_non_null(want.device);
    assert_non_null(got.device);
    assert_string_equal(got.device, want.device);
    assert_int_equal(got.queue, want.queue);
    assert_ptr_equal(got.launch_site, want.launch_site);
    assert_non_null(want.launcher);
    assert_non_null(got.launcher);
    assert_string_equal(info_of(got.launcher).name, info_of(want.launcher).name);
    void *bytes;
    size_t len;
    assert_int_equal(tlog_frame_encode_(m, &bytes, &len), TLOG_OK);
    tlog_reader *back;
    assert_int_equal(tlog_reader_open_memory(bytes, len, &back), TLOG_OK);
    tlog_frame *b;
    assert_int_equal(tlog_reader_next(back, &b), TLOG_OK);
    tlog_node_info again = info_of(node_titled(b, "Filter: GPU"));
    assert_string_equal(again.device, want.device);
    assert_int_equal(again.total_ns, got.total_ns);
    tlog_frame_release(b);
    tlog_reader_close(back);
    free(bytes);
    tlog_frame_release(m);
    for (int k = 0; k < 3; k++)
        tlog_frame_release(f[k]);
    tlog_reader_close(r);
}

int tlog_frame_intern_sites_(tlog_frame *frame);

/* A merged frame whose call sites were interned outlives its reader: its
 * rows' sites and its device rows' launching sites are the interned ones
 * (the sanitizer builds watch the reads after the reader is closed). */
static void merged_frame_with_interned_sites_outlives_its_reader(void **state)
{
    (void)state;
    tlog_reader *r;
    tlog_frame *f[3], *m = merge_of_three(&r, f);
    assert_int_equal(tlog_frame_intern_sites_(m), TLOG_OK);
    for (int k = 0; k < 3; k++)
        tlog_frame_release(f[k]);
    tlog_reader_close(r);
    tlog_node_info i = info_of(node_titled(m, "Filter: GPU"));
    const tlog_site *l = i.launch_site;
    assert_non_null(l);
    assert_ptr_equal(l, tlog_site_intern(l->name, l->file, l->function, l->line, l->level));
    const tlog_site *s = info_of(node_titled(m, "Simulation")).site;
    assert_ptr_equal(s, tlog_site_intern(s->name, s->file, s->function, s->line, s->level));
    FILE *fp = tmpfile();
    const tlog_frame *one[] = {m};
    assert_int_equal(tlog_export_json(one, 1, fp), TLOG_OK);
    fclose(fp);
    tlog_frame_release(m);
}

/* A stream written by hand, for values no recording makes. */
typedef struct hand_stream {
    uint8_t b[1024];
    size_t n;
} hand_stream;

static void put_le(hand_stream *s, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

static void put_string(hand_stream *s, const char *text)
{
    put_le(s, strlen(text), 2);
    memcpy(s->b + s->n, text, strlen(text));
    s->n += strlen(text);
}

/* CRC-32 as zlib's crc32, which closes every block. */
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

/* A FRAME block of one row, no site, whose total is `total`. */
static void put_one_row_frame(hand_stream *s, uint64_t serial, uint64_t total)
{
    size_t block = s->n;
    put_le(s, 4, 4);   /* FRAME */
    put_le(s, 0, 4);   /* payload length, set below */
    put_le(s, serial, 8);
    put_le(s, 1, 4);
    put_string(s, "Main");
    put_le(s, 0, 8);       /* start */
    put_le(s, total, 8);   /* duration */
    for (int k = 0; k < 4; k++)
        put_le(s, 0, 8);   /* dropped, repaired, device intervals, unresolved */
    put_le(s, 1, 4);   /* rows */
    put_le(s, 0, 4);   /* instances */
    put_le(s, UINT32_MAX, 4);   /* parent */
    put_le(s, UINT32_MAX, 4);   /* site */
    put_string(s, "Frame");
    put_le(s, 0, 1);   /* kind */
    put_le(s, 0, 1);   /* flags */
    put_le(s, 1, 4);
    put_string(s, "Main");
    put_le(s, 0, 8);   /* start */
    for (int k = 0; k < 4; k++)
        put_le(s, total, 8);   /* total, self, min, max */
    put_le(s, 1, 8);   /* count */
    for (int k = 0; k < 3; k++)
        put_le(s, UINT32_MAX, 4);   /* launcher, launch site, device */
    put_le(s, 0, 4);   /* queue */
    size_t payload = s->n - block - 8;
    for (int i = 0; i < 4; i++)
        s->b[block + 4 + (size_t)i] = (uint8_t)(payload >> (8 * i));
    put_le(s, crc32_of(s->b + block, s->n - block), 4);
}

static void put_var(hand_stream *s, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        s->b[s->n++] = (uint8_t)(v | 0x80);
    s->b[s->n++] = (uint8_t)v;
}

static void put_header(hand_stream *s, unsigned major)
{
    memset(s->b, 0, 64);
    memcpy(s->b, "TLOGSTRM", 8);
    s->n = 8;
    put_le(s, major, 2);
    put_le(s, 0, 2);
    put_le(s, 64, 4);
    put_le(s, UINT32_MAX, 4);   /* no rank */
    s->n = 64;
}

/* An instance of a hand-written frame's row 0: on the frame's thread
 * (thread 0) or another. */
typedef struct hand_inst {
    uint32_t thread;
    int64_t start;
    uint64_t duration;
} hand_inst;

/* A version 2 FRAME block of one row, whose parent is written as the bytes
 * `parent` and whose thread is `thread`, and of the instances given (on
 * thread 1, the frame's). */
static void put_v2_frame_of(hand_stream *s, const uint8_t *parent, size_t nparent,
                            uint64_t thread, const hand_inst *insts, size_t ninsts)
{
    size_t block = s->n;
    put_le(s, 4, 4);   /* FRAME */
    put_le(s, 0, 4);   /* payload length, set below */
    put_le(s, 1, 8);   /* serial */
    put_le(s, 1, 4);
    put_string(s, "Main");
    put_le(s, 0, 8);     /* start */
    put_le(s, 500, 8);   /* duration */
    for (int k = 0; k < 4; k++)
        put_le(s, 0, 8);   /* dropped, repaired, device intervals, unresolved */
    put_le(s, 1, 4);   /* rows */
    put_le(s, ninsts, 4);
    memcpy(s->b + s->n, parent, nparent);
    s->n += nparent;
    put_var(s, 0);   /* no site */
    put_string(s, "Frame");
    put_le(s, 0, 1);   /* kind */
    put_le(s, 0, 1);   /* flags */
    put_var(s, thread);
    put_string(s, "Main");
    put_var(s, 0);   /* start */
    for (int k = 0; k < 4; k++)
        put_var(s, 500);   /* total, self, min, max */
    put_var(s, ninsts);   /* count */
    int64_t last = 0;
    for (size_t k = 0; k < ninsts; k++) {
        const hand_inst *x = &insts[k];
        put_var(s, x->thread ? 2 : 0);   /* row 0, its thread said or the frame's */
        int64_t step = x->start - last;
        put_var(s, step < 0 ? ((uint64_t)-step << 1) - 1 : (uint64_t)step << 1);
        last = x->start;
        put_var(s, x->duration);
        if (x->thread)
            put_var(s, x->thread);
    }
    size_t payload = s->n - block - 8;
    for (int i = 0; i < 4; i++)
        s->b[block + 4 + (size_t)i] = (uint8_t)(payload >> (8 * i));
    put_le(s, crc32_of(s->b + block, s->n - block), 4);
}

/* The same, of one instance over the whole frame. */
static void put_v2_frame(hand_stream *s, const uint8_t *parent, size_t nparent,
                         uint64_t thread)
{
    static const hand_inst whole = {0, 0, 500};
    put_v2_frame_of(s, parent, nparent, thread, &whole, 1);
}

/* Case i's hand-written stream reads to `rc` (TLOG_ENOFRAME: its one frame
 * read, then the end), its error saying `why` when not NULL. */
static void reads_as(const hand_stream *s, int rc, const char *why, size_t i)
{
    char err[256];
    int frames;
    assert_int_equal(read_all(s->b, s->n, &frames, err, sizeof err), rc);
    assert_int_equal(frames, rc == TLOG_ENOFRAME);
    if (why && !strstr(err, why))
        fail_msg("case %zu: %s", i, err);
}

/* Varints that run past the block's end, take more than ten bytes or
 * exceed their field are damage, said as such; a well-formed one reads. */
static void damaged_numbers_are_named(void **state)
{
    (void)state;
    static const uint8_t zero[] = {0x00}, eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                                      0x80, 0x80, 0x80, 0x80, 0x00},
                         past_64[] = {0x80, 0x80, 0x80, 0x80, 0x80,
                                      0x80, 0x80, 0x80, 0x80, 0x02};
    struct {
        const uint8_t *parent;
        size_t n;
        uint64_t thread;
        int rc;
        const char *why;
    } cases[] = {
        {zero, sizeof zero, 1, TLOG_ENOFRAME, NULL},
        {eleven, sizeof eleven, 1, TLOG_EFORMAT, "a row holds a number too large"},
        {past_64, sizeof past_64, 1, TLOG_EFORMAT, "a row holds a number too large"},
        {zero, sizeof zero, (uint64_t)UINT32_MAX + 1, TLOG_EFORMAT,
         "a row holds a number too large"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hand_stream s;
        put_header(&s, 2);
        put_v2_frame(&s, cases[i].parent, cases[i].n, cases[i].thread);
        reads_as(&s, cases[i].rc, cases[i].why, i);
    }
    /* Cut inside the instance's last varint, checksum made good. */
    hand_stream s;
    put_header(&s, 2);
    put_v2_frame(&s, zero, sizeof zero, 1);
    size_t block = 64, payload = s.n - block - 12;
    s.b[s.n - 5] |= 0x80;   /* the duration's last byte now says more follow */
    s.n -= 4;
    s.b[block + 4] = (uint8_t)payload;
    put_le(&s, crc32_of(s.b + block, s.n - block), 4);
    char err[256];
    int frames;
    assert_int_equal(read_all(s.b, s.n, &frames, err, sizeof err), TLOG_EFORMAT);
    assert_int_equal(frames, 0);
    assert_non_null(strstr(err, "instances run past the block"));
}

/* A QUEUES block (type 6) of the payload given. */
static void put_queues_block(hand_stream *s, const uint8_t *payload, size_t n)
{
    size_t block = s->n;
    put_le(s, 6, 4);
    put_le(s, n, 4);
    memcpy(s->b + s->n, payload, n);
    s->n += n;
    put_le(s, crc32_of(s->b + block, s->n - block), 4);
}

/* A QUEUES block that names what its frame lacks, or whose bytes are not
 * its entries, is damage, said as such; an empty one reads. */
static void damaged_queues_blocks_are_named(void **state)
{
    (void)state;
    static const uint8_t empty[] = {0}, host[] = {1, 0, 0, 1}, cut[] = {1},
                         extra[] = {0, 5};
    struct {
        const uint8_t *payload;
        size_t n;
        int rc;
        const char *why;
    } cases[] = {
        {empty, sizeof empty, TLOG_ENOFRAME, NULL},
        {host, sizeof host, TLOG_EFORMAT, "corrupt queues block: an instance that is no device"},
        {cut, sizeof cut, TLOG_EFORMAT, "corrupt queues block: fewer or more bytes"},
        {extra, sizeof extra, TLOG_EFORMAT, "corrupt queues block: fewer or more bytes"},
    };
    static const uint8_t zero[] = {0x00};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hand_stream s;
        put_header(&s, 2);
        put_queues_block(&s, cases[i].payload, cases[i].n);
        put_v2_frame(&s, zero, sizeof zero, 1);
        reads_as(&s, cases[i].rc, cases[i].why, i);
    }
}

/* A log that outlives a million threads numbers them past a million (and
 * a damaged stream may hold any number): such a thread's slices keep a
 * Chrome track of their own, apart from the lane a row's overlapping
 * instances open. */
static void threads_past_a_million_keep_tracks_of_their_own(void **state)
{
    (void)state;
    static const uint8_t zero[] = {0x00};
    static const hand_inst insts[] = {{0, 0, 500}, {0, 250, 500}, {3000000, 0, 100}};
    hand_stream s;
    put_header(&s, 2);
    put_v2_frame_of(&s, zero, sizeof zero, 1, insts, 3);
    tlog_reader *r;
    tlog_frame *f;
    assert_int_equal(tlog_reader_open_memory(s.b, s.n, &r), TLOG_OK);
    assert_int_equal(tlog_reader_next(r, &f), TLOG_OK);
    const char *path = path_in_dir("many-threads.json");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(tlog_export_chrome((const tlog_frame *const *)&f, 1, fp), TLOG_OK);
    fclose(fp);
    tlog_frame_release(f);
    tlog_reader_close(r);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s chrome %s", CHECK_EXPORT, path);
    assert_int_equal(system(cmd), 0);
}

/* The mean of totals near UINT64_MAX is 2^64 once a double: the reduced
 * frame's time saturates rather than overflow the conversion. */
static void reduced_huge_totals_saturate(void **state)
{
    (void)state;
    hand_stream s;
    put_header(&s, 1);   /* version 1.0: fixed-width rows */
    put_one_row_frame(&s, 1, UINT64_MAX);
    put_one_row_frame(&s, 2, UINT64_MAX - 1);
    tlog_reader *r;
    assert_int_equal(tlog_reader_open_memory(s.b, s.n, &r), TLOG_OK);
    tlog_frame *f[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(tlog_reader_next(r, &f[k]), TLOG_OK);
    tlog_frame *m;
    assert_int_equal(tlog_frame_reduce((const tlog_frame *const *)f, 2, &m), TLOG_OK);
    tlog_frame_info info = {.size = sizeof info};
    assert_int_equal(tlog_frame_get_info(m, &info), TLOG_OK);
    assert_true(info.duration_ns == UINT64_MAX);
    /* Hiding short rows compares the mean too. */
    FILE *out = tmpfile();
    assert_non_null(out);
    tlog_dump_options hide = {.size = sizeof hide, .min_ns = 1000};
    assert_int_equal(tlog_dump_frame(m, out, &hide), TLOG_OK);
    assert_true(ftell(out) > 0);
    fclose(out);
    tlog_frame_release(m);
    for (int k = 0; k < 2; k++)
        tlog_frame_release(f[k]);
    tlog_reader_close(r);
}

static uint32_t le32_at(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void write_bytes(const char *path, const uint8_t *b, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

/* What `timerlog ARGS` wrote to stderr (stdout dropped), and its status. */
static char *cli_errors(const char *args, int *status)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1 >/dev/null", TIMERLOG_CLI, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *text = calloc(1, 8192);
    assert_non_null(text);
    size_t n = fread(text, 1, 8191, p);
    text[n] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return text;
}

/* Every command that reads a stream warns of the frames it lacks though no
 * block is damaged, and exits as for a whole file. */
static void commands_warn_of_frames_the_file_lacks(const char *path, const char *warning)
{
    static const char *const commands[] = {"dump", "info", "stats", "export --csv -o /dev/null",
                                           "report -o /dev/null", "diff"};
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
        char args[1200];
        int status;
        snprintf(args, sizeof args, "%s '%s'%s%s%s", commands[k], path, k == 5 ? " '" : "",
                 k == 5 ? path : "", k == 5 ? "'" : "");
        char *errors = cli_errors(args, &status);
        if (status != 0 || !strstr(errors, warning))
            fail_msg("timerlog %s: status %d, expected 0 and \"%s\" in:\n%s", args, status,
                     warning, errors);
        free(errors);
    }
}

/* A FRAME block missing from a file that ended properly: its end block
 * counts more frames than are read. */
static void a_frame_block_missing_is_warned_of(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = read_file(good_stream(), &n);
    size_t at = 64;
    int frames = 0;
    while (at + 8 <= n && !(le32_at(b + at) == 4 && ++frames == 2))   /* the second FRAME */
        at += 8 + le32_at(b + at + 4) + 4;
    assert_int_equal(frames, 2);
    size_t len = 8 + le32_at(b + at + 4) + 4;
    memmove(b + at, b + at + len, n - at - len);
    const char *path = path_in_dir("missing-block.tlog");
    write_bytes(path, b, n - len);
    free(b);
    commands_warn_of_frames_the_file_lacks(
        path, "warning: the end block counts 3 frames written, and 2 were read");
}

/* Frames the writer could not write, as its end block counts them. */
static void frames_the_writer_lost_are_warned_of(void **state)
{
    (void)state;
    size_t n;
    uint8_t *b = read_file(good_stream(), &n);
    size_t end = n - (8 + 16 + 4);
    assert_int_equal(le32_at(b + end), 5);   /* END */
    b[end + 8 + 8] = 2;                      /* frames lost */
    uint32_t crc = crc32_of(b + end, 8 + 16);
    for (int i = 0; i < 4; i++)
        b[end + 8 + 16 + i] = (uint8_t)(crc >> (8 * i));
    const char *path = path_in_dir("lost.tlog");
    write_bytes(path, b, n);
    free(b);
    commands_warn_of_frames_the_file_lacks(
        path, "warning: 2 frames the writer could not write are missing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_reads_back_as_the_in_process_dump),
        cmocka_unit_test(a_host_entry_in_a_device_row_streams),
        cmocka_unit_test(instances_read_back_exactly),
        cmocka_unit_test(version_1_and_2_files_read_alike),
        cmocka_unit_test(damaged_numbers_are_named),
        cmocka_unit_test(damaged_queues_blocks_are_named),
        cmocka_unit_test(threads_past_a_million_keep_tracks_of_their_own),
        cmocka_unit_test(cli_dump_matches_the_in_process_dump),
        cmocka_unit_test(cli_exit_codes_follow_convention),
        cmocka_unit_test(sites_first_seen_late_are_described),
        cmocka_unit_test(site_without_file_or_function_streams),
        cmocka_unit_test(percent_in_the_path_becomes_the_rank),
        cmocka_unit_test(unwritable_path_is_reported_and_recording_goes_on),
        cmocka_unit_test(a_path_another_log_streams_to_is_left_to_it),
        cmocka_unit_test(frame_ends_wait_for_room_never_for_a_device),
        cmocka_unit_test(a_hung_device_costs_the_stream_one_timeout_not_one_a_frame),
        cmocka_unit_test(frame_ends_do_not_wait_behind_another_forced_sync),
        cmocka_unit_test(full_disk_keeps_what_was_written),
        cmocka_unit_test(a_frame_too_large_for_a_reader_is_left_out),
        cmocka_unit_test(a_title_too_long_for_the_stream_is_cut_and_said),
        cmocka_unit_test(forked_child_neither_hangs_nor_writes),
        cmocka_unit_test(small_buffer_loses_nothing),
        cmocka_unit_test(foreign_file_is_named_as_such),
        cmocka_unit_test(future_version_is_refused),
        cmocka_unit_test(corrupt_block_is_found_and_what_precedes_kept),
        cmocka_unit_test(a_file_that_grows_after_opening_reads_whole),
        cmocka_unit_test(truncated_file_keeps_the_frames_before),
        cmocka_unit_test(frames_merge_into_one_tree),
        cmocka_unit_test(merged_device_rows_keep_their_device),
        cmocka_unit_test(merged_frame_with_interned_sites_outlives_its_reader),
        cmocka_unit_test(reduced_huge_totals_saturate),
        cmocka_unit_test(a_frame_block_missing_is_warned_of),
        cmocka_unit_test(frames_the_writer_lost_are_warned_of),
    };
    return cmocka_run_group_tests(tests, make_dir, NULL);
}
