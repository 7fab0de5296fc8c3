/* Run with TIMERLOG_LEVEL=0 in the environment: the macros are off from the
 * very first scope, before anything has created the default log. */
#include "common.h"

static void environment_switches_the_macros_off_from_the_start(void **state)
{
    (void)state;
    assert_string_equal(getenv("TIMERLOG_LEVEL"), "0");
    for (int i = 0; i < 2; i++) {
        TIMERLOG_SCOPE("Frame");
        TIMERLOG_SCOPE("Child");
        TIMERLOG_BEGIN("Pair");
        TIMERLOG_END("Pair");
    }
    assert_int_equal(tlog_get_level(NULL), TLOG_LEVEL_OFF);
    assert_int_equal(tlog_frame_count(NULL), 0);
    tlog_stats s = stats_of(NULL);
    assert_int_equal(s.threads, 0); /* no call reached the recorder */
    assert_int_equal(s.unmatched_ends + s.mismatched_ends, 0);
}

static void raising_the_level_switches_them_on(void **state)
{
    (void)state;
    assert_int_equal(tlog_set_level(NULL, TLOG_LEVEL_COARSE), TLOG_OK);
    {
        TIMERLOG_SCOPE("Frame");
        TIMERLOG_SCOPE("Child");
    }
    assert_int_equal(tlog_frame_count(NULL), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(environment_switches_the_macros_off_from_the_start),
        cmocka_unit_test(raising_the_level_switches_them_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
