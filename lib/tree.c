/*
 * Building a frame's rows: one map from (parent row, title, kind) to row,
 * one table of titles, and one finish that writes the nodes. See tree.h.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "frame.h"
#include "map.h"
#include "site.h"
#include "tree.h"
#include "util.h"

#define NONE TLOG_TREE_NONE

void tlog_tree_clear_(tlog_tree *t)
{
    t->last_nrows = t->nrows;
    t->as_last = true;
    t->map_filled = false;   /* emptied when first needed (fill_map) */
    t->nrows = 0;
    t->ntitles = 0;
    tlog_map_clear_(&t->title_map);
}

void tlog_tree_free_(tlog_tree *t)
{
    free(t->rows);
    free(t->parents);
    free(t->links);
    tlog_map_free_(&t->row_map);
    free(t->titles);
    tlog_map_free_(&t->title_map);
    free(t->order);
    free(t->starts);
    free(t->size);
    free(t->renumber);
    free(t->row_at);
    memset(t, 0, sizeof *t);
}

/* ---- titles ---- */

uint32_t tlog_tree_title_(tlog_tree *t, const char *name)
{
    tlog_map *m = &t->title_map;
    if (!tlog_map_reserve_(m, 1))
        return NONE;
    uint64_t h = tlog_hash_str_(0xcbf29ce484222325ull, name);
    size_t at = tlog_map_first_(m, h);
    for (; tlog_map_has_(m, at); at = tlog_map_next_(m, at, h))
        if (strcmp(t->titles[m->slots[at].value], name) == 0)
            return m->slots[at].value;
    if (t->ntitles >= NONE / 2 || !TLOG_GROW(t->titles, t->captitles, t->ntitles + 1))
        return NONE;
    t->titles[t->ntitles] = name;
    tlog_map_set_(m, at, h, (uint32_t)t->ntitles);
    return (uint32_t)t->ntitles++;
}

/* ---- rows ---- */

/* A row's children are found by walking its list (tlog_tree_link) until
 * it has this many; then they go in the row map. Walking a short list of
 * rows made close together is cheaper than loading a slot of a map too
 * large for the caches, and a frame whose rows are each met once, a parent
 * with a few children each, then never fills the map. */
#define LIST_MAX 16
/* tlog_tree_link.nchildren of a row whose children are in the row map. */
#define IN_MAP NONE

static uint32_t list_key(uint32_t title, uint8_t kind)
{
    return title << 1 | (kind & 1u);   /* title < NONE / 2 */
}

/* A child's entry in the row map: its parent and its list key; never
 * TLOG_MAP_EMPTY, as a list key is below NONE. */
static uint64_t map_key(uint32_t parent, uint32_t key)
{
    return (uint64_t)parent << 32 | key;
}

/* Whether the next row made is the row of (parent, key) the last frame made
 * with that number: what it held is still there, unless it is past what
 * the last frame made. */
static bool next_as_last(const tlog_tree *t, uint32_t parent, uint32_t key)
{
    return t->nrows < t->last_nrows && t->parents[t->nrows] == parent &&
           t->links[t->nrows].key == key;
}

static uint32_t new_row(tlog_tree *t, uint32_t parent, uint8_t kind, const char *name,
                        uint32_t key)
{
    t->as_last = t->as_last && next_as_last(t, parent, key);
    if (t->nrows >= NONE - 1 || !TLOG_GROW(t->rows, t->caprows, t->nrows + 1) ||
        !TLOG_GROW(t->parents, t->capparents, t->nrows + 1) ||
        !TLOG_GROW(t->links, t->caplinks, t->nrows + 1))
        return NONE;
    t->parents[t->nrows] = parent;
    t->links[t->nrows] = (tlog_tree_link){key, NONE, NONE, 0};
    t->rows[t->nrows] = (tlog_tree_row){.name = name, .first = NONE, .kind = kind,
                                        .min = UINT64_MAX};
    return (uint32_t)t->nrows++;
}

/* Moves the children of `parent` from its list to the row map (or, while
 * the map is not filled, marks them as in it: filling puts them there). */
static bool map_children(tlog_tree *t, uint32_t parent)
{
    tlog_map *m = &t->row_map;
    if (!t->map_filled) {
        t->links[parent].nchildren = IN_MAP;
        return true;
    }
    if (!tlog_map_reserve_(m, t->links[parent].nchildren + 1))
        return false;
    uint32_t c = t->links[parent].child;
    for (uint32_t k = t->links[parent].nchildren; k-- > 0;) {
        c = t->links[c].sibling;
        uint64_t key = map_key(parent, t->links[c].key);
        size_t at;
        tlog_map_find_(m, key, &at);   /* absent: a list holds each key once */
        tlog_map_set_(m, at, key, c);
    }
    t->links[parent].nchildren = IN_MAP;
    return true;
}

/* Whether the rows of `parent` are found in the row map: the root's, and
 * those of a row with too many for its list. */
static bool children_mapped(const tlog_tree *t, uint32_t parent)
{
    return parent == NONE || t->links[parent].nchildren == IN_MAP;
}

/* Whether row r goes in the row map: its parent's children are mapped
 * (appended rows are never looked up). */
static bool row_mapped(const tlog_tree *t, size_t r)
{
    return t->links[r].key != NONE && children_mapped(t, t->parents[r]);
}

/* Puts every row made so far that goes in the row map there, emptied
 * first, sized for those rows alone (a frame of narrow parents with one
 * wide one needs a small map); false when memory ran out. */
static bool fill_map(tlog_tree *t)
{
    tlog_map *m = &t->row_map;
    size_t n = 0;
    for (size_t r = 0; r < t->nrows; r++)
        n += row_mapped(t, r);
    tlog_map_clear_(m);
    if (!tlog_map_reserve_(m, n))
        return false;
    for (size_t r = 0; r < t->nrows; r++) {
        if (!row_mapped(t, r))
            continue;
        uint32_t parent = t->parents[r], key = t->links[r].key;
        uint64_t entry = map_key(parent, key);
        size_t at;
        tlog_map_find_(m, entry, &at);   /* absent: a row's key is unique */
        tlog_map_set_(m, at, entry, (uint32_t)r);
    }
    t->map_filled = true;
    return true;
}

/* A frame that makes the rows the last one made, in the same order, needs
 * no map: while every row made so far is the last frame's row of that
 * number, a row the last frame made next is not among them (a frame's rows
 * have distinct keys under a parent), so it is made without looking. The
 * map is filled when a frame first looks for a row in it otherwise. */
static uint32_t row_in_map(tlog_tree *t, uint32_t parent, uint32_t key, uint8_t kind,
                           const char *name, bool *made)
{
    if (!t->map_filled) {
        if (t->as_last && next_as_last(t, parent, key)) {
            uint32_t r = new_row(t, parent, kind, name, key);
            *made = r != NONE;
            return r;
        }
        if (!fill_map(t))
            return NONE;
    }
    tlog_map *m = &t->row_map;
    if (!tlog_map_reserve_(m, 1))
        return NONE;
    uint64_t entry = map_key(parent, key);
    size_t at;
    if (tlog_map_find_(m, entry, &at))
        return m->slots[at].value;
    uint32_t r = new_row(t, parent, kind, name, key);
    if (r != NONE) {
        tlog_map_set_(m, at, entry, r);
        *made = true;
    }
    return r;
}

/* The child of `parent` (whose children are in its list) with `key`, or
 * NONE. The walk starts after the child last found or made: a loop's body
 * meets its scopes in the order it made their rows, one step each. */
static uint32_t find_in_list(tlog_tree *t, uint32_t parent, uint32_t key)
{
    tlog_tree_link *l = &t->links[parent];
    uint32_t c = l->child;
    for (uint32_t k = l->nchildren; k-- > 0;) {
        c = t->links[c].sibling;
        if (t->links[c].key == key) {
            l->child = c;
            return c;
        }
    }
    return NONE;
}

/* A new row in the list of `parent`, after the child last found or made. */
static uint32_t new_in_list(tlog_tree *t, uint32_t parent, uint32_t key, uint8_t kind,
                            const char *name)
{
    uint32_t r = new_row(t, parent, kind, name, key);
    if (r == NONE)
        return NONE;
    tlog_tree_link *l = &t->links[parent];
    if (l->nchildren) {
        t->links[r].sibling = t->links[l->child].sibling;
        t->links[l->child].sibling = r;
    } else {
        t->links[r].sibling = r;   /* a ring of one */
    }
    l->child = r;
    l->nchildren++;
    return r;
}

/* The child of `parent` with `key` while its children are in its list,
 * made if new; when the list is full, they move to the map first. */
static uint32_t row_in_list(tlog_tree *t, uint32_t parent, uint32_t key, uint8_t kind,
                            const char *name, bool *made)
{
    uint32_t r = find_in_list(t, parent, key);
    if (r != NONE)
        return r;
    if (t->links[parent].nchildren < LIST_MAX) {
        r = new_in_list(t, parent, key, kind, name);
        *made = r != NONE;
        return r;
    }
    return map_children(t, parent) ? row_in_map(t, parent, key, kind, name, made) : NONE;
}

uint32_t tlog_tree_row_(tlog_tree *t, uint32_t parent, uint32_t title, uint8_t kind,
                        const char *name, bool *made)
{
    bool made_here = false;
    uint32_t key = list_key(title, kind);
    uint32_t r = children_mapped(t, parent)
                     ? row_in_map(t, parent, key, kind, name, &made_here)
                     : row_in_list(t, parent, key, kind, name, &made_here);
    if (made)
        *made = made_here;
    return r;
}

uint32_t tlog_tree_append_(tlog_tree *t, uint32_t parent)
{
    return new_row(t, parent, TLOG_KIND_CONTROL, NULL, NONE);   /* a key no row has */
}

/* ---- finish ---- */

int64_t tlog_tree_offset_ns_(uint64_t t, uint64_t origin, double rate)
{
    double d = (double)(int64_t)(t - origin) * rate;
    d = d < 0 ? d - 0.5 : d + 0.5;
    if (d >= 9223372036854775808.0)
        return INT64_MAX;
    return d <= -9223372036854775808.0 ? INT64_MIN : (int64_t)d;
}

static uint64_t to_ns(uint64_t v, double rate)
{
    return rate ? tlog_scale_ns_(v, rate) : v;
}

/* A worker thread's row: an execution row of no call site. */
static uint32_t worker_key(const tlog_tree_row *r)
{
    return r->kind == TLOG_KIND_EXECUTION && !r->site ? r->thread + 1 : 0;
}

/* Titles in natural order: runs of digits compare as numbers ("Worker 2"
 * before "Worker 10"), the rest byte by byte. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            while (*a == '0')
                a++;
            while (*b == '0')
                b++;
            size_t na = 0, nb = 0;
            while (a[na] >= '0' && a[na] <= '9')
                na++;
            while (b[nb] >= '0' && b[nb] <= '9')
                nb++;
            if (na != nb)
                return na < nb ? -1 : 1;
            int d = memcmp(a, b, na);
            if (d)
                return d;
            a += na;
            b += nb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

/* Sibling order for TLOG_TREE_BY_START: first start, worker rows after the
 * others by title in natural order, then thread id (workers start in a
 * different order every frame, and may be new threads every frame: dumps of
 * successive frames should line up), then the order made. */
static int sibling_cmp(const tlog_tree_row *rows, uint32_t a, uint32_t b)
{
    uint32_t wa = worker_key(&rows[a]), wb = worker_key(&rows[b]);
    if (!wa != !wb)
        return wa ? 1 : -1;
    if (wa) {
        int d = natural_cmp(rows[a].name ? rows[a].name : "", rows[b].name ? rows[b].name : "");
        if (d)
            return d;
        if (wa != wb)
            return wa < wb ? -1 : 1;
    }
    int64_t dt = (int64_t)(rows[a].start - rows[b].start);
    if (dt)
        return dt < 0 ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Heapsort: in place, no allocation, and no state outside the call (trees
 * are finished on several threads at once). */
static void sift_down(const tlog_tree_row *rows, uint32_t *c, size_t root, size_t n)
{
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && sibling_cmp(rows, c[child], c[child + 1]) < 0)
            child++;
        if (sibling_cmp(rows, c[root], c[child]) >= 0)
            return;
        uint32_t x = c[root];
        c[root] = c[child];
        c[child] = x;
    }
}

static void sort_siblings(const tlog_tree_row *rows, uint32_t *c, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(rows, c, i, n);
    for (size_t end = n; end-- > 1;) {
        uint32_t x = c[0];
        c[0] = c[end];
        c[end] = x;
        sift_down(rows, c, 0, end);
    }
}

/* Puts the children of one parent in order: most often they already are,
 * or are in reverse (resolve.c makes rows walking backwards). */
static void order_siblings(const tlog_tree_row *rows, uint32_t *c, size_t n)
{
    bool up = true, down = true;
    for (size_t i = 1; i < n && (up || down); i++) {
        int d = sibling_cmp(rows, c[i - 1], c[i]);
        up &= d < 0;
        down &= d > 0;
    }
    if (up)
        return;
    if (down) {
        for (size_t i = 0, j = n - 1; i < j; i++, j--) {
            uint32_t x = c[i];
            c[i] = c[j];
            c[j] = x;
        }
        return;
    }
    sort_siblings(rows, c, n);
}

/* Children grouped by parent, in the order made: order[starts[p] ..
 * starts[p + 1]) are p's. */
static bool group_children(tlog_tree *t)
{
    size_t n = t->nrows;
    if (!TLOG_GROW(t->order, t->caporder, n) || !TLOG_GROW(t->starts, t->capstarts, n + 1))
        return false;
    memset(t->starts, 0, (n + 1) * sizeof *t->starts);
    const uint32_t *parent = t->parents;
    for (size_t i = 1; i < n; i++)
        t->starts[parent[i] + 1]++;
    for (size_t p = 0; p < n; p++)
        t->starts[p + 1] += t->starts[p];
    for (size_t i = 1; i < n; i++)
        t->order[t->starts[parent[i]]++] = (uint32_t)i;
    for (size_t p = n; p > 0; p--)   /* back to the segments' starts */
        t->starts[p] = t->starts[p - 1];
    t->starts[0] = 0;
    return true;
}

static void order_children(tlog_tree *t, enum tlog_tree_order order)
{
    if (order != TLOG_TREE_BY_START)
        return;
    for (size_t p = 0; p < t->nrows; p++) {
        size_t n = t->starts[p + 1] - t->starts[p];
        if (n > 1)
            order_siblings(t->rows, &t->order[t->starts[p]], n);
    }
}

/* Node numbers in pre-order: a row's children follow it, each after the
 * subtrees of the siblings before it. Parents have lower row numbers than
 * their children, so one pass up sizes the subtrees and one pass down
 * numbers them; row_at[] is the inverse, the row of each node. */
static bool renumber(tlog_tree *t)
{
    size_t n = t->nrows;
    if (!TLOG_GROW(t->size, t->capsize, n) || !TLOG_GROW(t->renumber, t->caprenumber, n) ||
        !TLOG_GROW(t->row_at, t->caprowat, n))
        return false;
    for (size_t i = 0; i < n; i++)
        t->size[i] = 1;
    for (size_t i = n; i-- > 1;)
        t->size[t->parents[i]] += t->size[i];
    t->renumber[0] = 0;
    t->row_at[0] = 0;
    for (size_t p = 0; p < n; p++) {
        uint32_t next = t->renumber[p] + 1;
        for (uint32_t k = t->starts[p]; k < t->starts[p + 1]; k++) {
            uint32_t c = t->order[k];
            t->renumber[c] = next;
            t->row_at[next] = c;
            next += t->size[c];
        }
    }
    return true;
}

/* Writes node j, the node of row i, whole and once: nodes are written in
 * order, so memory is written once, front to back. The parent is written
 * already (nodes are in pre-order), and the links follow from the subtree
 * sizes: a first child is the next node, a next sibling the node past the
 * subtree unless that is past the parent's. Self time: the total less
 * control children, taken off the parent here; execution rows ran
 * elsewhere, beside their parent, and `Device past frame end` after it. */
static void put_node(const tlog_tree *t, tlog_node *out, size_t j, const tlog_tree_finish *how)
{
    uint32_t i = t->row_at[j];
    const tlog_tree_row *r = &t->rows[i];
    size_t past = j + t->size[i];
    tlog_node *parent = NULL, *next = NULL;
    if (j) {
        uint32_t up = t->parents[i], pj = t->renumber[up];
        parent = &out[pj];
        if (past < pj + t->size[up])
            next = &out[past];
    }
    /* Field by field: a compound literal cleared the two lines first, a
     * second write of memory that is new to the cache. */
    uint64_t total = to_ns(r->total, how->rate);
    tlog_node *o = &out[j];
    o->parent = parent;
    o->name = r->name;
    o->site = r->site;
    o->total_ns = total;
    o->self_ns = how->self_given ? r->self : total;
    o->count = r->count;
    o->kind = r->kind;
    o->flags = r->flags;
    o->thread = r->thread;
    o->depth = parent ? parent->depth + 1 : 0;
    o->first_child = past > j + 1 ? &out[j + 1] : NULL;
    o->next_sibling = next;
    o->thread_name = r->thread_name;
    o->start_ns = how->rate ? tlog_tree_offset_ns_(r->start, how->origin, how->rate)
                            : (int64_t)r->start;
    o->min_ns = r->count || r->min != UINT64_MAX ? to_ns(r->min, how->rate) : 0;
    o->max_ns = to_ns(r->max, how->rate);
    o->dev = NULL;
    o->ranks = NULL;
    if (parent && !how->self_given && r->kind == TLOG_KIND_CONTROL &&
        !(r->flags & TLOG_NODE_PAST_FRAME))
        parent->self_ns = parent->self_ns > total ? parent->self_ns - total : 0;
}

/* The frame's node array, room for n: its own (spares.c) when that is
 * large enough, else a new one that replaces it. */
static bool nodes_room(tlog_frame *f, size_t n)
{
    if (f->nodes && f->capnodes >= n)
        return true;
    tlog_node *out = n ? tlog_aligned_alloc_(TLOG_NODE_ALIGN, n * sizeof *out) : NULL;
    if (!out)
        return false;
    free(f->nodes);
    f->nodes = out;
    f->capnodes = n;
    return true;
}

int tlog_tree_finish_(tlog_tree *t, tlog_frame *f, const tlog_tree_finish *how)
{
    size_t n = t->nrows;
    if (!n || !nodes_room(f, n) || !group_children(t))
        return TLOG_ENOMEM;
    order_children(t, how->order);
    if (!renumber(t))
        return TLOG_ENOMEM;
    for (size_t j = 0; j < n; j++)
        put_node(t, f->nodes, j, how);
    f->nnodes = n;
    return TLOG_OK;
}
