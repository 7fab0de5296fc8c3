/* Every lock the library takes goes through these. A -Dtest_hooks=true
 * build counts the locks each thread holds, so that a report made while one
 * is held (its callback may call the library, and deadlock) fails the test
 * that made it. A debug build (no NDEBUG: the sanitizer legs) keeps the
 * locks each thread holds, so that a function that needs one asserts it
 * (tlog_assert_held_), and a lock taken out of the order below fails an
 * assertion where it is taken. A release build has pthread's own calls,
 * with nothing added.
 *
 * The order of the library's mutexes, outermost first: a thread that holds
 * one takes only mutexes of later rows, and never two of one row (two
 * frames' mailboxes, two logs' locks). The backends' own mutexes (devices/)
 * are not in it: a backend's are its own business.
 *
 *   row               mutex                       guards
 *   DEFAULT_LOG       log.c default_lock          making the default log
 *   THREAD_STATES     thread.c states_lock        threads leaving a log
 *   DEFAULT_DEVICES   tlog_default_devices.lock   a backend's default devices
 *   DEVICE_FORCE      tlog_devices.force_lock     one forced sync at a time
 *   DEVICE_POLL       tlog_devices.poll_lock      reading the devices
 *   DEVICES           tlog_devices.lock           devices, pools, queues
 *   FRAME_RESOLVE     tlog_frame.resolve_lock     resolving a frame's tree
 *   LOG               tlog_log.lock               threads, frame queue
 *   SITE_NAMED        site.c named_lock           run-time names
 *   SITE_INTERN       site.c intern_lock          tlog_site_intern's table
 *   SITE_ENTRIES      site.c entries_lock         sites' ids and counts
 *   CLOCK             clock.c hw.lock             the counter's rate
 *   FRAME             tlog_frame.lock             a frame's mailbox
 *   POOL              tlog_log.pool.lock          record chunks to reuse
 *   STREAM            tlog_stream.lock            frames for the writer
 *   SUBSCRIBERS       tlog_log.subs.lock          subscriptions
 *   STATS             tlog_log.stats.lock         statistics across frames
 *   SUMMARY           tlog_summary.settle_lock    frames a summary counts later,
 *                                                 counted by its first reader
 *   ERRORS            tlog_log.errors.lock        reports and their counts
 *
 * Around fork() the process-wide ones (DEFAULT_LOG, THREAD_STATES, the
 * SITE_ rows, CLOCK) are all taken, in this order (fork.c).
 */
#ifndef TIMERLOG_LOCK_H
#define TIMERLOG_LOCK_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>

/* The rows of the table above, in its order. */
enum tlog_lock_rank {
    TLOG_LOCK_DEFAULT_LOG,
    TLOG_LOCK_THREAD_STATES,
    TLOG_LOCK_DEFAULT_DEVICES,
    TLOG_LOCK_DEVICE_FORCE,
    TLOG_LOCK_DEVICE_POLL,
    TLOG_LOCK_DEVICES,
    TLOG_LOCK_FRAME_RESOLVE,
    TLOG_LOCK_LOG,
    TLOG_LOCK_SITE_NAMED,
    TLOG_LOCK_SITE_INTERN,
    TLOG_LOCK_SITE_ENTRIES,
    TLOG_LOCK_CLOCK,
    TLOG_LOCK_FRAME,
    TLOG_LOCK_POOL,
    TLOG_LOCK_STREAM,
    TLOG_LOCK_SUBSCRIBERS,
    TLOG_LOCK_STATS,
    TLOG_LOCK_SUMMARY,
    TLOG_LOCK_ERRORS,
    TLOG_LOCK_RANKS
};

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

#ifndef NDEBUG
/* lock.c: the calling thread's locks, kept by tlog_lock_ and tlog_unlock_. */
void tlog_lock_taken_(pthread_mutex_t *m, enum tlog_lock_rank rank);
void tlog_lock_given_(pthread_mutex_t *m);
bool tlog_lock_held_(const pthread_mutex_t *m);
#define tlog_assert_held_(m) assert(tlog_lock_held_(m))
#define tlog_assert_not_held_(m) assert(!tlog_lock_held_(m))
#else
static inline void tlog_lock_taken_(pthread_mutex_t *m, enum tlog_lock_rank rank)
{
    (void)m;
    (void)rank;
}

static inline void tlog_lock_given_(pthread_mutex_t *m)
{
    (void)m;
}
#define tlog_assert_held_(m) ((void)0)
#define tlog_assert_not_held_(m) ((void)0)
#endif

/* Takes `m`, a mutex of row `rank` of the table above. */
static inline void tlog_lock_(pthread_mutex_t *m, enum tlog_lock_rank rank)
{
    pthread_mutex_lock(m);
    tlog_lock_taken_(m, rank);
    tlog_locks_held_(1);
}

/* Takes `m` if no one holds it; whether it did. */
static inline bool tlog_trylock_(pthread_mutex_t *m, enum tlog_lock_rank rank)
{
    if (pthread_mutex_trylock(m) != 0)
        return false;
    tlog_lock_taken_(m, rank);
    tlog_locks_held_(1);
    return true;
}

static inline void tlog_unlock_(pthread_mutex_t *m)
{
    tlog_locks_held_(-1);
    tlog_lock_given_(m);
    pthread_mutex_unlock(m);
}

#endif
