/* timerlog/level_zero.h compiles on its own, first and alone, and its
 * macros expand in C (and, as header_test.cpp, in C++). */
#include <timerlog/level_zero.h>

static int time_a_launch(tlog_device *dev, ze_command_list_handle_t list)
{
    TIMERLOG_SCOPE("Frame");
    {
        TIMERLOG_ZE_SCOPE(dev, list, "Kernel");
    }
    TIMERLOG_SYNC_SCOPE(dev, "Sync");
    TIMERLOG_ZE_SYNC_LIST_SCOPE(dev, list, "Sync list");
    return 0;
}

int main(void)
{
    (void)time_a_launch;
    return tlog_ze_scopes_untimed() == 0 ? 0 : 1;
}
