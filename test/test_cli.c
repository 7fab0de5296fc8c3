/* The command-line reader over one stream of two threads' frames: the main
 * loop's "Frame" frames and a loader thread's "Load chunk" frames stay apart
 * in `timerlog dump --aggregate`, and --thread / --root pick them out. */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum { FRAMES = 5, CHUNKS = 3 };

static char dir[256];
static char path[512];
static char live_csv[512];   /* the statistics the recording log kept */

/* One frame: a root scope with two children, on the calling thread's own
 * simulated clock. */
static void record_frame(tlog_log *log, const char *root, const char *a, const char *b,
                         double t)
{
    begin_at(log, root, t);
    begin_at(log, a, t + 1);
    end_at(log, a, t + 3);
    begin_at(log, b, t + 3);
    end_at(log, b, t + 4);
    end_at(log, root, t + 5);
}

static void *load_chunks(void *arg)
{
    tlog_log *log = arg;
    tlog_thread_name("Loader");
    for (int k = 0; k < CHUNKS; k++)
        record_frame(log, "Load chunk", "Read", "Decode", 10.0 * k);
    return NULL;
}

/* The main thread's first frame comes before the loader starts, so that its
 * group is the first one seen; the rest run beside the loader. */
static int write_stream(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/timerlog-cli-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/run.tlog", dir);
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.stream_path = path;
    c.max_frames = 64;
    c.flags |= TLOG_CONFIG_STATS;
    tlog_log *log = make_log(&c);
    tlog_thread_name("Main");
    record_frame(log, "Frame", "Update", "Render", 0);
    pthread_t loader;
    if (pthread_create(&loader, NULL, load_chunks, log) != 0)
        return -1;
    for (int k = 1; k < FRAMES; k++)
        record_frame(log, "Frame", "Update", "Render", 10.0 * k);
    pthread_join(loader, NULL);
    snprintf(live_csv, sizeof live_csv, "%s/live.csv", dir);
    tlog_summary *live;
    FILE *fp = fopen(live_csv, "w");
    if (tlog_log_summary(log, &live) != TLOG_OK || !fp ||
        tlog_summary_export_csv(live, fp) != TLOG_OK || fclose(fp) != 0)
        return -1;
    tlog_summary_destroy(live);
    tlog_destroy(log);   /* ends the file */
    return errors.count == 0 ? 0 : -1;
}

static int remove_stream(void **state)
{
    (void)state;
    unlink(path);
    unlink(live_csv);
    /* What a test that failed half-way left. */
    static const char *const left[] = {"many.tlog", "page.html"};
    for (size_t k = 0; k < sizeof left / sizeof *left; k++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, left[k]);
        unlink(p);
    }
    return rmdir(dir);
}

/* Runs `timerlog ARGS`; returns its standard output and error as one
 * malloc'd string, and its exit status. */
/* What a shell command printed, and its exit status. */
static char *shell_output(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = 0, cap = 4096;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t got;
    while ((got = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            out = realloc(out, cap *= 2);
            assert_non_null(out);
        }
    }
    out[n] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

/* `timerlog ARGS`, its output and errors together. */
static char *cli_line(const char *args, int *status)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", TIMERLOG_CLI, args);
    return shell_output(cmd, status);
}

/* Runs `timerlog COMMAND ARGS` on the stream. */
static char *cli_command(const char *command, const char *args, int *status)
{
    char line[1800];
    snprintf(line, sizeof line, "%s %s '%s'", command, args, path);
    return cli_line(line, status);
}

static char *cli(const char *args, int *status)
{
    return cli_command("dump", args, status);
}

/* The line after `line`, or NULL at the end of the text. */
static const char *next_line(const char *line)
{
    const char *nl = strchr(line, '\n');
    return nl && nl[1] ? nl + 1 : NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Lines of `text` that begin with `prefix`. */
static int lines_starting(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *line = *text ? text : NULL; line; line = next_line(line))
        n += starts_with(line, prefix);
    return n;
}

/* Root rows ("> ..." lines) titled `title`, with or without a count. */
static int roots_titled(const char *text, const char *title)
{
    static const char kind[] = "| (C) ";
    size_t len = strlen(title);
    int n = 0;
    for (const char *line = *text ? text : NULL; line; line = next_line(line)) {
        const char *end = strchr(line, '\n'), *row = strstr(line, kind);
        if (line[0] != '>' || !row || (end && row > end))
            continue;
        row += strlen(kind);
        n += strncmp(row, title, len) == 0 &&
             (row[len] == '\n' || row[len] == ' ' || !row[len]);
    }
    return n;
}

/* Frames a selection should show, counted with the reader. */
static int frames_where(const char *thread, uint64_t first, uint64_t last)
{
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    int n = 0;
    while (tlog_reader_next(r, &f) == TLOG_OK) {
        tlog_frame_info info = {.size = sizeof info};
        tlog_frame_get_info(f, &info);
        n += strcmp(info.thread_name, thread) == 0 && info.serial >= first &&
             info.serial <= last;
        tlog_frame_release(f);
    }
    tlog_reader_close(r);
    return n;
}

/* The serial of the first frame run by `thread`. */
static uint64_t first_serial_of(const char *thread)
{
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    uint64_t serial = 0;
    while (!serial && tlog_reader_next(r, &f) == TLOG_OK) {
        tlog_frame_info info = {.size = sizeof info};
        tlog_frame_get_info(f, &info);
        if (strcmp(info.thread_name, thread) == 0)
            serial = info.serial;
        tlog_frame_release(f);
    }
    tlog_reader_close(r);
    assert_true(serial > 0);
    return serial;
}

static void aggregate_merges_each_thread_and_root_apart(void **state)
{
    (void)state;
    int status;
    char *out = cli("--aggregate", &status);
    assert_int_equal(status, 0);
    assert_int_equal(lines_starting(out, "# "), 2);
    const char *main_group = strstr(out, "# thread \"Main\", root \"Frame\": 5 frames\n");
    const char *loader_group =
        strstr(out, "\n\n# thread \"Loader\", root \"Load chunk\": 3 frames\n");
    assert_ptr_equal(main_group, out);
    assert_non_null(loader_group);
    assert_non_null(strstr(main_group, "| (C) Frame [x5]\n"));
    assert_non_null(strstr(loader_group, "| (C) Load chunk [x3]\n"));
    assert_int_equal(roots_titled(out, "Frame"), 1);
    assert_int_equal(roots_titled(out, "Load chunk"), 1);
    /* The loader's rows stay out of the main loop's tree. */
    char *main_only = strndup(main_group, (size_t)(loader_group - main_group));
    assert_null(strstr(main_only, "Read"));
    assert_non_null(strstr(main_only, "| (C) Update [x5]\n"));
    free(main_only);
    free(out);
}

static void thread_selects_that_threads_frames(void **state)
{
    (void)state;
    int status;
    char *out = cli("--thread Loader", &status);
    assert_int_equal(status, 0);
    assert_int_equal(lines_starting(out, "# "), CHUNKS);
    assert_int_equal(roots_titled(out, "Load chunk"), CHUNKS);
    assert_null(strstr(out, "thread \"Main\""));
    free(out);
    out = cli("--thread Main", &status);
    assert_int_equal(status, 0);
    assert_int_equal(lines_starting(out, "# "), FRAMES);
    assert_int_equal(roots_titled(out, "Frame"), FRAMES);
    free(out);
}

static void root_selects_frames_by_title(void **state)
{
    (void)state;
    int status;
    char *out = cli("--root 'Load chunk'", &status);
    assert_int_equal(status, 0);
    assert_int_equal(lines_starting(out, "# "), CHUNKS);
    assert_int_equal(roots_titled(out, "Load chunk"), CHUNKS);
    assert_int_equal(roots_titled(out, "Frame"), 0);
    free(out);
    out = cli("--root Frame", &status);
    assert_int_equal(status, 0);
    assert_int_equal(lines_starting(out, "# "), FRAMES);
    assert_int_equal(roots_titled(out, "Frame"), FRAMES);
    free(out);
}

static void selections_combine(void **state)
{
    (void)state;
    int status;
    char *out = cli("--root Frame --thread Main --aggregate", &status);
    assert_int_equal(status, 0);
    assert_true(starts_with(out, "# thread \"Main\", root \"Frame\": 5 frames\n"));
    assert_int_equal(lines_starting(out, "# "), 1);
    free(out);

    out = cli("--frames 1-4 --thread Main", &status);
    assert_int_equal(status, 0);
    assert_int_equal(lines_starting(out, "# "), frames_where("Main", 1, 4));
    free(out);

    /* One frame, printed bare, only when it is the named thread's. */
    char args[128];
    snprintf(args, sizeof args, "--frame %" PRIu64 " --thread Loader",
             first_serial_of("Loader"));
    out = cli(args, &status);
    assert_int_equal(status, 0);
    assert_int_equal(lines_starting(out, "# "), 0);
    assert_int_equal(roots_titled(out, "Load chunk"), 1);
    free(out);
    snprintf(args, sizeof args, "--frame %" PRIu64 " --thread Loader",
             first_serial_of("Main"));
    out = cli(args, &status);
    assert_int_equal(status, 1);
    assert_non_null(strstr(out, "no frame selected"));
    free(out);

    out = cli("--thread Main --root 'Load chunk'", &status);
    assert_int_equal(status, 1);
    free(out);
}

static void unknown_root_selects_nothing(void **state)
{
    (void)state;
    int status;
    char *out = cli("--root NoSuchTitle", &status);
    assert_int_equal(status, 1);
    assert_string_equal(out, "timerlog: no frame selected\n");
    free(out);
    out = cli("--aggregate --root NoSuchTitle", &status);
    assert_int_equal(status, 1);
    assert_string_equal(out, "timerlog: no frame selected\n");
    free(out);
}

/* Exports take the same selections: the JSON export holds one object per
 * frame, each opening with its serial. */
static void export_selects_by_thread_and_root(void **state)
{
    (void)state;
    int status;
    char *out = cli_command("export", "--json --thread Loader", &status);
    assert_int_equal(status, 0);
    int frames = 0;
    for (const char *p = out; (p = strstr(p, "{\"serial\":")) != NULL; p++)
        frames++;
    assert_int_equal(frames, CHUNKS);
    free(out);
    out = cli_command("export", "--csv --root Frame", &status);
    assert_int_equal(status, 0);
    assert_int_equal(lines_starting(out, "0,"), 3 * FRAMES);   /* Frame, Update, Render */
    free(out);
    out = cli_command("export", "--csv --root Nothing", &status);
    assert_int_equal(status, 1);
    assert_non_null(strstr(out, "no frame selected"));
    free(out);
}

/* Progress shows on standard error only when it is a terminal (here a
 * pseudo-terminal made by script(1)), and is erased when done. */
static void progress_only_on_a_terminal(void **state)
{
    (void)state;
    int status;
    char *out = cli("--aggregate", &status);   /* a pipe: no progress */
    assert_int_equal(status, 0);
    assert_null(strstr(out, "frames read"));
    free(out);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "script -qec \"%s dump --aggregate '%s' >/dev/null\" /dev/null",
             TIMERLOG_CLI, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char text[4096] = {0};
    size_t n = fread(text, 1, sizeof text - 1, p);
    int st = pclose(p);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        skip();   /* no script(1) here */
    text[n] = '\0';
    assert_non_null(strstr(text, "frames read"));
    assert_non_null(strstr(text, "\r\033[K"));
}

static void bad_values_are_usage_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "--thread ''", "--root ''", "--frames 5-2 --thread Main", "--frobnicate Main",
        "--thread",   /* takes the file for its value: no FILE left */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        int status;
        char *out = cli(bad[k], &status);
        assert_int_equal(status, 2);
        assert_non_null(strstr(out, "usage: timerlog dump"));
        free(out);
    }
    /* The value missing at the end of the line. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s dump --root >/dev/null 2>&1", TIMERLOG_CLI);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 2);
}

/* The first line of the output: the message, before any usage text. */
static char *first_line(const char *text)
{
    const char *nl = strchr(text, '\n');
    return strndup(text, nl ? (size_t)(nl - text) : strlen(text));
}

/* A directory is named as one, not taken for a damaged stream. */
static void directory_is_named_as_such(void **state)
{
    (void)state;
    static const char *const commands[] = {"dump", "info", "export --csv"};
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
        char args[600];
        snprintf(args, sizeof args, "%s '%s'", commands[k], dir);
        int status;
        char *out = cli_line(args, &status);
        assert_int_equal(status, 1);
        char *line = first_line(out);
        assert_non_null(strstr(line, dir));
        assert_non_null(strstr(line, "directory"));
        assert_null(strstr(out, "magic"));
        free(line);
        free(out);
    }
}

/* What `timerlog ARGS` prints when standard input comes from `feed` (a
 * shell redirection or pipe into it). */
static char *cli_fed(const char *feed, const char *args, int *status)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s %s 2>&1", feed, TIMERLOG_CLI, args);
    return shell_output(cmd, status);
}

/* `text` with every `from` replaced by `to`, malloc'd. */
static char *replaced(const char *text, const char *from, const char *to)
{
    size_t nfrom = strlen(from), nto = strlen(to), n = 0;
    for (const char *at = text; (at = strstr(at, from)) != NULL; at += nfrom)
        n++;
    char *out = malloc(strlen(text) + n * nto + 1), *o = out;
    assert_non_null(out);
    for (const char *at; (at = strstr(text, from)) != NULL; text = at + nfrom) {
        memcpy(o, text, (size_t)(at - text));
        o += at - text;
        memcpy(o, to, nto);
        o += nto;
    }
    strcpy(o, text);
    return out;
}

/* "-" reads standard input, a pipe or a file, as it would the file: the
 * same output, the input named "(standard input)" where the file's path
 * would be. */
static void dash_reads_standard_input(void **state)
{
    (void)state;
    static const char *const commands[] = {"dump --aggregate", "stats --csv", "export --csv",
                                           "dump --thread Loader"};
    char feed[600];
    snprintf(feed, sizeof feed, "cat '%s' |", path);
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
        int st_file, st_pipe;
        char *from_file = cli_command(commands[k], "", &st_file);
        char args[600];
        snprintf(args, sizeof args, "%s -", commands[k]);
        char *from_pipe = cli_fed(feed, args, &st_pipe);
        assert_int_equal(st_file, 0);
        assert_int_equal(st_pipe, 0);
        assert_true(strlen(from_file) > 100);
        char *named = replaced(from_file, path, "(standard input)");
        assert_string_equal(from_pipe, named);
        free(named);
        free(from_file);
        free(from_pipe);
    }
    snprintf(feed, sizeof feed, "< '%s'", path);
    int status;
    char *out = cli_fed(feed, "info -", &status);
    assert_int_equal(status, 0);
    assert_true(starts_with(out, "(standard input)\n"));
    assert_non_null(strstr(out, "  frames: 8\n"));
    free(out);
}

/* Standard input is read once and serves every "-": diff against itself
 * finds every row the same, and report, which reads its files twice (its
 * own pass and the comparison's), reads it whole both times. */
static void dash_named_twice_reads_the_same_stream(void **state)
{
    (void)state;
    char feed[600], args[700], page[600];
    snprintf(feed, sizeof feed, "cat '%s' |", path);
    int status;
    char *out = cli_fed(feed, "diff - -", &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "base  (standard input) (8 frames)"));
    assert_non_null(strstr(out, "new   (standard input) (8 frames)"));
    assert_non_null(strstr(out, "no row slower"));
    free(out);
    snprintf(page, sizeof page, "%s/page.html", dir);
    snprintf(args, sizeof args, "report --base - - -o '%s'", page);
    out = cli_fed(feed, args, &status);
    assert_int_equal(status, 0);
    assert_null(strstr(out, "left out"));
    free(out);
    FILE *f = fopen(page, "r");
    assert_non_null(f);
    char head[4096];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    assert_true(n > 1000);
    unlink(page);
}

/* Standard input that cannot be read is said as such, with the reason;
 * empty input is called empty. */
static void unreadable_standard_input_is_said(void **state)
{
    (void)state;
    char feed[600];
    snprintf(feed, sizeof feed, "< '%s'", dir);
    int status;
    char *out = cli_fed(feed, "info -", &status);
    assert_int_equal(status, 1);
    assert_true(starts_with(out, "timerlog: (standard input): cannot read: "));
    assert_non_null(strstr(out, "directory"));
    free(out);
    out = cli_fed("< /dev/null", "dump -", &status);
    assert_int_equal(status, 1);
    assert_true(starts_with(out, "timerlog: (standard input): empty"));
    free(out);
}

/* A thread of many_threads: a frame under its own name. */
typedef struct named_job {
    tlog_log *log;
    const char *name;
} named_job;

static void *run_named_job(void *arg)
{
    named_job *job = arg;
    tlog_thread_name(job->name);
    record_frame(job->log, "Job", "Read", "Write", 0);
    return NULL;
}

/* A stream of 20 threads, one after another, each with a frame: ten
 * named "Even" and "Odd" in turn, then ten "Loader". */
static void write_many_threads(const char *file)
{
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.stream_path = file;
    c.max_frames = 64;
    tlog_log *log = make_log(&c);
    for (int k = 0; k < 20; k++) {
        named_job job = {log, k >= 10 ? "Loader" : k % 2 ? "Odd" : "Even"};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, run_named_job, &job), 0);
        pthread_join(t, NULL);
    }
    tlog_destroy(log);
    assert_int_equal(errors.count, 0);
}

/* Past 16 threads, info lists each name once, in the order the file first
 * names it, with its threads' count and ids (a range when they follow each
 * other); --threads lists every thread. */
static void info_lists_many_threads_by_name(void **state)
{
    (void)state;
    char file[600], args[700];
    snprintf(file, sizeof file, "%s/many.tlog", dir);
    write_many_threads(file);
    snprintf(args, sizeof args, "info '%s'", file);
    int status;
    char *out = cli_line(args, &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "\n  threads: 20, under 3 names (--threads lists each)\n"));
    const char *even = strstr(out, "\n    Even: 5 threads, ids ");
    const char *odd = strstr(out, "\n    Odd: 5 threads, ids ");
    const char *loader = strstr(out, "\n    Loader: 10 threads, ids ");
    assert_true(even && odd && loader && even < odd && odd < loader);
    unsigned a, b, z;
    assert_int_equal(sscanf(even, "\n    Even: 5 threads, ids %u, %u, ..., %u", &a, &b, &z), 3);
    assert_true(b == a + 2 && z == a + 8);
    assert_int_equal(sscanf(loader, "\n    Loader: 10 threads, ids %u-%u", &a, &z), 2);
    assert_int_equal(z, a + 9);
    assert_int_equal(lines_starting(out, "    "), 3 + 3);   /* names, call sites */
    free(out);
    snprintf(args, sizeof args, "info --threads '%s'", file);
    out = cli_line(args, &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "\n  threads: 20\n"));
    int listed = 0;
    for (const char *line = out; line; line = next_line(line)) {
        unsigned id;
        char name[16];
        listed += sscanf(line, "    %u %15s", &id, name) == 2 &&
                  (strcmp(name, "Even") == 0 || strcmp(name, "Odd") == 0 ||
                   strcmp(name, "Loader") == 0);
    }
    assert_int_equal(listed, 20);
    free(out);
    unlink(file);
}

/* An empty file is called empty. */
static void empty_file_is_named_as_such(void **state)
{
    (void)state;
    char empty[600];
    snprintf(empty, sizeof empty, "%s/zero.tlog", dir);
    FILE *f = fopen(empty, "w");
    assert_non_null(f);
    fclose(f);
    char args[700];
    snprintf(args, sizeof args, "dump '%s'", empty);
    int status;
    char *out = cli_line(args, &status);
    unlink(empty);
    assert_int_equal(status, 1);
    char *line = first_line(out);
    assert_non_null(strstr(line, empty));
    assert_non_null(strstr(line + strlen("timerlog: ") + strlen(empty), "empty"));
    free(line);
    free(out);
}

/* An output that cannot be opened: its path and the reason. */
static void unwritable_output_names_path_and_reason(void **state)
{
    (void)state;
    struct {
        const char *where, *why;
    } bad[] = {{"missing/out.csv", "No such file or directory"}, {"", "Is a directory"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char out_path[600], args[700];
        snprintf(out_path, sizeof out_path, "%s/%s", dir, bad[k].where);
        snprintf(args, sizeof args, "--csv -o '%s'", out_path);
        int status;
        char *out = cli_command("export", args, &status);
        assert_int_equal(status, 1);
        char *line = first_line(out);
        assert_non_null(strstr(line, out_path));
        assert_non_null(strstr(line, bad[k].why));
        free(line);
        free(out);
    }
}

/* -o naming a file being read is refused before anything is read or
 * written: the recording stays as it was, however its path is spelt. */
static void output_over_an_input_is_refused(void **state)
{
    (void)state;
    size_t n;
    char *was = file_bytes(path, &n);
    const char *const commands[][2] = {{"export", "--csv"}, {"stats", "--json"}};
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
        char args[700];
        snprintf(args, sizeof args, "%s -o '%s/./run.tlog'", commands[k][1], dir);
        int status;
        char *out = cli_command(commands[k][0], args, &status);
        assert_int_equal(status, 2);
        assert_non_null(strstr(out, "names the input"));
        assert_non_null(strstr(out, path));
        free(out);
    }
    assert_file_holds(path, was, n);
}

static void *record_oddly_named(void *arg)
{
    tlog_thread_name("Bad\nname\x1b[31m");
    for (int k = 0; k < 3; k++)
        record_frame(arg, "Fr\x1b]0;ame", "Ste\rp", "Tab\tbed", 10.0 * k);
    return NULL;
}

/* Thread names and titles from a file are printed as one line each, their
 * control characters as spaces, in every header and listing as in rows:
 * a name cannot break the output's lines or drive the terminal. */
static void names_from_the_file_cannot_break_a_line(void **state)
{
    (void)state;
    char odd[600];
    snprintf(odd, sizeof odd, "%s/odd.tlog", dir);
    tlog_config c = test_config(NULL);
    c.stream_path = odd;
    tlog_log *log = make_log(&c);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, record_oddly_named, log), 0);
    pthread_join(t, NULL);
    tlog_destroy(log);
    static const char *const commands[] = {"dump", "dump --aggregate", "info", "diff"};
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
        char args[1400];
        snprintf(args, sizeof args, "%s '%s'%s%s%s", commands[k], odd, k == 3 ? " '" : "",
                 k == 3 ? odd : "", k == 3 ? "'" : "");
        int status;
        char *out = cli_line(args, &status);
        assert_int_equal(status, 0);
        for (const char *p = out; *p; p++)
            if ((*p != '\n' && (unsigned char)*p < 0x20) || *p == 0x7f)
                fail_msg("timerlog %s wrote byte 0x%02x at %zu:\n%s", args,
                         (unsigned char)*p, (size_t)(p - out), out);
        assert_non_null(strstr(out, k == 3 ? "Fr ]0;ame" : "Bad name [31m"));
        free(out);
    }
    unlink(odd);
}

/* A stream that holds no frame is no output to make: every command says
 * so and exits 1. */
static void stream_without_frames_is_said(void **state)
{
    (void)state;
    char empty[600];
    snprintf(empty, sizeof empty, "%s/no-frames.tlog", dir);
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .stream_path = empty};
    tlog_log *log = NULL;
    assert_int_equal(tlog_create(&c, &log), TLOG_OK);
    tlog_destroy(log);   /* a header and an end block */
    static const char *const commands[] = {"dump", "stats", "export --csv", "report"};
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
        char args[800];
        snprintf(args, sizeof args, "%s '%s'%s", commands[k], empty,
                 strcmp(commands[k], "report") == 0 ? " -o /dev/null" : "");
        int status;
        char *out = cli_line(args, &status);
        if (status != 1 || !strstr(out, "no frames"))
            fail_msg("'timerlog %s': status %d, said: %s", args, status, out);
        free(out);
    }
    unlink(empty);
}

/* Options may follow the files, as `timerlog report` takes them: each
 * command gives what it gives with them first. */
static void options_may_follow_the_files(void **state)
{
    (void)state;
    static const struct {
        const char *command, *options;
    } cases[] = {
        {"dump", "--frame 2 --min-percent 5"},
        {"stats", "--csv --thread Main"},
        {"export", "--json --root Frame"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char first[1200], after[1200];
        snprintf(first, sizeof first, "%s %s '%s'", cases[k].command, cases[k].options, path);
        snprintf(after, sizeof after, "%s '%s' %s", cases[k].command, path, cases[k].options);
        int s1, s2;
        char *want = cli_line(first, &s1), *got = cli_line(after, &s2);
        assert_int_equal(s1, 0);
        assert_int_equal(s2, 0);
        assert_string_equal(got, want);
        free(want);
        free(got);
    }
    /* An option last of all that wants a value takes no file for it. */
    char args[1200];
    snprintf(args, sizeof args, "stats '%s' --csv -o", path);
    int status;
    char *out = cli_line(args, &status);
    assert_int_equal(status, 2);
    assert_non_null(strstr(out, "-o takes the path to write to, and none is given"));
    free(out);
}

/* Every command whose output is a device that is full says so, and exits 1
 * rather than 0 with its output lost. */
static void output_that_cannot_be_written_is_said(void **state)
{
    (void)state;
    static const char *const commands[] = {"dump", "stats", "export --csv", "info"};
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s %s '%s' 2>&1 >/dev/full", TIMERLOG_CLI, commands[k], path);
        int status;
        char *out = shell_output(cmd, &status);
        if (status != 1 || !strstr(out, "cannot write the output"))
            fail_msg("'timerlog %s' into /dev/full: status %d, said: %s", commands[k], status,
                     out);
        free(out);
    }
}

/* A frame the file does not hold: the serials it does. */
static void missing_frame_names_the_frames_held(void **state)
{
    (void)state;
    uint64_t first = UINT64_MAX, last = 0;
    tlog_reader *r;
    assert_int_equal(tlog_reader_open(path, &r), TLOG_OK);
    tlog_frame *f;
    while (tlog_reader_next(r, &f) == TLOG_OK) {
        tlog_frame_info info = {.size = sizeof info};
        tlog_frame_get_info(f, &info);
        first = info.serial < first ? info.serial : first;
        last = info.serial > last ? info.serial : last;
        tlog_frame_release(f);
    }
    tlog_reader_close(r);
    char held[64];
    snprintf(held, sizeof held, "frames %" PRIu64 " to %" PRIu64, first, last);
    static const char *const asked[] = {"--frame 99", "--frames 50-60", "--frame 99 --aggregate"};
    for (size_t k = 0; k < sizeof asked / sizeof *asked; k++) {
        int status;
        char *out = cli(asked[k], &status);
        assert_int_equal(status, 1);
        assert_non_null(strstr(out, path));
        assert_non_null(strstr(out, held));
        free(out);
    }
}

/* The option at fault is named, be it unknown or missing its value. */
static void bad_option_is_named(void **state)
{
    (void)state;
    static const struct {
        const char *args, *named;
    } bad[] = {
        {"dump --bogus x.tlog", "--bogus"},
        {"dump --root", "--root"},
        {"dump --frame", "--frame"},
        {"dump --frames 3-x x.tlog", "3-x"},
        {"dump --frame -1 x.tlog", "-1"},
        {"dump --frames 2--1 x.tlog", "2--1"},
        {"dump --frame 99999999999999999999 x.tlog", "99999999999999999999"},
        {"dump --min-percent lots x.tlog", "lots"},
        {"export --csv --bogus x.tlog", "--bogus"},
        {"export --csv -o", "-o"},
        {"export --json --thread", "--thread"},
        {"frobnicate x.tlog", "frobnicate"},
        {"dump --frame 1 x.tlog y.tlog", "2 are given"},
        /* One of a kind: both named, rather than the last taken unsaid. */
        {"dump --frame 3 --frames 5-7 x.tlog", "--frame and --frames"},
        {"export --json --csv x.tlog", "--json and --csv"},
        {"export --chrome x.tlog --json", "--chrome and --json"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        int status;
        char *out = cli_line(bad[k].args, &status);
        assert_int_equal(status, 2);
        char *line = first_line(out);
        if (!strstr(line, bad[k].named))
            fail_msg("'timerlog %s' said: %s", bad[k].args, line);
        free(line);
        free(out);
    }
}

/* A usage error says the problem, then the command's usage lines and where
 * the rest is: the options' descriptions would bury the problem. A wrong
 * command gets the main help whole, with the list of commands. */
static void usage_errors_show_the_usage_lines_only(void **state)
{
    (void)state;
    int status;
    char *out = cli_line("dump --bogus x.tlog", &status);
    assert_int_equal(status, 2);
    const char *want = "timerlog: unknown option --bogus\nusage: timerlog dump ";
    if (strncmp(out, want, strlen(want)) != 0 ||
        !strstr(out, "(--help gives the whole of it)\n") ||
        strstr(out, "only the frame with serial N"))
        fail_msg("said:\n%s", out);
    free(out);
    out = cli_line("dump --help", &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "only the frame with serial N"));
    free(out);
    out = cli_line("frobnicate", &status);
    assert_int_equal(status, 2);
    assert_non_null(strstr(out, "  stats    statistics of every row"));
    free(out);
}

/* ------------------------------------------------------------------------ */
/* stats                                                                    */
/* ------------------------------------------------------------------------ */

static char *file_text(const char *name)
{
    FILE *fp = fopen(name, "r");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    return read_back(fp);
}

/* One tree per thread and root title, each row with its statistics. */
static void stats_prints_a_tree_per_thread_and_root(void **state)
{
    (void)state;
    int status;
    char *out = cli_command("stats", "", &status);
    assert_int_equal(status, 0);
    const char *main_group = strstr(out, "# thread \"Main\", root \"Frame\": 5 frames; time: "
                                         "mean per frame, quantiles within 0.79%\n");
    assert_ptr_equal(main_group, out);
    const char *loader = strstr(out, "\n\n# thread \"Loader\", root \"Load chunk\": 3 frames;");
    assert_non_null(loader);
    /* Every frame alike: Update 2 ms, Render 1 ms, the frame 5 ms. */
    assert_non_null(strstr(main_group, "> 100.00% 0.005000s | median 0.005000s | p90 0.005000s "
                                       "| p99 0.005000s | min 0.005000s | max 0.005000s "
                                       "| (C) Frame\n"));
    assert_non_null(strstr(main_group, "|-> 40.00% 0.002000s | median 0.002000s | p90 "
                                       "0.002000s | p99 0.002000s | min 0.002000s | max "
                                       "0.002000s | (C) Update\n"));
    assert_non_null(strstr(loader, "| (C) Decode\n"));
    assert_null(strstr(out, "hitch"));
    free(out);

    out = cli_command("stats", "--root 'Load chunk'", &status);
    assert_int_equal(status, 0);
    assert_null(strstr(out, "\"Main\""));
    assert_non_null(strstr(out, "# thread \"Loader\", root \"Load chunk\": 3 frames;"));
    free(out);
    out = cli_command("stats", "--thread Nobody", &status);
    assert_int_equal(status, 1);
    assert_non_null(strstr(out, "no frame selected"));
    free(out);
}

/* The statistics read back from the stream are those the recording log
 * kept as it went. */
static void stats_from_the_stream_are_those_kept_live(void **state)
{
    (void)state;
    int status;
    char *out = cli_command("stats", "--csv", &status);
    assert_int_equal(status, 0);
    char *live = file_text(live_csv);
    if (strcmp(out, live) != 0) {
        fprintf(stderr, "read back:\n%s\nlive:\n%s", out, live);
        fail_msg("the statistics read back differ from those kept live");
    }
    assert_true(starts_with(out, "thread,root,path,kind,device,frames,total_mean,total_min,"
                                 "total_median,total_p90,total_p99,total_max,self_mean,"));
    assert_non_null(strstr(out, "\nMain,Frame,Frame / Update,C,,5,2000000.000,2000000,2000000,"
                                "2000000,2000000,2000000,"));
    free(live);
    free(out);
}

/* Frames over the budget are hitches: the last ones kept, listed with the
 * rows that made them slow, and printed whole on request. */
static void stats_lists_the_hitches(void **state)
{
    (void)state;
    int status;
    char *out = cli_command("stats", "--thread Main --hitch 4.5 --max-hitches 2", &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "# hitches: 5 seen, the last 2 kept\n"));
    assert_int_equal(lines_starting(out, "# hitch "), 2);
    assert_non_null(strstr(out, "# hitch 4: thread \"Main\", root \"Frame\", frame "));
    assert_non_null(strstr(out, ": 0.005000s, over the budget 0.004500s; median frame "
                                "0.005000s; no row stands out against its median\n"));
    free(out);
    out = cli_command("stats", "--thread Main --hitch 4.5 --max-hitches 1 --hitch-trees",
                      &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "\n\n# hitch 5: "));
    assert_non_null(strstr(out, "|-> 40.00% 0.002000s | median 0.002000s | delta +0.000000s "
                                "| (C) Update\n"));
    free(out);
    out = cli_command("stats", "--thread Main --hitch 4.5 --hitches-csv", &status);
    assert_int_equal(status, 0);
    assert_true(starts_with(out, "number,thread,root,rank,frame,duration_ns,reasons,"
                                 "budget_ns,quantile_ns,median_ns,slower\n1,Main,Frame,0,"));
    assert_int_equal(lines_starting(out, "5,Main,Frame,0,"), 1);
    assert_non_null(strstr(out, ",5000000,budget,4500000,0,5000000,\"\"\n"));
    free(out);
    out = cli_command("stats", "--json --hitch 4.5", &status);
    assert_int_equal(status, 0);
    assert_true(starts_with(out, "{\"relative_error\":0.00781250,\"frames\":8,"));
    assert_non_null(strstr(out, "\"hitches\":[\n{\"number\":1,"));
    free(out);
}

static void stats_options_are_checked(void **state)
{
    (void)state;
    static const struct {
        const char *args, *named;
    } bad[] = {
        {"stats --hitch-quantile 1.5 x.tlog", "1.5"},
        {"stats --hitch-quantile 0 x.tlog", "--hitch-quantile"},
        {"stats --max-hitches 0 x.tlog", "--max-hitches"},
        {"stats --max-hitches 2.5 x.tlog", "2.5"},
        {"stats --hitch -3 x.tlog", "-3"},
        {"stats --hitch 2e13 x.tlog", "2e13"},         /* past what a uint64 of ns holds */
        {"stats --hitch 0.0000001 x.tlog", "0.0000001"},   /* under a nanosecond */
        {"stats --bogus x.tlog", "--bogus"},
        {"stats --hitch", "--hitch"},
        {"stats", "no FILE"},
        {"stats --csv --json x.tlog", "--csv and --json"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        int status;
        char *out = cli_line(bad[k].args, &status);
        assert_int_equal(status, 2);
        char *line = first_line(out);
        if (!strstr(line, bad[k].named))
            fail_msg("'timerlog %s' said: %s", bad[k].args, line);
        assert_non_null(strstr(out, "usage: timerlog stats"));
        free(line);
        free(out);
    }
    /* -o writes there, and the output stays empty. */
    char args[700];
    snprintf(args, sizeof args, "--csv -o '%s/stats.csv'", dir);
    int status;
    char *out = cli_command("stats", args, &status);
    assert_int_equal(status, 0);
    assert_string_equal(out, "");
    free(out);
    snprintf(args, sizeof args, "%s/stats.csv", dir);
    char *written = file_text(args), *live = file_text(live_csv);
    assert_string_equal(written, live);
    free(written);
    free(live);
    unlink(args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aggregate_merges_each_thread_and_root_apart),
        cmocka_unit_test(thread_selects_that_threads_frames),
        cmocka_unit_test(root_selects_frames_by_title),
        cmocka_unit_test(selections_combine),
        cmocka_unit_test(unknown_root_selects_nothing),
        cmocka_unit_test(export_selects_by_thread_and_root),
        cmocka_unit_test(progress_only_on_a_terminal),
        cmocka_unit_test(bad_values_are_usage_errors),
        cmocka_unit_test(usage_errors_show_the_usage_lines_only),
        cmocka_unit_test(directory_is_named_as_such),
        cmocka_unit_test(empty_file_is_named_as_such),
        cmocka_unit_test(dash_reads_standard_input),
        cmocka_unit_test(dash_named_twice_reads_the_same_stream),
        cmocka_unit_test(unreadable_standard_input_is_said),
        cmocka_unit_test(info_lists_many_threads_by_name),
        cmocka_unit_test(unwritable_output_names_path_and_reason),
        cmocka_unit_test(output_over_an_input_is_refused),
        cmocka_unit_test(names_from_the_file_cannot_break_a_line),
        cmocka_unit_test(output_that_cannot_be_written_is_said),
        cmocka_unit_test(options_may_follow_the_files),
        cmocka_unit_test(stream_without_frames_is_said),
        cmocka_unit_test(missing_frame_names_the_frames_held),
        cmocka_unit_test(bad_option_is_named),
        cmocka_unit_test(stats_prints_a_tree_per_thread_and_root),
        cmocka_unit_test(stats_from_the_stream_are_those_kept_live),
        cmocka_unit_test(stats_lists_the_hitches),
        cmocka_unit_test(stats_options_are_checked),
    };
    return cmocka_run_group_tests(tests, write_stream, remove_stream);
}
