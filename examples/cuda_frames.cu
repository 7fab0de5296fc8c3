// Real kernels in a frame tree: each kernel launch sits in a CUDA device
// scope, a sync scope bound to the stream wraps the application's own
// cudaStreamSynchronize, and the draw still running when each frame ends shows
// under its `Device past frame end` row. Every frame is printed as it ends;
// tlog_dump waits only for the work still running.
#include <cstdio>

#include <cuda_runtime.h>
#include <timerlog/cuda.h>

// Spins for `ns` by the GPU's global timer.
__global__ void spin(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

static void simulate(cudaStream_t stream, float *x, float *y, int n)
{
    TIMERLOG_SCOPE("Simulation");
    {
        TIMERLOG_CUDA_SCOPE(stream, "Step 1: spin 2 ms");
        spin<<<1, 1, 0, stream>>>(2000000ull);
    }
    {
        TIMERLOG_CUDA_SCOPE(stream, "Step 2: saxpy");
        saxpy<<<(n + 255) / 256, 256, 0, stream>>>(n, 2.0f, x, y);
    }
    TIMERLOG_CUDA_SYNC_STREAM_SCOPE(stream, "GPU Sync \"cudaStreamSynchronize\"");
    cudaStreamSynchronize(stream);
}

static void render(cudaStream_t stream)
{
    TIMERLOG_SCOPE("Rendering");
    TIMERLOG_CUDA_SCOPE(stream, "Draw: spin 5 ms");
    spin<<<1, 1, 0, stream>>>(5000000ull);
}

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("no CUDA device here; examples/sim_frames shows device rows "
                    "on the simulated device\n");
        return 0;
    }
    tlog_device_config config = {sizeof config, TLOG_DEVICE_LAUNCH_ROWS, 0, 0};
    tlog_cuda_configure(&config);
    const int n = 1 << 22;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    int rc = TLOG_OK;
    for (int frame = 0; frame < 3 && rc == TLOG_OK; frame++) {
        {
            TIMERLOG_SCOPE("Frame");
            simulate(stream, x, y, n);
            render(stream);
        }
        std::printf("%s# frame %d\n", frame ? "\n" : "", frame + 1);
        rc = tlog_dump(nullptr, stdout);
    }
    cudaStreamDestroy(stream);
    cudaFree(x);
    cudaFree(y);
    return rc == TLOG_OK ? 0 : 1;
}
