/* Every allocation the library makes goes through these. In a build with
 * -Dtest_hooks=true, a test can make the N-th allocation fail and sweep N
 * over a whole run (test/test_alloc_fail.c); otherwise they are the C
 * library's own, with nothing added. */
#ifndef TIMERLOG_ALLOC_H
#define TIMERLOG_ALLOC_H

#include <stdbool.h>
#include <stdlib.h>

#ifdef TIMERLOG_TEST_HOOKS
bool tlog_alloc_fails_(void);
#else
static inline bool tlog_alloc_fails_(void) { return false; }
#endif

static inline void *tlog_malloc_(size_t bytes)
{
    return tlog_alloc_fails_() ? NULL : malloc(bytes);
}

static inline void *tlog_calloc_(size_t n, size_t size)
{
    return tlog_alloc_fails_() ? NULL : calloc(n, size);
}

static inline void *tlog_realloc_(void *p, size_t bytes)
{
    return tlog_alloc_fails_() ? NULL : realloc(p, bytes);
}

static inline void *tlog_aligned_alloc_(size_t align, size_t bytes)
{
    return tlog_alloc_fails_() ? NULL : aligned_alloc(align, bytes);
}

#endif
