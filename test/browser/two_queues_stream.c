/*
 * Writes a stream whose device row runs on two queues: four frames in which
 * "Copy" runs on one queue of the simulated device and again, from the same
 * site, on another, with "Kernel" on the default queue between them. The
 * frame's tree has one "Copy" row; its timeline needs a lane per queue.
 *
 *   two_queues_stream OUT.tlog
 */
#include <stdio.h>

#include <timerlog/sim.h>
#include <timerlog/timerlog.h>

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, __FILE__, "main", 1, TLOG_LEVEL_COARSE);
}

static void on(tlog_sim *sim, tlog_device *dev, tlog_sim_queue *q, const tlog_site *s,
               uint64_t ns)
{
    tlog_device_scope scope = tlog_device_begin(dev, q, s);
    tlog_sim_launch(sim, q, ns);
    tlog_device_end(&scope);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: two_queues_stream OUT.tlog\n");
        return 2;
    }
    tlog_sim *sim = NULL;
    tlog_log *log = NULL;
    tlog_device *dev = NULL;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .stream_path = argv[1]};
    if (tlog_sim_create(NULL, &sim) != TLOG_OK)
        return 1;
    c.clock = tlog_sim_clock;
    c.clock_user = sim;
    if (tlog_create(&c, &log) != TLOG_OK || tlog_sim_device_create(sim, log, NULL, &dev) != TLOG_OK)
        return 1;
    tlog_sim_queue *first = tlog_sim_queue_create(sim), *second = tlog_sim_queue_create(sim);
    if (!first || !second)
        return 1;
    for (int k = 0; k < 4; k++) {
        tlog_log_begin(log, site("Frame"));
        on(sim, dev, first, site("Copy"), 300000);
        on(sim, dev, NULL, site("Kernel"), 1000000);
        on(sim, dev, second, site("Copy"), 400000);
        tlog_sim_advance(sim, 2000000);
        tlog_sim_settle(sim);
        tlog_log_end(log, site("Frame"));
    }
    tlog_destroy(log);
    tlog_sim_destroy(sim);
    return 0;
}
