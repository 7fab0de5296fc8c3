/* timerlog/vulkan.h compiles on its own, first and alone, and its macros
 * expand in C (and, as header_test.cpp, in C++). */
#include <timerlog/vulkan.h>

static int time_a_dispatch(tlog_device *dev, VkCommandBuffer cmd)
{
    TIMERLOG_SCOPE("Frame");
    {
        TIMERLOG_VK_SCOPE(dev, cmd, "Dispatch");
    }
    TIMERLOG_VK_SYNC_SCOPE(dev, "Wait idle");
    TIMERLOG_VK_SYNC_CMD_SCOPE(dev, cmd, "Wait for the fence");
    return 0;
}

int main(void)
{
    (void)time_a_dispatch;
    unsigned flags = TLOG_VK_HOST_QUERY_RESET | TLOG_VK_SYNCHRONIZATION2 |
                     TLOG_VK_CALIBRATED_TIMESTAMPS;
    return tlog_vk_scopes_untimed() == 0 && flags == 7 && sizeof(tlog_vk_target) > 0 ? 0 : 1;
}
