/* What every file of the library shares: attributes, limits, the handles
 * declared ahead, and small arithmetic helpers. Module headers (record.h,
 * frame.h, tree.h, log.h...) hold the structures and prototypes; this one
 * holds nothing that belongs to a single module. Not installed. */
#ifndef TIMERLOG_INTERNAL_H
#define TIMERLOG_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "timerlog/timerlog.h"
#include "lock.h"

#define TLOG_LIKELY(x) __builtin_expect(!!(x), 1)
#define TLOG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLOG_INTERNAL __attribute__((visibility("hidden")))

#define TLOG_NAME_MAX 64
#define TLOG_CHUNK_RECS 4096u   /* record slots a chunk holds: 64 KiB */
#define TLOG_DEFAULT_BUDGET ((size_t)8 << 20)
#define TLOG_DEFAULT_POOL ((size_t)16 << 20)
#define TLOG_DEFAULT_FRAMES 8u
#define TLOG_DEFAULT_DEPTH 128u
#define TLOG_MAX_DEPTH 4096u
#define TLOG_DEFAULT_SYNC_TIMEOUT 5000000000ull

typedef struct tlog_devices tlog_devices;
typedef struct tlog_stream tlog_stream;
typedef struct tlog_sublist tlog_sublist;
typedef struct tlog_thread tlog_thread;


/* initial-exec: a TLS read is one %fs-relative load, not a call to
 * __tls_get_addr, even inside a shared library. */
#define TLOG_TLS __thread __attribute__((tls_model("initial-exec")))



/* Nanoseconds held as a double (a reduced row's mean) as a whole number,
 * the fraction cut off. Saturates: the mean of totals near UINT64_MAX is
 * 2^64 once rounded to a double, one past what uint64_t holds. */
static inline uint64_t tlog_ns_from_double_(double ns)
{
    if (!(ns >= 0))
        return 0;
    return ns >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)ns;
}


/* Reads a settings struct the caller gives, which may be an older, shorter
 * version (its leading `size` says how much it holds; 0 is the current
 * size), into `out`, of `out_size` bytes, zero past what it holds; NULL
 * reads as all zero. False for a size below `least`, or one no struct has:
 * a struct of any header's version ends on a boundary of its alignment,
 * which a pointer's size divides, so a size that does not would cut a
 * field, a pointer perhaps, in two. */
static inline bool tlog_read_sized_(void *out, size_t out_size, const void *in, size_t least)
{
    memset(out, 0, out_size);
    if (!in)
        return true;
    size_t n;
    memcpy(&n, in, sizeof n);
    if (!n)
        n = out_size;
    if (n < least || n % sizeof(void *))
        return false;
    memcpy(out, in, n < out_size ? n : out_size);
    return true;
}

/* Copies a filled result struct into the caller's, which may be an older,
 * shorter version: its leading `size` says how much it holds. */
static inline int tlog_copy_sized_(void *out, const void *full, size_t full_size)
{
    size_t want;
    if (!out)
        return TLOG_EINVAL;
    memcpy(&want, out, sizeof want);
    if (want < sizeof(size_t))
        return TLOG_EINVAL;
    memcpy((char *)out + sizeof want, (const char *)full + sizeof want,
           (want < full_size ? want : full_size) - sizeof want);
    return TLOG_OK;
}

/* Whether a site of `site_level` records at `log_level`: only the levels
 * TLOG_LEVEL_COARSE and TLOG_LEVEL_FINE ever do. One compare. */
static inline bool tlog_level_on_(int site_level, int log_level)
{
    return (unsigned)site_level - 1u < (unsigned)log_level;
}

/* ticks * rate, rounded, in nanoseconds; saturates rather than overflow. */
static inline uint64_t tlog_scale_ns_(uint64_t ticks, double rate)
{
    if (rate == 1.0)   /* a nanosecond clock: exact past a double's 2^53 */
        return ticks;
    double ns = (double)ticks * rate + 0.5;
    return ns < 18446744073709551616.0 ? (uint64_t)ns : UINT64_MAX;
}

#endif
