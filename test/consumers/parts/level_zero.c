/* A program that calls Level Zero itself beside libtimerlog-level-zero, so
 * that it links only if the loader comes with timerlog-level-zero. Without
 * a driver or a GPU it says so and still succeeds. */
#include <stdio.h>

#include <timerlog/level_zero.h>

int main(void)
{
    ze_result_t res = zeInit(ZE_INIT_FLAG_GPU_ONLY);
    uint32_t drivers = 0;
    if (res == ZE_RESULT_SUCCESS)
        res = zeDriverGet(&drivers, NULL);
    if (res != ZE_RESULT_SUCCESS)
        printf("level zero: no driver (0x%x)\n", (unsigned)res);
    else
        printf("level zero: %u driver(s)\n", (unsigned)drivers);
    tlog_device *gpu = NULL;
    int rc = tlog_ze_device_create(NULL, NULL, NULL, NULL, &gpu);
    printf("level zero: device: %s\n", tlog_strerror(rc));
    if (gpu)
        tlog_device_destroy(gpu);
    {
        TIMERLOG_SCOPE("Consumer frame");
        TIMERLOG_SCOPE("Work");
    }
    return tlog_dump(NULL, NULL) == TLOG_OK ? 0 : 1;
}
