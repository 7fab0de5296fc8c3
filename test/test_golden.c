/*
 * Rebuilds the reference frame of the product brief with the public macros,
 * real worker threads and a simulated clock, and compares the dump with
 * test/golden/seed_frame.txt line by line, twice: once with the device rows
 * (E) inserted by hand, as an application would for timings measured
 * elsewhere, and once through device scopes on the simulated device, whose
 * clock is the main thread's: no row is inserted, and the placement rule
 * (doc/format.md) puts each interval under the sync scope that waited for it,
 * the frame-end `Force Logging Sync` among them.
 */
#include <pthread.h>

#include <timerlog/sim.h>

#include "common.h"

/* NULL: device rows are inserted by hand. */
static tlog_device *gpu;
static tlog_sim *sim;
static tlog_sim_queue *queues[2];

typedef struct job {
    tlog_token token;
    const char *name;
    double start_ms, duration_ms;
} job;

static void *work(void *arg)
{
    job *j = arg;
    tlog_thread_name(j->name);
    at_ms(j->start_ms);
    {
        TIMERLOG_ADOPT(j->token);
        at_ms(j->start_ms + j->duration_ms);
    }
    return NULL;
}

/* Workers run one after another so the result does not depend on the
 * scheduler; each starts at the parent's current time. */
static void run_workers(double start_ms, const double *durations_ms, int n)
{
    static const char *names[] = {"Worker Thread 1", "Worker Thread 2",
                                  "Worker Thread 3", "Worker Thread 4"};
    for (int i = 0; i < n; i++) {
        job j = {tlog_handoff(NULL), names[i], start_ms, durations_ms[i]};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, work, &j), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
    }
}

static void device_row(const char *name, double start_ms, double end_ms)
{
    const tlog_site *s = tlog_site_intern(name, __FILE__, __func__, __LINE__, 1);
    assert_int_equal(tlog_insert(NULL, s, TLOG_KIND_EXECUTION,
                                 (tlog_ticks)(start_ms * 1e6), (tlog_ticks)(end_ms * 1e6)),
                     TLOG_OK);
}

/* Launches work of `device_ms` on a queue from `from_ms` to `to_ms`: a
 * device scope, whose host side is its `Launch "name"` row; without a
 * device, that row alone. */
static void launch(const char *name, int queue, double from_ms, double to_ms,
                   double device_ms)
{
    char title[128];
    snprintf(title, sizeof title, "Launch \"%s\"", name);
    const tlog_site *s = tlog_site_intern(gpu ? name : title, __FILE__, __func__, __LINE__, 1);
    at_ms(from_ms);
    if (!gpu) {
        tlog_begin(s);
        at_ms(to_ms);
        tlog_end(s);
        return;
    }
    tlog_device_scope d = tlog_device_begin(gpu, queues[queue], s);
    assert_non_null(d.slot_);
    assert_int_equal(tlog_sim_launch(sim, queues[queue], (uint64_t)(device_ms * 1e6)), TLOG_OK);
    at_ms(to_ms);
    assert_int_equal(tlog_device_end(&d), TLOG_OK);
}

/* The host waits in a sync scope until `ms`; the device has run what was
 * due by then. */
static void wait_until(double ms)
{
    at_ms(ms);
    if (sim)
        tlog_sim_settle(sim);
}

static void cpu_parallel(double from_ms, double to_ms, const double *workers, int n)
{
    at_ms(from_ms);
    TIMERLOG_SCOPE("CPU Parallel Operation");
    run_workers(from_ms, workers, n);
    at_ms(to_ms);
}

static void serial(double from_ms, double to_ms)
{
    at_ms(from_ms);
    TIMERLOG_SCOPE("Serial Preparation");
    at_ms(to_ms);
}

static void simulation(void)
{
    at_ms(0);
    TIMERLOG_SCOPE("Simulation/Analysis");
    {
        TIMERLOG_SCOPE("Filter 1");
        serial(0, 50);
        cpu_parallel(50, 100, (const double[]){50, 50}, 2);
        launch("Filter 1: GPU Parallel Operation 1", 0, 100, 112.5, 60);
        launch("Filter 1: GPU Parallel Operation 2", 1, 112.5, 125, 30);
    }
    {
        TIMERLOG_SCOPE("Filter 2");
        {
            TIMERLOG_SCOPE("Serial Preparation");
            at_ms(135);
            {
                TIMERLOG_SYNC_SCOPE(gpu, "GPU Sync \"ArrayHandle::GetPortalConstControl()\"");
                if (!gpu) {
                    device_row("Filter 1: GPU Parallel Operation 1", 112.5, 172.5);
                    device_row("Filter 1: GPU Parallel Operation 2", 142.5, 172.5);
                }
                wait_until(175);
            }
        }
        cpu_parallel(175, 375, (const double[]){100, 200, 50, 20}, 4);
    }
    {
        TIMERLOG_SCOPE("Filter 3");
        serial(375, 400);
        cpu_parallel(400, 500, (const double[]){100, 100, 100, 100}, 4);
    }
}

static void render(void)
{
    at_ms(500);
    TIMERLOG_SCOPE("Render");
    {
        TIMERLOG_SCOPE("Build host-side buffers/lookup tables");
        run_workers(500, (const double[]){100, 200, 40, 20}, 4);
        at_ms(700);
    }
    if (gpu) /* earlier work keeps the queue busy until 780 ms */
        assert_int_equal(tlog_sim_launch(sim, queues[0], 80000000), TLOG_OK);
    launch("Upload to device", 0, 700, 800, 20);
    launch("Draw", 1, 800, 900, 125);
}

static void force_sync(void)
{
    at_ms(900);
    TIMERLOG_SYNC_SCOPE(gpu, "Force Logging Sync \"TimerLog::LogToStream(std::ostream&)\"");
    if (!gpu) {
        device_row("Upload to device", 860, 880);
        device_row("Draw", 870, 995);
    }
    wait_until(1000);
}

static void seed_frame(void)
{
    at_ms(0);
    TIMERLOG_SCOPE("Frame");
    simulation();
    render();
    force_sync();
    at_ms(1000);
}

static char *read_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        fail_msg("cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    rewind(fp);
    char *s = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    return s;
}

/* Compares the newest frame's dump with the golden file, line by line. */
static void check_against_golden_file(void)
{
    tlog_frame *f = tlog_frame_latest(NULL);
    assert_non_null(f);
    char *got = dump_string(f, NULL);
    tlog_frame_release(f);
    char *want = read_file(GOLDEN_DIR "/seed_frame.txt");

    char *gs, *ws;
    char *g = strtok_r(got, "\n", &gs), *w = strtok_r(want, "\n", &ws);
    for (int line = 1; g || w; line++) {
        if (!g || !w || strcmp(g, w) != 0)
            fail_msg("line %d differs:\n  got:  %s\n  want: %s", line, g ? g : "(end)",
                     w ? w : "(end)");
        g = strtok_r(NULL, "\n", &gs);
        w = strtok_r(NULL, "\n", &ws);
    }
    free(got);
    free(want);
}

static void seed_frame_dump_matches_golden_file(void **state)
{
    (void)state;
    seed_frame();
    check_against_golden_file();
}

/* The same frame, its (E) rows from device scopes on two queues: the sync
 * scopes show what completed by their ends, the host side of each launch is
 * its `Launch` row, and nothing is inserted by hand. */
static void seed_frame_through_the_device_matches_golden_file(void **state)
{
    (void)state;
    test_clock_shared = 1;
    at_ms(0);
    tlog_sim_config sc = {.size = sizeof sc, .clock = shared_test_clock};
    assert_int_equal(tlog_sim_create(&sc, &sim), TLOG_OK);
    tlog_device_config dc = {.size = sizeof dc, .flags = TLOG_DEVICE_LAUNCH_ROWS};
    assert_int_equal(tlog_sim_device_create(sim, NULL, &dc, &gpu), TLOG_OK);
    queues[0] = tlog_sim_queue_create(sim);
    queues[1] = tlog_sim_queue_create(sim);
    seed_frame();
    check_against_golden_file();
    tlog_device_info di = {.size = sizeof di};
    assert_int_equal(tlog_device_get_info(gpu, &di), TLOG_OK);
    assert_int_equal(di.resolved, 4);
    tlog_device_destroy(gpu);
    tlog_sim_destroy(sim);
    gpu = NULL;
    sim = NULL;
}

static void seed_frame_records_no_errors(void **state)
{
    (void)state;
    tlog_stats s = stats_of(NULL);
    assert_int_equal(s.mismatched_ends + s.unmatched_ends + s.scopes_dropped +
                         s.late_work + s.scopes_repaired,
                     0);
    assert_int_equal(s.frames_completed, 2);
}

int main(void)
{
    tlog_config c = {.size = sizeof c, .clock = test_clock,
                     .flags = TLOG_CONFIG_IGNORE_ENV};
    if (tlog_default_config(&c) != TLOG_OK)
        return 1;
    tlog_thread_name("Main");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed_frame_dump_matches_golden_file),
        cmocka_unit_test(seed_frame_through_the_device_matches_golden_file),
        cmocka_unit_test(seed_frame_records_no_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
