/* Per-thread recording state: one per (thread, log), found through TLS. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

TLOG_TLS_DEFAULT_DEFINITION;  /* state in the default log */
#define tls_default tlog_tls_default_
static TLOG_TLS tlog_thread *tls_states;   /* every state of this thread */
static TLOG_TLS char tls_name[TLOG_NAME_MAX];

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

const tlog_site tlog_adopt_marker_ = {"(adopted work)", NULL, NULL, 0, 0};
const tlog_site tlog_overflow_marker_ = {"(too deep)", NULL, NULL, 0, 0};

static void release_state(tlog_thread *t)
{
    tlog_log *log = atomic_load(&t->log);
    if (log) {
        pthread_mutex_lock(&log->lock);
        for (tlog_thread **p = &log->threads; *p; p = &(*p)->next_in_log)
            if (*p == t) {
                *p = t->next_in_log;
                break;
            }
        tlog_attachment *a = t->inbox;
        t->inbox = NULL;
        pthread_mutex_unlock(&log->lock);
        tlog_attachments_free_(a);
        tlog_chunks_put_(log, t->first);
    }
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
    tls_default = NULL;
    while (t) {
        tlog_thread *next = t->next_in_thread;
        if (atomic_load(&t->log))
            tlog_thread_close_all_(t, TLOG_ETHREADEXIT);
        release_state(t);
        t = next;
    }
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
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
    tlog_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    /* One extra slot holds the overflow marker. */
    t->stack = calloc(log->cfg.max_depth + 1u, sizeof *t->stack);
    if (!t->stack) {
        free(t);
        return NULL;
    }
    t->top = t->stack;
    t->stack_end = t->stack + log->cfg.max_depth;
    t->clock = log->cfg.clock;
    t->clock_user = log->cfg.clock_user;
    atomic_init(&t->log, log);
    atomic_init(&t->inbox_frame, 0);

    pthread_mutex_lock(&log->lock);
    t->id = ++log->next_thread_id;
    t->next_in_log = log->threads;
    log->threads = t;
    pthread_mutex_unlock(&log->lock);
    TLOG_COUNT(log, threads);
    set_default_name(t);

    t->next_in_thread = tls_states;
    tls_states = t;
    pthread_setspecific(exit_key, t);
    if (log->is_default)
        tls_default = t;
    return t;
}

tlog_thread *tlog_thread_get_(tlog_log *log)
{
    tlog_thread *t = tls_default;
    if (t && log->is_default)
        return t;
    for (t = tls_states; t; t = t->next_in_thread)
        if (atomic_load_explicit(&t->log, memory_order_relaxed) == log)
            return t;
    return attach(log);
}

/* Caller holds log->lock. */
tlog_thread *tlog_thread_find_(tlog_log *log, uint32_t id)
{
    for (tlog_thread *t = log->threads; t; t = t->next_in_log)
        if (t->id == id)
            return t;
    return NULL;
}

/* The log is going away: states still owned by other threads are cut loose
 * and freed when those threads exit; the calling thread's are freed now. */
void tlog_threads_orphan_(tlog_log *log)
{
    pthread_mutex_lock(&log->lock);
    tlog_thread *t = log->threads;
    log->threads = NULL;
    pthread_mutex_unlock(&log->lock);
    for (; t; t = t->next_in_log) {
        atomic_store(&t->log, NULL);
        tlog_chunks_put_(log, t->first);
        t->first = t->cur = NULL;
        tlog_attachments_free_(t->inbox);
        t->inbox = NULL;
    }
    for (tlog_thread **p = &tls_states; *p;) {
        tlog_thread *s = *p;
        if (!atomic_load(&s->log)) {
            *p = s->next_in_thread;
            free(s->stack);
            free(s);
        } else {
            p = &s->next_in_thread;
        }
    }
}

tlog_thread *tlog_thread_default_(void)
{
    tlog_log *log = tlog_default();
    return log ? tlog_thread_get_(log) : NULL;
}

int tlog_thread_name(const char *name)
{
    if (!name)
        return TLOG_EINVAL;
    snprintf(tls_name, sizeof tls_name, "%s", name);
    for (tlog_thread *t = tls_states; t; t = t->next_in_thread)
        memcpy(t->name, tls_name, sizeof t->name);
    return TLOG_OK;
}
