/*
 * Merging frames into one tree: rows with the same titles and kinds along
 * the same path add up (count, total, min, max), so many frames read as one
 * (`timerlog dump --aggregate`, dashboards over a window of frames).
 * Reducing also keeps, per row, the spread of its total over the inputs
 * (one per rank), for spotting imbalance.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "exchange.h"
#include "internal.h"

#define NONE UINT32_MAX

typedef struct merger {
    tlog_frame *out;
    uint32_t *slots;          /* open addressing: (parent, kind, name) -> row */
    size_t mask;
    uint32_t *last_child;
    char *arena;
    /* Reducing: each row's total in the input being merged, and which
     * input that is (+1; 0 = none yet). */
    uint64_t *input_total;
    uint32_t *input_of;
} merger;

static uint64_t row_hash(uint32_t parent, int kind, const char *name)
{
    uint64_t h = tlog_hash_str_(0xcbf29ce484222325ull ^ (uint64_t)kind, name);
    h ^= (uint64_t)parent * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

static const char *keep(merger *m, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *at = m->arena;
    memcpy(at, s ? s : "", n);
    m->arena += n;
    return at;
}

/* The merged row for `n` under merged row `parent`, made if new. */
static uint32_t row_for(merger *m, uint32_t parent, const tlog_node *n)
{
    tlog_frame *o = m->out;
    size_t s = row_hash(parent, n->kind, n->name) & m->mask;
    for (; m->slots[s] != NONE; s = (s + 1) & m->mask) {
        tlog_node *r = &o->nodes[m->slots[s]];
        if ((r->parent ? (uint32_t)(r->parent - o->nodes) : NONE) == parent &&
            r->kind == n->kind && strcmp(r->name, n->name) == 0)
            return m->slots[s];
    }
    uint32_t i = (uint32_t)o->nnodes++;
    tlog_node *r = &o->nodes[i];
    r->name = keep(m, n->name);
    r->thread_name = keep(m, n->thread_name);
    r->site = n->site;
    r->thread = n->thread;
    r->kind = n->kind;
    r->start_ns = n->start_ns;
    r->min_ns = UINT64_MAX;
    r->parent = parent == NONE ? NULL : &o->nodes[parent];
    r->depth = r->parent ? r->parent->depth + 1 : 0;
    if (r->parent) {
        if (m->last_child[parent] != NONE)
            o->nodes[m->last_child[parent]].next_sibling = r;
        else
            o->nodes[parent].first_child = r;
        m->last_child[parent] = i;
    }
    m->last_child[i] = NONE;
    m->slots[s] = i;
    return i;
}

/* Closes the row's total for the input it was last seen in. */
static void fold_input(merger *m, uint32_t row)
{
    tlog_node_ranks *s = &m->out->node_ranks[row];
    uint64_t t = m->input_total[row];
    if (s->present++ == 0 || t < s->min_ns)
        s->min_ns = t;
    if (t > s->max_ns)
        s->max_ns = t;
    s->mean_ns += (double)t;
}

static void count_input(merger *m, uint32_t row, uint32_t input, uint64_t total)
{
    if (m->input_of[row] != input + 1) {
        if (m->input_of[row])
            fold_input(m, row);
        m->input_of[row] = input + 1;
        m->input_total[row] = 0;
    }
    m->input_total[row] += total;
}

/* After the last input: means over all inputs, absent counting as 0. */
static void finish_spread(merger *m, uint32_t inputs)
{
    tlog_frame *o = m->out;
    for (uint32_t i = 0; i < o->nnodes; i++) {
        tlog_node_ranks *s = &o->node_ranks[i];
        if (m->input_of[i])
            fold_input(m, i);
        if (s->present < inputs) {
            s->min_ns = 0;
            o->partial_rows++;
        }
        s->mean_ns /= inputs;
        o->nodes[i].ranks = s;
    }
    o->reduced_ranks = inputs;
    o->duration_ns = tlog_ns_from_double_(o->node_ranks[0].mean_ns + 0.5);
}

static void add_row(tlog_node *r, const tlog_node *n)
{
    r->total_ns += n->total_ns;
    r->count += n->count;
    if (n->min_ns < r->min_ns)
        r->min_ns = n->min_ns;
    if (n->max_ns > r->max_ns)
        r->max_ns = n->max_ns;
    if (n->start_ns < r->start_ns)
        r->start_ns = n->start_ns;
    r->flags |= n->flags;
}

/* Walks input frame `input`, parents first, mapping each row to its merged
 * row. */
static void merge_frame(merger *m, const tlog_frame *f, uint32_t input, uint32_t *map)
{
    for (const tlog_node *n = tlog_frame_root(f); n; n = tlog_node_next_(n, true)) {
        uint32_t i = (uint32_t)(n - f->nodes);
        uint32_t parent = n->parent ? map[n->parent - f->nodes] : NONE;
        map[i] = parent == NONE ? 0 : row_for(m, parent, n);
        add_row(&m->out->nodes[map[i]], n);
        if (m->input_of)
            count_input(m, map[i], input, n->total_ns);
    }
}

static void finish(tlog_frame *o)
{
    for (size_t i = 0; i < o->nnodes; i++)
        o->nodes[i].self_ns = o->nodes[i].total_ns;
    for (size_t i = 1; i < o->nnodes; i++) {
        tlog_node *n = &o->nodes[i], *p = (tlog_node *)n->parent;
        if (n->kind == TLOG_KIND_CONTROL)
            p->self_ns = p->self_ns > n->total_ns ? p->self_ns - n->total_ns : 0;
        n->percent = p->total_ns ? 100.0 * (double)n->total_ns / (double)p->total_ns : 0.0;
    }
    o->nodes[0].percent = 100.0;
    o->duration_ns = o->nodes[0].total_ns;
}

/* Room for every row and name of the inputs. */
static size_t sizes(const tlog_frame *const *frames, size_t n, size_t *rows, size_t *bytes,
                    size_t *widest)
{
    *rows = *bytes = *widest = 0;
    for (size_t i = 0; i < n; i++) {
        if (!frames[i] || !frames[i]->nnodes)
            return i + 1;
        *rows += frames[i]->nnodes;
        if (frames[i]->nnodes > *widest)
            *widest = frames[i]->nnodes;
        for (size_t k = 0; k < frames[i]->nnodes; k++) {
            const tlog_node *x = &frames[i]->nodes[k];
            *bytes += strlen(x->name) + strlen(x->thread_name ? x->thread_name : "") + 2;
        }
    }
    return 0;
}

static tlog_frame *new_frame(size_t rows, size_t bytes)
{
    tlog_frame *o = tlog_frame_alloc_(NULL);
    if (!o)
        return NULL;
    atomic_store(&o->resolved, true);
    o->nodes = tlog_calloc_(rows, sizeof *o->nodes);
    o->strings = tlog_malloc_(bytes + 64);
    if (!o->nodes || !o->strings) {
        tlog_frame_release(o);
        return NULL;
    }
    return o;
}

static int merge_frames(const tlog_frame *const *frames, size_t n, bool spread,
                        tlog_frame **out)
{
    if (out)
        *out = NULL;
    if (!out || !frames || !n || n > UINT32_MAX - 1)
        return TLOG_EINVAL;
    size_t rows, bytes, widest;
    if (sizes(frames, n, &rows, &bytes, &widest))
        return TLOG_EINVAL;
    tlog_frame *o = new_frame(rows, bytes);
    size_t cap = 16;
    while (cap < rows * 2)
        cap <<= 1;
    merger m = {.out = o, .slots = tlog_malloc_(cap * sizeof(uint32_t)), .mask = cap - 1,
                .last_child = tlog_malloc_(rows * sizeof(uint32_t)),
                .arena = o ? o->strings : NULL};
    uint32_t *map = tlog_malloc_(widest * sizeof *map);
    if (spread && o) {
        o->node_ranks = tlog_calloc_(rows, sizeof *o->node_ranks);
        m.input_total = tlog_malloc_(rows * sizeof *m.input_total);
        m.input_of = tlog_calloc_(rows, sizeof *m.input_of);
    }
    int rc = o && m.slots && m.last_child && map &&
             (!spread || (o->node_ranks && m.input_total && m.input_of)) ? TLOG_OK
                                                                        : TLOG_ENOMEM;
    if (rc == TLOG_OK) {
        memset(m.slots, 0xff, cap * sizeof(uint32_t));
        /* One root for all: the first frame's, under its title. */
        const tlog_node *root = tlog_frame_root(frames[0]);
        o->nnodes = 1;
        o->nodes[0] = (tlog_node){.name = keep(&m, root->name),
                                  .thread_name = keep(&m, root->thread_name),
                                  .site = root->site, .thread = root->thread,
                                  .start_ns = root->start_ns, .min_ns = UINT64_MAX};
        m.last_child[0] = NONE;
        for (size_t i = 0; i < n; i++)
            merge_frame(&m, frames[i], (uint32_t)i, map);
        finish(o);
        if (spread)
            finish_spread(&m, (uint32_t)n);
        o->thread = frames[0]->thread;
        memcpy(o->thread_name, frames[0]->thread_name, sizeof o->thread_name);
        o->start_ns = frames[0]->start_ns;
        o->rank = frames[0]->rank;
        o->wall0_ns = frames[0]->wall0_ns;
        for (size_t i = 0; i < n; i++) {
            o->dropped += frames[i]->dropped;
            o->repaired += frames[i]->repaired;
            o->device_unresolved += frames[i]->device_unresolved;
        }
    }
    free(m.slots);
    free(m.last_child);
    free(m.input_total);
    free(m.input_of);
    free(map);
    if (rc != TLOG_OK) {
        tlog_frame_release(o);
        return rc;
    }
    *out = o;
    return TLOG_OK;
}

int tlog_frame_merge(const tlog_frame *const *frames, size_t n, tlog_frame **out)
{
    return merge_frames(frames, n, false, out);
}

int tlog_frame_reduce(const tlog_frame *const *frames, size_t n, tlog_frame **out)
{
    return merge_frames(frames, n, true, out);
}

int tlog_frame_intern_sites_(tlog_frame *f)
{
    if (!f)
        return TLOG_EINVAL;
    for (size_t i = 0; i < f->nnodes; i++) {
        const tlog_site *s = f->nodes[i].site;
        if (!s)
            continue;
        const tlog_site *kept = tlog_site_intern(s->name ? s->name : "", s->file, s->function,
                                                 s->line, s->level);
        if (!kept)
            return TLOG_ENOMEM;
        f->nodes[i].site = kept;
    }
    return TLOG_OK;
}
