/* fork() with other threads inside the library: every process-wide lock is
 * taken before it, in the order the library nests them (the default log's,
 * then the rest, none of which is held while another is taken), and let go
 * after it in parent and child.
 *
 * A log's own locks, and those of its frames, stream and devices, are too
 * many to take around a fork, and the threads that used them (writers,
 * device pollers, the application's) do not exist in the child. So the
 * child leaves every log made before the fork to the parent: the default
 * log starts afresh at its first use, and a log the child inherited is
 * refused, said once, and never locked. */
#include "fork.h"
#include "log.h"

typedef void (*atfork_fn)(int phase);

static const atfork_fn modules[] = {
    tlog_log_atfork_, tlog_thread_atfork_, tlog_site_atfork_,
    tlog_clock_atfork_, tlog_subscribe_atfork_,
};
#define NMODULES (sizeof modules / sizeof modules[0])

_Atomic unsigned tlog_fork_generation_now_;
static atomic_bool inherited_said;

bool tlog_log_inherited_said_(void)
{
    if (!atomic_exchange(&inherited_said, true)) {
        tlog_log *here = tlog_default();
        if (here)
            tlog_report_(here, NULL, TLOG_EINVAL, NULL,
                         "a log made before fork() belongs to the parent process; this "
                         "process ignores it (record into the default log, or into logs "
                         "made after the fork); said once");
    }
    return true;
}

int tlog_take_log_(tlog_log **log)
{
    if (!*log)
        return (*log = tlog_default()) ? TLOG_OK : TLOG_ENOMEM;
    if (tlog_log_inherited_(*log)) {
        *log = NULL;
        return TLOG_EINVAL;
    }
    return TLOG_OK;
}

void tlog_fork_lock_(pthread_mutex_t *lock, enum tlog_lock_rank rank, int phase)
{
    if (phase == TLOG_FORK_PREPARE)
        tlog_lock_(lock, rank);
    else
        tlog_unlock_(lock);
}

static void prepare(void)
{
    for (size_t i = 0; i < NMODULES; i++)
        modules[i](TLOG_FORK_PREPARE);
}

static void release(int phase)
{
    for (size_t i = NMODULES; i-- > 0;)
        modules[i](phase);
}

static void in_parent(void) { release(TLOG_FORK_PARENT); }

static void in_child(void)
{
    atomic_fetch_add(&tlog_fork_generation_now_, 1);
    atomic_store(&inherited_said, false);
    release(TLOG_FORK_CHILD);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    pthread_atfork(prepare, in_parent, in_child);
}
