/*
 * libtimerlog-sim: a simulated asynchronous device.
 *
 * Queues of work items (kernels of a set duration, markers) run in order on a
 * worker thread against a device clock: a manual clock that the program
 * moves (tlog_sim_advance), or a clock function such as CLOCK_MONOTONIC for
 * real-time runs. Queues run independently of each other, so work completes
 * out of order across queues. Faults can be injected: markers that never
 * complete, and errors from recording or querying.
 *
 * It backs the tests of every device rule on machines without a GPU, and
 * lets examples show device rows anywhere. A device made from it
 * (tlog_sim_device_create) behaves like a GPU device of libtimerlog.
 *
 * Given a NULL simulator, gate or marker, a function returns TLOG_EINVAL
 * (NULL or 0 where it returns a pointer or a time) or does nothing.
 */
#ifndef TIMERLOG_SIM_H
#define TIMERLOG_SIM_H

#include <stdint.h>

#include "timerlog/timerlog.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tlog_sim tlog_sim;
typedef struct tlog_sim_queue tlog_sim_queue;

/* Reads the device clock in nanoseconds; called from any thread. */
typedef uint64_t (*tlog_sim_clock_fn)(void *user);

typedef struct tlog_sim_config {
    size_t size;              /* sizeof(tlog_sim_config); 0 = current */
    /* NULL selects the manual clock, starting at 0. */
    tlog_sim_clock_fn clock;
    void *clock_user;
    /* Queue time a marker takes after it is reached, as on real devices
     * (about 1.25 us per CUDA event); an empty scope reads this much. */
    uint64_t marker_ns;
} tlog_sim_config;

/* `config` may be NULL for defaults. TLOG_EINVAL (*out NULL) for a NULL out
 * or a size too small to hold `size` itself. */
TLOG_API int tlog_sim_create(const tlog_sim_config *config, tlog_sim **out) TLOG_NOEXCEPT;

/* Destroys the simulator; destroy devices made from it first. */
TLOG_API void tlog_sim_destroy(tlog_sim *sim) TLOG_NOEXCEPT;

/* A new queue, owned by the simulator. NULL if memory ran out. The queue
 * given as NULL to device scopes is the simulator's default queue. */
TLOG_API tlog_sim_queue *tlog_sim_queue_create(tlog_sim *sim) TLOG_NOEXCEPT;

/* Enqueues a kernel that runs for `duration_ns` once the queue reaches it.
 * A NULL queue is the default queue. A kernel that would end past the end
 * of the clock holds its queue for good. */
TLOG_API int tlog_sim_launch(tlog_sim *sim, tlog_sim_queue *queue, uint64_t duration_ns) TLOG_NOEXCEPT;

/*
 * Gates: a queue that reaches a wait for a closed gate stops there until the
 * gate opens, as a GPU queue waits for an event that the host signals. Tests
 * hold a queue with one so that what they enqueue behind it runs back to
 * back, whatever the host's gaps between enqueues.
 */
typedef struct tlog_sim_gate tlog_sim_gate;

/* A new gate, closed; *out is NULL on failure. */
TLOG_API int tlog_sim_gate_create(tlog_sim *sim, tlog_sim_gate **out) TLOG_NOEXCEPT;
/* Puts a wait for `gate` at the end of `queue` (NULL: the default queue). */
TLOG_API int tlog_sim_gate_wait(tlog_sim *sim, tlog_sim_queue *queue,
                                tlog_sim_gate *gate) TLOG_NOEXCEPT;
/* Opens the gate: the waits for it pass, now and until it closes. */
TLOG_API void tlog_sim_gate_open(tlog_sim *sim, tlog_sim_gate *gate) TLOG_NOEXCEPT;
/* Closes it again: waits reached from now on stop. */
TLOG_API void tlog_sim_gate_close(tlog_sim *sim, tlog_sim_gate *gate) TLOG_NOEXCEPT;
/* Opens the gate for good and lets go of it; waits still queued pass. */
TLOG_API void tlog_sim_gate_destroy(tlog_sim *sim, tlog_sim_gate *gate) TLOG_NOEXCEPT;
/* Holds `queue` here: a new closed gate, waited for at the end of `queue`
 * (NULL: the default queue). Destroying the gate releases the queue. */
TLOG_API int tlog_sim_hold(tlog_sim *sim, tlog_sim_queue *queue,
                           tlog_sim_gate **out) TLOG_NOEXCEPT;

/* The application's own wait for everything enqueued on `queue` so far (what
 * cudaStreamSynchronize is to CUDA). With the manual clock, the clock moves
 * to when the queue drains. Not counted as a library wait. */
TLOG_API int tlog_sim_queue_sync(tlog_sim *sim, tlog_sim_queue *queue) TLOG_NOEXCEPT;

/* Manual clock: moves it forward, stopping at UINT64_MAX / reads it.
 * tlog_sim_now also reads a custom clock. */
TLOG_API void tlog_sim_advance(tlog_sim *sim, uint64_t ns) TLOG_NOEXCEPT;
TLOG_API uint64_t tlog_sim_now(tlog_sim *sim) TLOG_NOEXCEPT;

/* The simulator's clock as a tlog_clock_fn (user = the simulator): give it
 * to tlog_config.clock so host and device share one timeline in tests. */
TLOG_API tlog_ticks tlog_sim_clock(void *sim) TLOG_NOEXCEPT;

/* Waits until the worker has run everything due by the current time: after
 * it, queries see all work that has completed. For tests. */
TLOG_API void tlog_sim_settle(tlog_sim *sim) TLOG_NOEXCEPT;

enum tlog_sim_fault {
    TLOG_SIM_FAULT_HANG = 1,         /* the next recorded markers never
                                      * complete; their queues go on */
    TLOG_SIM_FAULT_RECORD_ERROR = 2, /* the next records fail */
    TLOG_SIM_FAULT_QUERY_ERROR = 3,  /* the next queries fail */
    TLOG_SIM_FAULT_CAPTURE = 4,      /* the next records find the queue captured */
    TLOG_SIM_FAULT_STALL = 5         /* the next recorded marker halts its
                                      * queue for good, as a hung device does:
                                      * neither it nor anything after it
                                      * completes (that queue never drains) */
};

/* Arms `count` occurrences of a fault, counted on the application's queues
 * only (the library's own queue is spared); counts add up to at most
 * UINT_MAX. TLOG_EINVAL for a fault not listed above. */
TLOG_API int tlog_sim_inject(tlog_sim *sim, int fault, unsigned count) TLOG_NOEXCEPT;

typedef struct tlog_sim_stats {
    size_t size;
    uint64_t records;        /* markers recorded (all queues) */
    uint64_t queries;        /* non-blocking queries */
    uint64_t waits;          /* blocking waits on markers */
    uint64_t elapsed;        /* elapsed-time reads */
    uint64_t markers_live;   /* created and not destroyed */
    uint64_t markers_created;
    /* Markers recorded again while still in flight: the first timestamp is
     * lost (as on a GPU). libtimerlog must keep this at 0. */
    uint64_t rerecords_in_flight;
} tlog_sim_stats;

TLOG_API int tlog_sim_get_stats(tlog_sim *sim, tlog_sim_stats *out) TLOG_NOEXCEPT;

/*
 * The simulator's markers, for test runtimes that present the simulator
 * through a vendor API (an event of a test HIP runtime, a timestamp of a
 * test Level Zero driver). A marker is reached when its queue gets to it;
 * its time is the device clock then. Record, query and wait count in the
 * stats and take injected faults like the markers of a simulated device.
 */
typedef struct tlog_sim_marker tlog_sim_marker;

/* *out is NULL on failure. */
TLOG_API int tlog_sim_marker_create(tlog_sim *sim, tlog_sim_marker **out) TLOG_NOEXCEPT;
/* Allowed while the marker is in flight: its queue forgets it. */
TLOG_API void tlog_sim_marker_destroy(tlog_sim *sim, tlog_sim_marker *marker) TLOG_NOEXCEPT;
/* Puts the marker at the end of `queue` (NULL: the default queue). */
TLOG_API int tlog_sim_marker_record(tlog_sim *sim, tlog_sim_queue *queue,
                                    tlog_sim_marker *marker) TLOG_NOEXCEPT;
/* TLOG_OK once reached (or never recorded), TLOG_PENDING-like 1 before. */
TLOG_API int tlog_sim_marker_query(tlog_sim *sim, tlog_sim_marker *marker) TLOG_NOEXCEPT;
/* Blocks until reached, at most timeout_ns: TLOG_OK or TLOG_ETIMEDOUT. */
TLOG_API int tlog_sim_marker_wait(tlog_sim *sim, tlog_sim_marker *marker,
                                  uint64_t timeout_ns) TLOG_NOEXCEPT;
/* The device time at which the marker was reached: TLOG_OK, 1 while it is
 * pending, TLOG_EINVAL if it was never recorded. */
TLOG_API int tlog_sim_marker_time(tlog_sim *sim, tlog_sim_marker *marker,
                                  uint64_t *ns) TLOG_NOEXCEPT;

/*
 * A libtimerlog device on the simulator, bound to `log` (NULL: the default
 * log). The simulator must outlive the device. `config` may be NULL.
 * TLOG_EINVAL (*out NULL) for a NULL sim or out, or a bad config.
 */
TLOG_API int tlog_sim_device_create(tlog_sim *sim, tlog_log *log,
                                    const tlog_device_config *config,
                                    tlog_device **out) TLOG_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
