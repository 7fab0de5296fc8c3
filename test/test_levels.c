/* Levels: 0 off, 1 coarse, 2 fine, from the config, the environment or at
 * run time; the macros check the level before calling into the library. */
#include <unistd.h>

#include "common.h"

static int recorded_children(tlog_log *log)
{
    tlog_frame *f = tlog_frame_latest(log);
    if (!f)
        return -1;
    int n = (int)child_count(tlog_frame_root(f));
    tlog_frame_release(f);
    return n;
}

static const tlog_site frame_site = {"Frame", "l.c", "f", 1, TLOG_LEVEL_COARSE};
static const tlog_site coarse_site = {"Coarse", "l.c", "f", 2, TLOG_LEVEL_COARSE};
static const tlog_site fine_site = {"Fine", "l.c", "f", 3, TLOG_LEVEL_FINE};

static void one_frame(tlog_log *log)
{
    tlog_log_begin(log, &frame_site);
    tlog_log_begin(log, &coarse_site);
    tlog_log_end(log, &coarse_site);
    tlog_log_begin(log, &fine_site);
    tlog_log_end(log, &fine_site);
    tlog_log_end(log, &frame_site);
}

static void macros_follow_the_default_level(void **state)
{
    (void)state;
    assert_int_equal(tlog_set_level(NULL, TLOG_LEVEL_COARSE), TLOG_OK);
    {
        TIMERLOG_SCOPE("Frame");
        { TIMERLOG_SCOPE("Coarse"); }
        { TIMERLOG_SCOPE_L(TLOG_LEVEL_FINE, "Fine"); }
        TIMERLOG_BEGIN_L(TLOG_LEVEL_FINE, "Fine pair");
        TIMERLOG_END_L(TLOG_LEVEL_FINE, "Fine pair");
    }
    assert_int_equal(recorded_children(NULL), 1);
    assert_int_equal(tlog_set_level(NULL, TLOG_LEVEL_FINE), TLOG_OK);
    {
        TIMERLOG_SCOPE("Frame");
        { TIMERLOG_SCOPE("Coarse"); }
        { TIMERLOG_SCOPE_L(TLOG_LEVEL_FINE, "Fine"); }
        TIMERLOG_BEGIN_L(TLOG_LEVEL_FINE, "Fine pair");
        TIMERLOG_END_L(TLOG_LEVEL_FINE, "Fine pair");
    }
    assert_int_equal(recorded_children(NULL), 3);
    assert_int_equal(tlog_set_level(NULL, 3), TLOG_EINVAL);
    assert_int_equal(tlog_set_level(NULL, -1), TLOG_EINVAL);
    tlog_stats s = stats_of(NULL);
    assert_int_equal(s.unmatched_ends + s.mismatched_ends, 0);
}

/* tlog_begin is the unchecked primitive: the same on a thread's first
 * frame as on every later one. */
static void begin_function_does_not_check_the_level(void **state)
{
    (void)state;
    assert_int_equal(tlog_set_level(NULL, TLOG_LEVEL_COARSE), TLOG_OK);
    for (int frame = 0; frame < 2; frame++) {
        tlog_begin(&fine_site);
        tlog_begin(&coarse_site);
        tlog_end(&coarse_site);
        tlog_end(&fine_site);
        tlog_frame *f = tlog_frame_latest(NULL);
        assert_string_equal(info_of(tlog_frame_root(f)).name, "Fine");
        tlog_frame_release(f);
    }
    assert_int_equal(tlog_set_level(NULL, TLOG_LEVEL_FINE), TLOG_OK);
}

static void config_level_selects_sites(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.level = TLOG_LEVEL_COARSE;
    tlog_log *log = make_log(&c);
    one_frame(log);
    assert_int_equal(recorded_children(log), 1);
    assert_int_equal(tlog_set_level(log, TLOG_LEVEL_FINE), TLOG_OK);
    one_frame(log);
    assert_int_equal(recorded_children(log), 2);
    assert_int_equal(tlog_set_level(log, TLOG_LEVEL_OFF), TLOG_OK);
    tlog_log_begin(log, &frame_site);
    tlog_log_end(log, &frame_site);
    assert_int_equal(stats_of(log).frames_completed, 2);
    assert_int_equal(stats_of(log).unmatched_ends, 0);
    tlog_destroy(log);
}

static void zero_level_means_fine_and_start_off_means_off(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_FINE);
    tlog_destroy(log);
    c.flags |= TLOG_CONFIG_START_OFF;
    log = make_log(&c);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_OFF);
    one_frame(log);
    assert_int_equal(tlog_frame_count(log), 0);
    tlog_destroy(log);
}

static void environment_overrides_the_config(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.flags &= ~(unsigned)TLOG_CONFIG_IGNORE_ENV;
    c.level = TLOG_LEVEL_FINE;
    setenv("TIMERLOG_LEVEL", "1", 1);
    tlog_log *log = make_log(&c);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_COARSE);
    tlog_destroy(log);

    setenv("TIMERLOG_LEVEL", "fine", 1);
    log = make_log(&c);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_FINE);
    assert_int_equal(count_code(&errors, TLOG_EINVAL), 1);
    tlog_destroy(log);

    c.flags |= TLOG_CONFIG_IGNORE_ENV;
    setenv("TIMERLOG_LEVEL", "0", 1);
    log = make_log(&c);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_FINE);
    tlog_destroy(log);
    unsetenv("TIMERLOG_LEVEL");
}

/* Settings read when a log is made are each said by the default handler,
 * though all are site-less TLOG_EINVAL reports, which it otherwise prints
 * once per kind. */
static void every_bad_setting_is_named_by_the_default_handler(void **state)
{
    (void)state;
    static const char *const settings[][2] = {
        {"TIMERLOG_LEVEL", "3"}, {"TIMERLOG_NVTX", "yes"}, {"TIMERLOG_ROCTX", "no"},
        {"TIMERLOG_CLOCK", "tsc"}, {"TIMERLOG_SYNC_TIMEOUT_MS", "abc"}};
    enum { N = sizeof settings / sizeof settings[0] };
    for (int i = 0; i < N; i++)
        setenv(settings[i][0], settings[i][1], 1);
    FILE *err = tmpfile();
    assert_non_null(err);
    fflush(stderr);
    int saved = dup(fileno(stderr));
    dup2(fileno(err), fileno(stderr));
    tlog_config c = {.size = sizeof c, .clock = test_clock};
    for (int k = 0; k < 2; k++) {   /* and for each log made */
        tlog_log *log = make_log(&c);
        tlog_destroy(log);
    }
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    for (int i = 0; i < N; i++)
        unsetenv(settings[i][0]);
    char *text = read_back(err);
    for (int i = 0; i < N; i++) {
        char line[128];
        snprintf(line, sizeof line, "timerlog: %s=%s is not", settings[i][0], settings[i][1]);
        const char *first = strstr(text, line);
        assert_non_null(first);
        assert_non_null(strstr(first + 1, line));
    }
    assert_null(strstr(text, "happened again"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(begin_function_does_not_check_the_level),
        cmocka_unit_test(macros_follow_the_default_level),
        cmocka_unit_test(config_level_selects_sites),
        cmocka_unit_test(zero_level_means_fine_and_start_off_means_off),
        cmocka_unit_test(environment_overrides_the_config),
        cmocka_unit_test(every_bad_setting_is_named_by_the_default_handler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
