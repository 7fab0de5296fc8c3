/*
 * Writes the stream of the report's scale check: FRAMES frames (10,000 by
 * default) of 1,000 scopes each, on a clock the program advances itself, so
 * that it takes seconds whatever the machine. Each frame: a root, 111
 * systems, and under each system four steps run twice (distinct rows per
 * frame: 1 + 111 * 5 = 556). Every 500th frame one system runs 30 ms long,
 * a hitch.
 *
 *   big_stream OUT.tlog [FRAMES]
 */
#include <stdio.h>
#include <stdlib.h>

#include <timerlog/timerlog.h>

#define SYSTEMS 111
#define STEPS 4
#define REPEATS 2

static uint64_t now_ns;

static tlog_ticks manual_clock(void *user)
{
    (void)user;
    return now_ns;
}

/* A deterministic spread of durations: xorshift. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: big_stream OUT.tlog [FRAMES]\n");
        return 2;
    }
    long frames = argc > 2 ? strtol(argv[2], NULL, 10) : 10000;
    tlog_config cfg = {.size = sizeof cfg, .clock = manual_clock, .stream_path = argv[1]};
    tlog_log *log;
    if (tlog_create(&cfg, &log) != TLOG_OK) {
        fprintf(stderr, "big_stream: cannot create the log\n");
        return 1;
    }
    const tlog_site *root = tlog_site_intern("Frame", __FILE__, __func__, __LINE__, 1);
    const tlog_site *systems[SYSTEMS], *steps[SYSTEMS][STEPS];
    char name[64];
    for (int s = 0; s < SYSTEMS; s++) {
        snprintf(name, sizeof name, "System %d", s);
        systems[s] = tlog_site_intern(name, __FILE__, __func__, __LINE__, 1);
        for (int k = 0; k < STEPS; k++) {
            snprintf(name, sizeof name, "Step %d.%d", s, k);
            steps[s][k] = tlog_site_intern(name, __FILE__, __func__, __LINE__, 1);
        }
    }
    uint64_t seed = 88172645463325252ull;
    for (long f = 0; f < frames; f++) {
        tlog_log_begin(log, root);
        for (int s = 0; s < SYSTEMS; s++) {
            tlog_log_begin(log, systems[s]);
            for (int r = 0; r < REPEATS; r++)
                for (int k = 0; k < STEPS; k++) {
                    tlog_log_begin(log, steps[s][k]);
                    now_ns += 5000 + next_random(&seed) % 20000;
                    if (f % 500 == 499 && s == 7 && r == 0 && k == 0)
                        now_ns += 30000000;
                    tlog_log_end(log, steps[s][k]);
                    now_ns += 200;
                }
            tlog_log_end(log, systems[s]);
            now_ns += 300;
        }
        tlog_log_end(log, root);
        now_ns += 1000;
        if (f % 64 == 63 && tlog_stream_flush(log) != TLOG_OK) {
            fprintf(stderr, "big_stream: cannot write %s\n", argv[1]);
            tlog_destroy(log);
            return 1;
        }
    }
    int rc = tlog_stream_flush(log);
    tlog_destroy(log);
    return rc == TLOG_OK ? 0 : 1;
}
