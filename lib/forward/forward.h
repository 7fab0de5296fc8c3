/* Built-in subscribers that mirror scopes as ranges of other tools. Each
 * starts on a log and reports, through the log's error callback, why it
 * could not. Not installed. */
#ifndef TIMERLOG_FORWARD_H
#define TIMERLOG_FORWARD_H

#include "internal.h"

/* Subscribes `begin` and `end` to the log, reporting a failure as the
 * forwarding to `tool` not starting. */
TLOG_INTERNAL int tlog_forward_start_(tlog_log *log, const char *tool,
                                      void (*begin)(void *, const tlog_scope_event *),
                                      void (*end)(void *, const tlog_scope_event *));

/* NVTX 3 ranges in a "timerlog" domain (nvtx.c, or nvtx_none.c in builds
 * without the NVTX headers). */
TLOG_INTERNAL int tlog_nvtx_start_(tlog_log *log);

/* roctx ranges, through libroctx64 loaded at run time (roctx.c). */
TLOG_INTERNAL int tlog_roctx_start_(tlog_log *log);

#endif
