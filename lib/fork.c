/* fork() with other threads inside the library: every process-wide lock is
 * taken before it, in the order the library nests them (the default log's,
 * then the stream registry's, which it takes while making a log, then the
 * rest, none of which is held while another is taken), and let go after it
 * in parent and child. Per-log locks are not covered: a child should make
 * its own logs, or record only into logs no other thread was using. */
#include "internal.h"

typedef void (*atfork_fn)(int phase);

static const atfork_fn modules[] = {
    tlog_log_atfork_, tlog_stream_atfork_, tlog_thread_atfork_, tlog_site_atfork_,
    tlog_clock_atfork_,
};
#define NMODULES (sizeof modules / sizeof modules[0])

void tlog_fork_lock_(pthread_mutex_t *lock, int phase)
{
    if (phase == TLOG_FORK_PREPARE)
        tlog_lock_(lock);
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
static void in_child(void) { release(TLOG_FORK_CHILD); }

__attribute__((constructor)) static void register_fork_handlers(void)
{
    pthread_atfork(prepare, in_parent, in_child);
}
