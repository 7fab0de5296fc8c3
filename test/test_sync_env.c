/* TIMERLOG_SYNC_TIMEOUT_MS (set to 30 by the test runner) overrides the
 * configured timeout of the forced sync. */
#include <time.h>

#include "device_fixture.h"

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void environment_sets_the_forced_sync_timeout(void **state)
{
    (void)state;
    tlog_sim *sim;
    assert_int_equal(tlog_sim_create(NULL, &sim), TLOG_OK);
    tlog_config c = {.size = sizeof c, .clock = tlog_sim_clock, .clock_user = sim,
                     .sync_timeout_ns = 60 * 1000 * NS_PER_MS};
    tlog_log *log = make_log(&c);
    tlog_device *dev;
    assert_int_equal(tlog_sim_device_create(sim, log, NULL, &dev), TLOG_OK);
    tlog_log_begin(log, site_named("Frame"));
    tlog_device_scope s = tlog_device_begin(dev, NULL, site_named("Stuck"));
    tlog_sim_inject(sim, TLOG_SIM_FAULT_HANG, 1);   /* the end never completes */
    tlog_device_end(&s);
    tlog_log_end(log, site_named("Frame"));
    double t0 = wall_ms();
    assert_int_equal(tlog_sync(log), TLOG_ETIMEDOUT);
    double waited = wall_ms() - t0;
    assert_true(waited >= 25.0 && waited < 5000.0);
    tlog_destroy(log);
    tlog_sim_destroy(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(environment_sets_the_forced_sync_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
