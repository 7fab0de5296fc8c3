/* A frame from its root's begin to its release: what it collects while in
 * progress (open.c), its place in the log's queue (frame.c) and its
 * resolution (resolve.c). Not installed. */
#ifndef TIMERLOG_FRAME_H
#define TIMERLOG_FRAME_H

#include "internal.h"
#include "fork.h"
#include "record.h"
#include "tree.h"

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
    size_t nnodes, capnodes;
    tlog_inst *insts;
    size_t ninsts, capinsts;
    struct tlog_spares *spares; /* where its arrays go when it is freed */
    char (*worker_names)[TLOG_NAME_MAX];   /* of each piece of work handed to
                                             * the frame, in the order taken */
    uint32_t *worker_threads;   /* the thread of each, by the same index (in
                                 * worker_names' block, after the names) */
    size_t nworker_names;
    int64_t start_ns;
    uint64_t duration_ns;
    uint64_t device_rows, device_unresolved;
    size_t stream_bytes;      /* raw records held, while the writer waits */
    int64_t stream_due_ns;    /* tlog_mono_ns_ by which the writer stops
                               * waiting for its device work: its hand-over
                               * plus the log's sync timeout */
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
/* tlog_frame_resolve_once_ waits for no device work. */
#define TLOG_NO_WAIT INT64_MIN

/* Resolves the frame if no one has yet, first waiting until `wait_until`
 * (tlog_mono_ns_, or TLOG_NO_WAIT) for its device work (the forced sync);
 * keeps the caller's reference either way. */
TLOG_INTERNAL int tlog_frame_resolve_once_(tlog_frame *f, int64_t wait_until);

/* resolve.c: builds nodes and instances from the raw records, then gives
 * the records back. Caller holds frame->resolve_lock. */
TLOG_INTERNAL int tlog_frame_resolve_locked_(tlog_frame *frame);
TLOG_INTERNAL void tlog_frame_free_raw_(tlog_frame *frame);
/* Gives a resolved (or decoded) frame room for `n` device rows' extras
 * (node_devs), none for 0; TLOG_ENOMEM. */
TLOG_INTERNAL int tlog_frame_alloc_devs_(tlog_frame *f, size_t n);
/* Frees the scratch memory the log keeps for resolving. */
TLOG_INTERNAL void tlog_resolve_scratch_free_(tlog_log *log);
/* What the log keeps for resolving: its scratch and spares (spares.c). */
TLOG_INTERNAL size_t tlog_resolve_kept_bytes_(tlog_log *log);

/* A frame of a log made by an ancestor process, said the first time. */
static inline bool tlog_frame_inherited_(const tlog_frame *f)
{
    return TLOG_UNLIKELY(f->log && f->fork_generation != tlog_fork_generation_()) &&
           tlog_log_inherited_said_();
}

#endif
