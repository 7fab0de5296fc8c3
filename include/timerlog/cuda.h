/*
 * libtimerlog-cuda: device scopes on CUDA streams (pkg-config timerlog-cuda).
 *
 *     TIMERLOG_CUDA_SCOPE(stream, "Filter 1: GPU Parallel Operation 1");
 *     my_kernel<<<grid, block, 0, stream>>>(...);
 *
 * puts a begin and an end event around the kernel in `stream` and returns at
 * once. Events come from a pool per device, created in batches and reused
 * only after their interval has been read. Nothing here synchronises with
 * the device except the forced sync (tlog_dump, tlog_sync).
 *
 * Streams: a scope is timed on the device that owns its stream. NULL means
 * the legacy default stream (this library is not built for per-thread
 * default streams): on the legacy stream an interval also waits for every
 * blocking stream, so prefer streams created with cudaStreamNonBlocking, or
 * cudaStreamPerThread.
 *
 * Graphs: a scope on a stream that is being captured into a graph is not
 * timed and is counted (tlog_device_info.scopes_captured); the library never
 * records an event into a capture, and it queries and reads events, and
 * sets devices up and tears them down, only from a thread switched to
 * relaxed capture mode, so it never invalidates a capture on any thread. A
 * CUDA call of the library that fails has its error cleared, so that the
 * application never finds it later (a sticky error stays, as CUDA keeps it).
 */
#ifndef TIMERLOG_CUDA_H
#define TIMERLOG_CUDA_H

#include <cuda_runtime_api.h>

#include "timerlog/timerlog.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A device for CUDA device `ordinal`, bound to `log` (NULL: the default
 * log). Creating it takes a few milliseconds: it loads two tiny kernels,
 * measures the empty-scope offset and anchors the GPU clock to the host's.
 * Returns TLOG_ENODEVICE (and reports why) where there is no usable GPU or
 * driver.
 */
TLOG_API int tlog_cuda_device_create(tlog_log *log, int ordinal,
                                     const tlog_device_config *config,
                                     tlog_device **out) TLOG_NOEXCEPT;

/*
 * The default log's device for the GPU that owns `stream`, created with the
 * configuration given to tlog_cuda_configure on first use (not while the
 * stream is being captured). Creating it waits a few milliseconds: call this
 * once at start-up to keep that out of the first frame. NULL where CUDA has
 * no usable device: device scopes then do nothing but count themselves
 * (tlog_cuda_scopes_untimed) and the application keeps running. The device
 * belongs to the library: do not destroy it.
 */
TLOG_API tlog_device *tlog_cuda_device(cudaStream_t stream) TLOG_NOEXCEPT;

/* Sets the configuration of the default log's CUDA devices; call before the
 * first CUDA scope. TLOG_EBUSY if one was already created. */
TLOG_API int tlog_cuda_configure(const tlog_device_config *config) TLOG_NOEXCEPT;

/* Device scopes skipped because CUDA had no usable device. */
TLOG_API uint64_t tlog_cuda_scopes_untimed(void) TLOG_NOEXCEPT;

/* Opens a device scope on `stream` in the default log (checks the site's
 * level); close it with tlog_device_end. */
TLOG_API tlog_device_scope tlog_cuda_begin(cudaStream_t stream, const tlog_site *site) TLOG_NOEXCEPT;

static inline tlog_device_scope tlog_cuda_enter_(cudaStream_t stream, const tlog_site *site)
{
    tlog_device_scope none = {TIMERLOG_NULL_, 0};
    return TIMERLOG_ON_(*site) ? tlog_cuda_begin(stream, site) : none;
}

#if defined(TIMERLOG_DISABLE)
#define TIMERLOG_CUDA_SCOPE(stream, name) ((void)sizeof(stream))
#else
/* A device scope on `stream` that ends with the enclosing block. */
#define TIMERLOG_CUDA_SCOPE(stream, name)                                    \
    TIMERLOG_DEVICE_GUARD_(TLOG_LEVEL_COARSE, tlog_cuda_enter_, name, stream)
#endif

/* A sync scope around the application's own wait on the GPUs (for example a
 * cudaDeviceSynchronize): the intervals of its frame, on every device of
 * the default log, that were complete by its end show under it. */
#define TIMERLOG_CUDA_SYNC_SCOPE(name) TIMERLOG_SYNC_SCOPE(TIMERLOG_NULL_, name)
/* A sync scope around a wait on one stream (cudaStreamSynchronize(stream),
 * cudaEventSynchronize of an event recorded there): only that stream's
 * intervals show under it. */
#define TIMERLOG_CUDA_SYNC_STREAM_SCOPE(stream, name)                        \
    TIMERLOG_SYNC_QUEUE_SCOPE(tlog_cuda_device(stream), (void *)(stream), name)

#ifdef __cplusplus
}
#endif

#endif
