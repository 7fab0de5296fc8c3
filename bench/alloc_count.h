/* What the process allocates between a start and a stop (alloc_count.c):
 * built where the C library's allocator can be stood in for (glibc, no
 * sanitizer, whose allocators replace the same functions). */
#ifndef TIMERLOG_BENCH_ALLOC_COUNT_H
#define TIMERLOG_BENCH_ALLOC_COUNT_H

#include <stdint.h>

/* Starts counting, from zero, the blocks malloc, calloc, realloc and
 * aligned_alloc give out on any thread, and their bytes (realloc counts the
 * new size). */
void bench_alloc_count_start(void);

/* Stops counting; *bytes and *blocks: what was counted since the start. */
void bench_alloc_count_stop(uint64_t *bytes, uint64_t *blocks);

#endif
