/*
 * The built-in forwarders (NVTX, roctx), run against test tools that stand
 * in for Nsight Systems and ROCm: every scope becomes one range, ranges
 * balance on every thread, and the switches work. Compiled once per tool:
 *   FORWARD_FLAG       the config flag that asks for it
 *   FORWARD_SWITCH     the environment variable that overrides the flag
 *   FORWARD_TOOL_ENV   the variable naming the tool library to load
 *   FORWARD_BUILT      1 when this build can forward to the tool
 * With the argument "with-tool", FORWARD_TOOL_ENV names the test tool and the
 * ranges are checked; without it, no tool can be loaded (FORWARD_TOOL_ENV is
 * empty or names a missing file) and the no-tool behaviour is checked.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>

#include "common.h"
#include "forward_tool.h"

static const char *tool_path(void)
{
    const char *p = getenv(FORWARD_TOOL_ENV);
    return p && *p ? p : NULL;
}

/* What the tool has seen so far; the forwarder must have loaded it. */
static forward_counts seen(void)
{
    void *lib = dlopen(tool_path(), RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    forward_report_fn report;
    *(void **)&report = dlsym(lib, FORWARD_REPORT_SYMBOL);
    assert_non_null(report);
    forward_counts c;
    report(&c);
    dlclose(lib);
    return c;
}

static tlog_log *forwarding_log(collected_errors *errors)
{
    tlog_config c = test_config(errors);
    c.flags |= FORWARD_FLAG;
    return make_log(&c);
}

static uint64_t subscribers(tlog_log *log)
{
    tlog_stats s = {.size = sizeof s};
    assert_int_equal(tlog_get_stats(log, &s), TLOG_OK);
    return s.subscribers;
}

/* With the tool, forwarding is one subscriber of the log. */
static void forwarding_to_a_tool_subscribes(void **state)
{
    (void)state;
    tlog_log *log = forwarding_log(NULL);
    assert_int_equal(subscribers(log), 1);
    tlog_destroy(log);
}

static void scopes_become_nested_ranges(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_log *log = forwarding_log(&errors);
    forward_counts before = seen();
    begin_at(log, "Frame", 0);
    begin_at(log, "Solve", 1);
    begin_at(log, "Step", 2);
    end_at(log, "Step", 3);
    end_at(log, "Solve", 4);
    end_at(log, "Frame", 5);
    forward_counts after = seen();

    assert_int_equal(errors.count, 0);
    assert_true(after.timerlog_domain);
    assert_int_equal(after.pushes - before.pushes, 3);
    assert_int_equal(after.pops - before.pops, 3);
    assert_int_equal(after.unbalanced_pops, 0);
    assert_int_equal(after.other_domain_calls, 0);
    assert_int_equal(after.not_text, 0);
    assert_true(after.max_depth >= 3);
    assert_string_equal(after.name[before.names], "Frame");
    assert_string_equal(after.name[before.names + 1], "Solve");
    assert_string_equal(after.name[before.names + 2], "Step");
    tlog_destroy(log);
}

static void repaired_scopes_pop_their_ranges(void **state)
{
    (void)state;
    tlog_log *log = forwarding_log(NULL);
    forward_counts before = seen();
    begin_at(log, "Frame", 0);
    begin_at(log, "Left open", 1);
    begin_at(log, "Also open", 1);
    end_at(log, "Frame", 2);
    forward_counts after = seen();

    assert_int_equal(after.pushes - before.pushes, 3);
    assert_int_equal(after.pops - before.pops, 3);
    assert_int_equal(after.unbalanced_pops, 0);
    tlog_destroy(log);
}

#define THREADS 4
#define FRAMES 500

static void *record_frames(void *arg)
{
    tlog_log *log = arg;
    static const tlog_site frame = {"Frame", __FILE__, "record_frames", __LINE__, 1};
    static const tlog_site work = {"Work", __FILE__, "record_frames", __LINE__, 1};
    static const tlog_site inner = {"Inner", __FILE__, "record_frames", __LINE__, 1};
    for (int i = 0; i < FRAMES; i++) {
        tlog_log_begin(log, &frame);
        tlog_log_begin(log, &work);
        tlog_log_begin(log, &inner);
        tlog_log_end(log, &inner);
        tlog_log_end(log, &work);
        tlog_log_end(log, &frame);
    }
    return NULL;
}

static void ranges_balance_on_every_thread(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV | FORWARD_FLAG};
    tlog_log *log = make_log(&c);
    forward_counts before = seen();
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, record_frames, log), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    forward_counts after = seen();

    assert_int_equal(after.pushes - before.pushes, THREADS * FRAMES * 3);
    assert_int_equal(after.pops - before.pops, THREADS * FRAMES * 3);
    assert_int_equal(after.unbalanced_pops, 0);
    tlog_destroy(log);
}

static void environment_switches_forwarding(void **state)
{
    (void)state;
    tlog_config asked = {.size = sizeof asked, .flags = FORWARD_FLAG};
    tlog_config plain = {.size = sizeof plain};
    tlog_log *log;

    setenv(FORWARD_SWITCH, "0", 1);
    assert_int_equal(tlog_create(&asked, &log), TLOG_OK);
    forward_counts before = seen();
    begin_at(log, "Off by the environment", 0);
    end_at(log, "Off by the environment", 1);
    assert_int_equal(seen().pushes, before.pushes);
    tlog_destroy(log);

    setenv(FORWARD_SWITCH, "1", 1);
    assert_int_equal(tlog_create(&plain, &log), TLOG_OK);
    begin_at(log, "On by the environment", 0);
    end_at(log, "On by the environment", 1);
    assert_int_equal(seen().pushes, before.pushes + 1);
    tlog_destroy(log);
    unsetenv(FORWARD_SWITCH);
}

static void logs_that_do_not_ask_forward_nothing(void **state)
{
    (void)state;
    tlog_log *forwarding = forwarding_log(NULL);   /* loads the tool */
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    forward_counts before = seen();
    begin_at(log, "Not forwarded", 0);
    end_at(log, "Not forwarded", 1);
    assert_int_equal(seen().pushes, before.pushes);
    tlog_destroy(log);
    tlog_destroy(forwarding);
}

/* Without the tool (or without forwarding in this build), asking for it
 * costs nothing but a message, and scopes are recorded as usual. */
static void forwarding_without_the_tool_keeps_recording(void **state)
{
    (void)state;
    bool unavailable = !FORWARD_BUILT;
    const char *named = NULL;
#ifdef FORWARD_ROCTX
    named = tool_path();
    if (!named && (dlopen("libroctx64.so.4", RTLD_NOW) || dlopen("libroctx64.so", RTLD_NOW)))
        skip();   /* ROCm is installed here: the library is not missing */
    unavailable = true;
#endif
    collected_errors errors = {0};
    tlog_log *log = forwarding_log(&errors);
    begin_at(log, "Frame", 0);
    begin_at(log, "Step", 1);
    end_at(log, "Step", 2);
    end_at(log, "Frame", 3);
    tlog_frame *f = tlog_frame_latest(log);
    assert_non_null(f);
    assert_non_null(child_named(tlog_frame_root(f), "Step"));
    tlog_frame_release(f);
    /* Without a tool, nothing listens: the scopes cost what they cost
     * without forwarding. */
    assert_int_equal(subscribers(log), 0);
    if (unavailable) {
        assert_int_equal(errors.count, 1);
        assert_int_equal(errors.codes[0], TLOG_ENODEVICE);
        assert_non_null(strstr(errors.last, "scopes are recorded, not forwarded"));
        if (named) {   /* the library named is said, with the loader's reason */
            assert_non_null(strstr(errors.last, named));
            assert_non_null(strstr(errors.last, "No such file or directory"));
        }
    } else {
        assert_int_equal(errors.count, 0);
    }
    tlog_destroy(log);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest with_tool[] = {
        cmocka_unit_test(scopes_become_nested_ranges),
        cmocka_unit_test(repaired_scopes_pop_their_ranges),
        cmocka_unit_test(ranges_balance_on_every_thread),
        cmocka_unit_test(environment_switches_forwarding),
        cmocka_unit_test(logs_that_do_not_ask_forward_nothing),
        cmocka_unit_test(forwarding_to_a_tool_subscribes),
    };
    const struct CMUnitTest without_tool[] = {
        cmocka_unit_test(forwarding_without_the_tool_keeps_recording),
    };
    unsetenv(FORWARD_SWITCH);
    if (argc > 1 && strcmp(argv[1], "with-tool") == 0)
        return cmocka_run_group_tests(with_tool, NULL, NULL);
    if (!tool_path())
        unsetenv(FORWARD_TOOL_ENV);   /* set but empty: no tool at all */
    return cmocka_run_group_tests(without_tool, NULL, NULL);
}
