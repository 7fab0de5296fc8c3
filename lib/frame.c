/* Completed frames: the queue (bounded per thread), references, reading by
 * thread, and the tree-walk API. */
#include <stdlib.h>

#include "clock.h"
#include "fork.h"
#include "frame.h"
#include "log.h"
#include "record.h"
#include "spares.h"
#include "stats.h"
#include "tree.h"
#include "upcalls.h"

/* Caller holds log->lock. */
static void queue_unlink_locked(tlog_log *log, tlog_frame *f)
{
    tlog_assert_held_(&log->lock);
    if (f->older)
        f->older->newer = f->newer;
    else
        log->queue.oldest = f->newer;
    if (f->newer)
        f->newer->older = f->older;
    else
        log->queue.newest = f->older;
    f->older = f->newer = NULL;
    log->queue.len--;
}

/* The oldest frame of `thread` and how many it has. Caller holds log->lock. */
static tlog_frame *oldest_of_locked(tlog_log *log, uint32_t thread, size_t *count)
{
    tlog_assert_held_(&log->lock);
    tlog_frame *first = NULL;
    *count = 0;
    for (tlog_frame *f = log->queue.oldest; f; f = f->newer)
        if (f->thread == thread && (*count)++ == 0)
            first = f;
    return first;
}

/* Whether `thread` still records in the log. Caller holds log->lock. */
static bool thread_live_locked(tlog_log *log, uint32_t thread)
{
    tlog_assert_held_(&log->lock);
    return tlog_thread_find_locked_(log, thread) != NULL;
}

/* The oldest frame of a thread that has exited, or else the oldest frame.
 * Caller holds log->lock. */
static tlog_frame *first_to_go_locked(tlog_log *log)
{
    tlog_assert_held_(&log->lock);
    for (tlog_frame *f = log->queue.oldest; f; f = f->newer)
        if (!thread_live_locked(log, f->thread))
            return f;
    return log->queue.oldest;
}

/* Frames at most: max_frames for each thread recording in the log. */
static size_t queue_cap(tlog_log *log)
{
    size_t live = 0;
    for (const tlog_thread *t = log->threads.list; t; t = t->next_in_log)
        live++;
    return log->cfg.max_frames * (live ? live : 1);
}

/* Takes `f` out, unread: counted, and put on the caller's list to release.
 * Caller holds log->lock. */
static void evict_locked(tlog_log *log, tlog_frame *f, tlog_frame **out)
{
    tlog_assert_held_(&log->lock);
    queue_unlink_locked(log, f);
    if (!atomic_load_explicit(&f->read, memory_order_relaxed))
        TLOG_COUNT(log, frames_dropped);   /* pushed out unread */
    /* No reader holds it (readers take references under this lock) and no
     * stream writer: device rows still on their way are late. With
     * statistics on, the rows done by now are read before it is counted
     * (record.c), which stops them. */
    if (atomic_load_explicit(&f->refs, memory_order_acquire) ==
            1 + (int)atomic_load_explicit(&f->outstanding, memory_order_acquire) &&
        !atomic_load_explicit(&log->stream, memory_order_acquire) && !tlog_stats_on_(log))
        tlog_frame_stop_rows_(f);
    f->older = *out;
    *out = f;
}

tlog_frame *tlog_queue_push_locked_(tlog_log *log, tlog_frame *frame)
{
    tlog_assert_held_(&log->lock);
    tlog_frame *evicted = NULL;
    size_t mine;
    tlog_frame *first = oldest_of_locked(log, frame->thread, &mine);
    frame->serial = ++log->queue.next_serial;
    TLOG_COUNT(log, frames_completed);
    if (mine >= log->cfg.max_frames)
        evict_locked(log, first, &evicted);
    /* Threads that exited keep their frames only while there is room. */
    size_t cap = queue_cap(log);
    while (log->queue.len && log->queue.len + 1 > cap)
        evict_locked(log, first_to_go_locked(log), &evicted);
    frame->older = log->queue.newest;
    frame->newer = NULL;
    if (log->queue.newest)
        log->queue.newest->newer = frame;
    else
        log->queue.oldest = frame;
    log->queue.newest = frame;
    log->queue.len++;
    return evicted;
}

static void frame_free(tlog_frame *f)
{
    tlog_frame_free_raw_(f);
    tlog_spares_give_(f);
    free(f->nodes);
    free(f->insts);
    free(f->worker_names);   /* and worker_threads */
    free(f->node_devs);
    free(f->inst_devs);
    free(f->node_ranks);
    free(f->strings);
    pthread_mutex_destroy(&f->resolve_lock);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

/* A frame of a log inherited across fork() is left as it is: freeing it
 * may take its log's locks. */
void tlog_frame_release(tlog_frame *frame)
{
    if (frame && !tlog_frame_inherited_(frame) &&
        atomic_fetch_sub(&frame->refs, 1) == 1)
        frame_free(frame);
}

void tlog_frames_clear_(tlog_log *log)
{
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    tlog_frame *f = log->queue.oldest;
    log->queue.oldest = log->queue.newest = NULL;
    log->queue.len = 0;
    tlog_unlock_(&log->lock);
    while (f) {
        tlog_frame *next = f->newer;
        f->older = f->newer = NULL;
        tlog_frame_release(f);
        f = next;
    }
}

/* Frames are resolved by their first reader; after that they never change,
 * so readers need no lock. A frame that cannot be resolved for lack of
 * memory keeps its records for the next reader, unless it was taken out of
 * the queue, in which case it is dropped and counted. */
int tlog_frame_resolve_once_(tlog_frame *f, int64_t wait_until)
{
    int rc = TLOG_OK;
    bool now = false;
    if (!atomic_load_explicit(&f->resolved, memory_order_acquire)) {
        if (tlog_frame_inherited_(f))
            return TLOG_EINVAL;   /* its records may be half-written */
        if (wait_until != TLOG_NO_WAIT && !tlog_frame_ready_(f))
            tlog_device_settle_(f, wait_until, true);
        tlog_lock_(&f->resolve_lock, TLOG_LOCK_FRAME_RESOLVE);
        if (!atomic_load_explicit(&f->resolved, memory_order_relaxed)) {
            rc = tlog_frame_resolve_locked_(f);
            now = rc == TLOG_OK;
            if (now)
                atomic_store_explicit(&f->resolved, true, memory_order_release);
        }
        tlog_unlock_(&f->resolve_lock);
    }
    if (now)   /* each frame joins the log's statistics once, as it is resolved */
        tlog_stats_feed_(f);
    return rc;
}

static tlog_frame *resolved_or_null(tlog_frame *f, bool taken, bool wait, int *why)
{
    if (!f)
        return NULL;
    /* A deadline only for a frame that may wait: reading the clock for it
     * cost every frame taken about 20 ns. */
    bool may_wait = wait && !tlog_frame_ready_(f);
    int rc = tlog_frame_resolve_once_(
        f, may_wait ? tlog_deadline_after_(f->log->cfg.sync_timeout_ns) : TLOG_NO_WAIT);
    *why = rc;
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

/* The thread a selector names: TLOG_THREAD_SELF becomes the caller's id
 * (0 if it never recorded in the log: no frame matches). */
static uint32_t thread_selected(tlog_log *log, uint32_t thread, bool *any)
{
    *any = thread == TLOG_THREAD_ANY;
    if (thread != TLOG_THREAD_SELF)
        return thread;
    tlog_thread *t = tlog_thread_peek_(log);
    return t ? t->id : UINT32_MAX;
}

static bool frame_of(const tlog_frame *f, uint32_t thread, bool any)
{
    return any || f->thread == thread;
}

enum take { TAKE_NEWEST, TAKE_OLDEST, TAKE_READY };

/* The newest frame with a new reference, or the oldest taken out of the
 * queue with the queue's reference (only if ready, for TAKE_READY); NULL
 * with the reason in *why: TLOG_ENOFRAME when there is none, TLOG_ENOMEM
 * when it (or the default log) could not be had, TLOG_EINVAL for a log
 * inherited across fork(). */
static tlog_frame *take_from_queue(tlog_log *log, uint32_t thread, enum take how, int *why)
{
    *why = tlog_take_log_(&log);
    if (*why != TLOG_OK)
        return NULL;
    *why = TLOG_ENOFRAME;
    bool any;
    thread = thread_selected(log, thread, &any);
    if (how == TAKE_READY)
        tlog_devices_poll_(log);
    tlog_frame *f = NULL;
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    if (how == TAKE_NEWEST) {
        for (f = log->queue.newest; f && !frame_of(f, thread, any); f = f->older)
            ;
        if (f) {
            atomic_fetch_add(&f->refs, 1);
            atomic_store_explicit(&f->read, true, memory_order_relaxed);
        }
    } else {
        for (f = log->queue.oldest; f && !frame_of(f, thread, any); f = f->newer)
            ;
        if (f && how == TAKE_READY && !tlog_frame_ready_(f))
            f = NULL;
        if (f)
            queue_unlink_locked(log, f);
    }
    tlog_unlock_(&log->lock);
    return resolved_or_null(f, how != TAKE_NEWEST, how != TAKE_READY, why);
}

tlog_frame *tlog_frame_latest_of(tlog_log *log, uint32_t thread)
{
    int why;
    return take_from_queue(log, thread, TAKE_NEWEST, &why);
}

tlog_frame *tlog_frame_pop_of(tlog_log *log, uint32_t thread)
{
    int why;
    return take_from_queue(log, thread, TAKE_OLDEST, &why);
}

tlog_frame *tlog_frame_pop_ready_of(tlog_log *log, uint32_t thread)
{
    int why;
    return take_from_queue(log, thread, TAKE_READY, &why);
}

tlog_frame *tlog_frame_latest(tlog_log *log)
{
    return tlog_frame_latest_of(log, TLOG_THREAD_ANY);
}

tlog_frame *tlog_frame_pop(tlog_log *log)
{
    return tlog_frame_pop_of(log, TLOG_THREAD_ANY);
}

tlog_frame *tlog_frame_pop_ready(tlog_log *log)
{
    return tlog_frame_pop_ready_of(log, TLOG_THREAD_ANY);
}

tlog_frame *tlog_frame_for_dump_(tlog_log *log, int *why)
{
    return take_from_queue(log, TLOG_THREAD_SELF, TAKE_NEWEST, why);
}

int tlog_frame_ready_of(tlog_log *log, uint32_t thread)
{
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    bool any;
    thread = thread_selected(log, thread, &any);
    tlog_devices_poll_(log);
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    tlog_frame *f = log->queue.oldest;
    while (f && !frame_of(f, thread, any))
        f = f->newer;
    rc = f ? tlog_frame_ready_(f) : TLOG_ENOFRAME;
    tlog_unlock_(&log->lock);
    return rc;
}

int tlog_frame_ready(tlog_log *log)
{
    return tlog_frame_ready_of(log, TLOG_THREAD_ANY);
}

size_t tlog_frame_count_of(tlog_log *log, uint32_t thread)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return 0;
    bool any;
    thread = thread_selected(log, thread, &any);
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    size_t n = 0;
    if (any)
        n = log->queue.len;
    else
        oldest_of_locked(log, thread, &n);
    tlog_unlock_(&log->lock);
    return n;
}

size_t tlog_frame_count(tlog_log *log)
{
    return tlog_frame_count_of(log, TLOG_THREAD_ANY);
}

uint32_t tlog_thread_id(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    tlog_thread *t = log ? tlog_thread_peek_(log) : NULL;
    return t ? t->id : 0;
}

/* Items an array holds room for: its capacity where known (an array kept
 * from an earlier frame may be larger than this frame needs). */
static size_t held(size_t used, size_t cap)
{
    return cap > used ? cap : used;
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
        .tree_bytes = sizeof *f + held(f->nnodes, f->capnodes) * sizeof *f->nodes +
                      held(f->ninsts, f->capinsts) * sizeof *f->insts +
                      (f->worker_names ? f->nworker_names * TLOG_NAME_MAX : 0) +
                      (f->worker_threads ? f->nworker_names * sizeof *f->worker_threads : 0) +
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
        .percent_of_parent = tlog_node_percent_(n),
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
    for (int rc = 0; n; n = tlog_node_next_(n, rc != TLOG_WALK_SKIP_CHILDREN)) {
        tlog_node_get_info(n, &info);
        rc = visit(user, n, &info);
        if (rc && rc != TLOG_WALK_SKIP_CHILDREN)
            return rc;
    }
    return TLOG_OK;
}

/* Device instances are few and sorted: a binary search finds one. */
static const tlog_inst_dev *device_instance(const tlog_frame *f, size_t index)
{
    size_t lo = 0, hi = f->device_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->inst_devs[mid].inst < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->device_rows && f->inst_devs[lo].inst == index ? &f->inst_devs[lo] : NULL;
}

int tlog_frame_get_instance(const tlog_frame *f, size_t index, tlog_instance *out)
{
    if (!f || index >= f->ninsts)
        return TLOG_EINVAL;
    const tlog_inst *in = &f->insts[index];
    const tlog_inst_dev *d = device_instance(f, index);
    tlog_instance inst = {
        .size = sizeof inst,
        .node = &f->nodes[in->node],
        .thread = in->thread,
        .start_ns = in->start_ns,
        .duration_ns = in->duration_ns,
        .launcher = d && d->launcher != UINT32_MAX ? &f->nodes[d->launcher] : NULL,
        .device = d ? d->device : NULL,
        .queue = d ? d->queue : 0,
    };
    return tlog_copy_sized_(out, &inst, sizeof inst);
}
