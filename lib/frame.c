/* Completed frames: the bounded queue, references, and the tree-walk API. */
#include <stdlib.h>

#include "internal.h"

tlog_frame *tlog_queue_push_locked_(tlog_log *log, tlog_frame *frame)
{
    size_t cap = log->cfg.max_frames;
    tlog_frame *evicted = NULL;
    frame->serial = ++log->next_serial;
    TLOG_COUNT(log, frames_completed);
    if (log->queue_len == cap) {
        evicted = log->queue[log->queue_head];
        log->queue_head = (log->queue_head + 1) % cap;
        log->queue_len--;
        TLOG_COUNT(log, frames_dropped);
    }
    log->queue[(log->queue_head + log->queue_len) % cap] = frame;
    log->queue_len++;
    return evicted;
}

static void frame_free(tlog_frame *f)
{
    tlog_frame_free_raw_(f);
    tlog_device_frame_close_(f->log, f->fdev);
    free(f->nodes);
    free(f->insts);
    free(f->worker_names);
    free(f->node_devs);
    free(f->inst_devs);
    free(f->node_ranks);
    free(f->strings);
    pthread_mutex_destroy(&f->resolve_lock);
    free(f);
}

void tlog_frame_release(tlog_frame *frame)
{
    if (frame && atomic_fetch_sub(&frame->refs, 1) == 1)
        frame_free(frame);
}

void tlog_frames_clear_(tlog_log *log)
{
    pthread_mutex_lock(&log->lock);
    size_t n = log->queue_len, head = log->queue_head, cap = log->cfg.max_frames;
    log->queue_len = 0;
    pthread_mutex_unlock(&log->lock);
    for (size_t i = 0; i < n; i++)
        tlog_frame_release(log->queue[(head + i) % cap]);
}

/* Frames are resolved by their first reader; after that they never change,
 * so readers need no lock. A frame that cannot be resolved for lack of
 * memory keeps its records for the next reader, unless it was taken out of
 * the queue, in which case it is dropped and counted. */
int tlog_frame_resolve_once_(tlog_frame *f, const tlog_site *why)
{
    int rc = TLOG_OK;
    if (!atomic_load_explicit(&f->resolved, memory_order_acquire)) {
        if (why)
            tlog_device_settle_(f, why);
        pthread_mutex_lock(&f->resolve_lock);
        if (!atomic_load_explicit(&f->resolved, memory_order_relaxed)) {
            rc = tlog_frame_resolve_(f);
            if (rc == TLOG_OK)
                atomic_store_explicit(&f->resolved, true, memory_order_release);
        }
        pthread_mutex_unlock(&f->resolve_lock);
    }
    return rc;
}

static tlog_frame *resolved_or_null(tlog_frame *f, bool taken, const tlog_site *why)
{
    if (!f)
        return NULL;
    int rc = tlog_frame_resolve_once_(f, why);
    if (rc == TLOG_OK)
        return f;
    if (taken)
        TLOG_COUNT(f->log, frames_dropped);
    tlog_report_(f->log, NULL, rc, NULL, "cannot resolve frame %llu: %s; %s",
                 (unsigned long long)f->serial, tlog_strerror(rc),
                 taken ? "it is dropped" : "a later read will try again");
    tlog_frame_release(f);
    return NULL;
}

#define FORCED_SITE(var, caller)                                             \
    static const tlog_site var = {"Forced sync \"" caller "\"", __FILE__, caller,     \
                                  __LINE__, TLOG_LEVEL_COARSE}
FORCED_SITE(latest_site, "tlog_frame_latest");
FORCED_SITE(pop_site, "tlog_frame_pop");
FORCED_SITE(dump_site, "tlog_dump");

enum take { TAKE_NEWEST, TAKE_OLDEST, TAKE_READY };

/* The newest frame with a new reference, or the oldest taken out of the
 * queue with the queue's reference (only if ready, for TAKE_READY). */
static tlog_frame *take_from_queue(tlog_log *log, enum take how, const tlog_site *why)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return NULL;
    if (how == TAKE_READY)
        tlog_devices_poll_(log);
    tlog_frame *f = NULL;
    pthread_mutex_lock(&log->lock);
    if (log->queue_len && how == TAKE_NEWEST) {
        f = log->queue[(log->queue_head + log->queue_len - 1) % log->cfg.max_frames];
        atomic_fetch_add(&f->refs, 1);
    } else if (log->queue_len && (how == TAKE_OLDEST ||
                                  tlog_device_frame_ready_(log->queue[log->queue_head]))) {
        f = log->queue[log->queue_head];
        log->queue_head = (log->queue_head + 1) % log->cfg.max_frames;
        log->queue_len--;
    }
    pthread_mutex_unlock(&log->lock);
    return resolved_or_null(f, how != TAKE_NEWEST, how == TAKE_READY ? NULL : why);
}

tlog_frame *tlog_frame_latest(tlog_log *log)
{
    return take_from_queue(log, TAKE_NEWEST, &latest_site);
}

tlog_frame *tlog_frame_pop(tlog_log *log)
{
    return take_from_queue(log, TAKE_OLDEST, &pop_site);
}

tlog_frame *tlog_frame_pop_ready(tlog_log *log)
{
    return take_from_queue(log, TAKE_READY, NULL);
}

/* The newest frame for tlog_dump, whose forced sync is titled after it. */
tlog_frame *tlog_frame_for_dump_(tlog_log *log)
{
    return take_from_queue(log, TAKE_NEWEST, &dump_site);
}

int tlog_frame_ready(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return TLOG_ENOMEM;
    tlog_devices_poll_(log);
    pthread_mutex_lock(&log->lock);
    int rc = log->queue_len ? tlog_device_frame_ready_(log->queue[log->queue_head])
                            : TLOG_ENOFRAME;
    pthread_mutex_unlock(&log->lock);
    return rc;
}

size_t tlog_frame_count(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return 0;
    pthread_mutex_lock(&log->lock);
    size_t n = log->queue_len;
    pthread_mutex_unlock(&log->lock);
    return n;
}

int tlog_frame_get_info(const tlog_frame *f, tlog_frame_info *out)
{
    if (!f)
        return TLOG_EINVAL;
    tlog_frame_info info = {
        .size = sizeof info,
        .serial = f->serial,
        .thread = f->thread,
        .thread_name = f->thread_name,
        .start_ns = f->start_ns,
        .duration_ns = f->duration_ns,
        .nodes = f->nnodes,
        .instances = f->ninsts,
        .scopes_dropped = f->dropped,
        .scopes_repaired = f->repaired,
        .tree_bytes = sizeof *f + f->nnodes * sizeof *f->nodes +
                      f->ninsts * sizeof *f->insts +
                      (f->worker_names ? f->nworker_names * TLOG_NAME_MAX : 0) +
                      f->device_rows * sizeof *f->inst_devs +
                      f->nnode_devs * sizeof *f->node_devs +
                      (f->node_ranks ? f->nnodes * sizeof *f->node_ranks : 0),
        .device_intervals = f->device_rows,
        .device_unresolved = f->device_unresolved,
        .rank = f->rank,
        .reduced_ranks = f->reduced_ranks,
        .partial_rows = f->partial_rows,
    };
    return tlog_copy_sized_(out, &info, sizeof info);
}

const tlog_node *tlog_frame_root(const tlog_frame *f)
{
    return f && f->nnodes ? &f->nodes[0] : NULL;
}

const tlog_node *tlog_node_parent(const tlog_node *n)
{
    return n ? n->parent : NULL;
}

const tlog_node *tlog_node_first_child(const tlog_node *n)
{
    return n ? n->first_child : NULL;
}

const tlog_node *tlog_node_next_sibling(const tlog_node *n)
{
    return n ? n->next_sibling : NULL;
}

int tlog_node_get_info(const tlog_node *n, tlog_node_info *out)
{
    if (!n)
        return TLOG_EINVAL;
    tlog_node_info info = {
        .size = sizeof info,
        .name = n->name,
        .kind = (tlog_kind)n->kind,
        .thread = n->thread,
        .thread_name = n->thread_name,
        .depth = n->depth,
        .start_ns = n->start_ns,
        .total_ns = n->total_ns,
        .self_ns = n->self_ns,
        .percent_of_parent = n->percent,
        .count = n->count,
        .min_ns = n->min_ns,
        .max_ns = n->max_ns,
        .site = n->site,
        .file = n->site ? n->site->file : NULL,
        .line = n->site ? n->site->line : 0,
        .site_id = n->site ? tlog_site_id(n->site) : 0,
        .flags = n->flags,
        .launcher = n->dev ? n->dev->launcher : NULL,
        .launch_site = n->dev ? n->dev->launch_site : NULL,
        .device = n->dev ? n->dev->device : NULL,
        .queue = n->dev ? n->dev->queue : 0,
        .ranks = n->ranks ? n->ranks->present : 0,
        .rank_min_ns = n->ranks ? n->ranks->min_ns : 0,
        .rank_max_ns = n->ranks ? n->ranks->max_ns : 0,
        .rank_mean_ns = n->ranks ? n->ranks->mean_ns : 0.0,
        .imbalance = n->ranks && n->ranks->mean_ns > 0
                         ? (double)n->ranks->max_ns / n->ranks->mean_ns : 0.0,
    };
    return tlog_copy_sized_(out, &info, sizeof info);
}

/* Depth-first, parents first, without recursion: trees can be deep. */
int tlog_frame_walk(const tlog_frame *f, tlog_visit_fn visit, void *user)
{
    if (!f || !visit)
        return TLOG_EINVAL;
    const tlog_node *n = tlog_frame_root(f);
    tlog_node_info info = {.size = sizeof info};
    for (; n; n = tlog_node_next_(n, true)) {
        tlog_node_get_info(n, &info);
        int rc = visit(user, n, &info);
        if (rc)
            return rc;
    }
    return TLOG_OK;
}

/* Device instances are few and sorted: a binary search finds a launcher. */
static const tlog_node *launcher_of_instance(const tlog_frame *f, size_t index)
{
    size_t lo = 0, hi = f->device_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->inst_devs[mid].inst < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == f->device_rows || f->inst_devs[lo].inst != index ||
        f->inst_devs[lo].launcher == UINT32_MAX)
        return NULL;
    return &f->nodes[f->inst_devs[lo].launcher];
}

int tlog_frame_get_instance(const tlog_frame *f, size_t index, tlog_instance *out)
{
    if (!f || index >= f->ninsts)
        return TLOG_EINVAL;
    const tlog_inst *in = &f->insts[index];
    tlog_instance inst = {
        .size = sizeof inst,
        .node = &f->nodes[in->node],
        .thread = in->thread,
        .start_ns = in->start_ns,
        .duration_ns = in->duration_ns,
        .launcher = launcher_of_instance(f, index),
    };
    return tlog_copy_sized_(out, &inst, sizeof inst);
}
