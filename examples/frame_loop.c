/*
 * A few frames of a small simulation: nested scopes on the main thread, a
 * pool of worker threads doing work for a scope, and the tree printed after
 * every frame.
 *
 *   frame_loop [FRAMES [RENDER_US]]
 *
 * runs FRAMES frames (3) whose "Render" scope takes RENDER_US microseconds
 * (500): two runs that differ in it show what `timerlog diff` finds.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <timerlog/timerlog.h>

#define WORKERS 3

static void spin_us(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

struct job {
    tlog_token token;
    int index;
};

static void *worker(void *arg)
{
    struct job *job = arg;
    char name[32];
    snprintf(name, sizeof name, "Worker Thread %d", job->index + 1);
    tlog_thread_name(name);

    TIMERLOG_ADOPT(job->token);
    TIMERLOG_SCOPE("Tile");
    spin_us(300L * (job->index + 1));
    return NULL;
}

static void parallel_section(void)
{
    TIMERLOG_SCOPE("CPU Parallel Operation");
    pthread_t threads[WORKERS];
    struct job jobs[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        jobs[i] = (struct job){tlog_handoff(NULL), i};
        pthread_create(&threads[i], NULL, worker, &jobs[i]);
    }
    for (int i = 0; i < WORKERS; i++)
        pthread_join(threads[i], NULL);
}

/* Called twice per frame: both calls merge into one row marked [x2]. */
static void filter(void)
{
    TIMERLOG_SCOPE("Filter");
    {
        TIMERLOG_SCOPE("Serial Preparation");
        spin_us(200);
    }
    parallel_section();
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 3;
    long render_us = argc > 2 ? atol(argv[2]) : 500;
    tlog_thread_name("Main");
    for (int frame = 0; frame < frames; frame++) {
        {
            TIMERLOG_SCOPE("Frame");
            {
                TIMERLOG_SCOPE("Simulation/Analysis");
                for (int i = 0; i < 2; i++)
                    filter();
            }
            {
                TIMERLOG_SCOPE("Render");
                spin_us(render_us);
            }
        }
        printf("--- frame %d\n", frame + 1);
        if (tlog_dump(NULL, stdout) != TLOG_OK)
            return 1;
    }
    return 0;
}
