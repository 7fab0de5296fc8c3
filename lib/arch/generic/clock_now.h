/* Hardware clock for other platforms: CLOCK_MONOTONIC through the vDSO. */
#ifndef TIMERLOG_ARCH_CLOCK_NOW_H
#define TIMERLOG_ARCH_CLOCK_NOW_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t tlog_clock_now_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline bool tlog_clock_invariant_(void)
{
    return true;
}

/* Ticks are nanoseconds already. */
#define TLOG_CLOCK_NEEDS_CALIBRATION 0
#define TLOG_CLOCK_NAME "monotonic"

#endif
