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

/* The gates holding queues (hold): a case holds at most two at once. */
static struct {
    void *queue;
    tlog_sim_gate *gate;
} holds[2];

static int hold(void *queue)
{
    for (int k = 0; k < 2; k++) {
        if (holds[k].queue)
            continue;
        int rc = tlog_sim_hold(sim, queue, &holds[k].gate);
        if (rc == TLOG_OK)
            holds[k].queue = queue;
        return rc;
    }
    return TLOG_EBUSY;
}

/* Destroying a gate opens it. */
static int release(void *queue)
{
    for (int k = 0; k < 2; k++) {
        if (holds[k].queue == queue) {
            tlog_sim_gate_destroy(sim, holds[k].gate);
            holds[k].queue = NULL;
            return TLOG_OK;
        }
    }
    return TLOG_EINVAL;
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
        .hold = hold,
        .release = release,
        .tolerance_ns = 20000,
    };
    int rc = suite_run(&b);
    tlog_sim_destroy(sim);
    return rc;
}
