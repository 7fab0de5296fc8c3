/*
 * libtimerlog-vulkan: device scopes on Vulkan command buffers (pkg-config
 * timerlog-vulkan).
 *
 *     TIMERLOG_VK_SCOPE(dev, cmd, "Filter 1: GPU Parallel Operation 1");
 *     vkCmdDispatch(cmd, groups, 1, 1);
 *
 * writes a begin and an end timestamp around the dispatch into `cmd` and
 * returns at once. The timestamps go into query pools of the library's own,
 * made in batches off the recording path. Each timestamp is followed in
 * `cmd` by a vkCmdCopyQueryPoolResults of it, with its availability
 * (VK_QUERY_RESULT_64_BIT, WITH_AVAILABILITY and WAIT), into host memory of
 * the library's, and a barrier that makes the copy visible to the host: a
 * read is then a load from memory that never waits, where
 * vkGetQueryPoolResults may wait for the whole device (Mesa's lavapipe 22.3
 * does, even without VK_QUERY_RESULT_WAIT_BIT). Each query is reset from the
 * host once, when it is made, and then in the command buffer before each of
 * its timestamps (vkCmdResetQueryPool): a marker is reused once read, which
 * can be while the command buffer that last used it is still pending, and
 * query commands on one query and one queue run in submission order.
 * Nothing here blocks on the device except the forced sync (tlog_dump,
 * tlog_sync), which polls.
 *
 * Device scopes begin and end outside render pass instances: a copy of
 * query results is not allowed inside one.
 *
 * Where a timestamp lands: both are written at the end of the pipeline
 * (VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT with vkCmdWriteTimestamp2 where the
 * device has synchronization2 enabled, else VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_
 * BIT with vkCmdWriteTimestamp), so the begin is written once the work
 * recorded before the scope has finished, and the end once the scope's own
 * work has. Consecutive scopes therefore never overlap; a scope's own work
 * may start before its begin timestamp (Vulkan does not hold later commands
 * for a timestamp), which makes the first interval after other work read
 * short by that overlap, never long.
 *
 * Ticks become nanoseconds with the device's timestampPeriod; differences
 * are taken modulo the narrowest non-zero timestampValidBits of its queue
 * families, so the counter may wrap as long as no interval, and no frame,
 * lasts half a wrap period.
 *
 * The host timeline: where the device has VK_KHR_calibrated_timestamps or
 * VK_EXT_calibrated_timestamps enabled (tlog_vk_target.flags), every frame's
 * anchor is a reading of the device's time domain, taken between two host
 * clock reads, with no submission. Without it, the anchor is a timestamp
 * submitted on tlog_vk_target.queue and placed at the time it was
 * submitted: give the library a queue that is otherwise idle where the
 * device has one, since work queued ahead of it there makes the anchor, and
 * every interval placed from it, late by that work.
 *
 * Command buffers: a scope begins and ends on the same command buffer, and
 * its interval is read once that command buffer has run.
 *  - Submit a command buffer that holds device scopes once per recording
 *    (VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, or re-record it before
 *    submitting it again). A second submission writes the same queries
 *    again, after the library may have read them and handed them to later
 *    scopes, whose intervals would then be wrong. The timing of a command
 *    buffer submitted several times is not kept per submission.
 *  - A secondary command buffer may hold scopes under the same rule: it is
 *    executed by one primary, once per recording. Its scopes are timed where
 *    that primary runs it.
 *  - A command buffer that is never submitted leaves its intervals pending:
 *    the forced sync gives up on them at the log's sync_timeout_ns and shows
 *    them unresolved, and their queries stay out of use until the device is
 *    destroyed.
 *  - The command buffer's queue family must write timestamps (non-zero
 *    timestampValidBits).
 *
 * Device loss: a VK_ERROR_DEVICE_LOST from any call of the library marks
 * the device lost. Intervals not yet read show unresolved, the loss is
 * reported once on the log's error path, saying so, and later scopes are
 * refused (counted in scopes_failed) without calling Vulkan.
 */
#ifndef TIMERLOG_VULKAN_H
#define TIMERLOG_VULKAN_H

#include <vulkan/vulkan.h>

#include "timerlog/timerlog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the application's VkDevice was created with (Vulkan offers no way to
 * ask): flags for tlog_vk_target.flags. */
enum tlog_vk_flags {
    /* The hostQueryReset feature is enabled (Vulkan 1.2's
     * VkPhysicalDeviceVulkan12Features, or VK_EXT_host_query_reset).
     * Required: the library resets its queries from the host when it
     * makes them. */
    TLOG_VK_HOST_QUERY_RESET = 1u << 0,
    /* The synchronization2 feature is enabled (Vulkan 1.3, or
     * VK_KHR_synchronization2): timestamps are written with
     * vkCmdWriteTimestamp2. */
    TLOG_VK_SYNCHRONIZATION2 = 1u << 1,
    /* VK_KHR_calibrated_timestamps or VK_EXT_calibrated_timestamps is
     * enabled: anchors read the device's clock without a submission. */
    TLOG_VK_CALIBRATED_TIMESTAMPS = 1u << 2
};

/*
 * The application's Vulkan objects that a device is made for. Fields left
 * zero are absent; `size` is sizeof(tlog_vk_target).
 */
typedef struct tlog_vk_target {
    size_t size;
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;             /* the device the command buffers belong to */
    /* A queue of `device` and its family, which the library submits small
     * command buffers of its own to: while the device is made (to measure
     * the empty-scope offset), and, without calibrated timestamps, once per
     * frame for the anchor, from whichever thread reads device work. The
     * family must write timestamps. */
    VkQueue queue;
    uint32_t queue_family;
    unsigned flags;              /* tlog_vk_flags; other bits: TLOG_EINVAL */
    /* Where the library finds Vulkan's functions: the entry point of the
     * application's loader (volk's, or a layer's); NULL: the one libvulkan
     * exports. Device functions are then taken from vkGetDeviceProcAddr. */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    /* Submissions to one VkQueue must be serialised. If the application
     * submits to `queue` from other threads, give both: the library calls
     * lock_queue(queue_user) before each of its submissions and
     * unlock_queue(queue_user) after, as the application does around its
     * own. NULL: the application never submits to `queue` while the
     * library might. */
    void (*lock_queue)(void *queue_user);
    void (*unlock_queue)(void *queue_user);
    void *queue_user;
} tlog_vk_target;

/*
 * A device for the application's Vulkan device described by `target`,
 * bound to `log` (NULL: the default log). Creating it takes a few
 * milliseconds: it measures the empty-scope offset with one submission on
 * target->queue, which it waits for, and anchors the device clock to the
 * host's. Returns TLOG_EINVAL (and reports why) for a NULL target or
 * `out`, a target whose size cannot hold its fields, a missing instance,
 * physical device, device or queue, unknown flags or flags without
 * TLOG_VK_HOST_QUERY_RESET, or lock functions given without their pair;
 * TLOG_ENODEVICE where no queue family of the device writes timestamps or
 * the loader lacks a function the library needs; TLOG_EDEVICE if the
 * device was lost meanwhile. Destroy it (tlog_device_destroy, or with its
 * log) before the VkDevice, once no submitted command buffer holding its
 * scopes is still running.
 */
TLOG_API int tlog_vk_device_create(tlog_log *log, const tlog_vk_target *target,
                                   const tlog_device_config *config,
                                   tlog_device **out) TLOG_NOEXCEPT;

/* Device scopes skipped because their device was NULL. */
TLOG_API uint64_t tlog_vk_scopes_untimed(void) TLOG_NOEXCEPT;

/* Opens a device scope on command buffer `cmd`, which must be recording
 * (checks the site's level); close it with tlog_device_end on the same
 * command buffer. A NULL `dev` gives an empty scope and is counted here; a
 * NULL `cmd` has no default and is refused (scopes_failed). */
TLOG_API tlog_device_scope tlog_vk_begin(tlog_device *dev, VkCommandBuffer cmd,
                                         const tlog_site *site) TLOG_NOEXCEPT;

static inline tlog_device_scope tlog_vk_enter_(tlog_device *dev, VkCommandBuffer cmd,
                                               const tlog_site *site)
{
    tlog_device_scope none = {TIMERLOG_NULL_, 0};
    return TIMERLOG_ON_(*site) ? tlog_vk_begin(dev, cmd, site) : none;
}

#if defined(TIMERLOG_DISABLE)
#define TIMERLOG_VK_SCOPE(dev, cmd, name) ((void)sizeof(dev), (void)sizeof(cmd))
#else
/* A device scope on command buffer `cmd` of `dev` that ends with the
 * enclosing block. */
#define TIMERLOG_VK_SCOPE(dev, cmd, name)                                    \
    TIMERLOG_DEVICE_GUARD_(TLOG_LEVEL_COARSE, tlog_vk_enter_, name, dev, cmd)
#endif

/* A sync scope around the application's own wait on the device: a
 * vkQueueWaitIdle, a vkDeviceWaitIdle, or a vkWaitForFences. The intervals
 * of its frame on `dev` that were complete by its end show under it. */
#define TIMERLOG_VK_SYNC_SCOPE(dev, name) TIMERLOG_SYNC_SCOPE(dev, name)

/* A sync scope around a wait for one command buffer (the fence of the
 * submission that holds it): only that command buffer's intervals show
 * under it. */
#define TIMERLOG_VK_SYNC_CMD_SCOPE(dev, cmd, name)                           \
    TIMERLOG_SYNC_QUEUE_SCOPE(dev, (void *)(cmd), name)

#ifdef __cplusplus
}
#endif

#endif
