/* A program that calls the CUDA runtime itself beside libtimerlog-cuda, so
 * that it links only if the runtime comes with timerlog-cuda. Without a GPU
 * it says so and still succeeds: the point is the link, and that both
 * libraries load. */
#include <stdio.h>

#include <timerlog/cuda.h>

int main(void)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess)
        printf("cuda: no device (%s)\n", cudaGetErrorName(err));
    else
        printf("cuda: %d device(s)\n", count);
    {
        TIMERLOG_SCOPE("Consumer frame");
        TIMERLOG_SCOPE("Work");
        /* On the default stream; without a GPU the scope only counts itself
         * (tlog_cuda_scopes_untimed). */
        TIMERLOG_CUDA_SCOPE(0, "Kernel");
    }
    int rc = tlog_dump(NULL, NULL);
    printf("cuda: %llu scope(s) untimed\n", (unsigned long long)tlog_cuda_scopes_untimed());
    return rc == TLOG_OK ? 0 : 1;
}
