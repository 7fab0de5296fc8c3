/* A program that calls MPI itself beside libtimerlog-mpi, so that it links
 * only if MPI comes with timerlog-mpi: one frame on each rank, reduced onto
 * rank 0 and printed there. Runs as a single process too (a singleton MPI
 * job). */
#include <stdio.h>

#include <timerlog/mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size = 0, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("mpi: %d rank(s)\n", size);
    {
        TIMERLOG_SCOPE("Consumer frame");
        TIMERLOG_SCOPE("Work");
    }
    int rc = tlog_mpi_dump(NULL, MPI_COMM_WORLD, 0, NULL);
    MPI_Finalize();
    return rc == TLOG_OK ? 0 : 1;
}
