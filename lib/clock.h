/* The clock a log reads and its rate in nanoseconds (clock.c). Not
 * installed. */
#ifndef TIMERLOG_CLOCK_H
#define TIMERLOG_CLOCK_H

#include "internal.h"
#include "clock_now.h"

/* clock.c */
TLOG_INTERNAL void tlog_clock_init_(tlog_log *log);
/* A fresh measurement of the rate (spins for the rest of the first 20 us
 * after load). */
TLOG_INTERNAL double tlog_clock_calibrate_(tlog_log *log);
/* The last measured rate. */
TLOG_INTERNAL double tlog_ns_per_tick_(tlog_log *log);
TLOG_INTERNAL int64_t tlog_mono_ns_(void);
/* tlog_mono_ns_() + timeout_ns, a timeout of decades or more taken as
 * decades (no overflow). */
TLOG_INTERNAL int64_t tlog_deadline_after_(uint64_t timeout_ns);

#endif
