/* fork(): the generation of the process and the locks taken around it
 * (fork.c). Not installed. */
#ifndef TIMERLOG_FORK_H
#define TIMERLOG_FORK_H

#include "internal.h"

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

#endif
