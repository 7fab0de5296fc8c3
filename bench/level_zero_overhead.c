/*
 * Level Zero: a device scope next to what its two markers are made of,
 * appended bare: two pairs of zeCommandListAppendBarrier +
 * zeCommandListAppendWriteGlobalTimestamp (with a signal event each) on an
 * immediate list (see backend_bench.h). On a machine without an Intel GPU,
 * run it through the test driver: ZE_ENABLE_ALT_DRIVERS=<driver path>.
 *
 * Usage: bench_level_zero [runs]   (default 21). Exits 0 with a note
 * without a device.
 */
#include <stdint.h>
#include <stdlib.h>

#include <timerlog/level_zero.h>

#include "backend_bench.h"

static ze_context_handle_t context;
static ze_device_handle_t device;
static ze_event_pool_handle_t pool;
static ze_event_handle_t events[2 * BENCH_BATCH + 1];   /* the last: drain */
static uint64_t *slots;

static int available(void)
{
    uint32_t n = 1;
    ze_driver_handle_t driver;
    if (zeInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS ||
        zeDriverGet(&n, &driver) != ZE_RESULT_SUCCESS || n == 0)
        return 0;
    n = 1;
    return zeDeviceGet(driver, &n, &device) == ZE_RESULT_SUCCESS && n > 0;
}

static int open_device(tlog_log *log, tlog_device **out)
{
    int rc = tlog_ze_device_create(log, NULL, NULL, NULL, out);
    context = rc == TLOG_OK ? tlog_ze_context(*out) : NULL;
    return rc;
}

static void *prepare(void)
{
    ze_command_list_handle_t list = NULL;
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                               .count = 2 * BENCH_BATCH + 1};
    ze_host_mem_alloc_desc_t md = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    if (zeCommandListCreateImmediate(context, device, &qd, &list) != ZE_RESULT_SUCCESS ||
        zeEventPoolCreate(context, &pd, 1, &device, &pool) != ZE_RESULT_SUCCESS ||
        zeMemAllocHost(context, &md, 2 * BENCH_BATCH * sizeof *slots, 64,
                       (void **)&slots) != ZE_RESULT_SUCCESS)
        return NULL;
    for (uint32_t i = 0; i < 2 * BENCH_BATCH + 1; i++) {
        ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = i,
                              .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                              .wait = ZE_EVENT_SCOPE_FLAG_HOST};
        if (zeEventCreate(pool, &ed, &events[i]) != ZE_RESULT_SUCCESS)
            return NULL;
    }
    return list;
}

static void bare_stamps(void *list)
{
    for (int i = 0; i < 2 * BENCH_BATCH; i++) {
        zeEventHostReset(events[i]);
        zeCommandListAppendBarrier(list, NULL, 0, NULL);
        zeCommandListAppendWriteGlobalTimestamp(list, &slots[i], events[i], 0, NULL);
    }
}

static void drain(void *list)
{
    ze_event_handle_t done = events[2 * BENCH_BATCH];
    zeEventHostReset(done);
    zeCommandListAppendBarrier(list, done, 0, NULL);
    zeEventHostSynchronize(done, UINT64_MAX);
}

static void release(void *list)
{
    for (int i = 0; i < 2 * BENCH_BATCH + 1; i++)
        zeEventDestroy(events[i]);
    zeEventPoolDestroy(pool);
    zeMemFree(context, slots);
    zeCommandListDestroy(list);
}

int main(int argc, char **argv)
{
    const bench_backend b = {"two bare barrier + timestamp appends", available, open_device,
                             prepare, bare_stamps, drain, release};
    return bench_backend_main(&b, argc, argv);
}
