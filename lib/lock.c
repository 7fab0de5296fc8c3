/* The locks each thread holds, in a debug build: what tlog_assert_held_
 * asks, and where the order of lock.h's table is checked. */
#include "lock.h"

#ifndef NDEBUG
#include <stdio.h>

/* Deeper than the library ever nests: around fork() every process-wide
 * lock is held at once, six of them. */
#define HELD_MAX 16

static _Thread_local struct held {
    const pthread_mutex_t *m;
    enum tlog_lock_rank rank;
} held[HELD_MAX];
static _Thread_local int nheld;

static const char *const rank_names[TLOG_LOCK_RANKS] = {
    [TLOG_LOCK_DEFAULT_LOG] = "DEFAULT_LOG",
    [TLOG_LOCK_THREAD_STATES] = "THREAD_STATES",
    [TLOG_LOCK_DEFAULT_DEVICES] = "DEFAULT_DEVICES",
    [TLOG_LOCK_DEVICE_FORCE] = "DEVICE_FORCE",
    [TLOG_LOCK_DEVICE_POLL] = "DEVICE_POLL",
    [TLOG_LOCK_DEVICES] = "DEVICES",
    [TLOG_LOCK_FRAME_RESOLVE] = "FRAME_RESOLVE",
    [TLOG_LOCK_LOG] = "LOG",
    [TLOG_LOCK_SITE_NAMED] = "SITE_NAMED",
    [TLOG_LOCK_SITE_INTERN] = "SITE_INTERN",
    [TLOG_LOCK_SITE_ENTRIES] = "SITE_ENTRIES",
    [TLOG_LOCK_CLOCK] = "CLOCK",
    [TLOG_LOCK_FRAME] = "FRAME",
    [TLOG_LOCK_POOL] = "POOL",
    [TLOG_LOCK_STREAM] = "STREAM",
    [TLOG_LOCK_SUBSCRIBERS] = "SUBSCRIBERS",
    [TLOG_LOCK_STATS] = "STATS",
    [TLOG_LOCK_SUMMARY] = "SUMMARY",
    [TLOG_LOCK_ERRORS] = "ERRORS",
};

void tlog_lock_taken_(pthread_mutex_t *m, enum tlog_lock_rank rank)
{
    assert(rank >= 0 && rank < TLOG_LOCK_RANKS);
    for (int i = 0; i < nheld; i++) {
        if (held[i].rank >= rank) {
            fprintf(stderr, "timerlog: lock order: %s taken with %s held (lock.h)\n",
                    rank_names[rank], rank_names[held[i].rank]);
            assert(!"a lock taken out of lock.h's order");
        }
    }
    assert(nheld < HELD_MAX);
    held[nheld++] = (struct held){m, rank};
}

void tlog_lock_given_(pthread_mutex_t *m)
{
    for (int i = nheld; i-- > 0;) {
        if (held[i].m == m) {
            held[i] = held[--nheld];
            return;
        }
    }
    assert(!"a lock given back that this thread does not hold");
}

bool tlog_lock_held_(const pthread_mutex_t *m)
{
    for (int i = 0; i < nheld; i++)
        if (held[i].m == m)
            return true;
    return false;
}
#endif
