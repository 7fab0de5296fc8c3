/*
 * Device rows without a GPU: the simulated device runs "kernels" of set
 * durations in real time on two queues. Each frame waits for the compute
 * queue inside a sync scope bound to it, so the filters' intervals show
 * under it; the graphics work is still running when the frame ends, and
 * shows under the frame's `Device past frame end` row. Every frame is
 * printed as it ends: each device row appears once, in the frame that
 * launched it.
 */
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

static void host_work(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void simulate(tlog_device *gpu, tlog_sim *sim, tlog_sim_queue *compute)
{
    TIMERLOG_SCOPE("Simulation");
    {
        TIMERLOG_SCOPE("Filter 1");
        host_work(1000);
        TIMERLOG_DEVICE_SCOPE(gpu, compute, "Filter 1: GPU Parallel Operation 1");
        tlog_sim_launch(sim, compute, 3000000);
    }
    {
        TIMERLOG_DEVICE_SCOPE(gpu, compute, "Filter 1: GPU Parallel Operation 2");
        tlog_sim_launch(sim, compute, 1500000);
    }
    {
        TIMERLOG_SCOPE("Filter 2");
        host_work(500);
        TIMERLOG_SYNC_QUEUE_SCOPE(gpu, compute, "GPU Sync \"wait for filter 1\"");
        tlog_sim_queue_sync(sim, compute);
    }
}

static void render(tlog_device *gpu, tlog_sim *sim, tlog_sim_queue *graphics)
{
    TIMERLOG_SCOPE("Rendering");
    {
        TIMERLOG_DEVICE_SCOPE(gpu, graphics, "Upload to device");
        tlog_sim_launch(sim, graphics, 1000000);
    }
    {
        TIMERLOG_DEVICE_SCOPE(gpu, graphics, "Draw");
        tlog_sim_launch(sim, graphics, 4000000);
    }
    host_work(800);
}

int main(void)
{
    tlog_sim_config cfg = {.size = sizeof cfg, .clock = monotonic_ns, .marker_ns = 1250};
    tlog_sim *sim;
    tlog_device *gpu;
    if (tlog_sim_create(&cfg, &sim) != TLOG_OK)
        return 1;
    tlog_device_config dcfg = {.size = sizeof dcfg, .flags = TLOG_DEVICE_LAUNCH_ROWS};
    int rc = tlog_sim_device_create(sim, NULL, &dcfg, &gpu);
    if (rc != TLOG_OK) {
        fprintf(stderr, "sim device: %s\n", tlog_strerror(rc));
        return 1;
    }
    tlog_sim_queue *compute = tlog_sim_queue_create(sim);
    tlog_sim_queue *graphics = tlog_sim_queue_create(sim);
    for (int frame = 0; frame < 3 && rc == TLOG_OK; frame++) {
        {
            TIMERLOG_SCOPE("Frame");
            simulate(gpu, sim, compute);
            render(gpu, sim, graphics);
        }
        printf("%s# frame %d\n", frame ? "\n" : "", frame + 1);
        rc = tlog_dump(NULL, stdout);   /* waits for the draw still running */
    }
    tlog_device_destroy(gpu);
    tlog_sim_destroy(sim);
    return rc == TLOG_OK ? 0 : 1;
}
