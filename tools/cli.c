/*
 * The timerlog command (tools/timerlog.c describes its use and exit status)
 * as a function, for the program and for the fuzz target: it writes to the
 * streams it is given, never exits, and frees all it takes.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <timerlog/timerlog.h>

#include "cli.h"

#define EXIT_DAMAGED 1
#define EXIT_USAGE 2

static const char *const usage_main =
    "usage: timerlog COMMAND [OPTIONS] FILE...\n"
    "\n"
    "Reads libtimerlog streams (files written with TIMERLOG_OUTPUT or\n"
    "tlog_config.stream_path); the format is found from the file's magic, not\n"
    "its name. Several files (ranks of one run) can be read together.\n"
    "\n"
    "commands:\n"
    "  dump     print frame trees in the standard text format\n"
    "  export   write Chrome trace, JSON or CSV\n"
    "  info     describe files: header, ranks, threads, sites, frames, damage\n"
    "\n"
    "'timerlog COMMAND --help' describes a command. Exit status: 0 when all\n"
    "files read cleanly, 1 when one is unreadable or damaged (what came before\n"
    "the damage is still shown), 2 for a usage error.\n";

static const char *const usage_dump =
    "usage: timerlog dump [--frame N | --frames A-B] [--thread NAME] [--root TITLE]\n"
    "                     [--aggregate] [--min-percent P] FILE...\n"
    "\n"
    "Prints frames as tlog_dump does. By default every frame, each after a\n"
    "'# FILE: frame N' line; with --frame N only frame N of one file, exactly\n"
    "as the recording process would have printed it. The selections combine:\n"
    "a frame is shown when it matches all of them.\n"
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
    "usage: timerlog info FILE...\n"
    "\n"
    "Shows each file's header (version, rank, process, start time), its\n"
    "threads, devices and call sites, how many frames it holds, and any damage\n"
    "with its byte offset.\n";

/* One run of the command: where it writes, and how it is going. */
typedef struct cli {
    FILE *out, *err;
    int status;   /* 0, or EXIT_DAMAGED once a file could not be read */
    /* Progress: see progress_start. */
    bool progress_on, progress_shown;
    size_t frames_read;
    double progress_next;
} cli;

static int usage(cli *c, const char *text, const char *problem)
{
    if (problem)
        fprintf(c->err, "timerlog: %s\n\n", problem);
    fputs(text, problem ? c->err : c->out);
    return problem ? EXIT_USAGE : 0;
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
    int rc = tlog_reader_open(path, &r);
    if (rc != TLOG_OK) {
        fprintf(c->err, "timerlog: %s: %s\n", path,
                r ? tlog_reader_error(r) : tlog_strerror(rc));
        tlog_reader_close(r);
        c->status = EXIT_DAMAGED;
        return NULL;
    }
    return r;
}

/* After the last frame: damage, or a file the writer did not end. */
static void report_end(cli *c, tlog_reader *r, const char *path, int rc)
{
    if (rc == TLOG_ENOFRAME) {
        tlog_reader_info info = {.size = sizeof info};
        tlog_reader_get_info(r, &info);
        if (!info.ended)
            fprintf(c->err, "timerlog: %s: warning: %s\n", path, tlog_reader_error(r));
        return;
    }
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
    sel->first = strtoull(s, &end, 10);
    if (end == s)
        return false;
    sel->last = sel->first;
    if (*end == '-') {
        const char *b = end + 1;
        sel->last = strtoull(b, &end, 10);
        if (end == b)
            return false;
    }
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
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? gs->cap * 2 : 8;
        group *p = realloc(gs->g, cap * sizeof *p);
        if (!p)
            return NULL;
        gs->g = p;
        gs->cap = cap;
    }
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

/* Folds `f` into its group's tree. */
static void aggregate(cli *c, groups *gs, const tlog_frame *f)
{
    group *g = group_of(gs, f);
    int rc = g ? fold(&g->acc, f) : TLOG_ENOMEM;
    if (rc != TLOG_OK) {
        fprintf(c->err, "timerlog: cannot merge a frame: %s\n", tlog_strerror(rc));
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
        fprintf(c->out, "%s# thread \"%s\", root \"%s\": %zu frames\n", first ? "" : "\n",
                g->thread, g->root, g->frames);
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

/* Returns the reader when its frames were folded into `gs` (their rows
 * keep its call sites), for closing after the merged trees are printed. */
static tlog_reader *dump_file(cli *c, const char *path, const selection *sel, groups *gs,
                              size_t *shown)
{
    tlog_reader *r = open_stream(c, path);
    if (!r)
        return NULL;
    tlog_frame *f;
    int rc;
    while ((rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        if (sel->aggregate)
            progress_frame(c, path);
        if (selected(sel, f)) {
            tlog_frame_info info = {.size = sizeof info};
            tlog_frame_get_info(f, &info);
            if (sel->aggregate) {
                aggregate(c, gs, f);
            } else {
                if (!sel->single)
                    fprintf(c->out, "%s# %s: frame %" PRIu64 " (rank %u, thread \"%s\")\n",
                            *shown ? "\n" : "", path, info.serial, info.rank,
                            info.thread_name);
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

/* Whether argv[*i] is --thread NAME or --root TITLE: then its value goes
 * into *sel, and an empty one sets *why. */
static bool take_filter(int argc, char **argv, int *i, selection *sel, const char **why)
{
    bool thread = strcmp(argv[*i], "--thread") == 0;
    if ((!thread && strcmp(argv[*i], "--root") != 0) || *i + 1 >= argc)
        return false;
    const char *value = argv[++*i];
    if (!*value)
        *why = thread ? "--thread takes a thread name" : "--root takes a root row's title";
    *(thread ? &sel->thread : &sel->root) = value;
    return true;
}

/* Fails on a write error of the output; says so. */
static void check_output(cli *c)
{
    if (fflush(c->out) != 0 || ferror(c->out)) {
        fprintf(c->err, "timerlog: cannot write the output\n");
        c->status = EXIT_DAMAGED;
    }
}

static int cmd_dump(cli *c, int argc, char **argv)
{
    if (wants_help(argc, argv))
        return usage(c, usage_dump, NULL);
    selection sel = {0, UINT64_MAX, false, false, 0, NULL, NULL};
    int i = 0;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *why = NULL;
        if (take_filter(argc, argv, &i, &sel, &why)) {
            if (why)
                return usage(c, usage_dump, why);
        } else if (strcmp(argv[i], "--aggregate") == 0) {
            sel.aggregate = true;
        } else if ((strcmp(argv[i], "--frame") == 0 || strcmp(argv[i], "--frames") == 0) &&
                   i + 1 < argc) {
            sel.single = strcmp(argv[i], "--frame") == 0;
            if (!parse_range(argv[++i], &sel) || (sel.single && sel.first != sel.last))
                return usage(c, usage_dump, "--frame takes a number, --frames a range A-B");
        } else if (strcmp(argv[i], "--min-percent") == 0 && i + 1 < argc) {
            char *end;
            sel.min_percent = strtod(argv[++i], &end);
            if (end == argv[i] || *end || !(sel.min_percent >= 0))
                return usage(c, usage_dump, "--min-percent takes a number of percent");
        } else {
            return usage(c, usage_dump, "unknown option or missing value");
        }
    }
    if (i >= argc)
        return usage(c, usage_dump, "no FILE given");
    if (sel.single && argc - i > 1 && !sel.aggregate)
        return usage(c, usage_dump, "--frame reads one file");
    size_t shown = 0, nkept = 0;
    groups gs = {NULL, 0, 0};
    /* Merged rows refer to their readers' call sites: no reader may close
     * before the trees are printed. */
    tlog_reader **kept = calloc((size_t)(argc - i), sizeof *kept);
    if (!kept) {
        fprintf(c->err, "timerlog: out of memory\n");
        return EXIT_DAMAGED;
    }
    progress_start(c);
    for (; i < argc; i++) {
        tlog_reader *r = dump_file(c, argv[i], &sel, &gs, &shown);
        if (r)
            kept[nkept++] = r;
    }
    print_groups(c, &gs, &sel);
    free_groups(&gs);
    for (size_t k = 0; k < nkept; k++)
        tlog_reader_close(kept[k]);
    free(kept);
    if (!shown && c->status == 0) {
        fprintf(c->err, "timerlog: no frame selected\n");
        c->status = EXIT_DAMAGED;
    }
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
        if (col->nframes == col->cap) {
            size_t cap = col->cap ? col->cap * 2 : 64;
            tlog_frame **p = realloc(col->frames, cap * sizeof *p);
            if (!p) {
                tlog_frame_release(f);
                progress_done(c);
                fprintf(c->err, "timerlog: out of memory\n");
                c->status = EXIT_DAMAGED;
                return;
            }
            col->frames = p;
            col->cap = cap;
        }
        col->frames[col->nframes++] = f;
    }
    progress_done(c);
    report_end(c, r, path, rc);
}

static int cmd_export(cli *c, int argc, char **argv)
{
    if (wants_help(argc, argv))
        return usage(c, usage_export, NULL);
    int (*export)(const tlog_frame *const *, size_t, FILE *) = NULL;
    const char *out_path = NULL;
    selection sel = {.first = 0, .last = UINT64_MAX};
    int i = 0;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *why = NULL;
        if (take_filter(argc, argv, &i, &sel, &why)) {
            if (why)
                return usage(c, usage_export, why);
        } else if (strcmp(argv[i], "--chrome") == 0) {
            export = tlog_export_chrome;
        } else if (strcmp(argv[i], "--json") == 0) {
            export = tlog_export_json;
        } else if (strcmp(argv[i], "--csv") == 0) {
            export = tlog_export_csv;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else {
            return usage(c, usage_export, "unknown option or missing value");
        }
    }
    if (!export)
        return usage(c, usage_export, "choose --chrome, --json or --csv");
    if (i >= argc)
        return usage(c, usage_export, "no FILE given");
    collected col = {calloc((size_t)argc - (size_t)i, sizeof(tlog_reader *)), 0, NULL, 0, 0};
    if (!col.readers)
        return EXIT_DAMAGED;
    progress_start(c);
    for (; i < argc; i++)
        collect_file(c, &col, &sel, argv[i]);
    if (!col.nframes && c->status == 0 && (sel.thread || sel.root)) {
        fprintf(c->err, "timerlog: no frame selected\n");
        c->status = EXIT_DAMAGED;
    }
    FILE *out = out_path ? fopen(out_path, "w") : c->out;
    if (!out) {
        fprintf(c->err, "timerlog: cannot write %s\n", out_path);
        c->status = EXIT_DAMAGED;
    } else {
        int rc = export((const tlog_frame *const *)col.frames, col.nframes, out);
        if (out != c->out && fclose(out) != 0)
            rc = TLOG_EIO;
        if (rc != TLOG_OK) {
            fprintf(c->err, "timerlog: export failed: %s\n", tlog_strerror(rc));
            c->status = EXIT_DAMAGED;
        }
    }
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

static void print_info(cli *c, tlog_reader *r, const char *path)
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
    fprintf(out, "  threads: %zu\n", info.threads);
    uint32_t id;
    const char *name;
    for (size_t k = 0; (name = tlog_reader_thread(r, k, &id)) != NULL; k++)
        fprintf(out, "    %u %s\n", id, name);
    fprintf(out, "  devices: %zu\n", info.devices);
    for (size_t k = 0; (name = tlog_reader_device(r, k)) != NULL; k++)
        fprintf(out, "    %s\n", name);
    fprintf(out, "  call sites: %zu\n", info.sites);
    const tlog_site *s;
    for (size_t k = 0; (s = tlog_reader_site(r, k)) != NULL; k++)
        fprintf(out, "    %s (%s:%d)\n", s->name, s->file, s->line);
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
    if (argc == 0)
        return usage(c, usage_info, "no FILE given");
    for (int i = 0; i < argc; i++) {
        tlog_reader *r = open_stream(c, argv[i]);
        if (!r)
            continue;
        tlog_frame *f;
        int rc;
        while ((rc = tlog_reader_next(r, &f)) == TLOG_OK)
            tlog_frame_release(f);
        print_info(c, r, argv[i]);
        if (rc != TLOG_ENOFRAME)
            fprintf(c->out, "  damage: %s\n", tlog_reader_error(r));
        report_end(c, r, argv[i], rc);
        tlog_reader_close(r);
    }
    return c->status;
}

int timerlog_main(int argc, char **argv, FILE *out, FILE *err)
{
    cli run = {.out = out, .err = err};
    cli *c = &run;
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
    return usage(c, usage_main, "unknown command");
}
