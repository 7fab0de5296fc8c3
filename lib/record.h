/* Recording: a thread's state in a log, its open scopes, the records its
 * scopes leave (record.c, thread.c) and the chunks that hold them. Not
 * installed. */
#ifndef TIMERLOG_RECORD_H
#define TIMERLOG_RECORD_H

#include "internal.h"
#include "clock_now.h"

/*
 * One finished scope, written when it ends: records of a frame are therefore
 * in post-order (children before parents), and `depth` alone rebuilds the
 * tree. A record takes one 16-byte slot in its compact form, two in its wide
 * form; the fast path writes only compact ones.
 *
 * Compact (no flags but EXEC and INSERT, site below 2^48, start at most
 * 2^32 - 1 ticks after its chunk's base, duration below 2^32 ticks):
 *   w0: site address (bits 0-47), depth (bits 48-60), EXEC (bit 61),
 *       INSERT (bit 62), 0 (bit 63)
 *   w1: start - base (bits 0-31), end - start (bits 32-63)
 * Wide, everything else (bit 63 of both slots' w0 set, so that a walk in
 * either direction knows a wide record from its first slot it meets):
 *   slot 0: w0 = bit 63 | site bits 0-62;  w1 = start
 *   slot 1: w0 = bit 63 | site bit 63 at bit 62 | flags (bits 48-55) |
 *               depth (bits 32-47) | tag (bits 0-31);  w1 = end
 * Sites live in the program's image or the heap: on 64-bit systems their
 * addresses fit in 48 bits but where the top byte carries a tag (hardware
 * memory tagging), which makes such a site's records wide.
 */
typedef struct tlog_rec {
    uint64_t w0;
    uint64_t w1;
} tlog_rec;

enum tlog_rec_flags {
    TLOG_REC_EXEC = 1u << 0,      /* an execution (E) entry */
    TLOG_REC_INSERT = 1u << 1,    /* inserted by hand: never began, no seq */
    TLOG_REC_REPAIRED = 1u << 2,  /* closed by a repair rule */
    TLOG_REC_DEVICE = 1u << 3,    /* a device interval */
    TLOG_REC_UNRESOLVED = 1u << 4,/* a device interval without a timing */
    TLOG_REC_PAST = 1u << 5,      /* the frame's `Device past frame end` row */
    TLOG_REC_SYNC = 1u << 6       /* a sync scope: `tag` is its index in the
                                   * frame's syncs, plus one */
};

/* A record read back. */
typedef struct tlog_rec_view {
    const tlog_site *site;
    tlog_ticks start;
    tlog_ticks end;
    uint32_t depth;
    uint32_t flags;   /* tlog_rec_flags */
    uint32_t tag;
} tlog_rec_view;

#define TLOG_REC_WIDE (UINT64_C(1) << 63)
#define TLOG_REC_DEPTH_SHIFT 48
#define TLOG_REC_FLAGS_SHIFT 61
/* The flags a compact record holds. */
#define TLOG_REC_COMPACT_FLAGS (TLOG_REC_EXEC | TLOG_REC_INSERT)
/* A record's depth is at most max_depth (an insert under a full stack). */
_Static_assert(TLOG_MAX_DEPTH < (1u << (TLOG_REC_FLAGS_SHIFT - TLOG_REC_DEPTH_SHIFT)),
               "a compact record's depth fits its 13 bits");

/* Whether a record of these values fits the compact form: one OR of the
 * values shifted. `off` is start - base, `dur` end - start. */
static inline bool tlog_rec_compact_(uintptr_t site, uint64_t off, uint64_t dur)
{
    return (((uint64_t)site >> 16 | off | dur) >> 32) == 0;
}

static inline void tlog_rec_put_compact_(tlog_rec *r, uintptr_t site, uint64_t off,
                                         uint64_t dur, size_t depth)
{
    r->w0 = (uint64_t)site | (uint64_t)depth << TLOG_REC_DEPTH_SHIFT;
    r->w1 = off | dur << 32;
}

/* Writes the record in the form it fits, at r, which has room for two
 * slots; returns the slots it took. */
static inline size_t tlog_rec_put_(tlog_rec *r, tlog_ticks base, const tlog_site *site,
                                   tlog_ticks start, tlog_ticks end, size_t depth,
                                   unsigned flags, uint32_t tag)
{
    uintptr_t s = (uintptr_t)site;
    if (!(flags & ~(unsigned)TLOG_REC_COMPACT_FLAGS) && !tag &&
        tlog_rec_compact_(s, start - base, end - start)) {
        tlog_rec_put_compact_(r, s, start - base, end - start, depth);
        r->w0 |= (uint64_t)flags << TLOG_REC_FLAGS_SHIFT;
        return 1;
    }
    uint64_t s64 = (uint64_t)s;
    r[0].w0 = TLOG_REC_WIDE | (s64 & ~TLOG_REC_WIDE);
    r[0].w1 = start;
    r[1].w0 = TLOG_REC_WIDE | (s64 >> 63) << 62 | (uint64_t)(flags & 0xffu) << 48 |
              (uint64_t)(depth & 0xffffu) << 32 | tag;
    r[1].w1 = end;
    return 2;
}

static inline bool tlog_rec_is_wide_(const tlog_rec *r)
{
    return (r->w0 & TLOG_REC_WIDE) != 0;
}

/* Reads the record whose first slot is r; returns the slots it takes. */
static inline size_t tlog_rec_get_(const tlog_rec *r, tlog_ticks base, tlog_rec_view *v)
{
    uint64_t w0 = r->w0;
    if (TLOG_LIKELY(!(w0 & TLOG_REC_WIDE))) {
        v->site = (const tlog_site *)(uintptr_t)(w0 & ((UINT64_C(1) << 48) - 1));
        v->depth = (uint32_t)(w0 >> TLOG_REC_DEPTH_SHIFT) & 0x1fffu;
        v->start = base + (uint32_t)r->w1;
        v->end = v->start + (r->w1 >> 32);
        v->flags = (uint32_t)(w0 >> TLOG_REC_FLAGS_SHIFT);
        v->tag = 0;
        return 1;
    }
    uint64_t x = r[1].w0;
    v->site = (const tlog_site *)(uintptr_t)((w0 & ~TLOG_REC_WIDE) | (x >> 62 & 1u) << 63);
    v->start = r->w1;
    v->end = r[1].w1;
    v->flags = (uint32_t)(x >> 48 & 0xffu);
    v->depth = (uint32_t)(x >> 32 & 0xffffu);
    v->tag = (uint32_t)x;
    return 2;
}

/* Reads the record whose last slot is r; returns the slots it takes (its
 * first is r + 1 - that). */
static inline size_t tlog_rec_get_back_(const tlog_rec *r, tlog_ticks base, tlog_rec_view *v)
{
    return tlog_rec_is_wide_(r) ? tlog_rec_get_(r - 1, base, v) : tlog_rec_get_(r, base, v);
}

typedef struct tlog_chunk {
    struct tlog_chunk *next;
    size_t used;          /* slots written; exact once the chunk is left */
    size_t cap;           /* slots it holds */
    tlog_ticks base;      /* compact records' starts count from it */
    tlog_rec recs[];
} tlog_chunk;

/*
 * An open scope on a thread's stack. Special entries are told apart by their
 * site pointer so the hot end path needs a single comparison:
 *  - a scope dropped for lack of budget has its site pointer tagged with 1;
 *  - &tlog_adopt_marker_ marks the start of adopted work;
 *  - &tlog_overflow_marker_ stands for the scopes beyond max_depth, whose
 *    sites are kept in tlog_thread.over so that their ends are checked too.
 */
typedef struct tlog_open {
    const tlog_site *site;
    uint64_t start;
    uint32_t seq;         /* begin order within the frame */
    uint32_t noted;       /* subscribers were told of its begin */
} tlog_open;

/* What subscribers were told of an open scope's begin, beside its stack
 * entry (tlog_thread.notes). */
typedef struct tlog_note {
    uint64_t instance;
    uint64_t site_id;     /* the begin's, told again at the end */
    uint64_t newest;      /* serial of the newest subscriber told */
} tlog_note;

extern TLOG_INTERNAL const tlog_site tlog_adopt_marker_;
extern TLOG_INTERNAL const tlog_site tlog_overflow_marker_;

static inline bool tlog_open_dropped(const tlog_open *o)
{
    return ((uintptr_t)o->site & 1u) != 0;
}

static inline const tlog_site *tlog_open_site(const tlog_open *o)
{
    return (const tlog_site *)((uintptr_t)o->site & ~(uintptr_t)1);
}

/* Records copied from one chunk into an attachment, with that chunk's base. */
typedef struct tlog_run {
    tlog_ticks base;
    size_t slots;
} tlog_run;

/* Work a thread did for another thread's scope, or a timing inserted there. */
typedef struct tlog_attachment {
    struct tlog_attachment *next;
    uint64_t frame_id;       /* the owner's frame in progress */
    uint32_t scope_seq;      /* the owner's scope it belongs under */
    uint32_t worker;         /* id of the worker thread, 0 for inserts */
    bool has_row;            /* shows as a `==>` row named after the worker */
    uint64_t start, end;     /* the adoption interval, for the row */
    uint64_t dropped;        /* scopes dropped inside the adopted work */
    uint64_t repaired;       /* scopes repaired inside the adopted work */
    size_t bytes;            /* size of this allocation */
    uint16_t base_depth;     /* records at base_depth + 1 hang off the row */
    char worker_name[TLOG_NAME_MAX];
    size_t nrecs;            /* records */
    size_t nslots;           /* the slots they take, in `runs` order */
    size_t nruns;
    tlog_run *runs;          /* in this allocation, after recs */
    tlog_rec recs[];
} tlog_attachment;

#define TLOG_CACHE_LINE 64

struct tlog_thread {
    /* Hot: what begin and end touch, in the first cache line (the state is
     * allocated on a TLOG_CACHE_LINE boundary: thread.c). */
    tlog_open *top;          /* next free stack slot */
    /* Begins at or past it take the slow path: stack + max_depth, or NULL
     * with a clock of the application's, whose scopes all take it. */
    tlog_open *fast_end;
    tlog_rec *wr;            /* next record slot in the current chunk */
    /* Ends write compact records below it: the current chunk's end, NULL
     * while the thread has no chunk. */
    tlog_rec *wr_end;
    tlog_ticks base;         /* the current chunk's base */
    size_t room;             /* records the frame may still reserve; 0 outside frames */
    tlog_open *stack;        /* base of the open-scope stack */
    uint32_t seq;

    /* Cold. */
    tlog_open *stack_end;    /* stack + max_depth: begins at or past it overflow */
    tlog_clock_fn clock;     /* NULL: the hardware clock */
    void *clock_user;
    _Atomic(tlog_log *) log; /* NULL once the log is destroyed */
    uint32_t id;
    char name[TLOG_NAME_MAX];
    tlog_chunk *first;       /* chunks of the frame in progress */
    tlog_chunk *cur;
    /* Room for the ends of the open scopes, taken when record memory runs
     * out, so that no scope already begun loses its record. */
    tlog_chunk *reserve;
    bool starved;            /* the reserve is in use: drop new scopes */
    /* Sites of scopes past max_depth (dropped, but their ends are checked);
     * `blind` counts those that found no room even here. */
    const tlog_site **over;
    size_t nover, capover, blind;
    uint64_t frame_id;       /* frames started on this thread */
    size_t frame_chunks;     /* chunks the frame in progress took */
    size_t last_chunks;      /* and the last frame */
    /* The frame in progress, which other threads and the device layer
     * deliver to: set and cleared by this thread under log->lock, read by
     * others under it. NULL between frames, or if it found no memory. */
    tlog_frame *frame;
    uint64_t frame_dropped;
    uint64_t frame_repaired;
    struct {
        bool active;
        tlog_token token;
        tlog_chunk *chunk;   /* where its records start */
        size_t index;
        uint32_t seq;        /* seq to restore at the end */
        uint64_t dropped;    /* the thread's own counts, restored at the end */
        uint64_t repaired;
    } adopt;
    tlog_note *notes;        /* beside the stack, made at the first report */
    tlog_thread *next_in_log;    /* guarded by log->lock */
    tlog_thread *next_in_thread; /* owned by the thread */
};
_Static_assert(offsetof(tlog_thread, seq) + sizeof(uint32_t) <= TLOG_CACHE_LINE,
               "the fields begin and end touch fit in one cache line");

/* The calling thread's state in the default log (thread.c); NULL while the
 * log reads a clock of the application's, whose scopes then go through
 * tlog_begin's and tlog_end's first-use path. */
extern TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_default_;
#define TLOG_TLS_DEFAULT_DEFINITION TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_default_
/* The state in the default log while that reads a clock of the
 * application's (thread.c). */
extern TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_clocked_;
#define TLOG_TLS_CLOCKED_DEFINITION TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_clocked_
/* The calling thread's state last found in a log by tlog_thread_peek_
 * (thread.c), or NULL: cleared before it is freed, and at fork in the
 * child, whose states of inherited logs are dropped. */
extern TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_recent_;
#define TLOG_TLS_RECENT_DEFINITION TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_recent_

/* thread.c */
TLOG_INTERNAL tlog_thread *tlog_thread_get_(tlog_log *log);
/* A begin or end on a thread with no state in the log because making it
 * failed. lose_begin: true for the first of the lost scopes (the one to
 * report); lose_end: true when the end closes one of them. */
TLOG_INTERNAL bool tlog_thread_lose_begin_(tlog_log *log);
TLOG_INTERNAL bool tlog_thread_lose_end_(tlog_log *log);
TLOG_INTERNAL tlog_thread *tlog_thread_find_locked_(tlog_log *log, uint32_t id);
/* The calling thread's state in `log`, or NULL: never creates one. */
TLOG_INTERNAL tlog_thread *tlog_thread_peek_(tlog_log *log);
/* Frees the calling thread's states of destroyed logs, if there are any. */
TLOG_INTERNAL void tlog_thread_tidy_(void);
TLOG_INTERNAL void tlog_threads_orphan_(tlog_log *log);

/* record.c */
/* Scopes open on the thread: markers are not scopes; scopes past max_depth
 * are. */
TLOG_INTERNAL size_t tlog_thread_open_scopes_(const tlog_thread *t);
TLOG_INTERNAL void tlog_thread_close_all_(tlog_thread *t, int code);
/* Ends `site` on t as of `now` (a reading taken earlier); a non-zero `tag`
 * marks its record as a sync scope's (tlog_frame_add_sync_). */
TLOG_INTERNAL void tlog_thread_end_at_(tlog_thread *t, const tlog_site *site, tlog_ticks now,
                                      uint32_t tag);
/* The token tlog_handoff would give, and the site of the innermost open
 * scope (NULL inside adopted work with nothing open). */
TLOG_INTERNAL tlog_token tlog_thread_token_(tlog_thread *t, tlog_log *log,
                                           const tlog_site **site);

/* Counts an end that took the slow path, in a -Dtest_hooks=true build
 * (test_hooks.c); nothing otherwise. */
#ifdef TIMERLOG_TEST_HOOKS
TLOG_INTERNAL void tlog_test_slow_end_(void);
#else
static inline void tlog_test_slow_end_(void) {}
#endif

TLOG_INTERNAL void tlog_attachments_free_(tlog_log *log, tlog_attachment *first);
/* An attachment with room for `slots` record slots in `runs` runs. */
TLOG_INTERNAL tlog_attachment *tlog_attachment_new_(tlog_log *log, size_t slots, size_t runs);

/* chunk pool (record.c): made and torn down with the log; destroying it
 * frees the chunks it holds. */
TLOG_INTERNAL void tlog_pool_init_(tlog_log *log);
TLOG_INTERNAL void tlog_pool_destroy_(tlog_log *log);
TLOG_INTERNAL tlog_chunk *tlog_chunk_get_(tlog_log *log);
TLOG_INTERNAL void tlog_chunks_put_(tlog_log *log, tlog_chunk *first);
TLOG_INTERNAL void tlog_chunk_free_(tlog_log *log, tlog_chunk *c);

static inline tlog_ticks tlog_read_clock_(const tlog_thread *t)
{
    return t->clock ? t->clock(t->clock_user) : tlog_clock_now_();
}

/* The log t records into; NULL once that log is destroyed. */
static inline tlog_log *tlog_thread_log_(const tlog_thread *t)
{
    return atomic_load_explicit(&((tlog_thread *)t)->log, memory_order_relaxed);
}

/* The calling thread's state in `log` when it is the one last found there:
 * a log given by the application finds it with one TLS load and one
 * compare. A state whose log was destroyed has no log: it matches neither
 * a new log made at the same address nor NULL (the default log, which the
 * caller resolves the long way). */
static inline tlog_thread *tlog_thread_recent_(const tlog_log *log)
{
    tlog_thread *t = tlog_tls_recent_;
    return t && log && tlog_thread_log_(t) == log ? t : NULL;
}

static inline size_t tlog_thread_depth_(const tlog_thread *t)
{
    return (size_t)(t->top - t->stack);
}

#endif
