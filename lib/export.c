/*
 * Exports of resolved frames: Chrome Trace Event JSON (a timeline that
 * Perfetto and chrome://tracing open), a JSON tree per frame with every
 * field of the tree-walk API, and CSV with one row per merged node.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "frame.h"
#include "map.h"
#include "site.h"
#include "text.h"
#include "tree.h"
#include "util.h"

#define DEVICE_TRACKS 1000000u   /* tids of device queues start here */
#define SIDE_TRACKS 2000000u     /* a thread's inserted and sync rows */
#define LANE_TRACKS 3000000u     /* a track's lanes past its first */
#define NONE_QUEUE UINT32_MAX

/* A JSON string; bytes that are not UTF-8 (names cut short, or damaged
 * input) become U+FFFD, so that the output always parses. */
static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else if (*p < 0x80)
            fputc(*p, out);
        else {
            size_t n = tlog_utf8_length_(p);
            if (n)
                fwrite(p, 1, n, out);
            else
                fputs("\\ufffd", out);
            p += n ? n : 1;
            continue;
        }
        p++;
    }
    fputc('"', out);
}

void tlog_json_str_(FILE *out, const char *s)
{
    json_str(out, s);
}

/* Microseconds with nanosecond precision, as Chrome's format wants. */
static void json_us(FILE *out, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(out, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", mag / 1000, (unsigned)(mag % 1000));
}

/* a + b, held within int64 (only damaged input comes near the limits). */
static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t dur_ns(uint64_t d)
{
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}


/* ------------------------------------------------------------------------ */
/* Chrome Trace Event format                                                */
/* ------------------------------------------------------------------------ */

/* A device's queue, as frames name it. */
typedef struct device_queue {
    const char *device;
    uint32_t queue;
} device_queue;

/* A process of the trace: the frames of one log (a rank's stream, a run),
 * told apart by rank and by the wall-clock time the log was created. The
 * first log of a rank is the rank's pid; more logs of a rank (runs of one
 * program exported together) take pids past every rank. */
typedef struct process {
    uint32_t rank;
    uint32_t log;             /* among its rank's, from 1; 0: its rank has one */
    uint64_t wall0;
    uint64_t pid;
} process;

/* An instance of a frame of the export, placed: on track `base` of its
 * process (procs[proc]), or on lane `tid` of it, from `start` to `end` on
 * the common timeline; `from`, the slice its launch arrow starts at
 * (SIZE_MAX: none). */
typedef struct slice {
    const tlog_frame *f;
    size_t k;                 /* f->insts[k] */
    size_t from;
    size_t proc;
    uint32_t base, tid;
    uint32_t queue;           /* a device queue's slice: its number, else NONE_QUEUE */
    int64_t start, end;
} slice;

/* A track the trace names: the node whose instances it holds first, and
 * its lane (0: the track itself). */
typedef struct track {
    uint64_t pid;
    uint32_t queue, tid, lane;  /* queue: as the slices' */
    const tlog_node *node;
} track;

/* Everything is placed before anything is written, so that an export
 * that runs out of memory writes nothing. */
typedef struct chrome {
    FILE *out;
    bool first;
    device_queue *queues;       /* device queues, numbered for their tids */
    size_t nqueues, capqueues;
    tlog_map queue_index;       /* their numbers by hash of (queue, device) */
    uint32_t last_queue;        /* the number found last: most often the next */
    process *procs;
    size_t nprocs, capprocs;
    size_t last_proc;           /* the process found last: most often the next */
    slice *slices;              /* every frame's instances, frame after frame */
    size_t nslices;
    track *tracks;
    size_t ntracks, captracks;
    uint32_t lanes;             /* lanes past a track's first, and tracks of
                                 * threads past the first million, numbered
                                 * for tids */
    tlog_map thread_index;      /* the tids of those threads' tracks */
    uint64_t flows;
    uint64_t wall_origin;       /* the earliest log creation among the frames */
    bool no_memory;             /* a queue or a thread's track found no
                                 * memory, or no tid left */
} chrome;

/* A time on the common timeline: ranks' logs were created at different
 * wall-clock times, so each frame's times shift by its log's creation. */
static int64_t ts_of(const chrome *c, const tlog_frame *f, int64_t start)
{
    uint64_t shift = f->wall0_ns - c->wall_origin;
    int64_t s = shift > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)shift;
    return add_sat(s, add_sat(f->start_ns, start));
}

static void event_sep(chrome *c)
{
    fputs(c->first ? "\n" : ",\n", c->out);
    c->first = false;
}

/* The track of a device's queue: numbered in the order first met, so that
 * no two queues share one, whatever their numbers. Found by hash: a frame
 * may use thousands of queues. */
static uint32_t queue_number(chrome *c, const char *device, uint32_t queue)
{
    if (!device)
        device = "?";
    const device_queue *last = c->nqueues ? &c->queues[c->last_queue] : NULL;
    if (last && last->queue == queue && last->device == device)
        return c->last_queue;
    tlog_map *m = &c->queue_index;
    uint64_t h = tlog_hash_str_(0x9e3779b97f4a7c15ull * ((uint64_t)queue + 1), device);
    size_t at = tlog_map_first_(m, h);
    for (; tlog_map_has_(m, at); at = tlog_map_next_(m, at, h)) {
        const device_queue *q = &c->queues[m->slots[at].value];
        if (q->queue == queue && (q->device == device || strcmp(q->device, device) == 0))
            return c->last_queue = m->slots[at].value;
    }
    if (c->nqueues >= SIDE_TRACKS - DEVICE_TRACKS ||
        !TLOG_GROW(c->queues, c->capqueues, c->nqueues + 1) || !tlog_map_reserve_(m, 1)) {
        c->no_memory = true;
        return 0;
    }
    for (at = tlog_map_first_(m, h); tlog_map_has_(m, at);)   /* the map may have grown */
        at = tlog_map_next_(m, at, h);
    tlog_map_set_(m, at, h, (uint32_t)c->nqueues);
    c->queues[c->nqueues] = (device_queue){device, queue};
    return c->last_queue = (uint32_t)c->nqueues++;
}

/* A tid past the lanes' (a lane's, or a thread's past the first million),
 * in *tid; false when none is left. */
static bool extra_tid(chrome *c, uint32_t *tid)
{
    if (c->lanes >= UINT32_MAX - LANE_TRACKS)
        return false;
    *tid = LANE_TRACKS + c->lanes++;
    return true;
}

/* The track of a thread's slices, or of the rows beside them (`side`): its
 * id, or that past SIDE_TRACKS, for ids below DEVICE_TRACKS. A log that
 * outlives a million threads gives ids past those, and a damaged stream
 * any: those tracks take numbers past the lanes' as they are met, so that
 * no thread shares a track with a queue, a side track or a lane. */
static uint32_t thread_track(chrome *c, uint32_t thread, bool side)
{
    if (thread < DEVICE_TRACKS)
        return side ? SIDE_TRACKS + thread : thread;
    uint64_t key = ((uint64_t)thread << 1 | side) + 1;   /* never TLOG_MAP_EMPTY */
    size_t at;
    if (!tlog_map_reserve_(&c->thread_index, 1)) {
        c->no_memory = true;
        return 0;
    }
    if (tlog_map_find_(&c->thread_index, key, &at))
        return c->thread_index.slots[at].value;
    uint32_t tid;
    if (!extra_tid(c, &tid)) {
        c->no_memory = true;
        return 0;
    }
    tlog_map_set_(&c->thread_index, at, key, tid);
    return tid;
}

static bool on_device_track(const tlog_node *n)
{
    return n->dev && (n->flags & TLOG_NODE_DEVICE);
}

/* Rows a thread did not time itself (inserted timings, `Device past frame
 * end`, forced syncs of older streams) go on a track beside the thread's. */
static bool on_side_track(const tlog_node *n)
{
    return (n->kind == TLOG_KIND_EXECUTION && n->site) ||
           (n->flags & (TLOG_NODE_FORCED_SYNC | TLOG_NODE_PAST_FRAME));
}

/* One "M" thread_name event: the name of the device or thread of the
 * track's first node, and what says which track of it this is. */
static void name_track(chrome *c, const track *t)
{
    const tlog_node *n = t->node;
    const char *name = n->thread_name;
    char suffix[96];
    int at = 0;
    if (t->queue != NONE_QUEUE) {
        const device_queue *q = &c->queues[t->queue];
        name = q->device;
        at = snprintf(suffix, sizeof suffix, " queue %u", q->queue);
    } else if (on_side_track(n)) {
        at = snprintf(suffix, sizeof suffix, " (inserted and sync rows)");
    }
    if (t->lane)
        snprintf(suffix + at, sizeof suffix - (size_t)at, ", lane %u", t->lane + 1);
    else
        suffix[at] = '\0';
    char full[200];
    snprintf(full, sizeof full, "%s%s", name ? name : "?", suffix);
    event_sep(c);
    fprintf(c->out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%" PRIu64 ",\"tid\":%u,"
                    "\"args\":{\"name\":", t->pid, t->tid);
    json_str(c->out, full);
    fputs("}}", c->out);
}

static void complete_event(chrome *c, const tlog_frame *f, const tlog_inst *in,
                           const slice *s)
{
    const tlog_node *n = &f->nodes[in->node];
    event_sep(c);
    fputs("{\"name\":", c->out);
    json_str(c->out, n->name);
    fprintf(c->out, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":",
            (n->flags & TLOG_NODE_DEVICE) ? "device"
            : n->kind == TLOG_KIND_EXECUTION ? "execution" : "control");
    json_us(c->out, s->start);
    fputs(",\"dur\":", c->out);
    json_us(c->out, dur_ns(in->duration_ns));
    fprintf(c->out, ",\"pid\":%" PRIu64 ",\"tid\":%u,\"args\":{\"frame\":%" PRIu64 "}}",
            c->procs[s->proc].pid, s->tid, f->serial);
}

/* An arrow from the launching scope's slice to the device interval. */
static void flow(chrome *c, const slice *from, const slice *device)
{
    uint64_t id = ++c->flows;
    event_sep(c);
    fprintf(c->out, "{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"s\",\"id\":%" PRIu64
                    ",\"pid\":%" PRIu64 ",\"tid\":%u,\"ts\":", id, c->procs[from->proc].pid,
            from->tid);
    json_us(c->out, from->start);
    fputs("},", c->out);
    fprintf(c->out, "\n{\"name\":\"launch\",\"cat\":\"launch\",\"ph\":\"f\",\"bp\":\"e\","
                    "\"id\":%" PRIu64 ",\"pid\":%" PRIu64 ",\"tid\":%u,\"ts\":", id,
            c->procs[device->proc].pid, device->tid);
    json_us(c->out, device->start);
    fputc('}', c->out);
}

/* ---- processes ---- */

static bool same_process(const process *p, const tlog_frame *f)
{
    return p->rank == f->rank && p->wall0 == f->wall0_ns;
}

/* The index of the process of frame f, made when first met; SIZE_MAX when
 * memory ran out. */
static size_t process_of(chrome *c, const tlog_frame *f)
{
    if (c->nprocs && same_process(&c->procs[c->last_proc], f))
        return c->last_proc;
    for (size_t i = 0; i < c->nprocs; i++)
        if (same_process(&c->procs[i], f))
            return c->last_proc = i;
    if (!TLOG_GROW(c->procs, c->capprocs, c->nprocs + 1))
        return SIZE_MAX;
    c->procs[c->nprocs] = (process){f->rank, 0, f->wall0_ns, f->rank};
    return c->last_proc = c->nprocs++;
}

/* Numbers the logs of ranks that have more than one, and gives those
 * after a rank's first a pid past every rank. */
static void number_processes(chrome *c)
{
    uint64_t next = 0;
    for (size_t i = 0; i < c->nprocs; i++)
        if (c->procs[i].rank >= next)
            next = (uint64_t)c->procs[i].rank + 1;
    for (size_t i = 0; i < c->nprocs; i++) {
        process *p = &c->procs[i];
        uint32_t before = 0;   /* logs of its rank met before it */
        bool shared = false;
        for (size_t j = 0; j < c->nprocs; j++)
            if (j != i && c->procs[j].rank == p->rank) {
                shared = true;
                before += j < i;
            }
        p->log = shared ? before + 1 : 0;
        if (before)
            p->pid = next++;
    }
}

static void name_process(chrome *c, const process *p)
{
    event_sep(c);
    fprintf(c->out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRIu64 ",\"tid\":0,"
                    "\"args\":{\"name\":\"rank %u", p->pid, p->rank);
    if (p->log)
        fprintf(c->out, ", log %u", p->log);
    fputs("\"}}", c->out);
}

/* ---- lanes ---- */

/* A slice to place: slice s, by its track, then by start, the longer
 * first where two start together, so that a slice comes after every slice
 * that may contain it. */
typedef struct placing {
    uint64_t pid;
    uint32_t base;
    int64_t start, end;
    size_t s;
} placing;

static int placing_order(const void *pa, const void *pb)
{
    const placing *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->base != b->base)
        return a->base < b->base ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return a->s < b->s ? -1 : a->s > b->s;
}

/* A lane's slices open at the start being placed: their ends, outermost
 * first. */
typedef struct lane {
    int64_t *ends;
    size_t n, cap;
    uint32_t tid;
} lane;

/* Whether a slice [start, end] nests in the lane, the lane's slices that
 * end by `start` closed first (every slice placed later starts later). */
static bool nests(lane *l, int64_t start, int64_t end)
{
    while (l->n && l->ends[l->n - 1] <= start)
        l->n--;
    return l->n == 0 || l->ends[l->n - 1] >= end;
}

/* The lanes of the track being placed. */
typedef struct lanes {
    lane *at;
    size_t n, cap;
} lanes;

static void lanes_free(lanes *ls)
{
    for (size_t i = 0; i < ls->cap; i++)
        free(ls->at[i].ends);
    free(ls->at);
}

/* A new lane of the track being placed, named after slice x; false when
 * memory ran out. */
static bool open_lane(chrome *c, lanes *ls, const placing *p, const slice *x)
{
    size_t i = ls->n, had = ls->cap;
    if (!TLOG_GROW(ls->at, ls->cap, i + 1))
        return false;
    memset(ls->at + had, 0, (ls->cap - had) * sizeof *ls->at);   /* no ends yet */
    if (!TLOG_GROW(c->tracks, c->captracks, c->ntracks + 1))
        return false;
    ls->at[i].n = 0;
    ls->at[i].tid = p->base;
    if (i && !extra_tid(c, &ls->at[i].tid))
        return false;
    const tlog_node *n = &x->f->nodes[x->f->insts[x->k].node];
    c->tracks[c->ntracks++] = (track){p->pid, x->queue, ls->at[i].tid, (uint32_t)i, n};
    ls->n++;
    return true;
}

/* The lane of its track that slice p nests in, the first from the track
 * itself on. False when memory ran out. */
static bool take_lane(chrome *c, lanes *ls, const placing *p)
{
    size_t i = 0;
    while (i < ls->n && !nests(&ls->at[i], p->start, p->end))
        i++;
    if (i == ls->n && !open_lane(c, ls, p, &c->slices[p->s]))
        return false;
    lane *l = &ls->at[i];
    if (!TLOG_GROW(l->ends, l->cap, l->n + 1))
        return false;
    l->ends[l->n++] = p->end;
    c->slices[p->s].tid = l->tid;
    return true;
}

/* The lane of every slice, over all frames of a process at once: slices
 * of two frames (a device that runs behind its host) may overlap too. */
static int place_lanes(chrome *c)
{
    placing *order = tlog_malloc_((c->nslices ? c->nslices : 1) * sizeof *order);
    if (!order)
        return TLOG_ENOMEM;
    for (size_t s = 0; s < c->nslices; s++) {
        const slice *x = &c->slices[s];
        order[s] = (placing){c->procs[x->proc].pid, x->base, x->start, x->end, s};
    }
    qsort(order, c->nslices, sizeof *order, placing_order);
    lanes ls = {0};
    bool ok = true;
    for (size_t i = 0; i < c->nslices && ok; i++) {
        const placing *p = &order[i];
        if (i == 0 || p->base != p[-1].base || p->pid != p[-1].pid)
            ls.n = 0;   /* a track of its own: its lanes afresh */
        ok = take_lane(c, &ls, p);
    }
    lanes_free(&ls);
    free(order);
    return ok ? TLOG_OK : TLOG_ENOMEM;
}

/* ---- launch arrows ---- */

/* A frame's instances grouped by row, each row's in time order: where an
 * arrow starts is found among its launcher row's. */
typedef struct by_row {
    uint32_t *at;      /* instance indexes, grouped */
    uint32_t *first;   /* by row index, and one past: where its group begins */
    uint32_t *rank;    /* by instance index: its place in its row's group */
} by_row;

typedef struct keyed {
    uint32_t node, k;
    int64_t start;
} keyed;

static int keyed_order(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

static void by_row_free(by_row *g)
{
    free(g->at);
    free(g->first);
    free(g->rank);
}

static bool by_row_make(by_row *g, const tlog_frame *f)
{
    size_t n = f->ninsts ? f->ninsts : 1;
    keyed *keys = tlog_malloc_(n * sizeof *keys);
    g->at = tlog_malloc_(n * sizeof *g->at);
    g->first = tlog_calloc_(f->nnodes + 1, sizeof *g->first);
    g->rank = tlog_malloc_(n * sizeof *g->rank);
    if (!keys || !g->at || !g->first || !g->rank) {
        free(keys);
        by_row_free(g);
        *g = (by_row){0};
        return false;
    }
    for (size_t k = 0; k < f->ninsts; k++) {
        keys[k] = (keyed){f->insts[k].node, (uint32_t)k, f->insts[k].start_ns};
        g->first[f->insts[k].node + 1]++;
    }
    qsort(keys, f->ninsts, sizeof *keys, keyed_order);
    for (size_t r = 0; r < f->nnodes; r++)
        g->first[r + 1] += g->first[r];
    for (size_t i = 0; i < f->ninsts; i++) {
        g->at[i] = keys[i].k;
        g->rank[keys[i].k] = (uint32_t)i - g->first[keys[i].node];
    }
    free(keys);
    return true;
}

/* Where the arrow to device instance k, launched from row `launcher`,
 * starts: the launcher's instances pair with the device row's in time
 * order, in proportion (the j-th of n kernels comes from the launcher's
 * j * m / n-th of m instances), so a loop that launches one kernel an
 * iteration has an arrow from each iteration. The instance's index, or
 * SIZE_MAX when the launcher has none. */
static size_t arrow_start(const by_row *g, const tlog_frame *f, size_t k, size_t launcher)
{
    uint32_t row = f->insts[k].node;
    uint64_t n = g->first[row + 1] - g->first[row],
             m = g->first[launcher + 1] - g->first[launcher];
    if (!m)
        return SIZE_MAX;
    return g->at[g->first[launcher] + g->rank[k] * m / n];
}

/* ---- the trace ---- */

/* The slices of frame f, from slice `first` on: their process, track,
 * times and arrows. */
static int plan_frame(chrome *c, const tlog_frame *f, size_t first)
{
    size_t proc = process_of(c, f);
    by_row g = {0};
    if (proc == SIZE_MAX || !by_row_make(&g, f))
        return TLOG_ENOMEM;
    size_t d = 0;   /* device intervals come in instance order */
    for (size_t k = 0; k < f->ninsts; k++) {
        const tlog_inst *in = &f->insts[k];
        const tlog_node *n = &f->nodes[in->node];
        slice *x = &c->slices[first + k];
        int64_t start = ts_of(c, f, in->start_ns);
        while (d < f->device_rows && f->inst_devs[d].inst < k)
            d++;
        bool interval = d < f->device_rows && f->inst_devs[d].inst == k;
        *x = (slice){.f = f, .k = k, .from = SIZE_MAX, .proc = proc, .queue = NONE_QUEUE,
                     .start = start, .end = add_sat(start, dur_ns(in->duration_ns))};
        /* Its track: a device row's on the queue it ran on (a host entry of
         * the row on the row's), the others on their thread's or beside it.
         * Slices that would still overlap others of their track in part go
         * on lanes of it (place_lanes), so that every track's slices nest. */
        if (on_device_track(n)) {
            const char *device = interval ? f->inst_devs[d].device : n->dev->device;
            x->queue = queue_number(c, device, interval ? f->inst_devs[d].queue : n->dev->queue);
            x->base = DEVICE_TRACKS + x->queue;
        } else {
            x->base = thread_track(c, in->thread, on_side_track(n));
        }
        size_t launcher = interval ? f->inst_devs[d].launcher : UINT32_MAX;
        if (!(n->flags & TLOG_NODE_DEVICE) || launcher == UINT32_MAX)
            continue;
        size_t from = arrow_start(&g, f, k, launcher);
        x->from = from == SIZE_MAX ? SIZE_MAX : first + from;
    }
    by_row_free(&g);
    return c->no_memory ? TLOG_ENOMEM : TLOG_OK;
}

/* Every slice of the frames, placed; their processes numbered. */
static int plan(chrome *c, const tlog_frame *const *frames, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (frames[i]->ninsts > SIZE_MAX / sizeof *c->slices - total)
            return TLOG_ENOMEM;
        total += frames[i]->ninsts;
    }
    c->slices = tlog_malloc_((total ? total : 1) * sizeof *c->slices);
    if (!c->slices)
        return TLOG_ENOMEM;
    c->nslices = total;
    int rc = TLOG_OK;
    size_t first = 0;
    for (size_t i = 0; i < n && rc == TLOG_OK; i++) {
        rc = plan_frame(c, frames[i], first);
        first += frames[i]->ninsts;
    }
    if (rc != TLOG_OK)
        return rc;
    number_processes(c);
    return place_lanes(c);
}

/* What plan placed, written; nothing here allocates. */
static void write_trace(chrome *c)
{
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", c->out);
    for (size_t i = 0; i < c->nprocs; i++)
        name_process(c, &c->procs[i]);
    for (size_t i = 0; i < c->ntracks; i++)
        name_track(c, &c->tracks[i]);
    for (size_t s = 0; s < c->nslices; s++) {
        const slice *x = &c->slices[s];
        complete_event(c, x->f, &x->f->insts[x->k], x);
        if (x->from != SIZE_MAX)
            flow(c, &c->slices[x->from], x);
    }
    fputs("\n]}\n", c->out);
}

/* The frames given to an export: n of them, none NULL. Checked before
 * anything is written, so that a refused export writes nothing. */
static bool frames_valid(const tlog_frame *const *frames, size_t n)
{
    if (!n)
        return true;
    if (!frames || n > SIZE_MAX / sizeof *frames)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!frames[i])
            return false;
    return true;
}

/* Whether every frame has a timeline: merged and reduced frames have rows
 * but no instances, and would give an empty trace. */
static bool frames_timed(const tlog_frame *const *frames, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (frames[i]->nnodes && !frames[i]->ninsts)
            return false;
    return true;
}

int tlog_export_chrome(const tlog_frame *const *frames, size_t n, FILE *out)
{
    if (!frames_valid(frames, n) || !frames_timed(frames, n))
        return TLOG_EINVAL;
    chrome c = {.out = out ? out : stdout, .first = true, .wall_origin = UINT64_MAX};
    for (size_t i = 0; i < n; i++)
        if (frames[i]->wall0_ns < c.wall_origin)
            c.wall_origin = frames[i]->wall0_ns;
    int rc = plan(&c, frames, n);
    if (rc == TLOG_OK)
        write_trace(&c);
    tlog_map_free_(&c.queue_index);
    tlog_map_free_(&c.thread_index);
    free(c.queues);
    free(c.procs);
    free(c.slices);
    free(c.tracks);
    return rc != TLOG_OK ? rc : tlog_written_(c.out);
}

/* ------------------------------------------------------------------------ */
/* JSON trees                                                               */
/* ------------------------------------------------------------------------ */

/* A device interval's row and where it ran, for a row's list of queues. */
typedef struct ran_on {
    uint32_t node;
    uint32_t queue;
    const char *device;
} ran_on;

/* What a frame's JSON needs besides the frame: each node's index in
 * pre-order, and its device intervals' queues sorted by node, device and
 * queue. */
typedef struct json_scratch {
    uint32_t *index_of;
    ran_on *ran;
    size_t nran;
} json_scratch;

static int ran_on_cmp(const void *pa, const void *pb)
{
    const ran_on *a = pa, *b = pb;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    int d = strcmp(a->device ? a->device : "", b->device ? b->device : "");
    if (d)
        return d;
    return a->queue < b->queue ? -1 : a->queue > b->queue;
}

/* Device intervals of frames with a timeline: merged and reduced frames
 * have none. */
static size_t intervals_of(const tlog_frame *f)
{
    return f->ninsts && f->inst_devs ? (size_t)f->device_rows : 0;
}

static void sort_ran_on(const tlog_frame *f, json_scratch *js)
{
    js->nran = intervals_of(f);
    for (size_t k = 0; k < js->nran; k++) {
        const tlog_inst_dev *d = &f->inst_devs[k];
        js->ran[k] = (ran_on){f->insts[d->inst].node, d->queue, d->device};
    }
    qsort(js->ran, js->nran, sizeof *js->ran, ran_on_cmp);
}

/* ,"queues":[{"device":...,"queue":...},...]: every queue a device row's
 * intervals ran on (tlog_node_info has the first's). */
static void json_queues(FILE *out, const json_scratch *js, uint32_t node)
{
    size_t lo = 0, hi = js->nran;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (js->ran[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    fputs(",\"queues\":[", out);
    for (size_t k = lo; k < js->nran && js->ran[k].node == node; k++) {
        if (k > lo && ran_on_cmp(&js->ran[k - 1], &js->ran[k]) == 0)
            continue;
        fputs(k > lo ? ",{\"device\":" : "{\"device\":", out);
        if (js->ran[k].device)
            json_str(out, js->ran[k].device);
        else
            fputs("null", out);
        fprintf(out, ",\"queue\":%u}", js->ran[k].queue);
    }
    fputc(']', out);
}

static void json_node_fields(FILE *out, const tlog_frame *f, const tlog_node *n,
                             const json_scratch *js)
{
    const uint32_t *index_of = js->index_of;
    tlog_node_info i = {.size = sizeof i};
    tlog_node_get_info(n, &i);
    fprintf(out, "{\"index\":%u,\"name\":", index_of[n - f->nodes]);
    json_str(out, i.name);
    fprintf(out, ",\"kind\":\"%s\",\"thread\":%u,\"thread_name\":",
            i.kind == TLOG_KIND_EXECUTION ? "execution" : "control", i.thread);
    json_str(out, i.thread_name);
    fprintf(out, ",\"depth\":%d,\"start_ns\":%" PRId64 ",\"total_ns\":%" PRIu64
                 ",\"self_ns\":%" PRIu64 ",\"percent_of_parent\":",
            i.depth, i.start_ns, i.total_ns, i.self_ns);
    tlog_put_fixed_(out, i.percent_of_parent, 6);
    fprintf(out, ",\"count\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
                 ",\"file\":",
            i.count, i.min_ns, i.max_ns);
    if (i.file)
        json_str(out, i.file);
    else
        fputs("null", out);
    fprintf(out, ",\"line\":%d,\"site_id\":\"0x%016" PRIx64 "\",\"flags\":[", i.line,
            i.site_id);
    static const char *const names[] = {"repaired", "device", "unresolved", "forced_sync",
                                        "past_frame"};
    bool first = true;
    for (unsigned b = 0; b < sizeof names / sizeof names[0]; b++)
        if (i.flags & (1u << b)) {
            fprintf(out, "%s\"%s\"", first ? "" : ",", names[b]);
            first = false;
        }
    fputs("],\"launcher\":", out);
    if (i.launcher)
        fprintf(out, "%u", index_of[i.launcher - f->nodes]);
    else
        fputs("null", out);
    fputs(",\"launch_site\":", out);
    if (i.launch_site)
        json_str(out, i.launch_site->name);
    else
        fputs("null", out);
    fputs(",\"device\":", out);
    if (i.device)
        json_str(out, i.device);
    else
        fputs("null", out);
    fprintf(out, ",\"queue\":%u", i.queue);
    if ((i.flags & TLOG_NODE_DEVICE) && intervals_of(f))
        json_queues(out, js, (uint32_t)(n - f->nodes));
    if (f->reduced_ranks) {   /* rows of a reduced frame: their spread */
        fprintf(out, ",\"ranks\":%u,\"rank_min_ns\":%" PRIu64 ",\"rank_max_ns\":%" PRIu64
                     ",\"rank_mean_ns\":",
                i.ranks, i.rank_min_ns, i.rank_max_ns);
        tlog_put_fixed_(out, i.rank_mean_ns, 1);
        fputs(",\"imbalance\":", out);
        tlog_put_fixed_(out, i.imbalance, 6);
    }
    fputs(",\"children\":[", out);
}

/* index_of: room for the frame's nodes, each node's index in pre-order. */
static void json_frame(FILE *out, const tlog_frame *f, json_scratch *js)
{
    uint32_t *index_of = js->index_of;
    sort_ran_on(f, js);
    uint32_t k = 0;
    for (const tlog_node *n = tlog_frame_root(f); n; n = tlog_node_next_(n, true))
        index_of[n - f->nodes] = k++;
    fprintf(out, "{\"serial\":%" PRIu64 ",\"rank\":%u,\"thread\":%u,\"thread_name\":",
            f->serial, f->rank, f->thread);
    json_str(out, f->thread_name);
    fprintf(out, ",\"start_ns\":%" PRId64 ",\"duration_ns\":%" PRIu64
                 ",\"scopes_dropped\":%" PRIu64 ",\"scopes_repaired\":%" PRIu64
                 ",\"device_intervals\":%" PRIu64 ",\"device_unresolved\":%" PRIu64,
            f->start_ns, f->duration_ns, f->dropped, f->repaired, f->device_rows,
            f->device_unresolved);
    if (f->reduced_ranks)   /* duration_ns is then the root's mean per rank */
        fprintf(out, ",\"reduced_ranks\":%u,\"partial_rows\":%zu", f->reduced_ranks,
                f->partial_rows);
    fputs(",\"root\":", out);
    /* Iterative: open a node, and close as many as the walk climbs. */
    for (const tlog_node *n = tlog_frame_root(f); n;) {
        json_node_fields(out, f, n, js);
        if (n->first_child) {
            n = n->first_child;
            continue;
        }
        fputs("]}", out);
        while (n && !n->next_sibling) {
            n = n->parent;
            if (n)
                fputs("]}", out);
        }
        if (n) {
            n = n->next_sibling;
            fputc(',', out);
        }
    }
    fputc('}', out);
}

int tlog_export_json(const tlog_frame *const *frames, size_t n, FILE *out)
{
    if (!frames_valid(frames, n))
        return TLOG_EINVAL;
    if (!out)
        out = stdout;
    /* Taken before anything is written: out of memory leaves no half file. */
    size_t most = 1, most_ran = 1;
    for (size_t i = 0; i < n; i++) {
        most = frames[i]->nnodes > most ? frames[i]->nnodes : most;
        most_ran = intervals_of(frames[i]) > most_ran ? intervals_of(frames[i]) : most_ran;
    }
    json_scratch js = {tlog_malloc_(most * sizeof *js.index_of),
                       most_ran <= SIZE_MAX / sizeof *js.ran
                           ? tlog_malloc_(most_ran * sizeof *js.ran)
                           : NULL,
                       0};
    if (!js.index_of || !js.ran) {
        free(js.index_of);
        free(js.ran);
        return TLOG_ENOMEM;
    }
    fputs("{\"frames\":[", out);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(',', out);
        fputc('\n', out);
        json_frame(out, frames[i], &js);
    }
    fputs("\n]}\n", out);
    free(js.index_of);
    free(js.ran);
    return tlog_written_(out);
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                      */
/* ------------------------------------------------------------------------ */

/* Text as UTF-8, bytes that are not becoming U+FFFD; quotes doubled when
 * `quote`. */
static void put_utf8(FILE *out, const char *s, bool quote)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = *p < 0x80 ? 1 : tlog_utf8_length_(p);
        if (!n) {
            fputs("\xef\xbf\xbd", out);
            p++;
            continue;
        }
        if (quote && *p == '"')
            fputc('"', out);
        fwrite(p, 1, n, out);
        p += n;
    }
}

static void csv_field(FILE *out, const char *s)
{
    bool quote = strpbrk(s, ",\"\n\r") != NULL;
    if (quote)
        fputc('"', out);
    put_utf8(out, s, quote);
    if (quote)
        fputc('"', out);
}

void tlog_csv_field_(FILE *out, const char *s)
{
    csv_field(out, s);
}

void tlog_put_utf8_(FILE *out, const char *s, bool quote)
{
    put_utf8(out, s, quote);
}

void tlog_put_path_title_(FILE *out, const char *title, tlog_kind kind, bool quote)
{
    if (kind == TLOG_KIND_EXECUTION)
        fputs("(E) ", out);
    put_utf8(out, title, quote);
}

/* The row's path: its ancestors' titles and its own, joined by " / ",
 * each (E) title led by "(E) "; written piece by piece, so that an export
 * never needs memory. Top down, a chain of rows at a time, each chain
 * found from the row up: a path may be deeper than one thread nests
 * (through hand-off), and than the chain. */
static void csv_path(FILE *out, const tlog_node *n)
{
    enum { KEPT = TLOG_MAX_DEPTH + 2 };
    const tlog_node *chain[KEPT];
    size_t depth = 0;
    bool quote = false;
    for (const tlog_node *a = n; a; a = a->parent, depth++)
        quote |= strpbrk(a->name, ",\"\n\r") != NULL;
    if (quote)
        fputc('"', out);
    for (size_t hi = depth; hi > 0;) {   /* the rows hi - 1 down to lo above n */
        size_t lo = hi > KEPT ? hi - KEPT : 0;
        const tlog_node *a = n;
        for (size_t i = 0; i < lo; i++)
            a = a->parent;
        for (size_t i = lo; i < hi; i++, a = a->parent)
            chain[i - lo] = a;
        for (size_t i = hi; i-- > lo;) {
            if (i + 1 != depth)
                fputs(" / ", out);
            tlog_put_path_title_(out, chain[i - lo]->name, chain[i - lo]->kind, quote);
        }
        hi = lo;
    }
    if (quote)
        fputc('"', out);
}

int tlog_export_csv(const tlog_frame *const *frames, size_t n, FILE *out)
{
    if (!frames_valid(frames, n))
        return TLOG_EINVAL;
    if (!out)
        out = stdout;
    fputs("rank,frame,path,kind,thread,count,total_ns,min_ns,max_ns,percent_of_parent\n", out);
    for (size_t i = 0; i < n; i++) {
        const tlog_frame *f = frames[i];
        for (const tlog_node *node = tlog_frame_root(f); node; node = tlog_node_next_(node, true)) {
            fprintf(out, "%u,%" PRIu64 ",", f->rank, f->serial);
            csv_path(out, node);
            fprintf(out, ",%s,", node->kind == TLOG_KIND_EXECUTION ? "E" : "C");
            csv_field(out, node->thread_name ? node->thread_name : "");
            fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", node->count,
                    node->total_ns, node->min_ns, node->max_ns);
            tlog_put_fixed_(out, tlog_node_percent_(node), 2);
            fputc('\n', out);
        }
    }
    return tlog_written_(out);
}
