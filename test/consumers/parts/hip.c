/* A program that calls HIP itself beside libtimerlog-hip, so that it links
 * only if the HIP runtime comes with timerlog-hip. Without a GPU it says so
 * and still succeeds. */
#include <stdio.h>

#include <timerlog/hip.h>

int main(void)
{
    int count = 0;
    hipError_t err = hipGetDeviceCount(&count);
    if (err != hipSuccess)
        printf("hip: no device (%s)\n", hipGetErrorName(err));
    else
        printf("hip: %d device(s)\n", count);
    {
        TIMERLOG_SCOPE("Consumer frame");
        TIMERLOG_SCOPE("Work");
        TIMERLOG_HIP_SCOPE(0, "Kernel");
    }
    int rc = tlog_dump(NULL, NULL);
    printf("hip: %llu scope(s) untimed\n", (unsigned long long)tlog_hip_scopes_untimed());
    return rc == TLOG_OK ? 0 : 1;
}
