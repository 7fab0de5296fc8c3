/* What the core calls in the layers built on it: the device layer
 * (lib/device/), the stream writer (lib/stream/) and forwarding
 * (lib/forward/). Declared here so that the core includes none of their
 * headers: they include the core's, never the other way round
 * (doc/internals.md, checked by test/check_layers.py). Not installed. */
#ifndef TIMERLOG_UPCALLS_H
#define TIMERLOG_UPCALLS_H

#include "internal.h"

/* device/: resolving for readers (device_sync.c, device.c) */
/* Waits, until `deadline` (tlog_mono_ns_), for the device work still
 * pending in frame `f`, and delivers it, what did not complete by then
 * unresolved (TLOG_ETIMEDOUT; said when `say`, else the caller says why it
 * gave up): the forced sync. A deadline already past waits for nothing,
 * another thread's forced sync included (TLOG_EBUSY: nothing delivered).
 * TLOG_OK when everything was done. */
TLOG_INTERNAL int tlog_device_settle_(tlog_frame *f, int64_t deadline, bool say);
/* Delivers without blocking what is done on every device of the log. */
TLOG_INTERNAL void tlog_devices_poll_(tlog_log *log);
/* The same at a root's end, on the recording thread: no marker is made,
 * and what callbacks must be told (errors, intervals for subscribers) waits
 * in the result for tlog_devices_poll_finish_, once the frame is queued.
 * NULL when there was nothing to read or no memory. */
TLOG_INTERNAL void *tlog_devices_poll_deferred_(tlog_log *log);
TLOG_INTERNAL void tlog_devices_poll_finish_(tlog_log *log, void *pending);
TLOG_INTERNAL void tlog_devices_destroy_(tlog_log *log);

/* stream/writer.c */
TLOG_INTERNAL int tlog_stream_open_(tlog_log *log);
/* Copies `pattern` with each `%` replaced by the MPI rank, or the process
 * id when no rank is visible or the process was forked (a forked rank
 * would share its parent's file); false when it does not fit. */
TLOG_INTERNAL bool tlog_expand_path_(const char *pattern, char *out, size_t size);
/* Hands a frame (and one reference) to the writer; false if not taken. */
TLOG_INTERNAL bool tlog_stream_take_(tlog_log *log, tlog_frame *f);
/* Writes what is waiting, ends the file; `release` frees the stream. */
TLOG_INTERNAL void tlog_stream_close_(tlog_log *log, bool release);
TLOG_INTERNAL void tlog_stream_stats_(tlog_log *log, uint64_t *written, uint64_t *lost,
                                      uint64_t *waits);

/* forward/: NVTX 3 ranges in a "timerlog" domain (nvtx.c, or nvtx_none.c in
 * builds without the NVTX headers) and roctx ranges through libroctx64
 * loaded at run time (roctx.c). */
TLOG_INTERNAL int tlog_nvtx_start_(tlog_log *log);
TLOG_INTERNAL int tlog_roctx_start_(tlog_log *log);

#endif
