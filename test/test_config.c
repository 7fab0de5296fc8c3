/* Configuration: zero means defaults, bad values are refused, shorter
 * (older) structs are read up to their size; codes have messages. */
#include <time.h>
#include <unistd.h>

#include "common.h"

static void zero_and_null_configs_are_valid(void **state)
{
    (void)state;
    tlog_log *log = NULL;
    assert_int_equal(tlog_create(NULL, &log), TLOG_OK);
    tlog_destroy(log);
    tlog_config zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(tlog_create(&zero, &log), TLOG_OK);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_FINE);
    tlog_destroy(log);
    tlog_destroy(NULL);
}

static void bad_configs_are_refused(void **state)
{
    (void)state;
    tlog_log *log = (tlog_log *)&log;
    assert_int_equal(tlog_create(NULL, NULL), TLOG_EINVAL);
    tlog_config c = {.size = sizeof c, .level = 3};
    assert_int_equal(tlog_create(&c, &log), TLOG_EINVAL);
    assert_null(log);
    c = (tlog_config){.size = sizeof c, .max_depth = 5000};
    assert_int_equal(tlog_create(&c, &log), TLOG_EINVAL);
    c = (tlog_config){.size = sizeof c, .thread_budget = 16};
    assert_int_equal(tlog_create(&c, &log), TLOG_EINVAL);
    c = (tlog_config){.size = 4};
    assert_int_equal(tlog_create(&c, &log), TLOG_EINVAL);
}

/* A config that holds its size alone is a config of defaults, as a NULL
 * one is. */
static void config_of_its_size_alone_is_the_defaults(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof(size_t)};
    tlog_log *log = NULL, *defaults = NULL;
    assert_int_equal(tlog_create(&c, &log), TLOG_OK);
    assert_int_equal(tlog_create(NULL, &defaults), TLOG_OK);
    assert_int_equal(tlog_get_level(log), tlog_get_level(defaults));
    tlog_destroy(log);
    tlog_destroy(defaults);
}

static void shorter_config_ignores_fields_past_its_size(void **state)
{
    (void)state;
    /* A header of size, level and flags: max_depth (refused if read) and
     * the rest are past it. */
    tlog_config c = {.level = TLOG_LEVEL_COARSE, .max_depth = 5000};
    c.size = offsetof(tlog_config, max_frames);
    tlog_log *log = NULL;
    assert_int_equal(tlog_create(&c, &log), TLOG_OK);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_COARSE);
    tlog_destroy(log);
}

static void default_config_only_before_first_use(void **state)
{
    (void)state;
    tlog_config bad = {.size = sizeof bad, .level = 7};
    assert_int_equal(tlog_default_config(&bad), TLOG_EINVAL);
    /* The stream's path is the config's copy: the caller's may be gone
     * (here overwritten, then freed) when the default log is made. */
    char path[128];
    snprintf(path, sizeof path, "/tmp/timerlog-config-%ld.tlog", (long)getpid());
    char *given = strdup(path);
    tlog_config c = {.size = sizeof c, .level = TLOG_LEVEL_COARSE,
                     .flags = TLOG_CONFIG_IGNORE_ENV, .stream_path = given};
    assert_int_equal(tlog_default_config(&c), TLOG_OK);
    memset(given, 'x', strlen(given));
    free(given);
    c.stream_path = NULL;
    assert_non_null(tlog_default());
    assert_int_equal(tlog_stream_flush(NULL), TLOG_OK);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    assert_int_equal(tlog_get_level(NULL), TLOG_LEVEL_COARSE);
    assert_int_equal(tlog_default_config(&c), TLOG_EBUSY);
    tlog_destroy(tlog_default()); /* the default log is not destroyed */
    assert_int_equal(tlog_get_level(NULL), TLOG_LEVEL_COARSE);
}

static void every_code_has_a_message(void **state)
{
    (void)state;
    for (int code = 0; code >= TLOG_ETHREADEXIT; code--) {
        const char *m = tlog_strerror(code);
        assert_non_null(m);
        assert_string_not_equal(m, "unknown error");
    }
    assert_string_equal(tlog_strerror(-1000), "unknown error");
}

static void stats_and_ticks(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .clock = test_clock, .clock_hz = 1000};
    tlog_log *log = make_log(&c);
    assert_int_equal(tlog_ticks_to_ns(log, 3), 3000000);
    test_now = 42;
    assert_int_equal(tlog_now(log), 42);
    tlog_stats s = {.size = 0};
    assert_int_equal(tlog_get_stats(log, &s), TLOG_EINVAL);
    s.size = offsetof(tlog_stats, frames_dropped);
    assert_int_equal(tlog_get_stats(log, &s), TLOG_OK);
    tlog_destroy(log);
    /* The hardware clock converts with a calibrated rate. */
    tlog_log *hw = make_log(NULL);
    tlog_ticks t0 = tlog_now(hw);
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
    uint64_t ns = tlog_ticks_to_ns(hw, tlog_now(hw) - t0);
    assert_true(ns >= 19000000 && ns < 500000000);
    tlog_destroy(hw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zero_and_null_configs_are_valid),
        cmocka_unit_test(bad_configs_are_refused),
        cmocka_unit_test(config_of_its_size_alone_is_the_defaults),
        cmocka_unit_test(shorter_config_ignores_fields_past_its_size),
        cmocka_unit_test(default_config_only_before_first_use),
        cmocka_unit_test(every_code_has_a_message),
        cmocka_unit_test(stats_and_ticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
