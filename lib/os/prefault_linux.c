/* Pages mapped ahead of use on Linux: madvise(MADV_POPULATE_WRITE) (5.14+)
 * maps a range in one call, about half the cost of faulting its pages one
 * by one; without it (an older kernel, or memory it refuses), one write per
 * page. */
#define _GNU_SOURCE   /* madvise */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prefault.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static atomic_bool refused;   /* the kernel knows no MADV_POPULATE_WRITE */

static void touch(volatile char *c, size_t bytes, uintptr_t page)
{
    for (size_t i = 0; i < bytes; i += page - ((uintptr_t)(c + i) & (page - 1)))
        c[i] = 0;
}

void tlog_prefault_(void *p, size_t bytes)
{
    long size = sysconf(_SC_PAGESIZE);
    uintptr_t page = size > 0 ? (uintptr_t)size : 4096u;
    uintptr_t from = (uintptr_t)p, to = from + bytes;
    uintptr_t lo = (from + page - 1) & ~(page - 1), hi = to & ~(page - 1);
    if (hi > lo && !atomic_load_explicit(&refused, memory_order_relaxed)) {
        if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0) {
            touch(p, lo - from, page);            /* the pages it starts */
            touch((char *)hi, to - hi, page);     /* and ends in */
            return;
        }
        if (errno == EINVAL)
            atomic_store_explicit(&refused, true, memory_order_relaxed);
    }
    touch(p, bytes, page);
}
