/* Hardware clock for x86-64: the invariant time-stamp counter. */
#ifndef TIMERLOG_ARCH_CLOCK_NOW_H
#define TIMERLOG_ARCH_CLOCK_NOW_H

#include <cpuid.h>
#include <stdbool.h>
#include <stdint.h>
#include <x86intrin.h>

/* rdtsc without a fence: ordering against neighbouring instructions costs
 * more than the skew it removes at scope granularity. */
static inline uint64_t tlog_clock_now_(void)
{
    return __rdtsc();
}

/* Whether the counter ticks at one constant rate on every core, in every
 * power state (CPUID 0x80000007, EDX bit 8). */
static inline bool tlog_clock_invariant_(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && ((d >> 8) & 1u);
}

/* The counter ticks at a fixed rate that must be calibrated. */
#define TLOG_CLOCK_NEEDS_CALIBRATION 1
#define TLOG_CLOCK_NAME "tsc"

#endif
