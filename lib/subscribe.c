/*
 * Subscribers: callbacks told of scopes, frames and device intervals as they
 * happen.
 *
 * A log's subscribers are an immutable list published through one atomic
 * pointer; registering or unregistering publishes a new list. Readers mark
 * themselves busy in a per-thread slot while they use a list, so that
 * tlog_unsubscribe can wait until no thread still calls the callback it
 * removed. Slots are never freed (a thread's slot is reused after it exits),
 * so the unsubscriber can scan them without any lock a callback might need.
 * Old lists are freed by the next unsubscribe that waits for readers, or
 * with the log: a reader never touches freed memory.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fence.h"
#include "fork.h"
#include "log.h"
#include "record.h"
#include "site.h"
#include "subscribe.h"

struct tlog_subscription {
    tlog_log *log;
    tlog_subscriber cb;
    uint64_t serial;          /* 1, 2, ... per log, in order of registration */
    atomic_bool gone;         /* unsubscribed: never call it again */
    tlog_subscription *next_kept; /* freed with the log (log->subs.kept) */
};

struct tlog_sublist {
    tlog_sublist *retired_next;
    size_t n;
    tlog_subscription *subs[];   /* by serial, ascending */
};

_Atomic int tlog_subscribed_;

/* ------------------------------------------------------------------------ */
/* Busy slots                                                               */
/* ------------------------------------------------------------------------ */

/* The sites a thread reported, by address, in an open-addressed table at
 * most half full: it starts as the slot's own SITE_CACHE entries and
 * doubles up to SITE_CACHE_MAX, so that a thread takes each site's entry
 * (under the site table's lock) once, not again each time sites that share
 * a place take turns. Past that size, or when memory runs out, the table
 * starts again empty, its sites' blocks handed back. */
#define SITE_CACHE 64
#define SITE_CACHE_MAX 4096

/* Instance numbers a thread takes from a site at a time: the site's shared
 * counter is written once per block, not once per begin. */
#define INSTANCE_BLOCK 64

/* One of a thread's sites: its id, and what is left of the block of
 * instance numbers the thread took from it (next up to limit). */
typedef struct site_cache {
    const tlog_site *site;   /* NULL: a free place */
    tlog_site_entry *entry;
    uint64_t id;
    uint64_t next, limit;
} site_cache;

/* One per thread that has reported events; `seq` is odd while it uses a
 * list. On its own cache lines: only its thread writes it. */
typedef struct busy_slot {
    _Atomic uint64_t seq;
    atomic_bool owned;
    struct busy_slot *next;
    site_cache *cache;        /* `first`, or a table that outgrew it */
    size_t cache_mask;        /* its places, less one */
    size_t cached;            /* its places in use */
    site_cache first[SITE_CACHE];
} __attribute__((aligned(64))) busy_slot;

static _Atomic(busy_slot *) slots;
static TLOG_TLS busy_slot *my_slot;
static pthread_key_t slot_key;
static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;
static bool slot_key_made;

static void release_slot(void *p)
{
    busy_slot *s = p;
    /* A thread ended inside a callback (pthread_exit, cancellation): it
     * reads no list any more, and the next owner starts outside. */
    if (atomic_load_explicit(&s->seq, memory_order_relaxed) & 1)
        atomic_fetch_add_explicit(&s->seq, 1, memory_order_release);
    my_slot = NULL;
    atomic_store_explicit(&s->owned, false, memory_order_release);
}

static void make_slot_key(void)
{
    slot_key_made = pthread_key_create(&slot_key, release_slot) == 0;
}

__attribute__((destructor)) static void delete_slot_key(void)
{
    if (slot_key_made)
        pthread_key_delete(slot_key);
}

/* In a forked child the other threads are gone: their slots are free, and
 * none of them reads a list any more. */
void tlog_subscribe_atfork_(int phase)
{
    if (phase != TLOG_FORK_CHILD)
        return;
    /* The parent's logs, with their subscribers, are left to it: the
     * child's scopes go the way of a process without any until a log of
     * its own has one. */
    atomic_store_explicit(&tlog_subscribed_, 0, memory_order_relaxed);
    for (busy_slot *s = atomic_load(&slots); s; s = s->next) {
        if (s == my_slot)
            continue;
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) & 1)
            atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed);
        atomic_store_explicit(&s->owned, false, memory_order_relaxed);
    }
}

static busy_slot *claim_free_slot(void)
{
    for (busy_slot *s = atomic_load(&slots); s; s = s->next) {
        bool expected = false;
        if (!atomic_load_explicit(&s->owned, memory_order_relaxed) &&
            atomic_compare_exchange_strong(&s->owned, &expected, true))
            return s;
    }
    busy_slot *s = tlog_aligned_alloc_(64, sizeof *s);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    s->cache = s->first;
    s->cache_mask = SITE_CACHE - 1;
    atomic_init(&s->seq, 0);
    atomic_init(&s->owned, true);
    s->next = atomic_load(&slots);
    while (!atomic_compare_exchange_weak(&slots, &s->next, s))
        ;
    return s;
}

static busy_slot *__attribute__((noinline)) first_slot(void)
{
    pthread_once(&slot_key_once, make_slot_key);
    busy_slot *s = claim_free_slot();
    if (s && slot_key_made)
        pthread_setspecific(slot_key, s);
    return my_slot = s;
}

static inline busy_slot *own_slot(void)
{
    busy_slot *s = my_slot;
    return TLOG_LIKELY(s != NULL) ? s : first_slot();
}

/* A thread's hold on a log's list while it calls subscribers. */
typedef struct reading {
    busy_slot *slot;
    tlog_sublist *list;
    uint64_t seq;             /* the slot's, odd */
    bool nested;              /* inside a callback already: the slot is busy */
} reading;

/* Marks the calling thread busy and takes the log's list; false when there
 * is nothing to report to. Inside a callback, only if `nested_ok`: what a
 * callback begins is not reported, so that callbacks never recurse. */
static inline __attribute__((always_inline)) bool enter(tlog_log *log, bool nested_ok,
                                                        reading *r)
{
    busy_slot *s = own_slot();
    if (!s)
        return false;
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    bool nested = seq & 1;
    if (nested && !nested_ok)
        return false;
    /* Ordered against the unsubscriber's publish-then-scan (its heavy
     * fence between them): either it sees this slot busy, or this thread
     * sees its new list. Only this thread writes its slot, so plain stores
     * do; no locked instruction on the recording thread. A nested reader is
     * covered by the busy mark of the outer one. */
    if (!nested) {
        atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
        tlog_fence_light_();
    }
    tlog_sublist *list = atomic_load_explicit(&log->subs.list, memory_order_acquire);
    *r = (reading){.slot = s, .list = list, .seq = seq | 1u, .nested = nested};
    if (!list && !nested)
        atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
    return list != NULL;
}

static inline void leave(const reading *r)
{
    if (!r->nested)
        atomic_store_explicit(&r->slot->seq, r->seq + 1, memory_order_release);
}

/* Waits until every other thread has left the lists it was using. */
static void wait_for_readers(void)
{
    tlog_fence_heavy_();   /* the light fences of readers now count */
    for (busy_slot *s = atomic_load(&slots); s; s = s->next) {
        if (s == my_slot)
            continue;
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_seq_cst);
        while ((seq & 1) && atomic_load_explicit(&s->seq, memory_order_acquire) == seq)
            sched_yield();
    }
}

static bool inside_callback(void)
{
    return my_slot && (atomic_load_explicit(&my_slot->seq, memory_order_relaxed) & 1);
}

/* ------------------------------------------------------------------------ */
/* Site ids and instance numbers                                            */
/* ------------------------------------------------------------------------ */

/* Where `site` is in the thread's table, or the free place where it
 * would go. */
static inline site_cache *cache_of(const busy_slot *s, const tlog_site *site)
{
    /* Sites lie at least 16 bytes apart, most often in arrays of them:
     * the bits from 16 up, with higher ones folded in against strides of a
     * power of two. */
    uintptr_t a = (uintptr_t)site;
    size_t mask = s->cache_mask, at = (size_t)((a >> 4) ^ (a >> 14)) & mask;
    while (s->cache[at].site != site && s->cache[at].site)
        at = (at + 1) & mask;
    return &s->cache[at];
}

/* Hands back what is left of the block `c` holds, if it is the last block
 * taken from its site: a site that one thread alone reports then counts
 * 1, 2, 3, ... even when it lost its place in the thread's table. */
static void give_back(site_cache *c)
{
    uint64_t last = c->limit - 1;
    if (c->entry && c->next < c->limit)
        atomic_compare_exchange_strong_explicit(&c->entry->reported, &last, c->next - 1,
                                                memory_order_relaxed, memory_order_relaxed);
}

/* Doubles the thread's table, its sites moved with their blocks; false
 * when it is as big as it gets or memory ran out. */
static bool grow_cache(busy_slot *s)
{
    size_t places = s->cache_mask + 1;
    if (places >= SITE_CACHE_MAX)
        return false;
    site_cache *old = s->cache, *grown = tlog_calloc_(2 * places, sizeof *grown);
    if (!grown)
        return false;
    s->cache = grown;
    s->cache_mask = 2 * places - 1;
    for (size_t i = 0; i < places; i++)
        if (old[i].site)
            *cache_of(s, old[i].site) = old[i];
    if (old != s->first)
        free(old);
    return true;
}

/* The place for `site`, not in the table: the free one cache_of found
 * while the table stays at most half full, grown if need be; a table as
 * big as it gets starts again, its sites' blocks handed back. */
static site_cache *place_for(busy_slot *s, const tlog_site *site, site_cache *free_place)
{
    if (2 * (s->cached + 1) > s->cache_mask + 1) {
        if (!grow_cache(s)) {
            for (size_t i = 0; i <= s->cache_mask; i++)
                give_back(&s->cache[i]);
            memset(s->cache, 0, (s->cache_mask + 1) * sizeof *s->cache);
            s->cached = 0;
        }
        free_place = cache_of(s, site);
    }
    s->cached++;
    return free_place;
}

/* Gives `c` (the place cache_of found for `site`) a fresh block of
 * instance numbers, taking the site's place first if it has none; the
 * place, or NULL if memory ran out. */
static site_cache *__attribute__((noinline)) refill(busy_slot *s, site_cache *c,
                                                     const tlog_site *site)
{
    if (c->site != site) {
        tlog_site_entry *e = tlog_site_entry_(site);
        if (!e)
            return NULL;
        c = place_for(s, site, c);
        *c = (site_cache){.site = site, .entry = e, .id = e->id};
    }
    c->next = atomic_fetch_add_explicit(&c->entry->reported, INSTANCE_BLOCK,
                                        memory_order_relaxed) + 1;
    c->limit = c->next + INSTANCE_BLOCK;
    return c;
}

/* The site's id and its next instance number (0 if memory ran out), with
 * no locked instruction but once a block. A slot's cached block outlives
 * its thread (the next owner goes on with it). Numbers are given once: a
 * block handed back is one no block was taken after, so those taken later
 * start above every number given so far. */
static inline uint64_t next_instance(busy_slot *s, const tlog_site *site, uint64_t *id)
{
    site_cache *c = cache_of(s, site);
    if (TLOG_UNLIKELY(c->site != site || c->next == c->limit) && !(c = refill(s, c, site))) {
        *id = tlog_site_id(site);
        return 0;
    }
    *id = c->id;
    return c->next++;
}

static uint64_t cached_id(busy_slot *s, const tlog_site *site)
{
    const site_cache *c = cache_of(s, site);
    return c->site == site ? c->id : tlog_site_id(site);
}

/* ------------------------------------------------------------------------ */
/* Reporting                                                                */
/* ------------------------------------------------------------------------ */

/* The subscriber's callbacks, unless it was unsubscribed meanwhile. */
static const tlog_subscriber *live(const tlog_subscription *sub)
{
    return atomic_load_explicit(&sub->gone, memory_order_seq_cst) ? NULL : &sub->cb;
}

/* What subscribers are told of begins, beside the stack (tlog_note). */
static bool __attribute__((noinline)) make_notes(tlog_thread *t)
{
    t->notes = tlog_calloc_((size_t)(t->stack_end - t->stack) + 1u, sizeof *t->notes);
    return t->notes != NULL;
}

void tlog_notify_begin_(tlog_thread *t)
{
    tlog_log *log = tlog_thread_log_(t);
    reading r;
    /* Scopes of logs without subscribers stop at the first load. */
    if (!log || !atomic_load_explicit(&log->subs.list, memory_order_relaxed) ||
        !enter(log, false, &r))
        return;
    if (TLOG_UNLIKELY(!t->notes) && !make_notes(t)) {
        leave(&r);
        return;
    }
    tlog_open *o = t->top - 1;
    const tlog_site *site = tlog_open_site(o);
    tlog_scope_event e = {.size = sizeof e, .log = log, .site = site, .thread = t->id,
                          .time = tlog_open_dropped(o) ? tlog_read_clock_(t) : o->start};
    e.instance = next_instance(r.slot, site, &e.site_id);
    tlog_note *note = &t->notes[o - t->stack];
    note->instance = e.instance;
    note->site_id = e.site_id;
    o->noted = 1;
    /* The scope is open while its callbacks run: one may end it. Its end
     * then goes to those told so far (note->newest), and those after are
     * not told of the begin either. */
    for (size_t i = 0; i < r.list->n; i++) {
        const tlog_subscription *sub = r.list->subs[i];
        note->newest = sub->serial;
        const tlog_subscriber *cb = live(sub);
        if (cb && cb->scope_begin) {
            cb->scope_begin(cb->user, &e);
            if (TLOG_UNLIKELY(t->top <= o || !o->noted))
                break;
        }
    }
    leave(&r);
}

/* Also inside a callback: a begin that was told has its end told. */
static inline __attribute__((always_inline)) void
notify_end(tlog_thread *t, tlog_log *log, const tlog_open *o, const tlog_note *note,
           tlog_ticks now, unsigned rec_flags)
{
    reading r;
    if (!enter(log, true, &r))
        return;
    const tlog_site *site = tlog_open_site(o);
    tlog_scope_event e = {
        .size = sizeof e, .log = log, .site = site, .site_id = note->site_id,
        .instance = note->instance, .thread = t->id, .time = now, .start = o->start,
        .flags = (rec_flags & TLOG_REC_REPAIRED ? TLOG_SCOPE_EVENT_REPAIRED : 0u) |
                 (tlog_open_dropped(o) ? TLOG_SCOPE_EVENT_DROPPED : 0u),
    };
    /* Only those that were told of the begin. */
    uint64_t newest = note->newest;
    for (size_t i = 0; i < r.list->n && r.list->subs[i]->serial <= newest; i++) {
        const tlog_subscriber *cb = live(r.list->subs[i]);
        if (cb && cb->scope_end)
            cb->scope_end(cb->user, &e);
    }
    leave(&r);
}

void tlog_notify_end_(tlog_thread *t, tlog_log *log, const tlog_open *o,
                      const tlog_note *note, tlog_ticks now, unsigned rec_flags)
{
    notify_end(t, log, o, note, now, rec_flags);
}

void tlog_notify_popped_(tlog_thread *t, const tlog_open *o, tlog_ticks now)
{
    tlog_log *log = tlog_thread_log_(t);
    if (log)
        notify_end(t, log, o, &t->notes[o - t->stack], now, 0);
}

void tlog_notify_frame_(tlog_log *log, tlog_frame_event *e)
{
    reading r;
    if (!enter(log, false, &r))
        return;
    e->size = sizeof *e;
    e->log = log;
    e->site_id = cached_id(r.slot, e->site);
    for (size_t i = 0; i < r.list->n; i++) {
        const tlog_subscriber *cb = live(r.list->subs[i]);
        if (cb && cb->frame_end)
            cb->frame_end(cb->user, e);
    }
    leave(&r);
}

bool tlog_subscribed_device_(tlog_log *log)
{
    return atomic_load_explicit(&log->subs.device, memory_order_relaxed) != 0;
}

/* Also inside a callback: intervals a callback's call happened to resolve
 * come from earlier work, and would otherwise never be told. */
void tlog_notify_devices_(tlog_log *log, tlog_device_event *events, size_t n)
{
    reading r;
    if (!n || !enter(log, true, &r))
        return;
    for (size_t k = 0; k < n; k++) {
        tlog_device_event *e = &events[k];
        e->size = sizeof *e;
        e->log = log;
        e->instance = next_instance(r.slot, e->site, &e->site_id);
        for (size_t i = 0; i < r.list->n; i++) {
            const tlog_subscriber *cb = live(r.list->subs[i]);
            if (cb && cb->device_interval)
                cb->device_interval(cb->user, e);
        }
    }
    leave(&r);
}

/* ------------------------------------------------------------------------ */
/* Registering                                                              */
/* ------------------------------------------------------------------------ */

/* Publishes `list` (NULL: none left) and keeps the old one for later
 * freeing. Caller holds log->subs.lock. */
static void publish_locked(tlog_log *log, tlog_sublist *list)
{
    tlog_assert_held_(&log->subs.lock);
    tlog_sublist *old = atomic_load_explicit(&log->subs.list, memory_order_relaxed);
    int device_subs = 0;
    for (size_t i = 0; list && i < list->n; i++)
        device_subs += list->subs[i]->cb.device_interval != NULL;
    atomic_store_explicit(&log->subs.device, device_subs, memory_order_relaxed);
    atomic_store_explicit(&log->subs.list, list, memory_order_seq_cst);
    if (!old && list)
        atomic_fetch_add_explicit(&tlog_subscribed_, 1, memory_order_relaxed);
    else if (old && !list)
        atomic_fetch_sub_explicit(&tlog_subscribed_, 1, memory_order_relaxed);
    if (old) {
        old->retired_next = log->subs.retired;
        log->subs.retired = old;
    }
}

static void free_lists(tlog_sublist *l)
{
    for (tlog_sublist *next; l; l = next) {
        next = l->retired_next;
        free(l);
    }
}

/* The lists retired so far, to free once no thread can be reading them;
 * none from inside a callback, which must not wait. Caller holds
 * log->subs.lock. */
static tlog_sublist *take_retired_locked(tlog_log *log)
{
    tlog_assert_held_(&log->subs.lock);
    if (inside_callback())
        return NULL;
    tlog_sublist *retired = log->subs.retired;
    log->subs.retired = NULL;
    return retired;
}

static void free_retired(tlog_sublist *retired)
{
    if (retired) {
        wait_for_readers();
        free_lists(retired);
    }
}

static tlog_sublist *list_new(size_t n)
{
    tlog_sublist *list = tlog_malloc_(sizeof *list + n * sizeof list->subs[0]);
    if (list) {
        list->retired_next = NULL;
        list->n = n;
    }
    return list;
}

int tlog_subscribe(tlog_log *log, const tlog_subscriber *subscriber,
                   tlog_subscription **out)
{
    if (!out)
        return TLOG_EINVAL;
    *out = NULL;
    tlog_subscriber cb;
    if (!subscriber ||
        !tlog_read_sized_(&cb, sizeof cb, subscriber,
                          offsetof(tlog_subscriber, scope_begin) + sizeof cb.scope_begin))
        return TLOG_EINVAL;
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    tlog_subscription *sub = tlog_calloc_(1, sizeof *sub);
    if (!sub)
        return TLOG_ENOMEM;
    sub->cb = cb;
    sub->log = log;
    atomic_init(&sub->gone, false);

    tlog_lock_(&log->subs.lock, TLOG_LOCK_SUBSCRIBERS);
    tlog_sublist *old = atomic_load_explicit(&log->subs.list, memory_order_relaxed);
    size_t n = old ? old->n : 0;
    tlog_sublist *list = list_new(n + 1);
    if (!list) {
        tlog_unlock_(&log->subs.lock);
        free(sub);
        return TLOG_ENOMEM;
    }
    if (n)
        memcpy(list->subs, old->subs, n * sizeof list->subs[0]);
    sub->serial = ++log->subs.serial;
    list->subs[n] = sub;
    publish_locked(log, list);
    tlog_sublist *retired = take_retired_locked(log);
    tlog_unlock_(&log->subs.lock);
    free_retired(retired);
    *out = sub;
    return TLOG_OK;
}

/* Takes `sub` out of the log's list. If memory for the new list runs out,
 * it stays listed (marked gone) and is freed with the log. Also hands over
 * the lists retired so far (take_retired_locked). */
static bool unlist(tlog_log *log, tlog_subscription *sub, tlog_sublist **retired)
{
    tlog_lock_(&log->subs.lock, TLOG_LOCK_SUBSCRIBERS);
    tlog_sublist *old = atomic_load_explicit(&log->subs.list, memory_order_relaxed);
    size_t n = old ? old->n : 0, at = n;
    for (size_t i = 0; i < n; i++)
        if (old->subs[i] == sub)
            at = i;
    tlog_sublist *list = NULL;
    bool ok = at < n && (n == 1 || (list = list_new(n - 1)) != NULL);
    if (ok) {
        for (size_t i = 0, j = 0; i < n; i++)
            if (i != at)
                list->subs[j++] = old->subs[i];
        publish_locked(log, list);
    }
    *retired = take_retired_locked(log);
    tlog_unlock_(&log->subs.lock);
    return ok;
}

static void keep_until_destroy(tlog_log *log, tlog_subscription *sub)
{
    tlog_lock_(&log->subs.lock, TLOG_LOCK_SUBSCRIBERS);
    sub->next_kept = log->subs.kept;
    log->subs.kept = sub;
    tlog_unlock_(&log->subs.lock);
}

void tlog_unsubscribe(tlog_subscription *sub)
{
    if (!sub || tlog_log_inherited_(sub->log))
        return;
    tlog_log *log = sub->log;
    atomic_store_explicit(&sub->gone, true, memory_order_seq_cst);
    tlog_sublist *retired;
    bool unlisted = unlist(log, sub, &retired);
    if (inside_callback()) {
        /* Other threads may be in its callbacks now, and may be waiting
         * for this one: do not wait, free it with the log. */
        if (unlisted)
            keep_until_destroy(log, sub);
        return;
    }
    wait_for_readers();
    free_lists(retired);
    if (unlisted)
        free(sub);
}

void tlog_subs_init_(tlog_log *log)
{
    pthread_mutex_init(&log->subs.lock, NULL);
}

uint64_t tlog_subs_count_(tlog_log *log)
{
    tlog_lock_(&log->subs.lock, TLOG_LOCK_SUBSCRIBERS);
    tlog_sublist *list = atomic_load_explicit(&log->subs.list, memory_order_relaxed);
    uint64_t n = list ? list->n : 0;
    tlog_unlock_(&log->subs.lock);
    return n;
}

void tlog_subs_destroy_(tlog_log *log)
{
    tlog_lock_(&log->subs.lock, TLOG_LOCK_SUBSCRIBERS);
    tlog_sublist *list = atomic_load_explicit(&log->subs.list, memory_order_relaxed);
    if (list)
        publish_locked(log, NULL);   /* retires it */
    tlog_unlock_(&log->subs.lock);
    /* Threads still in a callback (devices resolved on other threads)
     * finish with what they read. */
    wait_for_readers();
    for (size_t i = 0; list && i < list->n; i++)
        free(list->subs[i]);
    free_lists(log->subs.retired);
    for (tlog_subscription *sub = log->subs.kept, *next; sub; sub = next) {
        next = sub->next_kept;
        free(sub);
    }
    log->subs.retired = NULL;
    log->subs.kept = NULL;
    pthread_mutex_destroy(&log->subs.lock);
}
