/*
 * A frame in progress is the one object that everything belonging to it is
 * delivered to: its thread makes it when the root scope begins, workers that
 * adopt its tokens hand their records to it, device scopes launched in it
 * hold a reference until their interval is delivered, and sync scopes note
 * what they waited on. It is found by a token's (thread, frame id), under
 * the log's lock; deliveries take only the frame's own lock, the innermost
 * of all.
 *
 * Nothing delivered here says where it shows: placement is decided once,
 * when the frame is resolved (resolve.c), from recorded times alone.
 */
#include <stdlib.h>

#include "alloc.h"
#include "fork.h"
#include "frame.h"
#include "log.h"
#include "record.h"
#include "util.h"

tlog_frame *tlog_frame_alloc_(tlog_log *log)
{
    tlog_frame *f = tlog_calloc_(1, sizeof *f);
    if (!f)
        return NULL;
    f->log = log;
    f->fork_generation = log ? log->fork_generation : tlog_fork_generation_();
    atomic_init(&f->refs, 1);
    atomic_init(&f->resolved, false);
    atomic_init(&f->completed, false);
    atomic_init(&f->read, false);
    atomic_init(&f->outstanding, 0);
    pthread_mutex_init(&f->resolve_lock, NULL);
    pthread_mutex_init(&f->lock, NULL);
    return f;
}

/* A frame of `t`, taking work and rows, with the thread's reference. */
static tlog_frame *frame_for_thread(tlog_log *log, const tlog_thread *t)
{
    tlog_frame *f = tlog_frame_alloc_(log);
    if (!f)
        return NULL;
    f->rank = log->rank;
    f->wall0_ns = log->wall0_ns;
    f->thread = t->id;
    f->frame_id = t->frame_id;
    f->taking_work = f->taking_rows = true;
    return f;
}

void tlog_frame_open_(tlog_log *log, tlog_thread *t)
{
    tlog_frame *f = frame_for_thread(log, t);
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    t->frame = f;
    tlog_unlock_(&log->lock);
    if (!f) {
        TLOG_COUNT(log, alloc_failures);
        tlog_report_(log, t, TLOG_ENOMEM, NULL,
                     "out of memory at a frame's start: work handed to it and its device "
                     "scopes are dropped and counted; its own scopes are kept");
    }
}

tlog_frame *tlog_frame_end_(tlog_log *log, tlog_thread *t)
{
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    tlog_frame *f = t->frame;
    t->frame = NULL;
    tlog_unlock_(&log->lock);
    if (!f)
        f = frame_for_thread(log, t);   /* a second try, for the records */
    if (!f)
        return NULL;
    tlog_lock_(&f->lock, TLOG_LOCK_FRAME);
    f->taking_work = false;
    tlog_unlock_(&f->lock);
    atomic_store_explicit(&f->completed, true, memory_order_release);
    return f;
}

tlog_frame *tlog_frame_find_(tlog_log *log, tlog_thread *t, const tlog_token *tok)
{
    tlog_frame *f = NULL;
    if (tok->thread == t->id && !t->adopt.active) {
        /* The calling thread's own frame: only it changes t->frame. */
        f = t->frame && t->frame->frame_id == tok->frame ? t->frame : NULL;
        if (f)
            atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
        return f;
    }
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    tlog_thread *owner = tlog_thread_find_locked_(log, tok->thread);
    if (owner && owner->frame && owner->frame->frame_id == tok->frame) {
        f = owner->frame;
        atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
    }
    tlog_unlock_(&log->lock);
    return f;
}

int tlog_frame_attach_(tlog_frame *f, tlog_attachment *a, size_t need, uint64_t scopes,
                       bool *first_drop)
{
    int rc = TLOG_ELATE;
    *first_drop = false;
    tlog_lock_(&f->lock, TLOG_LOCK_FRAME);
    if (f->taking_work && f->attached_recs + need <= f->log->budget_recs) {
        a->next = f->attachments;
        f->attachments = a;
        f->attached_recs += need;
        rc = TLOG_OK;
    } else if (f->taking_work) {
        *first_drop = f->attached_dropped == 0;
        f->attached_dropped += scopes + a->dropped;
        rc = TLOG_EFULL;
    }
    tlog_unlock_(&f->lock);
    return rc;
}

int tlog_frame_add_row_(tlog_frame *f, const tlog_drow *row)
{
    int rc = TLOG_ELATE;
    tlog_lock_(&f->lock, TLOG_LOCK_FRAME);
    if (f->taking_rows && TLOG_GROW(f->drows, f->capdrows, f->ndrows + 1)) {
        f->drows[f->ndrows++] = *row;
        rc = TLOG_OK;
    } else if (f->taking_rows) {
        f->rows_lost++;
        rc = TLOG_ENOMEM;
    }
    tlog_unlock_(&f->lock);
    return rc;
}

uint32_t tlog_frame_add_sync_(tlog_frame *f, const tlog_sync_bind *bind)
{
    uint32_t tag = 0;
    tlog_lock_(&f->lock, TLOG_LOCK_FRAME);
    /* Once the root ended, the frame may be read: its syncs are fixed. */
    if (f->taking_work && f->nsyncs < UINT32_MAX / 2 &&
        TLOG_GROW(f->syncs, f->capsyncs, f->nsyncs + 1)) {
        f->syncs[f->nsyncs] = *bind;
        f->syncs[f->nsyncs].rows_seen = f->ndrows;
        tag = (uint32_t)++f->nsyncs;
    }
    tlog_unlock_(&f->lock);
    return tag;
}

bool tlog_frame_reserve_(tlog_frame *f, bool own)
{
    if (own) {   /* only this thread ends its frame: it is in progress */
        atomic_fetch_add_explicit(&f->outstanding, 1, memory_order_relaxed);
        return true;
    }
    tlog_lock_(&f->lock, TLOG_LOCK_FRAME);
    bool taken = f->taking_work;
    if (taken)
        atomic_fetch_add_explicit(&f->outstanding, 1, memory_order_relaxed);
    tlog_unlock_(&f->lock);
    return taken;
}

void tlog_frame_mark_end_(tlog_frame *f)
{
    tlog_lock_(&f->lock, TLOG_LOCK_FRAME);
    f->rows_at_end = f->ndrows;
    tlog_unlock_(&f->lock);
}

void tlog_frame_stop_rows_(tlog_frame *f)
{
    tlog_lock_(&f->lock, TLOG_LOCK_FRAME);
    if (f->taking_rows)
        f->dropped += f->rows_lost;   /* device intervals that found no memory */
    f->taking_rows = false;
    tlog_unlock_(&f->lock);
}

bool tlog_frame_ready_(const tlog_frame *f)
{
    return atomic_load_explicit(&f->completed, memory_order_acquire) &&
           atomic_load_explicit(&((tlog_frame *)f)->outstanding, memory_order_acquire) == 0;
}
