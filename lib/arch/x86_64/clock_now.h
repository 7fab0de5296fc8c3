/* Hardware clock for x86-64: the invariant time-stamp counter. */
#ifndef TIMERLOG_ARCH_CLOCK_NOW_H
#define TIMERLOG_ARCH_CLOCK_NOW_H

#include <stdint.h>
#include <x86intrin.h>

/* rdtsc without a fence: ordering against neighbouring instructions costs
 * more than the skew it removes at scope granularity. */
static inline uint64_t tlog_clock_now_(void)
{
    return __rdtsc();
}

/* The counter ticks at a fixed rate that must be calibrated. */
#define TLOG_CLOCK_NEEDS_CALIBRATION 1
#define TLOG_CLOCK_NAME "tsc"

#endif
