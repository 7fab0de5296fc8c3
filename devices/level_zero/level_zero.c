/*
 * The Level Zero backend: global timestamps written by the command list as
 * markers, behind the backend interface.
 *
 * A marker is a slot of host memory and a plain event: recording appends a
 * barrier, then zeCommandListAppendWriteGlobalTimestamp into the slot with
 * the event as its signal (see the header for why). Slots and events come
 * in chunks (one allocation and one event pool each); the core's pool
 * decides how many exist. Anchors come from zeDeviceGetGlobalTimestamps,
 * which reads the counter the timestamps are written from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "timerlog/level_zero.h"

#define CHUNK 64                /* markers per allocation and event pool */
#define OWN_LIST_ORDINAL 0      /* compute queue group: anchors, calibration */

typedef struct ze_chunk ze_chunk;

typedef struct ze_marker {
    ze_chunk *chunk;
    struct ze_marker *next_free;
    uint64_t *slot;             /* written by the device */
    ze_event_handle_t event;    /* signalled once the slot is written */
    uint64_t now;               /* mark_now's reading */
    /* Atomic: the forced sync's wait and a resolver may settle a marker at
     * the same time. */
    atomic_bool stamped;        /* holds mark_now's reading, not the slot's */
    atomic_bool in_flight;      /* recorded, completion not seen yet */
} ze_marker;

struct ze_chunk {
    ze_chunk *next;
    ze_command_list_handle_t kept_list;  /* abandoned: its device's own list */
    ze_event_pool_handle_t kept_gate_pool;  /* and the gate, which that list */
    ze_event_handle_t kept_gate;            /* may wait for */
    uint64_t *slots;
    ze_event_pool_handle_t pool;
    ze_marker markers[CHUNK];
};

typedef struct ze_impl {
    ze_context_handle_t context;
    ze_device_handle_t device;
    bool own_context;
    ze_command_list_handle_t own;   /* immediate, asynchronous */
    ze_event_pool_handle_t gate_pool;
    ze_event_handle_t gate;         /* holds the own list (hold_own) */
    double ns_per_tick;
    uint64_t mask;                  /* timestampValidBits */
    unsigned valid_bits;
    pthread_mutex_t lock;           /* chunks and free list */
    ze_chunk *chunks;
    ze_marker *free;
    bool leaked;                    /* markers abandoned in flight */
} ze_impl;

static int status_of(ze_result_t r)
{
    switch (r) {
    case ZE_RESULT_SUCCESS: return TLOG_OK;
    case ZE_RESULT_NOT_READY: return TLOG_PENDING;
    case ZE_RESULT_ERROR_UNINITIALIZED:
    case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE:
        return TLOG_ENODEVICE;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
        return TLOG_ENOMEM;
    default: return TLOG_EDEVICE;
    }
}

/* ------------------------------------------------------------------------ */
/* Markers                                                                  */
/* ------------------------------------------------------------------------ */

static void chunk_free(ze_impl *z, ze_chunk *c)
{
    for (int i = 0; i < CHUNK; i++)
        if (c->markers[i].event)
            zeEventDestroy(c->markers[i].event);
    if (c->pool)
        zeEventPoolDestroy(c->pool);
    if (c->slots)
        zeMemFree(z->context, c->slots);
    free(c);
}

static int chunk_events(ze_impl *z, ze_chunk *c)
{
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                               .count = CHUNK};
    ze_result_t r = zeEventPoolCreate(z->context, &pd, 1, &z->device, &c->pool);
    for (uint32_t i = 0; i < CHUNK && r == ZE_RESULT_SUCCESS; i++) {
        /* Host scope: the slot's value is visible to the host once the event
         * reads signalled. */
        ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                              .index = i,
                              .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                              .wait = ZE_EVENT_SCOPE_FLAG_HOST};
        r = zeEventCreate(c->pool, &ed, &c->markers[i].event);
    }
    return status_of(r);
}

/* A chunk of markers onto the free list. Caller holds z->lock. */
static int chunk_add(ze_impl *z)
{
    ze_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return TLOG_ENOMEM;
    ze_host_mem_alloc_desc_t md = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    int rc = status_of(
        zeMemAllocHost(z->context, &md, CHUNK * sizeof(uint64_t), 64, (void **)&c->slots));
    if (rc == TLOG_OK)
        rc = chunk_events(z, c);
    if (rc != TLOG_OK) {
        chunk_free(z, c);
        return rc;
    }
    for (int i = 0; i < CHUNK; i++) {
        ze_marker *m = &c->markers[i];
        m->chunk = c;
        m->slot = &c->slots[i];
        m->next_free = z->free;
        z->free = m;
    }
    c->next = z->chunks;
    z->chunks = c;
    return TLOG_OK;
}

static int ze_marker_create(void *impl, tlog_marker *out)
{
    ze_impl *z = impl;
    pthread_mutex_lock(&z->lock);
    int rc = z->free ? TLOG_OK : chunk_add(z);
    ze_marker *m = z->free;
    if (rc == TLOG_OK) {
        z->free = m->next_free;
        atomic_store(&m->stamped, false);
        atomic_store(&m->in_flight, false);
        *out = (tlog_marker)m;
    }
    pthread_mutex_unlock(&z->lock);
    return rc;
}

/* A marker the device may still write is never handed out again: its
 * memory and event stay until the device goes (and past it, see destroy). */
static void ze_marker_destroy(void *impl, tlog_marker marker)
{
    ze_impl *z = impl;
    ze_marker *m = (ze_marker *)marker;
    if (atomic_load(&m->in_flight) && zeEventQueryStatus(m->event) == ZE_RESULT_SUCCESS)
        atomic_store(&m->in_flight, false);
    pthread_mutex_lock(&z->lock);
    if (atomic_load(&m->in_flight)) {
        z->leaked = true;
    } else {
        m->next_free = z->free;
        z->free = m;
    }
    pthread_mutex_unlock(&z->lock);
}

/* ------------------------------------------------------------------------ */
/* The backend interface                                                    */
/* ------------------------------------------------------------------------ */

static int append_stamp(ze_command_list_handle_t list, ze_marker *m)
{
    /* The marker is free, so its event is signalled or never used: a reset
     * from the host is allowed. */
    ze_result_t r = zeEventHostReset(m->event);
    if (r == ZE_RESULT_SUCCESS)
        r = zeCommandListAppendBarrier(list, NULL, 0, NULL);
    if (r == ZE_RESULT_SUCCESS)
        r = zeCommandListAppendWriteGlobalTimestamp(list, m->slot, m->event, 0, NULL);
    if (r != ZE_RESULT_SUCCESS)
        return status_of(r);
    atomic_store(&m->stamped, false);
    atomic_store(&m->in_flight, true);
    return TLOG_OK;
}

static int ze_record(void *impl, void *queue, tlog_marker marker)
{
    (void)impl;
    if (!queue)
        return TLOG_EINVAL;
    return append_stamp((ze_command_list_handle_t)queue, (ze_marker *)marker);
}

static int ze_record_own(void *impl, tlog_marker marker)
{
    return append_stamp(((ze_impl *)impl)->own, (ze_marker *)marker);
}

/* Whether the marker's timestamp has landed, asking the event if need be:
 * the core may read a marker it knows is reached without querying it (one
 * behind a later marker of the same queue). */
static int settle(ze_marker *m)
{
    if (atomic_load(&m->stamped) || !atomic_load(&m->in_flight))
        return TLOG_OK;
    int rc = status_of(zeEventQueryStatus(m->event));
    if (rc == TLOG_OK)
        atomic_store(&m->in_flight, false);
    return rc;
}

static int ze_query(void *impl, tlog_marker marker)
{
    (void)impl;
    return settle((ze_marker *)marker);
}

static int ze_wait(void *impl, tlog_marker marker, uint64_t timeout_ns)
{
    (void)impl;
    ze_marker *m = (ze_marker *)marker;
    if (atomic_load(&m->stamped) || !atomic_load(&m->in_flight))
        return TLOG_OK;
    ze_result_t r = zeEventHostSynchronize(m->event, timeout_ns);
    if (r == ZE_RESULT_NOT_READY)
        return TLOG_ETIMEDOUT;
    if (r == ZE_RESULT_SUCCESS)
        atomic_store(&m->in_flight, false);
    return status_of(r);
}

/* The own list's gate: an event the host signals, for which the list waits
 * while the core records its calibration markers, so that they run back to
 * back however long each append takes. */
static int gate_make(ze_impl *z)
{
    if (z->gate)
        return TLOG_OK;
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                               .count = 1};
    ze_result_t r = zeEventPoolCreate(z->context, &pd, 1, &z->device, &z->gate_pool);
    if (r == ZE_RESULT_SUCCESS) {
        ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                              .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                              .wait = ZE_EVENT_SCOPE_FLAG_HOST};
        r = zeEventCreate(z->gate_pool, &ed, &z->gate);
    }
    return status_of(r);
}

static int ze_hold_own(void *impl, void **hold)
{
    ze_impl *z = impl;
    *hold = NULL;
    int rc = gate_make(z);
    if (rc == TLOG_OK)
        rc = status_of(zeEventHostReset(z->gate));
    if (rc == TLOG_OK)
        rc = status_of(zeCommandListAppendWaitOnEvents(z->own, 1, &z->gate));
    return rc;
}

static int ze_release_own(void *impl, void *hold)
{
    (void)hold;
    return status_of(zeEventHostSignal(((ze_impl *)impl)->gate));
}

static uint64_t reading(const ze_marker *m)
{
    return atomic_load(&m->stamped) ? m->now : *(volatile const uint64_t *)m->slot;
}

/* Ticks from `a` to `b` modulo the counter's width, read as a signed
 * difference: right across a wrap, and for either order. */
static int64_t tick_delta(const ze_impl *z, uint64_t a, uint64_t b)
{
    uint64_t d = (b - a) & z->mask;
    if (z->valid_bits < 64 && d >> (z->valid_bits - 1))
        return (int64_t)d - (int64_t)(z->mask) - 1;
    return (int64_t)d;
}

static int ze_elapsed(void *impl, tlog_marker from, tlog_marker to, int64_t *ns)
{
    ze_impl *z = impl;
    ze_marker *a = (ze_marker *)from, *b = (ze_marker *)to;
    int rc = settle(a);
    if (rc == TLOG_OK)
        rc = settle(b);
    if (rc != TLOG_OK)
        return rc;
    *ns = tlog_round_ns_((double)tick_delta(z, reading(a), reading(b)) * z->ns_per_tick);
    return TLOG_OK;
}

static int ze_mark_now(void *impl, tlog_marker marker)
{
    ze_impl *z = impl;
    ze_marker *m = (ze_marker *)marker;
    if (atomic_load(&m->in_flight))
        return TLOG_EBUSY;
    uint64_t host = 0, device = 0;
    ze_result_t r = zeDeviceGetGlobalTimestamps(z->device, &host, &device);
    if (r != ZE_RESULT_SUCCESS)
        return status_of(r);
    m->now = device & z->mask;
    atomic_store(&m->stamped, true);
    return TLOG_OK;
}

/* Chunks of devices destroyed with markers in flight: a list the
 * application has yet to run may still write them, so they stay. */
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;
static ze_chunk *abandoned;

/* A forked child may destroy devices of its own: it must not find the list
 * locked by a thread it does not have. */
static void abandoned_lock_take(void) { pthread_mutex_lock(&abandoned_lock); }
static void abandoned_lock_give(void) { pthread_mutex_unlock(&abandoned_lock); }

__attribute__((constructor)) static void abandoned_lock_across_fork(void)
{
    pthread_atfork(abandoned_lock_take, abandoned_lock_give, abandoned_lock_give);
}

static void impl_free(ze_impl *z)
{
    if (z->own && !z->leaked)
        zeCommandListDestroy(z->own);
    while (z->chunks) {
        ze_chunk *c = z->chunks;
        z->chunks = c->next;
        if (z->leaked) {
            /* The own list may still hold writes into these chunks. */
            c->kept_list = z->own;
            c->kept_gate = z->gate;
            c->kept_gate_pool = z->gate_pool;
            z->gate = NULL;
            z->gate_pool = NULL;
            pthread_mutex_lock(&abandoned_lock);
            c->next = abandoned;
            abandoned = c;
            pthread_mutex_unlock(&abandoned_lock);
        } else {
            chunk_free(z, c);
        }
    }
    if (z->gate)
        zeEventDestroy(z->gate);
    if (z->gate_pool)
        zeEventPoolDestroy(z->gate_pool);
    if (z->own_context && !z->leaked)
        zeContextDestroy(z->context);
    pthread_mutex_destroy(&z->lock);
    free(z);
}

static void ze_destroy(void *impl)
{
    impl_free(impl);
}

static const tlog_device_ops ze_ops = {
    .size = sizeof(tlog_device_ops),
    .abi = TLOG_DEVICE_ABI,
    .backend = "level_zero",
    .marker_create = ze_marker_create,
    .marker_destroy = ze_marker_destroy,
    .record = ze_record,
    .record_own = ze_record_own,
    .query = ze_query,
    .wait = ze_wait,
    .elapsed_ns = ze_elapsed,
    .mark_now = ze_mark_now,
    .hold_own = ze_hold_own,
    .release_own = ze_release_own,
    .destroy = ze_destroy,
};

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

static int no_device(tlog_log *log, const char *why, ze_result_t r)
{
    tlog_backend_report_(log, TLOG_ENODEVICE,
                         "Level Zero: %s (0x%x); Level Zero scopes are not timed", why,
                         (unsigned)r);
    return TLOG_ENODEVICE;
}

/* The first GPU of the first driver, and a context of its own. */
static int find_gpu(tlog_log *log, ze_impl *z)
{
    ze_result_t r = zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (r != ZE_RESULT_SUCCESS)
        return no_device(log, "no driver (zeInit failed)", r);
    uint32_t n = 1;
    ze_driver_handle_t driver = NULL;
    r = zeDriverGet(&n, &driver);
    if (r != ZE_RESULT_SUCCESS || n == 0)
        return no_device(log, "no driver", r);
    n = 1;
    r = zeDeviceGet(driver, &n, &z->device);
    if (r != ZE_RESULT_SUCCESS || n == 0)
        return no_device(log, "no GPU", r);
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    r = zeContextCreate(driver, &cd, &z->context);
    if (r != ZE_RESULT_SUCCESS)
        return status_of(r);
    z->own_context = true;
    return TLOG_OK;
}

/* Where `device` is among the drivers' devices: the API version of the
 * driver that owns it (1.0 if unknown), and its place counting every
 * driver's devices in turn (UINT32_MAX if not found), which tells two
 * devices of one model apart, as CUDA's ordinal does. */
static ze_api_version_t place_of(ze_device_handle_t device, uint32_t *ordinal)
{
    ze_api_version_t v = ZE_API_VERSION_1_0;
    *ordinal = UINT32_MAX;
    uint32_t n = 0, before = 0;
    if (zeDriverGet(&n, NULL) != ZE_RESULT_SUCCESS || n == 0)
        return v;
    ze_driver_handle_t *drivers = calloc(n, sizeof *drivers);
    if (drivers && zeDriverGet(&n, drivers) == ZE_RESULT_SUCCESS) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t count = 0;
            zeDeviceGet(drivers[i], &count, NULL);
            ze_device_handle_t *devs = count ? calloc(count, sizeof *devs) : NULL;
            if (devs && zeDeviceGet(drivers[i], &count, devs) == ZE_RESULT_SUCCESS)
                for (uint32_t k = 0; k < count; k++)
                    if (devs[k] == device && *ordinal == UINT32_MAX) {
                        *ordinal = before + k;
                        zeDriverGetApiVersion(drivers[i], &v);
                    }
            free(devs);
            before += count;
        }
    }
    free(drivers);
    return v;
}

/* Timer resolution and width. From API 1.2 on, the _1_2 properties give the
 * resolution in cycles per second; the older form, whole nanoseconds per
 * tick, loses the fraction (83.333 ns on many GPUs). */
static int timer_of(tlog_log *log, ze_impl *z, char *name, size_t name_size)
{
    uint32_t ordinal;
    bool hz = place_of(z->device, &ordinal) >= ZE_API_VERSION_1_2;
    ze_device_properties_t p = {.stype = hz ? ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
                                            : ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ze_result_t r = zeDeviceGetProperties(z->device, &p);
    if (r != ZE_RESULT_SUCCESS)
        return status_of(r);
    if (ordinal == UINT32_MAX)
        snprintf(name, name_size, "%s", p.name);
    else
        snprintf(name, name_size, "%.*s (%u)", ZE_MAX_DEVICE_NAME - 1, p.name, ordinal);
    if (p.timerResolution == 0 || p.timestampValidBits == 0 || p.timestampValidBits > 64) {
        tlog_backend_report_(log, TLOG_EDEVICE,
                             "Level Zero: %s reports a timer of resolution %llu and %u bits",
                             name, (unsigned long long)p.timerResolution,
                             (unsigned)p.timestampValidBits);
        return TLOG_EDEVICE;
    }
    z->ns_per_tick = hz ? 1e9 / (double)p.timerResolution : (double)p.timerResolution;
    z->valid_bits = p.timestampValidBits;
    z->mask = z->valid_bits == 64 ? UINT64_MAX : (UINT64_C(1) << z->valid_bits) - 1;
    return TLOG_OK;
}

static int own_list(ze_impl *z)
{
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .ordinal = OWN_LIST_ORDINAL,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    return status_of(zeCommandListCreateImmediate(z->context, z->device, &qd, &z->own));
}

static int impl_setup(tlog_log *log, ze_impl *z, ze_context_handle_t context,
                      ze_device_handle_t device, char *name, size_t name_size)
{
    int rc = TLOG_OK;
    if (!device) {
        rc = find_gpu(log, z);
    } else {
        z->context = context;
        z->device = device;
    }
    if (rc == TLOG_OK)
        rc = timer_of(log, z, name, name_size);
    if (rc == TLOG_OK)
        rc = own_list(z);
    return rc;
}

int tlog_ze_device_create(tlog_log *log, ze_context_handle_t context, ze_device_handle_t device,
                          const tlog_device_config *config, tlog_device **out)
{
    if (!out || (!context) != (!device))
        return TLOG_EINVAL;
    *out = NULL;
    ze_impl *z = calloc(1, sizeof *z);
    if (!z)
        return TLOG_ENOMEM;
    pthread_mutex_init(&z->lock, NULL);
    char name[ZE_MAX_DEVICE_NAME + 16] = "Level Zero device";   /* and " (ordinal)" */
    int rc = impl_setup(log, z, context, device, name, sizeof name);
    if (rc == TLOG_OK)
        rc = tlog_device_register_(log, &ze_ops, z, name, config, out);
    if (rc != TLOG_OK && rc != TLOG_ENODEVICE)
        tlog_backend_report_(log, rc, "Level Zero: cannot set up %s: %s", name,
                             tlog_strerror(rc));
    if (rc != TLOG_OK)
        impl_free(z);
    return rc;
}

ze_context_handle_t tlog_ze_context(const tlog_device *dev)
{
    if (!dev)
        return NULL;
    tlog_device_info info = {.size = sizeof info};
    if (tlog_device_get_info(dev, &info) != TLOG_OK || strcmp(info.backend, ze_ops.backend))
        return NULL;
    return ((ze_impl *)tlog_device_impl_(dev))->context;
}

static _Atomic uint64_t untimed;

uint64_t tlog_ze_scopes_untimed(void)
{
    return atomic_load(&untimed);
}

tlog_device_scope tlog_ze_begin(tlog_device *dev, ze_command_list_handle_t list,
                                const tlog_site *site)
{
    if (!dev) {
        tlog_device_scope none = {NULL, 0};
        atomic_fetch_add_explicit(&untimed, 1, memory_order_relaxed);
        return none;
    }
    return tlog_device_begin(dev, list, site);
}
