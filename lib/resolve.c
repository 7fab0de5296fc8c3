/*
 * Resolution: turns a completed frame's raw records into its rows (tree.c)
 * and its instances.
 *
 *  1. A thread's records are in post-order (each written when its scope
 *     ends) with their depth. A forward pass sizes every record's subtree;
 *     a backward pass then meets each parent before its children (a record's
 *     parent is the nearest later record of smaller depth), so it can put
 *     the record in its row at once, by (parent row, title, kind), and its
 *     instance at its place in begin order, which the sizes give.
 *  2. Scopes got a sequence number in begin order; hand-off tokens name
 *     scopes by it, so work that other threads attached is hung under the
 *     right row. Attached work is walked the same way, after the thread's
 *     own, and its instances follow the thread's.
 *  3. Device intervals delivered to the frame are placed by one rule, from
 *     recorded times and the frame's structure alone (place_row): under the
 *     first sync scope that waited for them, else under their launcher if
 *     they ended within the frame, else under `Device past frame end`.
 *
 * The scratch memory (the row map, per-record sizes, stacks) is kept by the
 * log for its next frame.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "frame.h"
#include "log.h"
#include "map.h"
#include "record.h"
#include "site.h"
#include "spares.h"
#include "tree.h"
#include "util.h"

#define NONE TLOG_TREE_NONE

/* A sync scope of the frame, for placement. */
typedef struct sync_ref {
    uint32_t inst;
    tlog_ticks start, end;
    const tlog_sync_bind *bind;
} sync_ref;

/* A group of records at one depth waiting for their parent (forward pass). */
typedef struct pending {
    uint32_t depth, size, nsize;
    tlog_ticks first, last;   /* their starts' least, ends' greatest */
} pending;

/* An ancestor of the record being walked (backward pass). */
typedef struct ancestor {
    int32_t depth;            /* -1: the walk's parent, outside the records */
    uint32_t row;
    uint32_t slot_end;        /* the next child's instance ends before this */
    uint32_t seq_end;
} ancestor;

/* A recent (parent row, call site, kind) and its row. A loop meets the
 * same few pairs frame after frame, instance after instance; an entry spares
 * them the site map and the row lookup. It counts its site's instances
 * until it is replaced or the frame is done, then adds them to the map's. */
typedef struct memo {
    const tlog_site *site;    /* NULL: empty */
    uint32_t parent, row;
    uint32_t count;           /* instances not yet in the site map's count */
    uint8_t kind;
} memo;

#define MEMO_BITS 8u

/* A run of records: a chunk's, or one of an attachment's. */
typedef struct segment {
    const tlog_rec *recs;
    size_t n;                 /* slots */
    tlog_ticks base;
} segment;

struct tlog_resolve_scratch {
    tlog_tree tree;
    uint32_t *size, *nsize;   /* per record: its subtree's instances, begun scopes */
    size_t capsize, capnsize;
    pending *fwd;
    ancestor *back;
    size_t capfwd, capback;
    uint32_t *seqmap;         /* begin sequence -> instance */
    size_t capseq;
    sync_ref *syncs;
    size_t nsyncs, capsyncs;
    struct segment *segs;
    size_t capsegs;
    tlog_map sites;           /* a site's address -> its title, and (extra)
                               * how many of its instances the frame has
                               * (a frame's instances are counted in 32 bits) */
    memo memo[1u << MEMO_BITS];
    uint16_t memo_used[1u << MEMO_BITS];   /* entries filled this frame */
    size_t nmemo_used;
};

typedef struct resolver {
    tlog_frame *f;
    struct tlog_resolve_scratch *s;
    tlog_tree *tree;
    tlog_inst *insts;
    uint32_t ninsts;
    uint32_t nseq;            /* begun scopes of the frame's own records */
    double rate;
    tlog_ticks origin;
    bool no_memory;
} resolver;

/* ---- scratch ---- */

static void scratch_free(struct tlog_resolve_scratch *s)
{
    if (!s)
        return;
    tlog_tree_free_(&s->tree);
    free(s->size);
    free(s->nsize);
    free(s->fwd);
    free(s->back);
    free(s->seqmap);
    free(s->syncs);
    free(s->segs);
    tlog_map_free_(&s->sites);
    free(s);
}

static size_t scratch_bytes(const struct tlog_resolve_scratch *s)
{
    const tlog_tree *t = &s->tree;
    return t->caprows * sizeof *t->rows + t->capparents * sizeof *t->parents +
           t->caplinks * sizeof *t->links +
           t->row_map.cap * sizeof *t->row_map.slots + t->captitles * sizeof *t->titles +
           t->title_map.cap * sizeof *t->title_map.slots +
           (t->caporder + t->capstarts + t->capsize + t->caprenumber + t->caprowat) *
               sizeof(uint32_t) +
           (s->capsize + s->capnsize + s->capseq) * sizeof(uint32_t) +
           s->capfwd * sizeof *s->fwd + s->capback * sizeof *s->back +
           s->capsyncs * sizeof *s->syncs + s->capsegs * sizeof *s->segs +
           s->sites.cap * sizeof *s->sites.slots + sizeof *s;
}

/* Once a frame, so kept out of line: inlined into the resolver (with the
 * maps' resets), it cost GCC registers in the record walks' loops. */
__attribute__((noinline)) static struct tlog_resolve_scratch *scratch_take(tlog_log *log)
{
    struct tlog_resolve_scratch *s = atomic_exchange(&log->resolve_scratch, NULL);
    if (s)
        atomic_fetch_sub(&log->scratch_bytes, scratch_bytes(s));
    else
        s = tlog_calloc_(1, sizeof *s);
    if (s) {
        tlog_tree_clear_(&s->tree);
        s->nsyncs = 0;
        tlog_map_clear_(&s->sites);
    }
    return s;
}

/* Kept by the rule of tlog_worth_keeping_, against what the frame it
 * served holds (its nodes and instances: a frame of distinct rows needs
 * about twice that in scratch, more just past a doubling). */
static bool scratch_kept(const struct tlog_resolve_scratch *s, const tlog_frame *served)
{
    size_t frame = served->nnodes * sizeof(tlog_node) + served->ninsts * sizeof(tlog_inst);
    return tlog_worth_keeping_(scratch_bytes(s), frame);
}

/* The scratch's bytes are counted before it can be taken again, so that
 * tlog_stats never sees them taken off before they were added. */
static void scratch_put(const tlog_frame *served, struct tlog_resolve_scratch *s)
{
    tlog_log *log = served->log;
    if (!scratch_kept(s, served)) {
        scratch_free(s);
        return;
    }
    size_t bytes = scratch_bytes(s);
    atomic_fetch_add(&log->scratch_bytes, bytes);
    struct tlog_resolve_scratch *none = NULL;
    if (!atomic_compare_exchange_strong(&log->resolve_scratch, &none, s)) {
        atomic_fetch_sub(&log->scratch_bytes, bytes);
        scratch_free(s);
    }
}

void tlog_resolve_scratch_free_(tlog_log *log)
{
    scratch_free(atomic_exchange(&log->resolve_scratch, NULL));
    atomic_store(&log->scratch_bytes, 0);
}

size_t tlog_resolve_kept_bytes_(tlog_log *log)
{
    return atomic_load_explicit(&log->scratch_bytes, memory_order_relaxed) +
           tlog_spares_bytes_(log);
}

/* ---- titles of sites ---- */

static const char *title_text(const tlog_site *site)
{
    return site->name ? site->name : "(unnamed)";
}

/* The site's title id, counting one instance of it. */
static uint32_t site_title(resolver *r, const tlog_site *site)
{
    tlog_map *m = &r->s->sites;
    size_t at;
    if (!tlog_map_reserve_(m, 1))
        return NONE;
    if (tlog_map_find_(m, (uintptr_t)site, &at)) {
        m->slots[at].extra++;
        return m->slots[at].value;
    }
    uint32_t title = tlog_tree_title_(r->tree, title_text(site));
    if (title != NONE) {
        tlog_map_set_(m, at, (uintptr_t)site, title);
        m->slots[at].extra = 1;
    }
    return title;
}

/* Adds the frame's instances to their sites' counts (tlog_site_instances). */
static void count_sites(const tlog_map *m)
{
    enum { BATCH = 256 };
    const tlog_site *sites[BATCH];
    uint64_t counts[BATCH];
    size_t k = 0;
    for (size_t i = 0; i < m->cap; i++) {
        if (!tlog_map_has_(m, i))
            continue;
        sites[k] = (const tlog_site *)(uintptr_t)m->slots[i].key;
        counts[k++] = m->slots[i].extra;
        if (k == BATCH) {
            tlog_site_count_(sites, counts, k);
            k = 0;
        }
    }
    if (k)
        tlog_site_count_(sites, counts, k);
}

/* ---- rows and instances ---- */

static uint64_t duration(tlog_ticks start, tlog_ticks end)
{
    return end >= start ? end - start : 0;
}

static uint8_t node_flags(unsigned rec_flags)
{
    return (uint8_t)(((rec_flags & TLOG_REC_REPAIRED) ? TLOG_NODE_REPAIRED : 0) |
                     ((rec_flags & TLOG_REC_DEVICE) ? TLOG_NODE_DEVICE : 0) |
                     ((rec_flags & TLOG_REC_UNRESOLVED) ? TLOG_NODE_UNRESOLVED : 0) |
                     ((rec_flags & TLOG_REC_PAST) ? TLOG_NODE_PAST_FRAME : 0));
}

/* What one instance is, wherever it came from. */
typedef struct instance {
    const tlog_site *site;    /* NULL for a worker's row */
    const char *name;         /* the title, when site is NULL */
    const char *thread_name;
    uint32_t thread;
    tlog_ticks start, end;
    unsigned flags;           /* tlog_rec_flags */
} instance;

static uint32_t memo_slot(uint32_t parent, const tlog_site *site, uint8_t kind)
{
    uint32_t h = (uint32_t)((uintptr_t)site >> 3) * 0x9e3779b1u ^ (parent + kind) * 0x85ebca77u;
    return h >> (32u - MEMO_BITS);
}

/* Adds an entry's count to its site's in the site map. */
static void memo_flush(resolver *r, memo *m)
{
    size_t at;
    if (m->count && tlog_map_find_(&r->s->sites, (uintptr_t)m->site, &at))
        r->s->sites.slots[at].extra += m->count;
    m->count = 0;
}

/* Empties the entries this frame filled, first adding their counts to the
 * site map's when `counted`. */
static void memo_clear(struct tlog_resolve_scratch *s, resolver *counted)
{
    for (size_t i = 0; i < s->nmemo_used; i++) {
        memo *m = &s->memo[s->memo_used[i]];
        if (counted)
            memo_flush(counted, m);
        m->site = NULL;
    }
    s->nmemo_used = 0;
}

/* The row of a site's instance under `parent`, made if new; NONE if memory
 * ran out. */
static uint32_t site_row(resolver *r, uint32_t parent, const tlog_site *site, uint8_t kind)
{
    struct tlog_resolve_scratch *s = r->s;
    uint32_t slot = memo_slot(parent, site, kind);
    memo *m = &s->memo[slot];
    if (m->site == site && m->parent == parent && m->kind == kind) {
        m->count++;
        return m->row;
    }
    uint32_t title = site_title(r, site);   /* counts this instance */
    bool made = false;
    uint32_t row = title == NONE ? NONE
                                 : tlog_tree_row_(r->tree, parent, title, kind, title_text(site),
                                                  &made);
    /* A row met for the first time is remembered at its second instance:
     * a frame whose rows are each met once then only looks. */
    if (row == NONE || made)
        return row;
    if (m->site)
        memo_flush(r, m);
    else
        s->memo_used[s->nmemo_used++] = (uint16_t)slot;
    *m = (memo){site, parent, row, 0, kind};
    return row;
}

/* Puts instance `at` in its row under `parent`; the row, or NONE. Inlined
 * into the record walk, where a call cost a twentieth of a resolve. */
static inline __attribute__((always_inline)) uint32_t
place(resolver *r, uint32_t parent, uint32_t at, const instance *in)
{
    uint8_t kind = (in->flags & TLOG_REC_EXEC) ? TLOG_KIND_EXECUTION : TLOG_KIND_CONTROL;
    uint32_t row;
    if (in->site) {
        row = site_row(r, parent, in->site, kind);
    } else {
        uint32_t title = tlog_tree_title_(r->tree, in->name);
        row = title == NONE ? NONE : tlog_tree_row_(r->tree, parent, title, kind, in->name, NULL);
    }
    if (row == NONE) {
        r->no_memory = true;
        return NONE;
    }
    tlog_tree_row *w = &r->tree->rows[row];
    uint64_t d = duration(in->start, in->end);
    tlog_tree_add_(w, d, in->start);
    w->flags |= node_flags(in->flags);
    if (at < w->first) {   /* the row takes after its first instance */
        w->first = at;
        w->site = in->site;
        w->thread = in->thread;
        w->thread_name = in->thread_name;
    }
    r->insts[at] = (tlog_inst){row, in->thread, tlog_tree_offset_ns_(in->start, r->origin, r->rate),
                               tlog_scale_ns_(d, r->rate)};
    return row;
}

static bool note_sync(resolver *r, uint32_t at, const tlog_rec_view *rec)
{
    tlog_frame *f = r->f;
    struct tlog_resolve_scratch *s = r->s;
    if (!rec->tag || rec->tag > f->nsyncs)
        return true;
    if (!TLOG_GROW(s->syncs, s->capsyncs, s->nsyncs + 1))
        return false;
    s->syncs[s->nsyncs++] = (sync_ref){at, rec->start, rec->end, &f->syncs[rec->tag - 1]};
    return true;
}

/* ---- walking records ---- */

typedef struct walk {
    const segment *segs;
    size_t nsegs, nslots;
    size_t nrecs;             /* counted by size_subtrees */
    size_t base;              /* depth of the walk's parent: records start below */
    uint32_t min_depth;       /* shallower records are taken as this deep */
    uint32_t thread;
    const char *thread_name;
    bool seq;                 /* number begun scopes (the frame's own records) */
} walk;

static uint32_t rel_depth(const walk *w, const tlog_rec_view *rec)
{
    uint32_t d = rec->depth > w->base ? (uint32_t)(rec->depth - w->base) : 0;
    return d < w->min_depth ? w->min_depth : d;
}

/* Sizes every record's subtree, in instances and in begun scopes, and
 * counts the records (w->nrecs); returns the groups left without a parent,
 * their number in *ntop. */
static const pending *size_subtrees(resolver *r, walk *w, size_t *ntop)
{
    struct tlog_resolve_scratch *s = r->s;
    size_t k = 0, sp = 0;
    for (size_t g = 0; g < w->nsegs; g++)
        for (size_t i = 0; i < w->segs[g].n; k++) {
            tlog_rec_view v;
            const tlog_rec_view *rec = &v;
            i += tlog_rec_get_(&w->segs[g].recs[i], w->segs[g].base, &v);
            uint32_t d = rel_depth(w, rec);
            uint32_t size = 1, nsize = !(rec->flags & TLOG_REC_INSERT);
            while (sp && s->fwd[sp - 1].depth > d) {
                sp--;
                size += s->fwd[sp].size;
                nsize += s->fwd[sp].nsize;
            }
            s->size[k] = size;
            s->nsize[k] = nsize;
            if (sp && s->fwd[sp - 1].depth == d) {
                pending *p = &s->fwd[sp - 1];
                p->size += size;
                p->nsize += nsize;
                if ((int64_t)(rec->start - p->first) < 0)
                    p->first = rec->start;
                if ((int64_t)(rec->end - p->last) > 0)
                    p->last = rec->end;
            } else {
                s->fwd[sp++] = (pending){d, size, nsize, rec->start, rec->end};
            }
        }
    w->nrecs = k;
    *ntop = sp;
    return s->fwd;
}

/* Walks the records backwards, each after its parent: rows, instances (at
 * first .. first + nrecs - 1) and sequence numbers (from seq0). */
static void place_records(resolver *r, const walk *w, uint32_t parent_row, uint32_t first,
                          uint32_t seq0, uint32_t nseq)
{
    struct tlog_resolve_scratch *s = r->s;
    ancestor *stack = s->back;
    size_t sp = 1;
    stack[0] = (ancestor){-1, parent_row, first + (uint32_t)w->nrecs, seq0 + nseq};
    size_t k = w->nrecs;
    for (size_t g = w->nsegs; g-- > 0;)
        for (size_t i = w->segs[g].n; i > 0;) {
            tlog_rec_view v;
            const tlog_rec_view *rec = &v;
            i -= tlog_rec_get_back_(&w->segs[g].recs[i - 1], w->segs[g].base, &v);
            k--;
            int32_t d = (int32_t)rel_depth(w, rec);
            while (stack[sp - 1].depth >= d)
                sp--;
            ancestor *up = &stack[sp - 1];
            uint32_t at = up->slot_end - s->size[k];
            up->slot_end = at;
            uint32_t seq = up->seq_end - s->nsize[k];
            up->seq_end = seq;
            if (w->seq && !(rec->flags & TLOG_REC_INSERT))
                s->seqmap[seq] = at;
            instance in = {rec->site, NULL, w->thread_name, w->thread, rec->start, rec->end,
                           rec->flags};
            uint32_t row = place(r, up->row, at, &in);
            if ((rec->flags & TLOG_REC_SYNC) && !note_sync(r, at, rec))
                r->no_memory = true;
            if (r->no_memory)
                return;
            stack[sp++] = (ancestor){d, row, at + s->size[k], seq + s->nsize[k]};
        }
}

/* Scratch for a walk of at most `nrecs` records (its slots will do). */
static bool walk_scratch(resolver *r, size_t nrecs, bool seq)
{
    struct tlog_resolve_scratch *s = r->s;
    /* Depths grow by one from a stack entry to the next: at most 2^16 + 1. */
    size_t depths = (nrecs < 65537 ? nrecs : 65537) + 2;
    return TLOG_GROW(s->size, s->capsize, nrecs + 1) &&
           TLOG_GROW(s->nsize, s->capnsize, nrecs + 1) &&
           TLOG_GROW(s->fwd, s->capfwd, depths) && TLOG_GROW(s->back, s->capback, depths) &&
           (!seq || TLOG_GROW(s->seqmap, s->capseq, nrecs + 1));
}

static const tlog_site lost_root = {"(frame root lost)", NULL, NULL, 0, 0};

/* The frame's own records: the root is row 0 and instance 0 (a stand-in if
 * its record was lost, for lack of memory). Returns the root's end. */
static tlog_ticks walk_own(resolver *r, segment *segs, size_t nsegs, size_t nslots)
{
    tlog_frame *f = r->f;
    walk w = {segs, nsegs, nslots, 0, 0, 0, f->thread, f->thread_name, true};
    if (!walk_scratch(r, nslots, true)) {
        r->no_memory = true;
        return 0;
    }
    size_t ntop;
    const pending *top = size_subtrees(r, &w, &ntop);
    size_t nrecs = w.nrecs;
    if (ntop == 1 && nrecs && r->s->size[nrecs - 1] == nrecs) {
        const segment *last = &segs[nsegs - 1];
        tlog_rec_view root;
        tlog_rec_get_back_(&last->recs[last->n - 1], last->base, &root);
        r->origin = root.start;
        r->nseq = r->s->nsize[nrecs - 1];
        place_records(r, &w, NONE, 0, 0, r->nseq);
        r->ninsts = (uint32_t)nrecs;
        return root.end;
    }
    instance in = {&lost_root, NULL, f->thread_name, f->thread, 0, 0, TLOG_REC_REPAIRED};
    for (size_t i = 0; i < ntop; i++) {
        if (i == 0 || (int64_t)(top[i].first - in.start) < 0)
            in.start = top[i].first;
        if (i == 0 || (int64_t)(top[i].last - in.end) > 0)
            in.end = top[i].last;
    }
    uint32_t nseq = 1;
    for (size_t i = 0; i < ntop; i++)
        nseq += top[i].nsize;
    r->origin = in.start;
    r->nseq = nseq;
    uint32_t root = place(r, NONE, 0, &in);
    r->s->seqmap[0] = 0;   /* the stand-in takes the lost root's number */
    if (root != NONE)
        place_records(r, &w, root, 1, 1, nseq - 1);
    r->ninsts = (uint32_t)nrecs + 1;
    return in.end;
}

/* The instance a begin sequence number names; the root's if none does. */
static uint32_t seq_inst(const resolver *r, uint32_t seq)
{
    return seq < r->nseq ? r->s->seqmap[seq] : 0;
}

/* An attachment's runs as segments. */
static const segment *attachment_segments(resolver *r, const tlog_attachment *a)
{
    struct tlog_resolve_scratch *s = r->s;
    if (!TLOG_GROW(s->segs, s->capsegs, a->nruns + 1))
        return NULL;
    const tlog_rec *recs = a->recs;
    for (size_t i = 0; i < a->nruns; i++) {
        s->segs[i] = (segment){recs, a->runs[i].slots, a->runs[i].base};
        recs += a->runs[i].slots;
    }
    return s->segs;
}

static void walk_attachments(resolver *r)
{
    tlog_frame *f = r->f;
    size_t row = 0;
    for (const tlog_attachment *a = f->attachments; a && !r->no_memory; a = a->next) {
        uint32_t target = r->insts[seq_inst(r, a->scope_seq)].node;
        f->worker_threads[row] = a->worker;
        char *tname = f->worker_names[row++];
        memcpy(tname, a->worker_name, TLOG_NAME_MAX);
        if (a->has_row) {
            instance in = {NULL, tname, tname, a->worker, a->start, a->end,
                           TLOG_REC_EXEC | TLOG_REC_INSERT};
            target = place(r, target, r->ninsts++, &in);
            if (target == NONE)
                return;
        }
        const segment *segs = attachment_segments(r, a);
        walk w = {segs, a->nruns, a->nslots, 0, a->base_depth, 1, a->worker, tname, false};
        if (!segs || !walk_scratch(r, a->nslots, false)) {
            r->no_memory = true;
            return;
        }
        size_t ntop;
        size_subtrees(r, &w, &ntop);
        place_records(r, &w, target, r->ninsts, 0, 0);
        r->ninsts += (uint32_t)w.nrecs;
    }
}

/* ---- placing device intervals ---- */

static const tlog_site past_site = {"Device past frame end", __FILE__, "resolve", __LINE__,
                                    TLOG_LEVEL_COARSE};

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
 * timing goes under its launcher. Returns an instance.
 */
static uint32_t place_row(const resolver *r, size_t k, uint32_t launcher, tlog_ticks root_end)
{
    const tlog_frame *f = r->f;
    const tlog_drow *row = &f->drows[k];
    if (row->unresolved)
        return launcher;
    for (size_t i = 0; i < r->s->nsyncs; i++)
        if (sync_covers(&r->s->syncs[i], row, k))
            return r->s->syncs[i].inst;
    return done_by(row, k, root_end, f->rows_at_end) ? launcher : PLACE_PAST;
}

/* The launcher's row for a device row's extras, or NONE outside the frame. */
static uint32_t launcher_row(const resolver *r, const tlog_drow *row)
{
    return row->launch_seq < r->nseq ? r->insts[r->s->seqmap[row->launch_seq]].node : NONE;
}

/* The row past the frame's end: from the root's end to the last end of the
 * work under it. A control row under the root that is not part of it. */
static void place_past(resolver *r, uint32_t at, tlog_ticks from, tlog_ticks to)
{
    instance in = {&past_site, NULL, r->f->thread_name, r->f->thread, from, to,
                   TLOG_REC_INSERT | TLOG_REC_PAST};
    place(r, 0, at, &in);
}

/* The past row, made before its instance (placed last) so that device rows
 * can go under it; NONE if memory ran out. */
static uint32_t make_past_row(resolver *r)
{
    uint32_t title = tlog_tree_title_(r->tree, past_site.name);
    uint32_t row = title == NONE ? NONE
                                 : tlog_tree_row_(r->tree, 0, title, TLOG_KIND_CONTROL,
                                                  past_site.name, NULL);
    if (row == NONE)
        r->no_memory = true;
    return row;
}

static void walk_devices(resolver *r, tlog_ticks root_end)
{
    tlog_frame *f = r->f;
    struct tlog_resolve_scratch *s = r->s;
    if (s->nsyncs > 1)
        qsort(s->syncs, s->nsyncs, sizeof *s->syncs, by_end_then_start);
    uint32_t past = NONE, past_row = NONE;
    tlog_ticks past_end = root_end;
    size_t n = 0;
    for (size_t k = 0; k < f->ndrows && !r->no_memory; k++) {
        const tlog_drow *row = &f->drows[k];
        uint32_t target = place_row(r, k, seq_inst(r, row->launch_seq), root_end);
        uint32_t under;
        if (target == PLACE_PAST) {
            if (past == NONE && (past_row = make_past_row(r)) != NONE)
                past = r->ninsts++;
            if (past == NONE)
                return;
            if ((int64_t)(row->end - past_end) > 0)
                past_end = row->end;
            under = past_row;
        } else {
            under = r->insts[target].node;
        }
        unsigned flags = TLOG_REC_EXEC | TLOG_REC_INSERT | TLOG_REC_DEVICE |
                         (row->unresolved ? TLOG_REC_UNRESOLVED : 0);
        instance in = {row->site, NULL, row->device, 0, row->start, row->end, flags};
        uint32_t at = r->ninsts++;
        if (place(r, under, at, &in) == NONE)
            return;
        f->inst_devs[n++] = (tlog_inst_dev){at, launcher_row(r, row), row->device, row->queue};
        f->device_rows++;
        f->device_unresolved += row->unresolved;
    }
    /* Made last: its end is the last of the work under it. */
    if (past != NONE && !r->no_memory)
        place_past(r, past, root_end, past_end);
}

int tlog_frame_alloc_devs_(tlog_frame *f, size_t n)
{
    if (!n)
        return TLOG_OK;
    f->node_devs = tlog_calloc_(n, sizeof *f->node_devs);
    if (!f->node_devs)
        return TLOG_ENOMEM;
    f->nnode_devs = n;
    return TLOG_OK;
}

/* What finish_device marks a device row with until its extras are made. */
static const tlog_node_dev extras_due;

/* Device rows' extras: each from the row's first device interval. A host
 * execution entry of the same title under the same scope shares the row,
 * and may have come first. */
static int finish_device(resolver *r)
{
    tlog_frame *f = r->f;
    const uint32_t *num = r->tree->renumber;
    size_t ndev = 0;
    for (size_t k = 0; k < f->device_rows; k++) {
        tlog_node *n = &f->nodes[num[r->insts[f->inst_devs[k].inst].node]];
        if (!n->dev) {
            n->dev = &extras_due;
            ndev++;
        }
    }
    int rc = tlog_frame_alloc_devs_(f, ndev);
    ndev = 0;
    for (size_t k = 0; k < f->device_rows; k++) {
        tlog_node *n = &f->nodes[num[r->insts[f->inst_devs[k].inst].node]];
        if (n->dev != &extras_due)
            continue;
        if (rc != TLOG_OK) {
            n->dev = NULL;
            continue;
        }
        const tlog_drow *row = &f->drows[k];
        uint32_t l = f->inst_devs[k].launcher;
        f->node_devs[ndev] = (tlog_node_dev){l == NONE ? NULL : &f->nodes[num[l]],
                                             row->launch_site, row->device, row->queue};
        n->dev = &f->node_devs[ndev++];
    }
    return rc;
}

/* Instances and launchers named rows; they now name nodes. */
static void renumber_instances(resolver *r)
{
    const uint32_t *num = r->tree->renumber;
    tlog_frame *f = r->f;
    for (size_t i = 0; i < f->ninsts; i++)
        f->insts[i].node = num[f->insts[i].node];
    for (size_t k = 0; k < f->device_rows; k++)
        if (f->inst_devs[k].launcher != NONE)
            f->inst_devs[k].launcher = num[f->inst_devs[k].launcher];
}

/* ---- the frame ---- */

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

/* The frame's own records as segments; the slots they take in *nslots. */
static segment *own_segments(resolver *r, size_t *nsegs, size_t *nslots)
{
    size_t n = 0;
    *nslots = 0;
    for (const tlog_chunk *c = r->f->chunks; c; c = c->next)
        n++;
    struct tlog_resolve_scratch *s = r->s;
    if (!TLOG_GROW(s->segs, s->capsegs, n + 1))
        return NULL;
    segment *segs = s->segs;
    n = 0;
    for (const tlog_chunk *c = r->f->chunks; c; c = c->next)
        if (c->used) {
            segs[n++] = (segment){c->recs, c->used, c->base};
            *nslots += c->used;
        }
    *nsegs = n;
    return segs;
}

/* Room for every instance the frame may have. */
static size_t count_instances(const tlog_frame *f, size_t own, size_t *workers)
{
    size_t n = own + 1;   /* and a stand-in root */
    *workers = 0;
    for (const tlog_attachment *a = f->attachments; a; a = a->next) {
        n += a->nrecs + 1;
        (*workers)++;
    }
    return n + f->ndrows + 1;   /* and a `Device past frame end` row */
}

static void undo(tlog_frame *f)
{
    free(f->nodes);
    free(f->insts);
    free(f->node_devs);
    free(f->inst_devs);
    free(f->worker_names);   /* and worker_threads */
    f->nodes = NULL;
    f->insts = NULL;
    f->node_devs = NULL;
    f->inst_devs = NULL;
    f->worker_names = NULL;
    f->worker_threads = NULL;
    f->nnodes = f->ninsts = f->nnode_devs = f->nworker_names = 0;
    f->capnodes = f->capinsts = 0;
    f->device_rows = f->device_unresolved = 0;
}

_Static_assert(TLOG_NAME_MAX % sizeof(uint32_t) == 0, "worker_threads follow the names aligned");

static int build(resolver *r)
{
    tlog_frame *f = r->f;
    size_t nsegs, nslots, workers;
    segment *segs = own_segments(r, &nsegs, &nslots);
    if (!segs)
        return TLOG_ENOMEM;
    size_t cap = count_instances(f, nslots, &workers);
    if (cap >= NONE - 2)
        return TLOG_ENOMEM;
    tlog_spares_take_(f->log, f);
    if (!f->insts || f->capinsts < cap) {
        free(f->insts);
        f->insts = tlog_malloc_(cap * sizeof *f->insts);
        f->capinsts = f->insts ? cap : 0;
    }
    /* The names and the threads in one block: a resolve allocates as few
     * blocks as it can. */
    size_t nworkers = workers ? workers : 1;
    f->worker_names = tlog_calloc_(nworkers, TLOG_NAME_MAX + sizeof *f->worker_threads);
    f->worker_threads = f->worker_names ? (uint32_t *)(void *)(f->worker_names + nworkers) : NULL;
    f->inst_devs = tlog_calloc_(f->ndrows ? f->ndrows : 1, sizeof *f->inst_devs);
    if (!f->insts || !f->worker_names || !f->worker_threads || !f->inst_devs)
        return TLOG_ENOMEM;
    f->nworker_names = workers;
    r->insts = f->insts;
    r->rate = tlog_clock_calibrate_(f->log);
    tlog_ticks root_end = walk_own(r, segs, nsegs, nslots);
    walk_attachments(r);
    walk_devices(r, root_end);
    if (r->no_memory)
        return TLOG_ENOMEM;
    f->ninsts = r->ninsts;
    tlog_tree_finish how = {TLOG_TREE_BY_START, false, r->rate, r->origin};
    int rc = tlog_tree_finish_(r->tree, f, &how);
    if (rc == TLOG_OK)
        rc = finish_device(r);
    if (rc == TLOG_OK)
        renumber_instances(r);
    if (rc != TLOG_OK)
        return rc;
    f->start_ns = tlog_tree_offset_ns_(r->origin, f->log->clock.tick0, r->rate);
    f->duration_ns = f->nodes[0].total_ns;
    return TLOG_OK;
}

int tlog_frame_resolve_locked_(tlog_frame *f)
{
    tlog_assert_held_(&f->resolve_lock);
    tlog_frame_stop_rows_(f);
    resolver r = {.f = f, .s = scratch_take(f->log)};
    if (!r.s)
        return TLOG_ENOMEM;
    r.tree = &r.s->tree;
    f->device_rows = f->device_unresolved = 0;
    int rc = build(&r);
    memo_clear(r.s, rc == TLOG_OK ? &r : NULL);
    if (rc == TLOG_OK) {
        count_sites(&r.s->sites);
        tlog_frame_free_raw_(f);
    } else {
        undo(f);   /* the raw records stay for another try */
    }
    scratch_put(f, r.s);
    return rc;
}
