/* The device behaviour suite on the simulated device, in real time. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include <timerlog/sim.h>

#include "device_suite.h"

static tlog_sim *sim;

static uint64_t monotonic_ns(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int open_device(tlog_log *log, tlog_device **out)
{
    return tlog_sim_device_create(sim, log, NULL, out);
}

static void *queue_create(void)
{
    return tlog_sim_queue_create(sim);
}

/* Queues belong to the simulator. */
static void queue_destroy(void *queue)
{
    (void)queue;
}

static int launch(void *queue, uint64_t ns)
{
    return tlog_sim_launch(sim, queue, ns);
}

static int finish(void *queue)
{
    return tlog_sim_queue_sync(sim, queue);
}

int main(void)
{
    tlog_sim_config c = {.size = sizeof c, .clock = monotonic_ns, .marker_ns = 1000};
    if (tlog_sim_create(&c, &sim) != TLOG_OK)
        return 1;
    const suite_backend b = {
        .name = "sim",
        .open = open_device,
        .queue_create = queue_create,
        .queue_destroy = queue_destroy,
        .launch = launch,
        .finish = finish,
        .tolerance_ns = 20000,
    };
    int rc = suite_run(&b);
    tlog_sim_destroy(sim);
    return rc;
}
