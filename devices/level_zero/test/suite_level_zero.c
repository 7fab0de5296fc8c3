/*
 * The device behaviour suite on Level Zero, through the real loader and
 * whatever driver it finds (the tests point ZE_ENABLE_ALT_DRIVERS at the
 * test driver). Work is a kernel of the test driver's module that runs for
 * groupCountX microseconds.
 *
 *   suite_level_zero immediate   scopes on immediate command lists
 *   suite_level_zero regular     scopes on regular lists, run by a queue
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <timerlog/level_zero.h>

#include "device_suite.h"

static ze_context_handle_t context;
static ze_device_handle_t device;
static ze_module_handle_t module;
static ze_kernel_handle_t spin;
static ze_event_pool_handle_t done_pool;
static bool regular;

typedef struct queue {
    ze_command_list_handle_t list;   /* open: what scopes go into */
    ze_command_queue_handle_t cq;    /* regular lists only */
    ze_command_list_handle_t ran[64];
    int nran;
    ze_event_handle_t done;          /* immediate lists: the app's wait */
    ze_event_handle_t gate;          /* what hold() makes the list wait for */
} queue;

static int open_device(tlog_log *log, tlog_device **out)
{
    if (!device)
        return TLOG_ENODEVICE;
    return tlog_ze_device_create(log, context, device, NULL, out);
}

static ze_command_list_handle_t list_new(void)
{
    ze_command_list_handle_t list = NULL;
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_result_t r = regular ? zeCommandListCreate(context, device, &ld, &list)
                            : zeCommandListCreateImmediate(context, device, &qd, &list);
    return r == ZE_RESULT_SUCCESS ? list : NULL;
}

static void *queue_create(void)
{
    static uint32_t next_event;
    queue *q = calloc(1, sizeof *q);
    q->list = list_new();
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    if (regular && zeCommandQueueCreate(context, device, &qd, &q->cq) != ZE_RESULT_SUCCESS)
        return NULL;
    ze_event_handle_t *events[2] = {&q->done, &q->gate};
    for (int k = 0; k < 2; k++) {
        ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                              .index = __atomic_fetch_add(&next_event, 1, __ATOMIC_RELAXED) % 64,
                              .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                              .wait = ZE_EVENT_SCOPE_FLAG_HOST};
        if (zeEventCreate(done_pool, &ed, events[k]) != ZE_RESULT_SUCCESS)
            return NULL;
    }
    return q->list ? q : NULL;
}

/* The list waits for the gate event until release() signals it. */
static int hold(void *p)
{
    queue *q = p;
    return zeEventHostReset(q->gate) != ZE_RESULT_SUCCESS ||
           zeCommandListAppendWaitOnEvents(q->list, 1, &q->gate) != ZE_RESULT_SUCCESS;
}

static int release(void *p)
{
    return zeEventHostSignal(((queue *)p)->gate) != ZE_RESULT_SUCCESS;
}

static void *handle(void *q)
{
    return ((queue *)q)->list;
}

static int launch(void *list, uint64_t ns)
{
    ze_group_count_t groups = {(uint32_t)(ns / 1000), 1, 1};
    return zeCommandListAppendLaunchKernel(list, spin, &groups, NULL, 0, NULL) !=
           ZE_RESULT_SUCCESS;
}

/* Regular lists: runs the open list and opens a new one. */
static int submit(void *p)
{
    queue *q = p;
    if (!regular)
        return 0;
    if (q->nran == 64 || zeCommandListClose(q->list) != ZE_RESULT_SUCCESS ||
        zeCommandQueueExecuteCommandLists(q->cq, 1, &q->list, NULL) != ZE_RESULT_SUCCESS)
        return 1;
    q->ran[q->nran++] = q->list;
    q->list = list_new();
    return q->list ? 0 : 1;
}

static int finish(void *p)
{
    queue *q = p;
    if (regular) {
        if (submit(q) || zeCommandQueueSynchronize(q->cq, UINT64_MAX) != ZE_RESULT_SUCCESS)
            return 1;
        for (int k = 0; k < q->nran; k++)
            zeCommandListDestroy(q->ran[k]);
        q->nran = 0;
        return 0;
    }
    ze_result_t r = zeCommandListAppendBarrier(q->list, q->done, 0, NULL);
    if (r == ZE_RESULT_SUCCESS)
        r = zeEventHostSynchronize(q->done, UINT64_MAX);
    if (r == ZE_RESULT_SUCCESS)
        r = zeEventHostReset(q->done);
    return r != ZE_RESULT_SUCCESS;
}

static void queue_destroy(void *p)
{
    queue *q = p;
    finish(q);
    zeCommandListDestroy(q->list);
    if (q->cq)
        zeCommandQueueDestroy(q->cq);
    zeEventDestroy(q->done);
    zeEventDestroy(q->gate);
    free(q);
}

/* The first GPU, a context, the spin kernel and events for waits. */
static bool setup(void)
{
    if (zeInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS)
        return false;
    uint32_t n = 1;
    ze_driver_handle_t driver;
    if (zeDriverGet(&n, &driver) != ZE_RESULT_SUCCESS || n == 0)
        return false;
    n = 1;
    if (zeDeviceGet(driver, &n, &device) != ZE_RESULT_SUCCESS || n == 0)
        return false;
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    static const uint8_t spirv[4] = {0x03, 0x02, 0x23, 0x07};
    ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                           .format = ZE_MODULE_FORMAT_IL_SPIRV,
                           .inputSize = sizeof spirv,
                           .pInputModule = spirv};
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "spin"};
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                               .count = 64};
    return zeContextCreate(driver, &cd, &context) == ZE_RESULT_SUCCESS &&
           zeModuleCreate(context, device, &md, &module, NULL) == ZE_RESULT_SUCCESS &&
           zeKernelCreate(module, &kd, &spin) == ZE_RESULT_SUCCESS &&
           zeEventPoolCreate(context, &pd, 1, &device, &done_pool) == ZE_RESULT_SUCCESS;
}

static void close_all(void)
{
    if (spin)
        zeKernelDestroy(spin);
    if (module)
        zeModuleDestroy(module);
    if (done_pool)
        zeEventPoolDestroy(done_pool);
    if (context)
        zeContextDestroy(context);
}

int main(int argc, char **argv)
{
    regular = argc > 1 && strcmp(argv[1], "regular") == 0;
    if (!setup()) {
        device = NULL;
        fprintf(stderr, "no Level Zero device\n");
    }
    const suite_backend b = {
        .name = regular ? "level_zero (regular lists)" : "level_zero (immediate lists)",
        .open = open_device,
        .queue_create = queue_create,
        .queue_destroy = queue_destroy,
        .handle = handle,
        .launch = launch,
        .submit = regular ? submit : NULL,
        .finish = finish,
        .hold = hold,
        .release = release,
        .close = close_all,
        /* Timestamps read at the device timer's resolution (83 ns by
         * default), plus the queue's cost per marker. */
        .tolerance_ns = 20000,
    };
    return suite_run(&b);
}
