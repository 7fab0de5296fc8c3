/*
 * libtimerlog-hip: device scopes on HIP streams (pkg-config timerlog-hip).
 *
 *     TIMERLOG_HIP_SCOPE(stream, "Filter 1: GPU Parallel Operation 1");
 *     hipLaunchKernelGGL(my_kernel, grid, block, 0, stream, ...);
 *
 * puts a begin and an end event around the kernel in `stream` and returns at
 * once. Events come from a pool per device, created in batches and reused
 * only after their interval has been read (HIP leaves re-recording a pending
 * event undefined). Nothing here synchronises with the device except the
 * forced sync (tlog_dump, tlog_sync), which polls hipEventQuery.
 *
 * Live events: ROCm backs events with HSA signals, and the kernel driver
 * gives a process 4096 interrupt signals in all, shared with the
 * application and the runtime; past that, waits fall back to polling and
 * unrelated queue operations can fail. So a device holds at most
 * 2 x max_scopes + 2 events: max_scopes defaults to 512 here (1024 events)
 * and is capped at 1000; and all HIP devices of the process together hold
 * at most 2048 events, half the budget. Device scopes beyond either limit
 * are dropped and counted (tlog_device_info.scopes_dropped), never waited
 * for.
 *
 * Streams: HIP 5.2 cannot tell which device owns a stream, so a scope is
 * timed on the calling thread's current device (hipSetDevice); record on a
 * stream of that device. NULL is the null stream; prefer streams created
 * with hipStreamNonBlocking (recording on a blocking stream costs more the
 * more streams exist) or hipStreamPerThread.
 *
 * Graphs: a scope on a stream that is being captured is not timed and is
 * counted (tlog_device_info.scopes_captured). Queries run with the thread in
 * relaxed capture mode; on ROCm before 7.2 a query still invalidates a
 * capture running on another thread, so there resolve (sync scopes,
 * tlog_frame_ready, tlog_dump) outside capture windows.
 *
 * Platforms: AMD GPUs. The header selects __HIP_PLATFORM_AMD__ when no
 * platform was chosen; on NVIDIA GPUs use libtimerlog-cuda.
 */
#ifndef TIMERLOG_HIP_H
#define TIMERLOG_HIP_H

#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

#include "timerlog/timerlog.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A device for HIP device `ordinal`, bound to `log` (NULL: the default log).
 * Creating it measures the empty-scope offset and anchors the GPU clock to
 * the host's (a few milliseconds). Returns TLOG_ENODEVICE (and reports why)
 * where HIP has no usable GPU.
 */
TLOG_API int tlog_hip_device_create(tlog_log *log, int ordinal,
                                    const tlog_device_config *config,
                                    tlog_device **out) TLOG_NOEXCEPT;

/*
 * The default log's device for the calling thread's current HIP device,
 * created with the configuration given to tlog_hip_configure on first use
 * (not while `stream` is being captured). Call it once at start-up to keep
 * the set-up out of the first frame. NULL where HIP has no usable device:
 * device scopes then do nothing but count themselves
 * (tlog_hip_scopes_untimed) and the application keeps running. The device
 * belongs to the library: do not destroy it.
 */
TLOG_API tlog_device *tlog_hip_device(hipStream_t stream) TLOG_NOEXCEPT;

/* Sets the configuration of the default log's HIP devices; call before the
 * first HIP scope. TLOG_EBUSY if one was already created. */
TLOG_API int tlog_hip_configure(const tlog_device_config *config) TLOG_NOEXCEPT;

/* Device scopes skipped because HIP had no usable device. */
TLOG_API uint64_t tlog_hip_scopes_untimed(void) TLOG_NOEXCEPT;

/* Opens a device scope on `stream` in the default log (checks the site's
 * level); close it with tlog_device_end. */
TLOG_API tlog_device_scope tlog_hip_begin(hipStream_t stream, const tlog_site *site) TLOG_NOEXCEPT;

static inline tlog_device_scope tlog_hip_enter_(hipStream_t stream, const tlog_site *site)
{
    tlog_device_scope none = {TIMERLOG_NULL_, 0};
    return TIMERLOG_ON_(*site) ? tlog_hip_begin(stream, site) : none;
}

#if defined(TIMERLOG_DISABLE)
#define TIMERLOG_HIP_SCOPE(stream, name) ((void)sizeof(stream))
#else
/* A device scope on `stream` that ends with the enclosing block. */
#define TIMERLOG_HIP_SCOPE(stream, name)                                     \
    TIMERLOG_DEVICE_GUARD_(TLOG_LEVEL_COARSE, tlog_hip_enter_, name, stream)
#endif

/* A sync scope around the application's own wait on the GPUs (for example a
 * hipDeviceSynchronize): the intervals of its frame, on every device of the
 * default log, that were complete by its end show under it. */
#define TIMERLOG_HIP_SYNC_SCOPE(name) TIMERLOG_SYNC_SCOPE(TIMERLOG_NULL_, name)
/* A sync scope around a wait on one stream (hipStreamSynchronize): only
 * that stream's intervals show under it. */
#define TIMERLOG_HIP_SYNC_STREAM_SCOPE(stream, name)                         \
    TIMERLOG_SYNC_QUEUE_SCOPE(tlog_hip_device(stream), (void *)(stream), name)

#ifdef __cplusplus
}
#endif

#endif
