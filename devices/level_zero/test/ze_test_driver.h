/*
 * The test Level Zero driver: a driver for the real loader (point
 * ZE_ENABLE_ALT_DRIVERS at it) with the simulated device behind it. These
 * are its hooks for the tests, found with dlsym on the library the loader
 * loaded (dlopen of the same path with RTLD_NOLOAD).
 *
 * Its devices (TLOG_TEST_ZE_DEVICES, default 1; 0: a driver without
 * devices) share one simulator on CLOCK_MONOTONIC. Their timestamp counter
 * runs at TLOG_TEST_ZE_RESOLUTION_NS nanoseconds per tick (default
 * 83.333333333, 12 MHz), keeps TLOG_TEST_ZE_VALID_BITS bits (default 36) and
 * reads TLOG_TEST_ZE_START_TICKS (default 0) when the driver is set up. The
 * variables are read once, at the first call.
 *
 * Commands wait for the events they name as long as the host has not
 * signalled them; waiting for an event that a command has yet to signal is
 * beyond this driver (ZE_RESULT_ERROR_UNSUPPORTED_FEATURE).
 *
 * Commands only start in order: a global timestamp written with no barrier
 * between it and the kernel before it takes its value when that kernel
 * starts, as the specification allows.
 */
#ifndef TIMERLOG_ZE_TEST_DRIVER_H
#define TIMERLOG_ZE_TEST_DRIVER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Counters since the process started. Commands count when they run on the
 * device: at append time on an immediate list, at each execution of a
 * regular list. */
typedef struct tlog_test_ze_stats {
    uint64_t barriers;          /* barriers run */
    uint64_t timestamps;        /* global timestamp writes run */
    uint64_t kernels;           /* kernels run */
    uint64_t executions;        /* regular lists executed by a command queue
                                 * (one per list, not per call) */
    uint64_t overlapped_timestamps; /* timestamp writes run beside a kernel
                                 * (no barrier since the last kernel of their
                                 * list or queue): their value is that
                                 * kernel's start */
    uint64_t events_live;       /* events created and not destroyed */
    uint64_t events_max_live;   /* the most ever live at once */
    uint64_t queries;           /* zeEventQueryStatus calls on a valid event */
    uint64_t host_syncs;        /* zeEventHostSynchronize calls on a valid
                                 * event (zeCommandQueueSynchronize is not
                                 * counted) */
    uint64_t resets_in_flight;  /* zeEventHostReset of an event whose
                                 * signalling command had not completed */
    uint64_t resignals;         /* events signalled again (by a command that
                                 * ran, or from the host) before being reset */
    uint64_t get_global_timestamps; /* zeDeviceGetGlobalTimestamps calls */
    uint64_t host_event_waits;  /* commands run that found an event they wait
                                 * for unsignalled, and so wait for the host
                                 * to signal it */
} tlog_test_ze_stats;

/* Copies the counters into *out. */
void tlog_test_ze_get_stats(tlog_test_ze_stats *out);

/* Makes every append sleep `ns` first, as a slow host would (0: none). */
void tlog_test_ze_set_append_delay(uint64_t ns);

/* Arms `count` more occurrences of a simulator fault (enum tlog_sim_fault in
 * timerlog/sim.h), taken by the driver's next markers. Markers are recorded
 * by every kernel (its start), every command with a signal event (its
 * completion), every timestamp write beside no kernel, and every
 * zeCommandQueueSynchronize.
 *  - TLOG_SIM_FAULT_QUERY_ERROR (3): the next zeEventQueryStatus or
 *    zeEventHostSynchronize of an event that a command signalled fails with
 *    ZE_RESULT_ERROR_DEVICE_LOST, and that event keeps failing (query,
 *    host synchronize) until it is reset or a command signals it again;
 *  - TLOG_SIM_FAULT_RECORD_ERROR (2), TLOG_SIM_FAULT_CAPTURE (4): the next
 *    command that records a marker fails with ZE_RESULT_ERROR_DEVICE_LOST;
 *  - TLOG_SIM_FAULT_HANG (1): the next marker never completes (its event
 *    stays unsignalled); TLOG_SIM_FAULT_STALL (5): nor does anything after
 *    it on the same list or queue.
 * Counts add up. Returns 0 or a negative libtimerlog code. */
int tlog_test_ze_inject(int fault, unsigned count);

#ifdef __cplusplus
}
#endif

#endif
