/*
 * The timerlog command (tools/timerlog.c describes its use and exit status)
 * as a function, for the program and for the fuzz target: it writes to the
 * streams it is given, never exits, and frees all it takes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <timerlog/timerlog.h>

#include "cli.h"
#include "diff.h"
#include "ending.h"
#include "input.h"
#include "line.h"
#include "options.h"
#include "report.h"
#include "util.h"

#define EXIT_DAMAGED 1
#define EXIT_USAGE 2

static const char *const usage_main =
    "usage: timerlog COMMAND [OPTIONS] FILE...\n"
    "\n"
    "Reads libtimerlog streams (files written with TIMERLOG_OUTPUT or\n"
    "tlog_config.stream_path); the format is found from the file's magic, not\n"
    "its name. Several files (ranks of one run) can be read together; a FILE\n"
    "of - is standard input, read whole into memory first.\n"
    "\n"
    "commands:\n"
    "  dump     print frame trees in the standard text format\n"
    "  export   write Chrome trace, JSON or CSV\n"
    "  info     describe files: header, ranks, threads, sites, frames, damage\n"
    "  stats    statistics of every row across frames, and the hitches\n"
    "  diff     compare two runs row by row: slower, faster, or noise\n"
    "  report   one HTML page of the frames: chart, trees, statistics, timeline\n"
    "\n"
    "'timerlog COMMAND --help' describes a command. Exit status: 0 when all\n"
    "files read cleanly, 1 when one is unreadable or damaged (what came before\n"
    "the damage is still shown), 2 for a usage error; diff has its own.\n";

static const char *const usage_dump =
    "usage: timerlog dump [--frame N | --frames A-B] [--thread NAME] [--root TITLE]\n"
    "                     [--aggregate] [--min-percent P] FILE...\n"
    "\n"
    "Prints frames as tlog_dump does. By default every frame, each after a\n"
    "'# FILE: frame N (rank R, thread \"NAME\")' line; with --frame N only\n"
    "frame N of one file, exactly as the recording process would have printed\n"
    "it. The selections combine: a frame is shown when it matches all of them.\n"
    "\n"
    "  --frame N       only the frame with serial N\n"
    "  --frames A-B    frames with serials A to B\n"
    "  --thread NAME   only frames run by the thread named NAME\n"
    "  --root TITLE    only frames whose root row is titled TITLE\n"
    "  --aggregate     the selected frames of all files merged into one tree per\n"
    "                  thread name and root title, each tree after a line\n"
    "                  '# thread \"NAME\", root \"TITLE\": N frames'\n"
    "  --min-percent P hide rows below P% of their parent\n";

static const char *const usage_export =
    "usage: timerlog export --chrome|--json|--csv [--thread NAME] [--root TITLE]\n"
    "                       [-o OUT] FILE...\n"
    "\n"
    "  --chrome       Chrome Trace Event JSON (open in Perfetto or chrome://tracing):\n"
    "                 one process per rank, a track per thread and device queue\n"
    "  --json         every frame's tree with every row's fields\n"
    "  --csv          one line per row of every frame\n"
    "  --thread NAME  only frames run by the thread named NAME\n"
    "  --root TITLE   only frames whose root row is titled TITLE\n"
    "  -o OUT         write to OUT instead of standard output\n";

static const char *const usage_info =
    "usage: timerlog info [--threads] FILE...\n"
    "\n"
    "Shows each file's header (version, rank, process, start time), its\n"
    "threads, devices and call sites, how many frames it holds, and any damage\n"
    "with its byte offset. Up to 16 threads are listed one a line; more, one\n"
    "line per thread name, with how many threads had it and their ids.\n"
    "\n"
    "  --threads   list every thread, however many\n";

static const char *const usage_stats =
    "usage: timerlog stats [--thread NAME] [--root TITLE] [--hitch MS]\n"
    "                      [--hitch-quantile Q] [--max-hitches N] [--hitch-trees]\n"
    "                      [--csv | --json | --hitches-csv] [--min-percent P]\n"
    "                      [-o OUT] FILE...\n"
    "\n"
    "Statistics of every frame of the files, read together (ranks, or runs of\n"
    "one program), per thread name and root title: for each row, its mean,\n"
    "median, p90, p99, minimum and maximum time per frame (quantiles within\n"
    "0.79%), as a program that keeps them (TLOG_CONFIG_STATS) would have; then\n"
    "the hitches, with the rows that made each slower than their median.\n"
    "\n"
    "  --thread NAME        only frames run by the thread named NAME\n"
    "  --root TITLE         only frames whose root row is titled TITLE\n"
    "  --hitch MS           a frame longer than MS milliseconds is a hitch\n"
    "  --hitch-quantile Q   a frame longer than the quantile Q (0 < Q < 1) of\n"
    "                       the 128 frames before it is a hitch\n"
    "  --max-hitches N      hitches kept, the last ones (default 16)\n"
    "  --hitch-trees        also print each hitch's frame against the medians\n"
    "  --csv                one line per row: thread, root, path, kind, device,\n"
    "                       frames, then mean, min, median, p90, p99, max (ns)\n"
    "                       of total, self time and count\n"
    "  --json               the rows of every group, nested, and the hitches\n"
    "  --hitches-csv        one line per hitch kept\n"
    "  --min-percent P      hide rows below P% of their parent (text)\n"
    "  -o OUT               write to OUT instead of standard output\n";

/* One run of the command: where it writes, and how it is going. */
typedef struct cli {
    FILE *out, *err;
    int status;   /* 0, or EXIT_DAMAGED once a file could not be read */
    /* Progress: see progress_start. */
    bool progress_on, progress_shown;
    size_t frames_read;
    double progress_next;
} cli;

/* The command's help on the output; or, given a problem (a printf
 * format), the problem and the usage lines of the help (all of the main
 * help) on the error stream. */
static int usage(cli *c, const char *text, const char *problem, ...)
    __attribute__((format(printf, 3, 4)));

static int usage(cli *c, const char *text, const char *problem, ...)
{
    if (problem) {
        va_list ap;
        va_start(ap, problem);
        fputs("timerlog: ", c->err);
        vfprintf(c->err, problem, ap);
        fputs("\n", c->err);
        va_end(ap);
        if (text == usage_main)   /* short, and the commands are what was missed */
            fputs(text, c->err);
        else
            put_synopsis(c->err, text);
        return EXIT_USAGE;
    }
    fputs(text, c->out);
    return 0;
}

/* The options that take a value, and what the value is. */
static const option_value dump_values[] = {
    {"--frame", "a frame number"},
    {"--frames", "a range of frame numbers A-B"},
    {"--thread", "a thread name"},
    {"--root", "a root row's title"},
    {"--min-percent", "a number of percent"},
    {NULL, NULL},
};

static const option_value export_values[] = {
    {"--thread", "a thread name"},
    {"--root", "a root row's title"},
    {"-o", "the path to write to"},
    {NULL, NULL},
};

static const option_value info_values[] = {
    {NULL, NULL},
};

/* An option without its value, or an unknown one, named. */
static int bad_option(cli *c, const char *text, const option_value *table, int argc,
                      char **argv, int i)
{
    char msg[512];
    option_problem(table, argc, argv, i, msg, sizeof msg);
    return usage(c, text, "%s", msg);
}

static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

/* Opens a file; reports why not. */
static tlog_reader *open_stream(cli *c, const char *path)
{
    tlog_reader *r = NULL;
    int rc = input_open(path, &r);
    if (rc != TLOG_OK) {
        char msg[INPUT_PROBLEM_SIZE];
        input_problem(msg, sizeof msg, path, r, rc);
        fprintf(c->err, "timerlog: %s\n", msg);
        tlog_reader_close(r);
        c->status = EXIT_DAMAGED;
        return NULL;
    }
    return r;
}

/* After the last frame: damage, or a file the writer did not end. */
static void report_end(cli *c, tlog_reader *r, const char *path, int rc)
{
    if (warn_at_end(r, path, rc, c->err))
        return;
    fprintf(c->err, "timerlog: %s: %s\n", path, tlog_reader_error(r));
    c->status = EXIT_DAMAGED;
}

/* ------------------------------------------------------------------------ */
/* Progress                                                                 */
/* ------------------------------------------------------------------------ */

/* Reading big files takes a while: when the error stream is a terminal, a
 * line counting the frames read is redrawn there (at most four times a
 * second) and erased at the end. Never in redirected output. */
static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_start(cli *c)
{
    int fd = fileno(c->err);
    c->progress_on = fd >= 0 && isatty(fd) == 1;
    c->progress_shown = false;
    c->frames_read = 0;
    c->progress_next = 0;
}

static void progress_frame(cli *c, const char *path)
{
    c->frames_read++;
    if (!c->progress_on || seconds_now() < c->progress_next)
        return;
    c->progress_next = seconds_now() + 0.25;
    c->progress_shown = true;
    fprintf(c->err, "\rtimerlog: %s: %zu frames read", path, c->frames_read);
    fflush(c->err);
}

static void progress_done(cli *c)
{
    if (c->progress_shown)
        fputs("\r\033[K", c->err);
    c->progress_shown = false;
}

/* ------------------------------------------------------------------------ */
/* dump                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct selection {
    uint64_t first, last;
    bool single, aggregate;
    double min_percent;
    const char *thread, *root;   /* NULL: any */
} selection;

static bool parse_range(const char *s, selection *sel)
{
    char *end;
    if (!digits_arg(s, &sel->first, &end))
        return false;
    sel->last = sel->first;
    if (*end == '-' && !digits_arg(end + 1, &sel->last, &end))
        return false;
    return !*end && sel->first <= sel->last;
}

/* The title of a frame's root row: what the frame timed. */
static const char *root_title(const tlog_frame *f)
{
    tlog_node_info info = {.size = sizeof info};
    if (tlog_node_get_info(tlog_frame_root(f), &info) != TLOG_OK || !info.name)
        return "";
    return info.name;
}

static const char *thread_of(const tlog_frame_info *info)
{
    return info->thread_name ? info->thread_name : "";
}

static bool selected(const selection *sel, const tlog_frame *f)
{
    tlog_frame_info info = {.size = sizeof info};
    tlog_frame_get_info(f, &info);
    if (info.serial < sel->first || info.serial > sel->last)
        return false;
    if (sel->thread && strcmp(thread_of(&info), sel->thread) != 0)
        return false;
    return !sel->root || strcmp(root_title(f), sel->root) == 0;
}

static int print_frame(cli *c, const tlog_frame *f, const selection *sel)
{
    tlog_dump_options opt = {.size = sizeof opt, .min_percent = sel->min_percent};
    return tlog_dump_frame(f, c->out, sel->min_percent > 0 ? &opt : NULL);
}

/* Folds `f` into the running merge `*acc`. */
static int fold(tlog_frame **acc, const tlog_frame *f)
{
    const tlog_frame *two[2] = {*acc, f};
    tlog_frame *merged;
    int rc = *acc ? tlog_frame_merge(two, 2, &merged) : tlog_frame_merge(&f, 1, &merged);
    if (rc == TLOG_OK) {
        tlog_frame_release(*acc);
        *acc = merged;
    }
    return rc;
}

/* The frames of one thread with one root title, merged: a thread's
 * frames time its own work, so merging across threads or titles would put
 * one kind of work under another's root. */
typedef struct group {
    char *thread, *root;   /* copies: they outlive the frame they came from */
    tlog_frame *acc;
    size_t frames;
} group;

typedef struct groups {
    group *g;
    size_t n, cap;
} groups;

/* A new group at the end, so that groups print in order of first
 * appearance; NULL when memory ran out. */
static group *add_group(groups *gs, const char *thread, const char *root)
{
    if (!TLOG_GROW(gs->g, gs->cap, gs->n + 1))
        return NULL;
    group g = {strdup(thread), strdup(root), NULL, 0};
    if (!g.thread || !g.root) {
        free(g.thread);
        free(g.root);
        return NULL;
    }
    gs->g[gs->n] = g;
    return &gs->g[gs->n++];
}

static group *group_of(groups *gs, const tlog_frame *f)
{
    tlog_frame_info info = {.size = sizeof info};
    tlog_frame_get_info(f, &info);
    const char *thread = thread_of(&info), *root = root_title(f);
    for (size_t k = 0; k < gs->n; k++)
        if (strcmp(gs->g[k].thread, thread) == 0 && strcmp(gs->g[k].root, root) == 0)
            return &gs->g[k];
    return add_group(gs, thread, root);
}

/* Folds `f`, frame `serial` of `path`, into its group's tree. */
static void aggregate(cli *c, groups *gs, const tlog_frame *f, const char *path,
                      uint64_t serial)
{
    group *g = group_of(gs, f);
    int rc = g ? fold(&g->acc, f) : TLOG_ENOMEM;
    if (rc != TLOG_OK) {
        fprintf(c->err, "timerlog: %s: cannot merge frame %" PRIu64 ": %s\n", path, serial,
                tlog_strerror(rc));
        c->status = EXIT_DAMAGED;
        return;
    }
    g->frames++;
}

static void print_groups(cli *c, const groups *gs, const selection *sel)
{
    bool first = true;
    for (size_t k = 0; k < gs->n; k++) {
        const group *g = &gs->g[k];
        if (!g->acc)   /* none of its frames could be merged */
            continue;
        fprintf(c->out, "%s# thread \"", first ? "" : "\n");
        tlog_put_line_text_(c->out, g->thread);
        fputs("\", root \"", c->out);
        tlog_put_line_text_(c->out, g->root);
        fprintf(c->out, "\": %zu frames\n", g->frames);
        print_frame(c, g->acc, sel);
        first = false;
    }
}

static void free_groups(groups *gs)
{
    for (size_t k = 0; k < gs->n; k++) {
        tlog_frame_release(gs->g[k].acc);
        free(gs->g[k].thread);
        free(gs->g[k].root);
    }
    free(gs->g);
}

/* The serials of a file's frames, to say which it holds when none has a
 * serial asked for. */
typedef struct held {
    uint64_t first, last;
    uint64_t frames, asked;   /* asked: those with a serial asked for */
} held;

static void count_held(held *h, const selection *sel, uint64_t serial)
{
    if (!h->frames || serial < h->first)
        h->first = serial;
    if (!h->frames || serial > h->last)
        h->last = serial;
    h->frames++;
    h->asked += serial >= sel->first && serial <= sel->last;
}

/* `sel` NULL: no serials were asked for. */
static void say_held(cli *c, const char *path, const selection *sel, const held *h)
{
    fprintf(c->err, "timerlog: %s: ", path);
    if (!sel)
        fputs("nothing to show", c->err);
    else if (sel->first == sel->last)
        fprintf(c->err, "no frame %" PRIu64, sel->first);
    else
        fprintf(c->err, "no frames %" PRIu64 " to %" PRIu64, sel->first, sel->last);
    if (!h->frames)
        fprintf(c->err, "; it holds no frames\n");
    else if (h->frames == 1)
        fprintf(c->err, "; it holds frame %" PRIu64 " only\n", h->first);
    else if (h->last - h->first + 1 == h->frames)
        fprintf(c->err, "; it holds frames %" PRIu64 " to %" PRIu64 "\n", h->first, h->last);
    else
        fprintf(c->err, "; it holds %" PRIu64 " frames, numbered %" PRIu64 " to %" PRIu64 "\n",
                h->frames, h->first, h->last);
}

/* "# FILE: frame N (rank R, thread "NAME")", the name as one line. */
static void frame_header(cli *c, const char *before, const char *path,
                         const tlog_frame_info *info)
{
    fprintf(c->out, "%s# %s: frame %" PRIu64 " (rank %u, thread \"", before, path, info->serial,
            info->rank);
    tlog_put_line_text_(c->out, info->thread_name);
    fputs("\")\n", c->out);
}

/* Returns the reader when its frames were folded into `gs` (their rows
 * keep its call sites), for closing after the merged trees are printed. */
static tlog_reader *dump_file(cli *c, const char *path, const selection *sel, groups *gs,
                              size_t *shown, held *h)
{
    tlog_reader *r = open_stream(c, path);
    if (!r)
        return NULL;
    tlog_frame *f;
    int rc;
    while ((rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        if (sel->aggregate)
            progress_frame(c, path);
        tlog_frame_info info = {.size = sizeof info};
        tlog_frame_get_info(f, &info);
        count_held(h, sel, info.serial);
        if (selected(sel, f)) {
            if (sel->aggregate) {
                aggregate(c, gs, f, path, info.serial);
            } else {
                if (!sel->single)
                    frame_header(c, *shown ? "\n" : "", path, &info);
                print_frame(c, f, sel);
            }
            ++*shown;
        }
        tlog_frame_release(f);
    }
    progress_done(c);
    report_end(c, r, path, rc);
    if (sel->aggregate)
        return r;
    tlog_reader_close(r);
    return NULL;
}

/* Whether argv[*i] is --thread NAME or --root TITLE with a value that is
 * not empty: then the value goes into *sel. */
static bool take_filter(int argc, char **argv, int *i, selection *sel)
{
    bool thread = strcmp(argv[*i], "--thread") == 0;
    if ((!thread && strcmp(argv[*i], "--root") != 0) || *i + 1 >= argc || !argv[*i + 1][0])
        return false;
    *(thread ? &sel->thread : &sel->root) = argv[++*i];
    return true;
}

/* Fails on a write error of the output; says so, and why when known. */
static void check_output(cli *c)
{
    errno = 0;
    if (fflush(c->out) != 0 || ferror(c->out)) {
        fprintf(c->err, "timerlog: cannot write the output%s%s\n", errno ? ": " : "",
                errno ? strerror(errno) : "");
        c->status = EXIT_DAMAGED;
    }
}

static int cmd_dump(cli *c, int argc, char **argv)
{
    if (wants_help(argc, argv))
        return usage(c, usage_dump, NULL);
    selection sel = {0, UINT64_MAX, false, false, 0, NULL, NULL};
    if (options_first(argc, argv, dump_values))
        return bad_option(c, usage_dump, dump_values, argc, argv, argc - 1);
    static const char *const frame_options[] = {"--frame", "--frames", NULL};
    const char *frame_given = NULL;
    int i = 0;
    for (; i < argc && is_option(argv[i]); i++) {
        const char *opt = argv[i];
        bool has_value = i + 1 < argc;
        char *end;
        if (!one_of(frame_options, opt, &frame_given))
            return usage(c, usage_dump, "%s and %s: give one of them", frame_given, opt);
        if (take_filter(argc, argv, &i, &sel)) {
            continue;
        } else if (strcmp(opt, "--aggregate") == 0) {
            sel.aggregate = true;
        } else if ((strcmp(opt, "--frame") == 0 || strcmp(opt, "--frames") == 0) &&
                   has_value) {
            sel.single = strcmp(opt, "--frame") == 0;
            if (!parse_range(argv[i + 1], &sel) || (sel.single && sel.first != sel.last))
                return bad_option(c, usage_dump, dump_values, argc, argv, i);
            i++;
        } else if (strcmp(opt, "--min-percent") == 0 && has_value) {
            sel.min_percent = strtod(argv[i + 1], &end);
            if (end == argv[i + 1] || *end || !(sel.min_percent >= 0))
                return bad_option(c, usage_dump, dump_values, argc, argv, i);
            i++;
        } else {
            return bad_option(c, usage_dump, dump_values, argc, argv, i);
        }
    }
    if (i >= argc)
        return usage(c, usage_dump, "no FILE given");
    input_name_stdin(argv + i, (size_t)(argc - i));
    if (sel.single && argc - i > 1 && !sel.aggregate)
        return usage(c, usage_dump, "--frame shows a frame of one file, and %d are given",
                     argc - i);
    size_t shown = 0, nkept = 0, nfiles = (size_t)(argc - i);
    groups gs = {NULL, 0, 0};
    /* Merged rows refer to their readers' call sites: no reader may close
     * before the trees are printed. */
    tlog_reader **kept = calloc(nfiles, sizeof *kept);
    held *holds = calloc(nfiles, sizeof *holds);
    if (!kept || !holds) {
        free(kept);
        free(holds);
        fprintf(c->err, "timerlog: out of memory\n");
        return EXIT_DAMAGED;
    }
    progress_start(c);
    for (size_t k = 0; k < nfiles; k++) {
        tlog_reader *r = dump_file(c, argv[i + (int)k], &sel, &gs, &shown, &holds[k]);
        if (r)
            kept[nkept++] = r;
    }
    print_groups(c, &gs, &sel);
    free_groups(&gs);
    for (size_t k = 0; k < nkept; k++)
        tlog_reader_close(kept[k]);
    free(kept);
    if (!shown && c->status == 0) {
        /* No file has the serials asked for, or no frame at all: say which
         * frames each holds. */
        uint64_t frames = 0, asked = 0;
        for (size_t k = 0; k < nfiles; k++) {
            frames += holds[k].frames;
            asked += holds[k].asked;
        }
        bool by_serial = sel.first != 0 || sel.last != UINT64_MAX;
        for (size_t k = 0; (!frames || (by_serial && !asked)) && k < nfiles; k++)
            say_held(c, argv[i + (int)k], by_serial ? &sel : NULL, &holds[k]);
        if (frames && asked)
            fprintf(c->err, "timerlog: no frame selected\n");
        c->status = EXIT_DAMAGED;
    }
    free(holds);
    check_output(c);
    return c->status;
}

/* ------------------------------------------------------------------------ */
/* export                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct collected {
    tlog_reader **readers;
    size_t nreaders;
    tlog_frame **frames;
    size_t nframes, cap;
} collected;

static void collect_file(cli *c, collected *col, const selection *sel, const char *path)
{
    tlog_reader *r = open_stream(c, path);
    if (!r)
        return;
    col->readers[col->nreaders++] = r;   /* frames refer to its sites */
    tlog_frame *f;
    int rc;
    while ((rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        progress_frame(c, path);
        if (!selected(sel, f)) {
            tlog_frame_release(f);
            continue;
        }
        if (!TLOG_GROW(col->frames, col->cap, col->nframes + 1)) {
            tlog_frame_release(f);
            progress_done(c);
            fprintf(c->err, "timerlog: out of memory\n");
            c->status = EXIT_DAMAGED;
            return;
        }
        col->frames[col->nframes++] = f;
    }
    progress_done(c);
    report_end(c, r, path, rc);
}

/* Writes the frames collected to `path` (NULL: the output); says why
 * not, naming the path. */
static void write_export(cli *c, int (*export)(const tlog_frame *const *, size_t, FILE *),
                         const collected *col, const char *path)
{
    errno = 0;
    FILE *out = path ? fopen(path, "w") : c->out;
    if (!out) {
        fprintf(c->err, "timerlog: cannot write %s: %s\n", path, strerror(errno));
        c->status = EXIT_DAMAGED;
        return;
    }
    int rc = export((const tlog_frame *const *)col->frames, col->nframes, out);
    /* A write error leaves its errno behind; closing may find one too. */
    int why = rc == TLOG_EIO ? errno : 0;
    if (path ? fclose(out) != 0 : fflush(out) != 0) {
        why = errno;
        rc = TLOG_EIO;
    }
    if (rc == TLOG_OK)
        return;
    if (rc == TLOG_EIO)
        fprintf(c->err, "timerlog: cannot write %s: %s\n", path ? path : "the output",
                why ? strerror(why) : tlog_strerror(rc));
    else
        fprintf(c->err, "timerlog: cannot export: %s\n", tlog_strerror(rc));
    c->status = EXIT_DAMAGED;
}

static int cmd_export(cli *c, int argc, char **argv)
{
    if (wants_help(argc, argv))
        return usage(c, usage_export, NULL);
    int (*export)(const tlog_frame *const *, size_t, FILE *) = NULL;
    const char *out_path = NULL;
    selection sel = {.first = 0, .last = UINT64_MAX};
    if (options_first(argc, argv, export_values))
        return bad_option(c, usage_export, export_values, argc, argv, argc - 1);
    static const char *const formats[] = {"--chrome", "--json", "--csv", NULL};
    const char *format_given = NULL;
    int i = 0;
    for (; i < argc && is_option(argv[i]); i++) {
        if (!one_of(formats, argv[i], &format_given))
            return usage(c, usage_export, "%s and %s: give one of them", format_given, argv[i]);
        if (take_filter(argc, argv, &i, &sel)) {
            continue;
        } else if (strcmp(argv[i], "--chrome") == 0) {
            export = tlog_export_chrome;
        } else if (strcmp(argv[i], "--json") == 0) {
            export = tlog_export_json;
        } else if (strcmp(argv[i], "--csv") == 0) {
            export = tlog_export_csv;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc && argv[i + 1][0]) {
            out_path = argv[++i];
        } else {
            return bad_option(c, usage_export, export_values, argc, argv, i);
        }
    }
    if (!export)
        return usage(c, usage_export, "choose --chrome, --json or --csv");
    if (i >= argc)
        return usage(c, usage_export, "no FILE given");
    input_name_stdin(argv + i, (size_t)(argc - i));
    if (output_over_input(out_path, argv + i, (size_t)(argc - i), c->err))
        return EXIT_USAGE;
    collected col = {calloc((size_t)argc - (size_t)i, sizeof(tlog_reader *)), 0, NULL, 0, 0};
    if (!col.readers) {
        fprintf(c->err, "timerlog: out of memory\n");
        return EXIT_DAMAGED;
    }
    progress_start(c);
    for (; i < argc; i++)
        collect_file(c, &col, &sel, argv[i]);
    if (!col.nframes && c->status == 0) {
        fprintf(c->err, "timerlog: %s\n", sel.thread || sel.root ? "no frame selected"
                                                                  : "no frames in the files");
        c->status = EXIT_DAMAGED;
    }
    write_export(c, export, &col, out_path);
    for (size_t k = 0; k < col.nframes; k++)
        tlog_frame_release(col.frames[k]);
    for (size_t k = 0; k < col.nreaders; k++)
        tlog_reader_close(col.readers[k]);
    free(col.frames);
    free(col.readers);
    return c->status;
}

/* ------------------------------------------------------------------------ */
/* info                                                                     */
/* ------------------------------------------------------------------------ */

/* A name from the file as a line of its own, indented. */
static void info_name(FILE *out, const char *name)
{
    tlog_put_line_text_(out, name);
    fputc('\n', out);
}

static void info_site(FILE *out, const tlog_site *s)
{
    fputs("    ", out);
    tlog_put_line_text_(out, s->name);
    fputs(" (", out);
    tlog_put_line_text_(out, s->file);
    fprintf(out, ":%d)\n", s->line);
}

/* Up to this many threads, info lists each; past it, each name once. */
#define INFO_EACH_THREAD 16

/* A thread of a file, and where the file lists it. */
typedef struct info_thread {
    const char *name;
    uint32_t id;
    size_t at;
} info_thread;

/* The threads that share a name: t[start .. start + n), sorted by id. */
typedef struct info_name_run {
    size_t start, n, first_at;
} info_name_run;

static int by_name_then_id(const void *pa, const void *pb)
{
    const info_thread *a = pa, *b = pb;
    int d = strcmp(a->name, b->name);
    return d ? d : (a->id > b->id) - (a->id < b->id);
}

static int by_first_place(const void *pa, const void *pb)
{
    const info_name_run *a = pa, *b = pb;
    return (a->first_at > b->first_at) - (a->first_at < b->first_at);
}

/* One line for the n threads, sorted by id, that share a name. */
static void info_name_line(FILE *out, const info_thread *t, size_t n)
{
    fputs("    ", out);
    tlog_put_line_text_(out, t[0].name);
    if (n == 1)
        fprintf(out, ": 1 thread, id %" PRIu32 "\n", t[0].id);
    else if (t[n - 1].id - t[0].id == n - 1)
        fprintf(out, ": %zu threads, ids %" PRIu32 "-%" PRIu32 "\n", n, t[0].id, t[n - 1].id);
    else
        fprintf(out, ": %zu threads, ids %" PRIu32 ", %" PRIu32 "%s%" PRIu32 "\n", n, t[0].id,
                t[1].id, n > 3 ? ", ..., " : ", ", t[n - 1].id);
}

/* The file's threads, a line per name, in the order the file first lists
 * each name; false when memory ran out. */
static bool info_thread_names(FILE *out, const tlog_reader *r, size_t nthreads)
{
    info_thread *t = calloc(nthreads, sizeof *t);
    info_name_run *runs = calloc(nthreads, sizeof *runs);
    if (!t || !runs) {
        free(t);
        free(runs);
        return false;
    }
    size_t n = 0, nruns = 0;
    for (const char *name; n < nthreads && (name = tlog_reader_thread(r, n, &t[n].id)); n++) {
        t[n].name = name;
        t[n].at = n;
    }
    qsort(t, n, sizeof *t, by_name_then_id);
    for (size_t k = 0; k < n; nruns++) {
        info_name_run *run = &runs[nruns];
        *run = (info_name_run){k, 0, t[k].at};
        for (; k < n && strcmp(t[k].name, t[run->start].name) == 0; k++, run->n++)
            if (t[k].at < run->first_at)
                run->first_at = t[k].at;
    }
    qsort(runs, nruns, sizeof *runs, by_first_place);
    fprintf(out, "  threads: %zu, under %zu name%s (--threads lists each)\n", n, nruns,
            nruns == 1 ? "" : "s");
    for (size_t k = 0; k < nruns; k++)
        info_name_line(out, &t[runs[k].start], runs[k].n);
    free(t);
    free(runs);
    return true;
}

/* The file's threads, one a line. */
static void info_each_thread(FILE *out, const tlog_reader *r, size_t nthreads)
{
    fprintf(out, "  threads: %zu\n", nthreads);
    uint32_t id;
    const char *name;
    for (size_t k = 0; (name = tlog_reader_thread(r, k, &id)) != NULL; k++) {
        fprintf(out, "    %u ", id);
        info_name(out, name);
    }
}

static void print_info(cli *c, tlog_reader *r, const char *path, bool each_thread)
{
    FILE *out = c->out;
    tlog_reader_info info = {.size = sizeof info};
    tlog_reader_get_info(r, &info);
    time_t secs = (time_t)(info.start_wall_ns / 1000000000u);
    char when[64] = "?";
    struct tm tm;
    if (gmtime_r(&secs, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    fprintf(out, "%s\n  format: timerlog stream %u.%u\n", path, info.version_major,
            info.version_minor);
    if (info.rank >= 0)
        fprintf(out, "  rank: %" PRId64 "\n", info.rank);
    else
        fprintf(out, "  rank: none\n");
    fprintf(out, "  process: %u\n  started: %s\n  frames: %" PRIu64 "\n", info.pid, when,
            info.frames);
    if (each_thread || info.threads <= INFO_EACH_THREAD ||
        !info_thread_names(out, r, info.threads))
        info_each_thread(out, r, info.threads);
    fprintf(out, "  devices: %zu\n", info.devices);
    const char *name;
    for (size_t k = 0; (name = tlog_reader_device(r, k)) != NULL; k++) {
        fputs("    ", out);
        info_name(out, name);
    }
    fprintf(out, "  call sites: %zu\n", info.sites);
    const tlog_site *s;
    for (size_t k = 0; (s = tlog_reader_site(r, k)) != NULL; k++)
        info_site(out, s);
    if (info.ended)
        fprintf(out, "  ended: yes (%" PRIu64 " frames written, %" PRIu64
                " lost by the writer)\n", info.end_frames, info.frames_lost);
    else
        fprintf(out, "  ended: no\n");
    fprintf(out, "  bytes read: %" PRIu64 "\n", info.bytes_read);
}

static int cmd_info(cli *c, int argc, char **argv)
{
    if (wants_help(argc, argv))
        return usage(c, usage_info, NULL);
    if (options_first(argc, argv, info_values))
        return bad_option(c, usage_info, info_values, argc, argv, argc - 1);
    bool each_thread = false;
    int first = 0;
    for (; first < argc && is_option(argv[first]); first++) {
        if (strcmp(argv[first], "--threads") != 0)
            return bad_option(c, usage_info, info_values, argc, argv, first);
        each_thread = true;
    }
    if (first >= argc)
        return usage(c, usage_info, "no FILE given");
    argc -= first;
    argv += first;
    input_name_stdin(argv, (size_t)argc);
    for (int i = 0; i < argc; i++) {
        tlog_reader *r = open_stream(c, argv[i]);
        if (!r)
            continue;
        tlog_frame *f;
        int rc;
        while ((rc = tlog_reader_next(r, &f)) == TLOG_OK)
            tlog_frame_release(f);
        print_info(c, r, argv[i], each_thread);
        if (rc != TLOG_ENOFRAME)
            fprintf(c->out, "  damage: %s\n", tlog_reader_error(r));
        report_end(c, r, argv[i], rc);
        tlog_reader_close(r);
    }
    check_output(c);
    return c->status;
}

/* ------------------------------------------------------------------------ */
/* stats                                                                    */
/* ------------------------------------------------------------------------ */

static const option_value stats_values[] = {
    {"--thread", "a thread name"},
    {"--root", "a root row's title"},
    {"--hitch", "a number of milliseconds"},
    {"--hitch-quantile", "a number between 0 and 1"},
    {"--max-hitches", "a number from 1 to 4096"},
    {"--min-percent", "a number of percent"},
    {"-o", "the path to write to"},
    {NULL, NULL},
};

enum stats_output { STATS_TEXT, STATS_CSV, STATS_JSON, STATS_HITCHES_CSV };

typedef struct stats_run {
    selection sel;
    tlog_summary_config cfg;
    int output;
    bool hitch_trees;
    const char *out_path;
} stats_run;

/* Reads the option at argv[*i] into `run`; false when it is not one, or
 * its value is bad. */
static bool take_stats_option(int argc, char **argv, int *i, stats_run *run)
{
    const char *opt = argv[*i];
    double v;
    bool has_value = *i + 1 < argc && argv[*i + 1][0];
    if (take_filter(argc, argv, i, &run->sel))
        return true;
    if (strcmp(opt, "--csv") == 0 || strcmp(opt, "--json") == 0 ||
        strcmp(opt, "--hitches-csv") == 0) {
        run->output = opt[2] == 'c' ? STATS_CSV : opt[2] == 'j' ? STATS_JSON : STATS_HITCHES_CSV;
        return true;
    }
    if (strcmp(opt, "--hitch-trees") == 0)
        return run->hitch_trees = true;
    if (!has_value)
        return false;
    const char *value = argv[*i + 1];
    if (strcmp(opt, "-o") == 0) {
        run->out_path = value;
    } else if (strcmp(opt, "--hitch") == 0) {
        if (!ms_arg(value, &run->cfg.hitch_ns))
            return false;
    } else if (strcmp(opt, "--hitch-quantile") == 0 && number_arg(value, &v) && v > 0 && v < 1) {
        run->cfg.hitch_quantile = v;
    } else if (strcmp(opt, "--max-hitches") == 0 && number_arg(value, &v) && v >= 1 &&
               v <= 4096 && v == (double)(uint32_t)v) {
        run->cfg.max_hitches = (uint32_t)v;
    } else if (strcmp(opt, "--min-percent") == 0 && number_arg(value, &v)) {
        run->sel.min_percent = v;
    } else {
        return false;
    }
    ++*i;
    return true;
}

/* Counts the selected frames of `path`; returns its reader, which the
 * summary's hitches refer to, for closing once they are written. */
static tlog_reader *summarize_file(cli *c, tlog_summary *s, const selection *sel,
                                   const char *path, size_t *counted)
{
    tlog_reader *r = open_stream(c, path);
    if (!r)
        return NULL;
    tlog_frame *f;
    int rc;
    while ((rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        progress_frame(c, path);
        if (selected(sel, f)) {
            int added = tlog_summary_add(s, f);
            if (added == TLOG_OK) {
                ++*counted;
            } else {
                tlog_frame_info info = {.size = sizeof info};
                tlog_frame_get_info(f, &info);
                fprintf(c->err, "timerlog: %s: frame %" PRIu64 " left out: %s\n", path,
                        info.serial, tlog_strerror(added));
                c->status = EXIT_DAMAGED;
            }
        }
        tlog_frame_release(f);
    }
    progress_done(c);
    report_end(c, r, path, rc);
    return r;
}

static int write_stats(const stats_run *run, const tlog_summary *s, FILE *out)
{
    if (run->output == STATS_CSV)
        return tlog_summary_export_csv(s, out);
    if (run->output == STATS_JSON)
        return tlog_summary_export_json(s, out);
    if (run->output == STATS_HITCHES_CSV)
        return tlog_summary_export_hitches_csv(s, out);
    tlog_dump_options opt = {.size = sizeof opt, .min_percent = run->sel.min_percent};
    int rc = tlog_summary_dump(s, out, &opt);
    tlog_summary_info info = {.size = sizeof info};
    tlog_summary_get_info(s, &info);
    for (size_t k = 0; rc == TLOG_OK && run->hitch_trees && k < info.hitches; k++) {
        fputc('\n', out);
        rc = tlog_summary_dump_hitch(s, k, out, &opt);
    }
    return rc;
}

/* Writes the statistics to the output or to -o's path; says why not. */
static void output_stats(cli *c, const stats_run *run, const tlog_summary *s)
{
    errno = 0;
    FILE *out = run->out_path ? fopen(run->out_path, "w") : c->out;
    if (!out) {
        fprintf(c->err, "timerlog: cannot write %s: %s\n", run->out_path, strerror(errno));
        c->status = EXIT_DAMAGED;
        return;
    }
    int rc = write_stats(run, s, out);
    int why = rc == TLOG_EIO ? errno : 0;
    if (run->out_path ? fclose(out) != 0 : fflush(out) != 0) {
        why = errno;
        rc = TLOG_EIO;
    }
    if (rc == TLOG_OK)
        return;
    fprintf(c->err, "timerlog: cannot write %s: %s\n",
            run->out_path ? run->out_path : "the output",
            why ? strerror(why) : tlog_strerror(rc));
    c->status = EXIT_DAMAGED;
}

static int cmd_stats(cli *c, int argc, char **argv)
{
    if (wants_help(argc, argv))
        return usage(c, usage_stats, NULL);
    stats_run run = {.sel = {.first = 0, .last = UINT64_MAX}, .output = STATS_TEXT};
    run.cfg.size = sizeof run.cfg;
    if (options_first(argc, argv, stats_values))
        return bad_option(c, usage_stats, stats_values, argc, argv, argc - 1);
    static const char *const outputs[] = {"--csv", "--json", "--hitches-csv", NULL};
    const char *output_given = NULL;
    int i = 0;
    for (; i < argc && is_option(argv[i]); i++) {
        if (!one_of(outputs, argv[i], &output_given))
            return usage(c, usage_stats, "%s and %s: give one of them", output_given, argv[i]);
        if (!take_stats_option(argc, argv, &i, &run))
            return bad_option(c, usage_stats, stats_values, argc, argv, i);
    }
    if (i >= argc)
        return usage(c, usage_stats, "no FILE given");
    input_name_stdin(argv + i, (size_t)(argc - i));
    if (output_over_input(run.out_path, argv + i, (size_t)(argc - i), c->err))
        return EXIT_USAGE;
    tlog_summary *s = NULL;
    tlog_reader **readers = calloc((size_t)(argc - i), sizeof *readers);
    if (!readers || tlog_summary_create(&run.cfg, &s) != TLOG_OK) {
        free(readers);
        fprintf(c->err, "timerlog: out of memory\n");
        return EXIT_DAMAGED;
    }
    size_t nreaders = 0, counted = 0;
    progress_start(c);
    for (; i < argc; i++) {
        tlog_reader *r = summarize_file(c, s, &run.sel, argv[i], &counted);
        if (r)
            readers[nreaders++] = r;
    }
    if (!counted && c->status == 0) {
        fprintf(c->err, "timerlog: %s\n", run.sel.thread || run.sel.root
                                                ? "no frame selected" : "no frames in the files");
        c->status = EXIT_DAMAGED;
    }
    output_stats(c, &run, s);
    tlog_summary_destroy(s);   /* its hitches refer to the readers' call sites */
    for (size_t k = 0; k < nreaders; k++)
        tlog_reader_close(readers[k]);
    free(readers);
    return c->status;
}

static int run_command(cli *c, int argc, char **argv)
{
    if (argc < 2)
        return usage(c, usage_main, "no command given");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0)
        return usage(c, usage_main, NULL);
    if (strcmp(cmd, "--version") == 0) {
        fprintf(c->out, "timerlog %d.%d.%d\n", TIMERLOG_VERSION_MAJOR, TIMERLOG_VERSION_MINOR,
                TIMERLOG_VERSION_PATCH);
        return 0;
    }
    if (strcmp(cmd, "dump") == 0)
        return cmd_dump(c, argc - 2, argv + 2);
    if (strcmp(cmd, "export") == 0)
        return cmd_export(c, argc - 2, argv + 2);
    if (strcmp(cmd, "info") == 0)
        return cmd_info(c, argc - 2, argv + 2);
    if (strcmp(cmd, "stats") == 0)
        return cmd_stats(c, argc - 2, argv + 2);
    if (strcmp(cmd, "diff") == 0)
        return timerlog_diff(argc - 2, argv + 2, c->out, c->err);
    if (strcmp(cmd, "report") == 0)
        return timerlog_report(argc - 2, argv + 2, c->out, c->err);
    return usage(c, usage_main, "unknown command %s", cmd);
}

int timerlog_main(int argc, char **argv, FILE *out, FILE *err)
{
    cli run = {.out = out, .err = err};
    int status = run_command(&run, argc, argv);
    input_release();
    return status;
}
