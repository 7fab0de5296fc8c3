/* A program that calls Vulkan itself beside libtimerlog-vulkan, so that it
 * links only if the Vulkan loader comes with timerlog-vulkan. It needs no
 * Vulkan device: it asks the loader for its version and makes no device. */
#include <stdio.h>

#include <timerlog/vulkan.h>

int main(void)
{
    uint32_t version = 0;
    VkResult res = vkEnumerateInstanceVersion(&version);
    if (res != VK_SUCCESS)
        printf("vulkan: no loader version (%d)\n", (int)res);
    else
        printf("vulkan: loader %u.%u\n", VK_API_VERSION_MAJOR(version),
               VK_API_VERSION_MINOR(version));
    printf("vulkan: scopes untimed so far: %llu\n",
           (unsigned long long)tlog_vk_scopes_untimed());
    {
        TIMERLOG_SCOPE("Consumer frame");
        TIMERLOG_SCOPE("Work");
        TIMERLOG_VK_SCOPE(NULL, VK_NULL_HANDLE, "Not timed without a device");
    }
    return tlog_dump(NULL, NULL) == TLOG_OK && tlog_vk_scopes_untimed() == 1 ? 0 : 1;
}
