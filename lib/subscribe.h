/* Telling subscribers of begins, ends, frames and device intervals
 * (subscribe.c). Not installed. */
#ifndef TIMERLOG_SUBSCRIBE_H
#define TIMERLOG_SUBSCRIBE_H

#include "internal.h"
#include "record.h"

/* subscribe.c */
/* Logs that have subscribers: the hot path's one check. */
extern TLOG_INTERNAL _Atomic int tlog_subscribed_;
static inline bool tlog_any_subscriber_(void)
{
    return TLOG_UNLIKELY(atomic_load_explicit(&tlog_subscribed_, memory_order_relaxed) != 0);
}
/* Tells subscribers of the begin on top of t's stack, just pushed, at its
 * start (a dropped scope's: now). If any is told, the entry's `noted` is set
 * and t's note for it filled. */
TLOG_INTERNAL void tlog_notify_begin_(tlog_thread *t);
/* Tells the subscribers told of the begin of `o` (a copy: callbacks may
 * reuse its stack entry) of its end. Also inside a callback. */
TLOG_INTERNAL void tlog_notify_end_(tlog_thread *t, tlog_log *log, const tlog_open *o,
                                    const tlog_note *note, tlog_ticks now,
                                    unsigned rec_flags);
/* The same for `o`, a noted entry just popped by a plain end: read before
 * any callback runs. */
TLOG_INTERNAL void tlog_notify_popped_(tlog_thread *t, const tlog_open *o, tlog_ticks now);
/* Fills in size, log and site_id. */
TLOG_INTERNAL void tlog_notify_frame_(tlog_log *log, tlog_frame_event *event);
/* Whether some subscriber wants device intervals. */
TLOG_INTERNAL bool tlog_subscribed_device_(tlog_log *log);
/* Fills in size, log, site_id and instance. */
TLOG_INTERNAL void tlog_notify_devices_(tlog_log *log, tlog_device_event *events, size_t n);
TLOG_INTERNAL void tlog_subs_init_(tlog_log *log);
TLOG_INTERNAL void tlog_subs_destroy_(tlog_log *log);
/* Subscriptions on the log now. */
TLOG_INTERNAL uint64_t tlog_subs_count_(tlog_log *log);

#endif
