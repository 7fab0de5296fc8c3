/*
 * libtimerlog-mpi: frame trees of all the ranks of an MPI job, reduced onto
 * one rank. Each row shows the mean over ranks as its time, with the
 * fastest and slowest rank and an imbalance figure (max / mean), so that
 * the phase where ranks wait for each other stands out:
 *
 *   > 100.00% 0.014250s | min 0.009000s | max 0.021000s | imbalance 1.47 | (C) Frame
 *   |-> 87.72% 0.012500s | min 0.005000s | max 0.020000s | imbalance 1.60 | (C) Compute
 *   |-> 7.02% 0.001000s | min 0.001000s | max 0.001000s | imbalance 1.00 | (C) Exchange
 *   |-> 5.26% 0.000750s | min 0.000000s | max 0.003000s | imbalance 4.00 | (C) Checkpoint [on 1/4 ranks]
 *   # reduced over 4 ranks: times are means per rank; rows missing on some ranks: 1
 *
 * Link libtimerlog-mpi (pkg-config timerlog-mpi) and an MPI library.
 */
#ifndef TIMERLOG_MPI_H
#define TIMERLOG_MPI_H

/* In C++, without the MPI library's C++ bindings (removed from MPI 3, and a
 * library of their own to link): this header uses the C interface. An
 * application that includes mpi.h itself first keeps what it chose. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stdio.h>

#include "timerlog/timerlog.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Collective over `comm`: every rank passes its frame (resolved, as
 * tlog_frame_latest and tlog_frame_pop give them; NULL if it has none: it
 * is then left out of the reduction), and rank `root` receives in *out the
 * frames reduced with tlog_frame_reduce, one input per rank that passed a
 * frame, in rank order. The frame is the caller's (tlog_frame_release) and
 * outlives the inputs. Other ranks get *out = NULL.
 *
 * `root` must be the same valid rank everywhere, and `comm` an
 * intracommunicator (an intercommunicator gives TLOG_EINVAL on every rank).
 * The first call on a communicator duplicates it (collectively) for the
 * library's own messages, so that no receive of the application can take
 * them; the duplicate goes when the communicator is freed. Only the rows of
 * each frame travel, not its instances.
 *
 * Each rank returns its own result: TLOG_OK; TLOG_EINVAL for out == NULL
 * (the rank still takes part, without a frame); TLOG_ENOMEM; TLOG_EIO when
 * MPI reported an error (only under MPI_ERRORS_RETURN; the default handler
 * ends the job); on root, TLOG_EFORMAT when a rank's frame arrived damaged
 * (it is left out, the others are reduced) and TLOG_ENOFRAME when no rank
 * passed a frame.
 */
TLOG_API int tlog_mpi_reduce(const tlog_frame *frame, MPI_Comm comm, int root,
                             tlog_frame **out) TLOG_NOEXCEPT;

/*
 * Collective: reduces each rank's newest frame of `log` (NULL: the default
 * log) and prints the result on `root` to `out` (NULL: stdout), as
 * tlog_dump_frame does. Returns as tlog_mpi_reduce, or TLOG_EIO when
 * printing failed.
 */
TLOG_API int tlog_mpi_dump(tlog_log *log, MPI_Comm comm, int root, FILE *out) TLOG_NOEXCEPT;

/*
 * Collective over `comm`, as tlog_mpi_reduce: every rank passes its
 * statistics (a summary, as tlog_log_summary gives them; NULL if it has
 * none: it is then left out, keeping its index), and rank `root` receives
 * in *out their reduction with tlog_summary_reduce, input i being rank i:
 * each row's figures over the frames of every rank, and beside them the
 * mean of the ranks' medians and the slowest rank's p99, with its rank
 * (tlog_stat_info.rank_*). Hitches are frames and stay on their ranks.
 * The summary is the caller's (tlog_summary_destroy); other ranks get
 * *out = NULL. Returns as tlog_mpi_reduce (TLOG_ENOFRAME on root when no
 * rank passed a summary; TLOG_EFORMAT when a rank's arrived damaged).
 */
TLOG_API int tlog_mpi_reduce_summary(const tlog_summary *summary, MPI_Comm comm, int root,
                                     tlog_summary **out) TLOG_NOEXCEPT;

/*
 * Collective: reduces the statistics each rank's `log` keeps (NULL: the
 * default log; TLOG_CONFIG_STATS or TIMERLOG_REPORT=stats; a rank whose log
 * keeps none is left out) and prints them on `root` to `out` (NULL:
 * stdout), as tlog_summary_dump does:
 *
 *   |-> 87.72% 0.012500s | median ... | median of ranks 0.012500s | slowest p99 0.020000s (rank 3) | (C) Compute
 *
 * Returns as tlog_mpi_reduce_summary, or TLOG_EIO when printing failed.
 */
TLOG_API int tlog_mpi_dump_stats(tlog_log *log, MPI_Comm comm, int root,
                                 FILE *out) TLOG_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
