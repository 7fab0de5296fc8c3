/* Stands in for the C library's allocation functions, forwarding to glibc's
 * own (__libc_*) and counting while asked to: a definition in the program
 * takes the place of the C library's for the shared library too. free is
 * left to the C library, which owns every block either way. */
#include "alloc_count.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

void *__libc_malloc(size_t bytes);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t bytes);
void *__libc_memalign(size_t align, size_t bytes);

static atomic_bool counting;
static atomic_uint_fast64_t counted_bytes, counted_blocks;

static inline void count(size_t bytes)
{
    if (!atomic_load_explicit(&counting, memory_order_relaxed))
        return;
    atomic_fetch_add_explicit(&counted_bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&counted_blocks, 1, memory_order_relaxed);
}

void *malloc(size_t bytes)
{
    count(bytes);
    return __libc_malloc(bytes);
}

void *calloc(size_t n, size_t size)
{
    count(n * size);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t bytes)
{
    count(bytes);
    return __libc_realloc(p, bytes);
}

void *aligned_alloc(size_t align, size_t bytes)
{
    count(bytes);
    return __libc_memalign(align, bytes);
}

void bench_alloc_count_start(void)
{
    atomic_store(&counted_bytes, 0);
    atomic_store(&counted_blocks, 0);
    atomic_store(&counting, true);
}

void bench_alloc_count_stop(uint64_t *bytes, uint64_t *blocks)
{
    atomic_store(&counting, false);
    *bytes = atomic_load(&counted_bytes);
    *blocks = atomic_load(&counted_blocks);
}
