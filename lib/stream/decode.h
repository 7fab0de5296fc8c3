/* Decoding FRAME blocks (decode.c). Not installed. */
#ifndef TIMERLOG_DECODE_H
#define TIMERLOG_DECODE_H

#include "frame.h"

/* What earlier blocks described, for a frame to refer to. */
typedef struct tlog_decode_tables {
    tlog_site *const *sites;
    size_t nsites;
    const char *(*device)(void *user, uint32_t index);   /* NULL if unknown */
    void *user;
    unsigned major;          /* the stream's major version */
} tlog_decode_tables;

/* A resolved frame from a FRAME block's payload. TLOG_EFORMAT (with the
 * reason in `why`) when the payload is damaged, TLOG_ENOMEM. */
TLOG_INTERNAL int tlog_decode_frame_(const tlog_decode_tables *t, const uint8_t *p, size_t n,
                                     tlog_frame **out, char *why, size_t why_size);

/* Puts the device intervals of `f` that a QUEUES block's payload names on
 * the queues it gives. TLOG_EFORMAT (with the reason in `why`) when the
 * payload is damaged or names what `f` lacks; `f` may then be changed in
 * part. */
TLOG_INTERNAL int tlog_decode_queues_(const tlog_decode_tables *t, const uint8_t *p, size_t n,
                                      tlog_frame *f, char *why, size_t why_size);

#endif
