/*
 * Four ranks each record a frame with known timings (a simulated clock);
 * rank 0 reduces them and checks the spread of every row, the rows only
 * some ranks have, a rank without a frame, and the printed tree; then the
 * same for the statistics of ten frames per rank. Every rank checks what
 * it got; the job fails if any check failed anywhere.
 */
#include <stdlib.h>
#include <string.h>

#include <timerlog/mpi.h>

static uint64_t now_ns;
static int failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            failures++;                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                    \
    } while (0)

#define MS 1000000ull

static tlog_ticks sim_clock(void *user)
{
    (void)user;
    return now_ns;
}

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, "test_mpi.c", "record", 1, TLOG_LEVEL_COARSE);
}

static void scope(tlog_log *log, const char *name, uint64_t ms)
{
    tlog_log_begin(log, site(name));
    now_ns += ms * MS;
    tlog_log_end(log, site(name));
}

/* Rank r: Compute takes 5 ms * (r + 1), Exchange 1 ms; only rank 0 writes a
 * Checkpoint (3 ms). */
static tlog_frame *record(tlog_log *log, int rank)
{
    tlog_log_begin(log, site("Frame"));
    scope(log, "Compute", 5 * (uint64_t)(rank + 1));
    scope(log, "Exchange", 1);
    if (rank == 0)
        scope(log, "Checkpoint", 3);
    tlog_log_end(log, site("Frame"));
    return tlog_frame_latest(log);
}

static const tlog_node *child(const tlog_node *n, const char *name)
{
    for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c)) {
        tlog_node_info i = {.size = sizeof i};
        tlog_node_get_info(c, &i);
        if (strcmp(i.name, name) == 0)
            return c;
    }
    return NULL;
}

static tlog_node_info row(const tlog_frame *f, const char *name)
{
    tlog_node_info i = {.size = sizeof i};
    const tlog_node *n = child(tlog_frame_root(f), name);
    CHECK(n != NULL);
    if (n)
        tlog_node_get_info(n, &i);
    return i;
}

static int near(double a, double b)
{
    return a > b - 1e-6 * b - 1 && a < b + 1e-6 * b + 1;
}

static void check_reduction(const tlog_frame *f)
{
    tlog_frame_info fi = {.size = sizeof fi};
    tlog_frame_get_info(f, &fi);
    CHECK(fi.reduced_ranks == 4);
    CHECK(fi.partial_rows == 1);

    tlog_node_info compute = row(f, "Compute");
    CHECK(compute.ranks == 4);
    CHECK(compute.rank_min_ns == 5 * MS);
    CHECK(compute.rank_max_ns == 20 * MS);
    CHECK(near(compute.rank_mean_ns, 12.5 * MS));
    CHECK(near(compute.imbalance, 1.6));
    CHECK(compute.total_ns == 50 * MS);   /* sums over ranks */
    CHECK(compute.count == 4);

    tlog_node_info checkpoint = row(f, "Checkpoint");
    CHECK(checkpoint.ranks == 1);
    CHECK(checkpoint.rank_min_ns == 0);   /* absent on three ranks */
    CHECK(checkpoint.rank_max_ns == 3 * MS);
    CHECK(near(checkpoint.rank_mean_ns, 0.75 * MS));
    CHECK(near(checkpoint.imbalance, 4.0));
    CHECK(checkpoint.file && strcmp(checkpoint.file, "test_mpi.c") == 0);

    tlog_node_info exchange = row(f, "Exchange");
    CHECK(exchange.ranks == 4 && near(exchange.imbalance, 1.0));
}

static void check_dump(const tlog_frame *f)
{
    char text[4096] = {0};
    FILE *mem = fmemopen(text, sizeof text - 1, "w");
    CHECK(tlog_dump_frame(f, mem, NULL) == TLOG_OK);
    fclose(mem);
    /* Frames of 9, 11, 16 and 21 ms. */
    CHECK(strstr(text, "> 100.00% 0.014250s | min 0.009000s | max 0.021000s | "
                       "imbalance 1.47 | (C) Frame\n") != NULL);
    CHECK(strstr(text, "|-> 87.72% 0.012500s | min 0.005000s | max 0.020000s | "
                       "imbalance 1.60 | (C) Compute\n") != NULL);
    CHECK(strstr(text, "|-> 5.26% 0.000750s | min 0.000000s | max 0.003000s | "
                       "imbalance 4.00 | (C) Checkpoint [on 1/4 ranks]\n") != NULL);
    CHECK(strstr(text, "# reduced over 4 ranks: times are means per rank; rows missing "
                       "on some ranks: 1\n") != NULL);
    if (failures)
        fputs(text, stderr);
}

/* Statistics: rank r records ten frames whose Compute takes 5 ms * (r + 1)
 * plus 0, 1 or 2 ms in turn; rank 0 alone writes a Checkpoint. */
static void check_statistics(int rank)
{
    tlog_config c = {.size = sizeof c, .clock = sim_clock,
                     .flags = TLOG_CONFIG_IGNORE_ENV | TLOG_CONFIG_STATS};
    tlog_log *log;
    CHECK(tlog_create(&c, &log) == TLOG_OK);
    for (int k = 0; k < 10; k++) {
        tlog_log_begin(log, site("Frame"));
        scope(log, "Compute", 5 * (uint64_t)(rank + 1) + (uint64_t)(k % 3));
        scope(log, "Exchange", 1);
        if (rank == 0)
            scope(log, "Checkpoint", 3);
        tlog_log_end(log, site("Frame"));
    }
    tlog_summary *mine = NULL, *all = NULL;
    CHECK(tlog_log_summary(log, &mine) == TLOG_OK);
    CHECK(tlog_mpi_reduce_summary(mine, MPI_COMM_WORLD, 0, &all) == TLOG_OK);
    if (rank == 0) {
        tlog_summary_info si = {.size = sizeof si};
        CHECK(all && tlog_summary_get_info(all, &si) == TLOG_OK);
        CHECK(si.reduced_ranks == 4 && si.frames == 40);
        const tlog_stat_row *root = tlog_summary_root(all, 0), *r;
        tlog_stat_info compute = {.size = sizeof compute}, cp = {.size = sizeof cp};
        for (r = tlog_stat_row_first_child(root); r; r = tlog_stat_row_next_sibling(r)) {
            tlog_stat_info i = {.size = sizeof i};
            tlog_stat_row_get_info(r, &i);
            if (strcmp(i.name, "Compute") == 0)
                compute = i;
            if (strcmp(i.name, "Checkpoint") == 0)
                cp = i;
        }
        CHECK(compute.frames == 40 && compute.ranks == 4);
        /* Each rank's median is its base plus 1 ms; their mean 13.5 ms. */
        CHECK(compute.rank_median_mean_ns > 13.5 * MS * (1 - TLOG_STATS_RELATIVE_ERROR) &&
              compute.rank_median_mean_ns < 13.5 * MS * (1 + TLOG_STATS_RELATIVE_ERROR));
        CHECK(compute.rank_p99_max_ns == 22 * MS && compute.rank_p99_max_rank == 3);
        CHECK(compute.total_ns.min == 5 * MS && compute.total_ns.max == 22 * MS);
        CHECK(cp.ranks == 1 && cp.frames == 10 && cp.rank_p99_max_rank == 0);
    } else {
        CHECK(all == NULL);
    }
    tlog_summary_destroy(all);

    /* Rank 3 has none: left out, at its index; rank 1 receives. */
    all = NULL;
    CHECK(tlog_mpi_reduce_summary(rank == 3 ? NULL : mine, MPI_COMM_WORLD, 1, &all) ==
          TLOG_OK);
    if (rank == 1) {
        tlog_summary_info si = {.size = sizeof si};
        CHECK(all && tlog_summary_get_info(all, &si) == TLOG_OK);
        CHECK(si.reduced_ranks == 4 && si.frames == 30);
    }
    tlog_summary_destroy(all);
    tlog_summary_destroy(mine);

    /* The one-call form prints on root only. */
    char text[8192] = {0};
    FILE *mem = fmemopen(text, sizeof text - 1, "w");
    CHECK(tlog_mpi_dump_stats(log, MPI_COMM_WORLD, 0, mem) == TLOG_OK);
    fclose(mem);
    if (rank == 0) {
        CHECK(strstr(text, "# thread \"") != NULL);
        CHECK(strstr(text, "| slowest p99 0.022000s (rank 3) | (C) Compute\n") != NULL);
        CHECK(strstr(text, "(rank 0) | (C) Checkpoint [in 10/40 frames] [on 1/4 ranks]\n") !=
              NULL);
        CHECK(strstr(text, "# reduced over 4 ranks") != NULL);
        if (failures)
            fputs(text, stderr);
    } else {
        CHECK(text[0] == 0);
    }
    tlog_destroy(log);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4);

    tlog_config c = {.size = sizeof c, .clock = sim_clock,
                     .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log;
    CHECK(tlog_create(&c, &log) == TLOG_OK);
    tlog_frame *mine = record(log, rank);

    tlog_frame *reduced = NULL;
    CHECK(tlog_mpi_reduce(mine, MPI_COMM_WORLD, 0, &reduced) == TLOG_OK);
    if (rank == 0) {
        CHECK(reduced != NULL);
        if (reduced) {
            check_reduction(reduced);
            check_dump(reduced);
        }
    } else {
        CHECK(reduced == NULL);
    }
    tlog_frame_release(reduced);

    /* Rank 3 has no frame: left out. Rank 2 receives this time. */
    reduced = NULL;
    CHECK(tlog_mpi_reduce(rank == 3 ? NULL : mine, MPI_COMM_WORLD, 2, &reduced) == TLOG_OK);
    if (rank == 2) {
        tlog_frame_info fi = {.size = sizeof fi};
        CHECK(reduced && tlog_frame_get_info(reduced, &fi) == TLOG_OK);
        CHECK(fi.reduced_ranks == 3);
        CHECK(reduced && row(reduced, "Compute").rank_max_ns == 15 * MS);
    }
    tlog_frame_release(reduced);

    /* No rank has a frame. */
    reduced = NULL;
    int rc = tlog_mpi_reduce(NULL, MPI_COMM_WORLD, 0, &reduced);
    CHECK(rank == 0 ? rc == TLOG_ENOFRAME : rc == TLOG_OK);
    CHECK(reduced == NULL);

    /* An application's wildcard receive, posted before the call, takes the
     * application's message, not the library's. */
    MPI_Request req = MPI_REQUEST_NULL;
    int app_value = 0;
    if (rank == 0)
        MPI_Irecv(&app_value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    reduced = NULL;
    CHECK(tlog_mpi_reduce(mine, MPI_COMM_WORLD, 0, &reduced) == TLOG_OK);
    if (rank == 2) {
        int v = 42;
        MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        MPI_Status st;
        MPI_Wait(&req, &st);
        CHECK(app_value == 42 && st.MPI_SOURCE == 2 && st.MPI_TAG == 7);
        tlog_frame_info fi = {.size = sizeof fi};
        CHECK(reduced && tlog_frame_get_info(reduced, &fi) == TLOG_OK && fi.reduced_ranks == 4);
    }
    tlog_frame_release(reduced);

    /* A frame of many chunks: 3,000 rows with long titles on rank 1. */
    if (rank == 1) {
        tlog_log_begin(log, site("Frame"));
        for (int i = 0; i < 3000; i++) {
            char name[96];
            snprintf(name, sizeof name, "Row %04d with a title long enough to fill chunks", i);
            scope(log, name, 0);
        }
        tlog_log_end(log, site("Frame"));
    }
    tlog_frame *wide = tlog_frame_latest(log);
    reduced = NULL;
    CHECK(tlog_mpi_reduce(wide, MPI_COMM_WORLD, 0, &reduced) == TLOG_OK);
    if (rank == 0) {
        tlog_frame_info fi = {.size = sizeof fi};
        CHECK(reduced && tlog_frame_get_info(reduced, &fi) == TLOG_OK);
        CHECK(fi.reduced_ranks == 4 && fi.nodes >= 3001);
        CHECK(reduced && child(tlog_frame_root(reduced), "Row 2999 with a title long enough "
                                                        "to fill chunks") != NULL);
    }
    tlog_frame_release(reduced);
    tlog_frame_release(wide);

    /* The one-call form prints on root only. */
    char text[4096] = {0};
    FILE *mem = fmemopen(text, sizeof text - 1, "w");
    tlog_frame_release(record(log, rank));   /* the newest frame: the first kind */
    CHECK(tlog_mpi_dump(log, MPI_COMM_WORLD, 0, mem) == TLOG_OK);
    fclose(mem);
    CHECK(rank == 0 ? strstr(text, "(C) Checkpoint [on 1/4 ranks]") != NULL : text[0] == 0);

    tlog_frame_release(mine);
    tlog_destroy(log);
    check_statistics(rank);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d check(s) failed over %d ranks\n", total ? "FAIL" : "ok", total, size);
    MPI_Finalize();
    return total ? 1 : 0;
}
