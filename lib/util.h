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

/* Asks for the cache line at p ahead of its use: to read it, or to write
 * it (tlog_prefetch_write_). GCC 12 drops prefetches whose line nothing
 * in its view uses, in some loops and not others (its RTL passes, after
 * its tree passes kept them): the empty asm that takes the address keeps
 * each one, and costs no instruction. */
static inline void tlog_prefetch_(const void *p)
{
    __builtin_prefetch(p);
    __asm__ volatile("" : : "r"(p));
}

static inline void tlog_prefetch_write_(const void *p)
{
    __builtin_prefetch(p, 1);
    __asm__ volatile("" : : "r"(p));
}

/* a + b, or UINT64_MAX where that does not fit: counts that must never
 * wrap to small ones. */
static inline uint64_t tlog_sat_add_(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* A 64-bit key spread over all bits, for open-addressing tables. */
static inline uint64_t tlog_mix64_(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* The length of the valid UTF-8 sequence at p, or 0: no overlong forms,
 * surrogates or code points past U+10FFFF. The JSON writers of the library
 * and the tools replace what it refuses with U+FFFD. */
static inline size_t tlog_utf8_length_(const unsigned char *p)
{
    size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
    if (p[0] >= 0xf5)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
        (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

#endif
