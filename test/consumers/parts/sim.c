/* A program that tests its device instrumentation without a GPU, on the
 * simulated device (libtimerlog-sim): one frame in which a "kernel" runs in
 * a device scope and the host waits for it, printed with its device row. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include <timerlog/sim.h>
#include <timerlog/timerlog.h>

static uint64_t monotonic_ns(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
    tlog_sim_config cfg = {.size = sizeof cfg, .clock = monotonic_ns, .marker_ns = 1250};
    tlog_sim *sim;
    tlog_device *gpu;
    if (tlog_sim_create(&cfg, &sim) != TLOG_OK)
        return 1;
    int rc = tlog_sim_device_create(sim, NULL, NULL, &gpu);
    if (rc != TLOG_OK) {
        fprintf(stderr, "sim device: %s\n", tlog_strerror(rc));
        return 1;
    }
    {
        TIMERLOG_SCOPE("Consumer frame");
        {
            TIMERLOG_DEVICE_SCOPE(gpu, NULL, "Consumer kernel");
            tlog_sim_launch(sim, NULL, 1000000);
        }
        TIMERLOG_SYNC_QUEUE_SCOPE(gpu, NULL, "Wait");
        tlog_sim_queue_sync(sim, NULL);
    }
    rc = tlog_dump(NULL, NULL);
    tlog_device_destroy(gpu);
    tlog_sim_destroy(sim);
    return rc == TLOG_OK ? 0 : 1;
}
