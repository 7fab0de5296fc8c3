/* Logs: creation, configuration, the default log, levels, errors, counters. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "fork.h"
#include "frame.h"
#include "log.h"
#include "record.h"
#include "spares.h"
#include "stats.h"
#include "subscribe.h"
#include "summary.h"
#include "upcalls.h"

/* The macros' one-branch level check reads this; it mirrors the default
 * log's level, and before that log exists, the level it will start with. */
TLOG_API int tlog_active_level_ = TLOG_LEVEL_FINE;

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(tlog_log *) default_log;
static tlog_config default_cfg;
static bool default_cfg_set;
static char *default_stream_path;   /* default_cfg's copy of stream_path */

/* A child leaves the parent's default log to it (see fork.c): its own is
 * made at its first use, with the same configuration. */
void tlog_log_atfork_(int phase)
{
    tlog_fork_lock_(&default_lock, TLOG_LOCK_DEFAULT_LOG, phase);
    if (phase == TLOG_FORK_CHILD)
        atomic_store(&default_log, NULL);
}

const char *tlog_strerror(int code)
{
    switch (code) {
#define TLOG_STATUS_MESSAGE_(name, value, message) case value: return message;
    TLOG_STATUS_MAP(TLOG_STATUS_MESSAGE_)
#undef TLOG_STATUS_MESSAGE_
    default: return "unknown error";
    }
}

const char *tlog_err_name(int code)
{
    switch (code) {
#define TLOG_STATUS_NAME_(name, value, message) case value: return "TLOG_" #name;
    TLOG_STATUS_MAP(TLOG_STATUS_NAME_)
#undef TLOG_STATUS_NAME_
    default: return "TLOG_UNKNOWN";
    }
}

long tlog_env_rank_(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long r = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && r >= 0)
            return r;
    }
    return -1;
}

/* TIMERLOG_LEVEL, or `fallback` when it is unset or none of 0, 1 and 2
 * (reported by report_bad_env). */
static int level_from_env(int fallback)
{
    const char *s = getenv("TIMERLOG_LEVEL");
    if (s && (s[0] == '0' || s[0] == '1' || s[0] == '2') && s[1] == '\0')
        return s[0] - '0';
    return fallback;
}

/* The level a log with this (normalised) config starts at. */
static int starting_level(const tlog_config *cfg)
{
    if (cfg->flags & TLOG_CONFIG_IGNORE_ENV)
        return cfg->level;
    return level_from_env(cfg->level);
}

static int normalize_config(const tlog_config *in, tlog_config *out);

__attribute__((constructor)) static void preset_default_level(void)
{
    tlog_config cfg;
    if (normalize_config(NULL, &cfg) == TLOG_OK)
        tlog_active_level_ = starting_level(&cfg);
}

static int normalize_config(const tlog_config *in, tlog_config *out)
{
    if (!tlog_read_sized_(out, sizeof *out, in, sizeof(size_t)))
        return TLOG_EINVAL;
    out->size = sizeof *out;
    if (out->flags & ~(unsigned)(TLOG_CONFIG_START_OFF | TLOG_CONFIG_IGNORE_ENV |
                                 TLOG_CONFIG_NVTX | TLOG_CONFIG_ROCTX | TLOG_CONFIG_STATS))
        return TLOG_EINVAL;
    tlog_summary_config stats;
    if (tlog_summary_normalize_(&out->stats, &stats) != TLOG_OK)
        return TLOG_EINVAL;
    if (out->level == 0)
        out->level = TLOG_LEVEL_FINE;
    if (out->level < TLOG_LEVEL_COARSE || out->level > TLOG_LEVEL_FINE)
        return TLOG_EINVAL;
    if (out->flags & TLOG_CONFIG_START_OFF)
        out->level = TLOG_LEVEL_OFF;
    if (!out->max_frames)
        out->max_frames = TLOG_DEFAULT_FRAMES;
    if (!out->max_depth)
        out->max_depth = TLOG_DEFAULT_DEPTH;
    if (out->max_depth > TLOG_MAX_DEPTH)
        return TLOG_EINVAL;
    if (!out->thread_budget)
        out->thread_budget = TLOG_DEFAULT_BUDGET;
    if (!out->pool_bytes)
        out->pool_bytes = TLOG_DEFAULT_POOL;
    if (out->thread_budget < 4 * sizeof(tlog_rec))
        return TLOG_EINVAL;
    if (!out->record_alloc != !out->record_free)
        return TLOG_EINVAL;
    if (!out->sync_timeout_ns)
        out->sync_timeout_ns = TLOG_DEFAULT_SYNC_TIMEOUT;
    return TLOG_OK;
}

/* TIMERLOG_SYNC_TIMEOUT_MS: a whole number of milliseconds. */
static void sync_timeout_from_env(tlog_config *cfg, bool *bad)
{
    const char *s = getenv("TIMERLOG_SYNC_TIMEOUT_MS");
    if (!s || !*s || (cfg->flags & TLOG_CONFIG_IGNORE_ENV))
        return;
    char *end;
    unsigned long long ms = strtoull(s, &end, 10);
    if (*end || ms == 0 || ms > UINT64_MAX / 1000000u)
        *bad = true;
    else
        cfg->sync_timeout_ns = ms * 1000000u;
}

static int create_log(const tlog_config *config, bool is_default, tlog_log **out)
{
    if (!out)
        return TLOG_EINVAL;
    *out = NULL;
    tlog_log *log = tlog_calloc_(1, sizeof *log);
    if (!log)
        return TLOG_ENOMEM;
    log->is_default = is_default;
    int rc = normalize_config(config, &log->cfg);
    if (rc != TLOG_OK) {
        free(log);
        return rc;
    }
    rc = tlog_stats_open_(log);
    if (rc != TLOG_OK) {
        free(log);
        return rc;
    }
    bool bad_timeout = false;
    sync_timeout_from_env(&log->cfg, &bad_timeout);
    log->bad_timeout_env = bad_timeout;
    log->budget_recs = log->cfg.thread_budget / sizeof(tlog_rec);
    log->chunk_recs = log->budget_recs < TLOG_CHUNK_RECS ? log->budget_recs
                                                         : TLOG_CHUNK_RECS;
    log->fork_generation = tlog_fork_generation_();
    pthread_mutex_init(&log->lock, NULL);
    pthread_mutex_init(&log->errors.lock, NULL);
    tlog_pool_init_(log);
    tlog_subs_init_(log);
    tlog_clock_init_(log);

    atomic_init(&log->level, starting_level(&log->cfg));
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    log->wall0_ns = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
    long rank = tlog_env_rank_();
    log->rank = rank > 0 ? (uint32_t)rank : 0;
    log->errors.creator = pthread_self();
    atomic_init(&log->errors.creating, true);
    tlog_stream_open_(log);   /* before any frame can complete */
    *out = log;
    return TLOG_OK;
}

/* The default handler prints the first report of each kind (code, site and
 * format: a site-less report is known by what it says), says once, at the
 * second, that the rest are only counted, then counts silently: a broken
 * scope in a loop must not flood stderr. Returns how many times the kind
 * has been reported (past the table's room: 3, silent). */
static uint64_t times_reported(tlog_log *log, int code, const tlog_site *site,
                               const char *kind)
{
    uint64_t times = 3;
    tlog_lock_(&log->errors.lock, TLOG_LOCK_ERRORS);
    unsigned i = 0;
    while (i < log->errors.nreported &&
           (log->errors.reported[i].code != code || log->errors.reported[i].site != site ||
            log->errors.reported[i].kind != kind))
        i++;
    if (i == log->errors.nreported && i < sizeof log->errors.reported / sizeof log->errors.reported[0]) {
        log->errors.reported[i].code = code;
        log->errors.reported[i].site = site;
        log->errors.reported[i].kind = kind;
        log->errors.reported[i].times = 0;
        log->errors.nreported++;
    }
    if (i < log->errors.nreported)
        times = ++log->errors.reported[i].times;
    tlog_unlock_(&log->errors.lock);
    return times;
}

/* To the error callback, or printed by the default handler: the first of
 * its kind, or with a NULL kind every one (those of a log's making and its
 * settings, one each per log). */
static void deliver_report(tlog_log *log, const tlog_thread *t, int code,
                           const tlog_site *site, const char *kind, const char *msg)
{
    tlog_check_no_lock_(msg);
    tlog_error err = {code, msg, site, t ? t->id : 0};
    if (log->cfg.on_error) {
        log->cfg.on_error(log->cfg.error_user, &err);
        return;
    }
    uint64_t times = kind ? times_reported(log, code, site, kind) : 1;
    if (times == 1)
        fprintf(stderr, "timerlog: %s\n", msg);
    else if (times == 2)
        fprintf(stderr, "timerlog: that happened again (%s); from now on reports like "
                        "it are only counted: see tlog_get_stats\n", tlog_strerror(code));
}

/* What was reported while the log was being made, now that no lock is held:
 * the error callback may call the library. */
static void tell_deferred(tlog_log *log)
{
    tlog_lock_(&log->errors.lock, TLOG_LOCK_ERRORS);
    atomic_store(&log->errors.creating, false);
    unsigned n = log->errors.ndeferred;
    log->errors.ndeferred = 0;
    tlog_unlock_(&log->errors.lock);
    for (unsigned i = 0; i < n; i++)
        deliver_report(log, NULL, log->errors.deferred[i].code, NULL, NULL,
                       log->errors.deferred[i].msg);
}

/* Keeps a report made while the log is being made; false once it is made. */
static bool defer_report(tlog_log *log, int code, const char *msg)
{
    if (!atomic_load(&log->errors.creating) ||
        !pthread_equal(log->errors.creator, pthread_self()))
        return false;
    tlog_lock_(&log->errors.lock, TLOG_LOCK_ERRORS);
    bool kept = atomic_load(&log->errors.creating);
    if (kept && log->errors.ndeferred < sizeof log->errors.deferred / sizeof log->errors.deferred[0]) {
        log->errors.deferred[log->errors.ndeferred].code = code;
        snprintf(log->errors.deferred[log->errors.ndeferred].msg, sizeof log->errors.deferred[0].msg, "%s", msg);
        log->errors.ndeferred++;
    }
    tlog_unlock_(&log->errors.lock);
    return kept;
}

/* A switch or choice in the environment that is set to none of its values
 * is ignored, and said. */
static void report_bad_choice(tlog_log *log, const char *name, const char *const *values,
                              const char *expected)
{
    const char *s = getenv(name);
    if (!s || !*s || (log->cfg.flags & TLOG_CONFIG_IGNORE_ENV))
        return;
    for (; *values; values++)
        if (strcmp(s, *values) == 0)
            return;
    tlog_report_setting_(log, TLOG_EINVAL, "%s=%.64s is not %s; ignored", name, s, expected);
}

static void report_bad_env(tlog_log *log)
{
    static const char *const levels[] = {"0", "1", "2", NULL},
                             *const switches[] = {"0", "1", NULL},
                             *const clocks[] = {"monotonic", NULL};
    report_bad_choice(log, "TIMERLOG_LEVEL", levels, "0, 1 or 2");
    report_bad_choice(log, "TIMERLOG_NVTX", switches, "1 or 0");
    report_bad_choice(log, "TIMERLOG_ROCTX", switches, "1 or 0");
    report_bad_choice(log, "TIMERLOG_CLOCK", clocks, "\"monotonic\" (unset: the CPU's counter)");
    if (log->bad_timeout_env)
        tlog_report_setting_(log, TLOG_EINVAL,
                             "TIMERLOG_SYNC_TIMEOUT_MS=%s is not a positive number of "
                     "milliseconds; ignored", getenv("TIMERLOG_SYNC_TIMEOUT_MS"));
    tlog_stats_report_env_(log);
}

/* TIMERLOG_NVTX / TIMERLOG_ROCTX: 1 switches forwarding on, 0 off; unset
 * leaves the config's choice. */
static bool switch_from_env(const tlog_config *cfg, const char *name, unsigned flag)
{
    const char *s = (cfg->flags & TLOG_CONFIG_IGNORE_ENV) ? NULL : getenv(name);
    if (s && (strcmp(s, "1") == 0 || strcmp(s, "0") == 0))
        return s[0] == '1';
    return (cfg->flags & flag) != 0;
}

/* Built-in subscribers that mirror scopes into other tools. */
static void start_forwarders(tlog_log *log)
{
    if (switch_from_env(&log->cfg, "TIMERLOG_NVTX", TLOG_CONFIG_NVTX))
        tlog_nvtx_start_(log);
    if (switch_from_env(&log->cfg, "TIMERLOG_ROCTX", TLOG_CONFIG_ROCTX))
        tlog_roctx_start_(log);
}

/* What a new log does once it is made, outside any lock: the error
 * callback may call the library. */
static void after_create(tlog_log *log)
{
    tell_deferred(log);
    report_bad_env(log);
    start_forwarders(log);
}

int tlog_create(const tlog_config *config, tlog_log **out)
{
    int rc = create_log(config, false, out);
    if (rc == TLOG_OK)
        after_create(*out);
    return rc;
}

void tlog_destroy(tlog_log *log)
{
    if (!log || log->is_default || tlog_log_inherited_(log))
        return;
    tlog_threads_orphan_(log);   /* waits for threads exiting meanwhile */
    tlog_stream_close_(log, true);   /* its writer may be telling subscribers */
    tlog_stats_write_report_(log);   /* once every frame has been counted */
    tlog_subs_destroy_(log);
    tlog_frames_clear_(log);
    tlog_devices_destroy_(log);
    tlog_stats_close_(log);
    tlog_resolve_scratch_free_(log);
    tlog_spares_drop_(log);
    tlog_pool_destroy_(log);
    pthread_mutex_destroy(&log->errors.lock);
    pthread_mutex_destroy(&log->lock);
    free(log);
}

int tlog_default_config(const tlog_config *config)
{
    tlog_config check;
    int rc = normalize_config(config, &check);
    if (rc != TLOG_OK)
        return rc;
    /* The log is made later, when the caller's string may be gone. */
    char *path = NULL;
    if (check.stream_path) {
        size_t n = strlen(check.stream_path) + 1;
        if (!(path = tlog_malloc_(n)))
            return TLOG_ENOMEM;
        memcpy(path, check.stream_path, n);
    }
    tlog_lock_(&default_lock, TLOG_LOCK_DEFAULT_LOG);
    if (atomic_load(&default_log)) {
        rc = TLOG_EBUSY;
    } else {
        default_cfg_set = config != NULL;
        if (config) {
            /* As given (normalize_config made `check` from it, and read it
             * fine): the log normalizes it again when it is made. */
            (void)tlog_read_sized_(&default_cfg, sizeof default_cfg, config, 0);
            default_cfg.stream_path = path;
        }
        char *old = default_stream_path;
        default_stream_path = path;
        path = old;
        __atomic_store_n(&tlog_active_level_, starting_level(&check), __ATOMIC_RELAXED);
    }
    tlog_unlock_(&default_lock);
    free(path);   /* the one replaced, or this one when refused */
    return rc;
}

static void close_default_stream(void)
{
    tlog_log *log = atomic_load(&default_log);
    if (log)
        tlog_stream_close_(log, false);
}

static void report_default_log(void)
{
    tlog_log *log = atomic_load(&default_log);
    if (log)
        tlog_stats_write_report_(log);
}

tlog_log *tlog_default(void)
{
    tlog_log *log = atomic_load_explicit(&default_log, memory_order_acquire);
    if (TLOG_LIKELY(log))
        return log;
    bool created = false;
    tlog_lock_(&default_lock, TLOG_LOCK_DEFAULT_LOG);
    log = atomic_load_explicit(&default_log, memory_order_relaxed);
    if (!log && create_log(default_cfg_set ? &default_cfg : NULL, true, &log) == TLOG_OK) {
        created = true;
        __atomic_store_n(&tlog_active_level_, atomic_load(&log->level),
                         __ATOMIC_RELAXED);
        atomic_store_explicit(&default_log, log, memory_order_release);
    }
    tlog_unlock_(&default_lock);
    static atomic_bool closes_at_exit;   /* a forked child inherits it */
    if (created) {
        after_create(log);
        if (atomic_load(&log->stream) && !atomic_exchange(&closes_at_exit, true))
            atexit(close_default_stream);
        static atomic_bool reports_at_exit;   /* a forked child inherits it */
        if (log->stats.report && !atomic_exchange(&reports_at_exit, true))
            atexit(report_default_log);   /* registered last, so it runs first */
    }
    return log;
}

tlog_log *tlog_resolve_log_(tlog_log *log)
{
    if (!log)
        return tlog_default();
    return TLOG_UNLIKELY(tlog_log_inherited_(log)) ? NULL : log;
}

int tlog_set_level(tlog_log *log, int level)
{
    if (level < TLOG_LEVEL_OFF || level > TLOG_LEVEL_FINE)
        return TLOG_EINVAL;
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    atomic_store(&log->level, level);
    if (log->is_default)
        __atomic_store_n(&tlog_active_level_, level, __ATOMIC_RELAXED);
    return TLOG_OK;
}

int tlog_get_level(tlog_log *log)
{
    int rc = tlog_take_log_(&log);
    return rc == TLOG_OK ? atomic_load(&log->level) : rc;
}

int tlog_get_stats(tlog_log *log, tlog_stats *out)
{
    if (!out || out->size < sizeof(size_t))
        return TLOG_EINVAL;
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    tlog_stats s = {.size = sizeof s};
#define TLOG_READ(f) s.f = atomic_load_explicit(&log->counters.f, memory_order_relaxed)
    TLOG_READ(frames_completed);
    TLOG_READ(frames_dropped);
    TLOG_READ(scopes_dropped);
    TLOG_READ(depth_overflows);
    TLOG_READ(mismatched_ends);
    TLOG_READ(unmatched_ends);
    TLOG_READ(scopes_repaired);
    TLOG_READ(open_at_thread_exit);
    TLOG_READ(late_work);
    TLOG_READ(alloc_failures);
    TLOG_READ(threads);
    TLOG_READ(clock_reversals);
    s.record_bytes = atomic_load_explicit(&log->pool.bytes, memory_order_relaxed);
    tlog_stream_stats_(log, &s.frames_streamed, &s.frames_not_streamed, &s.stream_waits);
    s.subscribers = tlog_subs_count_(log);
    s.resolve_bytes = tlog_resolve_kept_bytes_(log);
#undef TLOG_READ
    return tlog_copy_sized_(out, &s, sizeof s);
}

/* Formats a report and delivers it, or keeps it while the log is made;
 * `kind` as deliver_report's. */
static void report_v(tlog_log *log, const tlog_thread *t, int code, const tlog_site *site,
                     const char *kind, const char *fmt, va_list ap)
{
    char msg[256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (!defer_report(log, code, msg))
        deliver_report(log, t, code, site, kind, msg);
}

void tlog_report_(tlog_log *log, const tlog_thread *t, int code,
                  const tlog_site *site, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_v(log, t, code, site, fmt, fmt, ap);
    va_end(ap);
}

void tlog_report_setting_(tlog_log *log, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_v(log, NULL, code, NULL, NULL, fmt, ap);
    va_end(ap);
}
