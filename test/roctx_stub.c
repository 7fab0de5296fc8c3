/*
 * A test roctx library: what TIMERLOG_ROCTX_LIBRARY loads in place of
 * ROCm's libroctx64. It has roctx's two range calls, and counts what
 * arrives per thread for forward_tool_report.
 */
#include <pthread.h>
#include <stdio.h>

#include "forward_tool.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static forward_counts counts = {.timerlog_domain = 1};   /* roctx has no domains */
static _Thread_local long depth;

/* As roctx: the nesting level of the new range, counted from 0. */
EXPORT int roctxRangePushA(const char *message)
{
    pthread_mutex_lock(&lock);
    counts.pushes++;
    if (++depth > counts.max_depth)
        counts.max_depth = depth;
    if (counts.names < FORWARD_MAX_NAMES)
        snprintf(counts.name[counts.names++], sizeof counts.name[0], "%s", message);
    long level = depth - 1;
    pthread_mutex_unlock(&lock);
    return (int)level;
}

/* As roctx: the level of the range popped, or -1 with none open. */
EXPORT int roctxRangePop(void)
{
    pthread_mutex_lock(&lock);
    counts.pops++;
    long level = -1;
    if (depth == 0)
        counts.unbalanced_pops++;
    else
        level = --depth;
    pthread_mutex_unlock(&lock);
    return (int)level;
}

EXPORT void forward_tool_report(forward_counts *out)
{
    pthread_mutex_lock(&lock);
    *out = counts;
    pthread_mutex_unlock(&lock);
}
