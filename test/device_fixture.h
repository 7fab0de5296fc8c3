/* A log and a device on one simulated device, sharing its manual clock, so
 * that tests decide when every host scope and every kernel happens. */
#ifndef TIMERLOG_TEST_DEVICE_FIXTURE_H
#define TIMERLOG_TEST_DEVICE_FIXTURE_H

#include "common.h"

#include <timerlog/sim.h>

typedef struct sim_fixture {
    tlog_sim *sim;
    tlog_log *log;
    tlog_device *dev;
    tlog_sim_queue *q1, *q2;
    collected_errors errors;
} sim_fixture;

typedef struct sim_options {
    uint64_t marker_ns;
    unsigned device_flags;
    uint32_t max_scopes, pool_batch, max_frames;
    uint64_t sync_timeout_ns;
    const char *stream_path;
    size_t stream_buffer;
} sim_options;

static inline sim_fixture *sim_fixture_make(const sim_options *o)
{
    sim_fixture *fx = calloc(1, sizeof *fx);
    tlog_sim_config sc = {.size = sizeof sc, .marker_ns = o ? o->marker_ns : 0};
    assert_int_equal(tlog_sim_create(&sc, &fx->sim), TLOG_OK);
    tlog_config c = test_config(&fx->errors);
    c.clock = tlog_sim_clock;
    c.clock_user = fx->sim;
    c.max_frames = o ? o->max_frames : 0;
    c.sync_timeout_ns = o && o->sync_timeout_ns ? o->sync_timeout_ns : 2000000000ull;
    c.stream_path = o ? o->stream_path : NULL;
    c.stream_buffer = o ? o->stream_buffer : 0;
    fx->log = make_log(&c);
    tlog_device_config dc = {.size = sizeof dc};
    if (o) {
        dc.flags = o->device_flags;
        dc.max_scopes = o->max_scopes;
        dc.pool_batch = o->pool_batch;
    }
    assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, &dc, &fx->dev), TLOG_OK);
    fx->q1 = tlog_sim_queue_create(fx->sim);
    fx->q2 = tlog_sim_queue_create(fx->sim);
    return fx;
}

static inline int sim_setup(void **state)
{
    *state = sim_fixture_make(NULL);
    return 0;
}

static inline void sim_fixture_free(sim_fixture *fx)
{
    tlog_destroy(fx->log);  /* destroys the device too */
    tlog_sim_destroy(fx->sim);
    free(fx);
}

static inline int sim_teardown(void **state)
{
    sim_fixture_free(*state);
    return 0;
}

static inline double sim_ms(const sim_fixture *fx)
{
    return (double)tlog_sim_now(fx->sim) / 1e6;
}

/* Moves the device clock to `ms` (absolute) and lets the worker catch up. */
static inline void sim_at(sim_fixture *fx, double ms)
{
    uint64_t target = (uint64_t)(ms * 1e6 + 0.5), now = tlog_sim_now(fx->sim);
    if (target > now)
        tlog_sim_advance(fx->sim, target - now);
    tlog_sim_settle(fx->sim);
}

static inline void host_begin(sim_fixture *fx, const char *name)
{
    tlog_log_begin(fx->log, site_named(name));
}

static inline void host_end(sim_fixture *fx, const char *name)
{
    tlog_log_end(fx->log, site_named(name));
}

/* A device scope around one kernel of `ms` on queue q. */
static inline void kernel(sim_fixture *fx, tlog_sim_queue *q, const char *name, double ms)
{
    tlog_device_scope s = tlog_device_begin(fx->dev, q, site_named(name));
    assert_int_equal(tlog_sim_launch(fx->sim, q, (uint64_t)(ms * 1e6 + 0.5)), TLOG_OK);
    tlog_device_end(&s);
}

/* A sync scope in which the host waits until `until_ms`. */
static inline void sync_until(sim_fixture *fx, const char *name, double until_ms)
{
    host_begin(fx, name);
    sim_at(fx, until_ms);
    tlog_sync_end(fx->dev, site_named(name));
}

static inline tlog_sim_stats sim_stats(sim_fixture *fx)
{
    tlog_sim_stats s = {.size = sizeof s};
    assert_int_equal(tlog_sim_get_stats(fx->sim, &s), TLOG_OK);
    return s;
}

static inline tlog_device_info device_info(sim_fixture *fx)
{
    tlog_device_info i = {.size = sizeof i};
    assert_int_equal(tlog_device_get_info(fx->dev, &i), TLOG_OK);
    return i;
}

/* tlog_dump of the log, as a malloc'd string, and its return code. */
static inline char *dump_log(sim_fixture *fx, int *rc)
{
    FILE *fp = tmpfile();
    assert_non_null(fp);
    *rc = tlog_dump(fx->log, fp);
    return read_back(fp);
}

static inline const tlog_node *path(const tlog_frame *f, const char *a, const char *b,
                                    const char *c)
{
    const tlog_node *n = tlog_frame_root(f);
    const char *names[] = {a, b, c};
    for (int i = 0; i < 3 && n && names[i]; i++)
        n = child_named(n, names[i]);
    return n;
}

#endif
