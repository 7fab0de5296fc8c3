/* Run with TIMERLOG_CLOCK=monotonic in the environment: logs read
 * CLOCK_MONOTONIC instead of the CPU's counter, and time still adds up. */
#include <time.h>

#include "common.h"

static void environment_selects_the_monotonic_clock(void **state)
{
    (void)state;
    assert_string_equal(tlog_clock_name(NULL), "monotonic");
    assert_int_equal(tlog_ticks_to_ns(NULL, 1000), 1000);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    tlog_ticks now = tlog_now(NULL);
    assert_true(now >= mono && now - mono < 1000000000u);
}

static void scopes_are_timed_with_it(void **state)
{
    (void)state;
    {
        TIMERLOG_SCOPE("Frame");
        struct timespec pause = {0, 20000000};
        nanosleep(&pause, NULL);
    }
    tlog_frame *f = tlog_frame_latest(NULL);
    assert_non_null(f);
    uint64_t ns = info_of(tlog_frame_root(f)).total_ns;
    assert_true(ns >= 20000000 && ns < 1000000000);
    tlog_frame_release(f);
}

static void ignore_env_keeps_the_hardware_clock(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log = make_log(&c);
    assert_string_not_equal(tlog_clock_name(log), "custom");
    c.clock = test_clock;
    tlog_log *custom = make_log(&c);
    assert_string_equal(tlog_clock_name(custom), "custom");
    tlog_destroy(custom);
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(environment_selects_the_monotonic_clock),
        cmocka_unit_test(scopes_are_timed_with_it),
        cmocka_unit_test(ignore_env_keeps_the_hardware_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
