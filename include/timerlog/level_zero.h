/*
 * libtimerlog-level-zero: device scopes on Level Zero command lists
 * (pkg-config timerlog-level-zero).
 *
 *     TIMERLOG_ZE_SCOPE(dev, list, "Filter 1: GPU Parallel Operation 1");
 *     zeCommandListAppendLaunchKernel(list, kernel, &groups, NULL, 0, NULL);
 *
 * appends a begin and an end timestamp around the kernel to `list` and
 * returns at once. Each timestamp is a barrier followed by
 * zeCommandListAppendWriteGlobalTimestamp into host memory, with a plain
 * event signalled when the write lands. Level Zero only promises that
 * commands start in order, so without the barrier a timestamp could be
 * written while the work before it still runs; with it, the begin follows
 * the work before the scope and the end follows the scope's own work. The
 * cost: work on either side of a scope boundary does not overlap, which is
 * what attributing every interval to one scope needs anyway.
 *
 * Why global timestamps rather than kernel-timestamp events: they mark a
 * point between any two commands, not the span of one; the event pools stay
 * free of ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, which makes every
 * zeEventQueryStatus costly on some drivers; and they count on the clock
 * that zeDeviceGetGlobalTimestamps reads, which anchors them to the host
 * timeline directly, every frame, with no round trip through a queue.
 * Ticks become nanoseconds with the device's timerResolution; differences
 * are taken modulo its timestampValidBits, so the counter may wrap (every
 * 6 minutes at 32 bits and 12 MHz) as long as no single interval, and no
 * frame, lasts half a wrap period.
 *
 * Command lists:
 *  - immediate lists run the timestamps as they are appended; in synchronous
 *    mode each append blocks, so use asynchronous (or default) mode;
 *  - a regular list's timestamps are written when the application executes
 *    it; until then its intervals are pending and its frame waits, and a
 *    forced sync gives up at the log's sync_timeout_ns and shows them
 *    unresolved. Execute each list holding scopes once per recording: a
 *    list executed again writes timestamps into markers already read and
 *    reused (reset and record it anew instead);
 *  - lists must belong to the device's context (memory for the timestamps
 *    is allocated there).
 *
 * Nothing here blocks on the device except the forced sync, which waits on
 * the events with zeEventHostSynchronize.
 */
#ifndef TIMERLOG_LEVEL_ZERO_H
#define TIMERLOG_LEVEL_ZERO_H

#include <level_zero/ze_api.h>

#include "timerlog/timerlog.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A device for Level Zero `device` in `context` (the context of the command
 * lists its scopes go into), bound to `log` (NULL: the default log). With
 * both NULL: the first GPU of the first driver, in a context of the
 * device's own (tlog_ze_context). Calls zeInit itself. Returns
 * TLOG_ENODEVICE (and reports why) when Level Zero has no driver or no GPU;
 * device scopes on a NULL device then only count themselves.
 */
TLOG_API int tlog_ze_device_create(tlog_log *log, ze_context_handle_t context,
                                   ze_device_handle_t device,
                                   const tlog_device_config *config,
                                   tlog_device **out) TLOG_NOEXCEPT;

/* The context `dev` allocates in: the one given, or its own. NULL for a
 * device of another backend. */
TLOG_API ze_context_handle_t tlog_ze_context(const tlog_device *dev) TLOG_NOEXCEPT;

/* Device scopes skipped because their device was NULL. */
TLOG_API uint64_t tlog_ze_scopes_untimed(void) TLOG_NOEXCEPT;

/* Opens a device scope on `list` (checks the site's level); close it with
 * tlog_device_end. A NULL `dev` gives an empty scope and is counted here; a
 * NULL `list` has no default and is refused (scopes_failed). */
TLOG_API tlog_device_scope tlog_ze_begin(tlog_device *dev, ze_command_list_handle_t list,
                                         const tlog_site *site) TLOG_NOEXCEPT;

static inline tlog_device_scope tlog_ze_enter_(tlog_device *dev,
                                               ze_command_list_handle_t list,
                                               const tlog_site *site)
{
    tlog_device_scope none = {TIMERLOG_NULL_, 0};
    return TIMERLOG_ON_(*site) ? tlog_ze_begin(dev, list, site) : none;
}

#if defined(TIMERLOG_DISABLE)
#define TIMERLOG_ZE_SCOPE(dev, list, name) ((void)sizeof(dev), (void)sizeof(list))
#else
/* A device scope on `list` of `dev` that ends with the enclosing block. */
#define TIMERLOG_ZE_SCOPE(dev, list, name)                                   \
    TIMERLOG_DEVICE_GUARD_(TLOG_LEVEL_COARSE, tlog_ze_enter_, name, dev, list)
#endif

/* A sync scope around a wait for the work recorded on `list` of `dev` (a
 * zeCommandQueueSynchronize of the queue it ran on, an event signalled at
 * its end): only that list's intervals show under it. */
#define TIMERLOG_ZE_SYNC_LIST_SCOPE(dev, list, name)                         \
    TIMERLOG_SYNC_QUEUE_SCOPE(dev, (void *)(list), name)

#ifdef __cplusplus
}
#endif

#endif
