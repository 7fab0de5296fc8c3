/* timerlog/cuda.h compiles on its own, first and alone, and its macros expand
 * in C (and, as header_test.cpp, in C++). */
#include <timerlog/cuda.h>

static int time_a_launch(cudaStream_t stream)
{
    TIMERLOG_SCOPE("Frame");
    {
        TIMERLOG_CUDA_SCOPE(stream, "Kernel");
    }
    TIMERLOG_CUDA_SYNC_SCOPE("Sync");
    TIMERLOG_CUDA_SYNC_STREAM_SCOPE(stream, "Sync stream");
    return 0;
}

int main(void)
{
    (void)time_a_launch;
    return tlog_cuda_scopes_untimed() == 0 ? 0 : 1;
}
