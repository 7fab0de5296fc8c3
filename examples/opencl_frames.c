/*
 * Device rows from an OpenCL device (pocl's CPU device on a machine without
 * a GPU): a loop of frames whose kernels run on two in-order queues. Each
 * frame waits for the compute queue inside a sync scope bound to it, so the
 * filters' intervals show under that wait; the draw is still running when
 * the frame ends, and shows under the frame's `Device past frame end` row.
 * Every frame is printed as it ends, each device row once, in the frame
 * that launched it. Exits 77 where there is no OpenCL platform.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <stdio.h>
#include <time.h>

#include <timerlog/opencl.h>
#include <timerlog/timerlog.h>

enum { N = 1 << 16 };

/* `rounds` dependent steps per element: the cost grows with rounds. */
static const char *source =
    "__kernel void filter(__global float *v, float k, uint rounds)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    float x = v[i];\n"
    "    for (uint r = 0; r < rounds; r++)\n"
    "        x = x * k + 0.5f;\n"
    "    v[i] = x;\n"
    "}\n";

typedef struct app {
    cl_context context;
    cl_device_id device;
    cl_command_queue compute, graphics;
    cl_kernel filter;
    cl_mem field, image;
    float pixels[N];
} app;

static void host_work(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void run_filter(app *a, cl_command_queue q, cl_mem buffer, cl_uint rounds)
{
    size_t global = N;
    float k = 0.999f;
    clSetKernelArg(a->filter, 0, sizeof buffer, &buffer);
    clSetKernelArg(a->filter, 1, sizeof k, &k);
    clSetKernelArg(a->filter, 2, sizeof rounds, &rounds);
    clEnqueueNDRangeKernel(q, a->filter, 1, NULL, &global, NULL, 0, NULL, NULL);
}

static void simulate(tlog_device *gpu, app *a)
{
    TIMERLOG_SCOPE("Simulation");
    {
        TIMERLOG_SCOPE("Filter 1");
        host_work(1000);
        TIMERLOG_CL_SCOPE(gpu, a->compute, "Filter 1: GPU Parallel Operation 1");
        run_filter(a, a->compute, a->field, 100);
    }
    {
        TIMERLOG_CL_SCOPE(gpu, a->compute, "Filter 1: GPU Parallel Operation 2");
        run_filter(a, a->compute, a->field, 50);
    }
    {
        TIMERLOG_SCOPE("Filter 2");
        host_work(500);
        TIMERLOG_CL_SYNC_QUEUE_SCOPE(gpu, a->compute, "GPU Sync \"clFinish(compute)\"");
        clFinish(a->compute);
    }
}

static void render(tlog_device *gpu, app *a)
{
    TIMERLOG_SCOPE("Rendering");
    {
        TIMERLOG_CL_SCOPE(gpu, a->graphics, "Upload to device");
        clEnqueueWriteBuffer(a->graphics, a->image, CL_FALSE, 0, sizeof a->pixels, a->pixels, 0,
                             NULL, NULL);
    }
    {
        TIMERLOG_CL_SCOPE(gpu, a->graphics, "Draw");
        run_filter(a, a->graphics, a->image, 200);
    }
    clFlush(a->graphics);
    host_work(800);
}

/* The first device of the first platform, two profiled queues and the
 * filter kernel, built once (pocl compiles it at first use). */
static int setup(app *a)
{
    cl_platform_id platform;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0 ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &a->device, &n) != CL_SUCCESS || n == 0)
        return 77;
    cl_int e = CL_SUCCESS;
    a->context = clCreateContext(NULL, 1, &a->device, NULL, NULL, &e);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    if (e == CL_SUCCESS)
        a->compute = clCreateCommandQueueWithProperties(a->context, a->device, props, &e);
    if (e == CL_SUCCESS)
        a->graphics = clCreateCommandQueueWithProperties(a->context, a->device, props, &e);
    cl_program program = NULL;
    if (e == CL_SUCCESS)
        program = clCreateProgramWithSource(a->context, 1, &source, NULL, &e);
    if (e == CL_SUCCESS)
        e = clBuildProgram(program, 1, &a->device, "", NULL, NULL);
    if (e == CL_SUCCESS)
        a->filter = clCreateKernel(program, "filter", &e);
    if (program)
        clReleaseProgram(program);
    if (e == CL_SUCCESS)
        a->field = clCreateBuffer(a->context, CL_MEM_READ_WRITE, sizeof a->pixels, NULL, &e);
    if (e == CL_SUCCESS)
        a->image = clCreateBuffer(a->context, CL_MEM_READ_WRITE, sizeof a->pixels, NULL, &e);
    if (e == CL_SUCCESS) {
        /* pocl compiles a kernel for its launch shape at its first launch:
         * done here, outside the frames. */
        run_filter(a, a->compute, a->field, 1);
        run_filter(a, a->graphics, a->image, 1);
        e = clFinish(a->compute);
    }
    if (e == CL_SUCCESS)
        e = clFinish(a->graphics);
    if (e != CL_SUCCESS)
        fprintf(stderr, "OpenCL set-up failed: %d\n", (int)e);
    return e == CL_SUCCESS ? 0 : 1;
}

static void teardown(app *a)
{
    if (a->field)
        clReleaseMemObject(a->field);
    if (a->image)
        clReleaseMemObject(a->image);
    if (a->filter)
        clReleaseKernel(a->filter);
    if (a->compute)
        clReleaseCommandQueue(a->compute);
    if (a->graphics)
        clReleaseCommandQueue(a->graphics);
    if (a->context)
        clReleaseContext(a->context);
}

int main(void)
{
    static app a;
    int rc = setup(&a);
    if (rc == 77)
        puts("no OpenCL platform or device");
    if (rc != 0) {
        teardown(&a);
        return rc;
    }
    tlog_device *gpu = NULL;
    tlog_device_config dcfg = {.size = sizeof dcfg, .flags = TLOG_DEVICE_LAUNCH_ROWS};
    rc = tlog_cl_device_create(NULL, a.context, a.device, &dcfg, &gpu);
    if (rc != TLOG_OK) {
        fprintf(stderr, "OpenCL device: %s\n", tlog_strerror(rc));
        teardown(&a);
        return 1;
    }
    for (int frame = 0; frame < 3 && rc == TLOG_OK; frame++) {
        {
            TIMERLOG_SCOPE("Frame");
            simulate(gpu, &a);
            render(gpu, &a);
        }
        printf("%s# frame %d\n", frame ? "\n" : "", frame + 1);
        rc = tlog_dump(NULL, stdout);   /* waits for the draw still running */
    }
    clFinish(a.graphics);
    tlog_device_destroy(gpu);
    teardown(&a);
    return rc == TLOG_OK ? 0 : 1;
}
