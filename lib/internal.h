/* Internal structures shared by the core's files. Not installed. */
#ifndef TIMERLOG_INTERNAL_H
#define TIMERLOG_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "timerlog/timerlog.h"
#include "clock_now.h"
#include "lock.h"

#define TLOG_LIKELY(x) __builtin_expect(!!(x), 1)
#define TLOG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLOG_INTERNAL __attribute__((visibility("hidden")))

#define TLOG_NAME_MAX 64
#define TLOG_CHUNK_RECS 2048u
#define TLOG_DEFAULT_BUDGET ((size_t)8 << 20)
#define TLOG_DEFAULT_POOL ((size_t)16 << 20)
#define TLOG_DEFAULT_FRAMES 8u
#define TLOG_DEFAULT_DEPTH 128u
#define TLOG_MAX_DEPTH 4096u
#define TLOG_DEFAULT_SYNC_TIMEOUT 5000000000ull

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

/*
 * A device interval delivered to its frame: what was recorded, nothing about
 * where it shows; resolve.c places it by the rule table in doc/format.md.
 * Times are host ticks.
 */
typedef struct tlog_drow {
    const tlog_site *site;
    const tlog_site *launch_site;
    const char *device;      /* interned: outlives the device */
    uint64_t device_id;      /* tlog_device serial, for bound sync scopes */
    const void *queue_key;   /* the queue's ordering key */
    tlog_ticks launch;       /* host clock when the device scope began */
    tlog_ticks start, end;   /* on the host timeline; unresolved: launch */
    uint32_t launch_seq;     /* launching scope */
    uint32_t queue;
    bool unresolved;
} tlog_drow;

/* What a sync scope waited on, beside its record (TLOG_REC_SYNC). */
typedef struct tlog_sync_bind {
    uint64_t device_id;      /* 0: every device */
    const void *queue_key;   /* with queue_bound: only this queue */
    bool queue_bound;
    /* Rows the frame had once the scope's end read the device: those were
     * complete by then, whatever the clocks' mapping says. */
    size_t rows_seen;
} tlog_sync_bind;

typedef struct tlog_devices tlog_devices;
typedef struct tlog_stream tlog_stream;
typedef struct tlog_sublist tlog_sublist;
typedef struct tlog_thread tlog_thread;

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

/* A resolved row of a frame's tree. */
struct tlog_node {
    const tlog_node *parent;
    const tlog_node *first_child;
    const tlog_node *next_sibling;
    const char *name;
    const tlog_site *site;
    const char *thread_name;
    uint32_t thread;
    uint8_t kind;
    uint8_t flags;
    int depth;
    int64_t start_ns;
    uint64_t total_ns;
    uint64_t self_ns;
    uint64_t min_ns;
    uint64_t max_ns;
    uint64_t count;
    double percent;
    const struct tlog_node_dev *dev; /* device rows only */
    const struct tlog_node_ranks *ranks; /* rows of reduced frames only */
};

/* A row's total across the inputs (ranks) of a reduced frame; an input
 * without the row counts as 0. */
typedef struct tlog_node_ranks {
    uint32_t present;        /* inputs that have the row */
    uint64_t min_ns, max_ns;
    double mean_ns;
} tlog_node_ranks;

/* What a device row adds to a node; kept aside, host rows are most rows. */
typedef struct tlog_node_dev {
    const tlog_node *launcher;
    const tlog_site *launch_site;
    const char *device;
    uint32_t queue;
} tlog_node_dev;

/* A device instance's launcher, by instance index. */
typedef struct tlog_inst_dev {
    uint32_t inst;
    uint32_t launcher;       /* node index, or UINT32_MAX */
} tlog_inst_dev;

/* One instance on the frame's timeline. */
typedef struct tlog_inst {
    uint32_t node;
    uint32_t thread;
    int64_t start_ns;
    uint64_t duration_ns;
} tlog_inst;

struct tlog_frame {
    tlog_log *log;
    unsigned fork_generation; /* its log's, kept here: a frame may be
                               * released after its log is destroyed */
    atomic_int refs;          /* the queue (or its thread, while in
                               * progress), readers, the stream writer,
                               * and each device scope not yet delivered */
    uint64_t serial;
    uint32_t thread;
    char thread_name[TLOG_NAME_MAX];
    uint64_t dropped;
    uint64_t repaired;
    tlog_frame *older, *newer; /* in the log's queue (log->lock) */

    /* What the frame collects while in progress and until it is resolved,
     * from its thread, adopted workers and the device layer (open.c). Raw
     * until resolved, then given back. */
    pthread_mutex_t lock;     /* the mailbox: attachments, drows, syncs */
    uint64_t frame_id;        /* tokens name the frame by it */
    bool taking_work;         /* attachments accepted: until the root ends */
    bool taking_rows;         /* device rows accepted: until resolved */
    atomic_bool completed;    /* its root ended */
    atomic_bool read;         /* a reader took it (tlog_frame_latest...) */
    atomic_size_t outstanding; /* device scopes launched here, not delivered */
    size_t attached_recs;     /* record slots attachments took */
    uint64_t attached_dropped; /* scopes refused for lack of budget */
    uint64_t rows_lost;       /* device rows that found no memory */
    tlog_chunk *chunks;
    tlog_attachment *attachments;
    tlog_drow *drows;        /* in order of delivery */
    size_t ndrows, capdrows;
    size_t rows_at_end;       /* rows it had once its root's end read the
                               * device: those were complete by then */
    tlog_sync_bind *syncs;
    size_t nsyncs, capsyncs;

    pthread_mutex_t resolve_lock;
    atomic_bool resolved;
    tlog_node *nodes;         /* in tree order: parents first (tree.h) */
    size_t nnodes;
    tlog_inst *insts;
    size_t ninsts;
    char (*worker_names)[TLOG_NAME_MAX];
    size_t nworker_names;
    int64_t start_ns;
    uint64_t duration_ns;
    uint64_t device_rows, device_unresolved;
    size_t stream_bytes;      /* raw records held, while the writer waits */
    uint32_t rank;            /* of the process that recorded it */
    uint64_t wall0_ns;        /* its log's creation, ns since the epoch */
    char *strings;            /* names a frame read from a stream owns */
    tlog_node_dev *node_devs;
    size_t nnode_devs;
    tlog_inst_dev *inst_devs;    /* sorted by instance, device_rows of them */
    tlog_node_ranks *node_ranks; /* reduced frames: one per row */
    uint32_t reduced_ranks;      /* reduced frames: inputs, else 0 */
    size_t partial_rows;         /* reduced frames: rows some input lacks */
};

struct tlog_log {
    atomic_int level;
    bool is_default;
    unsigned fork_generation; /* of the process that made it */
    bool bad_timeout_env;     /* TIMERLOG_SYNC_TIMEOUT_MS was unreadable */
    /* Reports made while the log is being made, when a library lock may be
     * held (the default log's): told once it is made, with no lock held.
     * The list is guarded by error_lock; making a log reports at most two
     * things (TIMERLOG_BUFSIZE, then the stream). */
    atomic_bool creating;
    struct { int code; char msg[256]; } deferred[4];
    unsigned ndeferred;
    tlog_config cfg;          /* with defaults filled in */
    size_t budget_recs;       /* records per thread per frame */
    size_t chunk_recs;

    pthread_mutex_t lock;     /* threads, frames in progress, frame queue */
    int exiting;              /* threads leaving it now (thread.c's lock) */
    tlog_thread *threads;
    uint32_t next_thread_id;
    /* Completed frames, oldest first; at most cfg.max_frames per thread. */
    tlog_frame *oldest, *newest;
    size_t queue_len;
    uint64_t next_serial;

    /* resolve.c's scratch memory, kept for the next frame; NULL while a
     * resolve has it (another then makes its own). */
    _Atomic(struct tlog_resolve_scratch *) resolve_scratch;

    pthread_mutex_t pool_lock;
    tlog_chunk *pool;
    size_t pool_held;         /* bytes in the pool, at most cfg.pool_bytes */

    uint64_t tick0;           /* clock at creation: origin of frame starts */
    const char *clock_name;
    double custom_rate;       /* ns per tick of cfg.clock */
    _Atomic uint64_t chunk_bytes; /* record memory held, in use or pooled */
    _Atomic(tlog_devices *) devices; /* made with the first device */
    _Atomic(tlog_stream *) stream; /* set at creation, or NULL */
    uint64_t wall0_ns;        /* CLOCK_REALTIME at creation */
    uint32_t rank;            /* MPI rank from the environment, or 0 */

    /* Subscribers (subscribe.c): the list readers use, NULL when none. */
    _Atomic(tlog_sublist *) subs;
    atomic_int device_subs;           /* of them, with device_interval */
    pthread_mutex_t sub_lock;
    uint64_t sub_serial;
    tlog_sublist *subs_retired;       /* earlier lists, freed with the log */
    struct tlog_subscription *subs_kept; /* unsubscribed, freed with the log */

    pthread_mutex_t error_lock;
    struct { int code; const tlog_site *site; uint64_t times; } reported[64];
    unsigned nreported;

    /* Statistics across frames (stats.c): NULL when the log keeps none.
     * Frames are counted as they are resolved, under stats_lock. */
    struct tlog_summary *summary;
    pthread_mutex_t stats_lock;
    _Atomic uint64_t stats_lost;  /* frames left out for lack of memory */
    struct tlog_report *report;   /* TIMERLOG_REPORT, or NULL */
    bool bad_report_env;          /* TIMERLOG_REPORT was unreadable */

    struct {
        _Atomic uint64_t frames_completed, frames_dropped, scopes_dropped,
            depth_overflows, mismatched_ends, unmatched_ends, scopes_repaired,
            open_at_thread_exit, late_work, alloc_failures, threads;
    } stats;
};

/* initial-exec: a TLS read is one %fs-relative load, not a call to
 * __tls_get_addr, even inside a shared library. */
#define TLOG_TLS __thread __attribute__((tls_model("initial-exec")))

/* The calling thread's state in the default log (thread.c). */
extern TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_default_;
#define TLOG_TLS_DEFAULT_DEFINITION TLOG_TLS TLOG_INTERNAL tlog_thread *tlog_tls_default_

/* log.c */
TLOG_INTERNAL tlog_log *tlog_resolve_log_(tlog_log *log);
TLOG_INTERNAL void tlog_report_(tlog_log *log, const tlog_thread *t, int code,
                                const tlog_site *site, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A scope call given a NULL site (`call` says which, as written): reported
 * as TLOG_EINVAL on `log` (NULL: the default log); nothing is recorded. */
TLOG_INTERNAL void tlog_report_null_site_(tlog_log *log, const char *call);
#define TLOG_COUNT(log, field) \
    atomic_fetch_add_explicit(&(log)->stats.field, 1, memory_order_relaxed)

/* clock.c */
TLOG_INTERNAL void tlog_clock_init_(tlog_log *log);
/* A fresh measurement of the rate (may wait up to 10 ms after load). */
TLOG_INTERNAL double tlog_clock_calibrate_(tlog_log *log);
/* The last measured rate. */
TLOG_INTERNAL double tlog_ns_per_tick_(tlog_log *log);
TLOG_INTERNAL int64_t tlog_mono_ns_(void);

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

/* chunk pool (record.c) */
TLOG_INTERNAL tlog_chunk *tlog_chunk_get_(tlog_log *log);
TLOG_INTERNAL void tlog_chunks_put_(tlog_log *log, tlog_chunk *first);
TLOG_INTERNAL void tlog_chunk_free_(tlog_log *log, tlog_chunk *c);

/* open.c: frames in progress */
/* A zeroed frame with one reference and its locks made; NULL if no memory. */
TLOG_INTERNAL tlog_frame *tlog_frame_alloc_(tlog_log *log);
/* The thread's root scope began: its frame is made and published. */
TLOG_INTERNAL void tlog_frame_open_(tlog_log *log, tlog_thread *t);
/* The root ended: the frame stops taking work (not rows) and is returned
 * with the thread's reference; NULL if it could not be made. */
TLOG_INTERNAL tlog_frame *tlog_frame_end_(tlog_log *log, tlog_thread *t);
/* The frame a token names, with a new reference, or NULL once that frame
 * has ended. */
TLOG_INTERNAL tlog_frame *tlog_frame_find_(tlog_log *log, tlog_thread *t,
                                           const tlog_token *tok);
/* Adds work other threads did: TLOG_OK, TLOG_EFULL (budget; *first_drop
 * on the frame's first refusal) or TLOG_ELATE (the root ended). */
TLOG_INTERNAL int tlog_frame_attach_(tlog_frame *f, tlog_attachment *a, size_t need,
                                     uint64_t scopes, bool *first_drop);
/* Adds a device interval: TLOG_OK, TLOG_ELATE once the frame is resolved,
 * TLOG_ENOMEM (counted in rows_lost). */
TLOG_INTERNAL int tlog_frame_add_row_(tlog_frame *f, const tlog_drow *row);
/* Notes what a sync scope waited on, once its end has read the device (the
 * rows delivered so far were complete by then): its tag (index + 1); 0 if
 * no memory, or if the root ended meanwhile (the frame may be read). */
TLOG_INTERNAL uint32_t tlog_frame_add_sync_(tlog_frame *f, const tlog_sync_bind *bind);
/* Counts a device scope launched in the frame (in `outstanding`) unless its
 * root ended meanwhile: false then, and nothing is counted. `own`: the
 * caller is the frame's thread, outside adopted work. */
TLOG_INTERNAL bool tlog_frame_reserve_(tlog_frame *f, bool own);
/* The root's end has read the device: the rows delivered so far were
 * complete by then. Before the frame is queued. */
TLOG_INTERNAL void tlog_frame_mark_end_(tlog_frame *f);
/* Resolving begins: rows delivered from now on are late. */
TLOG_INTERNAL void tlog_frame_stop_rows_(tlog_frame *f);
/* The one readiness rule: the root ended and every device interval launched
 * in the frame was delivered to it. */
TLOG_INTERNAL bool tlog_frame_ready_(const tlog_frame *f);

/* frame.c */
/* Caller holds log->lock; returns the frames pushed out (the oldest of the
 * same thread when it has max_frames waiting, and frames of exited threads
 * past max_frames times the threads recording), linked by `older`, for the
 * caller to release after unlocking. */
TLOG_INTERNAL tlog_frame *tlog_queue_push_locked_(tlog_log *log, tlog_frame *frame);
TLOG_INTERNAL void tlog_frames_clear_(tlog_log *log);
/* The calling thread's newest frame for tlog_dump, resolved; NULL with
 * TLOG_ENOFRAME (none) or TLOG_ENOMEM (not resolved) in *why. */
TLOG_INTERNAL tlog_frame *tlog_frame_for_dump_(tlog_log *log, int *why);
/* Resolves the frame if no one has yet, first waiting for its device work
 * if `wait` (the forced sync); keeps the caller's reference either way. */
TLOG_INTERNAL int tlog_frame_resolve_once_(tlog_frame *f, bool wait);

/* stats.c: a log's own statistics and the report at exit */
/* Reads TIMERLOG_REPORT and makes the log's summary when statistics are
 * on; TLOG_ENOMEM. */
TLOG_INTERNAL int tlog_stats_open_(tlog_log *log);
/* Says what was wrong with TIMERLOG_REPORT, if anything. */
TLOG_INTERNAL void tlog_stats_report_env_(tlog_log *log);
/* Counts a frame this call resolved, if the log keeps statistics. */
TLOG_INTERNAL void tlog_stats_feed_(tlog_frame *f);
/* Counts a frame pushed out of the queue unread; a failure is said. */
TLOG_INTERNAL void tlog_stats_count_evicted_(tlog_frame *f);
/* Writes the report TIMERLOG_REPORT asks for, if any, once. */
TLOG_INTERNAL void tlog_stats_write_report_(tlog_log *log);
TLOG_INTERNAL void tlog_stats_close_(tlog_log *log);
static inline bool tlog_stats_on_(const tlog_log *log)
{
    return log->summary != NULL;
}

/* resolve.c: builds nodes and instances from the raw records, then gives
 * the records back. Caller holds frame->resolve_lock. */
TLOG_INTERNAL int tlog_frame_resolve_locked_(tlog_frame *frame);
TLOG_INTERNAL void tlog_frame_free_raw_(tlog_frame *frame);
/* Frees the scratch memory the log keeps for resolving. */
TLOG_INTERNAL void tlog_resolve_scratch_free_(tlog_log *log);

/* device/: resolving for readers */
/* Waits (at most the log's sync timeout) for the device work still pending
 * in frame `f`, and delivers it: the forced sync. */
TLOG_INTERNAL void tlog_device_settle_(tlog_frame *f);
/* Delivers without blocking what is done on every device of the log. */
TLOG_INTERNAL void tlog_devices_poll_(tlog_log *log);
/* The same at a root's end, on the recording thread: no marker is made,
 * and what callbacks must be told (errors, intervals for subscribers) waits
 * in the result for tlog_devices_poll_finish_, once the frame is queued.
 * NULL when there was nothing to read or no memory. */
TLOG_INTERNAL void *tlog_devices_poll_deferred_(tlog_log *log);
TLOG_INTERNAL void tlog_devices_poll_finish_(tlog_log *log, void *pending);
TLOG_INTERNAL void tlog_devices_destroy_(tlog_log *log);

/* stream.c */
TLOG_INTERNAL int tlog_stream_open_(tlog_log *log);
/* Copies `pattern` with each `%` replaced by the MPI rank, or the process
 * id when no rank is visible or the process was forked (a forked rank
 * would share its parent's file); false when it does not fit. */
TLOG_INTERNAL bool tlog_expand_path_(const char *pattern, char *out, size_t size);
/* The MPI rank the environment shows (Open MPI, PMIx, MPICH/PMI, Slurm),
 * or -1. */
TLOG_INTERNAL long tlog_env_rank_(void);
/* Hands a frame (and one reference) to the writer; false if not taken. */
TLOG_INTERNAL bool tlog_stream_take_(tlog_log *log, tlog_frame *f);
/* Writes what is waiting, ends the file; `release` frees the stream. */
TLOG_INTERNAL void tlog_stream_close_(tlog_log *log, bool release);
TLOG_INTERNAL void tlog_stream_stats_(tlog_log *log, uint64_t *written, uint64_t *lost);

/* fork.c: the process-wide locks, each module's taken before fork() and
 * let go after it in both processes, so that a child never finds one held
 * by a thread it does not have. A log's own locks (and its frames',
 * streams' and devices') cannot all be taken around a fork, so the child
 * leaves every log made before it to the parent: its default log starts
 * afresh, and a log it inherited is refused (tlog_log_inherited_). */
enum { TLOG_FORK_PREPARE, TLOG_FORK_PARENT, TLOG_FORK_CHILD };
/* How many forks stand between the first process and this one. */
extern TLOG_INTERNAL _Atomic unsigned tlog_fork_generation_now_;
static inline unsigned tlog_fork_generation_(void)
{
    return atomic_load_explicit(&tlog_fork_generation_now_, memory_order_relaxed);
}
/* Says, the first time, that an inherited log was used; true. */
TLOG_INTERNAL bool tlog_log_inherited_said_(void);
/* A frame of a log made by an ancestor process, said the first time. */
static inline bool tlog_frame_inherited_(const tlog_frame *f)
{
    return TLOG_UNLIKELY(f->log && f->fork_generation != tlog_fork_generation_()) &&
           tlog_log_inherited_said_();
}
/* True for a log made by an ancestor process, said the first time. Inline:
 * tlog_log_begin asks it of every scope. */
static inline bool tlog_log_inherited_(const tlog_log *log)
{
    return TLOG_UNLIKELY(log && log->fork_generation != tlog_fork_generation_()) &&
           tlog_log_inherited_said_();
}
/* Resolves *log as tlog_resolve_log_ does, answering why it could not:
 * TLOG_EINVAL for a log inherited across fork(), TLOG_ENOMEM when the
 * default log could not be made (*log is then NULL). */
TLOG_INTERNAL int tlog_take_log_(tlog_log **log);
TLOG_INTERNAL void tlog_subscribe_atfork_(int phase);
/* An end in a forked child that closes a scope its thread had open in the
 * parent's default log when it forked: consumed, true. */
TLOG_INTERNAL bool tlog_thread_forked_end_(const tlog_log *log);
/* Takes `lock` (of row `rank` of lock.h's table) before fork(), lets it
 * go after. */
TLOG_INTERNAL void tlog_fork_lock_(pthread_mutex_t *lock, enum tlog_lock_rank rank,
                                   int phase);
TLOG_INTERNAL void tlog_log_atfork_(int phase);
TLOG_INTERNAL void tlog_thread_atfork_(int phase);
TLOG_INTERNAL void tlog_site_atfork_(int phase);
TLOG_INTERNAL void tlog_clock_atfork_(int phase);

/* subscribe.c */
/* Logs that have subscribers: the hot path's one check. */
extern TLOG_INTERNAL _Atomic int tlog_subscribed_;
static inline bool tlog_any_subscriber_(void)
{
    return TLOG_UNLIKELY(atomic_load_explicit(&tlog_subscribed_, memory_order_relaxed) != 0);
}
/* Tells subscribers of a begin; true (and *note filled) if any was told. */
TLOG_INTERNAL bool tlog_notify_begin_(tlog_thread *t, tlog_log *log, const tlog_site *site,
                                      tlog_note *note);
TLOG_INTERNAL void tlog_notify_end_(tlog_thread *t, tlog_log *log, const tlog_open *o,
                                    const tlog_note *note, tlog_ticks now,
                                    unsigned rec_flags);
/* Fills in size, log and site_id. */
TLOG_INTERNAL void tlog_notify_frame_(tlog_log *log, tlog_frame_event *event);
/* Whether some subscriber wants device intervals. */
TLOG_INTERNAL bool tlog_subscribed_device_(tlog_log *log);
/* Fills in size, log, site_id and instance. */
TLOG_INTERNAL void tlog_notify_devices_(tlog_log *log, tlog_device_event *events, size_t n);
TLOG_INTERNAL void tlog_subs_destroy_(tlog_log *log);
/* Subscriptions on the log now. */
TLOG_INTERNAL uint64_t tlog_subs_count_(tlog_log *log);

/* export.c: text for the JSON and CSV writers. */
/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
TLOG_INTERNAL void tlog_json_str_(FILE *out, const char *s);
/* A CSV field, quoted when it needs to be. */
TLOG_INTERNAL void tlog_csv_field_(FILE *out, const char *s);
/* Text as UTF-8 (U+FFFD for bytes that are not), quotes doubled when
 * `quote`. */
TLOG_INTERNAL void tlog_put_utf8_(FILE *out, const char *s, bool quote);

/* site.c */
TLOG_INTERNAL uint64_t tlog_hash_str_(uint64_t h, const char *s);
TLOG_INTERNAL bool tlog_same_title_(const tlog_site *a, const tlog_site *b);
TLOG_INTERNAL void tlog_site_count_(const tlog_site *const *sites, const uint64_t *counts,
                                    size_t n);
/* What the library keeps per site (site.c). */
typedef struct tlog_site_entry {
    const tlog_site *site;
    uint64_t id;                  /* tlog_site_id(site) */
    _Atomic uint64_t resolved;    /* tlog_site_instances */
    _Atomic uint64_t reported;    /* begins and intervals told to subscribers */
} tlog_site_entry;
/* The site's entry, made on first use; stays valid for the process's life.
 * NULL if memory ran out. Takes a lock: cache what it returns. */
TLOG_INTERNAL tlog_site_entry *tlog_site_entry_(const tlog_site *site);

/* Writes v >= 0 with `decimals` (at most 9) digits after a '.', whatever
 * the locale (printf's %f would write a ',' in some), into buf, which
 * holds at least 32 bytes; its length. Digit by digit: the dump writes one
 * per row. */
static inline int tlog_format_fixed_(char *buf, double v, int decimals)
{
    if (!(v >= 0) || v > 1e12) {   /* NaN, negative or absurd: never from real data */
        const char *text = v > 1e12 ? "1e12" : "0";
        memcpy(buf, text, strlen(text) + 1);
        return (int)strlen(text);
    }
    uint64_t scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    uint64_t units = (uint64_t)(v * (double)scale + 0.5);
    uint64_t whole = units / scale, fraction = units % scale;
    char backwards[32];
    int n = 0, i = 0;
    do {   /* at least one digit, as "%0*llu" writes */
        backwards[n++] = (char)('0' + fraction % 10);
        fraction /= 10;
    } while (++i < decimals);
    backwards[n++] = '.';
    do {
        backwards[n++] = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    for (i = 0; i < n; i++)
        buf[i] = backwards[n - 1 - i];
    buf[n] = '\0';
    return n;
}

static inline void tlog_put_fixed_(FILE *out, double v, int decimals)
{
    char buf[32];
    fwrite(buf, 1, (size_t)tlog_format_fixed_(buf, v, decimals), out);
}

/* Nanoseconds held as a double (a reduced row's mean) as a whole number,
 * the fraction cut off. Saturates: the mean of totals near UINT64_MAX is
 * 2^64 once rounded to a double, one past what uint64_t holds. */
static inline uint64_t tlog_ns_from_double_(double ns)
{
    if (!(ns >= 0))
        return 0;
    return ns >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)ns;
}

/* The node after `n` in pre-order (parents first), skipping n's children
 * unless `into_children`; NULL after the last. Iterative: trees may be deep. */
static inline const tlog_node *tlog_node_next_(const tlog_node *n, bool into_children)
{
    if (into_children && n->first_child)
        return n->first_child;
    while (n && !n->next_sibling)
        n = n->parent;
    return n ? n->next_sibling : NULL;
}

/* Copies a filled result struct into the caller's, which may be an older,
 * shorter version: its leading `size` says how much it holds. */
static inline int tlog_copy_sized_(void *out, const void *full, size_t full_size)
{
    size_t want;
    if (!out)
        return TLOG_EINVAL;
    memcpy(&want, out, sizeof want);
    if (want < sizeof(size_t))
        return TLOG_EINVAL;
    memcpy((char *)out + sizeof want, (const char *)full + sizeof want,
           (want < full_size ? want : full_size) - sizeof want);
    return TLOG_OK;
}

/* Whether a site of `site_level` records at `log_level`: only the levels
 * TLOG_LEVEL_COARSE and TLOG_LEVEL_FINE ever do. One compare. */
static inline bool tlog_level_on_(int site_level, int log_level)
{
    return (unsigned)site_level - 1u < (unsigned)log_level;
}

/* ticks * rate, rounded, in nanoseconds; saturates rather than overflow. */
static inline uint64_t tlog_scale_ns_(uint64_t ticks, double rate)
{
    double ns = (double)ticks * rate + 0.5;
    return ns < 18446744073709551616.0 ? (uint64_t)ns : UINT64_MAX;
}

static inline tlog_ticks tlog_read_clock_(const tlog_thread *t)
{
    return t->clock ? t->clock(t->clock_user) : tlog_clock_now_();
}

static inline size_t tlog_thread_depth_(const tlog_thread *t)
{
    return (size_t)(t->top - t->stack);
}

#endif
