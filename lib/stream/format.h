/*
 * The binary stream's layout, shared by the writer (writer.c, encode.c) and
 * the reader (reader.c, decode.c). doc/stream.md is the specification; this file and it
 * must agree. Not installed.
 */
#ifndef TIMERLOG_STREAM_FORMAT_H
#define TIMERLOG_STREAM_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bytes.h"

#define TLOG_STREAM_MAGIC "TLOGSTRM"
/* Version 2 writes rows and instances with varints; this reader reads
 * version 1 too (fixed-width rows and instances). */
#define TLOG_STREAM_MAJOR 2u
#define TLOG_STREAM_OLDEST_MAJOR 1u
/* Minor 1: QUEUES blocks, which readers of minor 0 skip. */
#define TLOG_STREAM_MINOR 1u
#define TLOG_STREAM_HEADER_BYTES 64u
#define TLOG_STREAM_NONE 0xffffffffu
/* Larger payloads are taken for damage, not allocated. */
#define TLOG_STREAM_MAX_PAYLOAD (256u << 20)

enum tlog_block_type {
    TLOG_BLOCK_SITE = 1,
    TLOG_BLOCK_THREAD = 2,
    TLOG_BLOCK_DEVICE = 3,
    TLOG_BLOCK_FRAME = 4,
    TLOG_BLOCK_END = 5,
    /* Minor 1: the queues of the next frame's device intervals that ran on
     * another queue than their row's first (its row's, to readers of 0). */
    TLOG_BLOCK_QUEUES = 6
};

/* Version 2: the low bits of an instance's tag (its row shifted left by
 * 2): it ran on another thread than the frame's, whose id follows; it has
 * a launcher, which follows. */
#define TLOG_INST_OTHER_THREAD 2u
#define TLOG_INST_LAUNCHER 1u

/* Block: u32 type, u32 payload length, payload, u32 CRC-32 of all before. */
#define TLOG_BLOCK_HEAD 8u
#define TLOG_BLOCK_TAIL 4u

/* CRC-32 (IEEE 802.3, as zlib's crc32). */
uint32_t tlog_crc32_(uint32_t crc, const void *data, size_t n)
    __attribute__((visibility("hidden")));

#endif
