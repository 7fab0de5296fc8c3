/*
 * Rebuilds the reference frame of the product brief with the public macros,
 * real worker threads and a simulated clock, and compares the dump with
 * test/golden/seed_frame.txt line by line. The device rows (E) under the
 * sync scopes are inserted by hand, as an application would for timings
 * measured elsewhere.
 */
#include <pthread.h>

#include "common.h"

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

static void launch(const char *title, double from_ms, double to_ms)
{
    const tlog_site *s = tlog_site_intern(title, __FILE__, __func__, __LINE__, 1);
    at_ms(from_ms);
    tlog_begin(s);
    at_ms(to_ms);
    tlog_end(s);
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
        launch("Launch \"Filter 1: GPU Parallel Operation 1\"", 100, 112.5);
        launch("Launch \"Filter 1: GPU Parallel Operation 2\"", 112.5, 125);
    }
    {
        TIMERLOG_SCOPE("Filter 2");
        {
            TIMERLOG_SCOPE("Serial Preparation");
            at_ms(135);
            {
                TIMERLOG_SCOPE("GPU Sync \"ArrayHandle::GetPortalConstControl()\"");
                device_row("Filter 1: GPU Parallel Operation 1", 112.5, 172.5);
                device_row("Filter 1: GPU Parallel Operation 2", 142.5, 172.5);
                at_ms(175);
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
    launch("Launch \"Upload to device\"", 700, 800);
    launch("Launch \"Draw\"", 800, 900);
}

static void force_sync(void)
{
    at_ms(900);
    TIMERLOG_SCOPE("Force Logging Sync \"TimerLog::LogToStream(std::ostream&)\"");
    device_row("Upload to device", 860, 880);
    device_row("Draw", 870, 995);
    at_ms(1000);
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

static void seed_frame_dump_matches_golden_file(void **state)
{
    (void)state;
    seed_frame();
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

static void seed_frame_records_no_errors(void **state)
{
    (void)state;
    tlog_stats s = stats_of(NULL);
    assert_int_equal(s.mismatched_ends + s.unmatched_ends + s.scopes_dropped +
                         s.late_work + s.scopes_repaired,
                     0);
    assert_int_equal(s.frames_completed, 1);
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
        cmocka_unit_test(seed_frame_records_no_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
