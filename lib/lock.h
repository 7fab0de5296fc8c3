/* Every lock the library takes goes through these. A -Dtest_hooks=true
 * build counts the locks each thread holds, so that a report made while one
 * is held (its callback may call the library, and deadlock) fails the test
 * that made it; otherwise they are pthread's own, with nothing added. */
#ifndef TIMERLOG_LOCK_H
#define TIMERLOG_LOCK_H

#include <pthread.h>

#ifdef TIMERLOG_TEST_HOOKS
void tlog_locks_held_(int change);
void tlog_check_no_lock_(const char *report);
#else
static inline void tlog_check_no_lock_(const char *report)
{
    (void)report;
}

static inline void tlog_locks_held_(int change)
{
    (void)change;
}
#endif

static inline void tlog_lock_(pthread_mutex_t *m)
{
    pthread_mutex_lock(m);
    tlog_locks_held_(1);
}

static inline void tlog_unlock_(pthread_mutex_t *m)
{
    tlog_locks_held_(-1);
    pthread_mutex_unlock(m);
}

#endif
