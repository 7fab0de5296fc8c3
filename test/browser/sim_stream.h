/* What the browser test's stream writers share: a log on the simulated
 * device's clock that streams to the file named on the command line. */
#ifndef TIMERLOG_TEST_SIM_STREAM_H
#define TIMERLOG_TEST_SIM_STREAM_H

#include <stdbool.h>
#include <stdio.h>

#include <timerlog/sim.h>
#include <timerlog/timerlog.h>

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, __FILE__, "main", 1, TLOG_LEVEL_COARSE);
}

/* A device scope around a kernel of `ns` on queue q (NULL: the default). */
static inline void launch(tlog_sim *sim, tlog_device *dev, tlog_sim_queue *q,
                          const tlog_site *s, uint64_t ns)
{
    tlog_device_scope scope = tlog_device_begin(dev, q, s);
    tlog_sim_launch(sim, q, ns);
    tlog_device_end(&scope);
}

/* The simulator, a log streaming to argv[1] and a device on it; false,
 * having said why, for a wrong command line or a refusal. */
static bool open_sim_stream(int argc, char **argv, const char *usage, tlog_sim **sim,
                            tlog_log **log, tlog_device **dev)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s\n", usage);
        return false;
    }
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .stream_path = argv[1]};
    if (tlog_sim_create(NULL, sim) != TLOG_OK) {
        fprintf(stderr, "no simulator\n");
        return false;
    }
    c.clock = tlog_sim_clock;
    c.clock_user = *sim;
    if (tlog_create(&c, log) != TLOG_OK ||
        tlog_sim_device_create(*sim, *log, NULL, dev) != TLOG_OK) {
        fprintf(stderr, "%s: no log or device\n", argv[1]);
        return false;
    }
    return true;
}

#endif
