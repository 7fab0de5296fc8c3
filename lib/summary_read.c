/* Reading statistics across frames: groups, rows and their figures, walks,
 * a frame's rows in a summary, hitches. Nothing here changes a summary, so
 * readers may run together. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "frame.h"
#include "summary.h"
#include "tree.h"

#define NONE TLOG_ROW_NONE

int tlog_summary_get_info(const tlog_summary *s, tlog_summary_info *out)
{
    if (!s)
        return TLOG_EINVAL;
    tlog_summary_info info = {
        .size = sizeof info,
        .groups = s->ngroups,
        .rows = s->nrows,
        .frames = s->frames,
        .rows_refused = s->rows_refused,
        .hitches_seen = s->hitches_seen,
        .hitches = s->nhitches,
        .bytes = s->bytes,
        .reduced_ranks = s->reduced,
    };
    return tlog_copy_sized_(out, &info, sizeof info);
}

const tlog_stat_row *tlog_summary_root(const tlog_summary *s, size_t group)
{
    return s && group < s->ngroups ? &s->rows[s->groups[group].root] : NULL;
}

const tlog_stat_row *tlog_stat_row_parent(const tlog_stat_row *row)
{
    return row ? tlog_stat_row_at_(row->owner, tlog_row_hot_(row)->parent) : NULL;
}

const tlog_stat_row *tlog_stat_row_first_child(const tlog_stat_row *row)
{
    return row ? tlog_stat_row_at_(row->owner, row->first_child) : NULL;
}

const tlog_stat_row *tlog_stat_row_next_sibling(const tlog_stat_row *row)
{
    return row ? tlog_stat_row_at_(row->owner, row->next_sibling) : NULL;
}

int tlog_stat_row_get_info(const tlog_stat_row *row, tlog_stat_info *out)
{
    if (!row)
        return TLOG_EINVAL;
    const tlog_summary *s = row->owner;
    tlog_summary_settle_(s);
    const tlog_row_hot *h = tlog_row_hot_(row);
    const tlog_group *g = &s->groups[row->group];
    tlog_stat_info info = {
        .size = sizeof info,
        .name = h->name,
        .kind = (tlog_kind)h->kind,
        .depth = row->depth,
        .thread_name = g->thread_name,
        .device = row->device,
        .site_id = row->site_id,
        .flags = h->flags,
        .frames = h->frames,
        .group_frames = s->hot[g->root].frames,
    };
    const tlog_acc total = tlog_row_acc_(row, TLOG_STAT_TOTAL),
                   self = tlog_row_acc_(row, TLOG_STAT_SELF),
                   count = tlog_row_acc_(row, TLOG_STAT_COUNT);
    tlog_stat_value_(&total, h->frames, &info.total_ns);
    tlog_stat_value_(&self, h->frames, &info.self_ns);
    tlog_stat_value_(&count, h->frames, &info.count);
    const tlog_row_ranks *k = tlog_row_ranks_(s, row);
    if (k) {
        info.ranks = k->present;
        info.rank_median_mean_ns = k->median_sum / k->present;
        info.rank_p99_max_ns = k->p99_max;
        info.rank_p99_max_rank = k->p99_max_rank;
    }
    return tlog_copy_sized_(out, &info, sizeof info);
}

int tlog_stat_row_quantile(const tlog_stat_row *row, tlog_stat_of of, double q, uint64_t *out)
{
    if (!row || !out || (unsigned)of > TLOG_STAT_COUNT || !(q >= 0 && q <= 1))
        return TLOG_EINVAL;
    tlog_summary_settle_(row->owner);
    const tlog_acc a = tlog_row_acc_(row, of);
    *out = tlog_sketch_quantile_(&a, tlog_row_hot_(row)->frames, q);
    return TLOG_OK;
}

/* The row after r in pre-order within its group, skipping r's children
 * unless `into`. */
static uint32_t row_next(const tlog_summary *s, uint32_t r, bool into)
{
    if (into && s->rows[r].first_child != NONE)
        return s->rows[r].first_child;
    while (r != NONE && s->rows[r].next_sibling == NONE)
        r = s->hot[r].parent;
    return r == NONE ? NONE : s->rows[r].next_sibling;
}

int tlog_summary_walk(const tlog_summary *s, tlog_stat_visit_fn visit, void *user)
{
    if (!s || !visit)
        return TLOG_EINVAL;
    tlog_stat_info info = {.size = sizeof info};
    for (size_t g = 0; g < s->ngroups; g++) {
        int rc = 0;
        for (uint32_t r = s->groups[g].root; r != NONE;
             r = row_next(s, r, rc != TLOG_WALK_SKIP_CHILDREN)) {
            tlog_stat_row_get_info(&s->rows[r], &info);
            rc = visit(user, &s->rows[r], &info);
            if (rc && rc != TLOG_WALK_SKIP_CHILDREN)
                return rc;
        }
    }
    return TLOG_OK;
}

void tlog_summary_map_frame_(const tlog_summary *s, const tlog_frame *f, uint32_t *rows)
{
    uint32_t g = tlog_summary_find_group_(s, f->thread_name, f->nodes[0].name);
    for (const tlog_node *n = &f->nodes[0]; n; n = tlog_node_next_(n, true)) {
        size_t i = (size_t)(n - f->nodes);
        if (!n->parent)
            rows[i] = g == NONE ? NONE : s->groups[g].root;
        else if (rows[n->parent - f->nodes] == NONE)
            rows[i] = NONE;
        else
            rows[i] = tlog_summary_find_row_(s, rows[n->parent - f->nodes], n->kind, n->name);
    }
}

const tlog_stat_row *tlog_summary_find(const tlog_summary *s, const tlog_frame *f,
                                       const tlog_node *node)
{
    if (!s || !f || !node || !f->nnodes || node < f->nodes || node >= f->nodes + f->nnodes)
        return NULL;
    uint32_t g = tlog_summary_find_group_(s, f->thread_name, f->nodes[0].name);
    if (g == NONE)
        return NULL;
    /* The path from the root down to the node, as ancestors at each depth. */
    enum { SHORT = 64 };
    const tlog_node *shallow[SHORT], **path = shallow;
    if (node->depth >= SHORT && !(path = tlog_malloc_(((size_t)node->depth + 1) * sizeof *path)))
        return NULL;
    for (const tlog_node *n = node; n; n = n->parent)
        path[n->depth] = n;
    uint32_t r = s->groups[g].root;
    for (int d = 1; d <= node->depth && r != NONE; d++)
        r = tlog_summary_find_row_(s, r, path[d]->kind, path[d]->name);
    if (path != shallow)
        free(path);
    return tlog_stat_row_at_(s, r);
}

int tlog_frame_walk_stats(const tlog_frame *f, const tlog_summary *s,
                          tlog_frame_stat_visit_fn visit, void *user)
{
    if (!f || !s || !visit || !f->nnodes)
        return TLOG_EINVAL;
    uint32_t *rows = tlog_malloc_(f->nnodes * sizeof *rows);
    if (!rows)
        return TLOG_ENOMEM;
    tlog_summary_map_frame_(s, f, rows);
    tlog_node_info info = {.size = sizeof info};
    tlog_stat_info stats = {.size = sizeof stats};
    int rc = 0;
    for (const tlog_node *n = &f->nodes[0]; n; n = tlog_node_next_(n, rc != TLOG_WALK_SKIP_CHILDREN)) {
        uint32_t r = rows[n - f->nodes];
        tlog_node_get_info(n, &info);
        if (r != NONE)
            tlog_stat_row_get_info(&s->rows[r], &stats);
        rc = visit(user, n, &info, r != NONE ? &stats : NULL);
        if (rc && rc != TLOG_WALK_SKIP_CHILDREN)
            break;
    }
    free(rows);
    return rc == TLOG_WALK_SKIP_CHILDREN ? TLOG_OK : rc;
}

int tlog_summary_hitch(const tlog_summary *s, size_t index, tlog_hitch_info *out)
{
    if (!s || !out || index >= s->nhitches)
        return TLOG_EINVAL;
    const tlog_hitch *h = &s->hitches[(s->hitch_first + index) % s->cfg.max_hitches];
    const tlog_group *g = &s->groups[h->group];
    tlog_hitch_info info = {
        .size = sizeof info,
        .frame = h->frame,
        .thread_name = g->thread_name,
        .root = s->hot[g->root].name,
        .number = h->number,
        .duration_ns = h->duration_ns,
        .reasons = h->reasons,
        .budget_ns = h->budget_ns,
        .quantile_ns = h->quantile_ns,
        .median_ns = h->median_ns,
    };
    return tlog_copy_sized_(out, &info, sizeof info);
}
