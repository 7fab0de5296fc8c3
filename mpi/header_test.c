/* timerlog/mpi.h compiles on its own, first and alone, and links with what
 * pkg-config's timerlog-mpi names, in C and (as header_test.cpp) in C++:
 * there without an MPI library's C++ bindings. Nothing is called: MPI is
 * not started. */
#include <timerlog/mpi.h>

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1000) {   /* never: the calls only have to link */
        tlog_frame *out = NULL;
        tlog_mpi_reduce(NULL, MPI_COMM_WORLD, 0, &out);
        tlog_mpi_dump(NULL, MPI_COMM_WORLD, 0, NULL);
    }
    return 0;
}
