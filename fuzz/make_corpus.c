/*
 * Writes the seed corpus in fuzz/corpus: small streams that cover every
 * block type (sites, threads, devices, frames with host, worker and device
 * rows, the end block). Run from the source root:
 *   build/fuzz/make_corpus fuzz/corpus
 */
#include <pthread.h>
#include <stdio.h>

#include <timerlog/sim.h>
#include <timerlog/timerlog.h>

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, "make_corpus.c", "seed", 1, TLOG_LEVEL_COARSE);
}

static tlog_token token;

static void *worker(void *log)
{
    tlog_thread_name("Worker 1");
    tlog_adopt_begin(&token);
    tlog_log_begin(log, site("Tile"));
    tlog_log_end(log, site("Tile"));
    tlog_adopt_end(&token);
    return NULL;
}

/* SEED_QUEUES: the kernel on a second queue too, under the same scope: a
 * row whose intervals ran on two queues (a QUEUES block). */
enum { SEED_DEVICE = 1, SEED_WORKER = 2, SEED_QUEUES = 4 };

static int seed(const char *dir, const char *name, int frames, int flags)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tlog_sim *sim;
    tlog_sim_create(NULL, &sim);
    tlog_config c = {.size = sizeof c, .clock = tlog_sim_clock, .clock_user = sim,
                     .flags = TLOG_CONFIG_IGNORE_ENV, .stream_path = path};
    tlog_log *log;
    if (tlog_create(&c, &log) != TLOG_OK)
        return 1;
    tlog_device *dev = NULL;
    tlog_device_config dc = {.size = sizeof dc, .flags = TLOG_DEVICE_LAUNCH_ROWS};
    if (flags & SEED_DEVICE)
        tlog_sim_device_create(sim, log, &dc, &dev);
    tlog_sim_queue *second = flags & SEED_QUEUES ? tlog_sim_queue_create(sim) : NULL;
    for (int k = 0; k < frames; k++) {
        tlog_log_begin(log, site("Frame"));
        if (flags & SEED_WORKER) {
            tlog_log_begin(log, site("Parallel"));
            token = tlog_handoff(log);
            pthread_t th;
            pthread_create(&th, NULL, worker, log);
            pthread_join(th, NULL);
            tlog_log_end(log, site("Parallel"));
        }
        if (dev) {
            tlog_device_scope s = tlog_device_begin(dev, NULL, site("Kernel"));
            tlog_sim_launch(sim, NULL, 1000 + 100 * (uint64_t)k);
            tlog_device_end(&s);
            if (flags & SEED_QUEUES) {
                s = tlog_device_begin(dev, second, site("Kernel"));
                tlog_sim_launch(sim, second, 500);
                tlog_device_end(&s);
                tlog_sim_queue_sync(sim, second);
            }
            tlog_log_begin(log, site("Sync"));
            tlog_sim_queue_sync(sim, NULL);
            tlog_sim_settle(sim);
            tlog_sync_end(dev, site("Sync"));
        }
        tlog_log_end(log, site("Frame"));
    }
    tlog_destroy(log);
    tlog_sim_destroy(sim);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "fuzz/corpus";
    /* device_pair.tlog: two device frames within 2 KiB, the fuzz runs'
     * -max_len, for merges and exports of device rows. */
    return seed(dir, "host.tlog", 2, SEED_WORKER) |
           seed(dir, "device.tlog", 3, SEED_DEVICE | SEED_WORKER) |
           seed(dir, "device_pair.tlog", 2, SEED_DEVICE) |
           seed(dir, "device_queues.tlog", 1, SEED_DEVICE | SEED_QUEUES) |
           seed(dir, "empty.tlog", 0, 0);
}
