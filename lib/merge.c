/*
 * Merging frames into one tree: rows with the same titles and kinds along
 * the same path add up (count, total, min, max), so many frames read as one
 * (`timerlog dump --aggregate`, dashboards over a window of frames).
 * Reducing also keeps, per row, the spread of its total over the inputs
 * (one per rank), for spotting imbalance. A device row keeps the device,
 * queue and launcher of the first input row it came from.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "exchange.h"
#include "frame.h"
#include "tree.h"

#define NONE TLOG_TREE_NONE

/* A merged device row's extras, from the first input row that had them:
 * its launcher as a merged row. */
typedef struct merged_dev {
    const char *device;       /* NULL: none yet */
    const tlog_site *launch_site;
    uint32_t queue;
    uint32_t launcher;        /* merged row, or NONE */
} merged_dev;

typedef struct merger {
    tlog_frame *out;
    tlog_tree tree;
    char *arena;
    merged_dev *devs;         /* by merged row; NULL when no input has any */
    /* Reducing: per row, the spread over the inputs, its total in the
     * input being merged, and which input that is (+1; 0 = none yet). */
    tlog_node_ranks *ranks;
    uint64_t *input_total;
    uint32_t *input_of;
} merger;

static const char *keep(merger *m, const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *at = m->arena;
    memcpy(at, s ? s : "", n);
    m->arena += n;
    return at;
}

/* The merged row of `kind` for `n` under merged row `parent` (NONE: the
 * root), made if new from n's fields; NONE if memory ran out. */
static uint32_t row_for(merger *m, uint32_t parent, const tlog_node *n, uint8_t kind)
{
    uint32_t title = tlog_tree_title_(&m->tree, n->name);
    bool made;
    uint32_t i = title == NONE ? NONE
                               : tlog_tree_row_(&m->tree, parent, title, kind, NULL, &made);
    if (i != NONE && made) {
        tlog_tree_row *r = &m->tree.rows[i];
        r->name = keep(m, n->name);
        r->thread_name = keep(m, n->thread_name);
        r->site = n->site;
        r->thread = n->thread;
        r->start = (uint64_t)n->start_ns;
    }
    return i;
}

/* Closes the row's total for the input it was last seen in. */
static void fold_input(merger *m, uint32_t row)
{
    tlog_node_ranks *s = &m->ranks[row];
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
    m->input_total[row] = tlog_sat_add_(m->input_total[row], total);
}

/* After the last input: means over all inputs, absent counting as 0, at
 * the rows' nodes. */
static void finish_spread(merger *m, uint32_t inputs)
{
    tlog_frame *o = m->out;
    const uint32_t *num = m->tree.renumber;
    for (uint32_t i = 0; i < o->nnodes; i++) {
        tlog_node_ranks *s = &m->ranks[i];
        if (m->input_of[i])
            fold_input(m, i);
        if (s->present < inputs) {
            s->min_ns = 0;
            o->partial_rows++;
        }
        s->mean_ns /= inputs;
        o->node_ranks[num[i]] = *s;
        o->nodes[num[i]].ranks = &o->node_ranks[num[i]];
    }
    o->reduced_ranks = inputs;
    o->duration_ns = tlog_ns_from_double_(o->node_ranks[0].mean_ns + 0.5);
}

static void add_row(tlog_tree_row *r, const tlog_node *n)
{
    r->total = tlog_sat_add_(r->total, n->total_ns);
    r->count = tlog_sat_add_(r->count, n->count);
    if (n->min_ns < r->min)
        r->min = n->min_ns;
    if (n->max_ns > r->max)
        r->max = n->max_ns;
    if (n->start_ns < (int64_t)r->start)
        r->start = (uint64_t)n->start_ns;
    r->flags |= n->flags;
}

/* Device extras for the merged rows of input frame f that have none yet,
 * once every row of f is mapped (a launcher may come after its device
 * row). */
static void take_devs(merger *m, const tlog_frame *f, const uint32_t *map)
{
    for (size_t i = 0; i < f->nnodes; i++) {
        const tlog_node_dev *d = f->nodes[i].dev;
        merged_dev *to = &m->devs[map[i]];
        if (!d || to->device)
            continue;
        to->device = keep(m, d->device);
        to->launch_site = d->launch_site;
        to->queue = d->queue;
        to->launcher = d->launcher ? map[d->launcher - f->nodes] : NONE;
    }
}

/* Walks input frame `input`, parents first, mapping each row to its merged
 * row. */
static bool merge_frame(merger *m, const tlog_frame *f, uint32_t input, uint32_t *map)
{
    for (const tlog_node *n = tlog_frame_root(f); n; n = tlog_node_next_(n, true)) {
        uint32_t i = (uint32_t)(n - f->nodes);
        map[i] = n->parent ? row_for(m, map[n->parent - f->nodes], n, n->kind) : 0;
        if (map[i] == NONE)
            return false;
        add_row(&m->tree.rows[map[i]], n);
        if (m->input_of)
            count_input(m, map[i], input, n->total_ns);
    }
    if (m->devs)
        take_devs(m, f, map);
    return true;
}

/* The merged frame's device rows point at their extras. */
static int finish_devs(merger *m)
{
    tlog_frame *o = m->out;
    const uint32_t *num = m->tree.renumber;
    size_t n = 0;
    for (size_t r = 0; r < m->tree.nrows; r++)
        n += m->devs[r].device != NULL;
    int rc = tlog_frame_alloc_devs_(o, n);
    if (rc != TLOG_OK)
        return rc;
    n = 0;
    for (size_t r = 0; r < m->tree.nrows; r++) {
        const merged_dev *d = &m->devs[r];
        if (!d->device)
            continue;
        o->node_devs[n] = (tlog_node_dev){d->launcher == NONE ? NULL : &o->nodes[num[d->launcher]],
                                          d->launch_site, d->device, d->queue};
        o->nodes[num[r]].dev = &o->node_devs[n++];
    }
    return TLOG_OK;
}

/* Room for every row and name of the inputs. */
static size_t sizes(const tlog_frame *const *frames, size_t n, size_t *rows, size_t *bytes,
                    size_t *widest, bool *devs)
{
    *rows = *bytes = *widest = 0;
    *devs = false;
    for (size_t i = 0; i < n; i++) {
        if (!frames[i] || !frames[i]->nnodes)
            return i + 1;
        *rows += frames[i]->nnodes;
        if (frames[i]->nnodes > *widest)
            *widest = frames[i]->nnodes;
        for (size_t k = 0; k < frames[i]->nnodes; k++) {
            const tlog_node *x = &frames[i]->nodes[k];
            *bytes += strlen(x->name) + strlen(x->thread_name ? x->thread_name : "") + 2;
            if (x->dev) {
                *bytes += strlen(x->dev->device ? x->dev->device : "") + 1;
                *devs = true;
            }
        }
    }
    return 0;
}

static tlog_frame *new_frame(size_t bytes)
{
    tlog_frame *o = tlog_frame_alloc_(NULL);
    if (!o)
        return NULL;
    atomic_store(&o->resolved, true);
    o->strings = tlog_malloc_(bytes + 64);
    if (!o->strings) {
        tlog_frame_release(o);
        return NULL;
    }
    return o;
}

/* One root for all: the first frame's, under its title. */
static bool make_root(merger *m, const tlog_frame *first)
{
    return row_for(m, NONE, tlog_frame_root(first), TLOG_KIND_CONTROL) == 0;
}

static int merge_all(merger *m, const tlog_frame *const *frames, size_t n, uint32_t *map)
{
    if (!make_root(m, frames[0]))
        return TLOG_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!merge_frame(m, frames[i], (uint32_t)i, map))
            return TLOG_ENOMEM;
    tlog_tree_finish how = {TLOG_TREE_AS_MADE, false, 0, 0};
    int rc = tlog_tree_finish_(&m->tree, m->out, &how);
    return rc == TLOG_OK && m->devs ? finish_devs(m) : rc;
}

static void take_frame_fields(tlog_frame *o, const tlog_frame *const *frames, size_t n)
{
    o->duration_ns = o->nodes[0].total_ns;
    o->thread = frames[0]->thread;
    memcpy(o->thread_name, frames[0]->thread_name, sizeof o->thread_name);
    o->start_ns = frames[0]->start_ns;
    o->rank = frames[0]->rank;
    o->wall0_ns = frames[0]->wall0_ns;
    for (size_t i = 0; i < n; i++) {
        o->dropped = tlog_sat_add_(o->dropped, frames[i]->dropped);
        o->repaired = tlog_sat_add_(o->repaired, frames[i]->repaired);
        o->device_unresolved = tlog_sat_add_(o->device_unresolved, frames[i]->device_unresolved);
    }
}

static int merge_frames(const tlog_frame *const *frames, size_t n, bool spread,
                        tlog_frame **out)
{
    if (out)
        *out = NULL;
    if (!out || !frames || !n || n > UINT32_MAX - 1)
        return TLOG_EINVAL;
    size_t rows, bytes, widest;
    bool devs;
    if (sizes(frames, n, &rows, &bytes, &widest, &devs))
        return TLOG_EINVAL;
    tlog_frame *o = new_frame(bytes);
    merger m = {.out = o, .arena = o ? o->strings : NULL};
    uint32_t *map = tlog_malloc_(widest * sizeof *map);
    if (devs)
        m.devs = tlog_calloc_(rows, sizeof *m.devs);
    if (spread) {
        m.ranks = tlog_calloc_(rows, sizeof *m.ranks);
        m.input_total = tlog_malloc_(rows * sizeof *m.input_total);
        m.input_of = tlog_calloc_(rows, sizeof *m.input_of);
    }
    int rc = o && map && (!devs || m.devs) &&
                     (!spread || (m.ranks && m.input_total && m.input_of))
                 ? TLOG_OK
                 : TLOG_ENOMEM;
    if (rc == TLOG_OK)
        rc = merge_all(&m, frames, n, map);
    if (rc == TLOG_OK && spread) {
        o->node_ranks = tlog_calloc_(o->nnodes, sizeof *o->node_ranks);
        rc = o->node_ranks ? TLOG_OK : TLOG_ENOMEM;
    }
    if (rc == TLOG_OK) {
        take_frame_fields(o, frames, n);
        if (spread)
            finish_spread(&m, (uint32_t)n);
    }
    tlog_tree_free_(&m.tree);
    free(m.devs);
    free(m.ranks);
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

/* The interned copy of *site (NULL stays NULL); false when memory ran out. */
static bool intern(const tlog_site **site)
{
    const tlog_site *s = *site;
    if (!s)
        return true;
    const tlog_site *kept = tlog_site_intern(s->name ? s->name : "", s->file, s->function,
                                             s->line, s->level);
    if (!kept)
        return false;
    *site = kept;
    return true;
}

int tlog_frame_intern_sites_(tlog_frame *f)
{
    if (!f)
        return TLOG_EINVAL;
    for (size_t i = 0; i < f->nnodes; i++)
        if (!intern(&f->nodes[i].site))
            return TLOG_ENOMEM;
    for (size_t i = 0; i < f->nnode_devs; i++)   /* the launching scopes' sites */
        if (!intern(&f->node_devs[i].launch_site))
            return TLOG_ENOMEM;
    return TLOG_OK;
}
