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
 * a call per row, then to a small copy per field. A row's fields of
 * bounded length are written in place (room); titles and deep prefixes,
 * of any length, are copied (put_bytes). */
typedef struct line {
    FILE *out;
    size_t len;
    char buf[4096];
} line;

/* The most that room() may be asked for: a row's fields of bounded length. */
#define ROOM_MAX 128

static void flush(line *l)
{
    fwrite(l->buf, 1, l->len, l->out);
    l->len = 0;
}

/* Where the next `n` bytes (at most ROOM_MAX) go; the caller then sets
 * l->len past what it wrote. */
static char *room(line *l, size_t n)
{
    if (sizeof l->buf - l->len < n)
        flush(l);
    return l->buf + l->len;
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

/* A title, one line whatever it holds (tlog_line_char_): copied a byte at
 * a time as it is scanned, which for titles of a few words costs less than
 * scanning first and copying after. */
static void put_title(line *l, const char *s)
{
    while (*s) {
        char *p = room(l, ROOM_MAX), *end = p + ROOM_MAX;
        for (; *s && p < end; s++)
            *p++ = tlog_line_char_((unsigned char)*s) ? *s : ' ';
        l->len = (size_t)(p - l->buf);
    }
}

/* v in decimal at p, at least `width` digits (zero-padded; at most 20);
 * returns the end. */
static char *write_uint(char *p, uint64_t v, int width)
{
    int n = 1;
    for (uint64_t rest = v / 10; rest; rest /= 10)
        n++;
    if (n < width)
        n = width;
    for (int i = n; i-- > 0; v /= 10)
        p[i] = (char)('0' + v % 10);
    return p + n;
}

static void put_uint(line *l, uint64_t v, int width)
{
    char *p = room(l, 24);
    l->len = (size_t)(write_uint(p, v, width) - l->buf);
}

/* Seconds with microsecond digits: at most 28 bytes. */
static char *write_micros(char *p, uint64_t us)
{
    p = write_uint(p, us / 1000000u, 1);
    *p++ = '.';
    p = write_uint(p, us % 1000000u, 6);
    *p++ = 's';
    return p;
}

static void put_line_micros(line *l, uint64_t us)
{
    char *p = room(l, 32);
    l->len = (size_t)(write_micros(p, us) - l->buf);
}

/* Seconds with microsecond digits, rounded. */
static uint64_t rounded_micros(uint64_t ns)
{
    return ns / 1000u + (ns % 1000u >= 500u);
}

static void put_line_seconds(line *l, uint64_t ns)
{
    put_line_micros(l, rounded_micros(ns));
}

static void put_prefix(line *l, int depth, int kind)
{
    static const char dots[] = ". . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . . ";
    if (depth == 0) {
        put_bytes(l, "> ", 2);
        return;
    }
    size_t ndots = 2 * (size_t)(depth - 1);
    if (ndots + 4 <= ROOM_MAX) {
        /* Most rows: the dots in whole words (the last may run past them,
         * into room the arrow then takes), then the arrow. */
        char *p = room(l, ROOM_MAX);
        for (size_t i = 0; i < ndots; i += 8)
            memcpy(p + i, dots, 8);
        memcpy(p + ndots, kind == TLOG_KIND_EXECUTION ? "==> " : "|-> ", 4);
        l->len += ndots + 4;
        return;
    }
    for (size_t left = ndots; left;) {
        size_t k = left < sizeof dots - 1 ? left : sizeof dots - 1;
        put_bytes(l, dots, k);
        left -= k;
    }
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
    if (row)
        tlog_summary_settle_(row->owner);
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

/* n's percentage of its parent and a space: at most 34 bytes. */
static char *write_percent(char *p, const tlog_node *n)
{
    double percent = tlog_node_percent_(n);
    bool beyond = percent > PERCENT_SHOWN_MAX ||
                  (n->parent && n->parent->total_ns == 0 && n->total_ns > 0);
    if (beyond) {
        memcpy(p, ">9999.99% ", 10);
        return p + 10;
    }
    p += tlog_format_fixed_(p, percent, 2);   /* at most 31 bytes and a NUL */
    memcpy(p, "% ", 2);
    return p + 2;
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
    /* Only a reduced frame's rows have ranks; other frames' dumps then read
     * no node's second cache line. */
    const tlog_node_ranks *spread = ranks ? n->ranks : NULL;
    put_prefix(l, n->depth, n->kind);
    char *p = write_percent(room(l, ROOM_MAX), n);
    if (spread) {
        l->len = (size_t)(p - l->buf);
        flush(l);
        put_rank_columns(l->out, spread);
    } else {
        l->len = (size_t)(write_micros(p, rounded_micros(n->total_ns)) - l->buf);
    }
    if (sc->summary) {
        flush(l);
        tlog_put_stat_columns_(l->out, tlog_stat_row_at_(sc->summary, sc->rows[index]),
                               sc->columns, n->total_ns);
    }
    put_bytes(l, n->kind == TLOG_KIND_EXECUTION ? " | (E) " : " | (C) ", 7);
    put_title(l, n->name);
    if (spread && spread->present < ranks) {
        put_text(l, " [on ");
        put_uint(l, spread->present, 1);
        put_bytes(l, "/", 1);
        put_uint(l, ranks, 1);
        put_text(l, " ranks]");
    } else if (n->count > 1 && !spread) {
        put_bytes(l, " [x", 3);
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

bool tlog_dump_options_of_(const tlog_dump_options *in, tlog_dump_options *o)
{
    if (!tlog_read_sized_(o, sizeof *o, in, sizeof(size_t)))
        return false;
    o->size = sizeof *o;
    return true;
}

int tlog_dump_frame(const tlog_frame *frame, FILE *out, const tlog_dump_options *options)
{
    return tlog_dump_frame_headed_(frame, out, options, NULL, NULL);
}

int tlog_dump_frame_headed_(const tlog_frame *frame, FILE *out,
                            const tlog_dump_options *options,
                            void (*head)(FILE *out, const void *arg), const void *arg)
{
    tlog_dump_options opts;
    if (!frame || !frame->nnodes || !tlog_dump_options_of_(options, &opts))
        return TLOG_EINVAL;
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
    /* Nodes are stored in pre-order: a shown row's successor is the next
     * node, found without reading the links on its second cache line. */
    const tlog_node *end = frame->nodes + frame->nnodes;
    for (const tlog_node *n = &frame->nodes[0]; n && n < end;) {
        bool hide = options && below(n, &opts) && !(keep && keep[n - frame->nodes]);
        if (hide) {
            hidden += subtree_size(n);
            n = tlog_node_next_(n, false);
        } else {
            print_row(&l, n, frame->reduced_ranks, &sc, (size_t)(n - frame->nodes));
            n++;
        }
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
    return tlog_written_(out);
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
