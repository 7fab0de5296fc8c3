/* The text dump: one row per node, in the format of the product brief. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "frame.h"
#include "log.h"
#include "summary.h"
#include "text.h"
#include "tree.h"

/* Rows' text, made in memory and written a buffer at a time: most of a
 * large dump's time went to formatting through stdio call by call, then to
 * a call per row. */
typedef struct line {
    FILE *out;
    size_t len;
    char buf[4096];
} line;

static void flush(line *l)
{
    fwrite(l->buf, 1, l->len, l->out);
    l->len = 0;
}

static void put_bytes(line *l, const char *s, size_t n)
{
    while (n) {
        if (l->len == sizeof l->buf)
            flush(l);
        size_t k = sizeof l->buf - l->len < n ? sizeof l->buf - l->len : n;
        memcpy(l->buf + l->len, s, k);
        l->len += k;
        s += k;
        n -= k;
    }
}

static void put_text(line *l, const char *s)
{
    put_bytes(l, s, strlen(s));
}

/* v in decimal, at least `width` digits (zero-padded). */
static void put_uint(line *l, uint64_t v, int width)
{
    char digits[24];
    int n = 0;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v || n < width);
    put_bytes(l, digits + sizeof digits - n, (size_t)n);
}

static void put_line_micros(line *l, uint64_t us)
{
    put_uint(l, us / 1000000u, 1);
    put_bytes(l, ".", 1);
    put_uint(l, us % 1000000u, 6);
    put_bytes(l, "s", 1);
}

/* Seconds with microsecond digits, rounded. */
static void put_line_seconds(line *l, uint64_t ns)
{
    put_line_micros(l, ns / 1000u + (ns % 1000u >= 500u));
}

static void put_prefix(line *l, int depth, int kind)
{
    if (depth == 0) {
        put_bytes(l, "> ", 2);
        return;
    }
    for (int d = 1; d < depth; d++)
        put_bytes(l, ". ", 2);
    put_bytes(l, kind == TLOG_KIND_EXECUTION ? "==> " : "|-> ", 4);
}

/* The same for text written piece by piece, beside a row's line. */
static void put_micros(FILE *out, uint64_t us)
{
    line l = {.out = out};
    put_line_micros(&l, us);
    flush(&l);
}

static void put_seconds(FILE *out, uint64_t ns)
{
    line l = {.out = out};
    put_line_seconds(&l, ns);
    flush(&l);
}

void tlog_put_seconds_(FILE *out, uint64_t ns)
{
    put_seconds(out, ns);
}

void tlog_dump_prefix_(FILE *out, int depth, int kind)
{
    line l = {.out = out};
    put_prefix(&l, depth, kind);
    flush(&l);
}

static void put_column(FILE *out, const char *label, bool known, uint64_t ns)
{
    fprintf(out, " | %s ", label);
    if (known)
        put_seconds(out, ns);
    else
        fputc('-', out);
}

void tlog_put_stat_columns_(FILE *out, const tlog_stat_row *row, unsigned columns, uint64_t ns)
{
    tlog_stat_value v = {0};
    uint64_t frames = row ? tlog_row_hot_(row)->frames : 0;
    if (row)
        tlog_stat_value_(&tlog_row_hot_(row)->total, frames, &v);
    bool known = frames != 0;
    if (columns & TLOG_COLUMN_MEAN)
        put_column(out, "mean", known, tlog_ns_from_double_(v.mean + 0.5));
    if (columns & TLOG_COLUMN_MEDIAN)
        put_column(out, "median", known, v.median);
    if (columns & TLOG_COLUMN_P90)
        put_column(out, "p90", known, v.p90);
    if (columns & TLOG_COLUMN_P99)
        put_column(out, "p99", known, v.p99);
    if (columns & TLOG_COLUMN_MIN)
        put_column(out, "min", known, v.min);
    if (columns & TLOG_COLUMN_MAX)
        put_column(out, "max", known, v.max);
    if (columns & TLOG_COLUMN_DELTA) {
        fputs(" | delta ", out);
        if (!known)
            fputc('-', out);
        else {
            fputc(ns >= v.median ? '+' : '-', out);
            put_seconds(out, ns >= v.median ? ns - v.median : v.median - ns);
        }
    }
    if ((columns & TLOG_COLUMN_FRAMES) && known)
        fprintf(out, " | in %llu/%llu frames", (unsigned long long)frames,
                (unsigned long long)tlog_row_group_frames_(row));
    else if (columns & TLOG_COLUMN_FRAMES)
        fputs(" | in 0 frames", out);
}

/* A reduced row's time is the mean over the ranks; its spread follows. */
static void put_rank_columns(FILE *out, const tlog_node_ranks *r)
{
    put_micros(out, (uint64_t)(r->mean_ns / 1000.0 + 0.5));   /* rounded once */
    fputs(" | min ", out);
    put_seconds(out, r->min_ns);
    fputs(" | max ", out);
    put_seconds(out, r->max_ns);
    fputs(" | imbalance ", out);
    tlog_put_fixed_(out, r->mean_ns > 0 ? (double)r->max_ns / r->mean_ns : 0.0, 2);
}

/* Percentages past this are printed as `>9999.99%`: a row 100 times longer
 * than its parent (device work under a wait that hardly waited) says only
 * that the parent was short, and digits would suggest a precision the
 * parent's few microseconds do not have. */
#define PERCENT_SHOWN_MAX 9999.99

static void put_percent(line *l, const tlog_node *n)
{
    double percent = tlog_node_percent_(n);
    bool beyond = percent > PERCENT_SHOWN_MAX ||
                  (n->parent && n->parent->total_ns == 0 && n->total_ns > 0);
    if (beyond) {
        put_text(l, ">9999.99% ");
        return;
    }
    char digits[32];
    put_bytes(l, digits, (size_t)tlog_format_fixed_(digits, percent, 2));
    put_bytes(l, "% ", 2);
}

/* Statistics columns beside a frame's rows: the summary and each row's
 * row in it. */
typedef struct stat_columns {
    const tlog_summary *summary;
    const uint32_t *rows;
    unsigned columns;
} stat_columns;

/* Adds n's row to l; text written beside it (ranks, statistics) goes out
 * after what l holds. */
static void print_row(line *l, const tlog_node *n, uint32_t ranks, const stat_columns *sc,
                      size_t index)
{
    put_prefix(l, n->depth, n->kind);
    put_percent(l, n);
    if (n->ranks) {
        flush(l);
        put_rank_columns(l->out, n->ranks);
    } else {
        put_line_seconds(l, n->total_ns);
    }
    if (sc->summary) {
        flush(l);
        tlog_put_stat_columns_(l->out, tlog_stat_row_at_(sc->summary, sc->rows[index]),
                               sc->columns, n->total_ns);
    }
    put_text(l, n->kind == TLOG_KIND_EXECUTION ? " | (E) " : " | (C) ");
    put_text(l, n->name);
    if (n->ranks && n->ranks->present < ranks) {
        put_text(l, " [on ");
        put_uint(l, n->ranks->present, 1);
        put_bytes(l, "/", 1);
        put_uint(l, ranks, 1);
        put_text(l, " ranks]");
    } else if (n->count > 1 && !n->ranks) {
        put_text(l, " [x");
        put_uint(l, n->count, 1);
        put_bytes(l, "]", 1);
    }
    if (n->flags & TLOG_NODE_UNRESOLVED)
        put_text(l, " [unresolved]");
    put_bytes(l, "\n", 1);
}

static uint64_t shown_ns(const tlog_node *n)
{
    return n->ranks ? tlog_ns_from_double_(n->ranks->mean_ns) : n->total_ns;
}

static bool below(const tlog_node *n, const tlog_dump_options *o)
{
    if (!o || n->depth == 0)
        return false;
    return shown_ns(n) < o->min_ns || tlog_node_percent_(n) < o->min_percent;
}

/*
 * Rows kept though below the thresholds: those above an `==>` row that is
 * large for the frame (at least min_ns, and min_percent of the root), such
 * as a long kernel under the short scope that launched it. NULL without
 * options (nothing kept) or memory.
 */
static bool *rows_kept(const tlog_frame *frame, const tlog_dump_options *o)
{
    bool *keep = o ? tlog_calloc_(frame->nnodes, sizeof *keep) : NULL;
    uint64_t root_ns = shown_ns(&frame->nodes[0]);
    for (size_t i = 1; keep && i < frame->nnodes; i++) {
        const tlog_node *n = &frame->nodes[i];
        double of_root = root_ns ? 100.0 * (double)shown_ns(n) / (double)root_ns : 0.0;
        if (n->kind != TLOG_KIND_EXECUTION || shown_ns(n) < o->min_ns ||
            of_root < o->min_percent)
            continue;
        for (; n && !keep[n - frame->nodes]; n = n->parent)
            keep[n - frame->nodes] = true;
    }
    return keep;
}

/* Rows in n's subtree, n included; iterative, as trees may be deep. */
static size_t subtree_size(const tlog_node *n)
{
    size_t count = 1;
    const tlog_node *c = n->first_child;
    while (c) {
        count++;
        if (c->first_child) {
            c = c->first_child;
            continue;
        }
        while (c != n && !c->next_sibling)
            c = c->parent;
        c = c == n ? NULL : c->next_sibling;
    }
    return count;
}


int tlog_dump_frame(const tlog_frame *frame, FILE *out, const tlog_dump_options *options)
{
    return tlog_dump_frame_headed_(frame, out, options, NULL, NULL);
}

int tlog_dump_frame_headed_(const tlog_frame *frame, FILE *out,
                            const tlog_dump_options *options,
                            void (*head)(FILE *out, const void *arg), const void *arg)
{
    if (!frame || !frame->nnodes)
        return TLOG_EINVAL;
    /* Older callers pass a shorter struct: missing fields stay zero. A size
     * of 0 is read as the current size, as for the other settings. */
    tlog_dump_options opts = {0};
    if (options) {
        size_t n = options->size ? options->size : sizeof opts;
        memcpy(&opts, options, n < sizeof opts ? n : sizeof opts);
    }
    if (!out)
        out = stdout;
    size_t hidden = 0;
    bool *keep = rows_kept(frame, options ? &opts : NULL);
    stat_columns sc = {opts.summary, NULL, opts.columns ? opts.columns : TLOG_COLUMNS_FRAME};
    uint32_t *rows = sc.summary ? tlog_malloc_(frame->nnodes * sizeof *rows) : NULL;
    if ((options && !keep) || (sc.summary && !rows)) {
        free(keep);
        free(rows);
        return TLOG_ENOMEM;   /* nothing written: the rows to keep are not known */
    }
    if (rows)
        tlog_summary_map_frame_(sc.summary, frame, rows);
    sc.rows = rows;
    if (head)
        head(out, arg);
    line l = {.out = out};
    for (const tlog_node *n = &frame->nodes[0]; n;) {
        bool hide = options && below(n, &opts) && !(keep && keep[n - frame->nodes]);
        if (hide)
            hidden += subtree_size(n);
        else
            print_row(&l, n, frame->reduced_ranks, &sc, (size_t)(n - frame->nodes));
        n = tlog_node_next_(n, !hide);
    }
    flush(&l);
    free(keep);
    free(rows);
    if (frame->reduced_ranks)
        fprintf(out, "# reduced over %u ranks: times are means per rank; rows missing on "
                     "some ranks: %zu\n",
                frame->reduced_ranks, frame->partial_rows);
    if (hidden) {
        fprintf(out, "# %zu rows hidden (shorter than ", hidden);
        tlog_put_fixed_(out, (double)opts.min_ns / 1e9, 6);
        fputs("s or below ", out);
        tlog_put_fixed_(out, opts.min_percent, 2);
        fputs("% of parent)\n", out);
    }
    if (frame->dropped)
        fprintf(out, "# %llu scopes dropped (thread budget, max_depth or memory ran out)\n",
                (unsigned long long)frame->dropped);
    if (frame->repaired)
        fprintf(out, "# %llu scopes closed by a repair rule\n",
                (unsigned long long)frame->repaired);
    if (frame->device_unresolved)
        fprintf(out, "# %llu device intervals unresolved (forced sync timed out or "
                     "device error)\n",
                (unsigned long long)frame->device_unresolved);
    return ferror(out) ? TLOG_EIO : TLOG_OK;
}

int tlog_dump(tlog_log *log, FILE *out)
{
    int why;
    tlog_frame *f = tlog_frame_for_dump_(log, &why);
    if (!f)
        return why;
    int rc = tlog_dump_frame(f, out, NULL);
    tlog_frame_release(f);
    return rc;
}
