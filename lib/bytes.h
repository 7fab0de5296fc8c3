/* Little-endian integers in bytes, and a cursor that reads them without
 * ever passing the end of its buffer: the stream's blocks (stream/) and the
 * summary's exchange form (summary_codec.c) are made of these. Not
 * installed. */
#ifndef TIMERLOG_BYTES_H
#define TIMERLOG_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline void tlog_put_u16_(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void tlog_put_u32_(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void tlog_put_u64_(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t tlog_get_u16_(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t tlog_get_u32_(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t tlog_get_u64_(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* LEB128: seven bits a byte, low bits first, the high bit set on every
 * byte but the last; at most TLOG_VARINT_MAX bytes. Returns the bytes
 * written. */
#define TLOG_VARINT_MAX 10u

static inline size_t tlog_put_varint_(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

/* Signed values as varints: small magnitudes of either sign stay short. */
static inline uint64_t tlog_zigzag_(int64_t v)
{
    return v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
}

static inline int64_t tlog_unzigzag_(uint64_t v)
{
    return v & 1 ? (int64_t)~(v >> 1) : (int64_t)(v >> 1);
}

/* A cursor over a block's payload that never reads past its end: reads
 * beyond it give zeros and set short_read; a varint longer than any
 * uint64 needs sets overlong. */
typedef struct tlog_cursor {
    const uint8_t *p, *end;
    bool short_read;
    bool overlong;
} tlog_cursor;

static inline const uint8_t *tlog_need_(tlog_cursor *c, size_t n)
{
    if ((size_t)(c->end - c->p) < n) {
        c->short_read = true;
        c->p = c->end;
        return NULL;
    }
    const uint8_t *at = c->p;
    c->p += n;
    return at;
}

static inline uint8_t tlog_read_u8_(tlog_cursor *c)
{
    const uint8_t *p = tlog_need_(c, 1);
    return p ? *p : 0;
}

static inline uint32_t tlog_read_u32_(tlog_cursor *c)
{
    const uint8_t *p = tlog_need_(c, 4);
    return p ? tlog_get_u32_(p) : 0;
}

static inline uint64_t tlog_read_u64_(tlog_cursor *c)
{
    const uint8_t *p = tlog_need_(c, 8);
    return p ? tlog_get_u64_(p) : 0;
}

static inline uint64_t tlog_read_varint_(tlog_cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 7 * TLOG_VARINT_MAX; shift += 7) {
        const uint8_t *p = tlog_need_(c, 1);
        if (!p)
            return 0;
        /* The tenth byte holds bit 63 only. */
        if (shift == 63 && *p > 1)
            break;
        v |= (uint64_t)(*p & 0x7f) << shift;
        if (!(*p & 0x80))
            return v;
    }
    c->overlong = true;
    c->p = c->end;
    return 0;
}

/* A string's bytes (not NUL-terminated) and length; "" past the end. */
static inline const char *tlog_read_str_(tlog_cursor *c, size_t *len)
{
    const uint8_t *p = tlog_need_(c, 2);
    *len = p ? tlog_get_u16_(p) : 0;
    const uint8_t *s = p ? tlog_need_(c, *len) : NULL;
    if (!s)
        *len = 0;
    return s ? (const char *)s : "";
}

#endif
