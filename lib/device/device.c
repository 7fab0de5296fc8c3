/*
 * Device timers, recording side: the log's device registry, the marker
 * pool, the pending list of each queue, device scopes, and devices
 * themselves. Reading markers is in device_sync.c. Vendor APIs are reached
 * only through tlog_device_ops.
 *
 * A device scope holds a reference to the frame it began in (open.c) until
 * its interval is delivered there; that frame is ready once every such
 * interval has been delivered.
 *
 * Locks, outermost first: the log's poll lock (one resolver at a time; only
 * resolvers call query, wait and elapsed), the device lock (pool, pending
 * lists; never held across a call to the backend except when the pool
 * grows), then a frame's own lock. A marker goes back to the pool only once
 * it has been reached and read: re-recording a marker still in flight
 * silently loses its first timestamp.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "alloc.h"
#include "device_impl.h"
#include "map.h"
#include "util.h"

#define DEFAULT_MAX_SCOPES 2048u
#define DEFAULT_POOL_BATCH 64u
#define MAX_MAX_SCOPES (1u << 20)
#define KNOWN_FLAGS                                                          \
    (TLOG_DEVICE_LAUNCH_ROWS | TLOG_DEVICE_SUBTRACT_OFFSET | TLOG_DEVICE_NO_MARKER_THREAD)
#define CALIBRATION_PAIRS 15
#define CALIBRATION_TIMEOUT_NS 2000000000ull

/* ------------------------------------------------------------------------ */
/* The log's device registry                                                */
/* ------------------------------------------------------------------------ */

static tlog_devices *devices_make(tlog_log *log)
{
    tlog_devices *ds = devices_of(log);
    if (ds)
        return ds;
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    ds = devices_of(log);
    if (!ds && (ds = tlog_calloc_(1, sizeof *ds)) != NULL) {
        pthread_mutex_init(&ds->lock, NULL);
        pthread_mutex_init(&ds->poll_lock, NULL);
        pthread_mutex_init(&ds->force_lock, NULL);
        pthread_cond_init(&ds->maker_wake, NULL);
        atomic_store_explicit(&log->devices, ds, memory_order_release);
    }
    tlog_unlock_(&log->lock);
    return ds;
}

/* ------------------------------------------------------------------------ */
/* The marker pool                                                          */
/* ------------------------------------------------------------------------ */

static int slot_markers(tlog_device *d, tlog_slot *s)
{
    int rc = TLOG_OK;
    if (!s->begin)
        rc = d->ops->marker_create(d->impl, &s->begin);
    if (rc == TLOG_OK && !s->end)
        rc = d->ops->marker_create(d->impl, &s->end);
    return rc;
}

/* Slots the pool may still add, at most one batch. Caller holds the device
 * lock. */
static uint32_t pool_room_locked(const tlog_device *d)
{
    tlog_assert_device_held_(d, lock);
    uint32_t n = d->max_scopes - d->nslots;
    return n < d->batch ? n : d->batch;
}

/* Puts n slots (of `block`, from calloc) on the free list. Caller holds the
 * device lock. False if the block list could not grow: nothing is taken. */
static bool pool_link_locked(tlog_device *d, tlog_slot *block, uint32_t n)
{
    tlog_assert_device_held_(d, lock);
    if (!TLOG_GROW(d->blocks, d->capblocks, d->nblocks + 1))
        return false;
    d->blocks[d->nblocks++] = (struct slot_block){block, n};
    for (uint32_t i = 0; i < n; i++) {
        tlog_slot *s = &block[i];
        s->dev = d;
        atomic_init(&s->state, SLOT_FREE);
        s->next = d->free;
        d->free = s;
    }
    d->nslots += n;
    d->nfree += n;
    return true;
}

static void slot_markers_destroy(tlog_device *d, tlog_slot *s)
{
    if (s->begin)
        d->ops->marker_destroy(d->impl, s->begin);
    if (s->end)
        d->ops->marker_destroy(d->impl, s->end);
    s->begin = s->end = 0;
}

/*
 * Up to n slots with their markers made, added to the pool. Creating a
 * marker costs the backend's time (a CUDA event took 0.6 us on an H100, in a
 * probe outside this library), so this runs outside the device lock and off
 * the recording path: when the device is made, and when a read of the device
 * finds the pool low. Caller holds the poll lock, or owns a device not yet
 * registered.
 */
static void pool_fill_locked(tlog_device *d, uint32_t n)
{
    tlog_assert_device_held_(d, poll_lock);
    tlog_slot *block = n ? tlog_calloc_(n, sizeof *block) : NULL;
    uint32_t made = 0;
    while (block && made < n && slot_markers(d, &block[made]) == TLOG_OK)
        made++;
    if (block && made < n)
        slot_markers_destroy(d, &block[made]);   /* half made */
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    uint32_t room = d->max_scopes - d->nslots;   /* the recording path may have grown */
    uint32_t kept = made < room ? made : room;
    bool linked = kept && pool_link_locked(d, block, kept);
    if (n && (!block || (kept && !linked)))
        d->fill_failed = true;   /* said when a scope finds no marker for it */
    tlog_unlock_(&d->devs->lock);
    for (uint32_t i = linked ? kept : 0; block && i < made; i++)
        slot_markers_destroy(d, &block[i]);
    if (!linked)
        free(block);
}

/* Gives bare slots new markers and puts them back on the free list; those
 * the backend refuses stay bare. Caller holds the poll lock. */
static void pool_remake_bare_locked(tlog_device *d)
{
    tlog_assert_device_held_(d, poll_lock);
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    tlog_slot *bare = d->bare;
    d->bare = NULL;
    tlog_unlock_(&d->devs->lock);
    while (bare) {
        tlog_slot *s = bare;
        bare = s->next;
        bool made = slot_markers(d, s) == TLOG_OK;
        if (!made)
            slot_markers_destroy(d, s);
        tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
        if (made) {
            s->next = d->free;
            d->free = s;
            d->nfree++;
        } else {
            s->next = d->bare;
            d->bare = s;
        }
        tlog_unlock_(&d->devs->lock);
    }
}

/* Up to `want` free slots, made a batch at a time while there is room.
 * Caller holds the poll lock. */
static void pool_fill_to_locked(tlog_device *d, uint32_t want)
{
    tlog_assert_device_held_(d, poll_lock);
    for (;;) {
        tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
        uint32_t n = d->nfree < want ? pool_room_locked(d) : 0;
        tlog_unlock_(&d->devs->lock);
        if (!n)
            return;
        uint32_t before = d->nslots;
        pool_fill_locked(d, n);
        if (d->nslots == before)
            return;   /* no memory, or the backend refused */
    }
}

void tlog_pool_refill_locked_(tlog_device *d)
{
    tlog_assert_device_held_(d, poll_lock);
    tlog_assert_not_held_(&d->devs->lock);
    pool_remake_bare_locked(d);
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    bool low = d->nfree <= d->batch / 2;
    tlog_unlock_(&d->devs->lock);
    if (low)
        pool_fill_to_locked(d, d->batch);
}

int tlog_device_reserve(tlog_device *d, uint32_t scopes)
{
    if (!d || tlog_log_inherited_(d->log))
        return TLOG_EINVAL;
    tlog_lock_(&d->devs->poll_lock, TLOG_LOCK_DEVICE_POLL);
    pool_remake_bare_locked(d);
    /* Past the refill mark too, so that those scopes wake no maker. */
    uint32_t want = scopes > UINT32_MAX - d->batch ? UINT32_MAX : scopes + d->batch / 2 + 1;
    pool_fill_to_locked(d, want);
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    bool enough = d->nfree >= scopes || d->nslots == d->max_scopes;
    tlog_unlock_(&d->devs->lock);
    tlog_unlock_(&d->devs->poll_lock);
    return enough ? TLOG_OK : TLOG_ENOMEM;
}

/* Refills every device's pool that runs low, off the recording path. */
static void *maker_main(void *arg)
{
    tlog_devices *ds = arg;
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    for (;;) {
        while (!ds->maker_wanted && !ds->maker_stop)
            pthread_cond_wait(&ds->maker_wake, &ds->lock);
        if (ds->maker_stop)
            break;
        ds->maker_wanted = false;
        tlog_unlock_(&ds->lock);
        tlog_lock_(&ds->poll_lock, TLOG_LOCK_DEVICE_POLL);   /* devices stay listed meanwhile */
        for (tlog_device *d = ds->list; d; d = d->next_device)
            if (!(d->flags & TLOG_DEVICE_NO_MARKER_THREAD))
                tlog_pool_refill_locked_(d);
        tlog_unlock_(&ds->poll_lock);
        tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    }
    tlog_unlock_(&ds->lock);
    return NULL;
}

/* Without the thread (it could not start), pools are refilled by reads of
 * the device alone. Caller holds the poll lock. */
static void maker_start_locked(tlog_devices *ds)
{
    tlog_assert_held_(&ds->poll_lock);
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    bool start = !ds->maker_running;
    tlog_unlock_(&ds->lock);
    if (!start)
        return;
    pthread_t th;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the application's signals */
    bool started = pthread_create(&th, NULL, maker_main, ds) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    ds->maker = th;
    ds->maker_running = started;
    tlog_unlock_(&ds->lock);
}

static void maker_stop(tlog_devices *ds)
{
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    bool running = ds->maker_running;
    ds->maker_stop = true;
    pthread_cond_signal(&ds->maker_wake);
    tlog_unlock_(&ds->lock);
    if (running)
        pthread_join(ds->maker, NULL);
}

/* Caller holds the device lock. Never makes a marker: an empty pool gives
 * NULL. Wakes the maker once the pool falls to half a batch. */
static tlog_slot *pool_take_locked(tlog_device *d)
{
    tlog_assert_device_held_(d, lock);
    tlog_slot *s = d->free;
    if (!s)
        return NULL;
    d->free = s->next;
    d->nfree--;
    if (d->nfree <= d->batch / 2 && !(d->flags & TLOG_DEVICE_NO_MARKER_THREAD) &&
        d->devs->maker_running && !d->devs->maker_wanted) {
        d->devs->maker_wanted = true;
        pthread_cond_signal(&d->devs->maker_wake);
    }
    s->next = s->prev = NULL;
    atomic_store_explicit(&s->state, (slot_gen(s) + 1) << 8 | SLOT_OPEN, memory_order_relaxed);
    return s;
}

/* Caller holds the device lock. A slot whose markers misbehaved waits,
 * bare, for the next refill to give it new ones. */
void tlog_pool_put_locked_(tlog_device *d, tlog_slot *s, bool markers_bad)
{
    tlog_assert_device_held_(d, lock);
    if (markers_bad)
        slot_markers_destroy(d, s);
    s->retire = false;
    s->frame = NULL;
    s->queue = NULL;
    slot_set(s, SLOT_FREE);
    s->prev = NULL;
    if (markers_bad) {
        s->next = d->bare;
        d->bare = s;
        return;
    }
    s->next = d->free;
    d->free = s;
    d->nfree++;
}

tlog_drow tlog_slot_row_(const tlog_device *d, const tlog_slot *s)
{
    return (tlog_drow){.site = s->site, .launch_site = s->launch_site, .device = d->name,
                       .device_id = d->serial, .queue_key = s->queue ? s->queue->key : NULL,
                       .launch = s->launch, .start = s->launch, .end = s->launch,
                       .launch_seq = s->launcher.scope,
                       .queue = s->queue ? s->queue->number : 0, .unresolved = true};
}

int tlog_slot_deliver_(tlog_slot *s, const tlog_drow *row)
{
    tlog_frame *f = s->frame;
    s->frame = NULL;
    int rc = tlog_frame_add_row_(f, row);
    /* Ready only once the row is in: readers check `outstanding`. */
    atomic_fetch_sub_explicit(&f->outstanding, 1, memory_order_release);
    tlog_frame_release(f);
    return rc;
}

void tlog_pool_abandon_open_locked_(tlog_device *d)
{
    tlog_assert_device_held_(d, lock);
    for (size_t b = 0; b < d->nblocks; b++)
        for (uint32_t i = 0; i < d->blocks[b].n; i++) {
            tlog_slot *s = &d->blocks[b].slots[i];
            if (slot_state(s) != SLOT_OPEN || !s->frame)
                continue;
            tlog_drow row = tlog_slot_row_(d, s);
            tlog_slot_deliver_(s, &row);
            slot_set(s, SLOT_FREE);
            DCOUNT(d, unresolved, 1);
        }
}

/* ------------------------------------------------------------------------ */
/* Queues                                                                   */
/* ------------------------------------------------------------------------ */

/* Caller holds the device lock. */
static dqueue *queue_for_locked(tlog_device *d, void *key)
{
    tlog_assert_device_held_(d, lock);
    if (d->last_queue && d->last_queue->key == key)
        return d->last_queue;
    for (size_t i = 0; i < d->nqueues; i++)
        if (d->queues[i]->key == key)
            return d->last_queue = d->queues[i];
    if (!TLOG_GROW(d->queues, d->capqueues, d->nqueues + 1))
        return NULL;
    dqueue *q = tlog_calloc_(1, sizeof *q);
    if (!q)
        return NULL;
    q->key = key;
    q->number = ++d->queues_made;
    d->queues[d->nqueues++] = q;
    return d->last_queue = q;
}

#define PRUNE_ABOVE 32

void tlog_dqueues_prune_locked_(tlog_device *d)
{
    tlog_assert_device_held_(d, poll_lock);
    tlog_assert_device_held_(d, lock);
    if (d->nqueues <= PRUNE_ABOVE)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < d->nqueues; i++) {
        dqueue *q = d->queues[i];
        if (q->head) {
            d->queues[kept++] = q;
            continue;
        }
        if (d->last_queue == q)
            d->last_queue = NULL;
        free(q);
    }
    d->nqueues = kept;
}

static void queue_append(dqueue *q, tlog_slot *s)
{
    s->next = NULL;
    s->prev = q->tail;
    if (q->tail)
        q->tail->next = s;
    else
        q->head = s;
    q->tail = s;
}

void tlog_dqueue_remove_(dqueue *q, tlog_slot *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        q->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        q->tail = s->prev;
    s->next = s->prev = NULL;
}

/* ------------------------------------------------------------------------ */
/* Launch rows                                                              */
/* ------------------------------------------------------------------------ */

/* The `Launch "name"` site for a device scope's site, made once per site.
 * Caller holds the device lock. */
static const tlog_site *launch_site_for_locked(tlog_device *d, const tlog_site *site)
{
    tlog_assert_device_held_(d, lock);
    uint32_t i;
    if (tlog_map_get_(&d->launch_map, (uintptr_t)site, &i))
        return d->launch_sites[i];
    char name[TLOG_NAME_MAX * 4];
    snprintf(name, sizeof name, "Launch \"%s\"", site->name ? site->name : "?");
    const tlog_site *ls =
        tlog_site_intern(name, site->file, site->function, site->line, site->level);
    /* Kept when memory allows; else interned again (the same site) next time. */
    if (ls && d->nlaunch < UINT32_MAX && TLOG_GROW(d->launch_sites, d->caplaunch, d->nlaunch + 1) &&
        tlog_map_put_(&d->launch_map, (uintptr_t)site, (uint32_t)d->nlaunch))
        d->launch_sites[d->nlaunch++] = ls;
    return ls;
}

/* ------------------------------------------------------------------------ */
/* Recording                                                                */
/* ------------------------------------------------------------------------ */

static void report_once(tlog_device *d, int code, const char *what)
{
    tlog_report_(d->log, NULL, code, NULL, "device %s: %s", d->name, what);
}

/* Takes a slot for a scope launched under `tok`, holding the token's
 * frame; counts why not. */
static tlog_slot *slot_for_scope(tlog_device *d, tlog_thread *t, const tlog_token *tok)
{
    tlog_devices *ds = d->devs;
    tlog_frame *f = tlog_frame_find_(d->log, t, tok);
    bool own = tok->thread == t->id && !t->adopt.active;
    if (f && !tlog_frame_reserve_(f, own)) {   /* its root ended meanwhile */
        tlog_frame_release(f);
        f = NULL;
    }
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    tlog_slot *s = f ? pool_take_locked(d) : NULL;
    bool warn = false, all_in_flight = d->nslots == d->max_scopes;
    bool no_memory = d->fill_failed && !all_in_flight;
    if (s) {
        s->frame = f;
    } else if (f && no_memory) {
        warn = !d->warned_no_memory;
        d->warned_no_memory = true;
        d->fill_failed = false;
    } else if (f) {
        warn = !d->warned_full;
        d->warned_full = true;
    }
    tlog_unlock_(&ds->lock);
    if (s)
        return s;
    if (f) {
        atomic_fetch_sub_explicit(&f->outstanding, 1, memory_order_release);
        tlog_frame_release(f);
        DCOUNT(d, dropped, 1);
        if (warn && no_memory)
            report_once(d, TLOG_ENOMEM,
                        "no marker ready, as no memory could be had for more: dropped "
                        "and counted (the pool grows again when memory allows)");
        else if (warn && all_in_flight)
            report_once(d, TLOG_EFULL,
                        "all device scopes in flight (max_scopes): new device scopes "
                        "are dropped and counted until some resolve");
        else if (warn)
            report_once(d, TLOG_EFULL,
                        "no marker ready: dropped and counted (markers are made "
                        "pool_batch at a time, in the background; tlog_device_reserve "
                        "makes more beforehand)");
    } else {
        DCOUNT(d, outside, 1);
        report_once(d, TLOG_ELATE, "a device scope began after its frame ended; not timed");
    }
    return NULL;
}

/* Gives back a slot whose begin marker was never recorded. */
static void slot_cancel(tlog_device *d, tlog_slot *s)
{
    tlog_frame *f = s->frame;
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    tlog_pool_put_locked_(d, s, false);
    tlog_unlock_(&d->devs->lock);
    atomic_fetch_sub_explicit(&f->outstanding, 1, memory_order_release);
    tlog_frame_release(f);
}

static void refused(tlog_device *d, int rc, const tlog_site *site)
{
    if (rc == TLOG_ECAPTURE) {
        DCOUNT(d, captured, 1);
        tlog_report_(d->log, NULL, rc, NULL,
                     "device %s: \"%s\" and later device scopes on queues being captured "
                     "into a graph are not timed (counted in scopes_captured)",
                     d->name, site->name);
    } else {
        DCOUNT(d, failed, 1);
        tlog_report_(d->log, NULL, rc, NULL, "device %s refused a marker for \"%s\": %s",
                     d->name, site->name, tlog_strerror(rc));
    }
}

/* The host side of a device scope, from its begin to its end, as a control
 * row under the launching scope; works from whichever thread ends it. */
static void add_launch_row(tlog_device *d, const tlog_site *site, const tlog_token *launcher,
                           tlog_ticks begin)
{
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    const tlog_site *row = launch_site_for_locked(d, site);
    tlog_unlock_(&d->devs->lock);
    tlog_ticks end = tlog_now(d->log);
    if (row)
        tlog_insert_to(launcher, row, TLOG_KIND_CONTROL, begin, end > begin ? end : begin);
}

tlog_device_scope tlog_device_begin(tlog_device *d, void *queue, const tlog_site *site)
{
    tlog_device_scope none = {NULL, 0};
    if (TLOG_UNLIKELY(!site)) {
        tlog_report_null_site_(d ? d->log : NULL, "tlog_device_begin(dev, queue, NULL)");
        return none;
    }
    if (!d || !tlog_level_on_(site->level, atomic_load_explicit(&d->log->level,
                                                                memory_order_relaxed)) ||
        tlog_log_inherited_(d->log))
        return none;
    tlog_thread *t = tlog_thread_get_(d->log);
    if (!t)
        return none;
    tlog_ticks launch = tlog_read_clock_(t);
    const tlog_site *launcher = NULL;
    tlog_token tok = tlog_thread_token_(t, d->log, &launcher);
    tlog_slot *s = tok.thread ? slot_for_scope(d, t, &tok) : NULL;
    if (!tok.thread) {
        DCOUNT(d, outside, 1);
        tlog_report_(d->log, t, TLOG_ENOTOPEN, site,
                     "device scope \"%s\" begun with no scope open: not timed "
                     "(device scopes belong to a frame)", site->name);
    }
    int rc = s ? d->ops->record(d->impl, queue, s->begin) : TLOG_OK;
    if (s && rc != TLOG_OK) {
        slot_cancel(d, s);
        refused(d, rc, site);
        s = NULL;
    }
    if (!s)
        return none;
    s->site = site;
    s->launch_site = launcher;
    s->launcher = tok;
    s->launch = launch;
    s->handle = queue;   /* its list is found at the end, under the lock */
    DCOUNT(d, scopes, 1);
    tlog_device_scope out = {s, slot_gen(s)};
    return out;
}

int tlog_device_end(tlog_device_scope *scope)
{
    if (!scope || !scope->slot_)
        return TLOG_ENOTOPEN;
    tlog_slot *s = scope->slot_;
    if (tlog_log_inherited_(s->dev->log))
        return TLOG_EINVAL;
    uint64_t open = scope->gen_ << 8 | SLOT_OPEN;
    scope->slot_ = NULL;
    if (!atomic_compare_exchange_strong(&s->state, &open, scope->gen_ << 8 | SLOT_ENDING))
        return TLOG_ENOTOPEN;
    tlog_device *d = s->dev;
    /* Once listed, a resolver may recycle the slot at any moment. */
    const tlog_site *site = s->site;
    tlog_token launcher = s->launcher;
    tlog_ticks launch = s->launch;
    void *handle = s->handle;
    void *key = d->ops->queue_key ? d->ops->queue_key(d->impl, handle) : handle;
    int rc = d->ops->record(d->impl, handle, s->end);
    if (d->flags & TLOG_DEVICE_LAUNCH_ROWS)
        add_launch_row(d, site, &launcher, launch);
    DCOUNT(d, pending, 1);
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    dqueue *q = queue_for_locked(d, key);
    if (q) {
        s->queue = q;
        s->probe = rc == TLOG_OK ? s->end : s->begin;
        slot_set(s, rc == TLOG_OK ? SLOT_PENDING : SLOT_FAILED);
        queue_append(q, s);
    }
    tlog_unlock_(&d->devs->lock);
    if (!q) {
        /* No memory for the queue's list: nothing can ever read this slot
         * again, so its markers are retired rather than reused. */
        tlog_drow lost = tlog_slot_row_(d, s);
        lost.queue_key = key;
        tlog_slot_deliver_(s, &lost);
        tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
        tlog_pool_put_locked_(d, s, true);
        tlog_unlock_(&d->devs->lock);
        atomic_fetch_sub_explicit(&d->stats.pending, 1, memory_order_relaxed);
        DCOUNT(d, unresolved, 1);
        rc = TLOG_ENOMEM;
    }
    if (rc != TLOG_OK && rc != TLOG_ENOMEM)
        refused(d, rc, site);
    return rc == TLOG_OK ? TLOG_OK : rc == TLOG_ECAPTURE ? TLOG_ECAPTURE
                         : rc == TLOG_ENOMEM ? rc : TLOG_EDEVICE;
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int record_pairs(tlog_device *d, tlog_marker *m)
{
    const tlog_device_ops *ops = d->ops;
    int rc = TLOG_OK;
    for (int i = 0; i < CALIBRATION_PAIRS && rc == TLOG_OK; i++) {
        rc = ops->record_own(d->impl, m[2 * i]);
        if (rc == TLOG_OK && ops->enqueue_empty)
            rc = ops->enqueue_empty(d->impl);
        if (rc == TLOG_OK)
            rc = ops->record_own(d->impl, m[2 * i + 1]);
    }
    return rc;
}

/* Records the calibration pairs with the own queue held (or kept busy), so
 * that the host's gaps between records do not show in what they read. */
static int record_pairs_held(tlog_device *d, tlog_marker *m)
{
    const tlog_device_ops *ops = d->ops;
    if (!ops->hold_own) {
        int rc = ops->enqueue_busy ? ops->enqueue_busy(d->impl, 200000) : TLOG_OK;
        return rc == TLOG_OK ? record_pairs(d, m) : rc;
    }
    void *hold = NULL;
    if (ops->hold_own(d->impl, &hold) != TLOG_OK)
        return record_pairs(d, m);   /* less exact, still an offset */
    int rc = record_pairs(d, m);
    int released = ops->release_own(d->impl, hold);
    return rc != TLOG_OK ? rc : released;
}

/* The median reading of an empty scope on the backend's own queue. */
static int calibrate(tlog_device *d)
{
    const tlog_device_ops *ops = d->ops;
    tlog_marker m[2 * CALIBRATION_PAIRS] = {0};
    int64_t ns[CALIBRATION_PAIRS];
    int rc = TLOG_OK;
    for (int i = 0; i < 2 * CALIBRATION_PAIRS && rc == TLOG_OK; i++)
        rc = ops->marker_create(d->impl, &m[i]);
    if (rc == TLOG_OK)
        rc = record_pairs_held(d, m);
    if (rc == TLOG_OK)
        rc = tlog_marker_wait_(d, m[2 * CALIBRATION_PAIRS - 1], CALIBRATION_TIMEOUT_NS);
    for (int i = 0; i < CALIBRATION_PAIRS && rc == TLOG_OK; i++)
        rc = ops->elapsed_ns(d->impl, m[2 * i], m[2 * i + 1], &ns[i]);
    if (rc == TLOG_OK) {
        qsort(ns, CALIBRATION_PAIRS, sizeof ns[0], cmp_i64);
        d->empty_ns = ns[CALIBRATION_PAIRS / 2];
    }
    for (int i = 0; i < 2 * CALIBRATION_PAIRS; i++)
        if (m[i])
            ops->marker_destroy(d->impl, m[i]);
    return rc;
}

static bool ops_valid(const tlog_device_ops *ops)
{
    return ops && ops->size >= sizeof *ops && ops->abi == TLOG_DEVICE_ABI && ops->backend &&
           ops->marker_create && ops->marker_destroy && ops->record && ops->record_own &&
           ops->query && ops->elapsed_ns && !ops->hold_own == !ops->release_own;
}

int tlog_device_config_copy_(tlog_device_config *out, const tlog_device_config *in)
{
    if (!tlog_read_sized_(out, sizeof *out, in, sizeof(size_t)))
        return TLOG_EINVAL;
    out->size = sizeof *out;
    return out->flags & ~(unsigned)KNOWN_FLAGS || out->max_scopes > MAX_MAX_SCOPES ? TLOG_EINVAL
                                                                                  : TLOG_OK;
}

static int config_of(const tlog_device_config *in, tlog_device *d)
{
    tlog_device_config cfg;
    if (tlog_device_config_copy_(&cfg, in) != TLOG_OK)
        return TLOG_EINVAL;
    d->flags = cfg.flags;
    d->max_scopes = cfg.max_scopes ? cfg.max_scopes : DEFAULT_MAX_SCOPES;
    d->batch = cfg.pool_batch ? cfg.pool_batch : DEFAULT_POOL_BATCH;
    if (d->batch > d->max_scopes)
        d->batch = d->max_scopes;
    return TLOG_OK;
}

static void free_markers(tlog_device *d)
{
    for (size_t b = 0; b < d->nblocks; b++) {
        tlog_slot *block = d->blocks[b].slots;
        for (size_t i = 0; i < d->blocks[b].n; i++) {
            if (block[i].begin)
                d->ops->marker_destroy(d->impl, block[i].begin);
            if (block[i].end)
                d->ops->marker_destroy(d->impl, block[i].end);
        }
        free(block);
    }
    if (d->cur.marker)
        d->ops->marker_destroy(d->impl, d->cur.marker);
    if (d->fresh.marker)
        d->ops->marker_destroy(d->impl, d->fresh.marker);
}

static void device_free(tlog_device *d)
{
    free_markers(d);
    for (size_t i = 0; i < d->nqueues; i++)
        free(d->queues[i]);
    free(d->queues);
    free(d->blocks);
    tlog_map_free_(&d->launch_map);
    free(d->launch_sites);
    free(d);
}

int tlog_device_register_(tlog_log *log, const tlog_device_ops *ops, void *impl,
                          const char *name, const tlog_device_config *config,
                          tlog_device **out)
{
    if (!out || !ops_valid(ops))
        return TLOG_EINVAL;
    *out = NULL;
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    tlog_devices *ds = devices_make(log);
    const tlog_site *interned =
        tlog_site_intern(name ? name : ops->backend, "", "", 0, TLOG_LEVEL_COARSE);
    tlog_device *d = tlog_calloc_(1, sizeof *d);
    if (!ds || !interned || !d) {
        free(d);
        return TLOG_ENOMEM;
    }
    static _Atomic uint64_t serials;
    d->serial = atomic_fetch_add(&serials, 1) + 1;
    d->log = log;
    d->devs = ds;
    d->ops = ops;
    d->impl = impl;
    d->name = interned->name;
    rc = config_of(config, d);
    if (rc == TLOG_OK)
        rc = ops->marker_create(impl, &d->cur.marker);
    if (rc == TLOG_OK)
        rc = ops->marker_create(impl, &d->fresh.marker);
    if (rc == TLOG_OK)
        rc = calibrate(d);
    if (rc == TLOG_OK)
        rc = tlog_anchor_now_locked_(d, CALIBRATION_TIMEOUT_NS);
    if (rc == TLOG_OK)
        pool_fill_locked(d, pool_room_locked(d));   /* the first frames create no marker */
    if (rc != TLOG_OK) {
        free_markers(d);
        free(d);
        return rc;
    }
    tlog_lock_(&ds->poll_lock, TLOG_LOCK_DEVICE_POLL);
    tlog_lock_(&ds->lock, TLOG_LOCK_DEVICES);
    d->next_device = ds->list;
    ds->list = d;
    d->listed = true;
    tlog_unlock_(&ds->lock);
    if (!(d->flags & TLOG_DEVICE_NO_MARKER_THREAD))
        maker_start_locked(ds);
    tlog_unlock_(&ds->poll_lock);
    *out = d;
    return TLOG_OK;
}

void *tlog_device_impl_(const tlog_device *d)
{
    return d ? d->impl : NULL;
}

void tlog_device_destroy(tlog_device *d)
{
    if (!d || tlog_log_inherited_(d->log))
        return;
    tlog_device_retire_(d);
    free_markers(d);
    d->nblocks = 0;
    d->cur.marker = d->fresh.marker = 0;
    if (d->ops->destroy)
        d->ops->destroy(d->impl);
    device_free(d);
}

void tlog_devices_destroy_(tlog_log *log)
{
    tlog_devices *ds = devices_of(log);
    if (!ds)
        return;
    maker_stop(ds);
    while (ds->list)
        tlog_device_destroy(ds->list);
    pthread_cond_destroy(&ds->maker_wake);
    pthread_mutex_destroy(&ds->lock);
    pthread_mutex_destroy(&ds->poll_lock);
    pthread_mutex_destroy(&ds->force_lock);
    free(ds);
    atomic_store(&log->devices, NULL);
}

int tlog_device_get_info(const tlog_device *dev, tlog_device_info *out)
{
    if (!dev)
        return TLOG_EINVAL;
    tlog_device *d = (tlog_device *)dev;
    tlog_device_info info = {
        .size = sizeof info,
        .backend = d->ops->backend,
        .name = d->name,
        .empty_scope_ns = d->empty_ns,
    };
#define DREAD(f) atomic_load_explicit(&d->stats.f, memory_order_relaxed)
    info.scopes = DREAD(scopes);
    info.scopes_dropped = DREAD(dropped);
    info.scopes_outside_frame = DREAD(outside);
    info.scopes_captured = DREAD(captured);
    info.scopes_failed = DREAD(failed);
    info.resolved = DREAD(resolved);
    info.unresolved = DREAD(unresolved);
    info.pending = DREAD(pending);
    info.queries = DREAD(queries);
    info.waits = DREAD(waits);
    info.late = DREAD(late);
#undef DREAD
    tlog_lock_(&d->devs->lock, TLOG_LOCK_DEVICES);
    info.pool_scopes = d->nslots;
    info.pool_free = d->nfree;
    tlog_unlock_(&d->devs->lock);
    return tlog_copy_sized_(out, &info, sizeof info);
}

void tlog_backend_report_(tlog_log *log, int code, const char *fmt, ...)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tlog_report_(log, NULL, code, NULL, "%s", msg);
}

/* ------------------------------------------------------------------------ */
/* Backends' default devices                                                */
/* ------------------------------------------------------------------------ */

int tlog_default_configure_(tlog_default_devices *t, const tlog_device_config *config)
{
    tlog_device_config copy;
    if (tlog_device_config_copy_(&copy, config) != TLOG_OK)
        return TLOG_EINVAL;
    int rc = TLOG_OK;
    tlog_lock_(&t->lock, TLOG_LOCK_DEFAULT_DEVICES);
    for (int i = 0; i < TLOG_DEFAULT_DEVICES_MAX; i++)
        if (t->tried[i])
            rc = TLOG_EBUSY;
    if (rc == TLOG_OK) {
        t->configured = config != NULL;
        t->config = copy;
    }
    tlog_unlock_(&t->lock);
    return rc;
}

/* The thread creating a default device, so that the error callback it
 * runs does not wait for itself. */
static _Thread_local bool creating_default;

tlog_device *tlog_default_device_(tlog_default_devices *t, int ordinal,
                                  tlog_default_create_fn create)
{
    if (ordinal < 0 || ordinal >= TLOG_DEFAULT_DEVICES_MAX)
        return NULL;
    tlog_device *dev = atomic_load_explicit(&t->devices[ordinal], memory_order_acquire);
    if (dev || creating_default)
        return dev;
    tlog_lock_(&t->lock, TLOG_LOCK_DEFAULT_DEVICES);
    if (!t->tried[ordinal]) {
        t->tried[ordinal] = t->creating[ordinal] = true;
        tlog_device_config config = t->config;
        bool configured = t->configured;
        tlog_unlock_(&t->lock);
        creating_default = true;
        int rc = create(ordinal, configured ? &config : NULL, &dev);
        creating_default = false;
        tlog_lock_(&t->lock, TLOG_LOCK_DEFAULT_DEVICES);
        if (rc == TLOG_ENODEVICE)
            atomic_store(&t->absent, true);
        atomic_store_explicit(&t->devices[ordinal], dev, memory_order_release);
        t->creating[ordinal] = false;
        pthread_cond_broadcast(&t->created);
    }
    while (t->creating[ordinal])
        pthread_cond_wait(&t->created, &t->lock);
    dev = atomic_load(&t->devices[ordinal]);
    tlog_unlock_(&t->lock);
    return dev;
}
