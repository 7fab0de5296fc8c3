/*
 * timerlog report: one HTML file that shows a run's frames -- a chart of
 * every frame's time, a frame's tree as tlog_dump prints it, the statistics
 * of `timerlog stats`, a frame's timeline and, given a base run, the
 * comparison of `timerlog diff` -- with everything inline, for a browser to
 * open from anywhere, with no server and no network.
 *
 * What the page holds (doc/guide.md, "See a run in a browser"): for each
 * group of frames (thread name, root title) its rows, and each row's total
 * and count in every frame, as LEB128 varints in base64, one string per
 * row; whole frames (rows and instances) only for a bounded set: the latest
 * frame of each group, the hitches the statistics kept, and a sample of at
 * most --samples frames spread over the run. The page's code and styles
 * (tools/report/) are compiled in.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerlog/timerlog.h>

#include "bytes.h"
#include "diff.h"
#include "ending.h"
#include "input.h"
#include "map.h"
#include "options.h"
#include "report.h"
#include "util.h"

#define EXIT_DAMAGED 1
#define EXIT_USAGE 2
#define NO_ROW UINT32_MAX
#define SAMPLES_DEFAULT 32
#define SAMPLES_MAX 4096
/* The budget line without --hitch or --hitch-quantile: a frame at 60 Hz. */
#define BUDGET_DEFAULT_NS 16666667u

static const char *const usage_report =
    "usage: timerlog report [--base FILE]... [--thread NAME] [--root TITLE]\n"
    "                       [--hitch MS] [--hitch-quantile Q] [--max-hitches N]\n"
    "                       [--samples N] [-o OUT] FILE...\n"
    "\n"
    "Writes one self-contained HTML page (code, styles and data inline; it\n"
    "fetches nothing) that shows the frames of the files: a chart of every\n"
    "frame's time with the hitches and the budget, the tree of the frame picked\n"
    "there (rows, percentages and counts as `timerlog dump --frame N` prints\n"
    "them), the statistics of every row (`timerlog stats`) and the frame's\n"
    "timeline, a lane per thread and per device queue. With --base, the page\n"
    "also compares the base run with the files (`timerlog diff BASE --vs FILE`).\n"
    "\n"
    "Whole frames, with their timelines, are kept for the latest frame of each\n"
    "thread and root title, the hitches kept and a sample of --samples frames;\n"
    "any other frame shows its rows' totals and counts.\n"
    "\n"
    "  --base FILE         a file of the run to compare with (repeat for ranks)\n"
    "  --thread NAME       only frames run by the thread named NAME\n"
    "  --root TITLE        only frames whose root row is titled TITLE\n"
    "  --hitch MS          the budget: a frame longer than MS milliseconds is a\n"
    "                      hitch (default 16.667, a frame at 60 Hz, unless\n"
    "                      --hitch-quantile is given)\n"
    "  --hitch-quantile Q  a frame longer than the quantile Q (0 < Q < 1) of\n"
    "                      the 128 frames before it is a hitch\n"
    "  --max-hitches N     hitches kept whole, the last ones (default 16)\n"
    "  --samples N         other frames kept whole, spread over the run (32;\n"
    "                      0 to 4096)\n"
    "  -o OUT              write to OUT instead of standard output\n";

/* ------------------------------------------------------------------------ */
/* Growing byte buffers                                                     */
/* ------------------------------------------------------------------------ */

typedef struct buf {
    char *p;
    size_t n, cap;
    bool failed;   /* memory ran out: the contents are incomplete */
} buf;

static bool buf_reserve(buf *b, size_t more)
{
    if (b->failed)
        return false;
    size_t need = b->n + more;
    if (!TLOG_GROW(b->p, b->cap, need < 64 ? 64 : need))
        b->failed = true;
    return !b->failed;
}

static void buf_add(buf *b, const void *data, size_t n)
{
    if (buf_reserve(b, n)) {
        memcpy(b->p + b->n, data, n);
        b->n += n;
    }
}

static void buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void buf_printf(buf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        buf_add(b, small, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n + 1))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

/* LEB128 (bytes.h); most totals take three or four bytes. */
static void buf_varint(buf *b, uint64_t v)
{
    uint8_t bytes[TLOG_VARINT_MAX];
    buf_add(b, bytes, tlog_put_varint_(bytes, v));
}

/* A JSON string that may stand inside an HTML <script>: '<' is escaped,
 * so no title can close the element; bytes that are not UTF-8 become
 * U+FFFD. NULL is written as null. */
static void buf_json_string(buf *b, const char *s)
{
    if (!s) {
        buf_add(b, "null", 4);
        return;
    }
    buf_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p == '"' || *p == '\\') {
            buf_printf(b, "\\%c", *p++);
        } else if (*p < 0x20 || *p == '<') {
            buf_printf(b, "\\u%04x", *p++);
        } else if (*p < 0x80) {
            buf_add(b, p++, 1);
        } else {
            size_t n = tlog_utf8_length_(p);
            buf_add(b, n ? (const void *)p : "\xef\xbf\xbd", n ? n : 3);
            p += n ? n : 1;
        }
    }
    buf_add(b, "\"", 1);
}

/* ------------------------------------------------------------------------ */
/* Rows of a group, and their values frame by frame                         */
/* ------------------------------------------------------------------------ */

/* One row path of a group. */
typedef struct rrow {
    uint32_t parent;       /* NO_ROW for the root */
    uint32_t launcher;     /* device rows: the row that launched the first
                            * instance seen in its frame, or NO_ROW */
    char *name;
    char *device;          /* device rows: the device's name (of the first
                            * device interval, when the row was first met
                            * as a host row of the same title) */
    uint32_t *queues;      /* device rows: the queues its intervals ran on,
                            * the same in every frame so far, ascending */
    uint32_t nqueues;      /* 0: no frame had it yet */
    bool queues_differ;    /* frames had it on different queues */
    bool devices_differ;   /* it ran on several devices: not named */
    tlog_kind kind;
    int depth;
    unsigned flags;        /* tlog_node_flags of any frame */
    buf totals, counts;    /* a varint per frame of the group, up to `filled` */
    uint32_t filled;
    uint64_t frame_total, frame_count;   /* the frame being read */
    bool frame_unresolved;                /* in the frame being read */
    bool touched;
} rrow;

/* The frames of one thread name and root title, as `timerlog stats`
 * groups them. */
typedef struct rgroup {
    char *thread, *root;
    rrow *rows;
    size_t nrows, rows_cap;
    tlog_map index;        /* row_hash -> the row */
    uint64_t *serials;     /* per frame of the group */
    uint32_t *files;       /* per frame: the file it came from */
    size_t nframes, frames_cap, files_cap;
    /* Frames whose rows came in another order than the group's (children
     * by first appearance in the run): per frame, varints of its position,
     * its row count and its rows in dump order. */
    buf orders;
    uint32_t *hitches;     /* frames that were hitches */
    size_t nhitches, hitches_cap;
    uint32_t *touched;     /* rows of the frame being read */
    size_t ntouched, touched_cap;
    struct row_queue *ran; /* the frame's device intervals: row, queue */
    size_t nran, ran_cap;
    /* (frame, row) pairs, in frame order, of the rows unresolved in that
     * frame: the rows' flags are those of any frame. */
    uint32_t *unresolved;
    size_t nunresolved, unresolved_cap;
    tlog_frame *latest;    /* its last frame, kept whole */
} rgroup;

/* A frame written whole (rows and instances) as JSON. */
typedef struct whole {
    uint32_t group, index;
    uint64_t number;       /* the frame's position among all selected */
    buf json;
} whole;

/* A hitch the summary may still keep: its frame, and where it is. */
typedef struct hitch_at {
    const tlog_frame *frame;
    uint32_t group, index;
} hitch_at;

typedef struct report_cmd {
    FILE *out, *err;
    int status;
    const char *thread, *root, *out_path;
    const char **base;
    size_t nbase;
    size_t max_samples;
    tlog_summary_config cfg;
    tlog_summary *summary;
    rgroup *groups;
    size_t ngroups, groups_cap;
    whole *samples;        /* frames whose number is a multiple of stride:
                            * candidates, then those picked (pick_samples) */
    size_t nsamples, samples_cap;
    uint64_t stride, numbered;
    hitch_at *ring;        /* the newest hitches, as many as the summary keeps */
    size_t ring_size, ring_next;
    /* The walk of the frame being read. */
    uint32_t *depth_rows;
    size_t depth_cap;
    rgroup *walking;
    const tlog_node **nodes;   /* walk order */
    uint32_t *node_rows;       /* the row of each */
    size_t nnodes, nodes_cap, node_rows_cap;
    struct node_at *sorted;    /* nodes by address, for instances */
    size_t sorted_cap;
    bool adding;               /* rows new to the group are added */
    tlog_reader **readers;     /* per file; NULL where it could not be read */
} report_cmd;

typedef struct node_at {
    const tlog_node *node;
    long index;
} node_at;

static uint64_t row_hash(uint32_t parent, tlog_kind kind, const char *name)
{
    uint64_t h = 1469598103934665603ull ^ parent ^ ((uint64_t)kind << 32);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h ^ (h >> 29);
}

static uint32_t find_row(const rgroup *g, uint32_t parent, tlog_kind kind, const char *name,
                         uint64_t hash)
{
    const tlog_map *m = &g->index;
    for (size_t at = tlog_map_first_(m, hash); tlog_map_has_(m, at);
         at = tlog_map_next_(m, at, hash)) {
        uint32_t r = m->slots[at].value;
        const rrow *row = &g->rows[r];
        if (row->parent == parent && row->kind == kind && strcmp(row->name, name) == 0)
            return r;
    }
    return NO_ROW;
}

static uint32_t add_row(rgroup *g, uint32_t parent, const tlog_node_info *info, uint64_t hash)
{
    if (g->nrows >= NO_ROW - 1 || !TLOG_GROW(g->rows, g->rows_cap, g->nrows + 1))
        return NO_ROW;
    rrow r = {.parent = parent, .launcher = NO_ROW, .kind = info->kind,
              .depth = parent == NO_ROW ? 0 : g->rows[parent].depth + 1,
              .name = strdup(info->name ? info->name : ""),
              .device = info->device ? strdup(info->device) : NULL};
    uint32_t at = (uint32_t)g->nrows;
    if (!r.name || (info->device && !r.device) || !tlog_map_put_(&g->index, hash, at)) {
        free(r.name);
        free(r.device);
        return NO_ROW;
    }
    g->rows[at] = r;
    g->nrows++;
    return at;
}

static void free_group(rgroup *g)
{
    for (size_t r = 0; r < g->nrows; r++) {
        free(g->rows[r].name);
        free(g->rows[r].device);
        free(g->rows[r].queues);
        free(g->rows[r].totals.p);
        free(g->rows[r].counts.p);
    }
    free(g->rows);
    tlog_map_free_(&g->index);
    free(g->serials);
    free(g->files);
    free(g->hitches);
    free(g->touched);
    free(g->ran);
    free(g->unresolved);
    free(g->orders.p);
    free(g->thread);
    free(g->root);
    tlog_frame_release(g->latest);
}

static const char *root_title(const tlog_frame *f)
{
    tlog_node_info info = {.size = sizeof info};
    if (tlog_node_get_info(tlog_frame_root(f), &info) != TLOG_OK || !info.name)
        return "";
    return info.name;
}

static const char *thread_of(const tlog_frame *f)
{
    tlog_frame_info info = {.size = sizeof info};
    tlog_frame_get_info(f, &info);
    return info.thread_name ? info.thread_name : "";
}

static rgroup *group_of(report_cmd *c, const tlog_frame *f, uint32_t *index)
{
    const char *thread = thread_of(f), *root = root_title(f);
    for (size_t k = 0; k < c->ngroups; k++)
        if (strcmp(c->groups[k].thread, thread) == 0 && strcmp(c->groups[k].root, root) == 0) {
            *index = (uint32_t)k;
            return &c->groups[k];
        }
    if (!TLOG_GROW(c->groups, c->groups_cap, c->ngroups + 1))
        return NULL;
    rgroup *gs = c->groups;
    rgroup g = {.thread = strdup(thread), .root = strdup(root)};
    if (!g.thread || !g.root) {
        free(g.thread);
        free(g.root);
        return NULL;
    }
    *index = (uint32_t)c->ngroups;
    gs[c->ngroups] = g;
    return &gs[c->ngroups++];
}

/* Finds (or, while c->adding, adds) the row of each node as the walk
 * reaches it, parents first, and notes it beside the node. */
static int map_node(report_cmd *c, const tlog_node *node, const tlog_node_info *info,
                    uint32_t *row)
{
    rgroup *g = c->walking;
    size_t depth = info->depth > 0 ? (size_t)info->depth : 0;
    if (!TLOG_GROW(c->depth_rows, c->depth_cap, depth + 1) ||
        !TLOG_GROW(c->nodes, c->nodes_cap, c->nnodes + 1) ||
        !TLOG_GROW(c->node_rows, c->node_rows_cap, c->nnodes + 1))
        return TLOG_ENOMEM;
    uint32_t *stack = c->depth_rows;
    uint32_t parent = depth ? stack[depth - 1] : NO_ROW;
    const char *name = info->name ? info->name : "";
    uint64_t hash = row_hash(parent, info->kind, name);
    uint32_t r = find_row(g, parent, info->kind, name, hash);
    if (r == NO_ROW && (!c->adding || (r = add_row(g, parent, info, hash)) == NO_ROW))
        return TLOG_ENOMEM;
    stack[depth] = r;
    c->nodes[c->nnodes] = node;
    c->node_rows[c->nnodes++] = r;
    *row = r;
    return 0;
}

/* A row's value in the frame being read (rows of one path in one frame
 * add up: two threads of one name). */
static int visit_row(void *user, const tlog_node *node, const tlog_node_info *info)
{
    report_cmd *c = user;
    rgroup *g = c->walking;
    uint32_t r;
    int rc = map_node(c, node, info, &r);
    if (rc != 0)
        return rc;
    rrow *row = &g->rows[r];
    row->flags |= info->flags;
    if (!row->touched) {
        if (!TLOG_GROW(g->touched, g->touched_cap, g->ntouched + 1))
            return TLOG_ENOMEM;
        g->touched[g->ntouched++] = r;
        row->touched = true;
        row->frame_total = row->frame_count = 0;
        row->frame_unresolved = false;
    }
    row->frame_unresolved |= (info->flags & TLOG_NODE_UNRESOLVED) != 0;
    row->frame_total += info->total_ns;
    row->frame_count += info->count;
    return 0;
}

/* The node's row in the frame just walked, or NO_ROW. */
static uint32_t row_of_node(const report_cmd *c, const tlog_node *node)
{
    for (size_t k = 0; node && k < c->nnodes; k++)
        if (c->nodes[k] == node)
            return c->node_rows[k];
    return NO_ROW;
}

/* Device rows learn the row that launched them, from the first frame that
 * has both. */
static void link_launchers(report_cmd *c, rgroup *g)
{
    for (size_t k = 0; k < c->nnodes; k++) {
        rrow *row = &g->rows[c->node_rows[k]];
        if (row->launcher != NO_ROW || !(row->flags & TLOG_NODE_DEVICE))
            continue;
        tlog_node_info info = {.size = sizeof info};
        tlog_node_get_info(c->nodes[k], &info);
        row->launcher = row_of_node(c, info.launcher);
    }
}

/* Writes the values of the frame just walked: every row touched gets its
 * value at the frame's position, rows absent from frames before it 0. */
static bool store_values(rgroup *g, uint32_t index)
{
    bool ok = true;
    for (size_t k = 0; k < g->ntouched; k++) {
        rrow *row = &g->rows[g->touched[k]];
        for (; row->filled < index; row->filled++) {
            buf_varint(&row->totals, 0);
            buf_varint(&row->counts, 0);
        }
        buf_varint(&row->totals, row->frame_total);
        buf_varint(&row->counts, row->frame_count);
        row->filled++;
        row->touched = false;
        if (row->frame_unresolved) {
            if (TLOG_GROW(g->unresolved, g->unresolved_cap, g->nunresolved + 2)) {
                g->unresolved[g->nunresolved++] = index;
                g->unresolved[g->nunresolved++] = g->touched[k];
            } else {
                ok = false;
            }
        }
        ok &= !row->totals.failed && !row->counts.failed;
    }
    g->ntouched = 0;
    return ok;
}

/* Notes the order of the rows of the frame just walked, frame `index` of
 * `g`, unless it is the group's: each row's children by row number (first
 * appearance in the run). The dump orders children by first start, and
 * worker threads' rows by thread id, which may change from frame to frame. */
static bool store_order(report_cmd *c, rgroup *g, uint32_t index)
{
    if (!TLOG_GROW(c->depth_rows, c->depth_cap, 1))
        return false;
    bool own = true;
    for (size_t k = 0; k < c->nnodes && own; k++) {
        const rrow *row = &g->rows[c->node_rows[k]];
        /* The walk only ever goes one level deeper at a time, and depth_rows
         * has room for every level the walk reached. */
        size_t d = (size_t)row->depth;
        own = !(d && k && g->rows[c->node_rows[k - 1]].depth >= row->depth &&
                c->depth_rows[d] >= c->node_rows[k]);
        c->depth_rows[d] = c->node_rows[k];
    }
    if (own)
        return true;
    buf_varint(&g->orders, index);
    buf_varint(&g->orders, c->nnodes);
    for (size_t k = 0; k < c->nnodes; k++)
        buf_varint(&g->orders, c->node_rows[k]);
    return !g->orders.failed;
}

/* ------------------------------------------------------------------------ */
/* Frames kept whole                                                        */
/* ------------------------------------------------------------------------ */

static int by_address(const void *a, const void *b)
{
    const char *x = (const char *)((const node_at *)a)->node;
    const char *y = (const char *)((const node_at *)b)->node;
    return x < y ? -1 : x > y;
}

/* Sorts the nodes of the walk by address, for node_index. */
static bool sort_nodes(report_cmd *c)
{
    if (!TLOG_GROW(c->sorted, c->sorted_cap, c->nnodes))
        return false;
    node_at *s = c->sorted;
    for (size_t k = 0; k < c->nnodes; k++)
        s[k] = (node_at){c->nodes[k], (long)k};
    qsort(s, c->nnodes, sizeof *s, by_address);
    return true;
}

/* The position of `node` in the walk, or -1 (NULL, or not of the frame). */
static long node_index(const report_cmd *c, const tlog_node *node)
{
    node_at key = {node, 0};
    const node_at *at = node ? bsearch(&key, c->sorted, c->nnodes, sizeof key, by_address)
                             : NULL;
    return at ? at->index : -1;
}

/* A device interval of the frame being read: its row, and its queue. */
typedef struct row_queue {
    uint32_t row;
    uint32_t queue;
} row_queue;

static int by_row_then_queue(const void *pa, const void *pb)
{
    const row_queue *a = pa, *b = pb;
    if (a->row != b->row)
        return a->row < b->row ? -1 : 1;
    return a->queue < b->queue ? -1 : a->queue > b->queue;
}

/* A row's queues in this frame (distinct, ascending) against those of the
 * frames before: frames shown from their rows' totals name them when they
 * were always the same. */
static bool note_queues(rrow *row, const row_queue *run, size_t n)
{
    if (row->queues_differ)
        return true;
    if (!row->nqueues) {
        row->queues = malloc(n * sizeof *row->queues);
        if (!row->queues)
            return false;
        for (size_t k = 0; k < n; k++)
            row->queues[k] = run[k].queue;
        row->nqueues = (uint32_t)n;
        return true;
    }
    bool same = row->nqueues == n;
    for (size_t k = 0; same && k < n; k++)
        same = row->queues[k] == run[k].queue;
    if (!same) {
        row->queues_differ = true;
        free(row->queues);
        row->queues = NULL;
        row->nqueues = 0;
    }
    return true;
}

/* The queues each device row of the frame just walked ran on, from its
 * instances (a row's node names only the first's). */
static int note_frame_queues(report_cmd *c, rgroup *g, const tlog_frame *f,
                             const tlog_frame_info *fi)
{
    if (!fi->device_intervals)
        return TLOG_OK;
    if (!sort_nodes(c))
        return TLOG_ENOMEM;
    g->nran = 0;
    tlog_instance x = {.size = sizeof x};
    for (size_t k = 0; k < fi->instances && tlog_frame_get_instance(f, k, &x) == TLOG_OK; k++) {
        long at = x.device && x.queue ? node_index(c, x.node) : -1;
        if (at < 0)
            continue;
        uint32_t r = c->node_rows[at];
        rrow *row = &g->rows[r];
        if (!row->device && !(row->device = strdup(x.device)))
            return TLOG_ENOMEM;
        row->devices_differ |= strcmp(row->device, x.device) != 0;
        if (!TLOG_GROW(g->ran, g->ran_cap, g->nran + 1))
            return TLOG_ENOMEM;
        g->ran[g->nran++] = (row_queue){r, x.queue};
    }
    qsort(g->ran, g->nran, sizeof *g->ran, by_row_then_queue);
    size_t distinct = 0;
    for (size_t k = 0; k < g->nran; k++)
        if (!distinct || by_row_then_queue(&g->ran[distinct - 1], &g->ran[k]) != 0)
            g->ran[distinct++] = g->ran[k];
    g->nran = distinct;
    for (size_t k = 0, n; k < g->nran; k += n) {
        for (n = 1; k + n < g->nran && g->ran[k + n].row == g->ran[k].row; n++)
            ;
        if (!note_queues(&g->rows[g->ran[k].row], &g->ran[k], n))
            return TLOG_ENOMEM;
    }
    return TLOG_OK;
}

/*
 * {"g":G,"i":I,"n":[[row,total,count,start,min,max,thread,launcher,flags,
 * queue],...],"x":[[node,thread,start,duration,launcher,queue,device],...],
 * "t":{"id":"name"},"drop":D,"rep":R,"unres":U}: the rows in dump order
 * (the walk's), and every instance. Needs the frame's walk in c->nodes.
 */
static void write_whole(report_cmd *c, const rgroup *g, const tlog_frame *f, buf *b)
{
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    if (!sort_nodes(c)) {
        b->failed = true;
        return;
    }
    buf_printf(b, "{\"g\":%td,\"i\":%zu,\"serial\":%" PRIu64 ",\"n\":[", g - c->groups,
               g->nframes - 1, fi.serial);
    buf threads = {0};
    uint32_t *seen = calloc(c->nnodes, sizeof *seen);
    size_t nseen = 0;
    for (size_t k = 0; k < c->nnodes && seen; k++) {
        tlog_node_info in = {.size = sizeof in};
        tlog_node_get_info(c->nodes[k], &in);
        buf_printf(b, "%s[%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRIu64
                   ",%" PRIu64 ",%" PRIu32 ",%ld,%u,%" PRIu32 ",",
                   k ? "," : "", c->node_rows[k], in.total_ns, in.count, in.start_ns,
                   in.min_ns, in.max_ns, in.thread, node_index(c, in.launcher), in.flags,
                   in.queue);
        buf_json_string(b, in.device);
        buf_add(b, "]", 1);
        bool known = false;
        for (size_t j = 0; j < nseen; j++)
            known |= seen[j] == in.thread;
        if (!known && in.thread_name && !(in.flags & TLOG_NODE_DEVICE)) {
            seen[nseen++] = in.thread;
            buf_printf(&threads, "%s\"%" PRIu32 "\":", threads.n ? "," : "", in.thread);
            buf_json_string(&threads, in.thread_name);
        }
    }
    b->failed |= !seen || threads.failed;
    free(seen);
    buf_add(b, "],\"x\":[", 7);
    tlog_instance x = {.size = sizeof x};
    for (size_t k = 0; k < fi.instances && tlog_frame_get_instance(f, k, &x) == TLOG_OK; k++) {
        buf_printf(b, "%s[%ld,%" PRIu32 ",%" PRId64 ",%" PRIu64 ",%ld,%" PRIu32 ",", k ? "," : "",
                   node_index(c, x.node), x.thread, x.start_ns, x.duration_ns,
                   node_index(c, x.launcher), x.queue);
        buf_json_string(b, x.device);
        buf_add(b, "]", 1);
    }
    buf_add(b, "],\"t\":{", 7);
    buf_add(b, threads.p, threads.n);
    free(threads.p);
    buf_printf(b, "},\"drop\":%" PRIu64 ",\"rep\":%" PRIu64 ",\"unres\":%" PRIu64 "}",
               fi.scopes_dropped, fi.scopes_repaired, fi.device_unresolved);
}

/* Walks a frame already counted, into c->nodes and c->node_rows. */
static int collect_nodes(void *user, const tlog_node *node, const tlog_node_info *info)
{
    uint32_t r;
    return map_node(user, node, info, &r);
}

/* Frames `number` a multiple of the stride are candidates; when more than
 * twice max_samples are, the stride doubles and every other one goes, so
 * that at least max_samples stay, spread over the run, for pick_samples to
 * choose from at the end. */
static bool sample(report_cmd *c, const rgroup *g, const tlog_frame *f)
{
    uint64_t number = c->numbered++;
    if (!c->max_samples || number % c->stride)
        return true;
    if (!TLOG_GROW(c->samples, c->samples_cap, c->nsamples + 1))
        return false;
    whole w = {(uint32_t)(g - c->groups), (uint32_t)(g->nframes - 1), number, {0}};
    write_whole(c, g, f, &w.json);
    if (w.json.failed) {
        free(w.json.p);
        return false;
    }
    c->samples[c->nsamples++] = w;
    if (c->nsamples <= 2 * c->max_samples)
        return true;
    c->stride *= 2;
    size_t kept = 0;
    for (size_t k = 0; k < c->nsamples; k++) {
        if (c->samples[k].number % c->stride == 0)
            c->samples[kept++] = c->samples[k];
        else
            free(c->samples[k].json.p);
    }
    c->nsamples = kept;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

static bool selected(const report_cmd *c, const tlog_frame *f)
{
    if (c->thread && strcmp(thread_of(f), c->thread) != 0)
        return false;
    return !c->root || strcmp(root_title(f), c->root) == 0;
}

/* Counts a frame: statistics, row values, hitch, sample, latest. Takes
 * the reference to `f`. */
static int add_frame(report_cmd *c, tlog_frame *f, uint32_t file)
{
    tlog_summary_info before = {.size = sizeof before}, after = {.size = sizeof after};
    tlog_summary_get_info(c->summary, &before);
    int rc = tlog_summary_add(c->summary, f);
    uint32_t gi;
    rgroup *g = rc == TLOG_OK ? group_of(c, f, &gi) : NULL;
    if (!g || !TLOG_GROW(g->serials, g->frames_cap, g->nframes + 1) ||
        !TLOG_GROW(g->files, g->files_cap, g->nframes + 1)) {
        tlog_frame_release(f);
        return rc == TLOG_OK ? TLOG_ENOMEM : rc;
    }
    tlog_frame_info info = {.size = sizeof info};
    tlog_frame_get_info(f, &info);
    c->walking = g;
    c->adding = true;
    c->nnodes = 0;
    rc = tlog_frame_walk(f, visit_row, c);
    if (rc == TLOG_OK && !store_values(g, (uint32_t)g->nframes))
        rc = TLOG_ENOMEM;
    g->ntouched = 0;
    if (rc != TLOG_OK) {
        tlog_frame_release(f);
        return rc;
    }
    link_launchers(c, g);
    rc = note_frame_queues(c, g, f, &info);
    if (rc != TLOG_OK || !store_order(c, g, (uint32_t)g->nframes)) {
        tlog_frame_release(f);
        return TLOG_ENOMEM;   /* the only failure of either */
    }
    g->serials[g->nframes] = info.serial;
    g->files[g->nframes++] = file;
    tlog_summary_get_info(c->summary, &after);
    if (after.hitches_seen > before.hitches_seen) {
        if (!TLOG_GROW(g->hitches, g->hitches_cap, g->nhitches + 1)) {
            tlog_frame_release(f);
            return TLOG_ENOMEM;
        }
        g->hitches[g->nhitches++] = (uint32_t)(g->nframes - 1);
        c->ring[c->ring_next++ % c->ring_size] =
            (hitch_at){f, gi, (uint32_t)(g->nframes - 1)};
    }
    rc = sample(c, g, f) ? TLOG_OK : TLOG_ENOMEM;
    tlog_frame_release(g->latest);
    g->latest = f;
    return rc;
}

static void read_file(report_cmd *c, const char *path, uint32_t file, tlog_reader **kept)
{
    tlog_reader *r = NULL;
    int rc = input_open(path, &r);
    if (rc != TLOG_OK) {
        char msg[INPUT_PROBLEM_SIZE];
        input_problem(msg, sizeof msg, path, r, rc);
        fprintf(c->err, "timerlog: %s\n", msg);
        tlog_reader_close(r);
        c->status = EXIT_DAMAGED;
        return;
    }
    *kept = r;   /* frames kept refer to its call sites */
    tlog_frame *f;
    while ((rc = tlog_reader_next(r, &f)) == TLOG_OK) {
        if (!selected(c, f)) {
            tlog_frame_release(f);
            continue;
        }
        tlog_frame_info info = {.size = sizeof info};
        tlog_frame_get_info(f, &info);
        int added = add_frame(c, f, file);
        if (added != TLOG_OK) {
            fprintf(c->err, "timerlog: %s: frame %" PRIu64 " left out: %s\n", path,
                    info.serial, tlog_strerror(added));
            c->status = EXIT_DAMAGED;
        }
    }
    if (warn_at_end(r, path, rc, c->err))
        return;
    fprintf(c->err, "timerlog: %s: %s\n", path, tlog_reader_error(r));
    c->status = EXIT_DAMAGED;
}

/* ------------------------------------------------------------------------ */
/* Writing the page                                                         */
/* ------------------------------------------------------------------------ */

/* Text for inside a <script>: every '<' (only ever inside JSON strings)
 * escaped, so that nothing in it can end the element. */
static void put_script_safe(FILE *out, const char *p, size_t n)
{
    for (const char *end = p + n; p < end;) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        size_t run = lt ? (size_t)(lt - p) : (size_t)(end - p);
        fwrite(p, 1, run, out);
        p += run;
        if (lt) {
            fputs("\\u003c", out);
            p++;
        }
    }
}

static void put_base64(FILE *out, const buf *b)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = (const unsigned char *)b->p;
    char quad[4];
    fputc('"', out);
    for (size_t k = 0; k < b->n; k += 3) {
        uint32_t v = (uint32_t)p[k] << 16;
        if (k + 1 < b->n)
            v |= (uint32_t)p[k + 1] << 8;
        if (k + 2 < b->n)
            v |= p[k + 2];
        quad[0] = digits[v >> 18];
        quad[1] = digits[(v >> 12) & 63];
        quad[2] = k + 1 < b->n ? digits[(v >> 6) & 63] : '=';
        quad[3] = k + 2 < b->n ? digits[v & 63] : '=';
        fwrite(quad, 1, 4, out);
    }
    fputc('"', out);
}

static void put_json_string(FILE *out, const char *s)
{
    buf b = {0};
    buf_json_string(&b, s);
    fwrite(b.p, 1, b.n, out);
    free(b.p);
}

/* A row's queues: 0 for none, -1 when frames differ, -2 when it ran on
 * several devices, the queue, or [q, ...] when its intervals ran on
 * several. */
static void put_queues(FILE *out, const rrow *row)
{
    if (row->devices_differ || row->queues_differ || row->nqueues < 2) {
        fprintf(out, "%ld", row->devices_differ  ? -2L
                            : row->queues_differ ? -1L
                            : row->nqueues       ? (long)row->queues[0]
                                                 : 0L);
        return;
    }
    for (uint32_t k = 0; k < row->nqueues; k++)
        fprintf(out, "%c%" PRIu32, k ? ',' : '[', row->queues[k]);
    fputc(']', out);
}

static void put_rows(FILE *out, const rgroup *g)
{
    fputs(",\"rows\":[", out);
    for (size_t r = 0; r < g->nrows; r++) {
        const rrow *row = &g->rows[r];
        fprintf(out, "%s[%ld,", r ? "," : "", row->parent == NO_ROW ? -1L : (long)row->parent);
        put_json_string(out, row->name);
        fprintf(out, ",\"%c\",%u,", row->kind == TLOG_KIND_EXECUTION ? 'E' : 'C', row->flags);
        put_json_string(out, row->device);
        fprintf(out, ",%ld,", row->launcher == NO_ROW ? -1L : (long)row->launcher);
        put_queues(out, row);
        fputc(']', out);
    }
    fputs("]", out);
}

/* Rows that a frame lacks at the end: zeros up to the group's count. */
static bool fill_rows(rgroup *g)
{
    bool ok = true;
    for (size_t r = 0; r < g->nrows; r++) {
        rrow *row = &g->rows[r];
        for (; row->filled < g->nframes; row->filled++) {
            buf_varint(&row->totals, 0);
            buf_varint(&row->counts, 0);
        }
        ok &= !row->totals.failed && !row->counts.failed;
    }
    return ok;
}

static void put_group(FILE *out, const rgroup *g, bool first)
{
    fputs(first ? "\n{\"thread\":" : ",\n{\"thread\":", out);
    put_json_string(out, g->thread);
    fputs(",\"root\":", out);
    put_json_string(out, g->root);
    fprintf(out, ",\"frames\":%zu,\"serial\":[", g->nframes);
    for (size_t k = 0; k < g->nframes; k++)
        fprintf(out, "%s%" PRIu64, k ? "," : "", g->serials[k]);
    fputs("],\"file\":[", out);
    for (size_t k = 0; k < g->nframes; k++)
        fprintf(out, "%s%" PRIu32, k ? "," : "", g->files[k]);
    fputs("],\"hitches\":[", out);
    for (size_t k = 0; k < g->nhitches; k++)
        fprintf(out, "%s%" PRIu32, k ? "," : "", g->hitches[k]);
    fputs("],\"unresolved\":[", out);
    for (size_t k = 0; k < g->nunresolved; k++)
        fprintf(out, "%s%" PRIu32, k ? "," : "", g->unresolved[k]);
    fputs("]", out);
    put_rows(out, g);
    fputs(",\n\"totals\":[", out);
    for (size_t r = 0; r < g->nrows; r++) {
        if (r)
            fputc(',', out);
        put_base64(out, &g->rows[r].totals);
    }
    fputs("],\n\"orders\":", out);
    put_base64(out, &g->orders);
    fputs(",\n\"counts\":[", out);
    for (size_t r = 0; r < g->nrows; r++) {
        if (r)
            fputc(',', out);
        put_base64(out, &g->rows[r].counts);
    }
    fputs("]}", out);
}

/* Whether frame (group, index) is already among wholes[0..n). */
static bool written(const whole *wholes, size_t n, uint32_t group, uint32_t index)
{
    for (size_t k = 0; k < n; k++)
        if (wholes[k].group == group && wholes[k].index == index)
            return true;
    return false;
}

/* The group and position of a frame the summary keeps as a hitch. */
static const hitch_at *hitch_of(const report_cmd *c, const tlog_frame *f)
{
    size_t n = c->ring_next < c->ring_size ? c->ring_next : c->ring_size;
    for (size_t k = 1; k <= n; k++) {
        const hitch_at *h = &c->ring[(c->ring_next - k) % c->ring_size];
        if (h->frame == f)
            return h;
    }
    return NULL;
}

/* Adds the whole of `f` (frame `index` of group `gi`) to `wholes`. */
static bool add_whole(report_cmd *c, whole **wholes, size_t *n, size_t *cap, uint32_t gi,
                      uint32_t index, const tlog_frame *f)
{
    if (written(*wholes, *n, gi, index))
        return true;
    if (!TLOG_GROW(*wholes, *cap, *n + 1))
        return false;
    whole *w = *wholes;
    c->nnodes = 0;
    rgroup *g = &c->groups[gi];
    c->walking = g;
    c->adding = false;
    size_t frames = g->nframes;
    g->nframes = index + 1;   /* write_whole names the group's last frame */
    whole one = {gi, index, 0, {0}};
    if (tlog_frame_walk(f, collect_nodes, c) == TLOG_OK)
        write_whole(c, g, f, &one.json);
    else
        one.json.failed = true;
    g->nframes = frames;
    if (one.json.failed) {
        free(one.json.p);
        return false;
    }
    w[(*n)++] = one;
    return true;
}

/* The frames written whole: each group's latest, the hitches kept, the
 * samples; NULL when memory ran out. */
static whole *gather_wholes(report_cmd *c, size_t *n)
{
    whole *wholes = NULL;
    size_t cap = 0;
    bool ok = true;
    *n = 0;
    for (uint32_t gi = 0; ok && gi < c->ngroups; gi++)
        if (c->groups[gi].latest)
            ok = add_whole(c, &wholes, n, &cap, gi, (uint32_t)c->groups[gi].nframes - 1,
                           c->groups[gi].latest);
    tlog_summary_info info = {.size = sizeof info};
    tlog_summary_get_info(c->summary, &info);
    for (size_t k = 0; ok && k < info.hitches; k++) {
        tlog_hitch_info h = {.size = sizeof h};
        const hitch_at *at = tlog_summary_hitch(c->summary, k, &h) == TLOG_OK
                                 ? hitch_of(c, h.frame) : NULL;
        if (at)
            ok = add_whole(c, &wholes, n, &cap, at->group, at->index, h.frame);
    }
    if (!ok) {
        for (size_t k = 0; k < *n; k++)
            free(wholes[k].json.p);
        free(wholes);
        return NULL;
    }
    return wholes;
}

/* The samples written: max_samples of the candidates that are not written
 * whole already (as a group's latest frame or a hitch), evenly spread over
 * them; all of them when there are no more. */
static void pick_samples(report_cmd *c, const whole *wholes, size_t nwholes)
{
    size_t n = 0;
    for (size_t k = 0; k < c->nsamples; k++) {
        if (written(wholes, nwholes, c->samples[k].group, c->samples[k].index))
            free(c->samples[k].json.p);
        else
            c->samples[n++] = c->samples[k];
    }
    size_t want = n < c->max_samples ? n : c->max_samples;
    for (size_t k = 0, next = 0; k < n; k++) {
        /* The k-th is picked as the next one when it is the first at or
         * past next * n / want. */
        if (next < want && k == next * n / want)
            c->samples[next++] = c->samples[k];
        else
            free(c->samples[k].json.p);
    }
    c->nsamples = want;
}

/* The statistics as `timerlog stats --json` writes them, into a buffer. */
static char *stats_json(report_cmd *c, size_t *len)
{
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    if (!mem)
        return NULL;
    int rc = tlog_summary_export_json(c->summary, mem);
    if (fclose(mem) != 0 || rc != TLOG_OK) {
        free(text);
        return NULL;
    }
    return text;
}

/* The comparison of `timerlog diff --json BASE... --vs FILE...`, run by
 * the same code; NULL (said on the error stream) when it fails. */
static char *diff_json(report_cmd *c, char **files, size_t nfiles, size_t *len)
{
    size_t n = 0;
    char **argv = calloc(c->nbase + nfiles + 8, sizeof *argv);
    if (!argv)
        return NULL;
    argv[n++] = "--json";
    if (c->thread) {
        argv[n++] = "--thread";
        argv[n++] = (char *)c->thread;
    }
    if (c->root) {
        argv[n++] = "--root";
        argv[n++] = (char *)c->root;
    }
    for (size_t k = 0; k < c->nbase; k++)
        argv[n++] = (char *)c->base[k];
    argv[n++] = "--vs";
    for (size_t k = 0; k < nfiles; k++)
        argv[n++] = files[k];
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    int rc = mem ? timerlog_diff((int)n, argv, mem, c->err) : TIMERLOG_DIFF_TROUBLE;
    if (mem && fclose(mem) != 0)
        rc = TIMERLOG_DIFF_TROUBLE;
    free(argv);
    if (rc == TIMERLOG_DIFF_TROUBLE) {
        fprintf(c->err, "timerlog: the comparison with the base run is left out\n");
        free(text);
        return NULL;
    }
    return text;
}

/* The data the page reads: see the top of tools/report/report.js. */
static void put_data(FILE *out, report_cmd *c, char **files, size_t nfiles,
                     const whole *wholes, size_t nwholes, const char *stats, size_t stats_len,
                     const char *diff, size_t diff_len)
{
    fprintf(out, "{\"version\":1,\"generator\":\"timerlog %d.%d.%d\",\"files\":[",
            TIMERLOG_VERSION_MAJOR, TIMERLOG_VERSION_MINOR, TIMERLOG_VERSION_PATCH);
    for (size_t k = 0; k < nfiles; k++) {
        if (k)
            fputc(',', out);
        put_json_string(out, files[k]);
    }
    fputs("],\"threads\":[", out);
    for (size_t k = 0; k < nfiles; k++) {
        uint32_t id;
        const char *name;
        fputs(k ? ",{" : "{", out);
        for (size_t t = 0; c->readers[k] && (name = tlog_reader_thread(c->readers[k], t, &id)); t++) {
            fprintf(out, "%s\"%" PRIu32 "\":", t ? "," : "", id);
            put_json_string(out, name);
        }
        fputs("}", out);
    }
    fputs("],\"base\":[", out);
    for (size_t k = 0; k < c->nbase; k++) {
        if (k)
            fputc(',', out);
        put_json_string(out, c->base[k]);
    }
    fprintf(out, "],\"budget_ns\":%" PRIu64 ",\"hitch_quantile\":%.17g,\"samples\":%zu,"
            "\n\"groups\":[", c->cfg.hitch_ns, c->cfg.hitch_quantile, c->max_samples);
    for (size_t k = 0; k < c->ngroups; k++)
        put_group(out, &c->groups[k], k == 0);
    fputs("],\n\"whole\":[", out);
    for (size_t k = 0; k < nwholes + c->nsamples; k++) {
        const whole *w = k < nwholes ? &wholes[k] : &c->samples[k - nwholes];
        fputs(k ? ",\n" : "\n", out);
        fwrite(w->json.p, 1, w->json.n, out);
    }
    fputs("],\n\"stats\":", out);
    put_script_safe(out, stats, stats_len);
    fputs(",\n\"diff\":", out);
    if (diff)
        put_script_safe(out, diff, diff_len);
    else
        fputs("null", out);
    fputs("}", out);
}

/* Writes `template` up to `marker`; returns what follows the marker. */
static const char *put_until(FILE *out, const char *template, const char *marker)
{
    const char *at = strstr(template, marker);
    if (!at)   /* the build checks the markers: never here */
        at = template + strlen(template);
    fwrite(template, 1, (size_t)(at - template), out);
    return *at ? at + strlen(marker) : at;
}

static void put_page(FILE *out, report_cmd *c, char **files, size_t nfiles,
                     const whole *wholes, size_t nwholes, const char *stats, size_t stats_len,
                     const char *diff, size_t diff_len)
{
    const char *rest = put_until(out, timerlog_report_html, "/*@CSS@*/");
    fputs(timerlog_report_css, out);
    rest = put_until(out, rest, "@DATA@");
    put_data(out, c, files, nfiles, wholes, nwholes, stats, stats_len, diff, diff_len);
    rest = put_until(out, rest, "/*@JS@*/");
    fputs(timerlog_report_js, out);
    fputs(rest, out);
}

/* Writes the page to -o's path or the output; says why not. */
static void write_page(report_cmd *c, char **files, size_t nfiles, const whole *wholes,
                       size_t nwholes, const char *stats, size_t stats_len, const char *diff,
                       size_t diff_len)
{
    errno = 0;
    FILE *out = c->out_path ? fopen(c->out_path, "w") : c->out;
    if (!out) {
        fprintf(c->err, "timerlog: cannot write %s: %s\n", c->out_path, strerror(errno));
        c->status = EXIT_DAMAGED;
        return;
    }
    put_page(out, c, files, nfiles, wholes, nwholes, stats, stats_len, diff, diff_len);
    int why = ferror(out) ? (errno ? errno : EIO) : 0;
    if (c->out_path ? fclose(out) != 0 : fflush(out) != 0)
        why = errno ? errno : EIO;
    if (why) {
        fprintf(c->err, "timerlog: cannot write %s: %s\n",
                c->out_path ? c->out_path : "the output", strerror(why));
        c->status = EXIT_DAMAGED;
    }
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */
/* ------------------------------------------------------------------------ */

static int usage(report_cmd *c, const char *problem, ...) __attribute__((format(printf, 2, 3)));

static int usage(report_cmd *c, const char *problem, ...)
{
    if (!problem) {
        fputs(usage_report, c->out);
        return 0;
    }
    va_list ap;
    va_start(ap, problem);
    fputs("timerlog: ", c->err);
    vfprintf(c->err, problem, ap);
    fputs("\n\n", c->err);
    va_end(ap);
    fputs(usage_report, c->err);
    return EXIT_USAGE;
}

static const option_value valued[] = {
    {"--base", "a stream file"},
    {"--thread", "a thread name"},
    {"--root", "a root row's title"},
    {"--hitch", "a number of milliseconds"},
    {"--hitch-quantile", "a number between 0 and 1"},
    {"--max-hitches", "a number from 1 to 4096"},
    {"--samples", "a number from 0 to 4096"},
    {"-o", "the path to write to"},
    {NULL, NULL},
};

static int bad_option(report_cmd *c, int argc, char **argv, int i)
{
    char msg[512];
    option_problem(valued, argc, argv, i, msg, sizeof msg);
    return usage(c, "%s", msg);
}

/* Reads the option at argv[*i] and its value; false when it is bad. */
static bool take_option(report_cmd *c, int argc, char **argv, int *i, bool *budget_given)
{
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    double x;
    if (!v || !*v)
        return false;
    if (strcmp(o, "--base") == 0) {
        c->base[c->nbase++] = v;
    } else if (strcmp(o, "--thread") == 0) {
        c->thread = v;
    } else if (strcmp(o, "--root") == 0) {
        c->root = v;
    } else if (strcmp(o, "-o") == 0) {
        c->out_path = v;
    } else if (strcmp(o, "--hitch") == 0) {
        if (!ms_arg(v, &c->cfg.hitch_ns))
            return false;
    } else if (strcmp(o, "--hitch-quantile") == 0 && number_arg(v, &x) && x > 0 && x < 1) {
        c->cfg.hitch_quantile = x;
    } else if (strcmp(o, "--max-hitches") == 0 && number_arg(v, &x) && x >= 1 && x <= 4096 &&
               x == (double)(uint32_t)x) {
        c->cfg.max_hitches = (uint32_t)x;
    } else if (strcmp(o, "--samples") == 0 && number_arg(v, &x) && x <= SAMPLES_MAX &&
               x == (double)(uint32_t)x) {
        c->max_samples = (size_t)x;
    } else {
        return false;
    }
    *budget_given |= strcmp(o, "--hitch") == 0 || strcmp(o, "--hitch-quantile") == 0;
    ++*i;
    return true;
}

static void free_cmd(report_cmd *c, tlog_reader **readers, size_t nreaders)
{
    for (size_t k = 0; k < c->ngroups; k++)
        free_group(&c->groups[k]);
    free(c->groups);
    for (size_t k = 0; k < c->nsamples; k++)
        free(c->samples[k].json.p);
    free(c->samples);
    free(c->ring);
    free(c->depth_rows);
    free(c->nodes);
    free(c->node_rows);
    free(c->sorted);
    tlog_summary_destroy(c->summary);   /* its hitches refer to the readers */
    for (size_t k = 0; k < nreaders; k++)
        tlog_reader_close(readers[k]);
    free(readers);
    free(c->base);
}

/* Reads the files, then writes the page. */
static void run_report(report_cmd *c, char **files, size_t nfiles, tlog_reader **readers)
{
    size_t frames = 0;
    c->readers = readers;
    for (size_t k = 0; k < nfiles; k++)
        read_file(c, files[k], (uint32_t)k, &readers[k]);
    for (size_t k = 0; k < c->ngroups; k++) {
        frames += c->groups[k].nframes;
        if (!fill_rows(&c->groups[k])) {
            fprintf(c->err, "timerlog: out of memory\n");
            c->status = EXIT_DAMAGED;
            return;
        }
    }
    if (!frames) {
        fprintf(c->err, "timerlog: %s\n", c->thread || c->root ? "no frame selected"
                                                              : "no frames in the files");
        c->status = EXIT_DAMAGED;
        return;
    }
    size_t nwholes = 0, stats_len = 0, diff_len = 0;
    whole *wholes = gather_wholes(c, &nwholes);
    if (wholes)
        pick_samples(c, wholes, nwholes);
    char *stats = wholes ? stats_json(c, &stats_len) : NULL;
    char *diff = stats && c->nbase ? diff_json(c, files, nfiles, &diff_len) : NULL;
    if (!stats) {
        fprintf(c->err, "timerlog: out of memory\n");
        c->status = EXIT_DAMAGED;
    } else {
        if (c->nbase && !diff)
            c->status = EXIT_DAMAGED;
        write_page(c, files, nfiles, wholes, nwholes, stats, stats_len, diff, diff_len);
    }
    for (size_t k = 0; k < nwholes; k++)
        free(wholes[k].json.p);
    free(wholes);
    free(stats);
    free(diff);
}

int timerlog_report(int argc, char **argv, FILE *out, FILE *err)
{
    report_cmd cmd = {.out = out, .err = err, .max_samples = SAMPLES_DEFAULT, .stride = 1};
    report_cmd *c = &cmd;
    cmd.cfg.size = sizeof cmd.cfg;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(c, NULL);
    c->base = calloc((size_t)argc + 1, sizeof *c->base);
    if (!c->base) {
        fprintf(err, "timerlog: out of memory\n");
        return EXIT_DAMAGED;
    }
    /* Options may come before or after the files, as `FILE... -o OUT`. */
    if (options_first(argc, argv, valued)) {
        free(c->base);
        return bad_option(c, argc, argv, argc - 1);
    }
    bool budget_given = false;
    int i = 0;
    for (; i < argc && is_option(argv[i]); i++)
        if (!take_option(c, argc, argv, &i, &budget_given)) {
            free(c->base);
            return bad_option(c, argc, argv, i);
        }
    char **files = argv + i;
    size_t nfiles = (size_t)(argc - i);
    if (!nfiles) {
        free(c->base);
        return usage(c, "no FILE given");
    }
    input_name_stdin(files, nfiles);
    input_name_stdin((char **)c->base, c->nbase);
    if (output_over_input(c->out_path, files, nfiles, err) ||
        output_over_input(c->out_path, (char *const *)c->base, c->nbase, err)) {
        free(c->base);
        return EXIT_USAGE;
    }
    if (!budget_given)
        c->cfg.hitch_ns = BUDGET_DEFAULT_NS;
    c->ring_size = c->cfg.max_hitches ? c->cfg.max_hitches : 16;
    tlog_reader **readers = calloc(nfiles, sizeof *readers);
    c->ring = calloc(c->ring_size, sizeof *c->ring);
    if (!readers || !c->ring || tlog_summary_create(&c->cfg, &c->summary) != TLOG_OK) {
        fprintf(err, "timerlog: out of memory\n");
        free_cmd(c, readers, 0);
        return EXIT_DAMAGED;
    }
    run_report(c, files, nfiles, readers);
    free_cmd(c, readers, nfiles);
    return c->status;
}
