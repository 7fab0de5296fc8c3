/*
 * A log's own statistics across frames: a summary (summary.c) that every
 * frame of the log joins once, when it is resolved, and the report that
 * TIMERLOG_REPORT asks for when the process exits (the default log) or the
 * log is destroyed. Nothing here runs unless statistics are on: a log
 * without them pays one test of a pointer per frame.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "frame.h"
#include "held.h"
#include "log.h"
#include "stats.h"
#include "summary.h"
#include "upcalls.h"

enum report_format { REPORT_TEXT, REPORT_CSV, REPORT_JSON };

struct tlog_report {
    int format;
    bool to_file;
    atomic_bool written;
    /* The file, held from the log's start (os/held.h) so that no other
     * log's report or stream writes it; -1 when not open, with why in
     * open_errno (the report then goes to stderr). */
    int fd;
    int open_errno;
    char wanted[4096];       /* the path TIMERLOG_REPORT names, expanded */
    char path[4096];         /* the path held: wanted, or wanted-N */
};

/* A decimal number (digits, with an optional fraction), whatever the
 * locale; false for anything else. */
static bool parse_decimal(const char *s, const char *end, double *out)
{
    double v = 0, scale = 1;
    bool digits = false, point = false;
    for (; s < end; s++) {
        if (*s == '.' && !point) {
            point = true;
        } else if (*s >= '0' && *s <= '9') {
            digits = true;
            if (point)
                v += (*s - '0') * (scale /= 10);
            else
                v = v * 10 + (*s - '0');
        } else {
            return false;
        }
    }
    *out = v;
    return digits && v < 1e12;
}

static bool option_is(const char *s, const char *end, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(end - s) == n && strncmp(s, word, n) == 0;
}

/* One option of TIMERLOG_REPORT, [s, end): format=, hitch=. */
static bool parse_option(const char *s, const char *end, struct tlog_report *r,
                         tlog_summary_config *cfg)
{
    double v;
    if (option_is(s, end, "format=text"))
        r->format = REPORT_TEXT;
    else if (option_is(s, end, "format=csv"))
        r->format = REPORT_CSV;
    else if (option_is(s, end, "format=json"))
        r->format = REPORT_JSON;
    else if (end - s > 7 && strncmp(s, "hitch=p", 7) == 0 && parse_decimal(s + 7, end, &v) &&
             v > 0 && v < 100)
        cfg->hitch_quantile = v / 100;
    else if (end - s > 6 && strncmp(s, "hitch=", 6) == 0 && parse_decimal(s + 6, end, &v) &&
             v > 0)
        cfg->hitch_ns = (uint64_t)(v * 1e6 + 0.5);
    else
        return false;
    return true;
}

/* stats[:format=text|csv|json][:hitch=MS|hitch=pNN]...[:file=PATH]: the
 * file takes the rest of the text, colons included. */
static bool parse_report(const char *s, struct tlog_report *r, tlog_summary_config *cfg)
{
    if (strncmp(s, "stats", 5) != 0 || (s[5] && s[5] != ':'))
        return false;
    for (s += 5; *s == ':';) {
        s++;
        if (strncmp(s, "file=", 5) == 0) {
            r->to_file = true;
            return s[5] && tlog_expand_path_(s + 5, r->wanted, sizeof r->wanted);
        }
        const char *end = strchr(s, ':');
        if (!end)
            end = s + strlen(s);
        if (!parse_option(s, end, r, cfg))
            return false;
        s = end;
    }
    return *s == '\0';
}

/* Opens and holds the report's file, if it has one; what went wrong is
 * said once the log can report (tlog_stats_report_env_). */
static void hold_report_file(struct tlog_report *r)
{
    r->fd = -1;
    if (!r->to_file)
        return;
    r->fd = tlog_open_held_(r->wanted, r->path, sizeof r->path);
    if (r->fd < 0) {
        r->open_errno = errno;
        r->to_file = false;
    }
}

int tlog_stats_open_(tlog_log *log)
{
    const char *env = (log->cfg.flags & TLOG_CONFIG_IGNORE_ENV) ? NULL
                                                                 : getenv("TIMERLOG_REPORT");
    tlog_summary_config cfg = log->cfg.stats;
    if (env && *env) {
        struct tlog_report *r = tlog_calloc_(1, sizeof *r);
        if (!r)
            return TLOG_ENOMEM;
        tlog_summary_config parsed = cfg;
        if (parse_report(env, r, &parsed)) {
            log->stats.report = r;
            cfg = parsed;
        } else {
            free(r);
            log->stats.bad_env = true;
        }
    }
    if (!log->stats.report && !(log->cfg.flags & TLOG_CONFIG_STATS))
        return TLOG_OK;
    int rc = tlog_summary_create(&cfg, &log->stats.summary);
    if (rc != TLOG_OK) {
        free(log->stats.report);
        log->stats.report = NULL;
        return rc;
    }
    tlog_summary_trust_site_titles_(log->stats.summary);
    pthread_mutex_init(&log->stats.lock, NULL);
    if (log->stats.report)
        hold_report_file(log->stats.report);
    return TLOG_OK;
}

void tlog_stats_report_env_(tlog_log *log)
{
    const struct tlog_report *r = log->stats.report;
    if (r && r->open_errno)
        tlog_report_(log, NULL, TLOG_EIO, NULL,
                     "cannot write the statistics report to %.200s: %s; it goes to stderr",
                     r->wanted, r->open_errno == ENXIO   ? "a FIFO with no reader"
                                : r->open_errno == EBUSY ? "it and the paths numbered after "
                                                           "it are other logs'"
                                                         : strerror(r->open_errno));
    else if (r && r->fd >= 0 && strcmp(r->path, r->wanted) != 0)
        tlog_report_(log, NULL, TLOG_EBUSY, NULL,
                     "the statistics report %.200s is another log's or process's; this "
                     "log's goes to %.200s", r->wanted, r->path);
    if (log->stats.bad_env)
        tlog_report_setting_(log, TLOG_EINVAL,
                             "TIMERLOG_REPORT=%.64s is not stats[:format=text|csv|json]"
                     "[:hitch=MS|:hitch=pNN][:file=PATH]; ignored",
                     getenv("TIMERLOG_REPORT"));
}

void tlog_stats_feed_(tlog_frame *f)
{
    tlog_log *log = f->log;
    if (!log || !tlog_stats_on_(log))
        return;
    tlog_lock_(&log->stats.lock, TLOG_LOCK_STATS);
    int rc = tlog_summary_add(log->stats.summary, f);
    tlog_unlock_(&log->stats.lock);
    if (rc == TLOG_OK)
        return;
    atomic_fetch_add_explicit(&log->stats.lost, 1, memory_order_relaxed);
    tlog_report_(log, NULL, rc, NULL, "frame %llu left out of the statistics: %s",
                 (unsigned long long)f->serial, tlog_strerror(rc));
}

/* Whether frame f of the queue is to be resolved now: it is not yet, and
 * its device work is done (or will be waited for). */
static bool to_settle(tlog_frame *f, bool wait)
{
    return !atomic_load_explicit(&f->resolved, memory_order_acquire) &&
           (wait || tlog_frame_ready_(f));
}

/* Resolves the frames still waiting in the queue that are ready (with
 * `wait`, all of them, waiting for their device work until one sync
 * timeout from now: frames behind a device that hangs cost one timeout,
 * not one each), so that the statistics count them. A frame that cannot be
 * resolved for lack of memory stays for a later read, and is said. */
static void settle_queue(tlog_log *log, bool wait)
{
    tlog_lock_(&log->lock, TLOG_LOCK_LOG);
    size_t n = 0;
    for (tlog_frame *f = log->queue.oldest; f; f = f->newer)
        n += to_settle(f, wait);
    tlog_frame **held = n ? tlog_malloc_(n * sizeof *held) : NULL;
    size_t k = 0;
    for (tlog_frame *f = log->queue.oldest; held && f && k < n; f = f->newer)
        if (to_settle(f, wait)) {
            atomic_fetch_add(&f->refs, 1);
            held[k++] = f;
        }
    tlog_unlock_(&log->lock);
    if (n && !held)
        tlog_report_(log, NULL, TLOG_ENOMEM, NULL, "out of memory: %zu frames waiting to be "
                     "resolved are not counted in the statistics yet", n);
    int64_t until = wait ? tlog_deadline_after_(log->cfg.sync_timeout_ns) : TLOG_NO_WAIT;
    for (size_t i = 0; i < k; i++) {
        int rc = tlog_frame_resolve_once_(held[i], until);
        if (rc != TLOG_OK)
            tlog_report_(log, NULL, rc, NULL, "cannot resolve frame %llu for the statistics: "
                         "%s; a later read will try again",
                         (unsigned long long)held[i]->serial, tlog_strerror(rc));
        tlog_frame_release(held[i]);
    }
    free(held);
}

void tlog_stats_count_evicted_(tlog_frame *f)
{
    int rc = tlog_frame_resolve_once_(f, TLOG_NO_WAIT);
    if (rc == TLOG_OK)
        return;
    atomic_fetch_add_explicit(&f->log->stats.lost, 1, memory_order_relaxed);
    tlog_report_(f->log, NULL, rc, NULL, "frame %llu, pushed out of the queue, is left out of "
                 "the statistics: %s", (unsigned long long)f->serial, tlog_strerror(rc));
}

/* A log asked for statistics it does not keep: said, as a bare
 * TLOG_EINVAL would leave the caller guessing. */
static int no_stats(tlog_log *log, const char *function)
{
    tlog_report_(log, NULL, TLOG_EINVAL, NULL,
                 "%s: this log keeps no statistics (TLOG_CONFIG_STATS in its config, or "
                 "TIMERLOG_REPORT=stats in the environment, switches them on)", function);
    return TLOG_EINVAL;
}

int tlog_log_summary(tlog_log *log, tlog_summary **out)
{
    if (!out)
        return TLOG_EINVAL;
    *out = NULL;
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    if (!tlog_stats_on_(log))
        return no_stats(log, "tlog_log_summary");
    settle_queue(log, false);
    tlog_summary *copy;
    rc = tlog_summary_create(&log->stats.summary->cfg, &copy);
    if (rc != TLOG_OK)
        return rc;
    tlog_lock_(&log->stats.lock, TLOG_LOCK_STATS);
    rc = tlog_summary_merge(copy, log->stats.summary);
    tlog_unlock_(&log->stats.lock);
    if (rc != TLOG_OK) {
        tlog_summary_destroy(copy);
        return rc;
    }
    *out = copy;
    return TLOG_OK;
}

int tlog_log_summary_reset(tlog_log *log)
{
    int rc = tlog_take_log_(&log);
    if (rc != TLOG_OK)
        return rc;
    if (!tlog_stats_on_(log))
        return no_stats(log, "tlog_log_summary_reset");
    tlog_lock_(&log->stats.lock, TLOG_LOCK_STATS);
    tlog_summary_reset(log->stats.summary);
    tlog_unlock_(&log->stats.lock);
    return TLOG_OK;
}

static int write_to(FILE *out, const tlog_summary *s, int format)
{
    if (format == REPORT_CSV)
        return tlog_summary_export_csv(s, out);
    if (format == REPORT_JSON)
        return tlog_summary_export_json(s, out);
    fputs("# timerlog statistics report\n", out);
    return tlog_summary_dump(s, out, NULL);
}

void tlog_stats_write_report_(tlog_log *log)
{
    struct tlog_report *r = log->stats.report;
    if (!r || atomic_exchange(&r->written, true))
        return;
    settle_queue(log, true);
    tlog_summary *snap;
    int rc = tlog_log_summary(log, &snap);
    if (rc != TLOG_OK) {
        tlog_report_(log, NULL, rc, NULL, "no statistics report: %s", tlog_strerror(rc));
        return;
    }
    errno = 0;
    FILE *out = stderr;
    if (r->to_file) {
        out = tlog_held_empty_(r->fd) ? fdopen(r->fd, "w") : NULL;
        if (!out)
            close(r->fd);
        r->fd = -1;   /* closed with out */
    }
    int why = errno;
    rc = out ? write_to(out, snap, r->format) : TLOG_EIO;
    if (rc == TLOG_EIO && !why)
        why = errno;
    if (out && (r->to_file ? fclose(out) : fflush(out)) != 0) {
        rc = TLOG_EIO;
        why = errno;
    }
    tlog_summary_destroy(snap);
    if (rc != TLOG_OK)
        tlog_report_(log, NULL, rc, NULL, "cannot write the statistics report to %s: %s",
                     r->to_file ? r->path : "stderr", why ? strerror(why) : tlog_strerror(rc));
}

void tlog_stats_close_(tlog_log *log)
{
    if (!tlog_stats_on_(log))
        return;
    tlog_summary_destroy(log->stats.summary);
    log->stats.summary = NULL;
    if (log->stats.report && log->stats.report->fd >= 0)
        close(log->stats.report->fd);
    free(log->stats.report);
    log->stats.report = NULL;
    pthread_mutex_destroy(&log->stats.lock);
}
