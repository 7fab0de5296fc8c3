/* A program that calls OpenCL itself beside libtimerlog-opencl, so that it
 * links only if the ICD loader comes with timerlog-opencl. Without a
 * platform it says so and still succeeds. */
#define CL_TARGET_OPENCL_VERSION 300
#include <stdio.h>

#include <timerlog/opencl.h>

int main(void)
{
    cl_uint platforms = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &platforms);
    if (e != CL_SUCCESS)
        printf("opencl: no platform (%d)\n", (int)e);
    else
        printf("opencl: %u platform(s)\n", (unsigned)platforms);
    tlog_device *dev = NULL;
    int rc = tlog_cl_device_create(NULL, NULL, NULL, NULL, &dev);
    printf("opencl: device: %s\n", tlog_strerror(rc));
    if (dev)
        tlog_device_destroy(dev);
    {
        TIMERLOG_SCOPE("Consumer frame");
        TIMERLOG_SCOPE("Work");
    }
    return tlog_dump(NULL, NULL) == TLOG_OK ? 0 : 1;
}
