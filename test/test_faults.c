/* Faults met while a log is made: no hang, no silent loss. Each report
 * reaches the error callback once, with no library lock held, and a stream
 * that cannot be had says why and answers TLOG_EIO. Runs in its own
 * process: the first test configures the default log. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static collected_errors default_errors;
static int stats_calls;

/* Calls the library from inside the callback, as the header allows. */
static void report_and_call_back(void *user, const tlog_error *e)
{
    collect_error(user, e);
    tlog_stats s = {.size = sizeof s};
    stats_calls += tlog_get_stats(NULL, &s) == TLOG_OK;
}

/* The default log, made by the first scope, cannot write its stream: the
 * report comes once, and the callback may call the library. */
static void callback_of_the_default_log_may_call_the_library(void **state)
{
    (void)state;
    setenv("TIMERLOG_OUTPUT", "/dev/full", 1);
    tlog_config c = {.size = sizeof c, .clock = test_clock, .on_error = report_and_call_back,
                     .error_user = &default_errors};
    assert_int_equal(tlog_default_config(&c), TLOG_OK);
    static const tlog_site frame = {"Frame", __FILE__, __func__, __LINE__, TLOG_LEVEL_COARSE};
    tlog_begin(&frame);   /* makes the default log: hung here before */
    tlog_end(&frame);
    unsetenv("TIMERLOG_OUTPUT");
    assert_int_equal(default_errors.count, 1);
    assert_int_equal(count_code(&default_errors, TLOG_EIO), 1);
    assert_non_null(strstr(default_errors.last, "/dev/full"));
    assert_non_null(strstr(default_errors.last, "No space left on device"));
    assert_int_equal(stats_calls, 1);
    assert_int_equal(tlog_stream_flush(NULL), TLOG_EIO);
}

static char dir[] = "/tmp/timerlog-faults-XXXXXX";

static const char *in_dir(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* A log streaming to `path`, the environment applying. */
static tlog_log *streaming_log(collected_errors *errors, const char *path, size_t buffer)
{
    tlog_config c = {.size = sizeof c, .clock = test_clock, .on_error = collect_error,
                     .error_user = errors, .stream_path = path, .stream_buffer = buffer};
    tlog_log *log = NULL;
    assert_int_equal(tlog_create(&c, &log), TLOG_OK);
    return log;
}

/* Sizes that strtoull would wrap or that no buffer can have are refused,
 * said, and the default size streams. */
static void bad_buffer_sizes_are_reported_and_the_default_used(void **state)
{
    (void)state;
    const char *bad[] = {"-1", "99999999999999999999", "1000G", " 5", "12Q", "2G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        collected_errors errors = {0};
        setenv("TIMERLOG_BUFSIZE", bad[i], 1);
        tlog_log *log = streaming_log(&errors, in_dir("size.tlog"), 0);
        unsetenv("TIMERLOG_BUFSIZE");
        assert_int_equal(count_code(&errors, TLOG_EINVAL), 1);
        assert_non_null(strstr(errors.last, "TIMERLOG_BUFSIZE"));
        begin_at(log, "Frame", 0);
        end_at(log, "Frame", 1);
        assert_int_equal(tlog_stream_flush(log), TLOG_OK);
        tlog_destroy(log);
    }
}

/* A clock or a forwarding switch set to none of its values is said and
 * ignored: the log is made as if it were unset. */
static void bad_choices_in_the_environment_are_reported(void **state)
{
    (void)state;
    const char *vars[][3] = {{"TIMERLOG_CLOCK", "bogus", "is not \"monotonic\""},
                             {"TIMERLOG_NVTX", "yes", "is not 1 or 0; ignored"},
                             {"TIMERLOG_ROCTX", "2", "is not 1 or 0; ignored"}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        collected_errors errors = {0};
        tlog_config c = {.size = sizeof c, .on_error = collect_error, .error_user = &errors};
        setenv(vars[i][0], vars[i][1], 1);
        tlog_log *log = make_log(&c);
        unsetenv(vars[i][0]);
        assert_int_equal(errors.count, 1);
        assert_int_equal(errors.codes[0], TLOG_EINVAL);
        char said[64];
        snprintf(said, sizeof said, "%s=%s %s", vars[i][0], vars[i][1], vars[i][2]);
        assert_non_null(strstr(errors.last, said));
        tlog_log *unset = make_log(&c);   /* as if the variable were not there */
        assert_string_equal(tlog_clock_name(log), tlog_clock_name(unset));
        tlog_destroy(unset);
        tlog_destroy(log);
    }
}

/* A buffer the process cannot have: said (TLOG_ENOMEM), the stream's
 * frames counted as not streamed, tlog_stream_flush answers TLOG_EIO. */
static void stream_without_memory_is_reported(void **state)
{
    (void)state;
    collected_errors errors = {0};
    tlog_log *log = streaming_log(&errors, in_dir("huge.tlog"), SIZE_MAX / 2);
    assert_int_equal(count_code(&errors, TLOG_ENOMEM), 1);
    assert_non_null(strstr(errors.last, "no memory for the stream"));
    begin_at(log, "Frame", 0);
    end_at(log, "Frame", 1);
    assert_int_equal(tlog_stream_flush(log), TLOG_EIO);
    tlog_stats s = stats_of(log);
    assert_int_equal(s.frames_not_streamed, 1);
    tlog_destroy(log);
}

/* A FIFO that nobody reads fails at once rather than hold the log. */
static void fifo_with_no_reader_is_reported_not_waited_for(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(in_dir("fifo"), 0600), 0);
    collected_errors errors = {0};
    tlog_log *log = streaming_log(&errors, in_dir("fifo"), 0);
    assert_int_equal(count_code(&errors, TLOG_EIO), 1);
    assert_non_null(strstr(errors.last, "a FIFO with no reader"));
    assert_int_equal(tlog_stream_flush(log), TLOG_EIO);
    tlog_destroy(log);
    unlink(in_dir("fifo"));
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(callback_of_the_default_log_may_call_the_library),
        cmocka_unit_test(bad_buffer_sizes_are_reported_and_the_default_used),
        cmocka_unit_test(stream_without_memory_is_reported),
        cmocka_unit_test(bad_choices_in_the_environment_are_reported),
        cmocka_unit_test(fifo_with_no_reader_is_reported_not_waited_for),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(in_dir("size.tlog"));
    unlink(in_dir("huge.tlog"));
    rmdir(dir);
    return rc;
}
