/*
 * Resolution: turns a completed frame's raw records into its tree.
 *
 *  1. Records are in post-order with their depth, so one pass with a list of
 *     pending children per depth rebuilds the tree of instances.
 *  2. Scopes got a sequence number in begin order (= pre-order); hand-off
 *     tokens name scopes by it, so work that other threads attached is hung
 *     under the right instance.
 *  3. Device intervals delivered to the frame are placed by one rule, from
 *     recorded times and the frame's structure alone (place_row): under the
 *     first sync scope that waited for them, else under their launcher if
 *     they ended within the frame, else under `Device past frame end`.
 *  4. Instances with the same title and kind under the same row merge into
 *     one node (count, total, min, max); the instances stay as the timeline.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

#define NONE UINT32_MAX

typedef struct inst {
    const tlog_site *site;   /* NULL for a worker row */
    const char *name;
    const char *thread_name;
    tlog_ticks start, end;
    uint32_t parent, first_child, last_child, next_sibling;
    uint32_t thread;
    uint32_t node;
    uint16_t flags;          /* tlog_rec_flags */
    uint32_t drow;           /* device intervals: index in the frame's rows */
    uint32_t sync;           /* sync scopes: index in the frame's syncs + 1 */
} inst;

typedef struct bnode {
    uint32_t parent;
    uint32_t inst;           /* first instance */
    uint64_t count;
    uint64_t site_count;     /* instances from the first instance's site */
    tlog_ticks total, min, max, first_start;
    uint8_t flags;
} bnode;

typedef struct builder {
    inst *insts;
    uint32_t ninsts;
    uint32_t *pending_head;  /* per depth: children waiting for a parent */
    uint32_t *pending_tail;
    size_t max_depth;
} builder;

static void append_child(builder *b, uint32_t parent, uint32_t child)
{
    inst *p = &b->insts[parent];
    b->insts[child].parent = parent;
    b->insts[child].next_sibling = NONE;
    if (p->last_child == NONE)
        p->first_child = child;
    else
        b->insts[p->last_child].next_sibling = child;
    p->last_child = child;
}

static uint32_t new_inst(builder *b, const tlog_site *site, const char *name,
                         const char *thread_name, uint32_t thread,
                         tlog_ticks start, tlog_ticks end, unsigned flags)
{
    uint32_t i = b->ninsts++;
    b->insts[i] = (inst){site, name, thread_name, start, end, NONE, NONE, NONE, NONE,
                         thread, NONE, (uint16_t)flags, NONE, 0};
    return i;
}

static void pending_push(builder *b, size_t depth, uint32_t i)
{
    if (b->pending_head[depth] == NONE)
        b->pending_head[depth] = i;
    else
        b->insts[b->pending_tail[depth]].next_sibling = i;
    b->pending_tail[depth] = i;
    b->insts[i].next_sibling = NONE;
}

/* Moves the pending list at `depth` under `parent`. */
static void adopt_pending(builder *b, size_t depth, uint32_t parent)
{
    uint32_t c = b->pending_head[depth];
    while (c != NONE) {
        uint32_t next = b->insts[c].next_sibling;
        append_child(b, parent, c);
        c = next;
    }
    b->pending_head[depth] = NONE;
}

/*
 * Adds post-order records whose depths, less `base`, start at `top` (0 for a
 * frame's own records, whose depth-0 record is the root; 1 for attached work
 * that hangs under `parent`).
 */
static uint32_t add_records(builder *b, const tlog_rec *recs, size_t n, size_t base,
                            size_t top, uint32_t parent, uint32_t thread,
                            const char *thread_name)
{
    uint32_t last = NONE;
    size_t deepest = top;
    for (size_t k = 0; k < n; k++) {
        const tlog_rec *r = &recs[k];
        size_t d = r->depth > base ? r->depth - base : 0;
        if (d < top)
            d = top;
        if (d > deepest)
            deepest = d;
        const char *name = r->site->name ? r->site->name : "(unnamed)";
        uint32_t i = new_inst(b, r->site, name, thread_name, thread, r->start, r->end,
                              r->flags);
        if (r->flags & TLOG_REC_SYNC)
            b->insts[i].sync = r->reserved;
        if (d + 1 < b->max_depth)
            adopt_pending(b, d + 1, i);
        pending_push(b, d, i);
        last = i;
    }
    /* Whatever is left hangs under `parent`: normally just the top level. */
    for (size_t d = top; parent != NONE && d <= deepest; d++)
        adopt_pending(b, d, parent);
    return last;
}

/* Next instance in pre-order. */
static uint32_t preorder_next(const inst *in, uint32_t i)
{
    if (in[i].first_child != NONE)
        return in[i].first_child;
    while (i != NONE && in[i].next_sibling == NONE)
        i = in[i].parent;
    return i == NONE ? NONE : in[i].next_sibling;
}

/* ---- merging by (parent node, kind, title) ---- */

typedef struct merge_map {
    uint32_t *slots;
    size_t mask;
} merge_map;

static uint64_t merge_hash(uint32_t parent, bool exec, const char *name)
{
    uint64_t h = tlog_hash_str_(0xcbf29ce484222325ull ^ exec, name);
    h ^= (uint64_t)parent * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

static uint32_t node_for(merge_map *m, bnode *nodes, uint32_t *nnodes,
                         const inst *in, uint32_t i)
{
    uint32_t parent = in[in[i].parent].node;
    bool exec = (in[i].flags & TLOG_REC_EXEC) != 0;
    size_t s = merge_hash(parent, exec, in[i].name) & m->mask;
    for (;; s = (s + 1) & m->mask) {
        uint32_t n = m->slots[s];
        if (n == NONE)
            break;
        const inst *first = &in[nodes[n].inst];
        if (nodes[n].parent == parent && ((first->flags & TLOG_REC_EXEC) != 0) == exec &&
            strcmp(first->name, in[i].name) == 0)
            return n;
    }
    uint32_t n = (*nnodes)++;
    nodes[n] = (bnode){parent, i, 0, 0, 0, UINT64_MAX, 0, in[i].start, 0};
    m->slots[s] = n;
    return n;
}

static void accumulate(bnode *n, const inst *in)
{
    tlog_ticks d = in->end >= in->start ? in->end - in->start : 0;
    n->count++;
    n->total += d;
    if (d < n->min)
        n->min = d;
    if (d > n->max)
        n->max = d;
    if ((int64_t)(in->start - n->first_start) < 0)
        n->first_start = in->start;
    if (in->flags & TLOG_REC_REPAIRED)
        n->flags |= TLOG_NODE_REPAIRED;
    if (in->flags & TLOG_REC_DEVICE)
        n->flags |= TLOG_NODE_DEVICE;
    if (in->flags & TLOG_REC_UNRESOLVED)
        n->flags |= TLOG_NODE_UNRESOLVED;
    if (in->flags & TLOG_REC_PAST)
        n->flags |= TLOG_NODE_PAST_FRAME;
}

/* ---- ordering children by first start ---- */

/* Children in order of first start, but worker threads' `==>` rows after
 * the others, in order of thread id: workers start in a different order
 * every frame, and dumps of successive frames should line up. */
typedef struct sort_key {
    uint32_t parent;
    uint32_t node;
    uint32_t worker;          /* the worker's thread id + 1, or 0 */
    tlog_ticks start;
} sort_key;

static int by_parent_then_start(const void *pa, const void *pb)
{
    const sort_key *x = pa, *y = pb;
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    if (x->worker != y->worker)
        return x->worker < y->worker ? -1 : 1;
    int64_t dt = (int64_t)(x->start - y->start);
    if (dt)
        return dt < 0 ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* A worker thread's row: an execution row of no call site. */
static uint32_t worker_key(const tlog_node *n)
{
    return n->kind == TLOG_KIND_EXECUTION && !n->site ? n->thread + 1 : 0;
}

static void link_children(tlog_node *out, const bnode *nodes, uint32_t n, sort_key *keys)
{
    for (uint32_t i = 1; i < n; i++)
        keys[i - 1] = (sort_key){nodes[i].parent, i, worker_key(&out[i]),
                                 nodes[i].first_start};
    qsort(keys, n - 1, sizeof *keys, by_parent_then_start);
    tlog_node *prev = NULL;
    for (uint32_t k = 0; k + 1 < n; k++) {
        tlog_node *c = &out[keys[k].node];
        tlog_node *p = &out[keys[k].parent];
        if (prev && prev->parent == p)
            prev->next_sibling = c;
        else
            p->first_child = c;
        prev = c;
    }
}

static uint64_t to_ns(tlog_ticks t, double rate)
{
    return tlog_scale_ns_(t, rate);
}

/* Saturates, as to_ns does: a timing inserted by hand may lie anywhere. */
static int64_t offset_ns(tlog_ticks t, tlog_ticks origin, double rate)
{
    double d = (double)(int64_t)(t - origin) * rate;
    d = d < 0 ? d - 0.5 : d + 0.5;
    if (d >= 9223372036854775808.0)
        return INT64_MAX;
    return d <= -9223372036854775808.0 ? INT64_MIN : (int64_t)d;
}

static void finish_nodes(tlog_frame *f, const bnode *bn, const inst *in, uint32_t n,
                         tlog_ticks origin, double rate)
{
    tlog_node *out = f->nodes;
    for (uint32_t i = 0; i < n; i++) {
        const inst *first = &in[bn[i].inst];
        tlog_node *o = &out[i];
        memset(o, 0, sizeof *o);
        o->parent = i ? &out[bn[i].parent] : NULL;
        o->name = first->name;
        o->site = first->site;
        o->thread = first->thread;
        o->thread_name = first->thread_name;
        o->kind = (first->flags & TLOG_REC_EXEC) ? TLOG_KIND_EXECUTION : TLOG_KIND_CONTROL;
        o->flags = bn[i].flags;
        o->depth = i ? o->parent->depth + 1 : 0;   /* parents come first */
        o->start_ns = offset_ns(bn[i].first_start, origin, rate);
        o->total_ns = to_ns(bn[i].total, rate);
        o->min_ns = to_ns(bn[i].min, rate);
        o->max_ns = to_ns(bn[i].max, rate);
        o->count = bn[i].count;
    }
    /* Self time: the total less control children; execution rows ran
     * elsewhere, beside it, and `Device past frame end` after it. */
    for (uint32_t i = 0; i < n; i++)
        out[i].self_ns = out[i].total_ns;
    for (uint32_t i = 1; i < n; i++) {
        tlog_node *p = &out[bn[i].parent];
        if (out[i].kind == TLOG_KIND_CONTROL && !(out[i].flags & TLOG_NODE_PAST_FRAME))
            p->self_ns = p->self_ns > out[i].total_ns ? p->self_ns - out[i].total_ns : 0;
        out[i].percent = p->total_ns ? 100.0 * (double)out[i].total_ns / (double)p->total_ns
                                     : 0.0;
    }
    out[0].percent = 100.0;
}

/* Adds the frame's instances to their sites' counts: a node's count goes to
 * its first site; an instance from another site of the same title is
 * counted on its own. Runs once the frame is resolved for good. */
static void count_site_instances(const tlog_frame *f, const bnode *bn, const builder *b)
{
    for (uint32_t i = 0; i < b->ninsts; i++) {
        const inst *in = &b->insts[i];
        if (in->node != NONE && in->site != b->insts[bn[in->node].inst].site)
            tlog_site_count_(&in->site, &(uint64_t){1}, 1);
    }
    enum { BATCH = 256 };
    const tlog_site *sites[BATCH];
    uint64_t counts[BATCH];
    size_t k = 0;
    for (size_t i = 0; i < f->nnodes; i++) {
        sites[k] = f->nodes[i].site;
        counts[k++] = bn[i].site_count;
        if (k == BATCH || i + 1 == f->nnodes) {
            tlog_site_count_(sites, counts, k);
            k = 0;
        }
    }
}

void tlog_frame_free_raw_(tlog_frame *f)
{
    if (f->chunks)
        tlog_chunks_put_(f->log, f->chunks);
    f->chunks = NULL;
    tlog_attachments_free_(f->log, f->attachments);
    f->attachments = NULL;
    free(f->drows);
    f->drows = NULL;
    f->ndrows = f->capdrows = 0;
    free(f->syncs);
    f->syncs = NULL;
    f->nsyncs = f->capsyncs = 0;
}

static size_t count_input(const tlog_frame *f, size_t *max_depth, size_t *rows)
{
    size_t n = 1; /* room for a stand-in root */
    *max_depth = 2;
    *rows = 0;
    for (const tlog_chunk *c = f->chunks; c; c = c->next)
        for (size_t k = 0; k < c->used; k++) {
            n++;
            if (c->recs[k].depth + 2u > *max_depth)
                *max_depth = c->recs[k].depth + 2u;
        }
    for (const tlog_attachment *a = f->attachments; a; a = a->next) {
        n += a->nrecs + 1;
        (*rows)++;
        for (size_t k = 0; k < a->nrecs; k++) {
            size_t d = a->recs[k].depth > a->base_depth ? a->recs[k].depth - a->base_depth : 0;
            if (d + 2 > *max_depth)
                *max_depth = d + 2;
        }
    }
    n += f->ndrows + 1;   /* and a `Device past frame end` row */
    return n;
}

static const tlog_site lost_root = {"(frame root lost)", NULL, NULL, 0, 0};

/* Builds the frame's own records; returns the root instance. */
static uint32_t build_own(builder *b, tlog_frame *f)
{
    for (const tlog_chunk *c = f->chunks; c; c = c->next)
        add_records(b, c->recs, c->used, 0, 0, NONE, f->thread, f->thread_name);
    uint32_t root = b->pending_head[0];
    if (root != NONE && b->insts[root].next_sibling == NONE) {
        b->pending_head[0] = NONE;
        for (size_t d = 1; d < b->max_depth; d++)
            adopt_pending(b, d, root);
        return root;
    }
    /* The root's record was lost (out of memory): stand one in. */
    uint32_t stand_in = new_inst(b, &lost_root, lost_root.name, f->thread_name,
                                 f->thread, 0, 0, TLOG_REC_REPAIRED);
    bool first = true;
    for (size_t d = 0; d < b->max_depth; d++)
        for (uint32_t c = b->pending_head[d]; c != NONE; c = b->insts[c].next_sibling) {
            if (first || b->insts[c].start < b->insts[stand_in].start)
                b->insts[stand_in].start = b->insts[c].start;
            if (first || b->insts[c].end > b->insts[stand_in].end)
                b->insts[stand_in].end = b->insts[c].end;
            first = false;
        }
    for (size_t d = 0; d < b->max_depth; d++)
        adopt_pending(b, d, stand_in);
    return stand_in;
}

/* Maps begin sequence numbers to instances: pre-order over the frame's own
 * begun scopes (inserted timings never took a number). */
static uint32_t map_sequence(const builder *b, uint32_t root, uint32_t *seqmap)
{
    uint32_t nseq = 0;
    for (uint32_t i = root; i != NONE; i = preorder_next(b->insts, i))
        if (!(b->insts[i].flags & TLOG_REC_INSERT))
            seqmap[nseq++] = i;
    return nseq;
}

static void attach_work(builder *b, tlog_frame *f, uint32_t root, const uint32_t *seqmap,
                        uint32_t nseq, char (*names)[TLOG_NAME_MAX])
{
    size_t row = 0;
    for (const tlog_attachment *a = f->attachments; a; a = a->next) {
        uint32_t target = a->scope_seq < nseq ? seqmap[a->scope_seq] : root;
        const char *tname = a->worker_name;
        if (a->has_row) {
            memcpy(names[row], a->worker_name, TLOG_NAME_MAX);
            tname = names[row++];
            uint32_t r = new_inst(b, NULL, tname, tname, a->worker, a->start, a->end,
                                  TLOG_REC_EXEC | TLOG_REC_INSERT);
            append_child(b, target, r);
            target = r;
        }
        if (!a->has_row) {
            memcpy(names[row], a->worker_name, TLOG_NAME_MAX);
            tname = names[row++];
        }
        add_records(b, a->recs, a->nrecs, a->base_depth, 1, target, a->worker, tname);
    }
}

static uint32_t seq_target(uint32_t seq, const uint32_t *seqmap, uint32_t nseq,
                           uint32_t root)
{
    return seq < nseq ? seqmap[seq] : root;
}

/* ---- placing device intervals ---- */

static const tlog_site past_site = {"Device past frame end", __FILE__, "resolve", __LINE__,
                                    TLOG_LEVEL_COARSE};

/* A sync scope of the frame, for placement. */
typedef struct sync_ref {
    uint32_t inst;
    tlog_ticks start, end;
    const tlog_sync_bind *bind;
} sync_ref;

static int by_end_then_start(const void *pa, const void *pb)
{
    const sync_ref *x = pa, *y = pb;
    int64_t d = (int64_t)(x->end - y->end);
    if (!d)
        d = (int64_t)(x->start - y->start);
    if (d)
        return d < 0 ? -1 : 1;
    return x->inst < y->inst ? -1 : x->inst > y->inst;
}

/* The frame's sync scopes (its own and adopted workers'), in order of end. */
static size_t collect_syncs(const builder *b, const tlog_frame *f, sync_ref *out)
{
    size_t n = 0;
    for (uint32_t i = 0; i < b->ninsts; i++) {
        const inst *in = &b->insts[i];
        if ((in->flags & TLOG_REC_SYNC) && in->sync && in->sync <= f->nsyncs)
            out[n++] = (sync_ref){i, in->start, in->end, &f->syncs[in->sync - 1]};
    }
    qsort(out, n, sizeof *out, by_end_then_start);
    return n;
}

/* Row `k` was complete by `end`: its end on the host timeline says so, or
 * the read made at that end (rows delivered before `seen`) found it done. */
static bool done_by(const tlog_drow *r, size_t k, tlog_ticks end, size_t seen)
{
    return (int64_t)(r->end - end) <= 0 || k < seen;
}

static bool sync_covers(const sync_ref *s, const tlog_drow *r, size_t k)
{
    const tlog_sync_bind *w = s->bind;
    return (!w->device_id || w->device_id == r->device_id) &&
           (!w->queue_bound || w->queue_key == r->queue_key) &&
           (int64_t)(r->launch - s->end) <= 0 && done_by(r, k, s->end, w->rows_seen);
}

#define PLACE_PAST (NONE - 1)   /* place_row: under `Device past frame end` */

/*
 * The placement rule (doc/format.md, "Where device intervals show") for
 * row `k` of the frame: the first sync scope of the frame, in order of end,
 * that the interval's device and queue match, launched before it ended and
 * complete by then; else its launcher if it was complete by the root's end;
 * else the frame's `Device past frame end` row. An interval without a
 * timing goes under its launcher.
 */
static uint32_t place_row(const tlog_frame *f, size_t k, const sync_ref *syncs,
                          size_t nsyncs, uint32_t launcher, tlog_ticks root_end)
{
    const tlog_drow *r = &f->drows[k];
    if (r->unresolved)
        return launcher;
    for (size_t i = 0; i < nsyncs; i++)
        if (sync_covers(&syncs[i], r, k))
            return syncs[i].inst;
    return done_by(r, k, root_end, f->rows_at_end) ? launcher : PLACE_PAST;
}

/* The row past the frame's end: from the root's end to the last end of the
 * work under it (extended as that work is added). A control row under the
 * root that is not part of it. */
static uint32_t past_row(builder *b, const tlog_frame *f, uint32_t root)
{
    tlog_ticks end = b->insts[root].end;
    uint32_t r = new_inst(b, &past_site, past_site.name, f->thread_name, f->thread, end, end,
                          TLOG_REC_INSERT | TLOG_REC_PAST);
    append_child(b, root, r);
    return r;
}

static int attach_device(builder *b, tlog_frame *f, uint32_t root, const uint32_t *seqmap,
                         uint32_t nseq)
{
    sync_ref *syncs = f->ndrows ? tlog_malloc_((b->ninsts + 1) * sizeof *syncs) : NULL;
    if (f->ndrows && !syncs)
        return TLOG_ENOMEM;
    size_t nsyncs = f->ndrows ? collect_syncs(b, f, syncs) : 0;
    tlog_ticks root_end = b->insts[root].end;
    uint32_t past = NONE;
    for (size_t k = 0; k < f->ndrows; k++) {
        const tlog_drow *r = &f->drows[k];
        uint32_t launcher = seq_target(r->launch_seq, seqmap, nseq, root);
        uint32_t target = place_row(f, k, syncs, nsyncs, launcher, root_end);
        if (target == PLACE_PAST) {
            if (past == NONE)
                past = past_row(b, f, root);
            if ((int64_t)(r->end - b->insts[past].end) > 0)
                b->insts[past].end = r->end;
            target = past;
        }
        unsigned flags = TLOG_REC_EXEC | TLOG_REC_INSERT | TLOG_REC_DEVICE |
                         (r->unresolved ? TLOG_REC_UNRESOLVED : 0);
        const char *name = r->site->name ? r->site->name : "(unnamed)";
        uint32_t i = new_inst(b, r->site, name, r->device, 0, r->start, r->end, flags);
        b->insts[i].drow = (uint32_t)k;
        append_child(b, target, i);
        f->device_rows++;
        f->device_unresolved += r->unresolved;
    }
    free(syncs);
    return TLOG_OK;
}

static int merge(tlog_frame *f, builder *b, uint32_t root, bnode *nodes, uint32_t *nnodes,
                 tlog_ticks origin, double rate)
{
    size_t cap = 16;
    while (cap < (size_t)b->ninsts * 2)
        cap <<= 1;
    merge_map m = {tlog_malloc_(cap * sizeof(uint32_t)), cap - 1};
    f->insts = tlog_malloc_(b->ninsts * sizeof *f->insts);
    if (!m.slots || !f->insts) {
        free(m.slots);
        return TLOG_ENOMEM;
    }
    memset(m.slots, 0xff, cap * sizeof(uint32_t));
    inst *in = b->insts;
    *nnodes = 1;
    nodes[0] = (bnode){NONE, root, 0, 0, 0, UINT64_MAX, 0, in[root].start, 0};
    in[root].node = 0;
    size_t k = 0;
    for (uint32_t i = root; i != NONE; i = preorder_next(in, i)) {
        if (i != root)
            in[i].node = node_for(&m, nodes, nnodes, in, i);
        accumulate(&nodes[in[i].node], &in[i]);
        if (in[i].site == in[nodes[in[i].node].inst].site)
            nodes[in[i].node].site_count++;
        tlog_ticks d = in[i].end >= in[i].start ? in[i].end - in[i].start : 0;
        f->insts[k++] = (tlog_inst){in[i].node, in[i].thread,
                                    offset_ns(in[i].start, origin, rate), to_ns(d, rate)};
    }
    f->ninsts = k;
    free(m.slots);
    return TLOG_OK;
}

/* The launching instance of device row `r`, if it is in this frame. */
static uint32_t launcher_of(const tlog_drow *r, const uint32_t *seqmap, uint32_t nseq)
{
    return r->launch_seq < nseq ? seqmap[r->launch_seq] : NONE;
}

/* Device rows' extras, once nodes exist: launchers (which may come later in
 * pre-order than what they launched), devices and queues. */
static int finish_device(tlog_frame *f, const builder *b, const bnode *bn, uint32_t root,
                         const uint32_t *seqmap, uint32_t nseq)
{
    if (!f->device_rows)
        return TLOG_OK;
    const inst *in = b->insts;
    const tlog_drow *rows = f->drows;
    size_t ndev = 0;
    for (size_t j = 0; j < f->nnodes; j++)
        ndev += in[bn[j].inst].drow != NONE;
    f->node_devs = tlog_calloc_(ndev, sizeof *f->node_devs);
    f->nnode_devs = ndev;
    f->inst_devs = tlog_calloc_(f->device_rows, sizeof *f->inst_devs);
    if (!f->node_devs || !f->inst_devs)
        return TLOG_ENOMEM;
    ndev = 0;
    for (size_t j = 0; j < f->nnodes; j++) {
        uint32_t d = in[bn[j].inst].drow;
        if (d == NONE)
            continue;
        uint32_t l = launcher_of(&rows[d], seqmap, nseq);
        f->node_devs[ndev] = (tlog_node_dev){l == NONE ? NULL : &f->nodes[in[l].node],
                                             rows[d].launch_site, rows[d].device,
                                             rows[d].queue};
        f->nodes[j].dev = &f->node_devs[ndev++];
    }
    size_t k = 0, n = 0;
    for (uint32_t i = root; i != NONE; i = preorder_next(in, i), k++)
        if (in[i].drow != NONE) {
            uint32_t l = launcher_of(&rows[in[i].drow], seqmap, nseq);
            f->inst_devs[n++] = (tlog_inst_dev){(uint32_t)k, l == NONE ? NONE : in[l].node};
        }
    return TLOG_OK;
}

int tlog_frame_resolve_locked_(tlog_frame *f)
{
    tlog_assert_held_(&f->resolve_lock);
    tlog_frame_stop_rows_(f);
    size_t max_depth, rows;
    size_t cap = count_input(f, &max_depth, &rows);
    if (cap >= NONE)
        return TLOG_ENOMEM;
    builder b = {0};
    b.max_depth = max_depth;
    b.insts = tlog_malloc_(cap * sizeof *b.insts);
    b.pending_head = tlog_malloc_(max_depth * sizeof(uint32_t));
    b.pending_tail = tlog_malloc_(max_depth * sizeof(uint32_t));
    uint32_t *seqmap = tlog_malloc_(cap * sizeof(uint32_t));
    bnode *nodes = tlog_malloc_(cap * sizeof *nodes);
    char (*names)[TLOG_NAME_MAX] = tlog_calloc_(rows ? rows : 1, TLOG_NAME_MAX);
    int rc = TLOG_ENOMEM;
    if (!b.insts || !b.pending_head || !b.pending_tail || !seqmap || !nodes || !names)
        goto out;
    memset(b.pending_head, 0xff, max_depth * sizeof(uint32_t));

    uint32_t root = build_own(&b, f);
    uint32_t nseq = map_sequence(&b, root, seqmap);
    attach_work(&b, f, root, seqmap, nseq, names);
    f->device_rows = f->device_unresolved = 0;
    rc = attach_device(&b, f, root, seqmap, nseq);
    if (rc != TLOG_OK)
        goto out;

    double rate = tlog_clock_calibrate_(f->log);
    tlog_ticks origin = b.insts[root].start;
    uint32_t nnodes;
    rc = merge(f, &b, root, nodes, &nnodes, origin, rate);
    if (rc != TLOG_OK)
        goto out;
    f->nodes = tlog_calloc_(nnodes, sizeof *f->nodes);
    sort_key *keys = tlog_malloc_(nnodes * sizeof *keys);
    if (!f->nodes || !keys) {
        free(keys);
        rc = TLOG_ENOMEM;
        goto out;
    }
    f->nnodes = nnodes;
    finish_nodes(f, nodes, b.insts, nnodes, origin, rate);
    link_children(f->nodes, nodes, nnodes, keys);
    free(keys);
    rc = finish_device(f, &b, nodes, root, seqmap, nseq);
    if (rc != TLOG_OK)
        goto out;
    count_site_instances(f, nodes, &b);
    f->start_ns = offset_ns(origin, f->log->tick0, rate);
    f->duration_ns = f->nodes[0].total_ns;
    f->worker_names = names;
    f->nworker_names = rows;
    names = NULL;
    tlog_frame_free_raw_(f);
out:
    if (rc != TLOG_OK) {
        /* Leave the raw records for another try. */
        free(f->nodes);
        free(f->insts);
        free(f->node_devs);
        free(f->inst_devs);
        f->nodes = NULL;
        f->insts = NULL;
        f->node_devs = NULL;
        f->inst_devs = NULL;
        f->nnodes = f->ninsts = 0;
    }
    free(b.insts);
    free(b.pending_head);
    free(b.pending_tail);
    free(seqmap);
    free(nodes);
    free(names);
    return rc;
}
