/* Encoding frames as stream blocks (encode.c). Not installed. */
#ifndef TIMERLOG_ENCODE_H
#define TIMERLOG_ENCODE_H

#include "format.h"
#include "frame.h"
#include "map.h"

/* A growing byte buffer; `failed` once memory ran out. */
typedef struct tlog_bytes {
    uint8_t *data;
    size_t len, cap;
    bool failed;
    size_t cut;              /* strings cut to a string's most (doc/stream.md) */
} tlog_bytes;

/* The most bytes of a string in the stream: its length is a u16. */
#define TLOG_STREAM_STRING_MAX 0xffffu

/* What a stream has described so far: sites and device names by address,
 * numbered in order of first sight (their stream index). */
typedef struct tlog_seen {
    tlog_map sites;
    tlog_map devices;
    char (*threads)[TLOG_NAME_MAX];   /* by thread id: the name last written */
    size_t nthreads;
} tlog_seen;

TLOG_INTERNAL void tlog_seen_free_(tlog_seen *seen);

/* A lower block limit a test build has set (test_hooks.c), or 0. */
#ifdef TIMERLOG_TEST_HOOKS
TLOG_INTERNAL size_t tlog_test_block_limit_(void);
#else
static inline size_t tlog_test_block_limit_(void)
{
    return 0;
}
#endif

/* The largest block payload written: what a reader takes. */
static inline size_t tlog_stream_block_limit_(void)
{
    size_t lowered = tlog_test_block_limit_();
    return lowered ? lowered : TLOG_STREAM_MAX_PAYLOAD;
}

/* Appends the blocks describing what `f` refers to that `seen` lacks, then
 * f's FRAME block. `f` must be resolved. TLOG_ENOMEM if memory ran out,
 * TLOG_EIO if the FRAME block would be larger than a reader takes
 * (tlog_stream_block_limit_): `b` then ends with the descriptions that were
 * whole, which `seen` counts as written, and holds no part of the frame. */
TLOG_INTERNAL int tlog_encode_frame_(tlog_seen *seen, const tlog_frame *f, tlog_bytes *b);

TLOG_INTERNAL void tlog_encode_header_(uint8_t out[TLOG_STREAM_HEADER_BYTES], uint32_t rank,
                                       uint32_t pid, uint64_t wall_ns);
TLOG_INTERNAL void tlog_encode_end_(tlog_bytes *b, uint64_t frames, uint64_t frames_lost);

#endif
