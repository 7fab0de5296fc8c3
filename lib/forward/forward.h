/* Built-in subscribers that mirror scopes as ranges of other tools. Each
 * starts on a log and reports, through the log's error callback, why it
 * could not. Not installed. */
#ifndef TIMERLOG_FORWARD_H
#define TIMERLOG_FORWARD_H

#include "internal.h"
#include "log.h"
#include "upcalls.h"

/* Subscribes `begin` and `end` to the log, reporting a failure as the
 * forwarding to `tool` not starting. */
TLOG_INTERNAL int tlog_forward_start_(tlog_log *log, const char *tool,
                                      void (*begin)(void *, const tlog_scope_event *),
                                      void (*end)(void *, const tlog_scope_event *));

/* tlog_nvtx_start_ and tlog_roctx_start_, which the core calls, are in
 * upcalls.h. */

#endif
