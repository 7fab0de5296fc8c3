/*
 * The test CUDA runtime: the CUDA runtime calls that libtimerlog-cuda and
 * its tests make, on the simulated device, built as a stand-in for the
 * toolkit's libcudart (same soname and symbol version) in the backend's
 * tests. These are its hooks for the tests themselves; the CUDA calls are
 * declared by cuda_runtime_api.h as usual.
 *
 * Its devices (TLOG_TEST_CUDA_DEVICES, default 1; 0 behaves like a machine
 * without a GPU) each have a simulator and a clock of their own: device d
 * counts from d x 1000 s and runs d x 50 ppm fast against CLOCK_MONOTONIC.
 * An event takes 1 us of its stream's time; cudaEventElapsedTime reads to
 * 0.5 us, CUDA's documented resolution. Kernels come from PTX text
 * (cudaLibraryLoadData): a kernel whose first parameter is a .u64 named
 * *_ns runs that many nanoseconds, any other kernel 0. The variable is read
 * once, at the first call.
 */
#ifndef TIMERLOG_CUDA_TEST_RUNTIME_H
#define TIMERLOG_CUDA_TEST_RUNTIME_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues work of `ns` nanoseconds on `stream`, as the tests' stand-in
 * for a kernel launch: on a stream being captured it becomes a node of the
 * graph and does not run, and on the legacy stream beside a captured
 * blocking stream it is refused, as a launch is. Unlike cudaLaunchKernel it
 * takes a stream of any device, whatever the current one. */
cudaError_t tlog_test_cuda_launch(cudaStream_t stream, uint64_t ns);

/* Stops a created stream at this point until tlog_test_cuda_release, as a
 * wait for a value that the host writes would: what is enqueued meanwhile
 * runs back to back. One hold at a time per stream. Blocking streams share
 * the legacy stream's queue, so holding one holds them all. */
cudaError_t tlog_test_cuda_hold(cudaStream_t stream);
cudaError_t tlog_test_cuda_release(cudaStream_t stream);

/* Makes every cudaEventRecord spend `ns` of host time first, as a slow host
 * would (0: none). */
void tlog_test_cuda_set_record_delay(uint64_t ns);

/* Arms `count` more occurrences of a simulator fault (enum tlog_sim_fault in
 * timerlog/sim.h), taken by the next calls on any device:
 *  - TLOG_SIM_FAULT_RECORD_ERROR (2): a cudaEventRecord fails with
 *    cudaErrorInvalidResourceHandle and records nothing (a non-sticky
 *    error: the next calls work);
 *  - TLOG_SIM_FAULT_QUERY_ERROR (3): a cudaEventQuery returns
 *    cudaErrorLaunchFailure and the event's device is lost: a sticky error,
 *    returned from then on by every call on that device and by
 *    cudaGetLastError while it is the current one, as after a kernel fault;
 *  - TLOG_SIM_FAULT_CAPTURE (4): a cudaEventRecord finds its stream being
 *    captured, as when another thread begins a capture between
 *    cudaStreamIsCapturing and the record: it succeeds, and the event is
 *    left in the capture (cudaErrorCapturedEvent from its queries and
 *    elapsed times until it is recorded again);
 *  - TLOG_SIM_FAULT_HANG (1): a recorded event never completes, while its
 *    stream goes on; TLOG_SIM_FAULT_STALL (5): the stream halts for good at
 *    the event, which never completes.
 * Counts add up: a count of 0 changes nothing. Returns 0 or a negative
 * libtimerlog code (TLOG_EINVAL for an unknown fault or without devices). */
int tlog_test_cuda_inject(int fault, unsigned count);

typedef struct tlog_test_cuda_stats {
    uint64_t events_live;      /* created and not destroyed */
    uint64_t events_max_live;  /* the most ever live at once */
    uint64_t events_created;   /* successful creations */
    uint64_t records;          /* cudaEventRecord calls on a valid event */
    uint64_t records_captured; /* of them, records that went into a capture */
    uint64_t queries;          /* cudaEventQuery calls on a valid event */
    uint64_t syncs;            /* cudaEventSynchronize, cudaStreamSynchronize and
                                * cudaDeviceSynchronize calls */
    uint64_t launches;         /* kernels and tlog_test_cuda_launch work that
                                * ran (not captured) */
    uint64_t rerecords_in_flight; /* events recorded again while still pending
                                * (the first timestamp is lost) */
    uint64_t capture_mode_exchanges; /* cudaThreadExchangeStreamCaptureMode calls */
    uint64_t captures_invalidated;   /* capture sequences invalidated by a call
                                * that broke the rules of stream capture */
} tlog_test_cuda_stats;

/* The counters since the process started. */
void tlog_test_cuda_get_stats(tlog_test_cuda_stats *out);

#ifdef __cplusplus
}
#endif

#endif
