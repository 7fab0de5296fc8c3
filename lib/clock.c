/* Clock: reading the log's clock and converting ticks to nanoseconds. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fork.h"
#include "log.h"

/* From this baseline on, a pair's uncertainty (tens of ns) is below 1e-4
 * of it and the rate is kept between resolves; a conversion before that
 * measures the rate again, over whatever baseline the process has by then.
 * A resolve measures it again over an ever longer one, once that has grown
 * by a 64th (settled_rate_due). */
#define TLOG_MIN_BASELINE_NS 1000000

/* The shortest baseline any conversion uses (an error near 1e-3): only a
 * conversion in the process's first 20 us waits, spinning, for the rest of
 * them. No conversion ever sleeps or waits longer, so no recording thread
 * pays for the calibration. */
#define TLOG_FIRST_BASELINE_NS 20000

/* The hardware counter's rate is measured once per process against
 * CLOCK_MONOTONIC, from library load to each conversion, so it gets more
 * precise the longer the process runs. */
static struct {
    pthread_mutex_t lock;
    int64_t mono0;
    uint64_t tick0;
    _Atomic uint64_t rate_bits;
    _Atomic bool rate_settled;   /* measured over TLOG_MIN_BASELINE_NS or more */
    _Atomic uint64_t measured;   /* the counter when the rate last was */
} hw = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t hw_once = PTHREAD_ONCE_INIT;

void tlog_clock_atfork_(int phase)
{
    tlog_fork_lock_(&hw.lock, TLOG_LOCK_CLOCK, phase);
}

int64_t tlog_mono_ns_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tlog_deadline_after_(uint64_t timeout_ns)
{
    const uint64_t far = UINT64_C(1) << 61;   /* decades: no overflow */
    return tlog_mono_ns_() + (int64_t)(timeout_ns < far ? timeout_ns : far);
}

/* CLOCK_MONOTONIC and the counter at one moment: the counter is read on
 * either side of CLOCK_MONOTONIC and the tightest of a few tries is kept,
 * so that a thread preempted between two reads (milliseconds on a loaded
 * machine) does not skew the rate. */
static void read_pair(int64_t *mono, uint64_t *tick)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t before = tlog_clock_now_();
        int64_t m = tlog_mono_ns_();
        uint64_t after = tlog_clock_now_();
        if (after - before < best) {
            best = after - before;
            *mono = m;
            *tick = before + best / 2;
        }
    }
}

static void hw_start(void)
{
    read_pair(&hw.mono0, &hw.tick0);
}

__attribute__((constructor)) static void hw_start_at_load(void)
{
    pthread_once(&hw_once, hw_start);
}

static double bits_to_rate(uint64_t bits)
{
    double rate;
    memcpy(&rate, &bits, sizeof rate);
    return rate;
}

static uint64_t rate_to_bits(double rate)
{
    uint64_t bits;
    memcpy(&bits, &rate, sizeof bits);
    return bits;
}

/* Whether the settled rate is to be measured again: once its baseline has
 * grown by a 64th since it last was. The rate so keeps getting more
 * precise as the process runs, while a resolve seldom pays for a
 * measurement (a lock and five reads of CLOCK_MONOTONIC, some 100 ns). */
static bool settled_rate_due(void)
{
    uint64_t last = atomic_load_explicit(&hw.measured, memory_order_relaxed) - hw.tick0;
    return tlog_clock_now_() - hw.tick0 >= last + last / 64;
}

/* The rate last measured, in *rate, where it is settled and not due. */
static bool rate_kept(double *rate)
{
    if (!atomic_load_explicit(&hw.rate_settled, memory_order_acquire) || settled_rate_due())
        return false;
    *rate = bits_to_rate(atomic_load_explicit(&hw.rate_bits, memory_order_relaxed));
    return true;
}

static double hw_measure(void)
{
    pthread_once(&hw_once, hw_start);
    if (!TLOG_CLOCK_NEEDS_CALIBRATION)
        return 1.0;
    double rate;
    if (rate_kept(&rate))
        return rate;
    tlog_lock_(&hw.lock, TLOG_LOCK_CLOCK);
    if (rate_kept(&rate)) {
        tlog_unlock_(&hw.lock);   /* another thread measured it meanwhile */
        return rate;
    }
    int64_t mono = 0;
    uint64_t tick = 0;
    read_pair(&mono, &tick);
    while (mono - hw.mono0 < TLOG_FIRST_BASELINE_NS || tick == hw.tick0)
        read_pair(&mono, &tick);
    rate = (double)(mono - hw.mono0) / (double)(tick - hw.tick0);
    atomic_store_explicit(&hw.rate_bits, rate_to_bits(rate), memory_order_relaxed);
    atomic_store_explicit(&hw.measured, tick, memory_order_relaxed);
    if (mono - hw.mono0 >= TLOG_MIN_BASELINE_NS)
        atomic_store_explicit(&hw.rate_settled, true, memory_order_release);
    tlog_unlock_(&hw.lock);
    return rate;
}

static tlog_ticks monotonic_ticks(void *user)
{
    (void)user;
    return (tlog_ticks)tlog_mono_ns_();
}

/* The hardware counter unless it cannot be trusted (not invariant) or the
 * environment asks for CLOCK_MONOTONIC; then the log reads that instead,
 * through the same branch as a custom clock. */
static bool use_monotonic(const tlog_config *cfg)
{
    if (!(cfg->flags & TLOG_CONFIG_IGNORE_ENV)) {
        const char *env = getenv("TIMERLOG_CLOCK");
        if (env && strcmp(env, "monotonic") == 0)
            return true;
    }
    return !tlog_clock_invariant_();
}

void tlog_clock_init_(tlog_log *log)
{
    if (!log->cfg.clock && use_monotonic(&log->cfg)) {
        log->cfg.clock = monotonic_ticks;
        log->cfg.clock_user = NULL;
        log->cfg.clock_hz = 0;
        log->clock.name = "monotonic";
    } else {
        log->clock.name = log->cfg.clock ? "custom" : TLOG_CLOCK_NAME;
    }
    if (log->cfg.clock) {
        uint64_t hz = log->cfg.clock_hz ? log->cfg.clock_hz : 1000000000u;
        log->clock.custom_rate = 1e9 / (double)hz;
        log->clock.tick0 = log->cfg.clock(log->cfg.clock_user);
    } else {
        pthread_once(&hw_once, hw_start);
        log->clock.tick0 = tlog_clock_now_();
    }
}

double tlog_clock_calibrate_(tlog_log *log)
{
    return log->cfg.clock ? log->clock.custom_rate : hw_measure();
}

double tlog_ns_per_tick_(tlog_log *log)
{
    if (log->cfg.clock)
        return log->clock.custom_rate;
    if (!atomic_load_explicit(&hw.rate_settled, memory_order_relaxed))
        return hw_measure();
    return bits_to_rate(atomic_load_explicit(&hw.rate_bits, memory_order_relaxed));
}

tlog_ticks tlog_now(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return tlog_clock_now_();
    return log->cfg.clock ? log->cfg.clock(log->cfg.clock_user) : tlog_clock_now_();
}

const char *tlog_clock_name(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    return log ? log->clock.name : "none";
}

uint64_t tlog_ticks_to_ns(tlog_log *log, tlog_ticks ticks)
{
    log = tlog_resolve_log_(log);
    if (!log)
        return 0;
    return tlog_scale_ns_(ticks, tlog_ns_per_tick_(log));
}
