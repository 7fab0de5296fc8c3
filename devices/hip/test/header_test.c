/* timerlog/hip.h compiles on its own, first and alone, with no HIP platform
 * chosen, and its macros expand in C (and, as header_test.cpp, in C++). */
#include <timerlog/hip.h>

static int time_a_launch(hipStream_t stream)
{
    TIMERLOG_SCOPE("Frame");
    {
        TIMERLOG_HIP_SCOPE(stream, "Kernel");
    }
    TIMERLOG_HIP_SYNC_SCOPE("Sync");
    TIMERLOG_HIP_SYNC_STREAM_SCOPE(stream, "Sync stream");
    return 0;
}

int main(void)
{
    (void)time_a_launch;
    return tlog_hip_scopes_untimed() == 0 ? 0 : 1;
}
