/*
 * Statistics across frames. A summary holds one tree of rows per (thread
 * name, root title); a frame's rows map onto it by path (parent row, kind,
 * title), the key frames merge by. Each row keeps, per quantity (total,
 * self, count), a sum, a minimum, a maximum and a histogram of logarithmic
 * buckets (summary.h), so its memory does not grow with the frames.
 *
 * Adding a frame takes one pass over its rows, each found (first where the
 * group's last frame had it) or made, widened to take its values, then
 * counted. What that pass reads and writes of a row lies in one cache line
 * of an array of its own (summary.h: tlog_row_hot), apart from the rest,
 * and rows are made in the order a frame's nodes come, so that counting a
 * frame like the last walks that array in order. Each text is kept once,
 * so that a large frame's titles, found once per add, compare with rows'
 * by address; groups are found by a hash of (thread name, root title), so
 * that reading or merging many groups takes time in proportion to them.
 * It is all or nothing: when something cannot be had half-way, the counts
 * of the pass are taken back (from a note of what subtracting them cannot
 * restore), and the rows it made, newest first. A large frame like the
 * last of its group is counted later, a part of its rows after each frame
 * (see "Counting frames later"), which readers make up for first.
 * Merging summaries makes and widens everything first, then adds; its
 * counts saturate, as sums do, rather than wrap.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "frame.h"
#include "site.h"
#include "summary.h"
#include "tree.h"
#include "util.h"

#define NONE TLOG_ROW_NONE
#define DEFAULT_WINDOW 128u
#define MAX_WINDOW 65536u
#define DEFAULT_HITCHES 16u
#define MAX_HITCHES 4096u
#define DEFAULT_ROWS (1u << 20)
#define KEPT_SEED 0xcbf29ce484222325ull
#define MEMO_MIN 256u
#define MEMO_PROBES 8
#define MEMO_FROM 64

/* What an add of a frame like its group's last never runs (a new group, a
 * roll back, a hitch kept), out of the add's own code and in the cold
 * section, as a large frame's counting is out of line. In a frame loop,
 * recording and resolving a frame push the add's lines out of the
 * instruction cache before the next add: with these inline, the lines it
 * runs were spread over 8 KiB, and a 10-row frame's statistics cost about
 * a fifth more. */
#define RARE __attribute__((noinline, cold))

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

/* A row whose self time parts from its total: its self time so far, which
 * was its total, is kept apart from now on (self_same is cleared by the
 * caller once it counts). */
static bool split_self(tlog_summary *s, uint32_t r)
{
    tlog_acc *self = &s->rows[r].self;
    const tlog_acc *total = &s->hot[r].total;
    if (!tlog_sketch_copy_(&s->bytes, &self->sk, &total->sk))
        return false;
    self->sum = total->sum;
    self->min = total->min;
    self->max = total->max;
    return true;
}

/* A row whose count parts from what it was in every frame so far: that
 * count is kept from now on, as counting it would have left it (count_same
 * is cleared by the caller once it counts). Its histogram is one bucket in
 * place: nothing to allocate. */
static void split_count(tlog_summary *s, uint32_t r)
{
    tlog_acc *count = &s->rows[r].count;
    tlog_sketch_free_(&s->bytes, &count->sk);
    *count = tlog_count_same_acc_(s->hot[r].count_same, s->hot[r].frames);
}

/* Quantity q (TLOG_ACC_) of row r, where it is kept. */
static inline tlog_acc *acc_at(tlog_summary *s, uint32_t r, int q)
{
    return q == TLOG_ACC_TOTAL ? &s->hot[r].total
           : q == TLOG_ACC_COUNT ? &s->rows[r].count : &s->rows[r].self;
}

/* Whether quantity q of a row is kept apart: not a self time that is its
 * total, nor a count that has been the same. */
static inline bool acc_kept(const tlog_row_hot *x, int q)
{
    return q == TLOG_ACC_TOTAL || (q == TLOG_ACC_SELF ? !x->self_same : !x->count_same);
}


/* tlog_grow_, counting what the array grew by in the summary's bytes. */
static bool grow(tlog_summary *s, void **items, size_t *cap, size_t need, size_t size)
{
    size_t before = *cap;
    if (!tlog_grow_(items, cap, need, size))
        return false;
    s->bytes += (*cap - before) * size;
    return true;
}

/* An array of exactly `need` items where it holds fewer, counted as grow
 * does: for arrays as large as a frame, made again only when frames grow. */
static bool fit(tlog_summary *s, void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    if (need > SIZE_MAX / size)
        return false;
    void *p = tlog_realloc_(*items, need * size);
    if (!p)
        return false;
    s->bytes += (need - *cap) * size;
    *items = p;
    *cap = need;
    return true;
}

/* tlog_map_reserve_, counting what the map grew by in the summary's bytes. */
static bool index_room(tlog_summary *s, tlog_map *m, size_t more)
{
    size_t before = m->cap;
    if (!tlog_map_reserve_(m, more))
        return false;
    s->bytes += (m->cap - before) * sizeof *m->slots;
    return true;
}

/* The slot of the kept string of str's text (hash h), or the empty slot
 * where it goes. */
static size_t kept_slot(const tlog_summary *s, const char *str, uint64_t h)
{
    const tlog_map *m = &s->kept_index;
    size_t at = tlog_map_first_(m, h);
    while (tlog_map_has_(m, at) && !tlog_same_name_(s->kept[m->slots[at].value], str))
        at = tlog_map_next_(m, at, h);
    return at;
}

/* The kept string of str's text, or NULL when none is. */
static const char *kept_string(const tlog_summary *s, const char *str)
{
    size_t at = kept_slot(s, str, tlog_hash_str_(KEPT_SEED, str));
    return tlog_map_has_(&s->kept_index, at) ? s->kept[s->kept_index.slots[at].value] : NULL;
}

/* n bytes that stay where they are for the summary's life; NULL when
 * memory ran out. */
static char *arena_take(tlog_summary *s, size_t n)
{
    tlog_arena_block *b = s->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 4000 ? n : 4000;
        b = tlog_malloc_(sizeof *b + cap);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = s->arena;
        s->arena = b;
        s->bytes += sizeof *b + cap;
    }
    char *at = b->data + b->used;
    b->used += n;
    return at;
}

/* A copy of str for the summary's life, one per text: rows titled alike
 * share it, so that titles known by their text's copy compare by address.
 * NULL when memory ran out. */
static const char *keep_string(tlog_summary *s, const char *str)
{
    uint64_t h = tlog_hash_str_(KEPT_SEED, str);
    size_t at = kept_slot(s, str, h);
    if (tlog_map_has_(&s->kept_index, at))
        return s->kept[s->kept_index.slots[at].value];
    if (s->nkept >= UINT32_MAX || !index_room(s, &s->kept_index, 1) ||
        !grow(s, (void **)&s->kept, &s->capkept, s->nkept + 1, sizeof *s->kept))
        return NULL;
    size_t n = strlen(str) + 1;
    char *copy = arena_take(s, n);
    if (!copy)
        return NULL;
    memcpy(copy, str, n);
    /* Cannot fail: index_room made room above. */
    (void)tlog_map_put_(&s->kept_index, h, (uint32_t)s->nkept);
    s->kept[s->nkept++] = copy;
    return copy;
}

static uint64_t row_hash(uint32_t parent, unsigned kind, const char *name)
{
    uint64_t h = tlog_hash_str_(0xcbf29ce484222325ull ^ kind, name);
    h ^= (uint64_t)parent * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* The slot of the row of (parent, kind, name) in the index, or the empty
 * slot where it goes. */
static size_t row_slot(const tlog_summary *s, uint32_t parent, unsigned kind,
                       const char *name, uint64_t h)
{
    const tlog_map *m = &s->index;
    size_t at = tlog_map_first_(m, h);
    for (; tlog_map_has_(m, at); at = tlog_map_next_(m, at, h)) {
        const tlog_row_hot *x = &s->hot[m->slots[at].value];
        if (x->parent == parent && x->kind == kind && tlog_same_name_(x->name, name))
            break;
    }
    return at;
}

uint32_t tlog_summary_find_row_(const tlog_summary *s, uint32_t parent, unsigned kind,
                         const char *name)
{
    size_t at = row_slot(s, parent, kind, name, row_hash(parent, kind, name));
    return tlog_map_has_(&s->index, at) ? s->index.slots[at].value : NONE;
}

typedef struct row_key {
    uint32_t group, parent;
    unsigned kind;
    const char *name;
    const char *device;
    const tlog_site *site;
} row_key;

/* Room for one more row, in both arrays, aligned as their rows are. */
static bool rows_room(tlog_summary *s)
{
    if (s->nrows < s->caprows)
        return true;
    size_t n = s->caprows ? s->caprows * 2 : 16;
    tlog_row_hot *hot = tlog_aligned_alloc_(_Alignof(tlog_row_hot), n * sizeof *hot);
    tlog_stat_row *rows = tlog_aligned_alloc_(_Alignof(tlog_stat_row), n * sizeof *rows);
    if (!hot || !rows) {
        free(hot);
        free(rows);
        return false;
    }
    if (s->nrows) {
        memcpy(hot, s->hot, s->nrows * sizeof *hot);
        memcpy(rows, s->rows, s->nrows * sizeof *rows);
    }
    free(s->hot);
    free(s->rows);
    s->bytes += (n - s->caprows) * (sizeof *hot + sizeof *rows);
    s->hot = hot;
    s->rows = rows;
    s->caprows = n;
    return true;
}

/* A new row, last child of its parent; NONE when memory ran out. */
static uint32_t new_row(tlog_summary *s, const row_key *k)
{
    if (!rows_room(s) ||
        (k->parent != NONE && !index_room(s, &s->index, 1)))
        return NONE;
    const char *name = keep_string(s, k->name ? k->name : "");
    const char *device = k->device ? keep_string(s, k->device) : NULL;
    if (!name || (k->device && !device))
        return NONE;
    uint32_t r = (uint32_t)s->nrows++;
    tlog_row_hot *h = &s->hot[r];
    memset(h, 0, sizeof *h);
    h->parent = k->parent;
    h->kind = (uint8_t)k->kind;
    h->self_same = true;
    h->total.min = UINT64_MAX;
    h->name = name;
    tlog_stat_row *x = &s->rows[r];
    memset(x, 0, sizeof *x);
    x->owner = s;
    x->first_child = x->last_child = x->next_sibling = NONE;
    x->group = k->group;
    x->device = device;
    x->site_id = k->site ? tlog_site_id(k->site) : 0;
    x->depth = k->parent == NONE ? 0 : s->rows[k->parent].depth + 1;
    x->self.min = x->count.min = UINT64_MAX;
    if (k->parent != NONE) {
        tlog_stat_row *p = &s->rows[k->parent];
        if (p->last_child == NONE)
            p->first_child = r;
        else
            s->rows[p->last_child].next_sibling = r;
        p->last_child = r;
        /* Cannot fail: index_room made room above. */
        (void)tlog_map_put_(&s->index, row_hash(k->parent, h->kind, name), r);
    }
    return r;
}

/* Takes back the newest row: the last child of its parent. */
static void drop_newest_row(tlog_summary *s)
{
    uint32_t r = (uint32_t)--s->nrows;
    const tlog_row_hot *h = &s->hot[r];
    if (h->parent != NONE) {
        tlog_stat_row *p = &s->rows[h->parent];
        if (p->first_child == r) {
            p->first_child = p->last_child = NONE;
        } else {
            uint32_t c = p->first_child;
            while (s->rows[c].next_sibling != r)
                c = s->rows[c].next_sibling;
            s->rows[c].next_sibling = NONE;
            p->last_child = c;
        }
        uint64_t key = row_hash(h->parent, h->kind, h->name);
        size_t at = tlog_map_first_(&s->index, key);
        while (s->index.slots[at].value != r)
            at = tlog_map_next_(&s->index, at, key);
        tlog_map_remove_(&s->index, at);
    }
    for (int q = 0; q < 3; q++)
        tlog_sketch_free_(&s->bytes, &acc_at(s, r, q)->sk);
}

/* ------------------------------------------------------------------------ */
/* Groups                                                                   */
/* ------------------------------------------------------------------------ */

static void later_free(tlog_summary *s, tlog_later *l)
{
    if (!l)
        return;
    s->bytes -= sizeof *l + l->capnodes * sizeof *l->nodes + l->capvalues * sizeof *l->values;
    free(l->nodes);
    free(l->values);
    free(l);
}

static void group_free(tlog_summary *s, tlog_group *g)
{
    if (g->recent)
        s->bytes -= s->cfg.hitch_window * sizeof *g->recent;
    free(g->recent);
    tlog_sketch_free_(&s->bytes, &g->window);
    s->bytes -= g->capmap * sizeof *g->map;
    free(g->map);
    if (g->seen)
        s->bytes -= g->capmap * sizeof *g->seen;
    free(g->seen);
    later_free(s, g->later);
    g->later = NULL;
}

static bool same_group(const tlog_summary *s, const tlog_group *g, const char *thread,
                       const char *root)
{
    return tlog_same_name_(g->thread_name, thread) && tlog_same_name_(s->hot[g->root].name, root);
}

static uint64_t group_hash(const char *thread, const char *root)
{
    return tlog_hash_str_(tlog_hash_str_(KEPT_SEED, thread) ^ 0x9e3779b97f4a7c15ull, root);
}

/* The slot of the group of (thread, root) in the index, or the empty slot
 * where it goes. */
static size_t group_slot(const tlog_summary *s, const char *thread, const char *root,
                         uint64_t h)
{
    const tlog_map *m = &s->group_index;
    size_t at = tlog_map_first_(m, h);
    while (tlog_map_has_(m, at) && !same_group(s, &s->groups[m->slots[at].value], thread, root))
        at = tlog_map_next_(m, at, h);
    return at;
}

uint32_t tlog_summary_find_group_(const tlog_summary *s, const char *thread, const char *root)
{
    size_t at = group_slot(s, thread, root, group_hash(thread, root));
    return tlog_map_has_(&s->group_index, at) ? s->group_index.slots[at].value : NONE;
}

/* The group of (thread, root title), made with its root row if new. */
static RARE int group_for(tlog_summary *s, const char *thread, const tlog_node *root,
                          uint32_t *out)
{
    uint32_t g = tlog_summary_find_group_(s, thread, root->name);
    if (g != NONE) {
        *out = s->last_group = g;
        return TLOG_OK;
    }
    if (s->ngroups >= NONE - 1 || s->nrows >= s->cfg.max_rows)
        return TLOG_EFULL;
    if (!grow(s, (void **)&s->groups, &s->capgroups, s->ngroups + 1, sizeof *s->groups) ||
        !index_room(s, &s->group_index, 1))
        return TLOG_ENOMEM;
    tlog_group *grp = &s->groups[s->ngroups];
    memset(grp, 0, sizeof *grp);
    grp->thread_name = keep_string(s, thread);
    if (s->cfg.hitch_quantile > 0) {
        grp->recent = tlog_malloc_(s->cfg.hitch_window * sizeof *grp->recent);
        if (grp->recent)
            s->bytes += s->cfg.hitch_window * sizeof *grp->recent;
    }
    row_key k = {(uint32_t)s->ngroups, NONE, root->kind, root->name, NULL, root->site};
    grp->root = grp->thread_name && (grp->recent || !s->cfg.hitch_quantile)
                    ? new_row(s, &k) : NONE;
    if (grp->root == NONE) {
        group_free(s, grp);
        return TLOG_ENOMEM;
    }
    /* Cannot fail: index_room made room above. */
    (void)tlog_map_put_(&s->group_index, group_hash(thread, root->name), (uint32_t)s->ngroups);
    *out = s->last_group = (uint32_t)s->ngroups++;
    return TLOG_OK;
}

/* Takes back what a failed add or merge made. */
static RARE void roll_back(tlog_summary *s, size_t nrows, size_t ngroups)
{
    while (s->ngroups > ngroups) {
        tlog_group *g = &s->groups[--s->ngroups];
        const char *root = s->hot[g->root].name;
        tlog_map_remove_(&s->group_index,
                         group_slot(s, g->thread_name, root, group_hash(g->thread_name, root)));
        group_free(s, g);
    }
    while (s->nrows > nrows)   /* after the groups, whose roots they are */
        drop_newest_row(s);
    if (s->last_group >= s->ngroups)
        s->last_group = 0;
}

/* ------------------------------------------------------------------------ */
/* Adding a frame                                                           */
/* ------------------------------------------------------------------------ */

/* The row for node i of `f`, whose parent's row is p, when it is not the
 * row node i of the group's last frame had: found or made; NONE, with
 * *refused counted, past max_rows; false when memory ran out. */
static bool find_or_make_row(tlog_summary *s, uint32_t g, const tlog_node *n, uint32_t p,
                             uint32_t *out, uint64_t *refused)
{
    uint32_t r = tlog_summary_find_row_(s, p, n->kind, n->name);
    if (r == NONE && s->nrows >= s->cfg.max_rows) {
        ++*refused;
    } else if (r == NONE) {
        row_key k = {g, p, n->kind, n->name, n->dev ? n->dev->device : NULL, n->site};
        if ((r = new_row(s, &k)) == NONE)
            return false;
    }
    *out = r;
    return true;
}

/* Whether counting v in `a` changes nothing that subtracting it again
 * would not put back: it lies within what `a` has seen, and the sum does
 * not saturate. Then its bucket lies between those of the extremes, which
 * the histogram holds (every path that sets an extreme makes room for its
 * bucket first, and a summary read back is checked for it). */
static inline bool acc_plain(const tlog_acc *a, uint64_t v)
{
    return v >= a->min && v <= a->max && a->sum + v >= v;
}

/* Counts v in `a`, after acc_plain: a histogram of one bucket (a count
 * that never changes) takes it without computing which. */
static inline void acc_add_plain(tlog_acc *a, uint64_t v)
{
    a->sum += v;
    if (a->sk.cap == 1)
        a->sk.u.one++;
    else
        a->sk.u.heap[tlog_bucket_of_(v) - a->sk.lo]++;
}

static inline void acc_count(tlog_acc *a, uint64_t v, unsigned b)
{
    a->sum = tlog_sat_add_(a->sum, v);
    if (v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
    uint64_t *bin = &tlog_bins_(&a->sk)[b - a->sk.lo];
    *bin = tlog_sat_add_(*bin, 1);
}

/* Whether nothing has been counted in `a` yet: what a new row holds. */
static bool acc_empty(const tlog_acc *a)
{
    return !a->sk.cap && !a->sum && a->min == UINT64_MAX && !a->max;
}

/* The count_same of a row after counting c in it: what it was while c is
 * that; a row's first count when it fits and nothing was counted before. */
static unsigned next_count_same(const tlog_row_hot *x, const tlog_acc *count, uint64_t c)
{
    if (x->count_same)
        return c == x->count_same ? x->count_same : 0;
    return !x->frames && c && c <= TLOG_COUNT_SAME_MAX && acc_empty(count) ? (unsigned)c : 0;
}

/* Counts node n in row r when that changes what subtracting it again would
 * not put back (an extreme, a flag, a self time or count parting from what
 * it was, a sum that saturates) or needs a histogram widened: first what
 * may fail, with a note to undo it for a row that was there before this
 * frame (rows made in this frame go whole when it fails), then the counts.
 * False when memory ran out (nothing counted). */
static __attribute__((noinline)) bool count_changing(tlog_summary *s, uint32_t r,
                                                     const tlog_node *n, size_t nrows_before)
{
    tlog_row_hot *x = &s->hot[r];
    tlog_stat_row *y = &s->rows[r];
    const uint64_t v[3] = {n->total_ns, n->count, n->self_ns};   /* TLOG_ACC_ order */
    const unsigned b[3] = {tlog_bucket_of_(v[0]), tlog_bucket_of_(v[1]), tlog_bucket_of_(v[2])};
    bool same = x->self_same && v[TLOG_ACC_SELF] == v[TLOG_ACC_TOTAL];
    unsigned count_same = next_count_same(x, &y->count, v[TLOG_ACC_COUNT]);
    if (x->count_same && !count_same)
        split_count(s, r);
    if (!tlog_sketch_reserve_(&s->bytes, &x->total.sk, b[TLOG_ACC_TOTAL]) ||
        (!count_same && !tlog_sketch_reserve_(&s->bytes, &y->count.sk, b[TLOG_ACC_COUNT])) ||
        (x->self_same && !same && !split_self(s, r)) ||
        (!same && !tlog_sketch_reserve_(&s->bytes, &y->self.sk, b[TLOG_ACC_SELF])))
        return false;
    if (r < nrows_before) {
        if (!grow(s, (void **)&s->undo, &s->capundo, s->nundo + 1, sizeof *s->undo))
            return false;
        tlog_undo *u = &s->undo[s->nundo++];
        u->row = r;
        u->flags = x->flags;
        u->self_same = x->self_same;
        u->count_same = x->count_same;
        for (int q = 0; q < 3; q++) {
            const tlog_acc *a = acc_at(s, r, q);
            u->min[q] = a->min;
            u->max[q] = a->max;
            u->sum[q] = a->sum;
        }
    }
    x->frames = tlog_sat_add_(x->frames, 1);
    x->flags |= n->flags;
    acc_count(&x->total, v[TLOG_ACC_TOTAL], b[TLOG_ACC_TOTAL]);
    if (!count_same)
        acc_count(&y->count, v[TLOG_ACC_COUNT], b[TLOG_ACC_COUNT]);
    if (!same)
        acc_count(&y->self, v[TLOG_ACC_SELF], b[TLOG_ACC_SELF]);
    x->self_same = same;
    x->count_same = (uint8_t)count_same;
    return true;
}

/* Whether one more frame counts in row x without a test: it has counted
 * some (a first count sets the extremes) and not all a count holds (only
 * merged counts get there; count_changing saturates). Every count of a
 * histogram is at most the frames, so its buckets cannot wrap either. */
static inline bool fast_frames(const tlog_row_hot *x)
{
    return x->frames + 1 > 1;
}

/* Counts node n in row r where its count or self time are kept apart (a
 * parent, a row called more or less often than before), as count_node;
 * false when memory ran out (nothing counted). */
static __attribute__((noinline)) bool count_kept(tlog_summary *s, uint32_t r,
                                                 const tlog_node *n, size_t nrows_before)
{
    tlog_row_hot *x = &s->hot[r];
    tlog_acc *count = &s->rows[r].count, *self = &s->rows[r].self;
    uint64_t vt = n->total_ns, vc = n->count, vs = n->self_ns;
    if (!fast_frames(x) || (x->flags | n->flags) != x->flags || !acc_plain(&x->total, vt) ||
        (x->count_same ? vc != x->count_same : !acc_plain(count, vc)) ||
        (x->self_same ? vs != vt : !acc_plain(self, vs)))
        return count_changing(s, r, n, nrows_before);
    x->frames++;
    acc_add_plain(&x->total, vt);
    if (!x->count_same)
        acc_add_plain(count, vc);
    if (!x->self_same)
        acc_add_plain(self, vs);
    return true;
}

/* Counts node n in row r; false when memory ran out (nothing counted). */
static inline __attribute__((always_inline)) bool
count_node(tlog_summary *s, uint32_t r, const tlog_node *n, size_t nrows_before)
{
    tlog_row_hot *x = &s->hot[r];
    uint64_t vt = n->total_ns, vc = n->count;
    /* The steady state of a leaf in a frame loop: its total within what
     * the row has seen, its self time that total, its count what it always
     * was, no new flag. Only the total's sum and a histogram count change,
     * both in the hot row's lines, and those subtract again. A row not
     * counted yet has no extremes. */
    if (TLOG_UNLIKELY(!fast_frames(x) || (x->flags | n->flags) != x->flags ||
                      !acc_plain(&x->total, vt) || !x->count_same || vc != x->count_same ||
                      !x->self_same || n->self_ns != vt))
        return count_kept(s, r, n, nrows_before);
    x->frames++;
    acc_add_plain(&x->total, vt);
    return true;
}

/* Takes back the counts of nodes [0, upto) of a failed add. A row whose
 * self time or count parted from what it was in this frame gets self_same
 * or count_same back from its note, and that quantity is then not read (a
 * later parting makes it afresh). Rows made in this frame are dropped
 * after. */
static void undo_counts(tlog_summary *s, const tlog_group *g, const tlog_frame *f,
                        size_t upto)
{
    for (size_t i = 0; i < upto; i++) {
        uint32_t r = g->map[i];
        if (r == NONE)
            continue;
        tlog_row_hot *x = &s->hot[r];
        const tlog_node *n = &f->nodes[i];
        const uint64_t v[3] = {n->total_ns, n->count, n->self_ns};
        /* A saturated count stays: it may then be one above what it was
         * (a row 2^64 - 2 frames old in an add that failed), never 0. */
        if (x->frames != UINT64_MAX)
            x->frames--;
        for (int q = 0; q < 3; q++) {
            if (!acc_kept(x, q))
                continue;
            tlog_acc *a = acc_at(s, r, q);
            a->sum -= v[q];
            uint64_t *bin = &tlog_bins_(&a->sk)[tlog_bucket_of_(v[q]) - a->sk.lo];
            if (*bin != UINT64_MAX)
                --*bin;
        }
    }
    while (s->nundo) {
        const tlog_undo *u = &s->undo[--s->nundo];
        tlog_row_hot *x = &s->hot[u->row];
        x->flags = u->flags;
        x->self_same = u->self_same;
        x->count_same = u->count_same;
        for (int q = 0; q < 3; q++) {
            tlog_acc *a = acc_at(s, u->row, q);
            a->min = u->min[q];
            a->max = u->max[q];
            a->sum = u->sum[q];
        }
    }
}

/* The memo's entry of a title: its own, or the free one it would take
 * (entries of earlier adds are free); NULL when the few places it may be
 * in are taken (it is then looked up each time). */
static inline tlog_title_memo *memo_entry(tlog_summary *s, const char *title)
{
    size_t k = (size_t)(((uintptr_t)title * 0x9e3779b97f4a7c15ull) >> 32) & s->memo_mask;
    for (int probe = 0; probe < MEMO_PROBES; probe++, k = (k + 1) & s->memo_mask) {
        tlog_title_memo *m = &s->memo[k];
        if (m->add != s->adds || m->title == title)
            return m;
    }
    return NULL;
}

/* After a title's row was found by its text: its kept string. */
static void remember_title(tlog_summary *s, const char *title, const char *kept)
{
    tlog_title_memo *m = memo_entry(s, title);
    if (m) {
        m->title = title;
        m->add = s->adds;
        m->kept = kept;
    }
}

/* Starts a new add of the memo (entries of earlier adds are free), with
 * twice as many entries as there are kept strings (a frame's titles are
 * mostly those of rows), made or remade first; false when memory ran out. */
static bool memo_begin(tlog_summary *s)
{
    s->adds++;
    size_t have = s->memo ? s->memo_mask + 1 : 0, want = MEMO_MIN;
    while (want < 2 * s->nkept)
        want *= 2;
    if (have >= want)
        return true;
    tlog_title_memo *memo = tlog_calloc_(want, sizeof *memo);
    if (!memo)
        return false;
    free(s->memo);
    s->bytes += (want - have) * sizeof *memo;
    s->memo = memo;
    s->memo_mask = want - 1;
    return true;
}

/* The kept string of the text of a title of the frame being added, NULL
 * when there is none: each title's text is looked up once per add, by its
 * address (which holds the same text while the frame is being added). A
 * kept string is its text's only copy, so a row's title is then compared
 * by address. */
static inline const char *frame_title(tlog_summary *s, const char *title)
{
    tlog_title_memo *m = memo_entry(s, title);
    if (TLOG_LIKELY(m && m->title == title && m->add == s->adds))
        return m->kept;
    const char *kept = kept_string(s, title);
    if (m) {
        m->title = title;
        m->add = s->adds;
        m->kept = kept;
    }
    return kept;
}

/* Whether row r is the row of node n under parent row p: it was the row of
 * the same node index in the group's last frame, and frames of a loop
 * have the same rows in the same order. With `titled`, the last frame's
 * node there had a call site's title at n's title's address: the same
 * title. With `memo`, titles are known by their kept strings
 * (frame_title). */
static inline bool same_row(tlog_summary *s, uint32_t r, uint32_t p, const tlog_node *n,
                            bool titled, bool memo)
{
    if (r >= s->nrows)
        return false;
    const tlog_row_hot *x = &s->hot[r];
    if (x->parent != p || x->kind != n->kind)
        return false;
    if (memo)
        return titled || x->name == frame_title(s, n->name);
    return titled || tlog_same_name_(x->name, n->name);
}

/* Frames of many rows outgrow the caches: the line of the node AHEAD
 * places on, and of its row as the last frame had it, are asked for while
 * this node counts, and the histogram line its total goes to half as far
 * on (by then its row's line has come). As far ahead as that because a
 * line comes from memory in the time a few dozen rows count: nearer, the
 * lines of a frame of 100,000 rows came late, most of all where its rows'
 * timings spread over many buckets. */
enum { AHEAD = 64, AHEAD_FROM = 4096 };

static inline void fetch_ahead(const tlog_summary *s, const tlog_frame *f, const uint32_t *map,
                               size_t i)
{
    if (i + AHEAD < f->nnodes) {
        tlog_prefetch_(&f->nodes[i + AHEAD]);   /* the line counting reads */
        uint32_t r = map[i + AHEAD];
        if (r < s->nrows)
            tlog_prefetch_(&s->hot[r]);
    }
    if (i + AHEAD / 2 < f->nnodes) {
        uint32_t r = map[i + AHEAD / 2];
        if (r < s->nrows) {
            const tlog_acc *a = &s->hot[r].total;
            unsigned k = tlog_bucket_of_(f->nodes[i + AHEAD / 2].total_ns) - a->sk.lo;
            if (a->sk.cap > 1 && k < a->sk.cap)
                tlog_prefetch_(&a->sk.u.heap[k]);
        }
    }
}

/* Maps and counts every node of `f` in group g, in one pass: a node's
 * parent comes before it in every resolved frame. The map and titles are
 * written only where they change: a frame like the last leaves their
 * lines clean. A `large` frame has its titles known by address (the memo,
 * made), and its lines asked for ahead when it outgrows the caches. On
 * failure what was counted is taken back. */
static inline __attribute__((always_inline)) int
count_nodes(tlog_summary *s, uint32_t g, const tlog_frame *f, uint64_t *refused, bool large)
{
    bool ahead = large && f->nnodes >= AHEAD_FROM, memo = large;
    const tlog_node *nodes = f->nodes;
    size_t nnodes = f->nnodes;
    uint32_t *map = s->groups[g].map;
    const char **seen = s->groups[g].seen;
    size_t trusted = s->groups[g].trusted;
    size_t nrows_before = s->nrows;
    s->nundo = 0;
    map[0] = s->groups[g].root;
    if (seen)
        seen[0] = nodes[0].site ? nodes[0].name : NULL;
    size_t i = 0;
    if (!count_node(s, map[0], &nodes[0], nrows_before))
        goto failed;
    for (i = 1; i < nnodes; i++) {
        const tlog_node *n = &nodes[i];
        if (ahead)
            fetch_ahead(s, f, map, i);
        size_t parent = n->parent ? (size_t)(n->parent - nodes) : i;
        uint32_t p = parent < i ? map[parent] : NONE;
        uint32_t r = map[i];
        if (p == NONE) {
            r = NONE;   /* under a row left out: left out too */
            ++*refused;
        } else if (!same_row(s, r, p, n, i < trusted && seen[i] == n->name, memo)) {
            if (!find_or_make_row(s, g, n, p, &r, refused))
                goto failed;
            if (memo && r != NONE)
                remember_title(s, n->name, s->hot[r].name);
        }
        if (map[i] != r)
            map[i] = r;
        if (seen) {
            const char *title = n->site ? n->name : NULL;
            if (seen[i] != title)
                seen[i] = title;
        }
        if (r != NONE && !count_node(s, r, n, nrows_before))
            goto failed;
    }
    return TLOG_OK;
failed:
    undo_counts(s, &s->groups[g], f, i);
    return TLOG_ENOMEM;
}

/* Frames of fewer nodes than MEMO_FROM have too few of each title to
 * gain from knowing them by address. */
static __attribute__((noinline)) int count_small(tlog_summary *s, uint32_t g,
                                                 const tlog_frame *f, uint64_t *refused)
{
    return count_nodes(s, g, f, refused, false);
}

/* The others start a new add of the memo, which first has room for the
 * titles the summary knows. */
static __attribute__((noinline)) int count_large(tlog_summary *s, uint32_t g,
                                                 const tlog_frame *f, uint64_t *refused)
{
    if (!memo_begin(s))
        return TLOG_ENOMEM;
    return count_nodes(s, g, f, refused, true);
}

/* Each in a loop of its own: the small one as lean as it can be. */
static int count_frame(tlog_summary *s, uint32_t g, const tlog_frame *f, uint64_t *refused)
{
    return f->nnodes < MEMO_FROM ? count_small(s, g, f, refused)
                                 : count_large(s, g, f, refused);
}

/* ------------------------------------------------------------------------ */
/* Counting frames later                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A frame of LATER_FROM nodes or more that has the rows of its group's
 * last frame, each value below 2^32, and no node that parts a row's self
 * time or count from what it was, is not counted into its rows while it
 * is added: its values go, node after node, into the group's slots, where
 * the last TLOG_LATER_FRAMES frames' wait, and after each frame one part
 * of the nodes (a TLOG_LATER_FRAMES-th) is counted into its rows, all its
 * frames waiting at once; the summary counts everything waiting before it
 * is read or changed otherwise. Its root is counted at once (the hitches
 * read it), and a histogram that does not hold a value's bucket is widened
 * at once (a frame's values seldom need it). A row's lines are then read
 * and written once every TLOG_LATER_FRAMES frames: in a frame that
 * outgrows the caches, reading and writing each row's line and its
 * histogram's in every frame was most of what its statistics cost, and
 * the slots are written in order. The figures are what counting each
 * frame at once gives: sums, extremes and buckets add up the same in any
 * order.
 */
#define LATER_FROM 4096u

/* timerlog.h says what letting frames wait costs a row: this and
 * TLOG_LATER_FRAMES values of 4 bytes. */
_Static_assert(sizeof(tlog_later_node) == 32, "a row's plan is 32 bytes");

/* The values of a frame waiting: one a slot, a slot being a kept quantity
 * of a node (its total, then its count and self time where they are
 * kept), in one run of l->stride slots, slot after slot, beside the runs
 * of the other frames waiting. A frame's values are written in order, as
 * the hardware asks for lines ahead of writes in order; a slot's are read
 * from each frame's run, LATER_BLOCK slots at a time (a block), whose
 * lines counting asks for ahead. The frames' values of each block side
 * by side, written a line in each block, made the put about an eighth
 * longer at 100,000 nodes: each of those lines came from memory unasked. */
enum { LATER_BLOCK = 16 };

/* The run of frame `frame` (its position in the turn). */
static inline uint32_t *later_run(const tlog_later *l, unsigned frame)
{
    return l->values + frame * l->stride;
}

/* Writes v where a frame's next value goes (*at), and moves on. */
static inline void later_put(uint32_t **at, uint32_t v)
{
    *(*at)++ = v;
}

/* The values a node's slots take (how many a node has). */
static inline unsigned later_width(const tlog_later_node *w)
{
    return 1u + !w->count_same + !w->self_same;
}

/* Notes in w what histogram `sk` of its quantity q holds: for the total,
 * its buckets' values below UINT32_MAX (none when they are all above). */
static void note_span(tlog_later_node *w, int q, const tlog_sketch *sk)
{
    if (q == TLOG_ACC_TOTAL) {
        uint64_t lo = tlog_bucket_low_(sk->lo);
        uint64_t end = sk->lo + sk->cap < TLOG_SKETCH_BUCKETS
                           ? tlog_bucket_low_(sk->lo + sk->cap)
                           : UINT64_MAX;
        if (end > UINT32_MAX)
            end = UINT32_MAX;
        w->total_lo = lo < end ? (uint32_t)lo : 0;
        w->total_n = lo < end ? (uint32_t)(end - lo) : 0;
    } else if (q == TLOG_ACC_COUNT) {
        w->count_lo = sk->lo;
        w->count_cap = sk->cap;
    } else {
        w->self_lo = sk->lo;
        w->self_cap = sk->cap;
    }
}

/* Widens quantity q of row r to hold the bucket of v, a value to count
 * later, and notes what it holds then in w; false for a value past 2^32
 * or when memory ran out. A histogram only ever widens, and what an add
 * that fails widened stays so: the figures are what they were. */
static __attribute__((noinline)) bool widen_later(tlog_summary *s, uint32_t r, int q,
                                                  uint64_t v, tlog_later_node *w)
{
    if (v > UINT32_MAX)
        return false;
    tlog_sketch *sk = &acc_at(s, r, q)->sk;
    if (!tlog_sketch_reserve_(&s->bytes, sk, tlog_bucket_of_(v)))
        return false;
    note_span(w, q, sk);
    return true;
}

/* Puts total v of node i (whose plan is w) in its slot, after widening
 * its row's histogram where it does not hold v's bucket (most frames'
 * values fall in buckets their rows have seen, but in a frame of many rows
 * some row's seldom does not). */
static inline bool later_total(tlog_summary *s, const tlog_group *g, size_t i,
                               tlog_later_node *w, uint64_t v, uint32_t **at)
{
    if (TLOG_UNLIKELY(v - w->total_lo >= w->total_n) &&
        !widen_later(s, g->map[i], TLOG_ACC_TOTAL, v, w))
        return false;
    later_put(at, (uint32_t)v);
    return true;
}

/* The same for its count or self time (q), which few nodes keep. */
static inline bool later_value(tlog_summary *s, const tlog_group *g, size_t i,
                               tlog_later_node *w, int q, uint64_t v, uint32_t **at)
{
    unsigned lo = q == TLOG_ACC_COUNT ? w->count_lo : w->self_lo;
    unsigned cap = q == TLOG_ACC_COUNT ? w->count_cap : w->self_cap;
    if ((v > UINT32_MAX || tlog_bucket_of_(v) - lo >= cap) && !widen_later(s, g->map[i], q, v, w))
        return false;
    later_put(at, (uint32_t)v);
    return true;
}

/* In a summary that trusts site titles, whether node n at index i, whose
 * title is not at its plan's address, has its row's title; the plan then
 * takes its address where it is a site's. */
static __attribute__((noinline)) bool same_site_title(tlog_summary *s, const tlog_group *g,
                                                      size_t i, const tlog_node *n)
{
    if (frame_title(s, n->name) != s->hot[g->map[i]].name)
        return false;
    if (n->site)
        g->later->nodes[i].title = n->name;
    return true;
}

/* How many nodes on the node a frame's values are put from asks for:
 * further than AHEAD, because putting a node takes less time than counting
 * it at once, so its line must be asked for earlier to come in time (with
 * AHEAD a put of 100,000 nodes took about a tenth longer; further than
 * this gained nothing more). */
enum { PUT_AHEAD = 128 };

/* Whether frame f has what counting it later needs (above): then its
 * values wait in the group's slots. When it has not, nothing has
 * changed that counting it at once would not (histograms widened, titles'
 * addresses noted). */
static bool put_later(tlog_summary *s, tlog_group *g, const tlog_frame *f)
{
    const tlog_later *l = g->later;
    if (!l || !l->nnodes || l->nnodes != f->nnodes)
        return false;
    const tlog_node *nodes = f->nodes;
    size_t nnodes = f->nnodes;
    tlog_later_node *plan = l->nodes;
    bool trusted = s->trust_site_titles;
    uint32_t *at = later_run(l, (unsigned)(l->written % TLOG_LATER_FRAMES));
    for (size_t i = 1; i < nnodes; i++) {
        if (i + PUT_AHEAD < nnodes)
            tlog_prefetch_(&nodes[i + PUT_AHEAD]);
        const tlog_node *n = &nodes[i];
        tlog_later_node *w = &plan[i];
        size_t parent = n->parent ? (size_t)(n->parent - nodes) : i;
        if (parent != w->parent || n->kind != w->kind || (n->flags & ~w->flags) ||
            (trusted ? (n->name != w->title || !w->title) && !same_site_title(s, g, i, n)
                     : frame_title(s, n->name) != w->title))
            return false;
        if (!later_total(s, g, i, w, n->total_ns, &at) ||
            (w->count_same ? n->count != w->count_same
                           : !later_value(s, g, i, w, TLOG_ACC_COUNT, n->count, &at)) ||
            (w->self_same ? n->self_ns != n->total_ns
                          : !later_value(s, g, i, w, TLOG_ACC_SELF, n->self_ns, &at)))
            return false;
    }
    return true;
}

/* The frames of a turn counted, the last at `last`, n of them: in the
 * order they lie, which counting does not care for, as at most two runs
 * of positions, [from[k], to[k]) (the second empty unless they wrap). */
typedef struct later_runs {
    unsigned from[2], to[2];
} later_runs;

static later_runs turn_runs(unsigned last, unsigned n)
{
    unsigned first = n == TLOG_LATER_FRAMES ? 0 : (last + TLOG_LATER_FRAMES + 1 - n) %
                                                      TLOG_LATER_FRAMES;
    unsigned before_end = TLOG_LATER_FRAMES - first < n ? TLOG_LATER_FRAMES - first : n;
    return (later_runs){{first, 0}, {first + before_end, n - before_end}};
}

/* The values of block `block` in the first run (position 0's); those of
 * position f lie f * l->stride values on. */
static inline const uint32_t *block_values(const tlog_later *l, size_t block)
{
    return l->values + block * LATER_BLOCK;
}

/* Asks for the lines of block `block` in the runs of the frames of
 * `runs`: a line in each run, as many places as frames, which the
 * hardware does not follow (without this, the counting after each frame of
 * 100,000 rows in a log took about half as long again). */
static void fetch_block(const tlog_later *l, size_t block, later_runs runs)
{
    const uint32_t *values = block_values(l, block);
    for (int r = 0; r < 2; r++)
        for (unsigned f = runs.from[r]; f < runs.to[r]; f++)
            tlog_prefetch_(values + f * l->stride);
}

/* Asks for the first lines of histogram `sk`, as many as hold
 * FETCH_BUCKETS buckets (four): timings gather near their least, and most
 * of a row's values fall in the first few buckets of the span its
 * histogram holds. Asked for as a row is walked, a block ahead of its
 * counting, they took the counting after each frame of 100,000 rows in a
 * log from about 225 us (asking for nothing) to 160 us; asking for the
 * line of each row's last value took it to 210 us: the resolve between
 * two adds pushes the histograms out of the caches. */
enum { FETCH_BUCKETS = 32 };

static inline void fetch_bins(const tlog_sketch *sk)
{
    if (sk->cap < 2)
        return;
    const char *bins = (const char *)sk->u.heap;
    size_t bytes = (sk->cap < FETCH_BUCKETS ? sk->cap : FETCH_BUCKETS) * sizeof *sk->u.heap;
    tlog_prefetch_write_(bins);
    if (bytes > 64)
        tlog_prefetch_write_(bins + 64);
    if (bytes > 128)
        tlog_prefetch_write_(bins + 128);
    if (bytes > 192)
        tlog_prefetch_write_(bins + 192);
}

/* Most lanes count_lanes takes. */
enum { LANES = 4 };

/* Counts in a[k] the values of slot k of a block (`values`, its first
 * slot's in the first run, each run `stride` values on) of the frames of
 * `runs`, for k below `lanes` (at most LANES), side by side; with `sat`,
 * their buckets saturate. One count a value: counting a run of values of
 * one bucket at once was slower where a row's values spread over many (a
 * branch mispredicted each time the bucket changes). But a row's values
 * mostly fall in one bucket, and each count of it waits for the last to
 * be stored: counting four rows' in turn overlaps four such waits. */
static inline __attribute__((always_inline)) void
count_lanes(tlog_acc *const *a, const uint32_t *values, size_t stride, unsigned lanes,
            later_runs runs, bool sat)
{
    uint64_t sum[LANES], *bins[LANES];
    uint32_t min[LANES], max[LANES];
    unsigned lo[LANES];
    for (unsigned k = 0; k < lanes; k++) {
        sum[k] = 0;
        min[k] = UINT32_MAX;
        max[k] = 0;
        bins[k] = tlog_bins_(&a[k]->sk);
        lo[k] = a[k]->sk.lo;
    }
    for (int r = 0; r < 2; r++)
        for (unsigned f = runs.from[r]; f < runs.to[r]; f++)
            for (unsigned k = 0; k < lanes; k++) {
                uint32_t x = values[f * stride + k];
                unsigned b = tlog_bucket_of_(x) - lo[k];
                assert(b < a[k]->sk.cap);   /* what put_later made sure of */
                sum[k] += x;
                min[k] = x < min[k] ? x : min[k];
                max[k] = x > max[k] ? x : max[k];
                bins[k][b] = sat ? tlog_sat_add_(bins[k][b], 1) : bins[k][b] + 1;
            }
    for (unsigned k = 0; k < lanes; k++) {
        a[k]->sum = tlog_sat_add_(a[k]->sum, sum[k]);
        if (min[k] < a[k]->min)
            a[k]->min = min[k];
        if (max[k] > a[k]->max)
            a[k]->max = max[k];
    }
}

/* Counts slots k0 to k1 - 1 of block `block` (into acc[k - k0]), none of
 * whose buckets may saturate, LANES at a time. */
static void count_block(tlog_acc *const *acc, const tlog_later *l, size_t block, unsigned k0,
                        unsigned k1, later_runs runs)
{
    const uint32_t *values = block_values(l, block);
    unsigned k = k0;
    for (; k + LANES <= k1; k += LANES)
        count_lanes(acc + (k - k0), values + k, l->stride, LANES, runs, false);
    for (; k < k1; k++)
        count_lanes(acc + (k - k0), values + k, l->stride, 1, runs, false);
}

/* Counts in `a` the values of slot `slot` of the frames of `runs`, its
 * buckets saturating. */
static __attribute__((noinline)) void count_saturating(tlog_acc *a, const tlog_later *l,
                                                       size_t slot, later_runs runs)
{
    count_lanes(&a, l->values + slot, l->stride, 1, runs, true);   /* in the first run */
}

/* The first node of part p of a frame of nnodes nodes counted later. */
static inline size_t part_first(size_t nnodes, unsigned p)
{
    return 1 + (nnodes - 1) * p / TLOG_LATER_FRAMES;
}

static inline size_t part_end_slot(const tlog_later *l, unsigned p)
{
    return p + 1 < TLOG_LATER_FRAMES ? l->part_slot[p + 1] : l->slots;
}

/* The quantities of the slots a part's counting has walked to and not
 * yet counted, by slot modulo WALK_SLOTS: the walk goes at most two blocks
 * and a node's slots ahead of the block counted. */
enum { WALK_SLOTS = 4 * LATER_BLOCK };

/* Where counting a part has come in its rows: the next node, its first
 * slot and the part's end, and each slot's quantity. */
typedef struct part_walk {
    size_t i, to, slot;
    tlog_acc *acc[WALK_SLOTS];
} part_walk;

/* Walks the part's rows until the slots before `upto` have their
 * quantities in pw->acc: adds each row's frames (n), and counts at once a
 * slot of a row whose buckets could saturate (after 2^64 frames), its
 * entry NULL then. Each row's line is asked for AHEAD nodes on: the
 * walk goes block by block beside the counting, whose work hides the
 * lines' coming. */
static void walk_rows(tlog_summary *s, tlog_group *g, part_walk *pw, size_t upto, unsigned n,
                      later_runs runs)
{
    tlog_later *l = g->later;
    tlog_acc **acc = pw->acc;
    for (; pw->slot < upto && pw->i < pw->to; pw->i++) {
        size_t i = pw->i;
        if (i + AHEAD < pw->to)
            tlog_prefetch_write_(&s->hot[g->map[i + AHEAD]]);
        const tlog_later_node *w = &l->nodes[i];
        uint32_t r = g->map[i];
        tlog_row_hot *x = &s->hot[r];
        /* Every bucket holds at most the row's frames: none wraps unless
         * they could. */
        bool sat = x->frames > UINT64_MAX - n;
        x->frames = tlog_sat_add_(x->frames, n);
        size_t slot = pw->slot;
        fetch_bins(&x->total.sk);
        acc[slot++ % WALK_SLOTS] = &x->total;
        if (!w->count_same)
            acc[slot++ % WALK_SLOTS] = &s->rows[r].count;
        if (!w->self_same)
            acc[slot++ % WALK_SLOTS] = &s->rows[r].self;
        if (TLOG_UNLIKELY(sat))
            for (size_t k = pw->slot; k < slot; k++) {
                count_saturating(acc[k % WALK_SLOTS], l, k, runs);
                acc[k % WALK_SLOTS] = NULL;
            }
        pw->slot = slot;
    }
}

/* Counts into their rows the values of part p's nodes of the last n frames
 * written (n at most TLOG_LATER_FRAMES). Cannot fail: every histogram
 * holds its values' buckets already. Block by block: the rows of this
 * block and the next are walked (their histograms' lines asked for), the
 * lines of the block after the next asked for, and this one's values
 * counted. */
static void count_part(tlog_summary *s, tlog_group *g, unsigned p, unsigned n)
{
    tlog_later *l = g->later;
    if (!n)
        return;
    unsigned last = (unsigned)((l->written - 1) % TLOG_LATER_FRAMES);
    later_runs runs = turn_runs(last, n);
    size_t first = l->part_slot[p], end = part_end_slot(l, p);
    part_walk pw = {.i = part_first(l->nnodes, p), .to = part_first(l->nnodes, p + 1),
                    .slot = first};
    size_t b0 = first / LATER_BLOCK, b1 = (end + LATER_BLOCK - 1) / LATER_BLOCK;
    for (size_t b = b0; b < b1; b++) {
        size_t lo = b * LATER_BLOCK;   /* the block's first slot */
        unsigned k0 = b == b0 ? (unsigned)(first - lo) : 0;
        unsigned k1 = b + 1 == b1 ? (unsigned)(end - lo) : LATER_BLOCK;
        walk_rows(s, g, &pw, lo + 2 * LATER_BLOCK, n, runs);
        if (b + 2 < b1)
            fetch_block(l, b + 2, runs);
        tlog_acc **acc = &pw.acc[lo % WALK_SLOTS];   /* the block's, together */
        /* Runs of slots to count, around those counted on their own. */
        for (unsigned k = k0; k < k1;) {
            unsigned run = k;
            while (run < k1 && acc[run])
                run++;
            if (run > k)
                count_block(acc + k, l, b, k, run, runs);
            k = run + 1;
        }
    }
}

/* After frame `written - 1` was written: its part is counted, all the
 * frames since that part last was (the last TLOG_LATER_FRAMES at most).
 * Each frame written counts a part, and each part is counted every
 * TLOG_LATER_FRAMES frames, before the frame that takes its values' place
 * is written: the frames of a group cost alike, none counts them all. */
static void count_part_due(tlog_summary *s, tlog_group *g)
{
    uint64_t last = g->later->written - 1;
    count_part(s, g, (unsigned)(last % TLOG_LATER_FRAMES),
               last < TLOG_LATER_FRAMES ? (unsigned)last + 1 : TLOG_LATER_FRAMES);
}

/* Counts every part's frames waiting, and starts the turn afresh. */
static void count_later(tlog_summary *s, tlog_group *g)
{
    tlog_later *l = g->later;
    if (!l || !l->written)
        return;
    uint64_t last = l->written - 1;
    for (unsigned p = 0; p < TLOG_LATER_FRAMES; p++)
        /* Frames since part p was counted after frame last - (last - p) %
         * TLOG_LATER_FRAMES, or all of them, where it never was. */
        count_part(s, g, p,
                   last < p ? (unsigned)l->written
                            : (unsigned)((last - p) % TLOG_LATER_FRAMES));
    l->written = 0;
}

/* Counts every group's frames waiting. */
static void count_all_later(tlog_summary *s)
{
    for (size_t g = 0; g < s->ngroups; g++)
        count_later(s, &s->groups[g]);
    atomic_store_explicit(&s->waiting, false, memory_order_release);
}

void tlog_summary_settle_slow_(const tlog_summary *cs)
{
    /* Not a const object: a summary is made by tlog_summary_create. */
    tlog_summary *s = (tlog_summary *)cs;
    tlog_lock_(&s->settle_lock, TLOG_LOCK_SUMMARY);
    if (atomic_load_explicit(&s->waiting, memory_order_relaxed))
        count_all_later(s);
    tlog_unlock_(&s->settle_lock);
}

/* Counts what waits in group g, and forgets what let its frames wait:
 * its rows are to change otherwise (a frame counted at once, a merge). A
 * group has frames waiting only while it has a plan. */
static void drop_later(tlog_summary *s, tlog_group *g)
{
    if (!g->later || !g->later->nnodes)
        return;
    count_later(s, g);
    g->later->nnodes = 0;
}

/* The same for every group, before a merge changes their rows. */
static void stop_later(tlog_summary *s)
{
    for (size_t g = 0; g < s->ngroups; g++)
        drop_later(s, &s->groups[g]);
    atomic_store_explicit(&s->waiting, false, memory_order_release);
}

/* After frame f was counted at once in group g (its plan dropped before):
 * what its nodes' rows let the frames after it have to be counted later.
 * None where it has nodes left out (past max_rows: a later frame's may not
 * be), and none, with nothing lost, when memory runs out. */
static void plan_later(tlog_summary *s, tlog_group *g, const tlog_frame *f, uint64_t refused)
{
    if (refused)
        return;
    if (!g->later) {
        if (!(g->later = tlog_calloc_(1, sizeof *g->later)))
            return;
        s->bytes += sizeof *g->later;
    }
    tlog_later *l = g->later;
    if (!fit(s, (void **)&l->nodes, &l->capnodes, f->nnodes, sizeof *l->nodes))
        return;
    size_t slots = 0;
    unsigned part = 0;
    for (size_t i = 1; i < f->nnodes; i++) {
        const tlog_node *n = &f->nodes[i];
        uint32_t r = g->map[i];
        const tlog_row_hot *x = &s->hot[r];
        const tlog_stat_row *y = &s->rows[r];
        tlog_later_node *w = &l->nodes[i];
        *w = (tlog_later_node){.parent = n->parent ? (uint32_t)(n->parent - f->nodes)
                                                   : (uint32_t)i,
                               .kind = x->kind, .flags = x->flags,
                               .count_same = x->count_same, .self_same = x->self_same,
                               .title = !s->trust_site_titles ? x->name
                                        : n->site                ? n->name
                                                                 : NULL};
        note_span(w, TLOG_ACC_TOTAL, &x->total.sk);
        note_span(w, TLOG_ACC_COUNT, &y->count.sk);
        note_span(w, TLOG_ACC_SELF, &y->self.sk);
        while (part < TLOG_LATER_FRAMES && part_first(f->nnodes, part) == i)
            l->part_slot[part++] = slots;
        slots += later_width(w);
    }
    size_t stride = (slots + LATER_BLOCK - 1) / LATER_BLOCK * LATER_BLOCK;
    if (!fit(s, (void **)&l->values, &l->capvalues, stride * TLOG_LATER_FRAMES,
             sizeof *l->values))
        return;
    l->slots = slots;
    l->stride = stride;
    l->nnodes = f->nnodes;
    l->written = 0;
}

/* A large frame: later when it can be (above), else at once, after what
 * waits. */
static __attribute__((noinline)) int count_large_frame(tlog_summary *s, uint32_t g,
                                                       const tlog_frame *f, uint64_t *refused)
{
    tlog_group *grp = &s->groups[g];
    if (!memo_begin(s))
        return TLOG_ENOMEM;
    if (put_later(s, grp, f)) {
        s->nundo = 0;
        if (!count_node(s, grp->root, &f->nodes[0], s->nrows))
            return TLOG_ENOMEM;   /* it counted nothing; its values wait for no one */
        grp->later->written++;
        count_part_due(s, grp);
        atomic_store_explicit(&s->waiting, true, memory_order_relaxed);
        return TLOG_OK;
    }
    drop_later(s, grp);   /* counting may change its rows, and the map */
    int rc = count_nodes(s, g, f, refused, true);
    if (rc == TLOG_OK)
        plan_later(s, grp, f, *refused);
    return rc;
}

/* Frames of LATER_FROM nodes or more may be counted later (above); the
 * others are counted at once, after what waits. */
static int count_any_frame(tlog_summary *s, uint32_t g, const tlog_frame *f, uint64_t *refused)
{
    if (f->nnodes >= LATER_FROM)
        return count_large_frame(s, g, f, refused);
    drop_later(s, &s->groups[g]);
    return count_frame(s, g, f, refused);
}

/* ------------------------------------------------------------------------ */
/* Hitches                                                                  */
/* ------------------------------------------------------------------------ */

static RARE void keep_hitch(tlog_summary *s, const tlog_hitch *h)
{
    size_t max = s->cfg.max_hitches;
    if (s->nhitches == max) {
        tlog_frame_release(s->hitches[s->hitch_first].frame);
        s->hitch_first = (s->hitch_first + 1) % max;
        s->nhitches--;
    }
    s->hitches[(s->hitch_first + s->nhitches++) % max] = *h;
    atomic_fetch_add(&h->frame->refs, 1);
}

/* Moves the group's quantile bucket to where the window's values put it:
 * the first bucket whose values, with those below it, are more than
 * `rank`. It moves by a bucket or two per frame: no pass over the
 * histogram. */
static void window_settle(tlog_group *g, uint64_t rank)
{
    const uint64_t *bins = tlog_cbins_(&g->window);
    unsigned lo = g->window.lo;
    while (g->below > rank)
        g->below -= bins[--g->quantile - lo];
    while (g->below + bins[g->quantile - lo] <= rank)
        g->below += bins[g->quantile++ - lo];
}

/* The frame's root total joins the group's recent frames, the oldest
 * leaving when the window is full (its bucket was widened by
 * tlog_summary_add), and the quantile bucket follows. */
static void window_push(tlog_summary *s, tlog_group *g, uint64_t ns)
{
    uint32_t w = s->cfg.hitch_window;
    unsigned b = tlog_bucket_of_(ns);
    if (!g->nrecent)
        g->quantile = b;
    if (g->nrecent == w) {
        unsigned old = tlog_bucket_of_(g->recent[g->next_recent]);
        tlog_bins_(&g->window)[old - g->window.lo]--;
        g->below -= old < g->quantile;
    } else {
        g->nrecent++;
    }
    g->recent[g->next_recent] = ns;
    g->next_recent = (g->next_recent + 1) % w;
    tlog_bins_(&g->window)[b - g->window.lo]++;
    g->below += b < g->quantile;
    window_settle(g, tlog_rank_of_(s->cfg.hitch_quantile, g->nrecent));
}

static void check_hitch(tlog_summary *s, uint32_t gi, const tlog_frame *f)
{
    tlog_group *g = &s->groups[gi];
    uint64_t ns = f->nodes[0].total_ns;
    unsigned reasons = 0;
    if (s->cfg.hitch_ns && ns > s->cfg.hitch_ns)
        reasons |= TLOG_HITCH_BUDGET;
    /* Past the quantile's whole bucket: a frame as long as the quantile
     * never counts, whatever side of the bucket's middle it falls. */
    unsigned at = g->quantile;
    if (g->recent && g->nrecent == s->cfg.hitch_window && tlog_bucket_of_(ns) > at)
        reasons |= TLOG_HITCH_QUANTILE;
    if (g->recent)
        window_push(s, g, ns);
    if (TLOG_LIKELY(!reasons))
        return;
    tlog_hitch h = {(tlog_frame *)f, gi, 0, ns, reasons, 0, 0, 0};
    if (reasons & TLOG_HITCH_BUDGET)
        h.budget_ns = s->cfg.hitch_ns;
    if (reasons & TLOG_HITCH_QUANTILE)
        h.quantile_ns = tlog_sketch_bucket_value_(at);
    const tlog_row_hot *root = &s->hot[g->root];
    h.number = ++s->hitches_seen;
    h.median_ns = tlog_sketch_quantile_(&root->total, root->frames, 0.5);
    keep_hitch(s, &h);
}

/* Room in the group's map (and titles) for a frame of n nodes; what they
 * held is kept only as far as it goes (they are a cache). */
static bool map_room(tlog_summary *s, tlog_group *g, size_t n)
{
    if (n <= g->capmap)
        return true;
    uint32_t *map = tlog_malloc_(n * sizeof *map);
    const char **seen = s->trust_site_titles ? tlog_calloc_(n, sizeof *seen) : NULL;
    if (!map || (s->trust_site_titles && !seen)) {
        free(map);
        free(seen);
        return false;
    }
    memset(map, 0xff, n * sizeof *map);
    if (g->capmap)
        memcpy(map, g->map, g->capmap * sizeof *map);
    if (g->seen)
        memcpy(seen, g->seen, g->capmap * sizeof *seen);
    s->bytes += (n - g->capmap) * (sizeof *map + (seen ? sizeof *seen : 0));
    free(g->map);
    free(g->seen);
    g->map = map;
    g->seen = seen;
    g->capmap = n;
    return true;
}

void tlog_summary_trust_site_titles_(tlog_summary *s)
{
    s->trust_site_titles = true;
}

/* The group of the frame: the last frame's, most often. */
static int frame_group(tlog_summary *s, const tlog_frame *f, uint32_t *g)
{
    if (s->last_group < s->ngroups && same_group(s, &s->groups[s->last_group], f->thread_name,
                                                 f->nodes[0].name)) {
        *g = s->last_group;
        return TLOG_OK;
    }
    return group_for(s, f->thread_name, &f->nodes[0], g);
}

int tlog_summary_add(tlog_summary *s, const tlog_frame *f)
{
    if (!s || !f || !f->nnodes)
        return TLOG_EINVAL;
    size_t nrows = s->nrows, ngroups = s->ngroups;
    uint64_t refused = 0;
    uint32_t g = NONE;
    int rc = frame_group(s, f, &g);
    if (rc == TLOG_EFULL) {
        s->frames = tlog_sat_add_(s->frames, 1);
        /* no room even for its root */
        s->rows_refused = tlog_sat_add_(s->rows_refused, f->nnodes);
        return TLOG_OK;
    }
    if (rc == TLOG_OK && (!map_room(s, &s->groups[g], f->nnodes) ||
                          (s->groups[g].recent &&
                           !tlog_sketch_reserve_(&s->bytes, &s->groups[g].window,
                                           tlog_bucket_of_(f->nodes[0].total_ns)))))
        rc = TLOG_ENOMEM;
    if (rc == TLOG_OK)
        rc = count_any_frame(s, g, f, &refused);
    if (rc != TLOG_OK) {
        if (g < s->ngroups)
            s->groups[g].trusted = 0;   /* its titles are this frame's now */
        roll_back(s, nrows, ngroups);
        return rc;
    }
    s->frames = tlog_sat_add_(s->frames, 1);
    s->rows_refused = tlog_sat_add_(s->rows_refused, refused);
    if (s->trust_site_titles)
        s->groups[g].trusted = f->nnodes;
    check_hitch(s, g, f);
    return TLOG_OK;
}

/* ------------------------------------------------------------------------ */
/* Merging summaries                                                        */
/* ------------------------------------------------------------------------ */

/* Room in `into` for the counts of `from`, a quantity of a row of `frames`
 * frames, and for the buckets of its extremes, which counting relies on
 * (acc_plain). */
static bool reserve_like(tlog_summary *s, tlog_acc *into, const tlog_acc *from, uint64_t frames)
{
    return tlog_sketch_reserve_like_(&s->bytes, &into->sk, &from->sk) &&
           (!frames ||
            (tlog_sketch_reserve_(&s->bytes, &into->sk, tlog_bucket_of_(from->min)) &&
             tlog_sketch_reserve_(&s->bytes, &into->sk, tlog_bucket_of_(from->max))));
}

/* The row of `into` for row r of `from`, made if new, with room for its
 * histograms; rows past max_rows are NONE and counted. */
static int map_merged_row(tlog_summary *into, const tlog_summary *from, uint32_t r,
                          uint32_t *map, uint64_t *refused)
{
    const tlog_row_hot *x = &from->hot[r];
    const tlog_stat_row *xr = &from->rows[r];
    uint32_t to;
    if (x->parent == NONE) {
        tlog_node root = {.name = x->name, .kind = x->kind};
        uint32_t g;
        int rc = group_for(into, from->groups[xr->group].thread_name, &root, &g);
        if (rc == TLOG_EFULL) {
            *refused = tlog_sat_add_(*refused, x->frames);
            to = NONE;
        } else if (rc != TLOG_OK) {
            return rc;
        } else {
            to = into->groups[g].root;
        }
    } else if ((to = map[x->parent]) == NONE) {
        *refused = tlog_sat_add_(*refused, x->frames);   /* under a row left out */
    } else {
        uint32_t found = tlog_summary_find_row_(into, to, x->kind, x->name);
        if (found == NONE && into->nrows >= into->cfg.max_rows) {
            *refused = tlog_sat_add_(*refused, x->frames);
        } else if (found == NONE) {
            row_key k = {into->rows[to].group, to, x->kind, x->name, xr->device, NULL};
            found = new_row(into, &k);
            if (found == NONE)
                return TLOG_ENOMEM;
        }
        to = found;
    }
    map[r] = to;
    if (to == NONE)
        return TLOG_OK;
    tlog_row_hot *y = &into->hot[to];
    tlog_stat_row *yr = &into->rows[to];
    bool same = y->self_same && x->self_same;
    const tlog_acc count = tlog_row_quantity_(from, r, TLOG_ACC_COUNT),
                   self = tlog_row_quantity_(from, r, x->self_same ? TLOG_ACC_TOTAL : TLOG_ACC_SELF);
    /* A count the same in both stays unkept; else it is kept from here. */
    if (y->count_same && x->frames && x->count_same != y->count_same) {
        split_count(into, to);
        y->count_same = 0;
    }
    if (!reserve_like(into, &y->total, &x->total, x->frames) ||
        (!y->count_same && !reserve_like(into, &yr->count, &count, x->frames)) ||
        (!same && y->self_same && !split_self(into, to)) ||
        (!same && !reserve_like(into, &yr->self, &self, x->frames)))
        return TLOG_ENOMEM;
    return TLOG_OK;
}

static void merge_hitches(tlog_summary *into, const tlog_summary *from, const uint32_t *map)
{
    uint64_t seen = into->hitches_seen;
    for (size_t k = 0; k < from->nhitches; k++) {
        tlog_hitch h = from->hitches[(from->hitch_first + k) % from->cfg.max_hitches];
        uint32_t root = map[from->groups[h.group].root];
        if (root == NONE)
            continue;
        h.group = into->rows[root].group;
        h.number += seen;
        keep_hitch(into, &h);
    }
    into->hitches_seen = tlog_sat_add_(into->hitches_seen, from->hitches_seen);
}

/* Merges `from` into `into`, leaving in map[] the row of `into` each row
 * of `from` went to (NONE: left out). */
static int merge_mapped(tlog_summary *into, const tlog_summary *from, uint32_t *map)
{
    tlog_summary_settle_(from);
    stop_later(into);
    size_t nrows = into->nrows, ngroups = into->ngroups;
    uint64_t refused = 0;
    int rc = TLOG_OK;
    /* Parents come before their children in the rows. */
    for (uint32_t r = 0; rc == TLOG_OK && r < from->nrows; r++)
        rc = map_merged_row(into, from, r, map, &refused);
    if (rc != TLOG_OK) {
        roll_back(into, nrows, ngroups);
        return rc;
    }
    /* Nothing fails from here: what was there changes only now. */
    for (uint32_t r = 0; r < from->nrows; r++) {
        if (map[r] == NONE)
            continue;
        tlog_row_hot *to = &into->hot[map[r]];
        tlog_stat_row *tr = &into->rows[map[r]];
        const tlog_row_hot *x = &from->hot[r];
        if (!tr->site_id)   /* the first site, as adding keeps */
            tr->site_id = from->rows[r].site_id;
        if (!x->frames)
            continue;   /* a row read back with no frames has no extremes */
        if (!to->count_same) {   /* else both had the same count */
            const tlog_acc count = tlog_row_quantity_(from, r, TLOG_ACC_COUNT);
            tlog_acc_add_(&tr->count, &count);
        }
        to->frames = tlog_sat_add_(to->frames, x->frames);
        to->flags |= x->flags;
        tlog_acc_add_(&to->total, &x->total);
        if (!(to->self_same && x->self_same)) {
            const tlog_acc self =
                tlog_row_quantity_(from, r, x->self_same ? TLOG_ACC_TOTAL : TLOG_ACC_SELF);
            tlog_acc_add_(&tr->self, &self);
            to->self_same = false;
        }
    }
    into->frames = tlog_sat_add_(into->frames, from->frames);
    into->rows_refused =
        tlog_sat_add_(into->rows_refused, tlog_sat_add_(from->rows_refused, refused));
    merge_hitches(into, from, map);
    return TLOG_OK;
}

int tlog_summary_merge(tlog_summary *into, const tlog_summary *from)
{
    if (!into || !from || into == from)
        return TLOG_EINVAL;
    uint32_t *map = tlog_malloc_((from->nrows ? from->nrows : 1) * sizeof *map);
    if (!map)
        return TLOG_ENOMEM;
    int rc = merge_mapped(into, from, map);
    free(map);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Reducing across ranks                                                    */
/* ------------------------------------------------------------------------ */

/* Room for the spread of every row; new rows have none yet. */
static bool ranks_room(tlog_summary *s)
{
    if (s->nranks >= s->nrows)
        return true;
    tlog_row_ranks *p = tlog_realloc_(s->ranks, s->nrows * sizeof *p);
    if (!p)
        return false;
    memset(p + s->nranks, 0, (s->nrows - s->nranks) * sizeof *p);
    s->bytes += (s->nrows - s->nranks) * sizeof *p;
    s->ranks = p;
    s->nranks = s->nrows;
    return true;
}

/* Each row of input `rank` adds its median and p99 to the spread of the
 * row it went to. */
static void note_spread(tlog_summary *out, const tlog_summary *in, const uint32_t *map,
                        uint32_t rank)
{
    for (uint32_t r = 0; r < in->nrows; r++) {
        if (map[r] == NONE)
            continue;
        const tlog_row_hot *x = &in->hot[r];
        tlog_row_ranks *k = &out->ranks[map[r]];
        const tlog_acc *a = &x->total;
        uint64_t p99 = tlog_sketch_quantile_(a, x->frames, 0.99);
        k->median_sum += (double)tlog_sketch_quantile_(a, x->frames, 0.5);
        if (k->present++ == 0 || p99 > k->p99_max) {
            k->p99_max = p99;
            k->p99_max_rank = rank;
        }
    }
}

int tlog_summary_reduce(const tlog_summary *const *in, size_t n, tlog_summary **out)
{
    if (out)
        *out = NULL;
    if (!in || !out || !n || n > UINT32_MAX)
        return TLOG_EINVAL;
    const tlog_summary *first = NULL;
    size_t rows = 1;
    for (size_t i = 0; i < n; i++) {
        if (in[i] && !first)
            first = in[i];
        if (in[i] && in[i]->nrows > rows)
            rows = in[i]->nrows;
    }
    tlog_summary *s = NULL;
    int rc = tlog_summary_create(first ? &first->cfg : NULL, &s);
    uint32_t *map = rc == TLOG_OK ? tlog_malloc_(rows * sizeof *map) : NULL;
    if (rc == TLOG_OK && !map)
        rc = TLOG_ENOMEM;
    for (size_t i = 0; rc == TLOG_OK && i < n; i++) {
        if (!in[i])
            continue;
        if (in[i] == s)
            rc = TLOG_EINVAL;
        else if ((rc = merge_mapped(s, in[i], map)) == TLOG_OK)
            rc = ranks_room(s) ? TLOG_OK : TLOG_ENOMEM;
        if (rc == TLOG_OK)
            note_spread(s, in[i], map, (uint32_t)i);
    }
    free(map);
    if (rc != TLOG_OK) {
        tlog_summary_destroy(s);
        return rc;
    }
    s->reduced = (uint32_t)n;
    *out = s;
    return TLOG_OK;
}

/* ------------------------------------------------------------------------ */
/* Rows from elsewhere (summary_codec.c)                                    */
/* ------------------------------------------------------------------------ */

int tlog_summary_load_group_(tlog_summary *s, const char *thread, const char *root,
                             unsigned kind, uint32_t *row)
{
    if (tlog_summary_find_group_(s, thread, root) != NONE)
        return TLOG_EFORMAT;
    tlog_node node = {.name = root, .kind = (uint8_t)kind};
    uint32_t g;
    int rc = group_for(s, thread, &node, &g);
    if (rc == TLOG_EFULL)
        return TLOG_ENOMEM;   /* past max_rows, which loading never sets */
    if (rc == TLOG_OK)
        *row = s->groups[g].root;
    return rc;
}

int tlog_summary_load_row_(tlog_summary *s, uint32_t parent, unsigned kind, const char *name,
                           const char *device, uint32_t *row)
{
    if (tlog_summary_find_row_(s, parent, kind, name) != NONE)
        return TLOG_EFORMAT;
    row_key k = {s->rows[parent].group, parent, kind, name, device, NULL};
    *row = new_row(s, &k);
    return *row == NONE ? TLOG_ENOMEM : TLOG_OK;
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

int tlog_summary_normalize_(const tlog_summary_config *in, tlog_summary_config *out)
{
    if (!tlog_read_sized_(out, sizeof *out, in, sizeof(size_t)))
        return TLOG_EINVAL;
    out->size = sizeof *out;
    if (!(out->hitch_quantile >= 0 && out->hitch_quantile < 1) ||
        out->hitch_window > MAX_WINDOW || out->max_hitches > MAX_HITCHES)
        return TLOG_EINVAL;
    if (!out->hitch_window)
        out->hitch_window = DEFAULT_WINDOW;
    if (!out->max_hitches)
        out->max_hitches = DEFAULT_HITCHES;
    if (!out->max_rows)
        out->max_rows = DEFAULT_ROWS;
    return TLOG_OK;
}

int tlog_summary_create(const tlog_summary_config *config, tlog_summary **out)
{
    if (!out)
        return TLOG_EINVAL;
    *out = NULL;
    tlog_summary_config cfg;
    int rc = tlog_summary_normalize_(config, &cfg);
    if (rc != TLOG_OK)
        return rc;
    tlog_summary *s = tlog_calloc_(1, sizeof *s);
    if (!s)
        return TLOG_ENOMEM;
    s->cfg = cfg;
    s->hitches = tlog_calloc_(cfg.max_hitches, sizeof *s->hitches);
    if (!s->hitches) {
        free(s);
        return TLOG_ENOMEM;
    }
    s->bytes = sizeof *s + cfg.max_hitches * sizeof *s->hitches;
    pthread_mutex_init(&s->settle_lock, NULL);
    *out = s;
    return TLOG_OK;
}

static void release_all(tlog_summary *s)
{
    for (size_t k = 0; k < s->nhitches; k++)
        tlog_frame_release(s->hitches[(s->hitch_first + k) % s->cfg.max_hitches].frame);
    s->nhitches = s->hitch_first = 0;
    for (uint32_t r = 0; r < s->nrows; r++)
        for (int q = 0; q < 3; q++)
            if (acc_at(s, r, q)->sk.cap > 1)
                free(acc_at(s, r, q)->sk.u.heap);
    for (size_t g = 0; g < s->ngroups; g++) {
        free(s->groups[g].recent);
        if (s->groups[g].window.cap > 1)
            free(s->groups[g].window.u.heap);
        free(s->groups[g].map);
        free(s->groups[g].seen);
        later_free(s, s->groups[g].later);
    }
    while (s->arena) {
        tlog_arena_block *next = s->arena->next;
        free(s->arena);
        s->arena = next;
    }
    free(s->hot);
    free(s->rows);
    free(s->kept);
    tlog_map_free_(&s->kept_index);
    free(s->memo);
    free(s->groups);
    tlog_map_free_(&s->group_index);
    tlog_map_free_(&s->index);
    free(s->undo);
    free(s->ranks);
}

int tlog_summary_reset(tlog_summary *s)
{
    if (!s)
        return TLOG_EINVAL;
    release_all(s);
    tlog_summary_config cfg = s->cfg;
    tlog_hitch *hitches = s->hitches;
    bool trust = s->trust_site_titles;
    pthread_mutex_destroy(&s->settle_lock);
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->settle_lock, NULL);
    s->cfg = cfg;
    s->hitches = hitches;
    s->trust_site_titles = trust;
    s->bytes = sizeof *s + cfg.max_hitches * sizeof *s->hitches;
    return TLOG_OK;
}

void tlog_summary_destroy(tlog_summary *s)
{
    if (!s)
        return;
    release_all(s);
    free(s->hitches);
    pthread_mutex_destroy(&s->settle_lock);
    free(s);
}

