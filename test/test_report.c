/*
 * `timerlog report` without a browser (test/browser checks what the page
 * shows): the page is whole and self-contained (its markers filled, no
 * reference to anything outside it), a title cannot end the data's
 * <script>, the frames kept whole are --samples besides the latest and
 * the hitches (bounded by --max-hitches), device rows carry their queue,
 * the statistics are those of `timerlog stats --json`, and bad arguments,
 * files and outputs give clear messages and the usual exit status. The
 * command runs in this process (timerlog_main).
 */
#include <stdbool.h>
#include <unistd.h>

#include "cli.h"
#include "device_fixture.h"

static char dir[256];
static char stream[300];

static int write_stream(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/timerlog-report-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(stream, sizeof stream, "%s/run.tlog", dir);
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.stream_path = stream;
    tlog_log *log = make_log(&c);
    tlog_thread_name("Main");
    double t = 0;
    /* 40 frames of 3 ms; frames 10 and 30 take 23 ms. */
    for (int k = 0; k < 40; k++) {
        begin_at(log, "Frame", t);
        begin_at(log, "Update", t + 0.1);
        end_at(log, "Update", t + 1.1 + (k % 20 == 10 ? 20 : 0));
        begin_at(log, "</script><b>Draw", t + 1.2 + (k % 20 == 10 ? 20 : 0));
        end_at(log, "</script><b>Draw", t + 2.9 + (k % 20 == 10 ? 20 : 0));
        end_at(log, "Frame", t + 3 + (k % 20 == 10 ? 20 : 0));
        t += 30;
    }
    tlog_destroy(log);
    return errors.count == 0 ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

typedef struct result {
    int status;
    char *out, *err;
} result;

/* `timerlog ARGS...`, ended by NULL. */
static result run(const char *first, ...)
{
    char *argv[32] = {"timerlog", (char *)first};
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *a; argc < 31 && (a = va_arg(ap, const char *)) != NULL;)
        argv[argc++] = (char *)a;
    va_end(ap);
    FILE *out = tmpfile(), *err = tmpfile();
    assert_non_null(out);
    assert_non_null(err);
    result r = {timerlog_main(argc, argv, out, err), NULL, NULL};
    r.out = read_back(out);
    r.err = read_back(err);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

static size_t occurrences(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* The frames kept whole, each written as {"g":G,"i":I,...}. */
static size_t wholes(const char *page)
{
    return occurrences(page, "{\"g\":0,\"i\":");
}

static void page_is_whole_and_self_contained(void **state)
{
    (void)state;
    result r = run("report", stream, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_true(strncmp(r.out, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(r.out, "</html>\n"));
    /* Every marker filled: the styles, the data and the code. */
    assert_null(strstr(r.out, "/*@CSS@*/"));
    assert_null(strstr(r.out, "@DATA@"));
    assert_null(strstr(r.out, "/*@JS@*/"));
    assert_non_null(strstr(r.out, "prefers-color-scheme: dark"));
    assert_non_null(strstr(r.out, "\"groups\":["));
    assert_non_null(strstr(r.out, "performance.mark(\"report-painted\")"));
    /* Nothing to fetch: no source, link or URL to another place. */
    assert_null(strstr(r.out, "src="));
    assert_null(strstr(r.out, "<link"));
    /* The one URL: SVG's namespace, a name that is never fetched. */
    assert_int_equal(occurrences(r.out, "http:"),
                     occurrences(r.out, "\"http://www.w3.org/2000/svg\""));
    assert_null(strstr(r.out, "https:"));
    assert_non_null(strstr(r.out, "default-src 'none'"));
    /* The title with "</script>" stays inside the data: the only ends of
     * scripts are those of the data and of the code. */
    assert_int_equal(occurrences(r.out, "</script>"), 2);
    assert_non_null(strstr(r.out, "\\u003c/script>\\u003cb>Draw"));
    result_free(&r);
}

static void frames_kept_whole_are_bounded(void **state)
{
    (void)state;
    /* No hitch, no sample: the latest frame only. */
    result r = run("report", "--hitch", "1000", "--samples", "0", stream, NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(wholes(r.out), 1);
    assert_non_null(strstr(r.out, "{\"g\":0,\"i\":39,"));
    result_free(&r);
    /* The two hitches (over 10 ms) and the latest. */
    r = run("report", "--hitch", "10", "--samples", "0", stream, NULL);
    assert_int_equal(wholes(r.out), 3);
    assert_non_null(strstr(r.out, "\"hitches\":[10,30]"));
    result_free(&r);
    /* Every frame a hitch, three kept: the last three. */
    r = run("report", "--hitch", "0.001", "--max-hitches", "3", "--samples", "0", stream, NULL);
    assert_int_equal(wholes(r.out), 3);
    assert_non_null(strstr(r.out, "{\"g\":0,\"i\":37,"));
    result_free(&r);
    /* Samples: 8 besides the latest, spread over the run from its start. */
    r = run("report", "--hitch", "1000", "--samples", "8", stream, NULL);
    assert_int_equal(wholes(r.out), 9);
    assert_non_null(strstr(r.out, "{\"g\":0,\"i\":0,"));
    assert_non_null(strstr(r.out, "{\"g\":0,\"i\":20,"));
    result_free(&r);
    /* Every frame asked for: all 40, the latest once. */
    r = run("report", "--hitch", "1000", "--samples", "100", stream, NULL);
    assert_int_equal(wholes(r.out), 40);
    result_free(&r);
    /* Besides the two hitches and the latest, still 8. */
    r = run("report", "--hitch", "10", "--samples", "8", stream, NULL);
    assert_int_equal(wholes(r.out), 11);
    result_free(&r);
}

static void statistics_are_those_of_stats(void **state)
{
    (void)state;
    result page = run("report", "--hitch", "10", stream, NULL);
    result stats = run("stats", "--json", "--hitch", "10", stream, NULL);
    assert_int_equal(stats.status, 0);
    /* The stats JSON, with '<' escaped as the page escapes it. */
    size_t n = strlen(stats.out);
    char *escaped = malloc(6 * n + 1), *e = escaped;
    assert_non_null(escaped);
    for (const char *p = stats.out; *p; p++)
        e += *p == '<' ? sprintf(e, "\\u003c") : sprintf(e, "%c", *p);
    while (e > escaped && e[-1] == '\n')
        *--e = '\0';
    assert_non_null(strstr(page.out, escaped));
    free(escaped);
    result_free(&page);
    result_free(&stats);
}

static void options_may_follow_the_files(void **state)
{
    (void)state;
    char out[320];
    snprintf(out, sizeof out, "%s/page.html", dir);
    result r = run("report", stream, "-o", out, NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    assert_int_equal(access(out, R_OK), 0);
    result_free(&r);
}

static void bad_arguments_files_and_outputs(void **state)
{
    (void)state;
    result r = run("report", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no FILE given"));
    result_free(&r);
    r = run("report", "--samples", "5000", stream, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--samples takes a number from 0 to 4096, not \"5000\""));
    result_free(&r);
    r = run("report", "--colour", stream, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "unknown option --colour"));
    result_free(&r);
    r = run("report", "--hitch", "2e13", stream, NULL);   /* past 64 bits of ns */
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--hitch takes a number of milliseconds, not \"2e13\""));
    result_free(&r);
    r = run("report", stream, "-o", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "-o takes the path to write to, and none is given"));
    result_free(&r);
    r = run("report", "/nonexistent/run.tlog", NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "/nonexistent/run.tlog"));
    assert_string_equal(r.out, "");
    result_free(&r);
    r = run("report", stream, "-o", "/dev/full", NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "cannot write /dev/full"));
    result_free(&r);
    size_t n;
    char *was = file_bytes(stream, &n);
    r = run("report", stream, "-o", stream, NULL);   /* the recording is kept */
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "names the input"));
    result_free(&r);
    r = run("report", "--base", stream, "/nonexistent/run.tlog", "-o", stream, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "names the input"));
    result_free(&r);
    assert_file_holds(stream, was, n);
    r = run("report", "--thread", "Loader", stream, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "no frame selected"));
    result_free(&r);
    r = run("report", "--help", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: timerlog report"));
    result_free(&r);
}

static void base_run_adds_the_comparison(void **state)
{
    (void)state;
    result r = run("report", "--base", stream, stream, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"diff\":{\"base\":{\"files\":["));
    result_free(&r);
    r = run("report", "--base", "/nonexistent/base.tlog", stream, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "the comparison with the base run is left out"));
    assert_non_null(strstr(r.out, "\"diff\":null"));
    result_free(&r);
}

/* A fixture streaming to `name` in the test's folder, whose path it puts
 * in `path`. */
static sim_fixture *streaming_to(const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    return sim_fixture_make(&(sim_options){.stream_path = path});
}

/* A device row unresolved in one frame only: the page says which frame
 * (a row's flags are those of any frame), for frames it shows from their
 * totals. */
static void unresolved_rows_are_told_frame_by_frame(void **state)
{
    (void)state;
    char path[400];
    sim_fixture *fx = streaming_to("unresolved.tlog", path, sizeof path);
    for (int k = 0; k < 3; k++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Kernel", 1.0);
        sim_at(fx, sim_ms(fx) + 1.0);
        if (k == 1)
            tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_QUERY_ERROR, 1);
        sync_until(fx, "Sync", sim_ms(fx) + 0.5);
        host_end(fx, "Frame");
    }
    sim_fixture_free(fx);   /* ends the file */
    char page[500];
    snprintf(page, sizeof page, "%s/unresolved.html", dir);
    result r = run("report", "--samples", "0", path, "-o", page, NULL);
    assert_int_equal(r.status, 0);
    result_free(&r);
    FILE *fp = fopen(page, "r");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);   /* read_back reads up to here */
    char *text = read_back(fp);
    const char *u = strstr(text, "\"unresolved\":[");
    assert_non_null(u);
    unsigned frame = 99, row = 99;
    char end = 0;
    assert_int_equal(sscanf(u, "\"unresolved\":[%u,%u%c", &frame, &row, &end), 3);
    assert_int_equal(frame, 1);   /* the second frame only */
    assert_int_equal(end, ']');
    free(text);
}

/* The queue a row of the page's data names: the last number of its entry
 * [parent, name, kind, flags, device, launcher, queue]. */
static long row_queue(const char *text, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, ",\"%s\",", name);
    const char *at = strstr(text, key);
    assert_non_null(at);
    const char *end = strchr(at, ']');
    assert_non_null(end);
    while (end[-1] != ',')
        end--;
    return strtol(end, NULL, 10);
}

/* Frames shown from their rows' totals have each device row's queues from
 * the row: named when every frame ran it on the same ones (an array when
 * several), said to differ when frames did not agree. */
static void device_rows_carry_their_queue(void **state)
{
    (void)state;
    char path[400];
    sim_fixture *fx = streaming_to("queues.tlog", path, sizeof path);
    for (int k = 0; k < 3; k++) {
        host_begin(fx, "Frame");
        kernel(fx, fx->q1, "Steady", 1.0);
        kernel(fx, k == 1 ? fx->q2 : fx->q1, "Moving", 1.0);
        kernel(fx, fx->q1, "Both", 1.0);
        kernel(fx, fx->q2, "Both", 1.0);
        kernel(fx, fx->q1, "Spreading", 1.0);
        if (k == 2)
            kernel(fx, fx->q2, "Spreading", 1.0);
        sync_until(fx, "Sync", sim_ms(fx) + 6.0);   /* after all of q1's */
        host_end(fx, "Frame");
    }
    sim_fixture_free(fx);
    result r = run("report", "--samples", "0", path, NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(row_queue(r.out, "Steady"), 1);
    assert_int_equal(row_queue(r.out, "Moving"), -1);
    assert_int_equal(row_queue(r.out, "Spreading"), -1);
    const char *both = strstr(r.out, ",\"Both\",");
    assert_non_null(both);
    const char *queues = strstr(both, ",[1,2]]");
    assert_non_null(queues);
    assert_ptr_equal(strchr(both, ']'), queues + 5);   /* in Both's entry */
    assert_int_equal(row_queue(r.out, "Sync"), 0);   /* a host row */
    result_free(&r);
}

/* A device row whose path a frame first had as a host row (an execution
 * row of the same title): frames shown from totals still name its device
 * and queue. */
static void a_row_first_met_on_the_host_names_its_device(void **state)
{
    (void)state;
    char path[400];
    sim_fixture *fx = streaming_to("host-first.tlog", path, sizeof path);
    for (int k = 0; k < 3; k++) {
        host_begin(fx, "Frame");
        if (k == 0) {
            host_begin(fx, "Sync");
            tlog_ticks from = tlog_now(fx->log);
            sim_at(fx, sim_ms(fx) + 1.0);
            assert_int_equal(tlog_insert(fx->log, site_named("Work"), TLOG_KIND_EXECUTION, from,
                                         tlog_now(fx->log)),
                             TLOG_OK);
            host_end(fx, "Sync");
        } else {
            kernel(fx, fx->q1, "Work", 1.0);
            sync_until(fx, "Sync", sim_ms(fx) + 3.0);
        }
        host_end(fx, "Frame");
    }
    sim_fixture_free(fx);
    result r = run("report", "--samples", "0", path, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, ",\"Work\",\"E\",2,\"sim\","));
    assert_int_equal(row_queue(r.out, "Work"), 1);
    result_free(&r);
}

/* A frame whose "Work" row runs a kernel on each of the two queues, both
 * done by its sync scope. */
static void frame_of_work_on_both_queues(sim_fixture *fx)
{
    host_begin(fx, "Frame");
    kernel(fx, fx->q1, "Work", 1.0);
    kernel(fx, fx->q2, "Work", 1.0);
    sync_until(fx, "Sync", sim_ms(fx) + 3.0);
    host_end(fx, "Frame");
}

/* A row whose intervals ran on two devices (the simulated device names
 * every device alike: second_device.py moves the intervals on the second
 * queue to a device of another name): frames shown from totals say so
 * (-2), not that its queues differ by frame. */
static void a_row_on_two_devices_says_so(void **state)
{
    (void)state;
    char path[400], two[420], cmd[1400];
    sim_fixture *fx = streaming_to("devices.tlog", path, sizeof path);
    for (int k = 0; k < 3; k++)
        frame_of_work_on_both_queues(fx);
    sim_fixture_free(fx);
    snprintf(two, sizeof two, "%s/devices-two.tlog", dir);
    snprintf(cmd, sizeof cmd, "python3 %s %s %s gpu", SECOND_DEVICE, path, two);
    assert_int_equal(system(cmd), 0);
    result r = run("report", "--samples", "0", two, NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(row_queue(r.out, "Work"), -2);
    result_free(&r);
    r = run("report", "--samples", "0", path, NULL);   /* one device: its two queues */
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, ",\"Work\",\"E\",2,\"sim\",0,[1,2]]"));
    result_free(&r);
}

/* A row whose kernels ran on two queues in one frame: the timeline's
 * instances carry the queue each ran on, not the row's. */
static void timeline_instances_carry_their_own_queue(void **state)
{
    (void)state;
    char path[400];
    sim_fixture *fx = streaming_to("two-queues.tlog", path, sizeof path);
    frame_of_work_on_both_queues(fx);
    sim_fixture_free(fx);
    result r = run("report", path, NULL);
    assert_int_equal(r.status, 0);
    const char *x = strstr(r.out, "\"x\":[");
    assert_non_null(x);
    const char *end = strchr(x, '}');
    assert_non_null(end);
    const char *two = strstr(x, ",2,\"sim\"]");   /* an instance on queue 2 */
    assert_true(two && two < end);
    const char *one = strstr(x, ",1,\"sim\"]");
    assert_true(one && one < end);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(page_is_whole_and_self_contained),
        cmocka_unit_test(frames_kept_whole_are_bounded),
        cmocka_unit_test(statistics_are_those_of_stats),
        cmocka_unit_test(options_may_follow_the_files),
        cmocka_unit_test(bad_arguments_files_and_outputs),
        cmocka_unit_test(base_run_adds_the_comparison),
        cmocka_unit_test(unresolved_rows_are_told_frame_by_frame),
        cmocka_unit_test(device_rows_carry_their_queue),
        cmocka_unit_test(a_row_first_met_on_the_host_names_its_device),
        cmocka_unit_test(a_row_on_two_devices_says_so),
        cmocka_unit_test(timeline_instances_carry_their_own_queue),
    };
    return cmocka_run_group_tests(tests, write_stream, remove_dir);
}
