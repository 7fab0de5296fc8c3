/* timerlog/opencl.h compiles on its own, first and alone, and its macros
 * expand in C (and, as header_test.cpp, in C++). */
#include <timerlog/opencl.h>

static int time_a_launch(tlog_device *dev, cl_command_queue queue)
{
    TIMERLOG_SCOPE("Frame");
    {
        TIMERLOG_CL_SCOPE(dev, queue, "Kernel");
    }
    TIMERLOG_CL_SYNC_SCOPE(dev, "Sync");
    TIMERLOG_CL_SYNC_QUEUE_SCOPE(dev, queue, "Sync queue");
    return 0;
}

int main(void)
{
    (void)time_a_launch;
    return tlog_cl_scopes_untimed() == 0 && tlog_cl_context(NULL) == NULL ? 0 : 1;
}
