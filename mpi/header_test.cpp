// timerlog/mpi.h from C++: the same checks as header_test.c.
#include "header_test.c"
