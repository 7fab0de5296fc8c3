/*
 * Vulkan: the host's cost of a device scope on a command buffer (see
 * backend_bench.h), measured twice on the device the loader finds (Mesa's
 * lavapipe in CI):
 *  - beside two bare timestamp writes (vkCmdWriteTimestamp2, or
 *    vkCmdWriteTimestamp without synchronization2) on the same command
 *    buffer: what a hand-made pair of timestamps costs;
 *  - beside what the library's two markers are made of, recorded bare: each
 *    a timestamp, a vkCmdCopyQueryPoolResults of it into host memory and a
 *    barrier that makes the copy visible to the host.
 * The command buffer is submitted and waited for between batches, outside
 * the timed regions.
 *
 * Usage: bench_vulkan [runs]   (default 21). Exits 0 with a note without a
 * device.
 */
#include <stdio.h>

#include <timerlog/vulkan.h>

#include "backend_bench.h"
#include "vk_app.h"

static vk_app app;
static VkCommandPool pool;
static VkCommandBuffer cmd;
static VkFence fence;
static VkQueryPool queries;

/* Opened once, for both runs. */
static int available(void)
{
    return app.device || vk_app_open(&app, VK_APP_SYNC2 | VK_APP_CALIBRATED) == 0;
}

static int open_device(tlog_log *log, tlog_device **out)
{
    tlog_vk_target t = vk_app_target(&app);
    return tlog_vk_device_create(log, &t, NULL, out);
}

static void *prepare(void)
{
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = app.family};
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2 * BENCH_BATCH};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (vkCreateCommandPool(app.device, &pi, NULL, &pool) != VK_SUCCESS)
        return NULL;
    ai.commandPool = pool;
    if (vkAllocateCommandBuffers(app.device, &ai, &cmd) != VK_SUCCESS ||
        vkCreateFence(app.device, &fi, NULL, &fence) != VK_SUCCESS ||
        vkCreateQueryPool(app.device, &qi, NULL, &queries) != VK_SUCCESS ||
        vkBeginCommandBuffer(cmd, &bi) != VK_SUCCESS)
        return NULL;
    vkResetQueryPool(app.device, queries, 0, 2 * BENCH_BATCH);
    return cmd;
}

static void stamp(VkCommandBuffer c, uint32_t q)
{
    if (app.flags & TLOG_VK_SYNCHRONIZATION2)
        vkCmdWriteTimestamp2(c, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, queries, q);
    else
        vkCmdWriteTimestamp(c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, q);
}

static void bare_stamps(void *queue)
{
    for (uint32_t i = 0; i < 2 * BENCH_BATCH; i++)
        stamp(queue, i);
}

/* What a marker of the library records: the copy goes to the test
 * application's host-visible buffer. */
static void bare_markers(void *queue)
{
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    for (uint32_t i = 0; i < 2 * BENCH_BATCH; i++) {
        stamp(queue, i);
        vkCmdCopyQueryPoolResults(queue, queries, i, 1, app.buffer, (i % 64) * 16, 16,
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT |
                                      VK_QUERY_RESULT_WAIT_BIT);
        vkCmdPipelineBarrier(queue, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                             1, &to_host, 0, NULL, 0, NULL);
    }
}

/* Runs what was recorded, then records anew into the same command buffer. */
static void drain(void *queue)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (vkEndCommandBuffer(queue) != VK_SUCCESS ||
        vk_app_submit(&app, queue, fence) != VK_SUCCESS ||
        vkWaitForFences(app.device, 1, &fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS)
        fprintf(stderr, "bench_vulkan: the command buffer did not run\n");
    vkResetFences(app.device, 1, &fence);
    vkResetQueryPool(app.device, queries, 0, 2 * BENCH_BATCH);
    vkResetCommandBuffer(queue, 0);
    vkBeginCommandBuffer(queue, &bi);
}

static void release(void *queue)
{
    (void)queue;
    vkEndCommandBuffer(cmd);
    vkDestroyQueryPool(app.device, queries, NULL);
    vkDestroyFence(app.device, fence, NULL);
    vkDestroyCommandPool(app.device, pool, NULL);
}

int main(int argc, char **argv)
{
    const bench_backend stamps = {"two bare timestamp writes", available, open_device,
                                  prepare, bare_stamps, drain, release};
    const bench_backend markers = {"two bare timestamp + copy + barrier", available,
                                   open_device, prepare, bare_markers, drain, release};
    int rc = bench_backend_main(&stamps, argc, argv);
    if (rc == 0 && app.device)
        rc = bench_backend_main(&markers, argc, argv);
    vk_app_close(&app);
    return rc;
}
