/* Per-thread recording state: one per (thread, log), found through TLS. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fork.h"
#include "frame.h"
#include "log.h"
#include "record.h"

TLOG_TLS_DEFAULT_DEFINITION;  /* state in the default log */
#define tls_default tlog_tls_default_
/* tlog_begin and tlog_end find this one on their first-use path, so that
 * their fast paths read the hardware clock without a test. */
TLOG_TLS_CLOCKED_DEFINITION;
#define tls_default_clocked tlog_tls_clocked_
TLOG_TLS_RECENT_DEFINITION;
#define tls_recent tlog_tls_recent_

static TLOG_TLS tlog_thread *tls_states;   /* every state of this thread */
static TLOG_TLS char tls_name[TLOG_NAME_MAX];

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static bool exit_key_made;

/* Orders a thread's exit against tlog_destroy of a log it recorded into:
 * an exiting thread marks the log busy (log->threads.exiting) under this lock and
 * finishes outside it, and destroy waits for that. No callback of the
 * application ever runs under this lock. */
static pthread_mutex_t states_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t states_cond = PTHREAD_COND_INITIALIZER;

/* Scopes the forking thread had open in the parent's default log: their
 * ends come in the child, which has none of their beginnings. */
static TLOG_TLS size_t tls_forked_open;

/* In the child, the forking thread's states are the parent's, in logs the
 * child leaves alone: forgotten (not freed: they are the parent's memory,
 * in logs whose locks may be held). */
void tlog_thread_atfork_(int phase)
{
    tlog_fork_lock_(&states_lock, TLOG_LOCK_THREAD_STATES, phase);
    if (phase != TLOG_FORK_CHILD)
        return;
    tlog_thread *t = tls_default ? tls_default : tls_default_clocked;
    /* Added to: a child forked again keeps the ends its own parent owes. */
    tls_forked_open += t ? tlog_thread_open_scopes_(t) : 0;
    tls_default = tls_default_clocked = tls_recent = NULL;
    tls_states = NULL;
    if (exit_key_made)
        pthread_setspecific(exit_key, NULL);
}

bool tlog_thread_forked_end_(const tlog_log *log)
{
    if (!tls_forked_open || !log->is_default)
        return false;
    tls_forked_open--;
    return true;
}

/* Bumped by every tlog_destroy, so threads know to free dead states. */
static _Atomic unsigned long dead_epoch;
static TLOG_TLS unsigned long tls_seen_epoch;

const tlog_site tlog_adopt_marker_ = {"(adopted work)", NULL, NULL, 0, 0};
const tlog_site tlog_overflow_marker_ = {"(too deep)", NULL, NULL, 0, 0};

/* What a state holds in its log, taken away from it. */
typedef struct held {
    tlog_chunk *chunks;
    tlog_frame *frames;      /* frames in progress, linked by `older` */
} held;

static void take_held(tlog_thread *t, held *h)
{
    if (t->first) {
        t->cur->next = h->chunks;
        h->chunks = t->first;
    }
    if (t->reserve) {
        t->reserve->next = h->chunks;
        h->chunks = t->reserve;
    }
    if (t->frame) {
        t->frame->older = h->frames;
        h->frames = t->frame;
    }
    t->first = t->cur = t->reserve = NULL;
    t->wr = t->wr_end = NULL;
    t->frame = NULL;
}

/* A frame whose root never ended is dropped; device scopes launched in it
 * may still hold it until their intervals are delivered. */
static void give_back(tlog_log *log, held *h)
{
    while (h->frames) {
        tlog_frame *f = h->frames;
        h->frames = f->older;
        f->older = NULL;
        tlog_frame_release(f);
    }
    tlog_chunks_put_(log, h->chunks);
}

static void free_state(tlog_thread *t)
{
    if (t == tls_recent)
        tls_recent = NULL;
    free(t->over);
    free(t->notes);
    free(t->stack);
    free(t);
}

/* Thread exit: close what is still open (the frame is completed and kept),
 * then give the state's memory back. */
static void on_thread_exit(void *unused)
{
    (void)unused;
    tlog_thread *t = tls_states;
    tls_states = NULL;
    tls_default = tls_default_clocked = tls_recent = NULL;
    while (t) {
        tlog_thread *next = t->next_in_thread;
        tlog_lock_(&states_lock, TLOG_LOCK_THREAD_STATES);
        tlog_log *log = atomic_load(&t->log);
        if (log)
            log->threads.exiting++;
        tlog_unlock_(&states_lock);
        if (log) {
            tlog_thread_close_all_(t, TLOG_ETHREADEXIT);
            held h = {0};
            tlog_lock_(&log->lock, TLOG_LOCK_LOG);
            for (tlog_thread **p = &log->threads.list; *p; p = &(*p)->next_in_log)
                if (*p == t) {
                    *p = t->next_in_log;
                    break;
                }
            take_held(t, &h);
            tlog_unlock_(&log->lock);
            give_back(log, &h);
            tlog_lock_(&states_lock, TLOG_LOCK_THREAD_STATES);
            log->threads.exiting--;
            pthread_cond_broadcast(&states_cond);
            tlog_unlock_(&states_lock);
        }
        free_state(t);
        t = next;
    }
}

static void make_exit_key(void)
{
    exit_key_made = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

/* Threads that outlive an unloaded library must not call into it. */
__attribute__((destructor)) static void delete_exit_key(void)
{
    if (exit_key_made)
        pthread_key_delete(exit_key);
}

static void set_default_name(tlog_thread *t)
{
    if (tls_name[0])
        memcpy(t->name, tls_name, sizeof t->name);
    else
        snprintf(t->name, sizeof t->name, "Thread %u", t->id);
}

static tlog_thread *attach(tlog_log *log)
{
    pthread_once(&exit_key_once, make_exit_key);
    /* On a cache line of its own, so that begin and end touch one. */
    size_t bytes = (sizeof(tlog_thread) + TLOG_CACHE_LINE - 1) / TLOG_CACHE_LINE * TLOG_CACHE_LINE;
    tlog_thread *t = tlog_aligned_alloc_(TLOG_CACHE_LINE, bytes);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    /* One extra slot holds the overflow marker. */
    t->stack = tlog_calloc_(log->cfg.max_depth + 1u, sizeof *t->stack);
    if (!t->stack) {
        free(t);
        return NULL;
    }
    t->top = t->stack;
    t->stack_end = t->stack + log->cfg.max_depth;
    t->clock = log->cfg.clock;
    t->clock_user = log->cfg.clock_user;
    /* Scopes timed by a clock of the application's take the slow paths,
     * which read it, so that the fast ones read the hardware clock alone. */
    t->fast_end = t->clock ? NULL : t->stack_end;
    atomic_init(&t->log, log);

    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    t->id = ++log->threads.next_id;
    t->next_in_log = log->threads.list;
    log->threads.list = t;
    tlog_unlock_(&log->lock);
    TLOG_COUNT(log, threads);
    set_default_name(t);

    t->next_in_thread = tls_states;
    tls_states = t;
    if (exit_key_made)
        pthread_setspecific(exit_key, t);
    if (log->is_default && t->clock)
        tls_default_clocked = t;
    else if (log->is_default)
        tls_default = t;
    return t;
}

/* Frees this thread's states whose logs were destroyed. The lock makes sure
 * tlog_destroy has finished with them. */
static void prune_dead_states(void)
{
    tlog_lock_(&states_lock, TLOG_LOCK_THREAD_STATES);
    for (tlog_thread **p = &tls_states; *p;) {
        tlog_thread *s = *p;
        if (atomic_load(&s->log)) {
            p = &s->next_in_thread;
            continue;
        }
        *p = s->next_in_thread;
        free_state(s);
    }
    tlog_unlock_(&states_lock);
}

/* Called at the start of each frame: cheap unless a log was destroyed. */
void tlog_thread_tidy_(void)
{
    unsigned long epoch = atomic_load_explicit(&dead_epoch, memory_order_relaxed);
    if (epoch != tls_seen_epoch) {
        tls_seen_epoch = epoch;
        prune_dead_states();
    }
}

tlog_thread *tlog_thread_peek_(tlog_log *log)
{
    tlog_thread *t = tls_default ? tls_default : tls_default_clocked;
    if (t && log->is_default)
        return tls_recent = t;
    bool dead = false;
    for (t = tls_states; t; t = t->next_in_thread) {
        tlog_log *owner = tlog_thread_log_(t);
        if (owner == log)
            break;
        dead |= owner == NULL;
    }
    if (dead)
        prune_dead_states();
    if (t)
        tls_recent = t;
    return t;
}

/*
 * The scopes this thread began in a log whose state for the thread could
 * not be made (no memory): dropped with all they hold, their ends closing
 * nothing. No state is made until they have all ended, so that a child of a
 * lost frame root never becomes a frame of its own. One log at a time.
 */
static _Thread_local struct {
    tlog_log *log;
    uint32_t depth;
} tls_lost;

tlog_thread *tlog_thread_get_(tlog_log *log)
{
    tlog_thread *t = tlog_thread_peek_(log);
    if (t || (tls_lost.depth && tls_lost.log == log))
        return t;
    return attach(log);
}

bool tlog_thread_lose_begin_(tlog_log *log)
{
    if (tls_lost.depth && tls_lost.log != log)
        return true;   /* another log's are being lost: this one is only said */
    tls_lost.log = log;
    return tls_lost.depth++ == 0;
}

bool tlog_thread_lose_end_(tlog_log *log)
{
    if (!tls_lost.depth || tls_lost.log != log)
        return false;
    tls_lost.depth--;
    return true;
}

/* Caller holds log->lock. */
tlog_thread *tlog_thread_find_locked_(tlog_log *log, uint32_t id)
{
    tlog_assert_held_(&log->lock);
    for (tlog_thread *t = log->threads.list; t; t = t->next_in_log)
        if (t->id == id)
            return t;
    return NULL;
}

/* The log is going away: every state in it gives its memory back and is cut
 * loose; each thread frees the rest of its own states the next time it uses
 * the library, or when it exits. */
void tlog_threads_orphan_(tlog_log *log)
{
    held h = {0};
    tlog_lock_(&states_lock, TLOG_LOCK_THREAD_STATES);
    while (log->threads.exiting)
        pthread_cond_wait(&states_cond, &states_lock);
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    for (tlog_thread *t = log->threads.list; t; t = t->next_in_log) {
        take_held(t, &h);
        atomic_store(&t->log, NULL);
    }
    log->threads.list = NULL;
    tlog_unlock_(&log->lock);
    tlog_unlock_(&states_lock);
    atomic_fetch_add(&dead_epoch, 1);
    give_back(log, &h);
    prune_dead_states();
}

int tlog_thread_name(const char *name)
{
    if (!name)
        return TLOG_EINVAL;
    snprintf(tls_name, sizeof tls_name, "%s", name);
    /* Cut short on a character boundary: names go into JSON exports. */
    size_t n = strlen(tls_name), lead = n;
    while (lead > 0 && ((unsigned char)tls_name[lead - 1] & 0xc0) == 0x80)
        lead--;
    if (lead > 0 && (unsigned char)tls_name[lead - 1] >= 0xc0) {
        unsigned char b = (unsigned char)tls_name[lead - 1];
        size_t want = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
        if (lead - 1 + want > n)
            tls_name[lead - 1] = '\0';
    }
    for (tlog_thread *t = tls_states; t; t = t->next_in_thread)
        memcpy(t->name, tls_name, sizeof t->name);
    return TLOG_OK;
}
