/* Clock: reading the log's clock and converting ticks to nanoseconds. */
#include <string.h>
#include <time.h>

#include "internal.h"

/* A baseline shorter than this gives a tick rate too coarse to trust. */
#define TLOG_MIN_BASELINE_NS 10000000

int64_t tlog_mono_ns_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void store_rate(tlog_log *log, double ns_per_tick)
{
    uint64_t bits;
    memcpy(&bits, &ns_per_tick, sizeof bits);
    atomic_store_explicit(&log->ns_per_tick_bits, bits, memory_order_relaxed);
}

double tlog_ns_per_tick_(tlog_log *log)
{
    uint64_t bits = atomic_load_explicit(&log->ns_per_tick_bits, memory_order_relaxed);
    if (!bits)
        return tlog_clock_calibrate_(log);
    double rate;
    memcpy(&rate, &bits, sizeof rate);
    return rate;
}

void tlog_clock_init_(tlog_log *log)
{
    if (log->cfg.clock) {
        log->tick0 = log->cfg.clock(log->cfg.clock_user);
        uint64_t hz = log->cfg.clock_hz ? log->cfg.clock_hz : 1000000000u;
        store_rate(log, 1e9 / (double)hz);
        log->calibrated = true;
        return;
    }
    log->mono0 = tlog_mono_ns_();
    log->tick0 = tlog_clock_now_();
    if (!TLOG_CLOCK_NEEDS_CALIBRATION) {
        store_rate(log, 1.0);
        log->calibrated = true;
    }
}

/* The tick rate is measured against CLOCK_MONOTONIC over the whole life of
 * the log, so it gets more precise the longer the log runs; the first call
 * waits until the baseline is long enough. */
double tlog_clock_calibrate_(tlog_log *log)
{
    if (log->calibrated)
        return tlog_ns_per_tick_(log);
    pthread_mutex_lock(&log->clock_lock);
    int64_t mono;
    uint64_t tick;
    do {
        mono = tlog_mono_ns_();
        tick = tlog_clock_now_();
    } while (mono - log->mono0 < TLOG_MIN_BASELINE_NS);
    double rate = (double)(mono - log->mono0) / (double)(tick - log->tick0);
    store_rate(log, rate);
    pthread_mutex_unlock(&log->clock_lock);
    return rate;
}

tlog_ticks tlog_now(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return tlog_clock_now_();
    return log->cfg.clock ? log->cfg.clock(log->cfg.clock_user) : tlog_clock_now_();
}

uint64_t tlog_ticks_to_ns(tlog_log *log, tlog_ticks ticks)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return 0;
    return (uint64_t)((double)ticks * tlog_ns_per_tick_(log) + 0.5);
}
