/*
 * The device layer's shared state, between device.c (registry, pool,
 * recording, devices) and device_sync.c (reading markers: anchors, polls,
 * sync scopes, the forced sync). Reading a marker only delivers its interval
 * to the frame that launched it; where the interval shows is decided when
 * that frame is resolved. Not installed.
 */
#ifndef TIMERLOG_DEVICE_IMPL_H
#define TIMERLOG_DEVICE_IMPL_H

#include "device.h"
#include "internal.h"
#include "clock.h"
#include "fork.h"
#include "frame.h"
#include "log.h"
#include "map.h"
#include "record.h"
#include "subscribe.h"
#include "upcalls.h"

/*
 * A slot's life: FREE -> OPEN (begun) -> ENDING -> PENDING (listed on its
 * queue; FAILED if the end marker was refused) -> back to FREE once read.
 * ZOMBIE: delivered unresolved but still in flight, listed until it
 * completes. DONE: delivered while a forced sync waits on it; listed until
 * that sync lets go.
 */
enum slot_state {
    SLOT_FREE, SLOT_OPEN, SLOT_ENDING, SLOT_PENDING, SLOT_FAILED, SLOT_ZOMBIE, SLOT_DONE
};

typedef struct dqueue dqueue;

typedef struct tlog_slot {
    struct tlog_slot *next, *prev;  /* free list, or its queue's pending list */
    tlog_device *dev;
    tlog_marker begin, end;         /* 0 once destroyed after an error */
    tlog_marker probe;              /* the last marker recorded: end, or
                                     * begin if the end was refused */
    _Atomic uint64_t state;         /* generation << 8 | slot_state */
    const tlog_site *site;
    const tlog_site *launch_site;   /* the launching scope's */
    tlog_token launcher;            /* the launching scope */
    tlog_ticks launch;              /* host clock when the scope began */
    void *handle;                   /* the queue it was recorded on */
    dqueue *queue;
    tlog_frame *frame;              /* the launching frame, referenced */
    uint64_t sync_epoch;            /* the last forced sync that took it on */
    bool retire;                    /* its markers misbehaved: when it is
                                     * recycled, they go (kept listed, done,
                                     * while a forced sync held it) */
} tlog_slot;

struct dqueue {
    void *key;                      /* ops->queue_key of the handle */
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
    bool listed;                    /* in devs->list: its locks are needed */
    tlog_log *log;
    tlog_devices *devs;
    const tlog_device_ops *ops;
    void *impl;
    const char *name;               /* interned */
    uint64_t serial;                /* 1, 2, ... per process: sync scopes
                                     * bound to it name it by this */
    unsigned flags;
    uint32_t max_scopes, batch;
    int64_t empty_ns;

    /* Guarded by the device lock. */
    tlog_slot *free;
    tlog_slot *bare;                /* slots whose markers were let go after
                                     * an error: remade by the next refill */
    struct slot_block { tlog_slot *slots; uint32_t n; } *blocks;
    size_t nblocks, capblocks;
    uint32_t nslots, nfree;
    dqueue **queues;
    size_t nqueues, capqueues;
    uint32_t queues_made;           /* numbers queues, 1-based */
    dqueue *last_queue;
    tlog_map launch_map;            /* a device scope's site -> the place of
                                     * its `Launch` site in launch_sites */
    const tlog_site **launch_sites;
    size_t nlaunch, caplaunch;
    bool warned_full, warned_no_memory;
    bool fill_failed;               /* the pool could not grow for lack of
                                     * memory since the last drop reported it */

    /* Guarded by the poll lock. */
    anchor cur, fresh;          /* fresh: recorded, not yet reached */
    bool fresh_pending;
    bool fresh_discard;             /* taken in too wide a window: not used */
    uint64_t anchor_frame;          /* frames completed when last anchored */
    bool forced_waited;             /* the forced sync waited here (force lock) */

    struct {
        _Atomic uint64_t scopes, dropped, outside, captured, failed, resolved,
            unresolved, pending, queries, waits, late;
    } stats;
};

struct tlog_devices {
    pthread_mutex_t lock;
    pthread_mutex_t poll_lock;
    pthread_mutex_t force_lock;     /* one forced sync at a time */
    tlog_device *list;
    uint64_t epoch;                 /* forced syncs so far (device lock) */
    _Atomic uint64_t wait_epoch;    /* the forced sync waiting now, or 0 */

    /* The marker maker: a thread that refills pools running low, so that
     * no device scope's begin makes a marker. Guarded by the device lock. */
    pthread_cond_t maker_wake;
    pthread_t maker;
    bool maker_running, maker_wanted, maker_stop;
};

#define DCOUNT(dev, field, n) \
    atomic_fetch_add_explicit(&(dev)->stats.field, (n), memory_order_relaxed)

static inline int slot_state(const tlog_slot *s)
{
    return (int)(atomic_load_explicit(&((tlog_slot *)s)->state, memory_order_acquire) & 0xff);
}

static inline uint64_t slot_gen(const tlog_slot *s)
{
    return atomic_load_explicit(&((tlog_slot *)s)->state, memory_order_relaxed) >> 8;
}

static inline void slot_set(tlog_slot *s, int state)
{
    atomic_store_explicit(&s->state, slot_gen(s) << 8 | (uint64_t)state, memory_order_release);
}

static inline tlog_devices *devices_of(tlog_log *log)
{
    return atomic_load_explicit(&log->devices, memory_order_acquire);
}

/* Debug builds: the caller holds `which` (lock or poll_lock) of d's
 * devices, as a function that needs it asserts at its top. A device not yet
 * in its log's list is known only to the thread registering it, which needs
 * no lock. */
#define tlog_assert_device_held_(d, which)                                   \
    assert(!(d)->listed || tlog_lock_held_(&(d)->devs->which))

/* device.c; callers hold the device lock. */
TLOG_INTERNAL void tlog_pool_put_locked_(tlog_device *d, tlog_slot *s, bool markers_bad);
/* Remakes the markers of bare slots, then adds a batch of slots with their
 * markers made when the pool is low. Caller holds the poll lock, not the
 * device lock. */
TLOG_INTERNAL void tlog_pool_refill_locked_(tlog_device *d);
/* The device goes: scopes begun and never ended show unresolved in their
 * frames, which they let go. Caller holds the device lock. */
TLOG_INTERNAL void tlog_pool_abandon_open_locked_(tlog_device *d);
/* The row of slot `s`'s interval, without a timing: shown at its launch,
 * on the slot's queue (none yet: no key). */
TLOG_INTERNAL tlog_drow tlog_slot_row_(const tlog_device *d, const tlog_slot *s);
/* Gives the slot's frame its row, then lets the frame go (it waits for one
 * interval fewer): tlog_frame_add_row_'s result. */
TLOG_INTERNAL int tlog_slot_deliver_(tlog_slot *s, const tlog_drow *row);
TLOG_INTERNAL void tlog_dqueue_remove_(dqueue *q, tlog_slot *s);
/* Frees queues with nothing pending when there are many (streams made per
 * frame would otherwise slow every poll). Caller holds both locks. */
TLOG_INTERNAL void tlog_dqueues_prune_locked_(tlog_device *d);

/* device_sync.c */
/* Anchors the device clock to the host's, waiting at most timeout_ns.
 * Caller holds the poll lock, or owns a device not yet registered. */
TLOG_INTERNAL int tlog_anchor_now_locked_(tlog_device *d, uint64_t timeout_ns);
/* ops->wait, or polling ops->query where the backend has no wait. */
TLOG_INTERNAL int tlog_marker_wait_(tlog_device *d, tlog_marker m, uint64_t timeout_ns);
/* Resolves what the device can still give, marks the rest unresolved, and
 * takes the device out of its log's list. */
TLOG_INTERNAL void tlog_device_retire_(tlog_device *d);

#endif
