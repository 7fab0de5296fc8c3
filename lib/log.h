/* A log: its configuration and its concerns, each grouped in a struct that
 * the file owning it makes and tears down; error reports and counters
 * (log.c). Not installed. */
#ifndef TIMERLOG_LOG_H
#define TIMERLOG_LOG_H

#include "internal.h"
#include "fork.h"

/* Reports to the error callback, and what the default handler has printed:
 * of each kind (code, site, format), the first (log.c). */
typedef struct tlog_log_errors {
    pthread_mutex_t lock;
    struct { int code; const tlog_site *site; const char *kind; uint64_t times; } reported[64];
    unsigned nreported;
    /* Reports made while the log is being made, when a library lock may be
     * held (the default log's): told once it is made, with no lock held.
     * The list is guarded by `lock`; making a log reports at most two
     * things (TIMERLOG_BUFSIZE, then the stream). Only the reports of the
     * thread making it are kept: other threads that find the default log
     * made hold none of its locks, and their reports go out at once. */
    atomic_bool creating;
    pthread_t creator;
    struct { int code; char msg[256]; } deferred[4];
    unsigned ndeferred;
} tlog_log_errors;

/* The threads recording into the log (thread.c); under log->lock. */
typedef struct tlog_log_threads {
    tlog_thread *list;
    uint32_t next_id;
    int exiting;              /* threads leaving it now (thread.c's lock) */
} tlog_log_threads;

/* Completed frames, oldest first; at most cfg.max_frames per thread
 * (frame.c); under log->lock. */
typedef struct tlog_log_queue {
    tlog_frame *oldest, *newest;
    size_t len;
    uint64_t next_serial;
} tlog_log_queue;

/* Record memory (record.c): chunks given back, kept for the next frames. */
typedef struct tlog_log_pool {
    pthread_mutex_t lock;
    struct tlog_chunk *free;
    size_t held;              /* bytes in `free`, at most cfg.pool_bytes */
    _Atomic uint64_t bytes;   /* record memory held, in use or pooled */
    /* Chunks the last frame of any thread took: what a thread's first
     * frame has made ready. */
    _Atomic size_t last_chunks;
} tlog_log_pool;

/* The clock the log reads (clock.c). */
typedef struct tlog_log_clock {
    uint64_t tick0;           /* clock at creation: origin of frame starts */
    const char *name;
    double custom_rate;       /* ns per tick of cfg.clock */
} tlog_log_clock;

/* Subscribers (subscribe.c). */
typedef struct tlog_log_subs {
    _Atomic(tlog_sublist *) list;     /* the list readers use, NULL when none */
    atomic_int device;                /* of them, with device_interval */
    pthread_mutex_t lock;
    uint64_t serial;
    tlog_sublist *retired;            /* earlier lists, freed with the log */
    struct tlog_subscription *kept;   /* unsubscribed, freed with the log */
} tlog_log_subs;

/* Statistics across frames and the report at exit (stats.c). Frames are
 * counted as they are resolved, under `lock`. */
typedef struct tlog_log_stats {
    struct tlog_summary *summary; /* NULL when the log keeps none */
    pthread_mutex_t lock;
    _Atomic uint64_t lost;        /* frames left out for lack of memory */
    struct tlog_report *report;   /* TIMERLOG_REPORT, or NULL */
    bool bad_env;                 /* TIMERLOG_REPORT was unreadable */
} tlog_log_stats;

struct tlog_log {
    atomic_int level;
    bool is_default;
    unsigned fork_generation; /* of the process that made it */
    bool bad_timeout_env;     /* TIMERLOG_SYNC_TIMEOUT_MS was unreadable */
    tlog_config cfg;          /* with defaults filled in */
    size_t budget_recs;       /* records per thread per frame */
    size_t chunk_recs;
    uint64_t wall0_ns;        /* CLOCK_REALTIME at creation */
    uint32_t rank;            /* MPI rank from the environment, or 0 */

    pthread_mutex_t lock;     /* threads, frames in progress, frame queue */
    tlog_log_threads threads;
    tlog_log_queue queue;

    /* resolve.c's scratch memory, kept for the next frame; NULL while a
     * resolve has it (another then makes its own). */
    _Atomic(struct tlog_resolve_scratch *) resolve_scratch;
    atomic_size_t scratch_bytes;  /* of the scratch kept (tlog_stats) */
    /* spares.c: a released frame's arrays, for the next resolve; made with
     * the first frame resolved. */
    _Atomic(struct tlog_spares *) spares;

    tlog_log_pool pool;
    tlog_log_clock clock;
    _Atomic(tlog_devices *) devices; /* made with the first device */
    _Atomic(tlog_stream *) stream; /* set at creation, or NULL */
    tlog_log_subs subs;
    tlog_log_errors errors;
    tlog_log_stats stats;

    struct {
        _Atomic uint64_t frames_completed, frames_dropped, scopes_dropped,
            depth_overflows, mismatched_ends, unmatched_ends, scopes_repaired,
            open_at_thread_exit, late_work, alloc_failures, threads, clock_reversals;
    } counters;
};

/* log.c */
TLOG_INTERNAL tlog_log *tlog_resolve_log_(tlog_log *log);
TLOG_INTERNAL void tlog_report_(tlog_log *log, const tlog_thread *t, int code,
                                const tlog_site *site, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A report of a setting the log was made with (the environment's): the
 * default handler prints each, where it prints other reports once per kind. */
TLOG_INTERNAL void tlog_report_setting_(tlog_log *log, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A scope call given a NULL site (`call` says which, as written): reported
 * as TLOG_EINVAL on `log` (NULL: the default log); nothing is recorded. */
TLOG_INTERNAL void tlog_report_null_site_(tlog_log *log, const char *call);
/* The MPI rank the environment shows (Open MPI, PMIx, MPICH/PMI, Slurm),
 * or -1. */
TLOG_INTERNAL long tlog_env_rank_(void);
#define TLOG_COUNT(log, field) \
    atomic_fetch_add_explicit(&(log)->counters.field, 1, memory_order_relaxed)

/* True for a log made by an ancestor process, said the first time. Inline:
 * tlog_log_begin asks it of every scope. */
static inline bool tlog_log_inherited_(const tlog_log *log)
{
    return TLOG_UNLIKELY(log && log->fork_generation != tlog_fork_generation_()) &&
           tlog_log_inherited_said_();
}

#endif
