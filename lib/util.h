/* Small helpers the core's files share. Not installed. */
#ifndef TIMERLOG_UTIL_H
#define TIMERLOG_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

/* Grows the array *items (of `size`-byte elements, *cap of them) to hold at
 * least `need`, doubling; false when memory ran out, nothing changed then. */
static inline bool tlog_grow_(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 8;
    while (n < need) {
        if (n > SIZE_MAX / 2 / size)
            return false;
        n *= 2;
    }
    void *p = tlog_realloc_(*items, n * size);
    if (!p)
        return false;
    *items = p;
    *cap = n;
    return true;
}

#define TLOG_GROW(items, cap, need) \
    tlog_grow_((void **)&(items), &(cap), (need), sizeof *(items))

/* A 64-bit key spread over all bits, for open-addressing tables. */
static inline uint64_t tlog_mix64_(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

#endif
