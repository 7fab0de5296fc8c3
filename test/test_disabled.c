/* With TIMERLOG_DISABLE every macro compiles to nothing: no call reaches
 * the library, so not even a thread state is created. */
#ifndef TIMERLOG_DISABLE
#error "this test is built with -DTIMERLOG_DISABLE"
#endif

#include "common.h"

static int side_effects;

static void disabled_macros_record_nothing(void **state)
{
    (void)state;
    tlog_token token = {0};
    for (int i = 0; i < 3; i++) {
        TIMERLOG_SCOPE("Frame");
        TIMERLOG_SCOPE_L(TLOG_LEVEL_FINE, "Fine");
        TIMERLOG_BEGIN("Pair");
        TIMERLOG_END("Pair");
        TIMERLOG_ADOPT((side_effects++, token));
    }
    assert_int_equal(side_effects, 0);
    assert_int_equal(tlog_frame_count(NULL), 0);
    tlog_stats s = stats_of(NULL);
    assert_int_equal(s.threads, 0);
    assert_int_equal(s.frames_completed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(disabled_macros_record_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
