/*
 * timerlog diff: two runs compared row by row, each frame a sample of every
 * row's total time, the change of each row's median and mean given with a
 * bootstrap interval and a Mann-Whitney U test (diff_stats.h). Its help
 * text (usage_diff) is the reference for what it does.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerlog/timerlog.h>

#include "diff.h"
#include "diff_stats.h"
#include "ending.h"
#include "input.h"
#include "line.h"
#include "map.h"
#include "options.h"
#include "util.h"

static const char *const usage_diff =
    "usage: timerlog diff [OPTIONS] BASE NEW\n"
    "       timerlog diff [OPTIONS] BASE... --vs NEW...\n"
    "\n"
    "Compares two runs row by row: which rows got slower or faster, and whether\n"
    "the change stands out from the frame-to-frame noise. A run is a stream file,\n"
    "or the files of its ranks, the two runs then separated by --vs.\n"
    "\n"
    "Rows match by their path of titles from the frame's root, and kind ((C) or\n"
    "(E)), whatever thread ran the frame. Each frame is one sample of a row's\n"
    "total time, 0 when the frame lacks the row; the k-th frames with one root\n"
    "title in a run's files are averaged into one sample.\n"
    "\n"
    "For a row in both runs: the median and mean, their change with a bootstrap\n"
    "interval, and a two-sided Mann-Whitney U test, its p-value adjusted by\n"
    "Holm's method over all rows compared. Rows are listed by impact, the change\n"
    "of their mean self time as a share of the base frame's mean: the frame's\n"
    "thread's rows first, then work done elsewhere ((E) rows and theirs). A row is\n"
    "slower when its adjusted p is below --alpha and its median grew by more\n"
    "than --threshold (its mean, when its base median is 0). Rows in one run\n"
    "only are listed after the others.\n"
    "\n"
    "  --threshold P  percent a row must grow by to be called slower (5)\n"
    "  --alpha A      significance level, 0 < A < 1 (0.01); the intervals are\n"
    "                 at confidence 1 - A\n"
    "  --resamples N  bootstrap resamples for the intervals (1000; 0: none)\n"
    "  --seed N       seed of the bootstrap (1): the same seed, the same output\n"
    "  --root TITLE   only frames whose root row is titled TITLE\n"
    "  --thread NAME  only frames run by the thread named NAME\n"
    "  --csv, --json  CSV or JSON instead of text\n"
    "  -o OUT         write to OUT instead of standard output\n"
    "\n"
    "Exit status: 0 when no row got slower, 1 when some row did, 2 for a usage\n"
    "error, a file that cannot be read or is damaged, runs without a root title\n"
    "in common, or output that cannot be written.\n";

enum format { FORMAT_TEXT, FORMAT_CSV, FORMAT_JSON };

typedef struct options {
    double threshold;   /* a fraction: 0.05 for 5% */
    double alpha;
    size_t resamples;
    uint64_t seed;
    const char *root, *thread;   /* NULL: any */
    enum format format;
    const char *output;          /* NULL: the output stream */
} options;

/* ------------------------------------------------------------------------ */
/* What a run holds                                                         */
/* ------------------------------------------------------------------------ */

/* Values by frame position; positions past n are 0. */
typedef struct series {
    double *v;
    size_t n, cap;
} series;

/* One row path of one run. */
typedef struct row {
    char *key;       /* per title from the root: kind byte, length, bytes */
    size_t key_len;
    uint64_t hash;
    char *path;      /* titles from the root, joined by " / ", with "(E) "
                      * before the titles of work done elsewhere (worker
                      * threads, devices): one path, one row */
    tlog_kind kind;
    bool elsewhere;  /* an (E) row or under one: not the frame's thread's time */
    char *device;    /* the device of a device row, else NULL */
    series total, self;
    double *samples; /* total per frame, sorted, once the run is read */
} row;

/* The frames of one root title in a run. */
typedef struct root_rows {
    char *title;
    size_t frames;       /* positions: the most frames in one file */
    uint32_t *files_at;  /* files with a frame at each position */
    size_t files_cap;
    size_t in_file;      /* frames of the file being read */
    row *rows;           /* rows[0] is the root */
    size_t nrows, rows_cap;
    tlog_map index;      /* a row's hash -> its place in rows */
} root_rows;

typedef struct run {
    const char *name;    /* "base" or "new" */
    char **paths;
    size_t files, frames;
    root_rows *roots;
    size_t nroots, roots_cap;
} run;

typedef struct diff_cmd {
    options opt;
    FILE *out, *err;
    int status;          /* TIMERLOG_DIFF_TROUBLE once something failed */
    run runs[2];         /* base, new */
} diff_cmd;

static int trouble(diff_cmd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int trouble(diff_cmd *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("timerlog: ", d->err);
    vfprintf(d->err, fmt, ap);
    fputc('\n', d->err);
    va_end(ap);
    d->status = TIMERLOG_DIFF_TROUBLE;
    return TIMERLOG_DIFF_TROUBLE;
}

/* `items`, which holds *cap items of `size` bytes, with room for `need`
 * (the new room zeroed); NULL when memory ran out, `items` then intact. */
static void *grow(void *items, size_t *cap, size_t need, size_t size)
{
    size_t had = *cap;
    if (!tlog_grow_(&items, cap, need, size))
        return NULL;
    memset((char *)items + had * size, 0, (*cap - had) * size);
    return items;
}

static bool series_add(series *s, size_t at, double value)
{
    double *v = grow(s->v, &s->cap, at + 1, sizeof *v);
    if (!v)
        return false;
    s->v = v;
    v[at] += value;
    if (at >= s->n)
        s->n = at + 1;
    return true;
}

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
    for (size_t k = 0; k < n; k++)
        h = (h ^ (unsigned char)p[k]) * 0x100000001b3ull;
    return h;
}

/* The path of a key (see row.key), and whether the row is work done
 * elsewhere. */
static bool describe_key(row *r)
{
    size_t titles = 0, cap = 1;
    for (size_t at = 0; at < r->key_len; titles++) {
        uint32_t len;
        memcpy(&len, r->key + at + 1, sizeof len);
        cap += len + 8;   /* " / " and "(E) " */
        at += 1 + sizeof len + len;
    }
    r->path = malloc(cap);
    if (!r->path)
        return false;
    char *p = r->path;
    for (size_t at = 0, k = 0; k < titles; k++) {
        uint32_t len;
        char kind = r->key[at];
        memcpy(&len, r->key + at + 1, sizeof len);
        const char *title = r->key + at + 1 + sizeof len;
        if (k)
            p += sprintf(p, " / ");
        if (kind == 'E')
            p += sprintf(p, "(E) ");
        r->elsewhere |= kind == 'E';
        memcpy(p, title, len);
        p += len;
        at += 1 + sizeof len + len;
    }
    *p = '\0';
    return true;
}

static row *find_row(const root_rows *g, const char *key, size_t len, uint64_t hash)
{
    const tlog_map *m = &g->index;
    for (size_t at = tlog_map_first_(m, hash); tlog_map_has_(m, at);
         at = tlog_map_next_(m, at, hash)) {
        row *r = &g->rows[m->slots[at].value];
        if (r->key_len == len && memcmp(r->key, key, len) == 0)
            return r;
    }
    return NULL;
}

static row *add_row(root_rows *g, const char *key, size_t len, uint64_t hash,
                    const tlog_node_info *info)
{
    row *rows = g->nrows < UINT32_MAX ? grow(g->rows, &g->rows_cap, g->nrows + 1, sizeof *rows)
                                      : NULL;
    if (!rows)
        return NULL;
    g->rows = rows;
    row *r = &rows[g->nrows];
    r->key = malloc(len);
    r->device = info->device ? strdup(info->device) : NULL;
    if (!r->key || (info->device && !r->device)) {
        free(r->key);
        free(r->device);
        memset(r, 0, sizeof *r);
        return NULL;
    }
    memcpy(r->key, key, len);
    r->key_len = len;
    r->hash = hash;
    r->kind = info->kind;
    g->nrows++;   /* from here on freed with the others */
    if (!describe_key(r) || !tlog_map_put_(&g->index, hash, (uint32_t)(g->nrows - 1)))
        return NULL;
    return r;
}

static void free_root(root_rows *g)
{
    for (size_t k = 0; k < g->nrows; k++) {
        row *r = &g->rows[k];
        free(r->key);
        free(r->path);
        free(r->device);
        free(r->total.v);
        free(r->self.v);
        free(r->samples);
    }
    free(g->rows);
    tlog_map_free_(&g->index);
    free(g->files_at);
    free(g->title);
}

static root_rows *root_of(run *rn, const char *title)
{
    for (size_t k = 0; k < rn->nroots; k++)
        if (strcmp(rn->roots[k].title, title) == 0)
            return &rn->roots[k];
    root_rows *roots = grow(rn->roots, &rn->roots_cap, rn->nroots + 1, sizeof *roots);
    if (!roots)
        return NULL;
    rn->roots = roots;
    root_rows *g = &roots[rn->nroots];
    if (!(g->title = strdup(title)))
        return NULL;
    rn->nroots++;
    return g;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

/* The walk over one frame: the key of the row being visited is built from
 * its parent's, whose length ends[depth - 1] keeps. */
typedef struct walker {
    root_rows *root;
    size_t position;
    char *key;
    size_t len, cap;
    size_t *ends;
    size_t ends_cap;
} walker;

static int visit(void *user, const tlog_node *node, const tlog_node_info *info)
{
    (void)node;
    walker *w = user;
    size_t depth = info->depth > 0 ? (size_t)info->depth : 0;
    const char *title = info->name ? info->name : "";
    uint32_t tlen = (uint32_t)strlen(title);
    w->len = depth ? w->ends[depth - 1] : 0;
    char *key = grow(w->key, &w->cap, w->len + 1 + sizeof tlen + tlen, 1);
    if (key)
        w->key = key;
    size_t *ends = key ? grow(w->ends, &w->ends_cap, depth + 1, sizeof *ends) : NULL;
    if (!ends)
        return TLOG_ENOMEM;
    w->ends = ends;
    w->key[w->len] = info->kind == TLOG_KIND_EXECUTION ? 'E' : 'C';
    memcpy(w->key + w->len + 1, &tlen, sizeof tlen);
    memcpy(w->key + w->len + 1 + sizeof tlen, title, tlen);
    w->len += 1 + sizeof tlen + tlen;
    w->ends[depth] = w->len;
    uint64_t hash = hash_bytes(w->key, w->len);
    row *r = find_row(w->root, w->key, w->len, hash);
    if (!r && !(r = add_row(w->root, w->key, w->len, hash, info)))
        return TLOG_ENOMEM;
    if (!series_add(&r->total, w->position, (double)info->total_ns) ||
        !series_add(&r->self, w->position, (double)info->self_ns))
        return TLOG_ENOMEM;
    return 0;
}

static const char *root_title(const tlog_frame *f)
{
    tlog_node_info info = {.size = sizeof info};
    if (tlog_node_get_info(tlog_frame_root(f), &info) != TLOG_OK || !info.name)
        return "";
    return info.name;
}

static bool selected(const options *opt, const tlog_frame *f)
{
    tlog_frame_info info = {.size = sizeof info};
    tlog_frame_get_info(f, &info);
    const char *thread = info.thread_name ? info.thread_name : "";
    if (opt->thread && strcmp(thread, opt->thread) != 0)
        return false;
    return !opt->root || strcmp(root_title(f), opt->root) == 0;
}

/* Adds one frame at its root's next position in this file. */
static int add_frame(run *rn, walker *w, const tlog_frame *f)
{
    root_rows *g = root_of(rn, root_title(f));
    if (!g)
        return TLOG_ENOMEM;
    size_t at = g->in_file;
    uint32_t *files_at = grow(g->files_at, &g->files_cap, at + 1, sizeof *files_at);
    if (!files_at)
        return TLOG_ENOMEM;
    g->files_at = files_at;
    w->root = g;
    w->position = at;
    int rc = tlog_frame_walk(f, visit, w);
    if (rc != TLOG_OK)
        return rc;
    g->files_at[at]++;
    g->in_file++;
    if (g->in_file > g->frames)
        g->frames = g->in_file;
    rn->frames++;
    return TLOG_OK;
}

/* Opens a file; says why not, naming it. */
static tlog_reader *open_file(diff_cmd *d, const char *path)
{
    tlog_reader *r = NULL;
    int rc = input_open(path, &r);
    if (rc == TLOG_OK)
        return r;
    char msg[INPUT_PROBLEM_SIZE];
    input_problem(msg, sizeof msg, path, r, rc);
    trouble(d, "%s", msg);
    tlog_reader_close(r);
    return NULL;
}

static void read_file(diff_cmd *d, run *rn, walker *w, const char *path)
{
    tlog_reader *r = open_file(d, path);
    if (!r)
        return;
    for (size_t k = 0; k < rn->nroots; k++)
        rn->roots[k].in_file = 0;
    tlog_frame *f;
    int rc;
    while ((rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        int added = selected(&d->opt, f) ? add_frame(rn, w, f) : TLOG_OK;
        tlog_frame_release(f);
        if (added != TLOG_OK) {
            trouble(d, "%s: %s", path, tlog_strerror(added));
            break;
        }
    }
    if (rc != TLOG_OK && !warn_at_end(r, path, rc, d->err))
        trouble(d, "%s: %s", path, tlog_reader_error(r));
    tlog_reader_close(r);
}

static bool read_run(diff_cmd *d, run *rn)
{
    walker w = {0};
    for (size_t k = 0; k < rn->files; k++)
        read_file(d, rn, &w, rn->paths[k]);
    free(w.key);
    free(w.ends);
    if (rn->frames)
        return true;
    if (d->status != TIMERLOG_DIFF_TROUBLE)
        trouble(d, "the %s run holds no frames%s", rn->name,
                d->opt.root || d->opt.thread ? " of the selection" : "");
    return false;
}

/* Each row's total per frame position, averaged over the files with a frame
 * there, sorted: its samples. */
static bool make_samples(root_rows *g)
{
    for (size_t k = 0; k < g->nrows; k++) {
        row *r = &g->rows[k];
        if (!(r->samples = malloc(g->frames * sizeof *r->samples)))
            return false;
        for (size_t at = 0; at < g->frames; at++)
            r->samples[at] = (at < r->total.n ? r->total.v[at] : 0) / g->files_at[at];
        diffstat_sort(r->samples, g->frames);
    }
    return true;
}

/* The mean over frame positions of a series, averaged over files as the
 * samples are. */
static double series_mean(const root_rows *g, const series *s)
{
    double sum = 0;
    for (size_t at = 0; at < s->n && at < g->frames; at++)
        sum += s->v[at] / g->files_at[at];
    return g->frames ? sum / (double)g->frames : 0;
}

/* ------------------------------------------------------------------------ */
/* Comparing                                                                */
/* ------------------------------------------------------------------------ */

enum verdict { VERDICT_NONE, VERDICT_SLOWER, VERDICT_FASTER };

/* One row of the report: in both runs (base and new set), or in one. */
typedef struct outcome {
    const row *base, *new;
    double base_median, new_median, base_mean, new_mean;
    bool has_intervals;
    diffstat_interval median_change, mean_change;
    diffstat_mwu test;
    double p_adjusted;
    double change;   /* relative change the verdict weighs; NAN if base is 0 */
    double impact;   /* change of mean self time, % of the base frame's mean;
                      * for a row in one run only: its mean, % of its frame's */
    enum verdict verdict;
} outcome;

/* The comparison of one root title. */
typedef struct root_diff {
    const char *title;
    const root_rows *base, *new;   /* NULL: not in that run */
    outcome *rows;   /* in both, by impact */
    size_t nrows;
    outcome *only[2];   /* in base only, in new only, by share */
    size_t nonly[2];
} root_diff;

static double median_of(const row *r, const root_rows *g)
{
    return diffstat_quantile(r->samples, g->frames, 0.5);
}

static double mean_of(const row *r, const root_rows *g)
{
    return diffstat_mean(r->samples, g->frames);
}

static bool compare_row(const diff_cmd *d, const root_rows *gb, const row *b,
                        const root_rows *gn, const row *n, outcome *o)
{
    o->base = b;
    o->new = n;
    o->base_median = median_of(b, gb);
    o->new_median = median_of(n, gn);
    o->base_mean = mean_of(b, gb);
    o->new_mean = mean_of(n, gn);
    if (diffstat_mann_whitney(b->samples, gb->frames, n->samples, gn->frames, &o->test) != 0)
        return false;
    if (d->opt.resamples) {
        /* Each row draws its own numbers, so that its interval does not
         * depend on which other rows the runs have. */
        if (diffstat_bootstrap(b->samples, gb->frames, n->samples, gn->frames,
                               d->opt.resamples, 1 - d->opt.alpha,
                               d->opt.seed ^ b->hash, &o->median_change,
                               &o->mean_change) != 0)
            return false;
        o->has_intervals = true;
    }
    if (o->base_median > 0)
        o->change = (o->new_median - o->base_median) / o->base_median;
    else if (o->base_mean > 0)
        o->change = (o->new_mean - o->base_mean) / o->base_mean;
    else
        o->change = o->new_mean > 0 ? INFINITY : 0;
    double frame = mean_of(&gb->rows[0], gb);
    double self_change = series_mean(gn, &n->self) - series_mean(gb, &b->self);
    o->impact = frame > 0 ? 100 * self_change / frame : 0;
    return true;
}

static double magnitude(const outcome *o)
{
    return fabs(o->impact);
}

/* The frame's thread's rows first, whose self times add up to the frame's
 * time, then work done elsewhere (workers, devices), each by impact. */
static int by_impact(const void *pa, const void *pb)
{
    const outcome *a = pa, *b = pb;
    const row *ra = a->base ? a->base : a->new, *rb = b->base ? b->base : b->new;
    if (ra->elsewhere != rb->elsewhere)
        return ra->elsewhere ? 1 : -1;
    double ma = magnitude(a), mb = magnitude(b);
    if (ma != mb)
        return ma < mb ? 1 : -1;
    return strcmp(ra->path, rb->path);
}

/* Rows of run `side` (0 base, 1 new) missing from the other run's root
 * `other` (NULL: the root itself is missing there). */
static bool list_only(root_diff *rd, int side, const root_rows *g, const root_rows *other)
{
    rd->only[side] = calloc(g->nrows, sizeof *rd->only[side]);
    if (!rd->only[side])
        return false;
    double frame = mean_of(&g->rows[0], g);
    for (size_t k = 0; k < g->nrows; k++) {
        const row *r = &g->rows[k];
        if (other && find_row(other, r->key, r->key_len, r->hash))
            continue;
        outcome *o = &rd->only[side][rd->nonly[side]++];
        *(side ? &o->new : &o->base) = r;
        *(side ? &o->new_mean : &o->base_mean) = mean_of(r, g);
        *(side ? &o->new_median : &o->base_median) = median_of(r, g);
        o->impact = frame > 0 ? 100 * mean_of(r, g) / frame : 0;
        o->change = NAN;
    }
    qsort(rd->only[side], rd->nonly[side], sizeof *rd->only[side], by_impact);
    return true;
}

static bool compare_root(const diff_cmd *d, root_diff *rd)
{
    const root_rows *gb = rd->base, *gn = rd->new;
    if (gb && !list_only(rd, 0, gb, gn))
        return false;
    if (gn && !list_only(rd, 1, gn, gb))
        return false;
    if (!gb || !gn)
        return true;
    rd->rows = calloc(gb->nrows, sizeof *rd->rows);
    if (!rd->rows)
        return false;
    for (size_t k = 0; k < gb->nrows; k++) {
        const row *b = &gb->rows[k];
        const row *n = find_row(gn, b->key, b->key_len, b->hash);
        if (n && !compare_row(d, gb, b, gn, n, &rd->rows[rd->nrows++]))
            return false;
    }
    qsort(rd->rows, rd->nrows, sizeof *rd->rows, by_impact);
    return true;
}

/* Says so when a root has too few frames for any change to be significant:
 * even runs whose every frame is slower than every frame of the other give
 * p = 2 / C(n_a + n_b, n_a), which Holm's adjustment multiplies by the
 * count of rows compared (the smallest p of a family is weighed by all). */
static void warn_few_frames(const diff_cmd *d, const root_diff *rd, size_t compared)
{
    if (!rd->base || !rd->new || !rd->nrows)
        return;
    double smallest = 2 * exp(-diffstat_log_choose(rd->base->frames, rd->new->frames));
    double adjusted = fmin(1.0, smallest * (double)compared);
    if (adjusted < d->opt.alpha)
        return;
    fputs("timerlog: warning: root \"", d->err);
    tlog_put_line_text_(d->err, rd->title);
    fprintf(d->err, "\": with %zu and %zu frames no change can be significant at alpha %g "
            "(the smallest p is %.2g; %.2g adjusted over the %zu row%s compared)\n",
            rd->base->frames, rd->new->frames, d->opt.alpha, smallest, adjusted, compared,
            compared == 1 ? "" : "s");
}

/* Adjusts the p-values of every row compared, as one family, and gives each
 * its verdict; returns the count of slower rows, or -1 without memory. */
static long judge(const diff_cmd *d, root_diff *rds, size_t nrds)
{
    size_t n = 0;
    for (size_t k = 0; k < nrds; k++)
        n += rds[k].nrows;
    double *p = malloc((n ? n : 1) * sizeof *p);
    if (!p)
        return -1;
    size_t at = 0;
    for (size_t k = 0; k < nrds; k++)
        for (size_t j = 0; j < rds[k].nrows; j++)
            p[at++] = rds[k].rows[j].test.p;
    if (diffstat_holm(p, n, p) != 0) {
        free(p);
        return -1;
    }
    long slower = 0;
    at = 0;
    for (size_t k = 0; k < nrds; k++)
        for (size_t j = 0; j < rds[k].nrows; j++) {
            outcome *o = &rds[k].rows[j];
            o->p_adjusted = p[at++];
            bool significant = o->p_adjusted < d->opt.alpha;
            if (significant && o->change > d->opt.threshold)
                o->verdict = VERDICT_SLOWER;
            else if (significant && o->change < -d->opt.threshold)
                o->verdict = VERDICT_FASTER;
            slower += o->verdict == VERDICT_SLOWER;
        }
    free(p);
    return slower;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

/* A time in ns with a unit that keeps four figures: "2.004 ms". */
static void format_time(char *buf, size_t size, double ns, bool sign)
{
    static const struct {
        double scale;
        const char *unit;
    } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof *units && fabs(ns) < units[u].scale * 0.9995)
        u++;
    double v = ns / units[u].scale;
    int decimals = fabs(v) >= 99.995 ? 1 : fabs(v) >= 9.9995 ? 2 : 3;
    if (u + 1 == sizeof units / sizeof *units)
        decimals = 0;
    snprintf(buf, size, sign ? "%+.*f %s" : "%.*f %s", decimals, v, units[u].unit);
}

/* A change of `delta` ns against `base`: in percent of base, or as a time
 * when base is 0. */
static void format_change(char *buf, size_t size, double delta, double base)
{
    if (base > 0)
        snprintf(buf, size, "%+.2f%%", 100 * delta / base);
    else
        format_time(buf, size, delta, true);
}

static void format_with_interval(char *buf, size_t size, double delta, double base,
                                 const diffstat_interval *in)
{
    char mid[32], lo[32], hi[32];
    format_change(mid, sizeof mid, delta, base);
    if (!in) {
        snprintf(buf, size, "%s", mid);
        return;
    }
    format_change(lo, sizeof lo, in->low, base);
    format_change(hi, sizeof hi, in->high, base);
    snprintf(buf, size, "%s [%s, %s]", mid, lo, hi);
}

static const char *verdict_word(enum verdict v, bool text)
{
    return v == VERDICT_SLOWER ? "slower" : v == VERDICT_FASTER ? "faster" : text ? "-" : "none";
}

/* A row's path, the end of its line: titles from the files as one line. */
static void put_line(FILE *out, const char *path)
{
    tlog_put_line_text_(out, path);
    fputc('\n', out);
}

static void text_row(FILE *out, const outcome *o)
{
    char base[32], median[128], mean[128], p[16];
    format_time(base, sizeof base, o->base_median, false);
    format_with_interval(median, sizeof median, o->new_median - o->base_median,
                         o->base_median, o->has_intervals ? &o->median_change : NULL);
    format_with_interval(mean, sizeof mean, o->new_mean - o->base_mean, o->base_mean,
                         o->has_intervals ? &o->mean_change : NULL);
    snprintf(p, sizeof p, "%.2g", o->p_adjusted);
    fprintf(out, "  %+7.2f%%  %10s  %-31s  %-31s  %8s  %-6s  ", o->impact, base, median,
            mean, p, verdict_word(o->verdict, true));
    put_line(out, o->base->path);
}

static void text_only(FILE *out, const root_diff *rd, int side)
{
    const char *names[] = {"base", "new"};
    if (!rd->nonly[side])
        return;
    fprintf(out, "  only in %s (mean, share of the %s frame's mean):\n", names[side],
            names[side]);
    for (size_t k = 0; k < rd->nonly[side]; k++) {
        const outcome *o = &rd->only[side][k];
        char mean[32];
        format_time(mean, sizeof mean, side ? o->new_mean : o->base_mean, false);
        fprintf(out, "    %10s  %6.2f%%  ", mean, o->impact);
        put_line(out, (side ? o->new : o->base)->path);
    }
}

static void text_files(FILE *out, const run *rn)
{
    fprintf(out, "%-5s", rn->name);
    for (size_t k = 0; k < rn->files; k++)
        fprintf(out, " %s", rn->paths[k]);
    fprintf(out, " (%zu frames)\n", rn->frames);
}

static void write_text(const diff_cmd *d, FILE *out, const root_diff *rds, size_t nrds,
                       long slower)
{
    size_t compared = 0;
    for (size_t k = 0; k < nrds; k++)
        compared += rds[k].nrows;
    text_files(out, &d->runs[0]);
    text_files(out, &d->runs[1]);
    fprintf(out, "%zu rows compared: Mann-Whitney U, Holm-adjusted p < %g is significant; "
            "slower or faster beyond %g%%", compared, d->opt.alpha, 100 * d->opt.threshold);
    if (d->opt.resamples)
        fprintf(out, "; %g%% intervals from %zu resamples", 100 * (1 - d->opt.alpha),
                d->opt.resamples);
    fputs("\n", out);
    for (size_t k = 0; k < nrds; k++) {
        const root_diff *rd = &rds[k];
        fputs("\n# root \"", out);
        tlog_put_line_text_(out, rd->title);
        fputs("\": ", out);
        if (!rd->base || !rd->new) {
            fprintf(out, "only in %s (%zu frames)\n", rd->base ? "base" : "new",
                    (rd->base ? rd->base : rd->new)->frames);
        } else {
            fprintf(out, "%zu frames in base, %zu in new\n", rd->base->frames,
                    rd->new->frames);
            char median[48], mean[48];
            if (d->opt.resamples) {
                snprintf(median, sizeof median, "median change [%g%% interval]",
                         100 * (1 - d->opt.alpha));
                snprintf(mean, sizeof mean, "mean change [%g%% interval]",
                         100 * (1 - d->opt.alpha));
            } else {
                snprintf(median, sizeof median, "median change");
                snprintf(mean, sizeof mean, "mean change");
            }
            fprintf(out, "  %8s  %10s  %-31s  %-31s  %8s  %-6s  %s\n", "impact",
                    "base median", median, mean, "p (adj)", "", "row");
            for (size_t j = 0; j < rd->nrows; j++)
                text_row(out, &rd->rows[j]);
        }
        text_only(out, rd, 0);
        text_only(out, rd, 1);
    }
    if (slower)
        fprintf(out, "\n%ld row%s slower\n", slower, slower == 1 ? "" : "s");
    else
        fprintf(out, "\nno row slower\n");
}

/* ------------------------------------------------------------------------ */
/* CSV and JSON                                                             */
/* ------------------------------------------------------------------------ */

static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* A number, or nothing for one that is not finite. */
static void csv_number(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, ",%.10g", v);
    else
        fputc(',', out);
}

static void csv_row(FILE *out, const char *root, const char *in, const outcome *o)
{
    const row *r = o->base ? o->base : o->new;
    csv_field(out, root);
    fputc(',', out);
    csv_field(out, r->path);
    fprintf(out, ",%s,", r->kind == TLOG_KIND_EXECUTION ? "E" : "C");
    csv_field(out, r->device ? r->device : "");
    fprintf(out, ",%s", in);
    bool both = o->base && o->new, ci = both && o->has_intervals;
    double values[] = {
        o->base ? o->base_median : NAN, o->new ? o->new_median : NAN,
        o->base ? o->base_mean : NAN, o->new ? o->new_mean : NAN,
        both ? o->new_median - o->base_median : NAN,
        ci ? o->median_change.low : NAN, ci ? o->median_change.high : NAN,
        both ? o->new_mean - o->base_mean : NAN,
        ci ? o->mean_change.low : NAN, ci ? o->mean_change.high : NAN,
        both ? 100 * o->change : NAN, o->impact,
        both ? o->test.u : NAN, both ? o->test.p : NAN, both ? o->p_adjusted : NAN,
    };
    for (size_t k = 0; k < sizeof values / sizeof *values; k++)
        csv_number(out, values[k]);
    fprintf(out, ",%s,%s\n", both ? (o->test.exact ? "yes" : "no") : "",
            both ? verdict_word(o->verdict, false) : "");
}

static void write_csv(FILE *out, const root_diff *rds, size_t nrds)
{
    fputs("root,path,kind,device,in,base_median_ns,new_median_ns,base_mean_ns,new_mean_ns,"
          "median_change_ns,median_change_low_ns,median_change_high_ns,mean_change_ns,"
          "mean_change_low_ns,mean_change_high_ns,change_percent,impact_percent,u,p,"
          "p_adjusted,exact,verdict\n", out);
    for (size_t k = 0; k < nrds; k++) {
        const root_diff *rd = &rds[k];
        for (size_t j = 0; j < rd->nrows; j++)
            csv_row(out, rd->title, "both", &rd->rows[j]);
        for (int side = 0; side < 2; side++)
            for (size_t j = 0; j < rd->nonly[side]; j++)
                csv_row(out, rd->title, side ? "new" : "base", &rd->only[side][j]);
    }
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p++);
        } else if (*p < 0x20) {
            fprintf(out, "\\u%04x", *p++);
        } else if (*p < 0x80) {
            fputc(*p++, out);
        } else {
            size_t n = tlog_utf8_length_(p);
            if (n) {
                fwrite(p, 1, n, out);
                p += n;
            } else {
                fputs("\xef\xbf\xbd", out);
                p++;
            }
        }
    }
    fputc('"', out);
}

static void json_number(FILE *out, const char *name, double v)
{
    fprintf(out, ",");
    json_string(out, name);
    if (isfinite(v))
        fprintf(out, ":%.17g", v);
    else
        fputs(":null", out);
}

static void json_interval(FILE *out, const char *name, const outcome *o,
                          const diffstat_interval *in)
{
    fprintf(out, ",\"%s\":", name);
    if (o->has_intervals)
        fprintf(out, "[%.17g,%.17g]", in->low, in->high);
    else
        fputs("null", out);
}

static void json_row(FILE *out, const outcome *o, bool first)
{
    const row *r = o->base ? o->base : o->new;
    fputs(first ? "\n    {\"path\":" : ",\n    {\"path\":", out);
    json_string(out, r->path);
    fprintf(out, ",\"kind\":\"%s\",\"device\":", r->kind == TLOG_KIND_EXECUTION ? "E" : "C");
    if (r->device)
        json_string(out, r->device);
    else
        fputs("null", out);
    if (o->base && o->new) {
        json_number(out, "base_median_ns", o->base_median);
        json_number(out, "new_median_ns", o->new_median);
        json_number(out, "base_mean_ns", o->base_mean);
        json_number(out, "new_mean_ns", o->new_mean);
        json_number(out, "median_change_ns", o->new_median - o->base_median);
        json_interval(out, "median_change_interval_ns", o, &o->median_change);
        json_number(out, "mean_change_ns", o->new_mean - o->base_mean);
        json_interval(out, "mean_change_interval_ns", o, &o->mean_change);
        json_number(out, "change_percent", 100 * o->change);
        json_number(out, "impact_percent", o->impact);
        json_number(out, "u", o->test.u);
        json_number(out, "p", o->test.p);
        json_number(out, "p_adjusted", o->p_adjusted);
        fprintf(out, ",\"exact\":%s,\"verdict\":\"%s\"}", o->test.exact ? "true" : "false",
                verdict_word(o->verdict, false));
    } else {
        json_number(out, "median_ns", o->base ? o->base_median : o->new_median);
        json_number(out, "mean_ns", o->base ? o->base_mean : o->new_mean);
        json_number(out, "share_percent", o->impact);
        fputc('}', out);
    }
}

static void json_rows(FILE *out, const char *name, const outcome *rows, size_t n)
{
    fprintf(out, ",\n   \"%s\":[", name);
    for (size_t k = 0; k < n; k++)
        json_row(out, &rows[k], k == 0);
    fputs("]", out);
}

static void json_run(FILE *out, const run *rn)
{
    fprintf(out, "\"%s\":{\"files\":[", rn->name);
    for (size_t k = 0; k < rn->files; k++) {
        if (k)
            fputc(',', out);
        json_string(out, rn->paths[k]);
    }
    fprintf(out, "],\"frames\":%zu},\n ", rn->frames);
}

static void write_json(const diff_cmd *d, FILE *out, const root_diff *rds, size_t nrds,
                       long slower)
{
    fputs("{", out);
    json_run(out, &d->runs[0]);
    json_run(out, &d->runs[1]);
    fprintf(out, "\"alpha\":%.17g,\"threshold_percent\":%.17g,\"resamples\":%zu,"
            "\"seed\":%" PRIu64 ",\"slower\":%ld,\n \"roots\":[",
            d->opt.alpha, 100 * d->opt.threshold, d->opt.resamples, d->opt.seed, slower);
    for (size_t k = 0; k < nrds; k++) {
        const root_diff *rd = &rds[k];
        fputs(k ? ",\n  {\"root\":" : "\n  {\"root\":", out);
        json_string(out, rd->title);
        fprintf(out, ",\"base_frames\":%zu,\"new_frames\":%zu",
                rd->base ? rd->base->frames : 0, rd->new ? rd->new->frames : 0);
        json_rows(out, "rows", rd->rows, rd->nrows);
        json_rows(out, "only_in_base", rd->only[0], rd->nonly[0]);
        json_rows(out, "only_in_new", rd->only[1], rd->nonly[1]);
        fputs("}", out);
    }
    fputs("\n]}\n", out);
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */
/* ------------------------------------------------------------------------ */

static int usage(diff_cmd *d, const char *problem, ...) __attribute__((format(printf, 2, 3)));

static int usage(diff_cmd *d, const char *problem, ...)
{
    if (!problem) {
        fputs(usage_diff, d->out);
        return TIMERLOG_DIFF_SAME;
    }
    va_list ap;
    va_start(ap, problem);
    fputs("timerlog: ", d->err);
    vfprintf(d->err, problem, ap);
    fputs("\n", d->err);
    va_end(ap);
    put_synopsis(d->err, usage_diff);
    return TIMERLOG_DIFF_TROUBLE;
}

/* A number with nothing after it but, where `percent`, a '%'. */
static bool parse_number(const char *s, bool percent, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (percent && end != s && *end == '%')
        end++;
    return end != s && !*end && errno == 0 && isfinite(*v);
}

static bool parse_count(const char *s, uint64_t max, uint64_t *v)
{
    char *end;
    return digits_arg(s, v, &end) && !*end && *v <= max;
}

static const option_value valued[] = {
    {"--threshold", "a percentage of at least 0, such as 5%"},
    {"--alpha", "a number between 0 and 1, such as 0.01"},
    {"--resamples", "a count from 0 to 1000000"},
    {"--seed", "a whole number from 0 to 2^64 - 1"},
    {"--root", "a root row's title"},
    {"--thread", "a thread name"},
    {"-o", "the path to write to"},
    {NULL, NULL},
};

/* The option argv[i] with a bad or missing value, or unknown, named. */
static int bad_option(diff_cmd *d, int argc, char **argv, int i)
{
    char msg[512];
    option_problem(valued, argc, argv, i, msg, sizeof msg);
    return usage(d, "%s", msg);
}

/* Reads the option at argv[*i] (and its value); false if it is bad. */
static bool take_option(options *opt, int argc, char **argv, int *i)
{
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    double x;
    uint64_t n;
    if (strcmp(o, "--csv") == 0 || strcmp(o, "--json") == 0) {
        opt->format = o[2] == 'c' ? FORMAT_CSV : FORMAT_JSON;
        return true;
    }
    if (!v)
        return false;
    if (strcmp(o, "--threshold") == 0 && parse_number(v, true, &x) && x >= 0)
        opt->threshold = x / 100;
    else if (strcmp(o, "--alpha") == 0 && parse_number(v, false, &x) && x > 0 && x < 1)
        opt->alpha = x;
    else if (strcmp(o, "--resamples") == 0 && parse_count(v, 1000000, &n))
        opt->resamples = (size_t)n;
    else if (strcmp(o, "--seed") == 0 && parse_count(v, UINT64_MAX, &n))
        opt->seed = n;
    else if (strcmp(o, "--root") == 0 && *v)
        opt->root = v;
    else if (strcmp(o, "--thread") == 0 && *v)
        opt->thread = v;
    else if (strcmp(o, "-o") == 0 && *v)
        opt->output = v;
    else
        return false;
    ++*i;
    return true;
}

/* The files after the options: BASE NEW, or BASE... --vs NEW... */
static int take_files(diff_cmd *d, int argc, char **argv)
{
    int vs = -1;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--vs") == 0) {
            if (vs >= 0)
                return usage(d, "--vs is given twice");
            vs = i;
        }
    if (vs < 0 && argc != 2)
        return usage(d, argc < 2 ? "give two files, BASE and NEW"
                                 : "give BASE and NEW, or separate the runs' files with --vs");
    if (vs == 0 || vs == argc - 1)
        return usage(d, "--vs needs files on both sides");
    input_name_stdin(argv, (size_t)argc);
    int split = vs < 0 ? 1 : vs;
    d->runs[0] = (run){.name = "base", .paths = argv, .files = (size_t)split};
    d->runs[1] = (run){.name = "new", .paths = argv + split + (vs >= 0),
                       .files = (size_t)(argc - split - (vs >= 0))};
    for (size_t r = 0; r < 2; r++)
        for (size_t k = 0; k < d->runs[r].files; k++)
            if (!d->runs[r].paths[k][0])
                return usage(d, "a file name is empty");
    for (size_t r = 0; r < 2; r++)
        if (output_over_input(d->opt.output, d->runs[r].paths, d->runs[r].files, d->err))
            return TIMERLOG_DIFF_TROUBLE;
    return TIMERLOG_DIFF_SAME;
}

/* The roots of both runs, the base's first, in order of appearance. */
static root_diff *pair_roots(diff_cmd *d, size_t *n, size_t *common)
{
    run *b = &d->runs[0], *nw = &d->runs[1];
    root_diff *rds = calloc(b->nroots + nw->nroots + 1, sizeof *rds);
    if (!rds)
        return NULL;
    *n = *common = 0;
    for (size_t k = 0; k < b->nroots; k++) {
        root_diff *rd = &rds[(*n)++];
        rd->title = b->roots[k].title;
        rd->base = &b->roots[k];
        for (size_t j = 0; j < nw->nroots; j++)
            if (strcmp(nw->roots[j].title, rd->title) == 0)
                rd->new = &nw->roots[j];
        *common += rd->new != NULL;
    }
    for (size_t j = 0; j < nw->nroots; j++) {
        bool seen = false;
        for (size_t k = 0; k < b->nroots; k++)
            seen |= strcmp(b->roots[k].title, nw->roots[j].title) == 0;
        if (!seen)
            rds[(*n)++] = (root_diff){.title = nw->roots[j].title, .new = &nw->roots[j]};
    }
    return rds;
}

static void free_roots(root_diff *rds, size_t n)
{
    for (size_t k = 0; rds && k < n; k++) {
        free(rds[k].rows);
        free(rds[k].only[0]);
        free(rds[k].only[1]);
    }
    free(rds);
}

static void write_report(diff_cmd *d, const root_diff *rds, size_t n, long slower)
{
    errno = 0;
    FILE *out = d->opt.output ? fopen(d->opt.output, "w") : d->out;
    if (!out) {
        trouble(d, "cannot write %s: %s", d->opt.output, strerror(errno));
        return;
    }
    if (d->opt.format == FORMAT_CSV)
        write_csv(out, rds, n);
    else if (d->opt.format == FORMAT_JSON)
        write_json(d, out, rds, n, slower);
    else
        write_text(d, out, rds, n, slower);
    /* The stream's error is read before fclose, after which it is gone. */
    bool failed = ferror(out) != 0;
    int why = failed ? errno : 0;
    errno = 0;
    if (d->opt.output ? fclose(out) != 0 : fflush(out) != 0 || ferror(out)) {
        failed = true;
        why = why ? why : errno;
    }
    if (failed)
        trouble(d, "cannot write %s: %s", d->opt.output ? d->opt.output : "the output",
                strerror(why ? why : EIO));
}

/* Reads, compares and reports; the status. */
static int run_diff(diff_cmd *d)
{
    bool read = read_run(d, &d->runs[0]);
    read = read_run(d, &d->runs[1]) && read;
    if (!read)
        return TIMERLOG_DIFF_TROUBLE;
    for (size_t r = 0; r < 2; r++)
        for (size_t k = 0; k < d->runs[r].nroots; k++)
            if (!make_samples(&d->runs[r].roots[k]))
                return trouble(d, "out of memory");
    size_t n, common;
    root_diff *rds = pair_roots(d, &n, &common);
    if (!rds)
        return trouble(d, "out of memory");
    bool ok = true;
    size_t compared = 0;
    for (size_t k = 0; k < n && ok; k++) {
        ok = compare_root(d, &rds[k]);
        compared += rds[k].nrows;
    }
    for (size_t k = 0; k < n && ok; k++)
        warn_few_frames(d, &rds[k], compared);
    long slower = ok ? judge(d, rds, n) : -1;
    if (slower < 0) {
        free_roots(rds, n);
        return trouble(d, "out of memory");
    }
    write_report(d, rds, n, slower);
    free_roots(rds, n);
    if (!common)
        return trouble(d, "no root title is in both runs: nothing to compare");
    return d->status ? d->status : slower ? TIMERLOG_DIFF_SLOWER : TIMERLOG_DIFF_SAME;
}

static void free_run(run *rn)
{
    for (size_t k = 0; k < rn->nroots; k++)
        free_root(&rn->roots[k]);
    free(rn->roots);
}

int timerlog_diff(int argc, char **argv, FILE *out, FILE *err)
{
    diff_cmd cmd = {.out = out, .err = err,
                    .opt = {.threshold = 0.05, .alpha = 0.01, .resamples = 1000, .seed = 1}};
    diff_cmd *d = &cmd;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(d, NULL);
    static const char *const formats[] = {"--csv", "--json", NULL};
    const char *format_given = NULL;
    int i = 0;
    for (; i < argc && is_option(argv[i]) && strcmp(argv[i], "--vs") != 0; i++) {
        if (!one_of(formats, argv[i], &format_given))
            return usage(d, "%s and %s: give one of them", format_given, argv[i]);
        if (!take_option(&d->opt, argc, argv, &i))
            return bad_option(d, argc, argv, i);
    }
    int rc = take_files(d, argc - i, argv + i);
    if (rc != TIMERLOG_DIFF_SAME)
        return rc;
    rc = run_diff(d);
    free_run(&d->runs[0]);
    free_run(&d->runs[1]);
    return rc;
}
