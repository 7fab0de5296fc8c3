/*
 * The test HIP runtime: the HIP entry points libtimerlog-hip uses, on the
 * simulated device, built as a stand-in for libamdhip64 in the backend's
 * tests. These are its hooks for the tests themselves.
 *
 * Its devices (TLOG_TEST_HIP_DEVICES, default 1; 0 behaves like a machine
 * without /dev/kfd) share one simulator on CLOCK_MONOTONIC, where each
 * event takes 1 us of queue time. At most TLOG_TEST_HIP_MAX_EVENTS events
 * (default 4096, the KFD signal budget) live at once; creating more fails
 * with hipErrorOutOfMemory. Both variables are read once, at the first call.
 */
#ifndef TIMERLOG_HIP_TEST_RUNTIME_H
#define TIMERLOG_HIP_TEST_RUNTIME_H

#include <stdint.h>

#include <hip/hip_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues work of `ns` nanoseconds on `stream` (NULL, hipStreamPerThread or
 * a created stream), as the tests' stand-in for a kernel launch. On a stream
 * being captured the work goes into the graph: it does not run. */
hipError_t tlog_test_hip_launch(hipStream_t stream, uint64_t ns);

/* Stops a created stream at this point until tlog_test_hip_release, as a
 * wait for a value that the host writes would: what is enqueued meanwhile
 * runs back to back. One hold at a time per stream. */
hipError_t tlog_test_hip_hold(hipStream_t stream);
hipError_t tlog_test_hip_release(hipStream_t stream);

/* Makes every hipEventRecord sleep `ns` first, as a slow host would (0:
 * none). */
void tlog_test_hip_set_record_delay(uint64_t ns);

/* Marks `stream` as being captured into a graph (1) or not (0): records on
 * it then fail with hipErrorStreamCaptureUnsupported and
 * hipStreamIsCapturing reports hipStreamCaptureStatusActive. The null
 * stream cannot be captured (hipErrorStreamCaptureUnsupported). */
hipError_t tlog_test_hip_set_capturing(hipStream_t stream, int capturing);

/* Arms `count` more occurrences of a simulator fault (enum tlog_sim_fault in
 * timerlog/sim.h), taken by the next calls on any stream or event:
 *  - TLOG_SIM_FAULT_QUERY_ERROR (3): an hipEventQuery fails with
 *    hipErrorLaunchFailure, and that event keeps failing (query,
 *    synchronize, elapsed time) until it is recorded again, as a device
 *    error stays on a GPU;
 *  - TLOG_SIM_FAULT_RECORD_ERROR (2): an hipEventRecord fails with
 *    hipErrorLaunchFailure; TLOG_SIM_FAULT_CAPTURE (4): with
 *    hipErrorStreamCaptureUnsupported;
 *  - TLOG_SIM_FAULT_HANG (1), TLOG_SIM_FAULT_STALL (5): recorded events stay
 *    pending for good (STALL halts the event's stream too).
 * Counts add up: a count of 0 changes nothing. Returns 0 or a negative
 * libtimerlog code (TLOG_EINVAL without devices). */
int tlog_test_hip_inject(int fault, unsigned count);

typedef struct tlog_test_hip_stats {
    uint64_t events_live;      /* created and not destroyed */
    uint64_t events_max_live;  /* the most ever live at once */
    uint64_t events_created;   /* successful creations */
    uint64_t records;          /* hipEventRecord calls on a valid event,
                                * whatever their outcome (a record refused
                                * for a capture counts) */
    uint64_t queries;          /* hipEventQuery calls on a valid event */
    uint64_t syncs;            /* hipEventSynchronize, hipStreamSynchronize and
                                * hipDeviceSynchronize calls */
    uint64_t rerecords_in_flight; /* events recorded again while still pending
                                * (undefined in HIP: the first timestamp is
                                * lost) */
    uint64_t capture_mode_exchanges; /* hipThreadExchangeStreamCaptureMode calls */
    uint64_t callbacks;        /* host callbacks enqueued (hipStreamAddCallback) */
} tlog_test_hip_stats;

/* The counters since the process started. */
void tlog_test_hip_get_stats(tlog_test_hip_stats *out);

#ifdef __cplusplus
}
#endif

#endif
