/* The counter's rate needs a baseline from the library's load. A conversion
 * made at once in a new process (a subscriber in frame 0, say) must not wait
 * for one on the recording thread: it never sleeps. The test program defines
 * the sleeping calls itself, so that the library's calls land here and are
 * counted; and the early rate must still be right to 1%. Run first thing in
 * main, in a process of its own. */
#include <time.h>
#include <unistd.h>

#include "common.h"

static int sleeps;

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    sleeps++;
    return clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem);
}

int usleep(useconds_t us)
{
    sleeps++;
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    return clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int sleeps_in_first_conversion;
static uint64_t early_ns;
static int64_t early_mono_ns;

static void first_conversion_does_not_sleep(void **state)
{
    (void)state;
    print_message("clock %s\n", tlog_clock_name(NULL));
    assert_int_equal(sleeps_in_first_conversion, 0);
}

/* A rate first measured over a baseline far under a millisecond does not
 * stick: a 2 ms interval converted later is within 1% of what
 * CLOCK_MONOTONIC saw. */
static void rate_after_an_early_conversion_is_right_to_a_percent(void **state)
{
    (void)state;
    double error = (double)early_ns / (double)early_mono_ns - 1.0;
    print_message("2 ms interval converted: %.3f%% off\n", error * 100);
    assert_true(error > -0.01 && error < 0.01);
}

int main(void)
{
    tlog_ticks a = tlog_now(NULL);
    int64_t m0 = mono_ns();
    tlog_ticks_to_ns(NULL, tlog_now(NULL) - a);   /* the process's first */
    sleeps_in_first_conversion = sleeps;
    /* Measures 2 ms without a conversion in between, then converts it. */
    while (mono_ns() - m0 < 2000000)
        ;
    tlog_ticks b = tlog_now(NULL);
    early_mono_ns = mono_ns() - m0;
    early_ns = tlog_ticks_to_ns(NULL, b - a);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_conversion_does_not_sleep),
        cmocka_unit_test(rate_after_an_early_conversion_is_right_to_a_percent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
