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
 * tree. 32 bytes.
 */
typedef struct tlog_rec {
    const tlog_site *site;
    uint64_t start;
    uint64_t end;
    uint16_t depth;
    uint16_t flags;   /* tlog_rec_flags */
    uint32_t reserved;
} tlog_rec;

enum tlog_rec_flags {
    TLOG_REC_EXEC = 1u << 0,      /* an execution (E) entry */
    TLOG_REC_INSERT = 1u << 1,    /* inserted by hand: never began, no seq */
    TLOG_REC_REPAIRED = 1u << 2,  /* closed by a repair rule */
    TLOG_REC_DEVICE = 1u << 3,    /* a device interval */
    TLOG_REC_UNRESOLVED = 1u << 4,/* a device interval without a timing */
    TLOG_REC_PAST = 1u << 5,      /* the frame's `Device past frame end` row */
    TLOG_REC_SYNC = 1u << 6       /* a sync scope: `reserved` is its index in
                                   * the frame's syncs, plus one */
};

typedef struct tlog_chunk {
    struct tlog_chunk *next;
    size_t used;          /* records written; exact once the chunk is left */
    size_t cap;           /* records it holds */
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
    size_t nrecs;
    tlog_rec recs[];
} tlog_attachment;

#define TLOG_CACHE_LINE 64

struct tlog_thread {
    /* Hot: what begin and end touch, in the first cache line (the state is
     * allocated on a TLOG_CACHE_LINE boundary: thread.c). */
    tlog_open *stack;        /* base of the open-scope stack */
    tlog_open *top;          /* next free stack slot */
    tlog_open *stack_end;    /* stack + max_depth: begins at or past it are slow */
    tlog_rec *wr;            /* next record slot in the current chunk */
    tlog_rec *wr_end;
    size_t room;             /* records the frame may still reserve; 0 outside frames */
    tlog_clock_fn clock;
    uint32_t seq;
    /* Read by begin and end only with a clock of the application's. */
    void *clock_user;

    /* Cold. */
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

/* The calling thread's state in the default log (thread.c). */
extern TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_default_;
#define TLOG_TLS_DEFAULT_DEFINITION TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_default_

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
TLOG_INTERNAL void tlog_thread_close_all_(tlog_thread *t, int code);
/* Ends `site` on t as of `now` (a reading taken earlier); a non-zero `tag`
 * marks its record as a sync scope's (tlog_frame_add_sync_). */
TLOG_INTERNAL void tlog_thread_end_at_(tlog_thread *t, const tlog_site *site, tlog_ticks now,
                                      uint32_t tag);
/* The token tlog_handoff would give, and the site of the innermost open
 * scope (NULL inside adopted work with nothing open). */
TLOG_INTERNAL tlog_token tlog_thread_token_(tlog_thread *t, tlog_log *log,
                                           const tlog_site **site);

TLOG_INTERNAL void tlog_attachments_free_(tlog_log *log, tlog_attachment *first);
TLOG_INTERNAL tlog_attachment *tlog_attachment_new_(tlog_log *log, size_t nrecs);

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

static inline size_t tlog_thread_depth_(const tlog_thread *t)
{
    return (size_t)(t->top - t->stack);
}

#endif
