/*
 * Reading device intervals: anchors between the device clock and the host's,
 * polling the pending lists without blocking (sync scopes, readiness
 * checks), and the forced sync, the only place that waits. Whoever reads an
 * interval delivers it to the frame it was launched in, with its times on
 * the host timeline; who reads first never changes where it shows.
 * Only the poll-lock holder asks the backend about markers or removes slots
 * from the pending lists; see device.c for the locks.
 */
#include <sched.h>
#include <time.h>

#include "alloc.h"
#include "device_impl.h"
#include "util.h"

#define ANCHOR_TIMEOUT_NS 100000000ull
#define POLL_BATCH 64

/* ------------------------------------------------------------------------ */
/* Host timeline                                                            */
/* ------------------------------------------------------------------------ */

static int64_t ns_to_ticks(tlog_log *log, int64_t ns)
{
    return tlog_round_ns_((double)ns / tlog_ns_per_tick_(log));
}

/* A reached marker's host time: the anchor's host time plus the device time
 * between them. Anchors are renewed every frame, so the device clock's drift
 * against the host's (tens of ppm) stays far below a microsecond. Caller
 * holds the poll lock. */
static int place_locked(tlog_device *d, tlog_marker m, tlog_ticks *out)
{
    tlog_assert_device_held_(d, poll_lock);
    if (!d->cur.valid)
        return TLOG_EDEVICE;
    int64_t ns;
    int rc = d->ops->elapsed_ns(d->impl, d->cur.marker, m, &ns);
    if (rc == TLOG_OK)
        *out = d->cur.host + (tlog_ticks)ns_to_ticks(d->log, ns);
    return rc;
}

static uint64_t frames_completed(tlog_device *d)
{
    return atomic_load_explicit(&d->log->counters.frames_completed, memory_order_relaxed);
}

static void anchor_swap(tlog_device *d)
{
    anchor old = d->cur;
    d->cur = d->fresh;
    d->fresh = old;
    d->fresh.valid = false;
    d->fresh_pending = false;
}

/* The waits of a backend without its own: the spin phase sees a completion
 * a few us away at once; after it, naps keep a long wait off the CPU. */
int tlog_marker_wait_(tlog_device *d, tlog_marker m, uint64_t timeout_ns)
{
    if (d->ops->wait)
        return d->ops->wait(d->impl, m, timeout_ns);
    int64_t start = tlog_mono_ns_();
    for (;;) {
        int rc = d->ops->query(d->impl, m);
        if (rc != TLOG_PENDING)
            return rc;
        uint64_t waited = (uint64_t)(tlog_mono_ns_() - start);
        if (waited >= timeout_ns)
            return TLOG_ETIMEDOUT;
        if (waited < 200000) {
            sched_yield();
        } else {
            struct timespec nap = {0, 20000};
            nanosleep(&nap, NULL);
        }
    }
}

/* The fresh marker, reached between host clock reads t0 and t1, becomes
 * the anchor. */
/* An anchor is placed at the middle of the host reads around it: one taken
 * while the host was held up for long (preempted, or a clock moved under
 * it) is off by half that, so a frame's refresh keeps the anchor it has
 * rather than take such a one. */
#define ANCHOR_WINDOW_MAX_NS 100000

static bool window_too_wide(tlog_device *d, tlog_ticks t0, tlog_ticks t1)
{
    return d->cur.valid &&
           (double)(t1 - t0) * tlog_ns_per_tick_(d->log) > ANCHOR_WINDOW_MAX_NS;
}

static int anchor_take(tlog_device *d, tlog_ticks t0, tlog_ticks t1)
{
    d->fresh.host = t0 + (t1 - t0) / 2;
    d->fresh.valid = true;
    anchor_swap(d);
    d->anchor_frame = frames_completed(d);
    return TLOG_OK;
}

/* An anchor from the device's own clock reading, bracketed by host clock
 * reads: no queue round trip, so it is exact to the reading's cost. */
static int anchor_mark_now(tlog_device *d)
{
    tlog_ticks t0 = tlog_now(d->log);
    int rc = d->ops->mark_now(d->impl, d->fresh.marker);
    tlog_ticks t1 = tlog_now(d->log);
    if (rc == TLOG_OK && window_too_wide(d, t0, t1))
        return TLOG_OK;   /* the next frame tries again */
    return rc == TLOG_OK ? anchor_take(d, t0, t1) : rc;
}

/* Blocking: at registration and in the forced sync, right after the device
 * was busy (a device left idle answers late, which widens the window). */
int tlog_anchor_now_locked_(tlog_device *d, uint64_t timeout_ns)
{
    tlog_assert_device_held_(d, poll_lock);
    if (d->fresh_pending) {
        /* Never re-record a marker that may still be in flight. */
        int rc = tlog_marker_wait_(d, d->fresh.marker, timeout_ns);
        if (rc != TLOG_OK)
            return rc;
        d->fresh_pending = false;
    }
    if (d->ops->mark_now)
        return anchor_mark_now(d);
    tlog_ticks t0 = tlog_now(d->log);
    int rc = d->ops->record_own(d->impl, d->fresh.marker);
    if (rc == TLOG_OK)
        rc = tlog_marker_wait_(d, d->fresh.marker, timeout_ns);
    tlog_ticks t1 = tlog_now(d->log);
    return rc == TLOG_OK ? anchor_take(d, t0, t1) : rc;
}

/* Non-blocking, once per frame: a marker on the backend's idle queue, placed
 * at the time it was submitted; it replaces the anchor once reached. */
static void anchor_refresh(tlog_device *d)
{
    if (d->fresh_pending) {
        int rc = d->ops->query(d->impl, d->fresh.marker);
        DCOUNT(d, queries, 1);
        if (rc == TLOG_OK && !d->fresh_discard)
            anchor_swap(d);
        else if (rc != TLOG_PENDING)
            d->fresh_pending = false;
        return;
    }
    uint64_t frames = frames_completed(d);
    if (d->cur.valid && frames == d->anchor_frame)
        return;
    if (d->ops->mark_now) {
        anchor_mark_now(d);
        return;
    }
    tlog_ticks t0 = tlog_now(d->log);
    int rc = d->ops->record_own(d->impl, d->fresh.marker);
    tlog_ticks t1 = tlog_now(d->log);
    if (rc != TLOG_OK)
        return;
    d->fresh.host = t0 + (t1 - t0) / 2;
    d->fresh.valid = true;
    d->fresh_pending = true;
    /* In flight either way; not used if its window was too wide. */
    d->fresh_discard = window_too_wide(d, t0, t1);
    d->anchor_frame = d->fresh_discard ? d->anchor_frame : frames;
}

/* ------------------------------------------------------------------------ */
/* Resolving                                                                */
/* ------------------------------------------------------------------------ */

enum poll_mode {
    POLL_IDLE,    /* without waiting: what is done is delivered */
    POLL_FORCED,  /* the forced sync: what it waited for and is still not
                   * done is delivered unresolved */
    POLL_FINAL    /* the device goes: what is left is delivered unresolved */
};

typedef struct poll_ctx {
    int mode;
    uint64_t epoch;             /* POLL_FORCED: the slots it waited for */
    size_t unresolved;
    size_t lost;                /* intervals their frame found no memory for */
    /* Errors seen, reported once the poll lock is released (the error
     * callback may call the library). */
    struct {
        size_t count;
        int code;
        const char *device, *site, *what;
    } err;
    /* Intervals for subscribers, told once the poll lock is released. */
    bool want_events;
    tlog_device_event *events;
    size_t nevents, capevents;
} poll_ctx;

enum action { SKIP, STOP, RECYCLE, DELIVER };

typedef struct outcome {
    tlog_slot *slot;
    int action;
    bool unresolved;    /* delivered without a timing */
    bool keep;          /* still in flight: stays listed as a zombie */
    bool retire;        /* markers misbehaved: destroy them */
    int64_t ns;
    tlog_ticks start;
} outcome;

/* A forced sync is waiting on this slot's marker without the poll lock: the
 * slot may be read but must stay listed, its markers untouched. */
static bool pinned(const tlog_device *d, const tlog_slot *s)
{
    uint64_t w = atomic_load_explicit(&d->devs->wait_epoch, memory_order_acquire);
    return w != 0 && s->sync_epoch == w;
}

static void note_error(poll_ctx *c, const tlog_device *d, const tlog_slot *s, int rc,
                       const char *what)
{
    if (c->err.count++ == 0) {
        c->err.code = rc;
        c->err.device = d->name;
        c->err.site = s->site->name;
        c->err.what = what;
    }
}

static poll_ctx poll_start(tlog_log *log, int mode)
{
    return (poll_ctx){.mode = mode, .want_events = tlog_subscribed_device_(log)};
}

/* Keeps a delivered interval for subscribers; if memory runs out, they are
 * not told of it (the frame still shows it). */
static void keep_event(poll_ctx *c, const tlog_drow *row)
{
    if (!TLOG_GROW(c->events, c->capevents, c->nevents + 1))
        return;
    c->events[c->nevents++] = (tlog_device_event){
        .site = row->site, .device = row->device, .queue = row->queue,
        .launch_site = row->launch_site, .start = row->start, .end = row->end,
        .flags = row->unresolved ? TLOG_DEVICE_EVENT_UNRESOLVED : 0u};
}

/* After the poll lock is released: errors go to the error callback and
 * intervals to subscribers, either of which may call the library. */
static void poll_finish(tlog_log *log, poll_ctx *c)
{
    if (c->err.count)
        tlog_report_(log, NULL, TLOG_EDEVICE, NULL,
                     "device %s: %s of \"%s\" failed (%s); %zu interval(s) shown "
                     "unresolved",
                     c->err.device, c->err.what, c->err.site, tlog_strerror(c->err.code),
                     c->err.count);
    if (c->lost)
        tlog_report_(log, NULL, TLOG_ENOMEM, NULL,
                     "%zu device interval(s) lost: no memory to add them to their frame "
                     "(counted in its scopes_dropped)", c->lost);
    tlog_notify_devices_(log, c->events, c->nevents);
    free(c->events);
    c->events = NULL;
    c->nevents = c->capevents = 0;
}

static void timing_of(tlog_device *d, tlog_slot *s, poll_ctx *c, outcome *o)
{
    int rc = d->ops->elapsed_ns(d->impl, s->begin, s->end, &o->ns);
    if (rc == TLOG_OK)
        rc = place_locked(d, s->begin, &o->start);
    if (rc != TLOG_OK) {
        o->unresolved = o->retire = true;
        note_error(c, d, s, rc, "timing");
        return;
    }
    if ((d->flags & TLOG_DEVICE_SUBTRACT_OFFSET) && d->empty_ns > 0)
        o->ns = o->ns > d->empty_ns ? o->ns - d->empty_ns : 0;
}

/* Decides, outside the device lock, what to do with one listed slot. */
static void examine(tlog_device *d, tlog_slot *s, poll_ctx *c, outcome *o)
{
    int st = slot_state(s);
    *o = (outcome){.slot = s, .action = DELIVER};
    if (st == SLOT_DONE) {
        o->action = pinned(d, s) ? SKIP : RECYCLE;
        o->retire = s->retire;
        return;
    }
    int rc = d->ops->query(d->impl, s->probe);
    DCOUNT(d, queries, 1);
    if (st == SLOT_ZOMBIE) {
        o->action = rc == TLOG_PENDING || pinned(d, s) ? SKIP : RECYCLE;
        o->retire = s->retire || (rc != TLOG_OK && rc != TLOG_PENDING);
        return;
    }
    if (rc == TLOG_PENDING) {
        /* The forced sync gives up only on what it waited for; queues run in
         * order, so elsewhere the rest of the queue is later still. */
        bool waited_for = c->mode == POLL_FINAL ||
                          (c->mode == POLL_FORCED && s->sync_epoch == c->epoch);
        if (waited_for)
            o->unresolved = o->keep = true;
        else
            o->action = c->mode == POLL_FORCED ? SKIP : STOP;
        return;
    }
    if (rc != TLOG_OK) {
        o->unresolved = o->retire = true;
        note_error(c, d, s, rc, "the query");
        return;
    }
    if (st == SLOT_FAILED) {
        o->unresolved = true;   /* its end marker was refused */
        return;
    }
    timing_of(d, s, c, o);
}

/* Hands one interval to the frame it was launched in. Caller holds the
 * device lock. */
static void deliver_locked(tlog_device *d, const outcome *o, poll_ctx *c)
{
    tlog_assert_device_held_(d, lock);
    tlog_slot *s = o->slot;
    tlog_drow row = tlog_slot_row_(d, s);
    if (!o->unresolved) {
        row.start = o->start;
        row.end = o->start + (tlog_ticks)ns_to_ticks(d->log, o->ns);
        row.unresolved = false;
    }
    if (c->want_events)
        keep_event(c, &row);
    int rc = tlog_slot_deliver_(s, &row);
    if (rc == TLOG_ENOMEM)
        c->lost++;
    else if (rc != TLOG_OK)
        DCOUNT(d, late, 1);   /* its frame was read or dropped */
    atomic_fetch_sub_explicit(&d->stats.pending, 1, memory_order_relaxed);
    if (o->unresolved) {
        DCOUNT(d, unresolved, 1);
        c->unresolved++;
    } else {
        DCOUNT(d, resolved, 1);
    }
}

/* Caller holds the device lock. */
static void apply_locked(tlog_device *d, const outcome *o, poll_ctx *c)
{
    tlog_assert_device_held_(d, lock);
    tlog_slot *s = o->slot;
    if (o->action == SKIP || o->action == STOP)
        return;
    if (o->action == DELIVER)
        deliver_locked(d, o, c);
    if (o->keep || (o->action == DELIVER && pinned(d, s))) {
        s->retire |= o->retire;   /* for when it is recycled */
        slot_set(s, o->keep ? SLOT_ZOMBIE : SLOT_DONE);
        return;
    }
    tlog_dqueue_remove_(s->queue, s);
    tlog_pool_put_locked_(d, s, o->retire);
}

/* Resolves what is done on one queue, in batches: the list is read under the
 * device lock, the backend is asked outside it. Only the poll-lock holder
 * removes slots, so the resume point stays valid. */
static void poll_queue(tlog_device *d, dqueue *q, poll_ctx *c)
{
    tlog_slot *batch[POLL_BATCH], *from = NULL;
    outcome out[POLL_BATCH];
    for (bool more = true; more;) {
        size_t n = 0;
        tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
        tlog_slot *s = from ? from : q->head;
        for (; s && n < POLL_BATCH; s = s->next)
            batch[n++] = s;
        from = s;
        tlog_unlock_(&d->devs->lock);
        more = from != NULL;
        for (size_t i = 0; i < n; i++) {
            examine(d, batch[i], c, &out[i]);
            if (out[i].action == STOP) {
                n = i;
                more = false;
            }
        }
        tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
        for (size_t i = 0; i < n; i++)
            apply_locked(d, &out[i], c);
        tlog_unlock_(&d->devs->lock);
    }
}

/* Queue i, or NULL past the last. Only the poll-lock holder removes queues;
 * others add them (the array may move as it grows; a queue never does). */
static dqueue *queue_at(tlog_device *d, size_t i)
{
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    dqueue *q = i < d->nqueues ? d->queues[i] : NULL;
    tlog_unlock_(&d->devs->lock);
    return q;
}

/* Caller holds the poll lock. */
static void poll_device_locked(tlog_device *d, poll_ctx *c)
{
    tlog_assert_device_held_(d, poll_lock);
    dqueue *q;
    for (size_t i = 0; (q = queue_at(d, i)) != NULL; i++)
        poll_queue(d, q, c);
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    /* Not while a forced sync waits: it walks the queues by index without
     * the poll lock, and would skip, or read freed, queues pruned under it. */
    if (!atomic_load_explicit(&d->devs->wait_epoch, memory_order_acquire))
        tlog_dqueues_prune_locked_(d);
    tlog_unlock_(&d->devs->lock);
}

/* The next device of the log after `d` (NULL: the first). Devices are added
 * under both locks, so this is safe without the poll lock. */
static tlog_device *next_device(tlog_devices *ds, tlog_device *d)
{
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    d = d ? d->next_device : ds->list;
    tlog_unlock_(&ds->lock);
    return d;
}

/* Delivers what is done on every device; the pool is refilled where it
 * runs low unless the read is on a recording path. */
static void poll_all(tlog_devices *ds, poll_ctx *c, bool refill)
{
    tlog_lock_(&ds->poll_lock, TLOG_LOCK_DEVICE_POLL);
    for (tlog_device *d = ds->list; d; d = d->next_device) {
        anchor_refresh(d);
        poll_device_locked(d, c);
        if (refill)
            tlog_pool_refill_locked_(d);
    }
    tlog_unlock_(&ds->poll_lock);
}

void tlog_devices_poll_(tlog_log *log)
{
    tlog_devices *ds = devices_of(log);
    if (!ds)
        return;
    poll_ctx c = poll_start(log, POLL_IDLE);
    poll_all(ds, &c, true);
    poll_finish(log, &c);
}

void *tlog_devices_poll_deferred_(tlog_log *log)
{
    tlog_devices *ds = devices_of(log);
    poll_ctx *c = ds ? tlog_malloc_(sizeof *c) : NULL;
    if (!c)
        return NULL;   /* unread rows are then placed by their times alone */
    *c = poll_start(log, POLL_IDLE);
    poll_all(ds, c, false);
    return c;
}

void tlog_devices_poll_finish_(tlog_log *log, void *pending)
{
    if (!pending)
        return;
    poll_finish(log, pending);
    free(pending);
}

/* ------------------------------------------------------------------------ */
/* Sync scopes                                                              */
/* ------------------------------------------------------------------------ */

static void sync_end(tlog_log *log, const tlog_sync_bind *bind, const tlog_site *site)
{
    tlog_thread *t = tlog_thread_peek_(log);
    if (!t) {
        tlog_log_end(log, site);   /* reports the unmatched end */
        return;
    }
    /* The scope is the application's wait: it ends before any reading. */
    tlog_ticks now = tlog_read_clock_(t);
    /* What the wait finished is read at once: an interval found complete
     * was complete by the scope's end, even where the device clock's
     * mapping onto the host's is a few microseconds off. Whoever read it
     * first, it was complete by now. */
    tlog_devices_poll_(log);
    const tlog_site *inner = NULL;
    tlog_token tok = tlog_thread_token_(t, log, &inner);
    tlog_frame *f = tok.thread ? tlog_frame_find_(log, t, &tok) : NULL;
    uint32_t tag = f ? tlog_frame_add_sync_(f, bind) : 0;
    tlog_frame_release(f);
    if (f && !tag)
        tlog_report_(log, t, TLOG_ENOMEM, site,
                     "sync scope \"%s\" could not be noted (no memory, or its frame "
                     "ended): it shows no device rows", site->name);
    tlog_thread_end_at_(t, site, now, tag);
}

void tlog_sync_end(tlog_device *dev, const tlog_site *site)
{
    if (!site) {
        tlog_report_null_site_(dev ? dev->log : NULL, "tlog_sync_end(dev, NULL)");
        return;
    }
    tlog_log *log = dev ? dev->log : tlog_default();
    if (!log)
        return;
    tlog_sync_bind bind = {.device_id = dev ? dev->serial : 0};
    sync_end(log, &bind, site);
}

void tlog_sync_end_queue(tlog_device *dev, void *queue, const tlog_site *site)
{
    if (!dev) {
        tlog_sync_end(NULL, site);
        return;
    }
    if (!site) {
        tlog_report_null_site_(dev->log, "tlog_sync_end_queue(dev, queue, NULL)");
        return;
    }
    const void *key = dev->ops->queue_key ? dev->ops->queue_key(dev->impl, queue) : queue;
    tlog_sync_bind bind = {.device_id = dev->serial, .queue_key = key, .queue_bound = true};
    sync_end(dev->log, &bind, site);
}

/* ------------------------------------------------------------------------ */
/* The forced sync                                                          */
/* ------------------------------------------------------------------------ */

/* Takes on every interval pending now of frame `only` (NULL: of every
 * completed frame): the forced sync waits for these, and gives up only on
 * these. While it waits they stay listed (pinned), so that nothing else
 * recycles their markers. */
static uint64_t pin_pending(tlog_devices *ds, const tlog_frame *only)
{
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    uint64_t epoch = ++ds->epoch;
    for (tlog_device *d = ds->list; d; d = d->next_device)
        for (size_t i = 0; i < d->nqueues; i++)
            for (tlog_slot *s = d->queues[i]->head; s; s = s->next) {
                int st = slot_state(s);
                if ((st == SLOT_PENDING || st == SLOT_FAILED) &&
                    (only ? s->frame == only
                          : atomic_load_explicit(&s->frame->completed, memory_order_acquire)))
                    s->sync_epoch = epoch;
            }
    atomic_store_explicit(&ds->wait_epoch, epoch, memory_order_release);
    tlog_unlock_(&ds->lock);
    return epoch;
}

static void unpin(tlog_devices *ds)
{
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    atomic_store_explicit(&ds->wait_epoch, 0, memory_order_release);
    tlog_unlock_(&ds->lock);
}

/* The next pinned slot after `s` (NULL: from the head) still pending, with
 * the marker to wait on. */
static tlog_slot *next_to_wait(tlog_device *d, dqueue *q, tlog_slot *s, uint64_t epoch,
                               tlog_marker *m)
{
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    s = s ? s->next : q->head;
    for (; s; s = s->next) {
        int st = slot_state(s);
        if (s->sync_epoch == epoch && (st == SLOT_PENDING || st == SLOT_FAILED)) {
            *m = s->probe;
            break;
        }
    }
    tlog_unlock_(&d->devs->lock);
    return s;
}

/* What a device answered, other than done, while the forced sync waited
 * on its markers: said once the sync is over, unless its poll says it. */
typedef struct wait_errors {
    size_t count;
    int code;
    const char *device;
    const char *site;
} wait_errors;

/* Waits for the pinned intervals of `d`, without the poll lock: sync scopes
 * and readiness checks go on meanwhile. A query that fails is waited on all
 * the same (the failure may pass); a wait that fails is noted in `errs`.
 * False once the deadline passed. */
static bool wait_device(tlog_device *d, uint64_t epoch, int64_t deadline, wait_errors *errs)
{
    dqueue *q;
    for (size_t i = 0; (q = queue_at(d, i)) != NULL; i++) {
        tlog_marker m = 0;
        for (tlog_slot *s = next_to_wait(d, q, NULL, epoch, &m); s;
             s = next_to_wait(d, q, s, epoch, &m)) {
            d->forced_waited = true;
            int rc = d->ops->query(d->impl, m);
            DCOUNT(d, queries, 1);
            if (rc == TLOG_OK)
                continue;
            int64_t left = deadline - tlog_mono_ns_();
            if (left <= 0)
                return false;
            rc = tlog_marker_wait_(d, m, (uint64_t)left);
            DCOUNT(d, waits, 1);
            if (rc == TLOG_ETIMEDOUT)
                return false;
            if (rc != TLOG_OK && errs->count++ == 0) {
                errs->code = rc;
                errs->device = d->name;
                errs->site = s->site && s->site->name ? s->site->name : "(unnamed)";
            }
        }
    }
    return true;
}

/* Waits for the device work of frame `only` (NULL: of every completed
 * frame) that is still pending, then delivers it; what did not complete by
 * `deadline` is delivered unresolved (TLOG_ETIMEDOUT), said when `say`.
 * Work already done is read without waiting. A deadline already past waits
 * for nothing, another thread's forced sync included: TLOG_EBUSY, nothing
 * delivered, while one runs. */
static int forced_sync(tlog_log *log, const tlog_frame *only, int64_t deadline, bool say)
{
    tlog_devices *ds = devices_of(log);
    if (!ds)
        return TLOG_OK;
    int64_t start = tlog_mono_ns_();
    if (deadline > start)
        tlog_lock_(&ds->force_lock, TLOG_LOCK_DEVICE_FORCE);
    else if (!tlog_trylock_(&ds->force_lock, TLOG_LOCK_DEVICE_FORCE))
        return TLOG_EBUSY;
    uint64_t epoch = pin_pending(ds, only);
    bool in_time = true;
    wait_errors errs = {0};
    for (tlog_device *d = next_device(ds, NULL); d && in_time; d = next_device(ds, d))
        in_time = wait_device(d, epoch, deadline, &errs);

    tlog_lock_(&ds->poll_lock, TLOG_LOCK_DEVICE_POLL);
    unpin(ds);
    poll_ctx c = poll_start(log, POLL_FORCED);
    c.epoch = epoch;
    for (tlog_device *d = ds->list; d; d = d->next_device) {
        if (in_time && d->forced_waited)
            tlog_anchor_now_locked_(d, ANCHOR_TIMEOUT_NS);   /* right after activity */
        d->forced_waited = false;
        poll_device_locked(d, &c);
    }
    tlog_unlock_(&ds->poll_lock);
    tlog_unlock_(&ds->force_lock);
    poll_finish(log, &c);
    if (errs.count && !c.err.count)
        tlog_report_(log, NULL, TLOG_EDEVICE, NULL,
                     "device %s: waiting for \"%s\" in a forced sync failed (%s); what it "
                     "could not wait for is shown unresolved",
                     errs.device, errs.site, tlog_strerror(errs.code));
    if (!in_time && say)
        tlog_report_(log, NULL, TLOG_ETIMEDOUT, NULL,
                     "forced sync gave up after %.3f s: %zu device interval(s) never "
                     "completed and are shown unresolved",
                     (double)(tlog_mono_ns_() - start) / 1e9, c.unresolved);
    return !in_time ? TLOG_ETIMEDOUT : c.err.count || errs.count ? TLOG_EDEVICE : TLOG_OK;
}

int tlog_sync(tlog_log *log)
{
    int rc = tlog_take_log_(&log);
    return rc == TLOG_OK
               ? forced_sync(log, NULL, tlog_deadline_after_(log->cfg.sync_timeout_ns), true)
               : rc;
}

int tlog_device_settle_(tlog_frame *f, int64_t deadline, bool say)
{
    tlog_devices_poll_(f->log);   /* what is done needs no wait */
    return tlog_frame_ready_(f) ? TLOG_OK : forced_sync(f->log, f, deadline, say);
}

/* ------------------------------------------------------------------------ */
/* A device going away                                                      */
/* ------------------------------------------------------------------------ */

/* Caller holds both locks. */
static void unlink_device_locked(tlog_devices *ds, tlog_device *d)
{
    tlog_assert_held_(&ds->poll_lock);
    tlog_assert_held_(&ds->lock);
    for (tlog_device **p = &ds->list; *p; p = &(*p)->next_device)
        if (*p == d) {
            *p = d->next_device;
            break;
        }
}

void tlog_device_retire_(tlog_device *d)
{
    tlog_devices *ds = d->devs;
    poll_ctx c = poll_start(d->log, POLL_FINAL);
    /* A forced sync on another thread may be waiting on its markers without
     * the poll lock: it finishes first. */
    tlog_lock_(&ds->force_lock, TLOG_LOCK_DEVICE_FORCE);
    tlog_lock_(&ds->poll_lock, TLOG_LOCK_DEVICE_POLL);
    poll_device_locked(d, &c);
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    unlink_device_locked(ds, d);
    tlog_pool_abandon_open_locked_(d);
    tlog_unlock_(&ds->lock);
    tlog_unlock_(&ds->poll_lock);
    tlog_unlock_(&ds->force_lock);
    poll_finish(d->log, &c);
}
