/*
 * Recording: the begin/end hot path and everything it hands off to.
 *
 * A begin pushes {site, start} on the thread's stack and reserves one record
 * slot in the thread's budget; the matching end writes one 16-byte record
 * into the current chunk. The fast paths take no lock, allocate nothing,
 * call nothing (but to tell subscribers of a scope they were told of) and
 * read the hardware clock once each; anything unusual
 * (first scope of a frame, budget or stack full, mismatched end, chunk
 * boundary, a record that needs the wide form, a clock of the
 * application's) goes to a slow path.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fork.h"
#include "frame.h"
#include "log.h"
#include "prefault.h"
#include "record.h"
#include "site.h"
#include "stats.h"
#include "subscribe.h"
#include "upcalls.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* Chunks                                                                   */
/* ------------------------------------------------------------------------ */

static size_t chunk_bytes(size_t cap)
{
    return sizeof(tlog_chunk) + cap * sizeof(tlog_rec);
}

/* Record memory: chunks, reserves and hand-off blocks, counted in
 * record_bytes and taken from the configured allocator. */
static void *record_alloc(tlog_log *log, size_t bytes)
{
    void *p = log->cfg.record_alloc ? log->cfg.record_alloc(log->cfg.alloc_user, bytes)
                                    : tlog_malloc_(bytes);
    if (p)
        atomic_fetch_add_explicit(&log->pool.bytes, bytes, memory_order_relaxed);
    return p;
}

static void record_free(tlog_log *log, void *p, size_t bytes)
{
    atomic_fetch_sub_explicit(&log->pool.bytes, bytes, memory_order_relaxed);
    if (log->cfg.record_free)
        log->cfg.record_free(log->cfg.alloc_user, p);
    else
        free(p);
}

static tlog_chunk *chunk_new(tlog_log *log, size_t cap)
{
    tlog_chunk *c = record_alloc(log, chunk_bytes(cap));
    if (c)
        c->cap = cap;
    return c;
}

/*
 * Before a frame begins, the pool is given as many chunks as the thread's
 * last frame took (a thread's first frame: the last frame of any thread),
 * within pool_bytes, their pages mapped: the frame's scopes then write into
 * memory that is ready, as they do once frames go back to the pool, rather
 * than fault a page in every 256 records. Nothing is made while the pool
 * holds enough: frames read, or pushed out of the queue, give theirs back.
 */
static void prepare_chunks(tlog_thread *t, tlog_log *log)
{
    size_t want = t->last_chunks ? t->last_chunks
                                 : atomic_load_explicit(&log->pool.last_chunks,
                                                        memory_order_relaxed);
    size_t bytes = chunk_bytes(log->chunk_recs);
    if (want > log->cfg.pool_bytes / bytes)
        want = log->cfg.pool_bytes / bytes;
    tlog_lock_(&log->pool.lock, TLOG_LOCK_POOL);
    size_t have = log->pool.held / bytes;
    tlog_unlock_(&log->pool.lock);
    tlog_chunk *made = NULL;
    for (; have < want; have++) {
        tlog_chunk *c = record_alloc(log, bytes);
        if (!c)
            break;
        tlog_prefault_(c, bytes);
        c->cap = log->chunk_recs;
        c->next = made;
        made = c;
    }
    tlog_chunks_put_(log, made);
}

void tlog_chunk_free_(tlog_log *log, tlog_chunk *c)
{
    if (c)
        record_free(log, c, chunk_bytes(c->cap));
}

void tlog_pool_init_(tlog_log *log)
{
    pthread_mutex_init(&log->pool.lock, NULL);
}

void tlog_pool_destroy_(tlog_log *log)
{
    tlog_lock_(&log->pool.lock, TLOG_LOCK_POOL);
    tlog_chunk *c = log->pool.free;
    log->pool.free = NULL;
    log->pool.held = 0;
    tlog_unlock_(&log->pool.lock);
    while (c) {
        tlog_chunk *next = c->next;
        tlog_chunk_free_(log, c);
        c = next;
    }
    pthread_mutex_destroy(&log->pool.lock);
}

tlog_chunk *tlog_chunk_get_(tlog_log *log)
{
    tlog_lock_(&log->pool.lock, TLOG_LOCK_POOL);
    tlog_chunk *c = log->pool.free;
    if (c) {
        log->pool.free = c->next;
        log->pool.held -= chunk_bytes(c->cap);
    }
    tlog_unlock_(&log->pool.lock);
    if (!c)
        c = chunk_new(log, log->chunk_recs);
    if (c) {
        c->next = NULL;
        c->used = 0;
    }
    return c;
}

/* Chunks of the regular size go back to the pool while it holds less than
 * cfg.pool_bytes; the rest, and reserves, are freed. */
void tlog_chunks_put_(tlog_log *log, tlog_chunk *first)
{
    size_t bytes = chunk_bytes(log->chunk_recs);
    tlog_chunk *spare = NULL;
    tlog_lock_(&log->pool.lock, TLOG_LOCK_POOL);
    while (first) {
        tlog_chunk *next = first->next;
        if (first->cap == log->chunk_recs && log->cfg.pool_bytes - log->pool.held >= bytes) {
            first->next = log->pool.free;
            log->pool.free = first;
            log->pool.held += bytes;
        } else {
            first->next = spare;
            spare = first;
        }
        first = next;
    }
    tlog_unlock_(&log->pool.lock);
    while (spare) {
        tlog_chunk *next = spare->next;
        tlog_chunk_free_(log, spare);
        spare = next;
    }
}

/* Out of record memory: the reserve takes the ends of the scopes already
 * open, and new scopes are dropped until the frame ends. */
static tlog_chunk *use_reserve(tlog_thread *t, tlog_log *log)
{
    tlog_chunk *c = t->reserve;
    if (!c)
        return NULL;
    t->reserve = NULL;
    t->room = 0;
    c->next = NULL;
    c->used = 0;
    TLOG_COUNT(log, alloc_failures);
    if (!t->starved)
        tlog_report_(log, t, TLOG_ENOMEM, NULL,
                     "out of record memory: scopes already open are kept, new scopes "
                     "are dropped until the frame ends");
    t->starved = true;
    return c;
}

/* Records go to chunk c from slot `index` on. */
static void use_chunk(tlog_thread *t, tlog_chunk *c, size_t index)
{
    t->cur = c;
    t->wr = c->recs + index;
    t->wr_end = c->recs + c->cap;
    t->base = c->base;
}

/* Compact records' starts count from their chunk's base: the start of the
 * outermost open scope (the frame's root), unless that began more than
 * 2^30 ticks before `at`, when the chunk is taken; then 2^30 ticks before
 * it. A long frame's later chunks thus keep compact the records that start
 * up to 2^30 ticks before the chunk was taken and 3 * 2^30 after (about
 * 0.4 s and 1.2 s of a 2.6 GHz counter). */
static tlog_ticks chunk_base(const tlog_thread *t, tlog_ticks start, tlog_ticks at)
{
    tlog_ticks base = t->top > t->stack ? t->stack[0].start : start;
    tlog_ticks low = at - ((tlog_ticks)1 << 30);
    return (int64_t)(base - low) < 0 ? low : base;
}

/* Takes the next chunk for records written about `at`, the first of which
 * began at `start`. */
static bool next_chunk(tlog_thread *t, tlog_log *log, tlog_ticks start, tlog_ticks at)
{
    tlog_chunk *c = tlog_chunk_get_(log);
    if (c)
        t->frame_chunks++;
    else
        c = use_reserve(t, log);
    if (!c)
        return false;
    if (t->cur) {
        t->cur->used = (size_t)(t->wr - t->cur->recs);
        t->cur->next = c;
    } else {
        t->first = c;
    }
    c->base = chunk_base(t, start, at);
    use_chunk(t, c, 0);
    return true;
}

/* A chunk kept from adopted work outside any frame has no record yet: its
 * base is taken again where the frame or the adopted work begins. */
static void rebase_empty_chunk(tlog_thread *t, tlog_ticks at)
{
    if (t->cur && t->wr == t->cur->recs)
        t->cur->base = t->base = at;
}

static void write_rec(tlog_thread *t, tlog_log *log, const tlog_site *site,
                      tlog_ticks start, tlog_ticks end, size_t depth,
                      unsigned flags, uint32_t tag)
{
    ptrdiff_t need = flags || tag || !tlog_rec_compact_((uintptr_t)site, start - t->base,
                                                        end - start) ? 2 : 1;
    if ((!t->cur || t->wr_end - t->wr < need) &&
        !next_chunk(t, log, start, end)) {
        /* No reserve either (it could not be allocated): the record is lost,
         * and counted. */
        TLOG_COUNT(log, alloc_failures);
        TLOG_COUNT(log, scopes_dropped);
        if (t->frame_dropped++ == 0)
            tlog_report_(log, t, TLOG_ENOMEM, site,
                         "out of memory: the record of \"%s\" is lost", site->name);
        return;
    }
    size_t slots = tlog_rec_put_(t->wr, t->base, site, start, end, depth, flags, tag);
    t->wr += slots;
    /* A wide record's second slot comes out of the budget while any is
     * left; past it, the end of a scope already begun still gets it. */
    if (slots == 2 && t->room)
        t->room--;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* Slots that hold the ends of max_depth + 1 open scopes, in the wide form
 * at worst. */
static size_t reserve_slots(const tlog_log *log)
{
    return 2 * ((size_t)log->cfg.max_depth + 1u);
}

/* No reserve could be made: an end that then found no memory would be
 * lost, and its scope's children would hang under another row. Only the
 * scope that opens the budget (a frame's root) is recorded; new scopes are
 * dropped until the frame ends, as once the reserve is in use. */
static void open_without_reserve(tlog_thread *t, tlog_log *log)
{
    TLOG_COUNT(log, alloc_failures);
    tlog_report_(log, t, TLOG_ENOMEM, NULL,
                 "out of record memory: no reserve for the ends of this frame's scopes; "
                 "new scopes are dropped until the frame ends");
    t->starved = true;
    t->room = 1;
}

/* Records may start: a frame, or adopted work outside any frame. Every open
 * scope, up to max_depth, must be able to write its end. */
static void open_budget(tlog_thread *t, tlog_log *log)
{
    if (!t->reserve)
        t->reserve = chunk_new(log, reserve_slots(log));
    t->starved = false;
    t->room = log->budget_recs;
    if (!t->reserve)
        open_without_reserve(t, log);
}

static void start_frame(tlog_thread *t, tlog_log *log)
{
    tlog_thread_tidy_();
    prepare_chunks(t, log);
    t->frame_chunks = 0;
    open_budget(t, log);
    t->frame_id++;
    tlog_frame_open_(log, t);
    t->seq = 0;
    t->frame_dropped = 0;
    t->frame_repaired = 0;
}

tlog_attachment *tlog_attachment_new_(tlog_log *log, size_t slots, size_t runs)
{
    size_t bytes = sizeof(tlog_attachment) + slots * sizeof(tlog_rec) + runs * sizeof(tlog_run);
    tlog_attachment *a = record_alloc(log, bytes);
    if (a) {
        memset(a, 0, sizeof *a);
        a->bytes = bytes;
        a->nslots = slots;
        a->nruns = runs;
        a->runs = (tlog_run *)(void *)(a->recs + slots);
    }
    return a;
}

void tlog_attachments_free_(tlog_log *log, tlog_attachment *a)
{
    while (a) {
        tlog_attachment *next = a->next;
        record_free(log, a, a->bytes);
        a = next;
    }
}

/* Inboxes are pushed at the head; frames want the order of delivery. */
static tlog_attachment *reversed(tlog_attachment *a)
{
    tlog_attachment *out = NULL;
    while (a) {
        tlog_attachment *next = a->next;
        a->next = out;
        out = a;
        a = next;
    }
    return out;
}

/* Record memory a completed frame holds until it is resolved. */
static size_t raw_bytes(const tlog_chunk *chunks, const tlog_attachment *attached)
{
    size_t n = 0;
    for (const tlog_chunk *c = chunks; c; c = c->next)
        n += chunk_bytes(c->cap);
    for (const tlog_attachment *a = attached; a; a = a->next)
        n += a->bytes;
    return n;
}

/* The frame's own records and counts go into it; what workers attached
 * was collected in it all along. */
static void fill_frame(tlog_frame *f, tlog_thread *t, tlog_chunk *chunks, bool streamed)
{
    tlog_lock_(&f->lock, TLOG_LOCK_FRAME);
    f->attachments = reversed(f->attachments);
    uint64_t dropped = t->frame_dropped + f->attached_dropped, repaired = t->frame_repaired;
    for (const tlog_attachment *a = f->attachments; a; a = a->next) {
        dropped += a->dropped;
        repaired += a->repaired;
    }
    f->stream_bytes = streamed ? raw_bytes(chunks, f->attachments) : 0;
    tlog_unlock_(&f->lock);
    memcpy(f->thread_name, t->name, sizeof f->thread_name);
    f->dropped = dropped;
    f->repaired = repaired;
    f->chunks = chunks;
}

/* A frame pushed out of the queue unread, with statistics on: it is
 * counted as it is, after a read of the devices without blocking for the
 * work it still waits for (work still running then is left out). */
static void count_evicted(tlog_log *log, tlog_frame *f)
{
    if (atomic_load_explicit(&f->resolved, memory_order_acquire))
        return;
    if (!tlog_frame_ready_(f))
        tlog_devices_poll_(log);
    tlog_stats_count_evicted_(f);
}

/* Returns the frame's serial, 0 if it was lost. */
static uint64_t complete_frame(tlog_thread *t, tlog_log *log)
{
    if (t->cur)
        t->cur->used = (size_t)(t->wr - t->cur->recs);
    tlog_chunk *chunks = t->first;
    t->first = t->cur = NULL;
    t->wr = t->wr_end = NULL;
    t->room = 0;
    t->last_chunks = t->frame_chunks;
    atomic_store_explicit(&log->pool.last_chunks, t->frame_chunks, memory_order_relaxed);

    tlog_frame *f = tlog_frame_end_(log, t);
    if (!f) {
        TLOG_COUNT(log, alloc_failures);
        tlog_report_(log, t, TLOG_ENOMEM, NULL, "out of memory: a frame is lost");
        tlog_chunks_put_(log, chunks);
        return 0;
    }
    bool streamed = atomic_load_explicit(&log->stream, memory_order_acquire) != NULL;
    fill_frame(f, t, chunks, streamed);
    /* Device work complete at the root's end is read now, as at a sync
     * scope's end: it then counts as done within the frame. Callbacks that
     * read tells of run once the frame is queued: they may record here. */
    void *told = NULL;
    if (atomic_load_explicit(&f->outstanding, memory_order_acquire))
        told = tlog_devices_poll_deferred_(log);
    tlog_frame_mark_end_(f);
    bool stats = tlog_stats_on_(log);
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    /* The writer's reference and one for counting it below, taken before
     * the frame can be seen, in one step after the lock's: a locked step
     * of their own before the lock waited for the frame's writes to land,
     * about 20 ns a frame. */
    if (streamed || stats)
        atomic_fetch_add(&f->refs, (int)streamed + (int)stats);
    tlog_frame *evicted = tlog_queue_push_locked_(log, f);
    uint64_t serial = f->serial;
    tlog_unlock_(&log->lock);
    while (evicted) {
        tlog_frame *next = evicted->older;
        evicted->older = NULL;
        if (stats && !streamed)   /* pushed out unread: counted all the same */
            count_evicted(log, evicted);
        tlog_frame_release(evicted);
        evicted = next;
    }
    if (streamed && !tlog_stream_take_(log, f))
        tlog_frame_release(f);
    tlog_devices_poll_finish_(log, told);
    /* With statistics on, a frame is resolved as soon as it is ready, so
     * that every frame is counted whether it is read or not; one still
     * waiting for its device work is counted by whoever resolves it. */
    if (stats && tlog_frame_ready_(f))
        tlog_frame_resolve_once_(f, TLOG_NO_WAIT);
    if (stats)
        tlog_frame_release(f);
    return serial;
}

/* ------------------------------------------------------------------------ */
/* Adopted work                                                             */
/* ------------------------------------------------------------------------ */

/* Hands work to the token's frame. What other threads hand to one frame
 * is bounded by the same budget as the frame's own records. */
static int deliver(tlog_log *log, tlog_thread *from, tlog_attachment *a,
                   const tlog_token *token)
{
    /* Charged by size, in record slots, so the allowance is honest in bytes. */
    size_t need = (a->bytes + sizeof(tlog_rec) - 1) / sizeof(tlog_rec);
    uint64_t scopes = a->nrecs + (a->has_row ? 1u : 0u);
    bool first_drop = false;
    tlog_frame *f = tlog_frame_find_(log, from, token);
    int rc = f ? tlog_frame_attach_(f, a, need, scopes, &first_drop) : TLOG_ELATE;
    tlog_frame_release(f);
    if (rc == TLOG_OK)
        return rc;
    if (rc == TLOG_EFULL) {
        atomic_fetch_add_explicit(&log->counters.scopes_dropped, scopes, memory_order_relaxed);
        if (first_drop)
            tlog_report_(log, from, TLOG_EFULL, NULL,
                         "work handed to thread %u's frame exceeds its budget of %zu "
                         "bytes; dropping further hand-off work in this frame",
                         token->thread, log->cfg.thread_budget);
    } else {
        TLOG_COUNT(log, late_work);
        tlog_report_(log, from, TLOG_ELATE, NULL,
                     "work for a scope of thread %u arrived after its frame "
                     "ended; dropped (join workers before the frame ends)",
                     token->thread);
    }
    tlog_attachments_free_(log, a);
    return rc;
}

/* Counts the slots written since (chunk, index), and the chunks that hold
 * any of them. */
static size_t slots_since(const tlog_chunk *chunk, size_t index, size_t *runs)
{
    size_t n = 0;
    *runs = 0;
    for (const tlog_chunk *c = chunk; c; c = c->next) {
        size_t k = c->used - (c == chunk ? index : 0);
        n += k;
        *runs += k != 0;
    }
    return n;
}

/* Moves the adopted records out of the thread's chunks into `a` (when not
 * NULL), each chunk's as a run with its base, and rewinds the chunks to
 * where the adoption began. Returns the number of records. */
static size_t extract_adopted(tlog_thread *t, tlog_log *log, tlog_attachment *a)
{
    tlog_chunk *start = t->adopt.chunk;
    size_t index = t->adopt.index, n = 0, runs = 0, wide = 0;
    for (tlog_chunk *c = start; c; c = c->next) {
        size_t from = c == start ? index : 0, k = c->used - from;
        for (size_t i = 0; i < k; i++)
            wide += tlog_rec_is_wide_(&c->recs[from + i]);
        if (a && k) {
            memcpy(a->recs + n, c->recs + from, k * sizeof(tlog_rec));
            a->runs[runs++] = (tlog_run){c->base, k};
        }
        n += k;
    }
    if (a)
        a->nrecs = n - wide / 2;
    tlog_chunk *rest = start->next;
    start->next = NULL;
    /* A reserve used up inside the adopted work comes back with its chunks:
     * the thread's own open scopes still need one. */
    for (tlog_chunk **p = &rest; !t->reserve && *p; p = &(*p)->next)
        if ((*p)->cap >= reserve_slots(log)) {
            t->reserve = *p;
            *p = (*p)->next;
            break;
        }
    tlog_chunks_put_(log, rest);
    use_chunk(t, start, index);
    if (!t->starved)
        t->room += n;
    return n - wide / 2;
}

static int finish_adoption(tlog_thread *t, tlog_log *log, tlog_ticks now)
{
    tlog_open *marker = --t->top;
    size_t base = tlog_thread_depth_(t);
    t->cur->used = (size_t)(t->wr - t->cur->recs);
    size_t runs, slots = slots_since(t->adopt.chunk, t->adopt.index, &runs);
    tlog_attachment *a = tlog_attachment_new_(log, slots, runs);
    size_t n = extract_adopted(t, log, a);
    t->seq = t->adopt.seq;
    t->adopt.active = false;
    uint64_t dropped = t->frame_dropped, repaired = t->frame_repaired;
    t->frame_dropped = t->adopt.dropped;
    t->frame_repaired = t->adopt.repaired;
    if (base == 0)
        t->room = 0;
    if (!a) {
        /* Its recorded scopes and its row; those it dropped were counted
         * when they were. */
        TLOG_COUNT(log, alloc_failures);
        atomic_fetch_add_explicit(&log->counters.scopes_dropped, n + 1, memory_order_relaxed);
        tlog_report_(log, t, TLOG_ENOMEM, NULL,
                     "out of memory: adopted work (%zu scopes) is lost", n);
        return TLOG_ENOMEM;
    }
    a->dropped = dropped;
    a->repaired = repaired;
    a->frame_id = t->adopt.token.frame;
    a->scope_seq = t->adopt.token.scope;
    a->worker = t->id;
    a->has_row = true;
    a->start = marker->start;
    a->end = now;
    a->base_depth = (uint16_t)base;
    memcpy(a->worker_name, t->name, sizeof a->worker_name);
    return deliver(log, t, a, &t->adopt.token);
}

/* ------------------------------------------------------------------------ */
/* Closing scopes                                                           */
/* ------------------------------------------------------------------------ */

/* Tells subscribers of an end (from copies: callbacks, the error callback
 * included, may open scopes where this one was), then of the frame's end if
 * it was the root. */
static void tell_end(tlog_thread *t, tlog_log *log, const tlog_open *closed,
                     const tlog_note *note, tlog_ticks now, unsigned flags, bool root,
                     uint64_t serial)
{
    if (closed->noted)
        tlog_notify_end_(t, log, closed, note, now, flags);
    if (root) {
        tlog_frame_event e = {.serial = serial, .thread = t->id,
                              .site = tlog_open_site(closed), .start = closed->start,
                              .end = now};
        tlog_notify_frame_(log, &e);
    }
}

/* A clock that went back within a scope (one of the application's that is
 * not monotonic, or a counter that jumped): the scope's time is shown as 0,
 * which is said and counted rather than left to look like a fast scope. */
static void __attribute__((noinline)) report_clock_back(tlog_thread *t, tlog_log *log,
                                                        const tlog_site *site,
                                                        tlog_ticks start, tlog_ticks end)
{
    TLOG_COUNT(log, clock_reversals);
    tlog_report_(log, t, TLOG_EINVAL, site,
                 "the clock went back %llu ns between the begin and the end of \"%s\"; "
                 "its time is shown as 0",
                 (unsigned long long)tlog_ticks_to_ns(log, start - end), site->name);
}

static void close_top(tlog_thread *t, tlog_log *log, tlog_ticks now, unsigned flags,
                      uint32_t tag)
{
    tlog_open *o = t->top - 1;
    if (o->site == &tlog_adopt_marker_) {
        finish_adoption(t, log, now);
        return;
    }
    t->top--;
    if (o->site == &tlog_overflow_marker_) {
        t->nover = t->blind = 0;
        return;
    }
    tlog_open closed = *o;
    tlog_note note = {0};
    if (closed.noted)
        note = t->notes[o - t->stack];
    if (!tlog_open_dropped(&closed)) {
        if (flags & TLOG_REC_REPAIRED) {
            TLOG_COUNT(log, scopes_repaired);
            t->frame_repaired++;
        }
        if (TLOG_UNLIKELY(now < closed.start))
            report_clock_back(t, log, closed.site, closed.start, now);
        write_rec(t, log, closed.site, closed.start, now, tlog_thread_depth_(t),
                  flags | (tag ? TLOG_REC_SYNC : 0u), tag);
    }
    bool root = t->top == t->stack;
    uint64_t serial = root ? complete_frame(t, log) : 0;
    if (TLOG_UNLIKELY(tlog_any_subscriber_()) &&
        (closed.noted || atomic_load_explicit(&log->subs.list, memory_order_relaxed)))
        tell_end(t, log, &closed, &note, now, flags, root, serial);
}

/* Whether the log's level lets the site's scopes in. */
static inline bool log_takes(const tlog_log *log, const tlog_site *site)
{
    return tlog_level_on_(site->level, atomic_load_explicit(&log->level, memory_order_relaxed));
}

static void report_unmatched(tlog_thread *t, tlog_log *log, const tlog_site *site)
{
    /* A guard whose begin was skipped by the level check ends here too. */
    if (!log_takes(log, site))
        return;
    if (tlog_thread_forked_end_(log))
        return;
    TLOG_COUNT(log, unmatched_ends);
    tlog_report_(log, t, TLOG_ENOTOPEN, site,
                 "end of \"%s\" (%s:%d) matches no open scope; ignored",
                 site->name, site->file ? site->file : "?", site->line);
}

/* Innermost stack index whose scope has the title of `site`, or depth when
 * none; the search does not cross into the scopes around adopted work. */
static size_t find_open(const tlog_thread *t, const tlog_site *site)
{
    size_t depth = tlog_thread_depth_(t);
    for (size_t i = depth; i-- > 0;) {
        const tlog_site *s = tlog_open_site(&t->stack[i]);
        if (s == &tlog_adopt_marker_)
            break;
        if (s != &tlog_overflow_marker_ && tlog_same_title_(s, site))
            return i;
    }
    return depth;
}

static void report_mismatch(tlog_thread *t, tlog_log *log, const tlog_site *site,
                            const tlog_site *inner, size_t closed)
{
    TLOG_COUNT(log, mismatched_ends);
    tlog_report_(log, t, TLOG_EMISMATCH, site,
                 "end of \"%s\" (%s:%d) while \"%s\" is open: closed %zu inner "
                 "scope(s) at this instant",
                 site->name, site->file ? site->file : "?", site->line,
                 inner && inner->name ? inner->name : "?", closed);
}

/* An end while scopes past max_depth are open: those were dropped, but
 * their titles are kept so the same repair rules apply. */
static bool end_past_depth(tlog_thread *t, tlog_log *log, const tlog_site *site)
{
    if (t->blind) {
        if (--t->blind == 0 && t->nover == 0)
            t->top--;
        return true;
    }
    for (size_t j = t->nover; j-- > 0;)
        if (tlog_same_title_(t->over[j], site)) {
            if (j + 1 < t->nover)
                report_mismatch(t, log, site, t->over[t->nover - 1], t->nover - j - 1);
            t->nover = j;
            if (t->nover == 0)
                t->top--;
            return true;
        }
    return false;
}

static void end_slow(tlog_thread *t, const tlog_site *site, tlog_ticks now, uint32_t tag)
{
    tlog_log *log = tlog_thread_log_(t);
    if (!log)
        return;
    size_t depth = tlog_thread_depth_(t);
    bool past_depth = depth && t->top[-1].site == &tlog_overflow_marker_;
    if (past_depth && end_past_depth(t, log, site))
        return;
    size_t match = find_open(t, site);
    if (match == depth) {
        report_unmatched(t, log, site);
        return;
    }
    if (match + 1 < depth) {
        const tlog_site *inner = past_depth && t->nover ? t->over[t->nover - 1]
                                                        : tlog_open_site(&t->stack[depth - 1]);
        size_t closed = depth - match - 1 - (past_depth ? 1 : 0) + t->nover + t->blind;
        report_mismatch(t, log, site, inner, closed);
        /* The error callback, and the subscribers told of each repaired
         * end, may end scopes themselves: the stack is read again after
         * each, and a scope they ended is not ended again. */
        for (;;) {
            depth = tlog_thread_depth_(t);
            match = find_open(t, site);
            if (match == depth)
                return;
            if (match + 1 >= depth)
                break;
            close_top(t, log, now, TLOG_REC_REPAIRED, 0);
        }
    }
    close_top(t, log, now, 0, tag);
}

void tlog_thread_end_at_(tlog_thread *t, const tlog_site *site, tlog_ticks now, uint32_t tag)
{
    end_slow(t, site, now, tag);
}

size_t tlog_thread_open_scopes_(const tlog_thread *t)
{
    size_t n = t->nover + t->blind;
    for (const tlog_open *o = t->stack; o < t->top; o++)
        n += o->site != &tlog_adopt_marker_ && o->site != &tlog_overflow_marker_;
    return n;
}

void tlog_thread_close_all_(tlog_thread *t, int code)
{
    tlog_log *log = tlog_thread_log_(t);
    if (!log || !tlog_thread_depth_(t))
        return;
    size_t open = tlog_thread_open_scopes_(t);
    if (open) {
        TLOG_COUNT(log, open_at_thread_exit);
        tlog_report_(log, t, code, NULL,
                     "thread \"%s\" ended with %zu scope(s) open; closed them", t->name,
                     open);
    }
    tlog_ticks now = tlog_read_clock_(t);
    while (tlog_thread_depth_(t))
        close_top(t, log, now, TLOG_REC_REPAIRED, 0);
}

/* ------------------------------------------------------------------------ */
/* Opening scopes                                                           */
/* ------------------------------------------------------------------------ */

/* Sites past max_depth: up to this many are kept for checking ends. */
#define TLOG_MAX_OVER ((size_t)1 << 16)

/* The title open most often on the stack if it is most of it (a majority
 * vote): the mark of a begin whose end never comes, as in a loop. */
static const tlog_site *repeated_title(const tlog_thread *t, size_t *times)
{
    const tlog_site *cand = NULL;
    size_t votes = 0, n = 0, depth = tlog_thread_depth_(t);
    for (size_t i = 0; i < depth; i++) {
        const tlog_site *s = tlog_open_site(&t->stack[i]);
        if (!votes)
            cand = s;
        votes += cand && s && tlog_same_title_(cand, s) ? 1 : (size_t)-1;
    }
    for (size_t i = 0; cand && i < depth; i++) {
        const tlog_site *s = tlog_open_site(&t->stack[i]);
        n += s && tlog_same_title_(cand, s);
    }
    *times = n;
    return n * 2 > depth ? cand : NULL;
}

static void report_overflow(tlog_thread *t, tlog_log *log, const tlog_site *site)
{
    size_t times;
    const tlog_site *rep = repeated_title(t, &times);
    if (rep)
        tlog_report_(log, t, TLOG_EDEPTH, rep,
                     "\"%s\" (%s:%d) is open %zu times, nested in itself: is its end "
                     "missing? Scopes deeper than max_depth (%u) are dropped in this frame",
                     rep->name, rep->file ? rep->file : "?", rep->line, times,
                     log->cfg.max_depth);
    else
        tlog_report_(log, t, TLOG_EDEPTH, site,
                     "\"%s\" nests deeper than max_depth (%u): dropping scopes "
                     "below that depth in this frame",
                     site->name, log->cfg.max_depth);
}

/* Past max_depth the titles of TLOG_MAX_OVER scopes are kept; deeper, ends
 * are matched by count alone. Said at the first scope that finds no room for
 * its title, until the nesting is back within max_depth. */
static void report_blind(tlog_thread *t, tlog_log *log, const tlog_site *site)
{
    if (t->nover < TLOG_MAX_OVER)
        tlog_report_(log, t, TLOG_ENOMEM, site,
                     "no memory for the titles of scopes past max_depth: from \"%s\" "
                     "down, ends are matched by count, not by title", site->name);
    else
        tlog_report_(log, t, TLOG_EDEPTH, site,
                     "\"%s\" is %zu levels past max_depth (%u): from there down, ends "
                     "are matched by count, not by title", site->name, t->nover + 1,
                     log->cfg.max_depth);
}

static void push_overflow(tlog_thread *t, tlog_log *log, const tlog_site *site)
{
    if (t->top == t->stack_end) {
        t->top->site = &tlog_overflow_marker_;
        t->top->seq = 0;
        t->top++;
    }
    if (!t->blind && t->nover < TLOG_MAX_OVER && TLOG_GROW(t->over, t->capover, t->nover + 1))
        t->over[t->nover++] = site;
    else if (t->blind++ == 0)
        report_blind(t, log, site);
    TLOG_COUNT(log, depth_overflows);
    if (t->frame_dropped++ == 0)
        report_overflow(t, log, site);
}

static void push_dropped(tlog_thread *t, tlog_log *log, const tlog_site *site)
{
    tlog_open *o = t->top++;
    o->site = (const tlog_site *)((uintptr_t)site | 1u);
    o->start = 0;
    o->seq = 0;
    o->noted = 0;
    TLOG_COUNT(log, scopes_dropped);
    /* Starved, the budget was not the cause: running out of memory was,
     * and was said (use_reserve). */
    if (t->frame_dropped++ == 0 && !t->starved)
        tlog_report_(log, t, TLOG_EFULL, site,
                     "thread budget of %zu bytes used up at \"%s\": dropping "
                     "new scopes in this frame",
                     log->cfg.thread_budget, site->name);
}

/* Opens a scope but for its start, which the caller reads last. */
static inline tlog_open *push_open(tlog_thread *t, const tlog_site *site)
{
    tlog_open *o = t->top++;
    t->room--;
    o->site = site;
    o->seq = t->seq++;
    o->noted = 0;
    return o;
}

static void push(tlog_thread *t, const tlog_site *site)
{
    tlog_open *o = push_open(t, site);
    o->start = tlog_read_clock_(t);
}

/* The root of a frame begins. */
static void push_root(tlog_thread *t, tlog_log *log, const tlog_site *site)
{
    start_frame(t, log);
    push(t, site);
    rebase_empty_chunk(t, t->stack[0].start);
}

/* A begin that opens a frame, or finds the budget or the stack used up. */
static void __attribute__((noinline)) begin_unusual(tlog_thread *t, const tlog_site *site)
{
    tlog_log *log = tlog_thread_log_(t);
    if (!log)
        return;
    if (t->top >= t->stack_end) {
        push_overflow(t, log, site);   /* not reported */
        return;
    }
    if (t->top == t->stack) /* adopted work keeps its marker below */
        push_root(t, log, site);
    else if (t->room == 0)
        push_dropped(t, log, site);
    else
        push(t, site);
    if (tlog_any_subscriber_())
        tlog_notify_begin_(t);   /* at its start: callbacks run inside the scope */
}

/* Out of the hot path, which stays as short as without subscribers: a
 * begin to be told, or timed by a clock of the application's, is pushed
 * here, then told. */
static void __attribute__((noinline)) begin_slow(tlog_thread *t, const tlog_site *site)
{
    if (TLOG_LIKELY(t->room != 0 && t->top < t->stack_end)) {
        push(t, site);
        if (tlog_any_subscriber_())
            tlog_notify_begin_(t);
        return;
    }
    begin_unusual(t, site);
}

/* ------------------------------------------------------------------------ */
/* Hot path                                                                 */
/* ------------------------------------------------------------------------ */

/* The innermost open scope is below the frame's root, and its record has
 * a slot in the current chunk (wr_end is NULL without one). */
static inline bool end_has_slot(const tlog_thread *t)
{
    return tlog_thread_depth_(t) >= 2 && (uintptr_t)t->wr < (uintptr_t)t->wr_end;
}

/* The same, and the innermost open scope is `site`'s. */
static inline bool end_in_place(const tlog_thread *t, const tlog_site *site)
{
    return end_has_slot(t) && t->top[-1].site == site;
}

/* Closes the scope end_in_place found, when its record takes the compact
 * form; false, changing nothing, when it does not. */
static inline bool end_compact(tlog_thread *t, const tlog_site *site, tlog_ticks now)
{
    tlog_open *o = t->top - 1;
    uint64_t off = o->start - t->base, dur = now - o->start;
    if (TLOG_UNLIKELY(!tlog_rec_compact_((uintptr_t)site, off, dur)))
        return false;
    tlog_rec *wr = t->wr;
    t->top = o;
    t->wr = wr + 1;
    tlog_rec_put_compact_(wr, (uintptr_t)site, off, dur, (size_t)(o - t->stack));
    if (TLOG_UNLIKELY(o->noted))
        tlog_notify_popped_(t, o, now);
    return true;
}

/* The short way for an end whose site is not its begin's but has its
 * title: an explicit pair (TIMERLOG_BEGIN / TIMERLOG_END) has a site at
 * each end. The record is the begin's, as the slow path would write it;
 * dropped scopes and markers go the slow way. */
static bool end_titled(tlog_thread *t, const tlog_site *site, tlog_ticks now)
{
    if (!end_has_slot(t))
        return false;
    const tlog_open *o = t->top - 1;
    const tlog_site *begun = o->site;
    if (begun == site || tlog_open_dropped(o) || begun == &tlog_adopt_marker_ ||
        begun == &tlog_overflow_marker_)
        return false;
    return (begun->name == site->name || tlog_same_title_(begun, site)) &&
           end_compact(t, begun, now);
}

/* An end the fast path's test did not take, at `now` (the hardware
 * clock's, or the application's clock's through end_clocked). */
static void __attribute__((noinline)) end_other(tlog_thread *t, const tlog_site *site,
                                                tlog_ticks now)
{
    if (!end_titled(t, site, now)) {
        tlog_test_slow_end_();
        end_slow(t, site, now, 0);
    }
}

/* An end timed by a clock of the application's (or CLOCK_MONOTONIC): the
 * clock is read first, and a plain end then takes the fast path's short
 * way. Such threads are not the default log's fast-path state (see
 * tlog_tls_default_), so no hardware clock is read for them. */
static void __attribute__((noinline)) end_clocked(tlog_thread *t, const tlog_site *site)
{
    tlog_ticks now = t->clock(t->clock_user);
    if (end_in_place(t, site) && end_compact(t, site, now))
        return;
    end_other(t, site, now);
}

/* fast_end is NULL with a clock of the application's: compared as
 * addresses, every begin then takes the slow path, which reads that clock. */
static inline void begin_on(tlog_thread *t, const tlog_site *site)
{
    if (TLOG_UNLIKELY(t->room == 0 || (uintptr_t)t->top >= (uintptr_t)t->fast_end) ||
        tlog_any_subscriber_()) {
        begin_slow(t, site);
        return;
    }
    tlog_open *o = push_open(t, site);
    o->start = tlog_clock_now_();
}

/* The hardware clock is read first: its reads set the pace of the fast
 * path, and any work ahead of one, a test included, delays it. States on a
 * clock of the application's never come here (end_any, end_first). */
static inline void end_on(tlog_thread *t, const tlog_site *site)
{
    tlog_ticks now = tlog_clock_now_();
    if (TLOG_UNLIKELY(!end_in_place(t, site) || !end_compact(t, site, now)))
        end_other(t, site, now);
}

/* An end through a state that may read a clock of the application's. */
static inline void end_any(tlog_thread *t, const tlog_site *site)
{
    if (t->clock)
        end_clocked(t, site);
    else
        end_on(t, site);
}

/* A begin on a thread whose state in the log could not be made: the scope
 * and all it will hold are dropped, counted and reported once. */
static void begin_without_state(tlog_log *log, const tlog_site *site)
{
    TLOG_COUNT(log, alloc_failures);
    if (tlog_thread_lose_begin_(log))
        tlog_report_(log, NULL, TLOG_ENOMEM, site,
                     "scope \"%s\" dropped with all it holds: no memory for this "
                     "thread's state", site->name);
}

static void __attribute__((noinline)) begin_first(const tlog_site *site)
{
    if (tlog_tls_clocked_) {   /* it reads a clock of the application's */
        begin_slow(tlog_tls_clocked_, site);
        return;
    }
    tlog_log *log = tlog_default();
    tlog_thread *t = log ? tlog_thread_get_(log) : NULL;
    if (t)
        begin_on(t, site);
    else if (log)
        begin_without_state(log, site);
}

/* An end on a thread with no state in the log: it closes a scope lost with
 * the state, or matches nothing. */
static void end_without_state(tlog_log *log, const tlog_site *site)
{
    if (log && site && !tlog_thread_lose_end_(log))
        report_unmatched(NULL, log, site);
}

/* Out of line, so that the fast end saves no register for it. A thread on
 * a clock of the application's ends here every time. */
static void __attribute__((noinline)) end_first(const tlog_site *site)
{
    if (tlog_tls_clocked_)
        end_clocked(tlog_tls_clocked_, site);
    else
        end_without_state(tlog_default(), site);
}

/* A NULL site opens or closes nothing; the error handler is told. */
void __attribute__((noinline)) tlog_report_null_site_(tlog_log *log, const char *call)
{
    log = tlog_resolve_log_(log);
    if (log)
        tlog_report_(log, NULL, TLOG_EINVAL, NULL, "%s: a scope needs a site; ignored", call);
}

void tlog_begin(const tlog_site *site)
{
    tlog_thread *t = tlog_tls_default_;
    if (TLOG_UNLIKELY(!site)) {
        tlog_report_null_site_(NULL, "tlog_begin(NULL)");
        return;
    }
    if (TLOG_UNLIKELY(!t)) {
        begin_first(site);
        return;
    }
    begin_on(t, site);
}

void tlog_end(const tlog_site *site)
{
    tlog_thread *t = tlog_tls_default_;
    if (TLOG_UNLIKELY(!site)) {
        tlog_report_null_site_(NULL, "tlog_end(NULL)");
        return;
    }
    if (TLOG_UNLIKELY(!t)) {
        end_first(site);
        return;
    }
    end_on(t, site);
}

void tlog_log_begin(tlog_log *log, const tlog_site *site)
{
    if (TLOG_UNLIKELY(!site)) {
        tlog_report_null_site_(log, "tlog_log_begin(log, NULL)");
        return;
    }
    tlog_thread *recent = tlog_thread_recent_(log);
    if (TLOG_LIKELY(recent)) {
        if (log_takes(log, site))
            begin_on(recent, site);
        return;
    }
    log = tlog_resolve_log_(log);
    if (!log || !log_takes(log, site))
        return;
    tlog_thread *t = tlog_thread_get_(log);
    if (t)
        begin_on(t, site);
    else
        begin_without_state(log, site);
}

void tlog_log_end(tlog_log *log, const tlog_site *site)
{
    if (TLOG_UNLIKELY(!site)) {
        tlog_report_null_site_(log, "tlog_log_end(log, NULL)");
        return;
    }
    tlog_thread *recent = tlog_thread_recent_(log);
    if (TLOG_LIKELY(recent)) {
        end_any(recent, site);
        return;
    }
    log = tlog_resolve_log_(log);
    tlog_thread *t = log ? tlog_thread_peek_(log) : NULL;
    if (t)
        end_any(t, site);
    else
        end_without_state(log, site);
}

int tlog_depth(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    tlog_thread *t = log ? tlog_thread_peek_(log) : NULL;
    return t ? (int)tlog_thread_open_scopes_(t) : 0;
}

/* ------------------------------------------------------------------------ */
/* Hand-off and inserted timings                                            */
/* ------------------------------------------------------------------------ */

tlog_token tlog_thread_token_(tlog_thread *t, tlog_log *log, const tlog_site **site)
{
    tlog_token token = {log, 0, 0, 0};
    *site = NULL;
    for (size_t i = tlog_thread_depth_(t); i-- > 0;) {
        const tlog_open *o = &t->stack[i];
        if (o->site == &tlog_adopt_marker_)
            break;
        if (o->site == &tlog_overflow_marker_ || tlog_open_dropped(o))
            continue;
        *site = o->site;
        token.frame = t->frame_id;
        token.thread = t->id;
        token.scope = o->seq;
        break;
    }
    return t->adopt.active ? t->adopt.token : token;
}

tlog_token tlog_handoff(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    tlog_token token = {log, 0, 0, 0};
    tlog_thread *t = log ? tlog_thread_peek_(log) : NULL;
    const tlog_site *site;
    return t ? tlog_thread_token_(t, log, &site) : token;
}

int tlog_adopt_begin(const tlog_token *token)
{
    if (!token || !token->thread)
        return TLOG_EINVAL;
    tlog_log *log = token->log;
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    tlog_thread *t = tlog_thread_get_(log);
    if (!t)
        return TLOG_ENOMEM;
    if (t->adopt.active)
        return TLOG_EBUSY;
    if (t->top >= t->stack_end)
        return TLOG_EDEPTH;
    bool outside = t->top == t->stack;   /* no frame: the budget opens here */
    if (outside)
        open_budget(t, log);
    tlog_ticks now = tlog_read_clock_(t);
    if (outside)
        rebase_empty_chunk(t, now);
    if (!t->cur && !next_chunk(t, log, now, now)) {
        if (outside)
            t->room = 0;   /* as it was: the next begin starts a frame */
        return TLOG_ENOMEM;
    }
    t->adopt.active = true;
    t->adopt.token = *token;
    t->adopt.token.log = log;
    t->adopt.chunk = t->cur;
    t->adopt.index = (size_t)(t->wr - t->cur->recs);
    t->adopt.seq = t->seq;
    t->adopt.dropped = t->frame_dropped;
    t->adopt.repaired = t->frame_repaired;
    t->frame_dropped = t->frame_repaired = 0;
    tlog_open *o = t->top++;
    o->site = &tlog_adopt_marker_;
    o->seq = 0;
    o->start = now;
    return TLOG_OK;
}

int tlog_adopt_end(const tlog_token *token)
{
    if (!token)
        return TLOG_EINVAL;
    tlog_log *log = tlog_resolve_log_(token->log);
    tlog_thread *t = log ? tlog_thread_peek_(log) : NULL;
    if (!t || !t->adopt.active || t->adopt.token.thread != token->thread ||
        t->adopt.token.frame != token->frame || t->adopt.token.scope != token->scope)
        return TLOG_EINVAL;
    tlog_ticks now = tlog_read_clock_(t);
    size_t inner = 0;
    while (t->top[-1 - (ptrdiff_t)inner].site != &tlog_adopt_marker_)
        inner++;
    if (inner) {
        TLOG_COUNT(log, mismatched_ends);
        tlog_report_(log, t, TLOG_EMISMATCH, NULL,
                     "adopted work ended with %zu scope(s) open; closed them", inner);
        /* Callbacks run as they close, and may end scopes themselves: up to
         * the marker, whatever is left. */
        while (t->adopt.active && t->top[-1].site != &tlog_adopt_marker_)
            close_top(t, log, now, TLOG_REC_REPAIRED, 0);
        if (!t->adopt.active)
            return TLOG_OK;   /* a callback ended the adoption */
    }
    return finish_adoption(t, log, now);
}

static int drop_insert(tlog_thread *t, tlog_log *log, const tlog_site *site, int code)
{
    if (code == TLOG_EDEPTH)
        TLOG_COUNT(log, depth_overflows);
    else
        TLOG_COUNT(log, scopes_dropped);
    if (t->frame_dropped++ == 0)
        tlog_report_(log, t, code, site, "timing \"%s\" dropped: %s", site->name,
                     tlog_strerror(code));
    return code;
}

static bool kind_valid(tlog_kind kind)
{
    return kind == TLOG_KIND_CONTROL || kind == TLOG_KIND_EXECUTION;
}

int tlog_insert(tlog_log *log, const tlog_site *site, tlog_kind kind,
                tlog_ticks start, tlog_ticks end)
{
    if (!site || !kind_valid(kind) || end < start)
        return TLOG_EINVAL;
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    tlog_thread *t = tlog_thread_get_(log);
    if (!t)
        return TLOG_ENOMEM;
    size_t depth = tlog_thread_depth_(t);
    if (!depth)
        return TLOG_ENOTOPEN;
    const tlog_open *parent = &t->stack[depth - 1];
    if (parent->site == &tlog_overflow_marker_)
        return drop_insert(t, log, site, TLOG_EDEPTH);
    if (tlog_open_dropped(parent) || t->room == 0)   /* out of budget, or of memory */
        return drop_insert(t, log, site, t->starved ? TLOG_ENOMEM : TLOG_EFULL);
    t->room--;
    unsigned flags = TLOG_REC_INSERT | (kind == TLOG_KIND_EXECUTION ? TLOG_REC_EXEC : 0);
    write_rec(t, log, site, start, end, depth, flags, 0);
    return TLOG_OK;
}

int tlog_insert_to(const tlog_token *token, const tlog_site *site, tlog_kind kind,
                   tlog_ticks start, tlog_ticks end)
{
    if (!token || !token->thread || !site || !kind_valid(kind) || end < start)
        return TLOG_EINVAL;
    tlog_log *log = token->log;
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    tlog_thread *t = tlog_thread_get_(log);
    if (!t)
        return TLOG_ENOMEM;
    tlog_attachment *a = tlog_attachment_new_(log, 2, 1);
    if (!a)
        return TLOG_ENOMEM;
    a->frame_id = token->frame;
    a->scope_seq = token->scope;
    a->worker = t->id;
    memcpy(a->worker_name, t->name, sizeof a->worker_name);
    unsigned flags = TLOG_REC_INSERT | (kind == TLOG_KIND_EXECUTION ? TLOG_REC_EXEC : 0);
    a->nslots = tlog_rec_put_(a->recs, start, site, start, end, 1, flags, 0);
    a->runs[0] = (tlog_run){start, a->nslots};
    a->nrecs = 1;
    return deliver(log, t, a, token);
}
