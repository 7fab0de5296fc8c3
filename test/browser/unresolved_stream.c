/*
 * Writes a stream whose device row is unresolved in one frame only: six
 * frames of a kernel on the simulated device, done by the frame's end and
 * read there, but for the third frame's, whose query fails. A report shows the other frames' rows
 * from their totals, and must not mark them unresolved.
 *
 *   unresolved_stream OUT.tlog
 */
#include "sim_stream.h"

int main(int argc, char **argv)
{
    tlog_sim *sim = NULL;
    tlog_log *log = NULL;
    tlog_device *dev = NULL;
    if (!open_sim_stream(argc, argv, "unresolved_stream OUT.tlog", &sim, &log, &dev))
        return argc != 2 ? 2 : 1;
    for (int k = 0; k < 6; k++) {
        tlog_log_begin(log, site("Frame"));
        launch(sim, dev, NULL, site("Kernel"), 1000000);
        tlog_sim_advance(sim, 2000000);
        tlog_sim_settle(sim);
        if (k == 2)
            tlog_sim_inject(sim, TLOG_SIM_FAULT_QUERY_ERROR, 1);
        tlog_log_end(log, site("Frame"));   /* reads the kernel: done, or failed */
    }
    tlog_destroy(log);
    tlog_sim_destroy(sim);
    return 0;
}
