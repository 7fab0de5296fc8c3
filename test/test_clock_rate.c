/* Once the counter's rate is settled, resolving frames one after another
 * reads CLOCK_MONOTONIC seldom: the rate is measured again only once its
 * baseline has grown by a 64th, and a frame taken that is ready sets no
 * deadline. The rate still gets more precise as the process runs. The test
 * program defines clock_gettime itself, so that the library's calls land
 * here and are counted; its own reads go to the kernel directly. */
#define _GNU_SOURCE   /* syscall */
#include <math.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static _Atomic long library_reads;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    library_reads++;
    return (int)syscall(SYS_clock_gettime, id, ts);
}

static int64_t own_mono_ns(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

enum { FRAMES = 1000 };

static int64_t start_ns;   /* when main began */

static void small_frame(tlog_log *log)
{
    tlog_log_begin(log, site_named("Frame"));
    for (int i = 0; i < 3; i++) {
        tlog_log_begin(log, site_named("Part"));
        tlog_log_end(log, site_named("Part"));
    }
    tlog_log_end(log, site_named("Frame"));
    tlog_frame *f = tlog_frame_pop(log);
    assert_non_null(f);
    tlog_frame_release(f);
}

static void frames_in_a_row_seldom_read_the_clock(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = 4};
    tlog_log *log = make_log(&c);
    if (strcmp(tlog_clock_name(log), "tsc") != 0) {
        tlog_destroy(log);
        skip();   /* a clock without a rate to measure */
    }
    /* A baseline of 64 ms: a measurement is then due once a millisecond
     * at most, and a frame takes a microsecond or so. */
    while (own_mono_ns() - start_ns < 64000000)
        ;
    small_frame(log);   /* settles the rate */
    long before = library_reads;
    int64_t from = own_mono_ns() - start_ns;
    for (int k = 0; k < FRAMES; k++)
        small_frame(log);
    int64_t to = own_mono_ns() - start_ns;
    long reads = library_reads - before;
    /* Measurements due while the baseline grew from `from` to `to`, a
     * 64th each time, and one on either side; five reads each. */
    double due = 64 * log1p((double)(to - from) / (double)from) + 2;
    print_message("%d frames in %.2f ms: %ld reads of the clock, at most %.0f due\n", FRAMES,
                  (to - from) / 1e6, reads, 5 * due);
    if (5 * due >= FRAMES)
        skip();   /* frames this slow tell nothing apart */
    assert_true(reads <= 5 * due);
    /* Once the baseline has grown by more than a 64th, the next resolve
     * measures the rate again. */
    while (own_mono_ns() - start_ns < to + to / 32)
        ;
    before = library_reads;
    small_frame(log);
    assert_true(library_reads - before >= 5);
    tlog_destroy(log);
}

/* The rate the frames left converts the whole run to within a thousandth
 * of what CLOCK_MONOTONIC saw (the kernel may slew its clock by up to half
 * that). */
static void the_rate_stays_right(void **state)
{
    (void)state;
    tlog_ticks a = tlog_now(NULL);
    int64_t m0 = own_mono_ns();
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log = make_log(&c);
    while (own_mono_ns() - m0 < 20000000)
        small_frame(log);
    tlog_ticks b = tlog_now(NULL);
    int64_t mono = own_mono_ns() - m0;
    double error = (double)tlog_ticks_to_ns(NULL, b - a) / (double)mono - 1.0;
    print_message("20 ms converted: %.4f%% off\n", error * 100);
    assert_true(fabs(error) < 1e-3);
    tlog_destroy(log);
}

int main(void)
{
    start_ns = own_mono_ns();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_in_a_row_seldom_read_the_clock),
        cmocka_unit_test(the_rate_stays_right),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
