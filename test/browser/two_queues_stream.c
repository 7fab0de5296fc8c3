/*
 * Writes a stream whose device row runs on two queues: four frames in which
 * "Copy" runs on one queue of the simulated device and again, from the same
 * site, on another, with "Kernel" on the default queue between them. The
 * frame's tree has one "Copy" row; its timeline needs a lane per queue.
 *
 *   two_queues_stream OUT.tlog
 */
#include "sim_stream.h"

int main(int argc, char **argv)
{
    tlog_sim *sim = NULL;
    tlog_log *log = NULL;
    tlog_device *dev = NULL;
    if (!open_sim_stream(argc, argv, "two_queues_stream OUT.tlog", &sim, &log, &dev))
        return argc != 2 ? 2 : 1;
    tlog_sim_queue *first = tlog_sim_queue_create(sim), *second = tlog_sim_queue_create(sim);
    if (!first || !second)
        return 1;
    for (int k = 0; k < 4; k++) {
        tlog_log_begin(log, site("Frame"));
        launch(sim, dev, first, site("Copy"), 300000);
        launch(sim, dev, NULL, site("Kernel"), 1000000);
        launch(sim, dev, second, site("Copy"), 400000);
        tlog_sim_advance(sim, 2000000);
        tlog_sim_settle(sim);
        tlog_log_end(log, site("Frame"));
    }
    tlog_destroy(log);
    tlog_sim_destroy(sim);
    return 0;
}
