/*
 * What the OpenCL test programs share: the first device of the first
 * platform, work of a known length on a queue, and real kernels of known
 * relative cost.
 *
 * Work of a known length is a native kernel (clEnqueueNativeKernel, a
 * function of this program that the runtime runs as a command of the queue)
 * that waits on the host's monotonic clock: on a CPU device such as pocl it
 * runs on the device's own threads, like any kernel, and lasts what it is
 * asked whatever else loads the machine. It sleeps for most of that time,
 * leaving the cores to the runtime's other threads and to the host. Kernels of known relative cost are
 * OpenCL C: a loop of n dependent steps, built once per program (pocl
 * compiles with LLVM at first use, which takes a while).
 */
#ifndef TIMERLOG_CL_TEST_H
#define TIMERLOG_CL_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <timerlog/opencl.h>

typedef struct cl_test_env {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    bool native;                /* the device runs native kernels */
    cl_program program;         /* the `work` kernel, once built */
    cl_kernel work;
    cl_mem out;                 /* what `work` writes */
    double steps_per_ns;        /* of `work`, on an idle device */
} cl_test_env;

static inline int64_t cl_test_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The first device of the first platform that has one; false (and says
 * why) without one. */
static inline bool cl_test_open(cl_test_env *env)
{
    memset(env, 0, sizeof *env);
    cl_uint n = 0;
    cl_platform_id platforms[8];
    cl_int e = clGetPlatformIDs(8, platforms, &n);
    if (e != CL_SUCCESS || n == 0) {
        printf("no OpenCL platform (clGetPlatformIDs: %d)\n", (int)e);
        return false;
    }
    for (cl_uint i = 0; i < n && i < 8 && !env->device; i++) {
        cl_uint found = 0;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &env->device, &found) !=
                CL_SUCCESS || found == 0)
            env->device = NULL;
        else
            env->platform = platforms[i];
    }
    if (!env->device) {
        printf("no OpenCL device\n");
        return false;
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)env->platform,
                                     0};
    env->context = clCreateContext(props, 1, &env->device, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        printf("no OpenCL context (%d)\n", (int)e);
        return false;
    }
    cl_device_exec_capabilities caps = 0;
    clGetDeviceInfo(env->device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
    env->native = (caps & CL_EXEC_NATIVE_KERNEL) != 0;
    return true;
}

static inline void cl_test_close(cl_test_env *env)
{
    if (env->work)
        clReleaseKernel(env->work);
    if (env->program)
        clReleaseProgram(env->program);
    if (env->out)
        clReleaseMemObject(env->out);
    if (env->context)
        clReleaseContext(env->context);
    memset(env, 0, sizeof *env);
}

/* A queue with profiling (and out of order if asked). */
static inline cl_command_queue cl_test_queue(cl_test_env *env, cl_command_queue_properties props)
{
    cl_int e = CL_SUCCESS;
    cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(env->context, env->device, list, &e);
    return e == CL_SUCCESS ? q : NULL;
}

static void CL_CALLBACK cl_test_spin_fn(void *args)
{
    uint64_t ns;
    memcpy(&ns, args, sizeof ns);
    int64_t end = cl_test_now_ns() + (int64_t)ns;
    /* Asleep for all but the last millisecond, so that the device's other
     * threads and the host's get the cores meanwhile; then spinning, to
     * end on time even when waking up takes long on a busy machine. */
    int64_t left = end - cl_test_now_ns() - 1000000;
    if (left > 0) {
        struct timespec nap = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        nanosleep(&nap, NULL);
    }
    while (cl_test_now_ns() < end) {
    }
}

/* Work that lasts `ns` once the queue reaches it, waiting for `wait` (if
 * any); its event in *done if asked. */
static inline cl_int cl_test_spin(cl_command_queue q, uint64_t ns, cl_uint nwait,
                                  const cl_event *wait, cl_event *done)
{
    return clEnqueueNativeKernel(q, cl_test_spin_fn, &ns, sizeof ns, 0, NULL, NULL, nwait, wait,
                                 done);
}

/* n dependent steps of a linear congruential generator: the cost is
 * proportional to n. */
static const char *cl_test_work_src =
    "__kernel void work(ulong n, __global ulong *out)\n"
    "{\n"
    "    ulong x = get_global_id(0) + 1;\n"
    "    for (ulong i = 0; i < n; i++)\n"
    "        x = x * 6364136223846793005UL + 1442695040888963407UL;\n"
    "    out[get_global_id(0)] = x;\n"
    "}\n";

/* `work` on q with n steps, its event in *done if asked. */
static inline cl_int cl_test_work(cl_test_env *env, cl_command_queue q, cl_ulong n,
                                  cl_event *done)
{
    size_t one = 1;
    cl_int e = clSetKernelArg(env->work, 0, sizeof n, &n);
    if (e == CL_SUCCESS)
        e = clEnqueueNDRangeKernel(q, env->work, 1, NULL, &one, &one, 0, NULL, done);
    return e;
}

/* The device's own time for a finished command: END - START. */
static inline int64_t cl_test_span(cl_event ev, int64_t *start)
{
    cl_ulong a = 0, b = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
    if (start)
        *start = (int64_t)a;
    return (int64_t)(b - a);
}

/* Builds `work` and measures its steps per ns on `q` (best of 5 runs of
 * about 2 ms). */
static inline bool cl_test_build_work(cl_test_env *env, cl_command_queue q)
{
    cl_int e = CL_SUCCESS;
    env->program = clCreateProgramWithSource(env->context, 1, &cl_test_work_src, NULL, &e);
    if (e == CL_SUCCESS)
        e = clBuildProgram(env->program, 1, &env->device, "", NULL, NULL);
    if (e == CL_SUCCESS)
        env->work = clCreateKernel(env->program, "work", &e);
    if (e == CL_SUCCESS)
        env->out = clCreateBuffer(env->context, CL_MEM_READ_WRITE, 64 * sizeof(cl_ulong), NULL,
                                  &e);
    if (e == CL_SUCCESS)
        e = clSetKernelArg(env->work, 1, sizeof env->out, &env->out);
    if (e != CL_SUCCESS) {
        fprintf(stderr, "cannot build the work kernel: %d\n", (int)e);
        return false;
    }
    cl_ulong steps = 100000;
    for (int k = 0; k < 8 && e == CL_SUCCESS; k++) {
        cl_event ev = NULL;
        e = cl_test_work(env, q, steps, &ev);
        if (e == CL_SUCCESS)
            e = clWaitForEvents(1, &ev);
        int64_t span = e == CL_SUCCESS ? cl_test_span(ev, NULL) : 0;
        if (ev)
            clReleaseEvent(ev);
        double rate = span > 0 ? (double)steps / (double)span : 0;
        if (rate > env->steps_per_ns)
            env->steps_per_ns = rate;
        if (k >= 2 && env->steps_per_ns > 0)
            steps = (cl_ulong)(env->steps_per_ns * 2e6);   /* about 2 ms */
    }
    return e == CL_SUCCESS && env->steps_per_ns > 0;
}

#endif
