/*
 * Device timers: pooled markers, pending intervals per queue, and the three
 * points where intervals are resolved (sync scopes, readiness checks, the
 * forced sync). Vendor APIs are reached only through tlog_device_ops.
 *
 * Locks, outermost first: the log's poll lock (one resolver at a time; only
 * resolvers call query, wait and elapsed), the device lock (pool, pending
 * lists, frames' device state; never held across a call to the backend
 * except when the pool grows), then log->lock. A marker goes back to the
 * pool only once it has been reached and read: re-recording a marker still
 * in flight silently loses its first timestamp.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "device.h"
#include "internal.h"

#define DEFAULT_MAX_SCOPES 2048u
#define DEFAULT_POOL_BATCH 32u
#define CALIBRATION_PAIRS 15
#define CALIBRATION_TIMEOUT_NS 2000000000ull
#define ANCHOR_TIMEOUT_NS 100000000ull
#define POLL_BATCH 64

enum slot_state { SLOT_FREE, SLOT_OPEN, SLOT_ENDING, SLOT_PENDING, SLOT_FAILED, SLOT_ZOMBIE };

typedef struct dqueue dqueue;

typedef struct tlog_slot {
    struct tlog_slot *next, *prev;  /* free list, or its queue's pending list */
    tlog_device *dev;
    tlog_marker begin, end;         /* 0 once destroyed after an error */
    tlog_marker probe;              /* the last marker recorded: end, or
                                     * begin if the end was refused */
    _Atomic uint64_t state;         /* generation << 8 | slot_state */
    const tlog_site *site;
    const tlog_site *launch_site;
    const tlog_site *launch_row;    /* the Launch row opened, if any */
    tlog_thread *thread;            /* where it began */
    void *handle;                   /* the queue it was recorded on */
    dqueue *queue;
    tlog_fdev *fdev;                /* the launching frame */
    uint32_t launch_seq;
} tlog_slot;

struct dqueue {
    void *handle;
    uint32_t number;
    tlog_slot *head, *tail;
};

typedef struct anchor {
    tlog_marker marker;
    tlog_ticks host;
    bool valid;
} anchor;

struct tlog_device {
    tlog_device *next_device;
    tlog_log *log;
    tlog_devices *devs;
    const tlog_device_ops *ops;
    void *impl;
    const char *name;               /* interned */
    unsigned flags;
    uint32_t max_scopes, batch;
    int64_t empty_ns;

    /* Guarded by the device lock. */
    tlog_slot *free;
    struct slot_block { tlog_slot *slots; uint32_t n; } *blocks;
    size_t nblocks, capblocks;
    uint32_t nslots, nfree;
    dqueue **queues;
    size_t nqueues, capqueues;
    dqueue *last_queue;
    const tlog_site **launch_keys, **launch_vals;
    size_t launch_mask, nlaunch;
    bool warned_full;

    /* Guarded by the poll lock. */
    anchor cur, fresh;          /* fresh: recorded, not yet reached */
    bool fresh_pending;
    uint64_t anchor_frame;          /* frames completed when last anchored */

    struct {
        _Atomic uint64_t scopes, dropped, outside, captured, failed, resolved,
            unresolved, pending, queries, waits, late;
    } stats;
};

struct tlog_devices {
    pthread_mutex_t lock;
    pthread_mutex_t poll_lock;
    tlog_device *list;
};

#define DCOUNT(dev, field, n) \
    atomic_fetch_add_explicit(&(dev)->stats.field, (n), memory_order_relaxed)

/* ------------------------------------------------------------------------ */
/* Slot states                                                              */
/* ------------------------------------------------------------------------ */

static int slot_state(const tlog_slot *s)
{
    return (int)(atomic_load_explicit(&((tlog_slot *)s)->state, memory_order_acquire) & 0xff);
}

static uint64_t slot_gen(const tlog_slot *s)
{
    return atomic_load_explicit(&((tlog_slot *)s)->state, memory_order_relaxed) >> 8;
}

static void slot_set(tlog_slot *s, int state)
{
    atomic_store_explicit(&s->state, slot_gen(s) << 8 | (uint64_t)state, memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* The log's device registry                                                */
/* ------------------------------------------------------------------------ */

static tlog_devices *devices_of(tlog_log *log)
{
    return atomic_load_explicit(&log->devices, memory_order_acquire);
}

static tlog_devices *devices_make(tlog_log *log)
{
    tlog_devices *ds = devices_of(log);
    if (ds)
        return ds;
    pthread_mutex_lock(&log->lock);
    ds = devices_of(log);
    if (!ds && (ds = calloc(1, sizeof *ds)) != NULL) {
        pthread_mutex_init(&ds->lock, NULL);
        pthread_mutex_init(&ds->poll_lock, NULL);
        atomic_store_explicit(&log->devices, ds, memory_order_release);
    }
    pthread_mutex_unlock(&log->lock);
    return ds;
}

/* ------------------------------------------------------------------------ */
/* Frames' device state                                                     */
/* ------------------------------------------------------------------------ */

static tlog_fdev *fdev_new(void)
{
    tlog_fdev *f = calloc(1, sizeof *f);
    if (f) {
        f->refs = 1;
        atomic_init(&f->outstanding, 0);
        atomic_init(&f->completed, false);
    }
    return f;
}

/* Caller holds the device lock. */
static void fdev_unref(tlog_fdev *f)
{
    if (f && --f->refs == 0) {
        free(f->rows);
        free(f);
    }
}

/* The device state of the frame a token names, made if needed, or NULL
 * when that frame is no longer in progress. Caller holds the device lock. */
static tlog_fdev *fdev_for(tlog_log *log, tlog_thread *t, const tlog_token *tok)
{
    tlog_thread *owner = t;
    if (tok->thread != t->id || t->adopt.active) {
        pthread_mutex_lock(&log->lock);
        owner = tlog_thread_find_(log, tok->thread);
        if (owner && atomic_load_explicit(&owner->inbox_frame, memory_order_relaxed) !=
                         tok->frame)
            owner = NULL;
        pthread_mutex_unlock(&log->lock);
    }
    if (!owner)
        return NULL;
    if (!owner->fdev)
        owner->fdev = fdev_new();
    return owner->fdev;
}

tlog_fdev *tlog_device_frame_end_(tlog_log *log, tlog_thread *t)
{
    tlog_devices *ds = devices_of(log);
    if (!ds)
        return NULL;
    pthread_mutex_lock(&ds->lock);
    tlog_fdev *f = t->fdev;
    t->fdev = NULL;
    if (f)
        atomic_store_explicit(&f->completed, true, memory_order_release);
    pthread_mutex_unlock(&ds->lock);
    return f;
}

bool tlog_device_frame_ready_(const tlog_frame *f)
{
    return !f->fdev ||
           atomic_load_explicit(&f->fdev->outstanding, memory_order_acquire) == 0;
}

void tlog_device_frame_close_(tlog_log *log, tlog_fdev *f)
{
    tlog_devices *ds = devices_of(log);
    if (!f || !ds)
        return;
    pthread_mutex_lock(&ds->lock);
    f->closed = true;
    fdev_unref(f);
    pthread_mutex_unlock(&ds->lock);
}

/* Caller holds the device lock. */
static void fdev_add_row(tlog_fdev *f, const tlog_drow *row)
{
    if (f->closed) {
        f->rows_lost++;
        return;
    }
    if (f->nrows == f->caprows) {
        size_t cap = f->caprows ? f->caprows * 2 : 16;
        tlog_drow *grown = realloc(f->rows, cap * sizeof *grown);
        if (!grown) {
            f->rows_lost++;
            return;
        }
        f->rows = grown;
        f->caprows = cap;
    }
    f->rows[f->nrows++] = *row;
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

/* Adds up to one batch of slots. Caller holds the device lock: growth is
 * rare (the first frames), and keeps the pool simple. */
static void pool_grow(tlog_device *d)
{
    uint32_t n = d->max_scopes - d->nslots;
    if (n > d->batch)
        n = d->batch;
    if (n == 0)
        return;
    if (d->nblocks == d->capblocks) {
        size_t cap = d->capblocks ? d->capblocks * 2 : 8;
        struct slot_block *grown = realloc(d->blocks, cap * sizeof *grown);
        if (!grown)
            return;
        d->blocks = grown;
        d->capblocks = cap;
    }
    tlog_slot *block = calloc(n, sizeof *block);
    if (!block)
        return;
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
}

/* Caller holds the device lock. */
static tlog_slot *pool_take(tlog_device *d)
{
    if (!d->free)
        pool_grow(d);
    tlog_slot *s = d->free;
    if (!s)
        return NULL;
    if (slot_markers(d, s) != TLOG_OK)
        return NULL;
    d->free = s->next;
    d->nfree--;
    s->next = s->prev = NULL;
    atomic_store_explicit(&s->state, (slot_gen(s) + 1) << 8 | SLOT_OPEN, memory_order_relaxed);
    return s;
}

/* Caller holds the device lock. A slot whose markers misbehaved gets new
 * ones when next taken. */
static void pool_put(tlog_device *d, tlog_slot *s, bool markers_bad)
{
    if (markers_bad) {
        if (s->begin)
            d->ops->marker_destroy(d->impl, s->begin);
        if (s->end)
            d->ops->marker_destroy(d->impl, s->end);
        s->begin = s->end = 0;
    }
    s->fdev = NULL;
    s->queue = NULL;
    slot_set(s, SLOT_FREE);
    s->prev = NULL;
    s->next = d->free;
    d->free = s;
    d->nfree++;
}

/* ------------------------------------------------------------------------ */
/* Queues                                                                   */
/* ------------------------------------------------------------------------ */

/* Caller holds the device lock. */
static dqueue *queue_for(tlog_device *d, void *handle)
{
    if (d->last_queue && d->last_queue->handle == handle)
        return d->last_queue;
    for (size_t i = 0; i < d->nqueues; i++)
        if (d->queues[i]->handle == handle)
            return d->last_queue = d->queues[i];
    if (d->nqueues == d->capqueues) {
        size_t cap = d->capqueues ? d->capqueues * 2 : 8;
        dqueue **grown = realloc(d->queues, cap * sizeof *grown);
        if (!grown)
            return NULL;
        d->queues = grown;
        d->capqueues = cap;
    }
    dqueue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->handle = handle;
    q->number = (uint32_t)d->nqueues + 1;
    d->queues[d->nqueues++] = q;
    return d->last_queue = q;
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

static void queue_remove(dqueue *q, tlog_slot *s)
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
static const tlog_site *launch_site_for(tlog_device *d, const tlog_site *site)
{
    if (d->nlaunch * 2 >= d->launch_mask) {
        size_t cap = d->launch_mask ? (d->launch_mask + 1) * 2 : 64;
        const tlog_site **keys = calloc(cap, sizeof *keys), **vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return NULL;
        }
        for (size_t i = 0; d->launch_mask && i <= d->launch_mask; i++) {
            if (!d->launch_keys[i])
                continue;
            size_t j = ((uintptr_t)d->launch_keys[i] >> 4) & (cap - 1);
            while (keys[j])
                j = (j + 1) & (cap - 1);
            keys[j] = d->launch_keys[i];
            vals[j] = d->launch_vals[i];
        }
        free(d->launch_keys);
        free(d->launch_vals);
        d->launch_keys = keys;
        d->launch_vals = vals;
        d->launch_mask = cap - 1;
    }
    size_t j = ((uintptr_t)site >> 4) & d->launch_mask;
    for (; d->launch_keys[j]; j = (j + 1) & d->launch_mask)
        if (d->launch_keys[j] == site)
            return d->launch_vals[j];
    char name[TLOG_NAME_MAX * 4];
    snprintf(name, sizeof name, "Launch \"%s\"", site->name ? site->name : "?");
    const tlog_site *ls =
        tlog_site_intern(name, site->file, site->function, site->line, site->level);
    if (ls) {
        d->launch_keys[j] = site;
        d->launch_vals[j] = ls;
        d->nlaunch++;
    }
    return ls;
}

/* ------------------------------------------------------------------------ */
/* Recording                                                                */
/* ------------------------------------------------------------------------ */

static void report_once(tlog_device *d, int code, const char *what)
{
    tlog_report_(d->log, NULL, code, NULL, "device %s: %s", d->name, what);
}

/* Takes a slot for a scope launched under `tok`; counts why not. */
static tlog_slot *slot_for_scope(tlog_device *d, tlog_thread *t, const tlog_token *tok)
{
    tlog_devices *ds = d->devs;
    pthread_mutex_lock(&ds->lock);
    tlog_fdev *f = fdev_for(d->log, t, tok);
    tlog_slot *s = f ? pool_take(d) : NULL;
    bool warn = false;
    if (s) {
        s->fdev = f;
        f->refs++;
        atomic_fetch_add_explicit(&f->outstanding, 1, memory_order_relaxed);
    } else if (f) {
        warn = !d->warned_full;
        d->warned_full = true;
    }
    pthread_mutex_unlock(&ds->lock);
    if (!s && f) {
        DCOUNT(d, dropped, 1);
        if (warn)
            report_once(d, TLOG_EFULL,
                        "all device scopes in flight (max_scopes) or no memory for "
                        "markers: new device scopes are dropped and counted until "
                        "some resolve");
    } else if (!f) {
        DCOUNT(d, outside, 1);
        report_once(d, TLOG_ELATE, "a device scope began after its frame ended; not timed");
    }
    return s;
}

/* Gives back a slot whose begin marker was never recorded. */
static void slot_cancel(tlog_device *d, tlog_slot *s)
{
    pthread_mutex_lock(&d->devs->lock);
    atomic_fetch_sub_explicit(&s->fdev->outstanding, 1, memory_order_release);
    fdev_unref(s->fdev);
    pool_put(d, s, false);
    pthread_mutex_unlock(&d->devs->lock);
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

tlog_device_scope tlog_device_begin(tlog_device *d, void *queue, const tlog_site *site)
{
    tlog_device_scope none = {NULL, 0};
    if (!d || !site ||
        site->level > atomic_load_explicit(&d->log->level, memory_order_relaxed))
        return none;
    tlog_thread *t = tlog_thread_get_(d->log);
    if (!t)
        return none;
    const tlog_site *row = NULL;
    if (d->flags & TLOG_DEVICE_LAUNCH_ROWS) {
        pthread_mutex_lock(&d->devs->lock);
        row = launch_site_for(d, site);
        pthread_mutex_unlock(&d->devs->lock);
        if (row && tlog_thread_depth_(t))
            tlog_log_begin(d->log, row);
        else
            row = NULL;
    }
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
    if (!s) {
        if (row)
            tlog_log_end(d->log, row);
        return none;
    }
    s->site = site;
    s->launch_site = launcher;
    s->launch_seq = tok.scope;
    s->launch_row = row;
    s->thread = t;
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
    uint64_t open = scope->gen_ << 8 | SLOT_OPEN;
    scope->slot_ = NULL;
    if (!atomic_compare_exchange_strong(&s->state, &open, scope->gen_ << 8 | SLOT_ENDING))
        return TLOG_ENOTOPEN;
    tlog_device *d = s->dev;
    /* Once listed, a resolver may recycle the slot at any moment. */
    const tlog_site *row = s->launch_row, *site = s->site;
    bool here = s->thread == tlog_thread_peek_(d->log);
    void *handle = s->handle;
    int rc = d->ops->record(d->impl, handle, s->end);
    pthread_mutex_lock(&d->devs->lock);
    dqueue *q = queue_for(d, handle);
    if (q) {
        s->queue = q;
        s->probe = rc == TLOG_OK ? s->end : s->begin;
        slot_set(s, rc == TLOG_OK ? SLOT_PENDING : SLOT_FAILED);
        queue_append(q, s);
    }
    pthread_mutex_unlock(&d->devs->lock);
    DCOUNT(d, pending, 1);
    if (!q) {
        /* No memory for the queue's list: nothing can ever read this slot
         * again, so its markers are retired rather than reused. */
        pthread_mutex_lock(&d->devs->lock);
        tlog_drow lost = {.site = s->site, .unresolved = true, .place = TLOG_DROW_LAUNCHER,
                          .target_seq = s->launch_seq, .launch_seq = s->launch_seq,
                          .launch_here = true, .device = d->name};
        fdev_add_row(s->fdev, &lost);
        atomic_fetch_sub_explicit(&s->fdev->outstanding, 1, memory_order_release);
        fdev_unref(s->fdev);
        pool_put(d, s, true);
        pthread_mutex_unlock(&d->devs->lock);
        atomic_fetch_sub_explicit(&d->stats.pending, 1, memory_order_relaxed);
        DCOUNT(d, unresolved, 1);
        rc = TLOG_ENOMEM;
    }
    if (rc != TLOG_OK && rc != TLOG_ENOMEM)
        refused(d, rc, site);
    if (row && here)
        tlog_log_end(d->log, row);
    return rc == TLOG_OK ? TLOG_OK : rc == TLOG_ECAPTURE ? TLOG_ECAPTURE
                         : rc == TLOG_ENOMEM ? rc : TLOG_EDEVICE;
}

/* ------------------------------------------------------------------------ */
/* Host timeline                                                            */
/* ------------------------------------------------------------------------ */

static int64_t ns_to_ticks(tlog_log *log, int64_t ns)
{
    double t = (double)ns / tlog_ns_per_tick_(log);
    return (int64_t)(t < 0 ? t - 0.5 : t + 0.5);
}

/* A reached marker's host time: the anchor's host time plus the device time
 * between them. Anchors are renewed every frame, so the device clock's drift
 * against the host's (tens of ppm) stays far below a microsecond. Caller
 * holds the poll lock. */
static int place(tlog_device *d, tlog_marker m, tlog_ticks *out)
{
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
    return atomic_load_explicit(&d->log->stats.frames_completed, memory_order_relaxed);
}

static void anchor_swap(tlog_device *d)
{
    anchor old = d->cur;
    d->cur = d->fresh;
    d->fresh = old;
    d->fresh.valid = false;
    d->fresh_pending = false;
}

/* Blocking: at registration and in the forced sync, right after the device
 * was busy (a device left idle answers late, which widens the window). */
static int anchor_now(tlog_device *d, uint64_t timeout_ns)
{
    if (d->fresh_pending) {
        /* Never re-record a marker that may still be in flight. */
        int rc = d->ops->wait(d->impl, d->fresh.marker, timeout_ns);
        if (rc != TLOG_OK)
            return rc;
        d->fresh_pending = false;
    }
    tlog_ticks t0 = tlog_now(d->log);
    int rc = d->ops->record_own(d->impl, d->fresh.marker);
    if (rc == TLOG_OK)
        rc = d->ops->wait(d->impl, d->fresh.marker, timeout_ns);
    tlog_ticks t1 = tlog_now(d->log);
    if (rc != TLOG_OK)
        return rc;
    d->fresh.host = t0 + (t1 - t0) / 2;
    d->fresh.valid = true;
    anchor_swap(d);
    d->anchor_frame = frames_completed(d);
    return TLOG_OK;
}

/* Non-blocking, once per frame: a marker on the backend's idle queue, placed
 * at the time it was submitted; it replaces the anchor once reached. */
static void anchor_refresh(tlog_device *d)
{
    if (d->fresh_pending) {
        int rc = d->ops->query(d->impl, d->fresh.marker);
        DCOUNT(d, queries, 1);
        if (rc == TLOG_OK)
            anchor_swap(d);
        else if (rc != TLOG_PENDING)
            d->fresh_pending = false;
        return;
    }
    uint64_t frames = frames_completed(d);
    if (d->cur.valid && frames == d->anchor_frame)
        return;
    tlog_ticks t0 = tlog_now(d->log);
    int rc = d->ops->record_own(d->impl, d->fresh.marker);
    tlog_ticks t1 = tlog_now(d->log);
    if (rc != TLOG_OK)
        return;
    d->fresh.host = t0 + (t1 - t0) / 2;
    d->fresh.valid = true;
    d->fresh_pending = true;
    d->anchor_frame = frames;
}

/* ------------------------------------------------------------------------ */
/* Resolving                                                                */
/* ------------------------------------------------------------------------ */

enum poll_mode {
    POLL_SYNC,    /* a sync scope: any frame; rows go under the sync scope */
    POLL_IDLE,    /* a readiness check: completed frames; rows under launchers */
    POLL_FORCED,  /* the forced sync: completed frames; what is left is lost */
    POLL_FINAL    /* the device goes: any frame; what is left is lost */
};

typedef struct poll_ctx {
    int mode;
    tlog_fdev *fdev;            /* POLL_SYNC: the sync scope's frame */
    uint32_t seq;               /* POLL_SYNC: the sync scope */
    tlog_ticks forced_start, forced_end;
    const tlog_site *why;       /* POLL_FORCED: titles the row */
    size_t unresolved;
    /* Errors seen, reported once the poll lock is released (the error
     * callback may call the library). */
    struct {
        size_t count;
        int code;
        const char *device, *site, *what;
    } err;
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

static bool gives_up(const poll_ctx *c)
{
    return c->mode == POLL_FORCED || c->mode == POLL_FINAL;
}

/* Caller holds the device lock. */
static bool eligible(const poll_ctx *c, const tlog_slot *s)
{
    int st = slot_state(s);
    if (st == SLOT_ZOMBIE || c->mode == POLL_SYNC || c->mode == POLL_FINAL)
        return true;
    return atomic_load_explicit(&s->fdev->completed, memory_order_acquire);
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

static void report_errors(tlog_log *log, const poll_ctx *c)
{
    if (c->err.count)
        tlog_report_(log, NULL, TLOG_EDEVICE, NULL,
                     "device %s: %s of \"%s\" failed (%s); %zu interval(s) shown "
                     "unresolved",
                     c->err.device, c->err.what, c->err.site, tlog_strerror(c->err.code),
                     c->err.count);
}

static void timing_of(tlog_device *d, tlog_slot *s, poll_ctx *c, outcome *o)
{
    int rc = d->ops->elapsed_ns(d->impl, s->begin, s->end, &o->ns);
    if (rc == TLOG_OK)
        rc = place(d, s->begin, &o->start);
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
    int rc = d->ops->query(d->impl, s->probe);
    DCOUNT(d, queries, 1);
    if (st == SLOT_ZOMBIE) {
        o->action = rc == TLOG_PENDING ? SKIP : RECYCLE;
        o->retire = rc != TLOG_OK && rc != TLOG_PENDING;
        return;
    }
    if (rc == TLOG_PENDING) {
        if (!gives_up(c)) {
            o->action = STOP;   /* queues run in order: the rest are later */
            return;
        }
        o->unresolved = o->keep = true;
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

static uint8_t place_of(int mode)
{
    return mode == POLL_SYNC ? TLOG_DROW_SYNC
         : mode == POLL_FORCED ? TLOG_DROW_FORCED : TLOG_DROW_LAUNCHER;
}

/* Hands one interval to its frame. Caller holds the device lock. */
static void deliver(tlog_device *d, const outcome *o, poll_ctx *c)
{
    tlog_slot *s = o->slot;
    tlog_fdev *target = c->mode == POLL_SYNC ? c->fdev : s->fdev;
    tlog_drow row = {
        .site = s->site,
        .launch_site = s->launch_site,
        .device = d->name,
        .start = o->start,
        .end = o->start + (tlog_ticks)ns_to_ticks(d->log, o->ns),
        .target_seq = c->mode == POLL_SYNC ? c->seq : s->launch_seq,
        .launch_seq = s->launch_seq,
        .queue = s->queue->number,
        .place = place_of(c->mode),
        .launch_here = target == s->fdev,
        .unresolved = o->unresolved,
    };
    if (o->unresolved)
        row.start = row.end = c->mode == POLL_FORCED ? c->forced_start : 0;
    if (target->closed)
        DCOUNT(d, late, 1);
    fdev_add_row(target, &row);
    if (c->mode == POLL_FORCED && !target->closed) {
        target->forced = true;
        target->forced_start = c->forced_start;
        target->forced_end = c->forced_end;
        target->forced_site = c->why;
    }
    atomic_fetch_sub_explicit(&s->fdev->outstanding, 1, memory_order_release);
    fdev_unref(s->fdev);
    s->fdev = NULL;
    atomic_fetch_sub_explicit(&d->stats.pending, 1, memory_order_relaxed);
    if (o->unresolved) {
        DCOUNT(d, unresolved, 1);
        c->unresolved++;
    } else {
        DCOUNT(d, resolved, 1);
    }
}

/* Caller holds the device lock. */
static void apply(tlog_device *d, const outcome *o, poll_ctx *c)
{
    tlog_slot *s = o->slot;
    if (o->action == SKIP || o->action == STOP)
        return;
    if (o->action == DELIVER)
        deliver(d, o, c);
    if (o->keep) {
        slot_set(s, SLOT_ZOMBIE);
        return;
    }
    queue_remove(s->queue, s);
    pool_put(d, s, o->retire);
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
        pthread_mutex_lock(&d->devs->lock);
        tlog_slot *s = from ? from : q->head;
        for (; s && n < POLL_BATCH; s = s->next)
            if (eligible(c, s))
                batch[n++] = s;
        from = s;
        pthread_mutex_unlock(&d->devs->lock);
        more = from != NULL;
        for (size_t i = 0; i < n; i++) {
            examine(d, batch[i], c, &out[i]);
            if (out[i].action == STOP) {
                n = i;
                more = false;
            }
        }
        pthread_mutex_lock(&d->devs->lock);
        for (size_t i = 0; i < n; i++)
            apply(d, &out[i], c);
        pthread_mutex_unlock(&d->devs->lock);
    }
}

/* Queue i, or NULL past the last. Queues are only ever added (the array may
 * move as it grows; a queue never does). */
static dqueue *queue_at(tlog_device *d, size_t i)
{
    pthread_mutex_lock(&d->devs->lock);
    dqueue *q = i < d->nqueues ? d->queues[i] : NULL;
    pthread_mutex_unlock(&d->devs->lock);
    return q;
}

/* Caller holds the poll lock. */
static void poll_device(tlog_device *d, poll_ctx *c)
{
    dqueue *q;
    for (size_t i = 0; (q = queue_at(d, i)) != NULL; i++)
        poll_queue(d, q, c);
}

void tlog_devices_poll_(tlog_log *log)
{
    tlog_devices *ds = devices_of(log);
    if (!ds)
        return;
    poll_ctx c = {.mode = POLL_IDLE};
    pthread_mutex_lock(&ds->poll_lock);
    for (tlog_device *d = ds->list; d; d = d->next_device) {
        anchor_refresh(d);
        poll_device(d, &c);
    }
    pthread_mutex_unlock(&ds->poll_lock);
    report_errors(log, &c);
}

/* ------------------------------------------------------------------------ */
/* Sync scopes                                                              */
/* ------------------------------------------------------------------------ */

static void resolve_at_sync(tlog_log *log, tlog_devices *ds, tlog_device *only,
                            tlog_thread *t, const tlog_token *tok)
{
    poll_ctx c = {.mode = POLL_SYNC, .seq = tok->scope};
    pthread_mutex_lock(&ds->poll_lock);
    pthread_mutex_lock(&ds->lock);
    tlog_fdev *f = fdev_for(log, t, tok);
    if (f)
        f->refs++;
    pthread_mutex_unlock(&ds->lock);
    if (f) {
        c.fdev = f;
        for (tlog_device *d = ds->list; d; d = d->next_device) {
            if (only && d != only)
                continue;
            anchor_refresh(d);
            poll_device(d, &c);
        }
        pthread_mutex_lock(&ds->lock);
        fdev_unref(f);
        pthread_mutex_unlock(&ds->lock);
    }
    pthread_mutex_unlock(&ds->poll_lock);
    report_errors(log, &c);
}

void tlog_sync_end(tlog_device *dev, const tlog_site *site)
{
    tlog_log *log = dev ? dev->log : tlog_default();
    if (!log || !site)
        return;
    tlog_thread *t = tlog_thread_peek_(log);
    if (!t) {
        tlog_log_end(log, site);   /* reports the unmatched end */
        return;
    }
    /* The scope is the application's wait: it ends before the resolving. */
    tlog_ticks now = tlog_read_clock_(t);
    tlog_devices *ds = devices_of(log);
    const tlog_site *inner = NULL;
    tlog_token tok = tlog_thread_token_(t, log, &inner);
    if (ds && tok.thread)
        resolve_at_sync(log, ds, dev, t, &tok);
    tlog_thread_end_at_(t, site, now);
}

/* ------------------------------------------------------------------------ */
/* The forced sync                                                          */
/* ------------------------------------------------------------------------ */

static const tlog_site sync_site = {"Forced sync \"tlog_sync\"", __FILE__, "tlog_sync",
                                    __LINE__, TLOG_LEVEL_COARSE};

/* The next listed slot from `s` (NULL: the head) that the forced sync waits
 * for, with the marker to wait on. */
static tlog_slot *next_to_wait(tlog_device *d, dqueue *q, tlog_slot *s, tlog_marker *m)
{
    pthread_mutex_lock(&d->devs->lock);
    s = s ? s->next : q->head;
    for (; s; s = s->next) {
        int st = slot_state(s);
        if (st != SLOT_ZOMBIE && atomic_load(&s->fdev->completed)) {
            *m = s->probe;
            break;
        }
    }
    pthread_mutex_unlock(&d->devs->lock);
    return s;
}

/* Waits for every completed frame's intervals on `d`. False once the
 * deadline has passed. */
static bool wait_device(tlog_device *d, int64_t deadline, bool *waited)
{
    dqueue *q;
    for (size_t i = 0; (q = queue_at(d, i)) != NULL; i++) {
        tlog_marker m = 0;
        for (tlog_slot *s = next_to_wait(d, q, NULL, &m); s; s = next_to_wait(d, q, s, &m)) {
            *waited = true;
            int rc = d->ops->query(d->impl, m);
            DCOUNT(d, queries, 1);
            if (rc != TLOG_PENDING)
                continue;
            int64_t left = deadline - tlog_mono_ns_();
            if (left <= 0)
                return false;
            rc = d->ops->wait(d->impl, m, (uint64_t)left);
            DCOUNT(d, waits, 1);
            if (rc == TLOG_ETIMEDOUT)
                return false;
        }
    }
    return true;
}

static int forced_sync(tlog_log *log, const tlog_site *why)
{
    tlog_devices *ds = devices_of(log);
    if (!ds)
        return TLOG_OK;
    uint64_t timeout = log->cfg.sync_timeout_ns;
    pthread_mutex_lock(&ds->poll_lock);
    tlog_ticks t0 = tlog_now(log);
    int64_t deadline = tlog_mono_ns_() + (int64_t)timeout;
    bool in_time = true;
    for (tlog_device *d = ds->list; d && in_time; d = d->next_device) {
        bool waited = false;
        in_time = wait_device(d, deadline, &waited);
        if (in_time && waited)
            anchor_now(d, ANCHOR_TIMEOUT_NS);
    }
    poll_ctx c = {.mode = POLL_FORCED, .forced_start = t0, .forced_end = tlog_now(log),
                  .why = why};
    for (tlog_device *d = ds->list; d; d = d->next_device)
        poll_device(d, &c);
    pthread_mutex_unlock(&ds->poll_lock);
    report_errors(log, &c);
    if (in_time && !c.unresolved)
        return TLOG_OK;
    if (!in_time)
        tlog_report_(log, NULL, TLOG_ETIMEDOUT, NULL,
                     "forced sync gave up after %.3f s: %zu device interval(s) never "
                     "completed and are shown unresolved",
                     (double)timeout / 1e9, c.unresolved);
    return in_time ? TLOG_EDEVICE : TLOG_ETIMEDOUT;
}

int tlog_sync(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    return log ? forced_sync(log, &sync_site) : TLOG_ENOMEM;
}

void tlog_device_settle_(tlog_frame *f, const tlog_site *why)
{
    if (!tlog_device_frame_ready_(f))
        forced_sync(f->log, why);
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The median reading of an empty scope on the backend's own queue, kept busy
 * first so that the host's submission gaps do not show. */
static int calibrate(tlog_device *d)
{
    const tlog_device_ops *ops = d->ops;
    tlog_marker m[2 * CALIBRATION_PAIRS] = {0};
    int64_t ns[CALIBRATION_PAIRS];
    int rc = TLOG_OK;
    for (int i = 0; i < 2 * CALIBRATION_PAIRS && rc == TLOG_OK; i++)
        rc = ops->marker_create(d->impl, &m[i]);
    if (rc == TLOG_OK && ops->enqueue_busy)
        rc = ops->enqueue_busy(d->impl, 200000);
    for (int i = 0; i < CALIBRATION_PAIRS && rc == TLOG_OK; i++) {
        rc = ops->record_own(d->impl, m[2 * i]);
        if (rc == TLOG_OK && ops->enqueue_empty)
            rc = ops->enqueue_empty(d->impl);
        if (rc == TLOG_OK)
            rc = ops->record_own(d->impl, m[2 * i + 1]);
    }
    if (rc == TLOG_OK)
        rc = ops->wait(d->impl, m[2 * CALIBRATION_PAIRS - 1], CALIBRATION_TIMEOUT_NS);
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
           ops->query &&
           ops->wait && ops->elapsed_ns;
}

static int config_of(const tlog_device_config *in, tlog_device *d)
{
    tlog_device_config cfg = {0};
    if (in) {
        size_t n = in->size ? in->size : sizeof *in;
        if (n < sizeof(size_t))
            return TLOG_EINVAL;
        memcpy(&cfg, in, n < sizeof cfg ? n : sizeof cfg);
    }
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
    free(d->launch_keys);
    free(d->launch_vals);
    free(d);
}

int tlog_device_register_(tlog_log *log, const tlog_device_ops *ops, void *impl,
                          const char *name, const tlog_device_config *config,
                          tlog_device **out)
{
    if (!out || !ops_valid(ops))
        return TLOG_EINVAL;
    *out = NULL;
    log = tlog_resolve_log_(log);
    tlog_devices *ds = log ? devices_make(log) : NULL;
    const tlog_site *interned =
        tlog_site_intern(name ? name : ops->backend, "", "", 0, TLOG_LEVEL_COARSE);
    tlog_device *d = calloc(1, sizeof *d);
    if (!ds || !interned || !d) {
        free(d);
        return TLOG_ENOMEM;
    }
    d->log = log;
    d->devs = ds;
    d->ops = ops;
    d->impl = impl;
    d->name = interned->name;
    int rc = config_of(config, d);
    if (rc == TLOG_OK)
        rc = ops->marker_create(impl, &d->cur.marker);
    if (rc == TLOG_OK)
        rc = ops->marker_create(impl, &d->fresh.marker);
    if (rc == TLOG_OK)
        rc = calibrate(d);
    if (rc == TLOG_OK)
        rc = anchor_now(d, CALIBRATION_TIMEOUT_NS);
    if (rc != TLOG_OK) {
        free_markers(d);
        free(d);
        return rc;
    }
    pthread_mutex_lock(&ds->poll_lock);
    pthread_mutex_lock(&ds->lock);
    d->next_device = ds->list;
    ds->list = d;
    pthread_mutex_unlock(&ds->lock);
    pthread_mutex_unlock(&ds->poll_lock);
    *out = d;
    return TLOG_OK;
}

void *tlog_device_impl_(const tlog_device *d)
{
    return d ? d->impl : NULL;
}

/* Caller holds both locks. */
static void unlink_device(tlog_devices *ds, tlog_device *d)
{
    for (tlog_device **p = &ds->list; *p; p = &(*p)->next_device)
        if (*p == d) {
            *p = d->next_device;
            break;
        }
}

void tlog_device_destroy(tlog_device *d)
{
    if (!d)
        return;
    tlog_devices *ds = d->devs;
    pthread_mutex_lock(&ds->poll_lock);
    poll_ctx c = {.mode = POLL_FINAL};
    poll_device(d, &c);
    pthread_mutex_lock(&ds->lock);
    unlink_device(ds, d);
    pthread_mutex_unlock(&ds->lock);
    pthread_mutex_unlock(&ds->poll_lock);
    report_errors(d->log, &c);
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
    while (ds->list)
        tlog_device_destroy(ds->list);
    pthread_mutex_destroy(&ds->lock);
    pthread_mutex_destroy(&ds->poll_lock);
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
    pthread_mutex_lock(&d->devs->lock);
    info.pool_scopes = d->nslots;
    info.pool_free = d->nfree;
    pthread_mutex_unlock(&d->devs->lock);
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
