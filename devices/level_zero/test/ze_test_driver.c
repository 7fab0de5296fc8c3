/*
 * The test Level Zero driver: the entry points libtimerlog-level-zero and its
 * tests use, on the simulated device, built as a driver that the real loader
 * loads through ZE_ENABLE_ALT_DRIVERS (see ze_test_driver.h for its hooks).
 *
 * What it keeps of Level Zero 1.4:
 *  - one driver; devices counted by TLOG_TEST_ZE_DEVICES, each with a
 *    timestamp counter of its own width, resolution and start (the
 *    TLOG_TEST_ZE_* variables) on the simulator's clock;
 *  - command lists: regular ones record their commands and run them each
 *    time a command queue executes them; immediate ones run each command as
 *    it is appended. A command queue or an immediate list is an in-order
 *    simulator queue. A command waits for the events it names until the host
 *    signals them (a gate of the simulator); waiting for an event that a
 *    command has yet to signal is not supported;
 *  - kernels of a module that run for groupCountX * groupCountY *
 *    groupCountZ microseconds;
 *  - the specification's ordering, which only says that commands START in
 *    order. A global timestamp appended after a kernel with no barrier
 *    between them runs beside that kernel: its value is the kernel's start.
 *    A barrier makes what follows wait for what came before;
 *  - events signalled when their command completes, from the host, or
 *    never (a regular list never executed); resetting one whose command is
 *    still running, and signalling one again before a reset, are counted;
 *  - device loss, injected as simulator query faults: the event whose query
 *    took one reads ZE_RESULT_ERROR_DEVICE_LOST until it is reset or a
 *    command signals it again;
 *  - host memory, into which timestamps are written. A write is stored once
 *    its command has completed, lazily: before any query or synchronize
 *    reports completion, and never after it (the memory may be freed then).
 *
 * Every simulator marker is reference-counted: a timestamp written beside a
 * kernel, its event and the list's "last kernel" all hold that kernel's start
 * marker. One mutex guards the bookkeeping; nothing waits while holding it.
 * The simulator is created at the first call and lives until the process
 * ends; so do the queues it owns.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "timerlog/sim.h"
#include "ze_test_driver.h"

/* Built with -fvisibility=hidden: the table getters and the hooks are the
 * library's interface. */
#define API __attribute__((visibility("default")))

#define MAX_DEVICES 16
#define MARKER_NS 1000u
#define SIM_PENDING 1                 /* the simulator's "not yet" */
#define FOREVER_NS (UINT64_C(1) << 62)
#define DEVICE_NAME "timerlog test Level Zero device"

enum {
    DRIVER_MAGIC = 0x5a454452,        /* "ZEDR" */
    DEVICE_MAGIC = 0x5a454456,
    CONTEXT_MAGIC = 0x5a454358,
    QUEUE_MAGIC = 0x5a455155,
    LIST_MAGIC = 0x5a454c53,
    POOL_MAGIC = 0x5a455050,
    EVENT_MAGIC = 0x5a454556,
    MODULE_MAGIC = 0x5a454d44,
    KERNEL_MAGIC = 0x5a454b4e,
};

/* ------------------------------------------------------------------------ */
/* Objects                                                                  */
/* ------------------------------------------------------------------------ */

/* A simulator marker shared by whoever needs its time or completion. */
typedef struct mref {
    tlog_sim_marker *m;
    unsigned refs;
} mref;

/* What runs commands in order: an immediate list, or a command queue
 * replaying regular lists. */
typedef struct stream {
    tlog_sim_queue *queue;
    mref *last_kernel_start;   /* reached just before the last kernel began */
    bool kernel_since_barrier;
    bool synchronous;          /* ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS */
} stream;

typedef enum { CMD_KERNEL, CMD_BARRIER, CMD_TIMESTAMP, CMD_SIGNAL, CMD_WAIT } cmd_kind;

#define MAX_WAITS 8            /* events a command may wait for */

typedef struct command {
    cmd_kind kind;
    uint64_t ns;               /* kernels */
    uint64_t *dst;             /* timestamps */
    ze_event_handle_t signal;  /* holds a reference while recorded */
    ze_event_handle_t waits[MAX_WAITS]; /* likewise */
    uint32_t nwait;
} command;

/* A timestamp written once its marker is reached: value = ticks(time). */
typedef struct pending {
    struct pending *next;
    uint64_t *dst;
    mref *m;
} pending;

typedef struct alloc {
    struct alloc *next;
    void *p;
    size_t size;
} alloc;

struct _ze_driver_handle_t {
    uint32_t magic;
};

struct _ze_device_handle_t {
    uint32_t magic;
    uint32_t index;
};

/* Contexts stay listed until destroyed, as a driver keeps them: one an
 * application leaves (libtimerlog-level-zero keeps its own while a list may
 * still write its memory) is no leak. */
struct _ze_context_handle_t {
    uint32_t magic;
    ze_context_handle_t prev, next;
};

struct _ze_module_handle_t {
    uint32_t magic;
};

struct _ze_kernel_handle_t {
    uint32_t magic;
    char *name;
};

struct _ze_command_queue_handle_t {
    uint32_t magic;
    stream s;
};

struct _ze_command_list_handle_t {
    uint32_t magic;
    bool immediate;
    bool closed;
    stream s;                  /* immediate lists */
    command *cmds;             /* regular lists */
    size_t n, cap;
};

struct _ze_event_pool_handle_t {
    uint32_t magic;
    uint32_t count;
};

struct _ze_event_handle_t {
    uint32_t magic;
    bool destroyed;
    unsigned refs;             /* the handle's own, and one per recorded command */
    bool host_signalled;
    bool lost;                 /* a query took a device error: sticky until the
                                * event is reset or signalled by a command */
    mref *done;                /* a command ran to signal it: its completion */
    tlog_sim_gate *gate;       /* open while host-signalled; queues that wait
                                * for the event wait for it */
};

static struct {
    pthread_mutex_t lock;      /* everything below, and every object */
    pthread_cond_t changed;    /* an event was signalled or a command armed one */
    tlog_sim *sim;
    uint64_t base_ns;          /* CLOCK_MONOTONIC when set up: device time 0 */
    uint32_t devices;
    uint32_t valid_bits;
    uint64_t mask;
    double res_ns;
    uint64_t start_ticks;
    pending *writes, **writes_tail;
    alloc *allocs;             /* host memory, until freed */
    ze_context_handle_t contexts;
    tlog_test_ze_stats stats;
    _Atomic uint64_t append_delay_ns;
} drv = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static struct _ze_driver_handle_t the_driver = {DRIVER_MAGIC};
static struct _ze_device_handle_t the_devices[MAX_DEVICES];

#define STAT(f) (drv.stats.f++)

/* ------------------------------------------------------------------------ */
/* Setup and the clock                                                      */
/* ------------------------------------------------------------------------ */

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t device_clock(void *user)
{
    (void)user;
    return clock_ns(CLOCK_MONOTONIC) - drv.base_ns;
}

static uint64_t env_u64(const char *name, uint64_t fallback)
{
    const char *s = getenv(name);
    char *end = NULL;
    if (!s || !*s)
        return fallback;
    unsigned long long v = strtoull(s, &end, 0);
    return *end ? fallback : (uint64_t)v;
}

static void setup(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&drv.changed, &attr);
    pthread_condattr_destroy(&attr);

    uint64_t n = env_u64("TLOG_TEST_ZE_DEVICES", 1);
    drv.devices = (uint32_t)(n > MAX_DEVICES ? MAX_DEVICES : n);
    uint64_t bits = env_u64("TLOG_TEST_ZE_VALID_BITS", 36);
    drv.valid_bits = (uint32_t)(bits > 64 ? 64 : bits);
    drv.mask = drv.valid_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << drv.valid_bits) - 1;
    drv.res_ns = 1e9 / 12e6;
    const char *res = getenv("TLOG_TEST_ZE_RESOLUTION_NS");
    if (res && *res) {
        char *end = NULL;
        double v = strtod(res, &end);
        if (!*end && v >= 1e-3 && v < 1e12)
            drv.res_ns = v;
    }
    drv.start_ticks = env_u64("TLOG_TEST_ZE_START_TICKS", 0);
    for (uint32_t i = 0; i < MAX_DEVICES; i++)
        the_devices[i] = (struct _ze_device_handle_t){DEVICE_MAGIC, i};
    drv.writes_tail = &drv.writes;

    drv.base_ns = clock_ns(CLOCK_MONOTONIC);
    tlog_sim_config cfg = {.size = sizeof cfg, .clock = device_clock, .marker_ns = MARKER_NS};
    tlog_sim *sim = NULL;
    if (tlog_sim_create(&cfg, &sim) == TLOG_OK)
        drv.sim = sim;
}

static bool ready(void)
{
    pthread_once(&drv_once, setup);
    return drv.sim != NULL;
}

/* The device counter at device time t_ns. */
static uint64_t ticks(uint64_t t_ns)
{
    return (drv.start_ticks + (uint64_t)((double)t_ns / drv.res_ns)) & drv.mask;
}

#define READY()                                                               \
    do {                                                                      \
        if (!ready())                                                         \
            return ZE_RESULT_ERROR_UNINITIALIZED;                             \
    } while (0)

#define VALID(h, m) ((h) != NULL && (h)->magic == (m))

#define CHECK_HANDLE(h, m)                                                    \
    do {                                                                      \
        if (!VALID(h, m))                                                     \
            return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;                       \
    } while (0)

#define CHECK_PTR(p)                                                          \
    do {                                                                      \
        if (!(p))                                                             \
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                      \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Markers, pending writes, events (caller holds drv.lock)                  */
/* ------------------------------------------------------------------------ */

static ze_result_t result_of(int rc)
{
    return rc == TLOG_ENOMEM ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : ZE_RESULT_ERROR_DEVICE_LOST;
}

/* A new marker recorded at the end of `q`, with one reference. */
static ze_result_t mref_record(tlog_sim_queue *q, mref **out)
{
    mref *r = calloc(1, sizeof *r);
    if (!r)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    int rc = tlog_sim_marker_create(drv.sim, &r->m);
    if (rc == TLOG_OK) {
        rc = tlog_sim_marker_record(drv.sim, q, r->m);
        if (rc != TLOG_OK)
            tlog_sim_marker_destroy(drv.sim, r->m);
    }
    if (rc != TLOG_OK) {
        free(r);
        return result_of(rc);
    }
    r->refs = 1;
    *out = r;
    return ZE_RESULT_SUCCESS;
}

static mref *mref_get(mref *r)
{
    r->refs++;
    return r;
}

static void mref_put(mref *r)
{
    if (r && --r->refs == 0) {
        tlog_sim_marker_destroy(drv.sim, r->m);
        free(r);
    }
}

/* Reached, read without taking injected faults. */
static bool mref_reached(mref *r, uint64_t *ns)
{
    uint64_t t = 0;
    bool done = tlog_sim_marker_time(drv.sim, r->m, &t) == TLOG_OK;
    if (ns)
        *ns = t;
    return done;
}

/* Stores every pending timestamp whose marker is reached, in the order the
 * writes ran. Called before any completion is reported. */
static void flush_writes(void)
{
    pending **pp = &drv.writes;
    while (*pp) {
        pending *p = *pp;
        uint64_t ns;
        if (mref_reached(p->m, &ns)) {
            *p->dst = ticks(ns);
            *pp = p->next;
            mref_put(p->m);
            free(p);
        } else {
            pp = &p->next;
        }
    }
    drv.writes_tail = pp;
}

static ze_result_t add_write(uint64_t *dst, mref *m)
{
    pending *p = calloc(1, sizeof *p);
    if (!p)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    p->dst = dst;
    p->m = mref_get(m);
    *drv.writes_tail = p;
    drv.writes_tail = &p->next;
    return ZE_RESULT_SUCCESS;
}

static void event_put(ze_event_handle_t ev)
{
    if (ev && --ev->refs == 0) {
        mref_put(ev->done);
        tlog_sim_gate_destroy(drv.sim, ev->gate);
        ev->magic = 0;
        free(ev);
    }
}

static bool event_signalled_or_armed(ze_event_handle_t ev)
{
    return ev->host_signalled || ev->done != NULL;
}

/* A command that ran signals `ev` when `done` is reached (takes `done`). */
static void event_arm(ze_event_handle_t ev, mref *done)
{
    if (!ev || ev->destroyed) {
        mref_put(done);
        return;
    }
    if (event_signalled_or_armed(ev))
        STAT(resignals);
    mref_put(ev->done);
    ev->done = done;
    ev->lost = false;
    pthread_cond_broadcast(&drv.changed);
}

/* SUCCESS (pending writes stored first), NOT_READY, or DEVICE_LOST. An
 * application's query takes injected query faults; the event then reads
 * DEVICE_LOST until it is reset or signalled again, as a lost device stays
 * lost on a GPU. */
static ze_result_t event_status(ze_event_handle_t ev, bool app_query)
{
    if (ev->lost)
        return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!ev->host_signalled) {
        if (!ev->done)
            return ZE_RESULT_NOT_READY;
        int rc = app_query ? tlog_sim_marker_query(drv.sim, ev->done->m)
                           : (mref_reached(ev->done, NULL) ? TLOG_OK : SIM_PENDING);
        if (rc == SIM_PENDING)
            return ZE_RESULT_NOT_READY;
        if (rc != TLOG_OK) {
            ev->lost = true;
            return ZE_RESULT_ERROR_DEVICE_LOST;
        }
    }
    flush_writes();
    return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Running commands (caller holds drv.lock)                                 */
/* ------------------------------------------------------------------------ */

static ze_result_t stream_init(stream *s, const ze_command_queue_desc_t *desc)
{
    s->queue = tlog_sim_queue_create(drv.sim);
    s->synchronous = desc && desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    return s->queue ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

/* The simulator owns the queue; work already on it still runs. */
static void stream_fini(stream *s)
{
    mref_put(s->last_kernel_start);
    s->last_kernel_start = NULL;
}

/* Signals `ev` (if any) once what `s` has run so far completes. */
static ze_result_t signal_after(stream *s, ze_event_handle_t ev)
{
    if (!ev)
        return ZE_RESULT_SUCCESS;
    mref *done;
    ze_result_t r = mref_record(s->queue, &done);
    if (r == ZE_RESULT_SUCCESS)
        event_arm(ev, done);
    return r;
}

/* Makes `s` wait for `ev`: nothing if it is signalled; a wait at the gate
 * that a host signal opens if it is not. An event that a command on another
 * list or queue will signal is beyond this driver. */
static ze_result_t wait_for(stream *s, ze_event_handle_t ev)
{
    if (ev->destroyed || ev->host_signalled)
        return ZE_RESULT_SUCCESS;
    if (ev->done)
        return mref_reached(ev->done, NULL) ? ZE_RESULT_SUCCESS
                                            : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (!ev->gate && tlog_sim_gate_create(drv.sim, &ev->gate) != TLOG_OK)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    STAT(host_event_waits);
    return tlog_sim_gate_wait(drv.sim, s->queue, ev->gate) == TLOG_OK
               ? ZE_RESULT_SUCCESS
               : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

static ze_result_t run(stream *s, const command *c)
{
    ze_result_t r = ZE_RESULT_SUCCESS;
    mref *m = NULL;
    for (uint32_t i = 0; i < c->nwait && r == ZE_RESULT_SUCCESS; i++)
        r = wait_for(s, c->waits[i]);
    if (r != ZE_RESULT_SUCCESS)
        return r;
    switch (c->kind) {
    case CMD_KERNEL:
        r = mref_record(s->queue, &m);
        if (r != ZE_RESULT_SUCCESS)
            return r;
        if (tlog_sim_launch(drv.sim, s->queue, c->ns) != TLOG_OK) {
            mref_put(m);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        STAT(kernels);
        mref_put(s->last_kernel_start);
        s->last_kernel_start = m;
        s->kernel_since_barrier = true;
        return signal_after(s, c->signal);
    case CMD_BARRIER:
        /* The simulator's queue is in order: what follows already waits for
         * what came before. */
        STAT(barriers);
        s->kernel_since_barrier = false;
        return signal_after(s, c->signal);
    case CMD_SIGNAL:
    case CMD_WAIT:
        return signal_after(s, c->signal);
    case CMD_TIMESTAMP:
        if (s->kernel_since_barrier && s->last_kernel_start) {
            /* Starts as soon as the kernel before it starts. */
            m = mref_get(s->last_kernel_start);
            STAT(overlapped_timestamps);
        } else {
            r = mref_record(s->queue, &m);
            if (r != ZE_RESULT_SUCCESS)
                return r;
        }
        STAT(timestamps);
        r = add_write(c->dst, m);
        if (r == ZE_RESULT_SUCCESS && c->signal)
            event_arm(c->signal, mref_get(m));
        mref_put(m);
        return r;
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* A synchronous stream returns once its queue drains (lock not held). */
static void drain(tlog_sim_queue *q)
{
    tlog_sim_queue_sync(drv.sim, q);
    pthread_mutex_lock(&drv.lock);
    flush_writes();
    pthread_mutex_unlock(&drv.lock);
}

/* ------------------------------------------------------------------------ */
/* Global, driver, device                                                   */
/* ------------------------------------------------------------------------ */

static ze_result_t ZE_APICALL drv_init(ze_init_flags_t flags)
{
    (void)flags;
    return ready() ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

static ze_result_t ZE_APICALL driver_get(uint32_t *count, ze_driver_handle_t *drivers)
{
    READY();
    CHECK_PTR(count);
    if (*count == 0 || !drivers) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    drivers[0] = &the_driver;
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL driver_api_version(ze_driver_handle_t d, ze_api_version_t *v)
{
    CHECK_HANDLE(d, DRIVER_MAGIC);
    CHECK_PTR(v);
    *v = ZE_API_VERSION_1_4;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL driver_properties(ze_driver_handle_t d, ze_driver_properties_t *p)
{
    CHECK_HANDLE(d, DRIVER_MAGIC);
    CHECK_PTR(p);
    memcpy(p->uuid.id, "timerlog-ze-test", sizeof p->uuid.id);
    p->driverVersion = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL device_get(ze_driver_handle_t d, uint32_t *count,
                                         ze_device_handle_t *devices)
{
    READY();
    CHECK_HANDLE(d, DRIVER_MAGIC);
    CHECK_PTR(count);
    if (*count == 0 || !devices) {
        *count = drv.devices;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *count < drv.devices ? *count : drv.devices;
    for (uint32_t i = 0; i < n; i++)
        devices[i] = &the_devices[i];
    *count = n;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL device_properties(ze_device_handle_t dev, ze_device_properties_t *p)
{
    READY();
    CHECK_HANDLE(dev, DEVICE_MAGIC);
    CHECK_PTR(p);
    ze_structure_type_t stype = p->stype;
    void *next = p->pNext;
    memset(p, 0, sizeof *p);
    p->stype = stype;
    p->pNext = next;
    p->type = ZE_DEVICE_TYPE_GPU;
    p->deviceId = dev->index;
    p->coreClockRate = 1000;
    p->maxMemAllocSize = UINT64_C(1) << 32;
    p->maxHardwareContexts = 1;
    p->numThreadsPerEU = 1;
    p->physicalEUSimdWidth = 8;
    p->numEUsPerSubslice = 1;
    p->numSubslicesPerSlice = 1;
    p->numSlices = 1;
    /* The older form, whole nanoseconds per tick, loses the fraction. */
    double v = stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? 1e9 / drv.res_ns : drv.res_ns;
    p->timerResolution = (uint64_t)(v + 0.5);
    p->timestampValidBits = drv.valid_bits;
    p->kernelTimestampValidBits = 32;
    memcpy(p->uuid.id, "timerlog-dev", 12);
    p->uuid.id[15] = (uint8_t)dev->index;
    snprintf(p->name, sizeof p->name, "%s", DEVICE_NAME);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL device_global_timestamps(ze_device_handle_t dev, uint64_t *host,
                                                       uint64_t *device)
{
    READY();
    CHECK_HANDLE(dev, DEVICE_MAGIC);
    CHECK_PTR(host);
    CHECK_PTR(device);
    *host = clock_ns(CLOCK_MONOTONIC_RAW);
    *device = ticks(tlog_sim_now(drv.sim));
    pthread_mutex_lock(&drv.lock);
    STAT(get_global_timestamps);
    pthread_mutex_unlock(&drv.lock);
    return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Context, memory, module, kernel                                          */
/* ------------------------------------------------------------------------ */

static ze_result_t ZE_APICALL context_create(ze_driver_handle_t d, const ze_context_desc_t *desc,
                                             ze_context_handle_t *out)
{
    READY();
    CHECK_HANDLE(d, DRIVER_MAGIC);
    CHECK_PTR(desc);
    CHECK_PTR(out);
    ze_context_handle_t c = calloc(1, sizeof *c);
    if (!c)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    c->magic = CONTEXT_MAGIC;
    pthread_mutex_lock(&drv.lock);
    c->next = drv.contexts;
    if (c->next)
        c->next->prev = c;
    drv.contexts = c;
    pthread_mutex_unlock(&drv.lock);
    *out = c;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL context_destroy(ze_context_handle_t c)
{
    CHECK_HANDLE(c, CONTEXT_MAGIC);
    pthread_mutex_lock(&drv.lock);
    c->magic = 0;
    if (c->prev)
        c->prev->next = c->next;
    else
        drv.contexts = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&drv.lock);
    free(c);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL mem_alloc_host(ze_context_handle_t c,
                                             const ze_host_mem_alloc_desc_t *desc, size_t size,
                                             size_t alignment, void **out)
{
    READY();
    CHECK_HANDLE(c, CONTEXT_MAGIC);
    CHECK_PTR(desc);
    CHECK_PTR(out);
    if (size == 0)
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment & (alignment - 1))
        return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    if (alignment < 64)
        alignment = 64;
    alloc *a = calloc(1, sizeof *a);
    void *p = NULL;
    if (!a || posix_memalign(&p, alignment, size) != 0) {
        free(a);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    a->p = p;
    a->size = size;
    pthread_mutex_lock(&drv.lock);
    a->next = drv.allocs;
    drv.allocs = a;
    pthread_mutex_unlock(&drv.lock);
    *out = p;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL mem_free(ze_context_handle_t c, void *ptr)
{
    READY();
    CHECK_HANDLE(c, CONTEXT_MAGIC);
    CHECK_PTR(ptr);
    pthread_mutex_lock(&drv.lock);
    alloc **pa = &drv.allocs;
    while (*pa && (*pa)->p != ptr)
        pa = &(*pa)->next;
    alloc *a = *pa;
    if (!a) {
        pthread_mutex_unlock(&drv.lock);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    *pa = a->next;
    /* Writes that completed land first; one still running would write freed
     * memory on a GPU: it is dropped here, and reported. */
    flush_writes();
    uintptr_t lo = (uintptr_t)a->p, hi = lo + a->size;
    for (pending **pp = &drv.writes; *pp;) {
        pending *p = *pp;
        if ((uintptr_t)p->dst >= lo && (uintptr_t)p->dst < hi) {
            fprintf(stderr, "ze_test_driver: zeMemFree(%p) with a timestamp write into it "
                            "still running; the write is dropped\n", ptr);
            *pp = p->next;
            mref_put(p->m);
            free(p);
        } else {
            pp = &p->next;
        }
    }
    flush_writes(); /* puts the tail right */
    pthread_mutex_unlock(&drv.lock);
    free(a->p);
    free(a);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL module_create(ze_context_handle_t c, ze_device_handle_t dev,
                                            const ze_module_desc_t *desc, ze_module_handle_t *out,
                                            ze_module_build_log_handle_t *log)
{
    READY();
    CHECK_HANDLE(c, CONTEXT_MAGIC);
    CHECK_HANDLE(dev, DEVICE_MAGIC);
    CHECK_PTR(desc);
    CHECK_PTR(out);
    if (log)
        *log = NULL;
    ze_module_handle_t m = calloc(1, sizeof *m);
    if (!m)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    m->magic = MODULE_MAGIC;
    *out = m;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL module_destroy(ze_module_handle_t m)
{
    CHECK_HANDLE(m, MODULE_MAGIC);
    m->magic = 0;
    free(m);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL kernel_create(ze_module_handle_t m, const ze_kernel_desc_t *desc,
                                            ze_kernel_handle_t *out)
{
    READY();
    CHECK_HANDLE(m, MODULE_MAGIC);
    CHECK_PTR(desc);
    CHECK_PTR(desc->pKernelName);
    CHECK_PTR(out);
    ze_kernel_handle_t k = calloc(1, sizeof *k);
    char *name = strdup(desc->pKernelName);
    if (!k || !name) {
        free(k);
        free(name);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    k->magic = KERNEL_MAGIC;
    k->name = name;
    *out = k;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL kernel_destroy(ze_kernel_handle_t k)
{
    CHECK_HANDLE(k, KERNEL_MAGIC);
    k->magic = 0;
    free(k->name);
    free(k);
    return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Command queues                                                           */
/* ------------------------------------------------------------------------ */

static ze_result_t ZE_APICALL queue_create(ze_context_handle_t c, ze_device_handle_t dev,
                                           const ze_command_queue_desc_t *desc,
                                           ze_command_queue_handle_t *out)
{
    READY();
    CHECK_HANDLE(c, CONTEXT_MAGIC);
    CHECK_HANDLE(dev, DEVICE_MAGIC);
    CHECK_PTR(desc);
    CHECK_PTR(out);
    ze_command_queue_handle_t q = calloc(1, sizeof *q);
    if (!q)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    ze_result_t r = stream_init(&q->s, desc);
    if (r != ZE_RESULT_SUCCESS) {
        free(q);
        return r;
    }
    q->magic = QUEUE_MAGIC;
    *out = q;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL queue_destroy(ze_command_queue_handle_t q)
{
    CHECK_HANDLE(q, QUEUE_MAGIC);
    pthread_mutex_lock(&drv.lock);
    q->magic = 0;
    stream_fini(&q->s);
    pthread_mutex_unlock(&drv.lock);
    free(q);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL queue_execute(ze_command_queue_handle_t q, uint32_t n,
                                            ze_command_list_handle_t *lists, ze_fence_handle_t f)
{
    (void)f;
    READY();
    CHECK_HANDLE(q, QUEUE_MAGIC);
    CHECK_PTR(lists);
    if (n == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    ze_result_t r = ZE_RESULT_SUCCESS;
    pthread_mutex_lock(&drv.lock);
    for (uint32_t i = 0; i < n && r == ZE_RESULT_SUCCESS; i++) {
        if (!VALID(lists[i], LIST_MAGIC))
            r = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        else if (lists[i]->immediate || !lists[i]->closed)
            r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < n && r == ZE_RESULT_SUCCESS; i++) {
        STAT(executions);
        for (size_t k = 0; k < lists[i]->n && r == ZE_RESULT_SUCCESS; k++)
            r = run(&q->s, &lists[i]->cmds[k]);
    }
    bool sync = q->s.synchronous;
    tlog_sim_queue *sq = q->s.queue;
    pthread_mutex_unlock(&drv.lock);
    if (r == ZE_RESULT_SUCCESS && sync)
        drain(sq);
    return r;
}

static ze_result_t ZE_APICALL queue_synchronize(ze_command_queue_handle_t q, uint64_t timeout)
{
    READY();
    CHECK_HANDLE(q, QUEUE_MAGIC);
    mref *m = NULL;
    pthread_mutex_lock(&drv.lock);
    ze_result_t r = mref_record(q->s.queue, &m);
    pthread_mutex_unlock(&drv.lock);
    if (r != ZE_RESULT_SUCCESS)
        return r;
    /* Only this call holds the marker: it is safe to wait on unlocked. */
    int rc = tlog_sim_marker_wait(drv.sim, m->m, timeout < FOREVER_NS ? timeout : FOREVER_NS);
    pthread_mutex_lock(&drv.lock);
    if (rc == TLOG_OK)
        flush_writes();
    mref_put(m);
    pthread_mutex_unlock(&drv.lock);
    return rc == TLOG_OK ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

/* ------------------------------------------------------------------------ */
/* Command lists                                                            */
/* ------------------------------------------------------------------------ */

static ze_result_t list_new(ze_context_handle_t c, ze_device_handle_t dev,
                            ze_command_list_handle_t *out, ze_command_list_handle_t *list)
{
    if (!VALID(c, CONTEXT_MAGIC) || !VALID(dev, DEVICE_MAGIC))
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    CHECK_PTR(out);
    *list = calloc(1, sizeof **list);
    return *list ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

static ze_result_t ZE_APICALL list_create(ze_context_handle_t c, ze_device_handle_t dev,
                                          const ze_command_list_desc_t *desc,
                                          ze_command_list_handle_t *out)
{
    READY();
    CHECK_PTR(desc);
    ze_command_list_handle_t l = NULL;
    ze_result_t r = list_new(c, dev, out, &l);
    if (r != ZE_RESULT_SUCCESS)
        return r;
    l->magic = LIST_MAGIC;
    *out = l;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL list_create_immediate(ze_context_handle_t c, ze_device_handle_t dev,
                                                    const ze_command_queue_desc_t *desc,
                                                    ze_command_list_handle_t *out)
{
    READY();
    CHECK_PTR(desc);
    ze_command_list_handle_t l = NULL;
    ze_result_t r = list_new(c, dev, out, &l);
    if (r != ZE_RESULT_SUCCESS)
        return r;
    r = stream_init(&l->s, desc);
    if (r != ZE_RESULT_SUCCESS) {
        free(l);
        return r;
    }
    l->magic = LIST_MAGIC;
    l->immediate = true;
    *out = l;
    return ZE_RESULT_SUCCESS;
}

/* Caller holds drv.lock. */
static void list_clear(ze_command_list_handle_t l)
{
    for (size_t k = 0; k < l->n; k++) {
        event_put(l->cmds[k].signal);
        for (uint32_t i = 0; i < l->cmds[k].nwait; i++)
            event_put(l->cmds[k].waits[i]);
    }
    l->n = 0;
}

static ze_result_t ZE_APICALL list_destroy(ze_command_list_handle_t l)
{
    CHECK_HANDLE(l, LIST_MAGIC);
    pthread_mutex_lock(&drv.lock);
    l->magic = 0;
    list_clear(l);
    if (l->immediate)
        stream_fini(&l->s);
    pthread_mutex_unlock(&drv.lock);
    free(l->cmds);
    free(l);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL list_close(ze_command_list_handle_t l)
{
    CHECK_HANDLE(l, LIST_MAGIC);
    pthread_mutex_lock(&drv.lock);
    l->closed = !l->immediate;
    pthread_mutex_unlock(&drv.lock);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL list_reset(ze_command_list_handle_t l)
{
    CHECK_HANDLE(l, LIST_MAGIC);
    pthread_mutex_lock(&drv.lock);
    list_clear(l);
    l->closed = false;
    pthread_mutex_unlock(&drv.lock);
    return ZE_RESULT_SUCCESS;
}

/* The injected cost of an append (tlog_test_ze_set_append_delay). */
static void slow_host(void)
{
    uint64_t ns = atomic_load(&drv.append_delay_ns);
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    if (ns)
        nanosleep(&t, NULL);
}

/* Runs `c` now on an immediate list, or records it into a regular one. */
static ze_result_t append(ze_command_list_handle_t l, command c, uint32_t nwait,
                          const ze_event_handle_t *waits)
{
    READY();
    CHECK_HANDLE(l, LIST_MAGIC);
    if (c.signal && !VALID(c.signal, EVENT_MAGIC))
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (nwait && !waits)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    if (nwait > MAX_WAITS)
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    for (uint32_t i = 0; i < nwait; i++)
        if (!VALID(waits[i], EVENT_MAGIC))
            return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    for (uint32_t i = 0; i < nwait; i++)
        c.waits[i] = waits[i];
    c.nwait = nwait;
    slow_host();
    ze_result_t r = ZE_RESULT_SUCCESS;
    bool sync = false;
    pthread_mutex_lock(&drv.lock);
    if (l->immediate) {
        r = run(&l->s, &c);
        sync = l->s.synchronous;
    } else if (l->closed) {
        r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
    } else {
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 16;
            command *cmds = realloc(l->cmds, cap * sizeof *cmds);
            if (cmds) {
                l->cmds = cmds;
                l->cap = cap;
            } else {
                r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
            }
        }
        if (r == ZE_RESULT_SUCCESS) {
            if (c.signal)
                c.signal->refs++;
            for (uint32_t i = 0; i < c.nwait; i++)
                c.waits[i]->refs++;
            l->cmds[l->n++] = c;
        }
    }
    tlog_sim_queue *q = l->s.queue;
    pthread_mutex_unlock(&drv.lock);
    if (r == ZE_RESULT_SUCCESS && sync)
        drain(q);
    return r;
}

static ze_result_t ZE_APICALL list_barrier(ze_command_list_handle_t l, ze_event_handle_t signal,
                                           uint32_t nwait, ze_event_handle_t *waits)
{
    command c = {.kind = CMD_BARRIER, .signal = signal};
    return append(l, c, nwait, waits);
}

static ze_result_t ZE_APICALL list_timestamp(ze_command_list_handle_t l, uint64_t *dst,
                                             ze_event_handle_t signal, uint32_t nwait,
                                             ze_event_handle_t *waits)
{
    if (!dst || ((uintptr_t)dst & 7u))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    command c = {.kind = CMD_TIMESTAMP, .dst = dst, .signal = signal};
    return append(l, c, nwait, waits);
}

static uint64_t at_least_1(uint32_t v)
{
    return v ? v : 1;
}

static ze_result_t ZE_APICALL list_launch(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                          const ze_group_count_t *groups,
                                          ze_event_handle_t signal, uint32_t nwait,
                                          ze_event_handle_t *waits)
{
    CHECK_HANDLE(k, KERNEL_MAGIC);
    CHECK_PTR(groups);
    /* groupCountX microseconds (times Y and Z), capped at about 5 hours. */
    const uint64_t max_us = UINT64_C(1) << 34;
    uint64_t us = (uint64_t)groups->groupCountX * at_least_1(groups->groupCountY);
    uint64_t z = at_least_1(groups->groupCountZ);
    us = us > max_us / z ? max_us : us * z;
    command c = {.kind = CMD_KERNEL, .ns = us * 1000u, .signal = signal};
    return append(l, c, nwait, waits);
}

static ze_result_t ZE_APICALL list_wait_on_events(ze_command_list_handle_t l, uint32_t n,
                                                 ze_event_handle_t *events)
{
    if (n == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    command c = {.kind = CMD_WAIT};
    return append(l, c, n, events);
}

static ze_result_t ZE_APICALL list_signal(ze_command_list_handle_t l, ze_event_handle_t ev)
{
    CHECK_HANDLE(ev, EVENT_MAGIC);
    command c = {.kind = CMD_SIGNAL, .signal = ev};
    return append(l, c, 0, NULL);
}

/* ------------------------------------------------------------------------ */
/* Event pools and events                                                   */
/* ------------------------------------------------------------------------ */

static ze_result_t ZE_APICALL pool_create(ze_context_handle_t c, const ze_event_pool_desc_t *desc,
                                          uint32_t ndev, ze_device_handle_t *devs,
                                          ze_event_pool_handle_t *out)
{
    READY();
    CHECK_HANDLE(c, CONTEXT_MAGIC);
    CHECK_PTR(desc);
    CHECK_PTR(out);
    if (ndev && !devs)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < ndev; i++)
        CHECK_HANDLE(devs[i], DEVICE_MAGIC);
    if (desc->count == 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    ze_event_pool_handle_t p = calloc(1, sizeof *p);
    if (!p)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    p->magic = POOL_MAGIC;
    p->count = desc->count;
    *out = p;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL pool_destroy(ze_event_pool_handle_t p)
{
    CHECK_HANDLE(p, POOL_MAGIC);
    p->magic = 0;
    free(p);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL event_create(ze_event_pool_handle_t p, const ze_event_desc_t *desc,
                                           ze_event_handle_t *out)
{
    READY();
    CHECK_HANDLE(p, POOL_MAGIC);
    CHECK_PTR(desc);
    CHECK_PTR(out);
    if (desc->index >= p->count)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    ze_event_handle_t ev = calloc(1, sizeof *ev);
    if (!ev)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    ev->magic = EVENT_MAGIC;
    ev->refs = 1;
    pthread_mutex_lock(&drv.lock);
    if (++drv.stats.events_live > drv.stats.events_max_live)
        drv.stats.events_max_live = drv.stats.events_live;
    pthread_mutex_unlock(&drv.lock);
    *out = ev;
    return ZE_RESULT_SUCCESS;
}

/* Lists still holding it keep the memory; they no longer signal it. */
static ze_result_t ZE_APICALL event_destroy(ze_event_handle_t ev)
{
    CHECK_HANDLE(ev, EVENT_MAGIC);
    pthread_mutex_lock(&drv.lock);
    drv.stats.events_live--;
    ev->magic = 0;
    ev->destroyed = true;
    event_put(ev);
    pthread_mutex_unlock(&drv.lock);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL event_query(ze_event_handle_t ev)
{
    READY();
    CHECK_HANDLE(ev, EVENT_MAGIC);
    pthread_mutex_lock(&drv.lock);
    STAT(queries);
    ze_result_t r = event_status(ev, true);
    pthread_mutex_unlock(&drv.lock);
    return r;
}

static struct timespec timespec_of(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    return ts;
}

static ze_result_t ZE_APICALL event_host_sync(ze_event_handle_t ev, uint64_t timeout)
{
    READY();
    CHECK_HANDLE(ev, EVENT_MAGIC);
    pthread_mutex_lock(&drv.lock);
    STAT(host_syncs);
    ze_result_t r = event_status(ev, true);
    if (r != ZE_RESULT_NOT_READY || timeout == 0) {
        pthread_mutex_unlock(&drv.lock);
        return r;
    }
    ev->refs++; /* kept while the lock is dropped */
    uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + (timeout < FOREVER_NS ? timeout : FOREVER_NS);
    while (r == ZE_RESULT_NOT_READY && !ev->destroyed) {
        uint64_t now = clock_ns(CLOCK_MONOTONIC);
        if (now >= deadline)
            break;
        if (ev->done) {
            /* Its command ran: wait for its marker. */
            mref *m = mref_get(ev->done);
            pthread_mutex_unlock(&drv.lock);
            tlog_sim_marker_wait(drv.sim, m->m, deadline - now);
            pthread_mutex_lock(&drv.lock);
            mref_put(m);
        } else {
            /* Nothing to wait for until a command or the host signals it:
             * a list never executed times out here. */
            struct timespec ts = timespec_of(deadline);
            pthread_cond_timedwait(&drv.changed, &drv.lock, &ts);
        }
        r = event_status(ev, false);
    }
    event_put(ev);
    pthread_mutex_unlock(&drv.lock);
    return r;
}

static ze_result_t ZE_APICALL event_host_reset(ze_event_handle_t ev)
{
    READY();
    CHECK_HANDLE(ev, EVENT_MAGIC);
    pthread_mutex_lock(&drv.lock);
    if (ev->done && !mref_reached(ev->done, NULL))
        STAT(resets_in_flight);
    mref_put(ev->done);
    ev->done = NULL;
    ev->host_signalled = ev->lost = false;
    tlog_sim_gate_close(drv.sim, ev->gate);
    pthread_mutex_unlock(&drv.lock);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL event_host_signal(ze_event_handle_t ev)
{
    READY();
    CHECK_HANDLE(ev, EVENT_MAGIC);
    pthread_mutex_lock(&drv.lock);
    if (event_signalled_or_armed(ev))
        STAT(resignals);
    ev->host_signalled = true;
    tlog_sim_gate_open(drv.sim, ev->gate);
    pthread_cond_broadcast(&drv.changed);
    pthread_mutex_unlock(&drv.lock);
    return ZE_RESULT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Test hooks                                                               */
/* ------------------------------------------------------------------------ */

API void tlog_test_ze_get_stats(tlog_test_ze_stats *out)
{
    if (!out)
        return;
    pthread_mutex_lock(&drv.lock);
    *out = drv.stats;
    pthread_mutex_unlock(&drv.lock);
}

API void tlog_test_ze_set_append_delay(uint64_t ns)
{
    atomic_store(&drv.append_delay_ns, ns);
}

API int tlog_test_ze_inject(int fault, unsigned count)
{
    if (!ready())
        return TLOG_EINVAL;
    return tlog_sim_inject(drv.sim, fault, count);
}

/* ------------------------------------------------------------------------ */
/* The loader's tables                                                      */
/* ------------------------------------------------------------------------ */

static void fill_global(ze_global_dditable_t *t)
{
    t->pfnInit = drv_init;
}

static void fill_driver(ze_driver_dditable_t *t)
{
    t->pfnGet = driver_get;
    t->pfnGetApiVersion = driver_api_version;
    t->pfnGetProperties = driver_properties;
}

static void fill_device(ze_device_dditable_t *t)
{
    t->pfnGet = device_get;
    t->pfnGetProperties = device_properties;
    t->pfnGetGlobalTimestamps = device_global_timestamps;
}

static void fill_context(ze_context_dditable_t *t)
{
    t->pfnCreate = context_create;
    t->pfnDestroy = context_destroy;
}

static void fill_queue(ze_command_queue_dditable_t *t)
{
    t->pfnCreate = queue_create;
    t->pfnDestroy = queue_destroy;
    t->pfnExecuteCommandLists = queue_execute;
    t->pfnSynchronize = queue_synchronize;
}

static void fill_list(ze_command_list_dditable_t *t)
{
    t->pfnCreate = list_create;
    t->pfnCreateImmediate = list_create_immediate;
    t->pfnDestroy = list_destroy;
    t->pfnClose = list_close;
    t->pfnReset = list_reset;
    t->pfnAppendBarrier = list_barrier;
    t->pfnAppendWriteGlobalTimestamp = list_timestamp;
    t->pfnAppendLaunchKernel = list_launch;
    t->pfnAppendSignalEvent = list_signal;
    t->pfnAppendWaitOnEvents = list_wait_on_events;
}

static void fill_pool(ze_event_pool_dditable_t *t)
{
    t->pfnCreate = pool_create;
    t->pfnDestroy = pool_destroy;
}

static void fill_event(ze_event_dditable_t *t)
{
    t->pfnCreate = event_create;
    t->pfnDestroy = event_destroy;
    t->pfnHostSignal = event_host_signal;
    t->pfnHostSynchronize = event_host_sync;
    t->pfnQueryStatus = event_query;
    t->pfnHostReset = event_host_reset;
}

static void fill_module(ze_module_dditable_t *t)
{
    t->pfnCreate = module_create;
    t->pfnDestroy = module_destroy;
}

static void fill_kernel(ze_kernel_dditable_t *t)
{
    t->pfnCreate = kernel_create;
    t->pfnDestroy = kernel_destroy;
}

static void fill_mem(ze_mem_dditable_t *t)
{
    t->pfnAllocHost = mem_alloc_host;
    t->pfnFree = mem_free;
}

#define NOTHING(t) (void)(t)

/* Every table getter of the 1.4 headers: the loader asks for all of them.
 * Entries left NULL read as unsupported. */
#define TABLES(X)                                                             \
    X(zeGetGlobalProcAddrTable, ze_global_dditable_t, fill_global)            \
    X(zeGetDriverProcAddrTable, ze_driver_dditable_t, fill_driver)            \
    X(zeGetDeviceProcAddrTable, ze_device_dditable_t, fill_device)            \
    X(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t, NOTHING)         \
    X(zeGetContextProcAddrTable, ze_context_dditable_t, fill_context)         \
    X(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t, fill_queue) \
    X(zeGetCommandListProcAddrTable, ze_command_list_dditable_t, fill_list)   \
    X(zeGetImageProcAddrTable, ze_image_dditable_t, NOTHING)                  \
    X(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t, NOTHING)           \
    X(zeGetFenceProcAddrTable, ze_fence_dditable_t, NOTHING)                  \
    X(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t, fill_pool)       \
    X(zeGetEventProcAddrTable, ze_event_dditable_t, fill_event)               \
    X(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t, NOTHING)           \
    X(zeGetModuleProcAddrTable, ze_module_dditable_t, fill_module)            \
    X(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t, NOTHING) \
    X(zeGetKernelProcAddrTable, ze_kernel_dditable_t, fill_kernel)            \
    X(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t, NOTHING)         \
    X(zeGetSamplerProcAddrTable, ze_sampler_dditable_t, NOTHING)              \
    X(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t, NOTHING)     \
    X(zeGetMemProcAddrTable, ze_mem_dditable_t, fill_mem)                     \
    X(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t, NOTHING)       \
    X(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t, NOTHING) \
    X(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t, NOTHING) \
    X(zetGetDeviceProcAddrTable, zet_device_dditable_t, NOTHING)              \
    X(zetGetContextProcAddrTable, zet_context_dditable_t, NOTHING)            \
    X(zetGetCommandListProcAddrTable, zet_command_list_dditable_t, NOTHING)   \
    X(zetGetModuleProcAddrTable, zet_module_dditable_t, NOTHING)              \
    X(zetGetKernelProcAddrTable, zet_kernel_dditable_t, NOTHING)              \
    X(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t, NOTHING)   \
    X(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t, NOTHING) \
    X(zetGetMetricProcAddrTable, zet_metric_dditable_t, NOTHING)              \
    X(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t, NOTHING) \
    X(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t, NOTHING) \
    X(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t, NOTHING)   \
    X(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t, NOTHING)       \
    X(zetGetDebugProcAddrTable, zet_debug_dditable_t, NOTHING)                \
    X(zesGetDriverProcAddrTable, zes_driver_dditable_t, NOTHING)              \
    X(zesGetDeviceProcAddrTable, zes_device_dditable_t, NOTHING)              \
    X(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t, NOTHING)        \
    X(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t, NOTHING) \
    X(zesGetPowerProcAddrTable, zes_power_dditable_t, NOTHING)                \
    X(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t, NOTHING)        \
    X(zesGetEngineProcAddrTable, zes_engine_dditable_t, NOTHING)              \
    X(zesGetStandbyProcAddrTable, zes_standby_dditable_t, NOTHING)            \
    X(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t, NOTHING)          \
    X(zesGetMemoryProcAddrTable, zes_memory_dditable_t, NOTHING)              \
    X(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t, NOTHING)     \
    X(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t, NOTHING)    \
    X(zesGetPsuProcAddrTable, zes_psu_dditable_t, NOTHING)                    \
    X(zesGetFanProcAddrTable, zes_fan_dditable_t, NOTHING)                    \
    X(zesGetLedProcAddrTable, zes_led_dditable_t, NOTHING)                    \
    X(zesGetRasProcAddrTable, zes_ras_dditable_t, NOTHING)                    \
    X(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t, NOTHING)

#define GETTER(name, type, fill)                                              \
    API ze_result_t ZE_APICALL name(ze_api_version_t version, type *table)    \
    {                                                                         \
        (void)version;                                                        \
        if (!table)                                                           \
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                      \
        memset(table, 0, sizeof *table);                                      \
        fill(table);                                                          \
        return ZE_RESULT_SUCCESS;                                             \
    }

TABLES(GETTER)
