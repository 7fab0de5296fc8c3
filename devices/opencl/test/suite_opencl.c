/*
 * The device behaviour suite on an OpenCL runtime (pocl in CI): real
 * queues, real profiling times, the library's anchors on the runtime's own
 * clock. Skips with 77 without a platform or a device, and on a device that
 * runs no native kernels (the suite needs work of a known length, see
 * cl_test.h).
 *
 *   suite_opencl in-order       scopes on in-order queues
 *   suite_opencl out-of-order   scopes on out-of-order queues, where the
 *                               suite's work is ordered by events, as an
 *                               application orders its own
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl_test.h"
#include "device_suite.h"

static cl_test_env env;
static bool out_of_order;

/* The suite names queues by their cl_command_queue; what the harness keeps
 * for each: the last work enqueued (out of order: the next waits for it)
 * and the user event holding it. */
typedef struct queue {
    cl_command_queue q;
    cl_event last;
    cl_event gate;
} queue;

enum { MAX_QUEUES = 16 };
static queue queues[MAX_QUEUES];
static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;

static queue *find(cl_command_queue q)
{
    for (int k = 0; k < MAX_QUEUES; k++)
        if (queues[k].q == q)
            return &queues[k];
    return NULL;
}

static int open_device(tlog_log *log, tlog_device **out)
{
    return tlog_cl_device_create(log, env.context, env.device, NULL, out);
}

static void *queue_create(void)
{
    cl_command_queue q = cl_test_queue(
        &env, CL_QUEUE_PROFILING_ENABLE | (out_of_order ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0));
    pthread_mutex_lock(&queues_lock);
    queue *slot = q ? find(NULL) : NULL;
    if (slot)
        *slot = (queue){.q = q};
    pthread_mutex_unlock(&queues_lock);
    if (q && !slot) {
        clReleaseCommandQueue(q);
        return NULL;
    }
    return q;
}

static int finish(void *p)
{
    return clFinish(p) != CL_SUCCESS;
}

static void queue_destroy(void *p)
{
    clFinish(p);
    pthread_mutex_lock(&queues_lock);
    queue *slot = find(p);
    if (slot->last)
        clReleaseEvent(slot->last);
    *slot = (queue){0};
    pthread_mutex_unlock(&queues_lock);
    clReleaseCommandQueue(p);
}

static int launch(void *p, uint64_t ns)
{
    pthread_mutex_lock(&queues_lock);
    queue *slot = find(p);
    cl_event prev = out_of_order ? slot->last : NULL;
    pthread_mutex_unlock(&queues_lock);
    cl_event done = NULL;
    cl_int e = cl_test_spin(p, ns, prev ? 1 : 0, prev ? &prev : NULL,
                            out_of_order ? &done : NULL);
    pthread_mutex_lock(&queues_lock);
    if (slot->last)
        clReleaseEvent(slot->last);
    slot->last = done;
    pthread_mutex_unlock(&queues_lock);
    return e != CL_SUCCESS;
}

/* A barrier waiting for a user event: nothing after it runs, on either
 * kind of queue, until release(). */
static int hold(void *p)
{
    cl_int e = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(env.context, &e);
    if (e == CL_SUCCESS)
        e = clEnqueueBarrierWithWaitList(p, 1, &gate, NULL);
    pthread_mutex_lock(&queues_lock);
    find(p)->gate = gate;
    pthread_mutex_unlock(&queues_lock);
    return e != CL_SUCCESS;
}

static int release(void *p)
{
    pthread_mutex_lock(&queues_lock);
    queue *slot = find(p);
    cl_event gate = slot->gate;
    slot->gate = NULL;
    pthread_mutex_unlock(&queues_lock);
    cl_int e = clSetUserEventStatus(gate, CL_COMPLETE);
    clReleaseEvent(gate);
    return e != CL_SUCCESS || clFlush(p) != CL_SUCCESS;
}

static void close_all(void)
{
    cl_test_close(&env);
}

int main(int argc, char **argv)
{
    out_of_order = argc > 1 && strcmp(argv[1], "out-of-order") == 0;
    bool have = cl_test_open(&env);
    if (have && !env.native) {
        printf("the OpenCL device runs no native kernels: suite skipped\n");
        cl_test_close(&env);
        return 77;
    }
    if (!have) {
        printf("suite skipped\n");
        return 77;
    }
    const suite_backend b = {
        .name = out_of_order ? "opencl (out-of-order queues)" : "opencl (in-order queues)",
        .open = open_device,
        .queue_create = queue_create,
        .queue_destroy = queue_destroy,
        .launch = launch,
        .finish = finish,
        .hold = hold,
        .release = release,
        .close = close_all,
        /* The runtime's own gaps between a marker's completion and the
         * next command's start: the device's threads pick commands up
         * from a scheduler, on a machine whose cores the host shares. */
        .tolerance_ns = 300000,
    };
    return suite_run(&b);
}
