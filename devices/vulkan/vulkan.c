/*
 * The Vulkan backend: timestamps written by the application's command
 * buffers into query pools of the library's own, as markers, behind the
 * backend interface.
 *
 * A marker is one query of a pool of CHUNK timestamp queries and a slot of
 * host memory beside it; the core's pool decides how many exist, and pools
 * are made a chunk at a time. Recording a marker writes the timestamp, then
 * has the command buffer copy it, with its availability, into the slot
 * (vkCmdCopyQueryPoolResults, waiting for the timestamp), behind a barrier
 * that makes the copy visible to the host. Reading a marker is then a load
 * from host memory: never vkGetQueryPoolResults, which some drivers serve by
 * waiting for the whole device to go idle (Mesa's lavapipe 22.3 does). A
 * query and its slot are reset from the host when the chunk is made and
 * again right after the timestamp has been read (the value is kept in the
 * marker).
 *
 * Every Vulkan function comes from the application's vkGetInstanceProcAddr
 * and vkGetDeviceProcAddr, so that the library works beside any loader and
 * a test can stand between it and the driver.
 *
 * The backend's own work (the calibration's timestamps, and anchors on a
 * device without calibrated timestamps) goes into a few command buffers of
 * its own, submitted on the queue the application gave for it; a hold of
 * that queue is a command buffer recorded but not yet submitted.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "timerlog/vulkan.h"

#define CHUNK 128                /* queries per pool */
#define MAX_FAMILIES 32
#define OWN_CMDS 4               /* own command buffers: anchors in flight */
#define OWN_DRAIN_NS 1000000000ull   /* what destroy waits for them */
#define COPY_FLAGS                                                           \
    (VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT | VK_QUERY_RESULT_WAIT_BIT)
#define SLOT_BYTES (2 * sizeof(uint64_t))   /* value, availability */
#define KNOWN_FLAGS                                                          \
    (TLOG_VK_HOST_QUERY_RESET | TLOG_VK_SYNCHRONIZATION2 | TLOG_VK_CALIBRATED_TIMESTAMPS)

/* A marker's state. Its query is reset from the host when the marker is
 * made (CLEAN), and in the command buffer before each timestamp: never from
 * the host once used, since the command buffer that last used it may still
 * be pending when its copy shows in host memory, and a query may be reset
 * from the host only once the commands that refer to it have completed.
 * Query commands on one query and one queue run in submission order, so the
 * reset in the command buffer follows the earlier use's copy. */
enum { M_CLEAN, M_FLIGHT, M_READ, M_NOW };

typedef struct vk_chunk vk_chunk;

typedef struct vk_marker {
    vk_chunk *chunk;
    struct vk_marker *next_free;
    uint32_t query;
    atomic_int state;
    _Atomic uint64_t ticks;      /* READ: its timestamp; NOW: mark_now's */
} vk_marker;

struct vk_chunk {
    vk_chunk *next;
    VkQueryPool pool;
    VkBuffer buffer;             /* the slots, CHUNK of SLOT_BYTES */
    VkDeviceMemory memory;
    volatile uint64_t *slots;    /* mapped: value, availability per query */
    vk_marker markers[CHUNK];
};

typedef struct vk_fns {
    PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
    PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices;   /* may be NULL */
    PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetPhysicalDeviceQueueFamilyProperties;
    PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT GetCalibrateableTimeDomains;
    PFN_vkCreateQueryPool CreateQueryPool;
    PFN_vkDestroyQueryPool DestroyQueryPool;
    PFN_vkResetQueryPool ResetQueryPool;
    PFN_vkCmdResetQueryPool CmdResetQueryPool;
    PFN_vkCmdWriteTimestamp CmdWriteTimestamp;
    PFN_vkCmdCopyQueryPoolResults CmdCopyQueryPoolResults;
    PFN_vkCmdPipelineBarrier CmdPipelineBarrier;
    PFN_vkCreateBuffer CreateBuffer;
    PFN_vkDestroyBuffer DestroyBuffer;
    PFN_vkGetBufferMemoryRequirements GetBufferMemoryRequirements;
    PFN_vkAllocateMemory AllocateMemory;
    PFN_vkFreeMemory FreeMemory;
    PFN_vkBindBufferMemory BindBufferMemory;
    PFN_vkMapMemory MapMemory;
    PFN_vkCmdWriteTimestamp2 CmdWriteTimestamp2;
    PFN_vkGetCalibratedTimestampsEXT GetCalibratedTimestamps;
    PFN_vkCreateCommandPool CreateCommandPool;
    PFN_vkDestroyCommandPool DestroyCommandPool;
    PFN_vkAllocateCommandBuffers AllocateCommandBuffers;
    PFN_vkResetCommandBuffer ResetCommandBuffer;
    PFN_vkBeginCommandBuffer BeginCommandBuffer;
    PFN_vkEndCommandBuffer EndCommandBuffer;
    PFN_vkQueueSubmit QueueSubmit;
    PFN_vkCreateFence CreateFence;
    PFN_vkDestroyFence DestroyFence;
    PFN_vkGetFenceStatus GetFenceStatus;
    PFN_vkResetFences ResetFences;
    PFN_vkWaitForFences WaitForFences;
} vk_fns;

typedef struct own_cmd {
    VkCommandBuffer cmd;
    VkFence fence;
    bool submitted;              /* its fence will signal */
} own_cmd;

typedef struct vk_impl {
    vk_fns fn;
    tlog_log *log;               /* where the loss is reported */
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    void (*lock_queue)(void *);
    void (*unlock_queue)(void *);
    void *queue_user;
    bool sync2;
    VkPhysicalDeviceMemoryProperties memory_types;
    uint32_t families[MAX_FAMILIES];   /* those that write timestamps */
    uint32_t nfamilies;
    double ns_per_tick;          /* timestampPeriod */
    uint64_t mask;               /* timestampValidBits */
    unsigned valid_bits;
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE + 16];   /* with " (N)" */

    pthread_mutex_t lock;        /* chunks and the free list */
    vk_chunk *chunks;
    vk_marker *free;
    pthread_mutex_t read_lock;   /* reads of markers in flight */

    /* The core calls the own-queue operations from one thread at a time. */
    VkCommandPool own_pool;
    own_cmd own[OWN_CMDS];
    own_cmd *held;               /* hold_own's, recording until release */
    /* Never submitted: its status says whether the device was lost, which
     * a read of host memory cannot. */
    VkFence probe;

    atomic_bool lost;
    atomic_bool lost_told;
    _Atomic int chunk_failed;    /* the VkResult of a pool not made, untold */
} vk_impl;

/* The status of a Vulkan result; a lost device stays lost. */
static int status_of(vk_impl *z, VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return TLOG_OK;
    case VK_NOT_READY:
    case VK_TIMEOUT: return TLOG_PENDING;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return TLOG_ENOMEM;
    case VK_ERROR_DEVICE_LOST:
        atomic_store(&z->lost, true);
        return TLOG_EDEVICE;
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return TLOG_ENODEVICE;
    default: return TLOG_EDEVICE;
    }
}

/* Said once, from a thread that holds no library lock (a scope's begin or
 * end): the core's own reports name only the failed read. */
static void tell_lost(vk_impl *z)
{
    if (!atomic_exchange(&z->lost_told, true))
        tlog_backend_report_(z->log, TLOG_EDEVICE,
                             "Vulkan: %s was lost (VK_ERROR_DEVICE_LOST): intervals not yet "
                             "read show unresolved, and its device scopes are no longer timed",
                             z->name);
}

/* A query pool that could not be made (the marker thread or a read tried,
 * holding library locks), told by the next scope: the core's report says
 * only that scopes found no marker. */
static void tell_chunk_failed(vk_impl *z)
{
    int r = atomic_exchange_explicit(&z->chunk_failed, 0, memory_order_relaxed);
    if (r)
        tlog_backend_report_(z->log, r == VK_ERROR_OUT_OF_HOST_MEMORY ||
                                             r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                                         ? TLOG_ENOMEM
                                         : TLOG_EDEVICE,
                             "Vulkan: %s: a query pool for more markers could not be made "
                             "(VkResult %d); scopes that find no marker are dropped and counted",
                             z->name, r);
}

/* Test builds (-Dtest_hooks=true) pass every reading of the device's
 * counter through a function a test sets, so that the counter can be made
 * narrower, slower or close to its wrap on a real device. */
#ifdef TIMERLOG_TEST_HOOKS
TLOG_API void tlog_vk_test_convert(uint64_t (*convert)(uint64_t ticks));

static uint64_t (*_Atomic test_convert)(uint64_t);

void tlog_vk_test_convert(uint64_t (*convert)(uint64_t ticks))
{
    atomic_store(&test_convert, convert);
}

static uint64_t device_reading(uint64_t ticks)
{
    uint64_t (*convert)(uint64_t) = atomic_load(&test_convert);
    return convert ? convert(ticks) : ticks;
}
#else
static inline uint64_t device_reading(uint64_t ticks)
{
    return ticks;
}
#endif

/* ------------------------------------------------------------------------ */
/* Markers                                                                  */
/* ------------------------------------------------------------------------ */

static void chunk_free(vk_impl *z, vk_chunk *c)
{
    if (c->pool)
        z->fn.DestroyQueryPool(z->device, c->pool, NULL);
    if (c->buffer)
        z->fn.DestroyBuffer(z->device, c->buffer, NULL);
    if (c->memory)
        z->fn.FreeMemory(z->device, c->memory, NULL);   /* unmaps it */
    free(c);
}

/* Host-visible, coherent memory for `bits`; cached where there is such,
 * since the host polls it. UINT32_MAX if none. */
static uint32_t slot_memory_type(const vk_impl *z, uint32_t bits)
{
    const VkMemoryPropertyFlags need =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t found = UINT32_MAX;
    for (uint32_t i = 0; i < z->memory_types.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = z->memory_types.memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (f & need) != need)
            continue;
        if (found == UINT32_MAX || (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT))
            found = i;
        if (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
            break;
    }
    return found;
}

/* The chunk's slots: a buffer the command buffers copy timestamps into,
 * mapped for good. */
static int chunk_slots(vk_impl *z, vk_chunk *c)
{
    /* Concurrent where command buffers of several families may copy into
     * it (exclusive is the only mode a single family may name). */
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = CHUNK * SLOT_BYTES,
                               .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               .sharingMode = z->nfamilies > 1 ? VK_SHARING_MODE_CONCURRENT
                                                               : VK_SHARING_MODE_EXCLUSIVE,
                               .queueFamilyIndexCount = z->nfamilies > 1 ? z->nfamilies : 0,
                               .pQueueFamilyIndices = z->families};
    int rc = status_of(z, z->fn.CreateBuffer(z->device, &info, NULL, &c->buffer));
    if (rc != TLOG_OK) {
        c->buffer = VK_NULL_HANDLE;
        return rc;
    }
    VkMemoryRequirements req;
    z->fn.GetBufferMemoryRequirements(z->device, c->buffer, &req);
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .allocationSize = req.size,
                                  .memoryTypeIndex = slot_memory_type(z, req.memoryTypeBits)};
    if (alloc.memoryTypeIndex == UINT32_MAX)
        return TLOG_ENOMEM;
    rc = status_of(z, z->fn.AllocateMemory(z->device, &alloc, NULL, &c->memory));
    if (rc != TLOG_OK) {
        c->memory = VK_NULL_HANDLE;
        return rc;
    }
    void *p = NULL;
    rc = status_of(z, z->fn.BindBufferMemory(z->device, c->buffer, c->memory, 0));
    if (rc == TLOG_OK)
        rc = status_of(z, z->fn.MapMemory(z->device, c->memory, 0, VK_WHOLE_SIZE, 0, &p));
    if (rc == TLOG_OK) {
        c->slots = p;
        memset(p, 0, CHUNK * SLOT_BYTES);
    }
    return rc;
}

/* A pool of CHUNK queries and their slots, reset, onto the free list.
 * Caller holds z->lock. */
static int chunk_add(vk_impl *z)
{
    if (atomic_load(&z->lost))
        return TLOG_EDEVICE;
    vk_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return TLOG_ENOMEM;
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                  .queryCount = CHUNK};
    VkResult r = z->fn.CreateQueryPool(z->device, &info, NULL, &c->pool);
    int rc = status_of(z, r);
    if (rc != TLOG_OK) {
        c->pool = VK_NULL_HANDLE;
        atomic_store(&z->chunk_failed, (int)r);
    }
    if (rc == TLOG_OK)
        rc = chunk_slots(z, c);
    if (rc != TLOG_OK) {
        chunk_free(z, c);
        return rc;
    }
    /* A new query may not be written before it is reset. */
    z->fn.ResetQueryPool(z->device, c->pool, 0, CHUNK);
    for (uint32_t i = 0; i < CHUNK; i++) {
        vk_marker *m = &c->markers[i];
        m->chunk = c;
        m->query = i;
        atomic_init(&m->state, M_CLEAN);
        atomic_init(&m->ticks, 0);
        m->next_free = z->free;
        z->free = m;
    }
    c->next = z->chunks;
    z->chunks = c;
    return TLOG_OK;
}

static int vk_marker_create(void *impl, tlog_marker *out)
{
    vk_impl *z = impl;
    pthread_mutex_lock(&z->lock);
    int rc = z->free ? TLOG_OK : chunk_add(z);
    if (rc == TLOG_OK) {
        vk_marker *m = z->free;
        z->free = m->next_free;
        *out = (tlog_marker)m;
    }
    pthread_mutex_unlock(&z->lock);
    return rc;
}

/* The query goes back with its marker; a marker left in flight by an error
 * is reset before it is written again (write_stamp). */
static void vk_marker_destroy(void *impl, tlog_marker marker)
{
    vk_impl *z = impl;
    vk_marker *m = (vk_marker *)marker;
    pthread_mutex_lock(&z->lock);
    m->next_free = z->free;
    z->free = m;
    pthread_mutex_unlock(&z->lock);
}

/* ------------------------------------------------------------------------ */
/* Recording and reading                                                    */
/* ------------------------------------------------------------------------ */

static volatile uint64_t *slot_of(const vk_marker *m)
{
    return m->chunk->slots + 2 * m->query;
}

/* The host copy of a marker used before, cleared before it is written
 * again (its query is reset in the command buffer, see M_CLEAN). */
static void slot_clear(vk_marker *m)
{
    volatile uint64_t *slot = slot_of(m);
    slot[0] = slot[1] = 0;
}

/* The timestamp, then its copy into the marker's slot once written (the
 * copy waits for it), made visible to the host. The marker is not in
 * flight: the core reuses a marker only once it has been read. */
static void write_stamp(vk_impl *z, VkCommandBuffer cmd, vk_marker *m)
{
    VkQueryPool pool = m->chunk->pool;
    if (atomic_load_explicit(&m->state, memory_order_relaxed) != M_CLEAN)
        slot_clear(m);
    atomic_store_explicit(&m->state, M_FLIGHT, memory_order_release);
    z->fn.CmdResetQueryPool(cmd, pool, m->query, 1);
    if (z->sync2)
        z->fn.CmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool, m->query);
    else
        z->fn.CmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, m->query);
    z->fn.CmdCopyQueryPoolResults(cmd, pool, m->query, 1, m->chunk->buffer,
                                  (VkDeviceSize)m->query * SLOT_BYTES, SLOT_BYTES, COPY_FLAGS);
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    z->fn.CmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                             1, &to_host, 0, NULL, 0, NULL);
}

static int vk_record(void *impl, void *queue, tlog_marker marker)
{
    vk_impl *z = impl;
    if (!queue)
        return TLOG_EINVAL;
    if (atomic_load_explicit(&z->lost, memory_order_relaxed)) {
        tell_lost(z);
        return TLOG_EDEVICE;
    }
    if (atomic_load_explicit(&z->chunk_failed, memory_order_relaxed))
        tell_chunk_failed(z);
    write_stamp(z, (VkCommandBuffer)queue, (vk_marker *)marker);
    return TLOG_OK;
}

/* Reads a marker in flight without waiting: once its slot says the
 * timestamp is there, the value is kept (the query and slot are reset when
 * the marker is next recorded). Caller holds z->read_lock. */
static int read_slot(vk_impl *z, vk_marker *m)
{
    volatile uint64_t *slot = slot_of(m);
    if (!slot[1]) {
        VkResult r = z->fn.GetFenceStatus(z->device, z->probe);
        return r == VK_NOT_READY || r == VK_SUCCESS ? TLOG_PENDING : status_of(z, r);
    }
    atomic_thread_fence(memory_order_acquire);   /* the value after its flag */
    atomic_store(&m->ticks, device_reading(slot[0]) & z->mask);
    atomic_store(&m->state, M_READ);
    return TLOG_OK;
}

/* Whether the marker's timestamp is known, reading it if need be: the core
 * may read a marker it knows is reached without querying it (one behind a
 * later marker of the same command buffer). */
static int settle(vk_impl *z, vk_marker *m)
{
    if (atomic_load_explicit(&m->state, memory_order_acquire) != M_FLIGHT)
        return TLOG_OK;
    if (atomic_load_explicit(&z->lost, memory_order_relaxed))
        return TLOG_EDEVICE;
    pthread_mutex_lock(&z->read_lock);
    int rc = atomic_load(&m->state) == M_FLIGHT ? read_slot(z, m) : TLOG_OK;
    pthread_mutex_unlock(&z->read_lock);
    return rc;
}

static int vk_query(void *impl, tlog_marker marker)
{
    return settle(impl, (vk_marker *)marker);
}

/* Ticks from `a` to `b` modulo the counter's width, read as a signed
 * difference: right across a wrap, and for either order. */
static int64_t tick_delta(const vk_impl *z, uint64_t a, uint64_t b)
{
    uint64_t d = (b - a) & z->mask;
    if (z->valid_bits < 64 && d >> (z->valid_bits - 1))
        return (int64_t)d - (int64_t)z->mask - 1;
    return (int64_t)d;
}

static int vk_elapsed(void *impl, tlog_marker from, tlog_marker to, int64_t *ns)
{
    vk_impl *z = impl;
    vk_marker *a = (vk_marker *)from, *b = (vk_marker *)to;
    int rc = settle(z, a);
    if (rc == TLOG_OK)
        rc = settle(z, b);
    if (rc != TLOG_OK)
        return rc;
    int64_t ticks = tick_delta(z, atomic_load(&a->ticks), atomic_load(&b->ticks));
    *ns = tlog_round_ns_((double)ticks * z->ns_per_tick);
    return TLOG_OK;
}

/* The device's clock now, from the calibrated-timestamps extension. */
static int vk_mark_now(void *impl, tlog_marker marker)
{
    vk_impl *z = impl;
    vk_marker *m = (vk_marker *)marker;
    if (atomic_load(&m->state) == M_FLIGHT)
        return TLOG_EBUSY;
    VkCalibratedTimestampInfoEXT info = {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                                         .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT};
    uint64_t ticks = 0, deviation = 0;
    int rc = status_of(z, z->fn.GetCalibratedTimestamps(z->device, 1, &info, &ticks, &deviation));
    if (rc != TLOG_OK)
        return rc;
    atomic_store(&m->ticks, device_reading(ticks) & z->mask);
    atomic_store(&m->state, M_NOW);
    return TLOG_OK;
}

/* ------------------------------------------------------------------------ */
/* The backend's own queue                                                  */
/* ------------------------------------------------------------------------ */

/* A command buffer of the backend's own, recording. TLOG_EBUSY while all
 * of them still run. */
static int own_begin(vk_impl *z, own_cmd **out)
{
    own_cmd *c = NULL;
    for (int i = 0; i < OWN_CMDS && !c; i++) {
        if (!z->own[i].submitted) {
            c = &z->own[i];
            break;
        }
        VkResult r = z->fn.GetFenceStatus(z->device, z->own[i].fence);
        if (r == VK_SUCCESS)
            c = &z->own[i];
        else if (r != VK_NOT_READY)
            return status_of(z, r);
    }
    if (!c)
        return TLOG_EBUSY;
    int rc = TLOG_OK;
    if (c->submitted)
        rc = status_of(z, z->fn.ResetFences(z->device, 1, &c->fence));
    c->submitted = false;
    if (rc == TLOG_OK)
        rc = status_of(z, z->fn.ResetCommandBuffer(c->cmd, 0));
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (rc == TLOG_OK)
        rc = status_of(z, z->fn.BeginCommandBuffer(c->cmd, &begin));
    *out = c;
    return rc;
}

static int own_submit(vk_impl *z, own_cmd *c)
{
    int rc = status_of(z, z->fn.EndCommandBuffer(c->cmd));
    if (rc != TLOG_OK)
        return rc;
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &c->cmd};
    if (z->lock_queue)
        z->lock_queue(z->queue_user);
    VkResult r = z->fn.QueueSubmit(z->queue, 1, &submit, c->fence);
    if (z->unlock_queue)
        z->unlock_queue(z->queue_user);
    c->submitted = r == VK_SUCCESS;
    return status_of(z, r);
}

static int vk_record_own(void *impl, tlog_marker marker)
{
    vk_impl *z = impl;
    vk_marker *m = (vk_marker *)marker;
    if (atomic_load(&z->lost))
        return TLOG_EDEVICE;
    if (z->held) {
        write_stamp(z, z->held->cmd, m);
        return TLOG_OK;
    }
    own_cmd *c = NULL;
    int rc = own_begin(z, &c);
    if (rc != TLOG_OK)
        return rc;
    write_stamp(z, c->cmd, m);
    return own_submit(z, c);
}

/* Holds the own queue: what is recorded meanwhile goes into one command
 * buffer, submitted at release, so that it runs back to back however
 * slowly the host records it. */
static int vk_hold_own(void *impl, void **hold)
{
    vk_impl *z = impl;
    own_cmd *c = NULL;
    *hold = NULL;
    if (atomic_load(&z->lost))
        return TLOG_EDEVICE;
    int rc = own_begin(z, &c);
    if (rc == TLOG_OK) {
        z->held = c;
        *hold = c;
    }
    return rc;
}

static int vk_release_own(void *impl, void *hold)
{
    vk_impl *z = impl;
    z->held = NULL;
    return own_submit(z, hold);
}

static int own_setup(vk_impl *z)
{
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = z->family};
    int rc = status_of(z, z->fn.CreateCommandPool(z->device, &pool, NULL, &z->own_pool));
    VkCommandBuffer cmds[OWN_CMDS];
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = z->own_pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = OWN_CMDS};
    if (rc == TLOG_OK)
        rc = status_of(z, z->fn.AllocateCommandBuffers(z->device, &alloc, cmds));
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (rc == TLOG_OK)
        rc = status_of(z, z->fn.CreateFence(z->device, &fence, NULL, &z->probe));
    for (int i = 0; i < OWN_CMDS && rc == TLOG_OK; i++) {
        z->own[i].cmd = cmds[i];
        rc = status_of(z, z->fn.CreateFence(z->device, &fence, NULL, &z->own[i].fence));
    }
    return rc;
}

/* The own command buffers' last submissions, waited for (a while) so that
 * their pool can go; a device that never finishes them keeps it. */
static bool own_drained(vk_impl *z)
{
    VkFence fences[OWN_CMDS];
    uint32_t n = 0;
    for (int i = 0; i < OWN_CMDS; i++)
        if (z->own[i].submitted)
            fences[n++] = z->own[i].fence;
    return n == 0 || atomic_load(&z->lost) ||
           z->fn.WaitForFences(z->device, n, fences, VK_TRUE, OWN_DRAIN_NS) == VK_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* The backend interface                                                    */
/* ------------------------------------------------------------------------ */

static void impl_free(vk_impl *z)
{
    if (own_drained(z)) {
        for (int i = 0; i < OWN_CMDS; i++)
            if (z->own[i].fence)
                z->fn.DestroyFence(z->device, z->own[i].fence, NULL);
        if (z->own_pool)
            z->fn.DestroyCommandPool(z->device, z->own_pool, NULL);
    }
    if (z->probe)
        z->fn.DestroyFence(z->device, z->probe, NULL);
    while (z->chunks) {
        vk_chunk *c = z->chunks;
        z->chunks = c->next;
        chunk_free(z, c);
    }
    pthread_mutex_destroy(&z->lock);
    pthread_mutex_destroy(&z->read_lock);
    free(z);
}

static void vk_destroy(void *impl)
{
    impl_free(impl);
}

/* Anchored by a submission on the own queue. */
static const tlog_device_ops vk_ops = {
    .size = sizeof(tlog_device_ops),
    .abi = TLOG_DEVICE_ABI,
    .backend = "vulkan",
    .marker_create = vk_marker_create,
    .marker_destroy = vk_marker_destroy,
    .record = vk_record,
    .record_own = vk_record_own,
    .query = vk_query,
    .elapsed_ns = vk_elapsed,
    .hold_own = vk_hold_own,
    .release_own = vk_release_own,
    .destroy = vk_destroy,
};

/* Anchored by calibrated timestamps. */
static const tlog_device_ops vk_ops_calibrated = {
    .size = sizeof(tlog_device_ops),
    .abi = TLOG_DEVICE_ABI,
    .backend = "vulkan",
    .marker_create = vk_marker_create,
    .marker_destroy = vk_marker_destroy,
    .record = vk_record,
    .record_own = vk_record_own,
    .query = vk_query,
    .elapsed_ns = vk_elapsed,
    .mark_now = vk_mark_now,
    .hold_own = vk_hold_own,
    .release_own = vk_release_own,
    .destroy = vk_destroy,
};

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

static int refuse(tlog_log *log, int code, const char *why)
{
    tlog_backend_report_(log, code, "Vulkan: %s", why);
    return code;
}

/* The caller's target, whatever its version, into *out (zeroed first). */
static int target_of(tlog_log *log, const tlog_vk_target *in, tlog_vk_target *out)
{
    memset(out, 0, sizeof *out);
    if (!in)
        return refuse(log, TLOG_EINVAL, "no target given");
    size_t n = in->size ? in->size : sizeof *in;
    if (n < offsetof(tlog_vk_target, flags) + sizeof in->flags)
        return refuse(log, TLOG_EINVAL, "the target's size is too small for its fields");
    if (n % sizeof(void *))   /* no struct's size: it would cut a pointer in two */
        return refuse(log, TLOG_EINVAL, "the target's size is not a struct's (sizeof)");
    memcpy(out, in, n < sizeof *out ? n : sizeof *out);
    if (!out->instance || !out->physical_device || !out->device || !out->queue)
        return refuse(log, TLOG_EINVAL,
                      "the target needs an instance, a physical device, a device and a queue");
    if (out->flags & ~(unsigned)KNOWN_FLAGS)
        return refuse(log, TLOG_EINVAL, "unknown flags in the target");
    if (!(out->flags & TLOG_VK_HOST_QUERY_RESET))
        return refuse(log, TLOG_EINVAL,
                      "device scopes need the hostQueryReset feature enabled on the device "
                      "(Vulkan 1.2, or VK_EXT_host_query_reset); say so with "
                      "TLOG_VK_HOST_QUERY_RESET");
    if (!out->lock_queue != !out->unlock_queue)
        return refuse(log, TLOG_EINVAL, "lock_queue and unlock_queue go together");
    return TLOG_OK;
}

/* The first of `names` (NULL-terminated) that the loader knows. */
static PFN_vkVoidFunction first_of(PFN_vkGetInstanceProcAddr gipa, VkInstance instance,
                                   PFN_vkGetDeviceProcAddr gdpa, VkDevice device,
                                   const char *const *names)
{
    PFN_vkVoidFunction f = NULL;
    for (; *names && !f; names++)
        f = gdpa ? gdpa(device, *names) : gipa(instance, *names);
    return f;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})
/* A function pointer cast to the field's own type: ISO C converts between
 * function pointer types, not through void *. */
#define INSTANCE_FN(field, ...)                                              \
    (z->fn.field = (__typeof__(z->fn.field))first_of(gipa, t->instance, NULL, NULL,     \
                                                     NAMES(__VA_ARGS__)))
#define DEVICE_FN(field, ...)                                                \
    (z->fn.field = (__typeof__(z->fn.field))first_of(NULL, NULL, z->fn.GetDeviceProcAddr, \
                                                     t->device, NAMES(__VA_ARGS__)))

static int load_functions(tlog_log *log, vk_impl *z, const tlog_vk_target *t)
{
    PFN_vkGetInstanceProcAddr gipa =
        t->get_instance_proc_addr ? t->get_instance_proc_addr : vkGetInstanceProcAddr;
    bool ok = INSTANCE_FN(GetDeviceProcAddr, "vkGetDeviceProcAddr") &&
              INSTANCE_FN(GetPhysicalDeviceProperties, "vkGetPhysicalDeviceProperties") &&
              INSTANCE_FN(GetPhysicalDeviceQueueFamilyProperties,
                          "vkGetPhysicalDeviceQueueFamilyProperties") &&
              INSTANCE_FN(GetPhysicalDeviceMemoryProperties,
                          "vkGetPhysicalDeviceMemoryProperties") &&
              DEVICE_FN(CreateQueryPool, "vkCreateQueryPool") &&
              DEVICE_FN(DestroyQueryPool, "vkDestroyQueryPool") &&
              DEVICE_FN(ResetQueryPool, "vkResetQueryPool", "vkResetQueryPoolEXT") &&
              DEVICE_FN(CmdResetQueryPool, "vkCmdResetQueryPool") &&
              DEVICE_FN(CmdWriteTimestamp, "vkCmdWriteTimestamp") &&
              DEVICE_FN(CmdCopyQueryPoolResults, "vkCmdCopyQueryPoolResults") &&
              DEVICE_FN(CmdPipelineBarrier, "vkCmdPipelineBarrier") &&
              DEVICE_FN(CreateBuffer, "vkCreateBuffer") &&
              DEVICE_FN(DestroyBuffer, "vkDestroyBuffer") &&
              DEVICE_FN(GetBufferMemoryRequirements, "vkGetBufferMemoryRequirements") &&
              DEVICE_FN(AllocateMemory, "vkAllocateMemory") &&
              DEVICE_FN(FreeMemory, "vkFreeMemory") &&
              DEVICE_FN(BindBufferMemory, "vkBindBufferMemory") &&
              DEVICE_FN(MapMemory, "vkMapMemory") &&
              DEVICE_FN(CreateCommandPool, "vkCreateCommandPool") &&
              DEVICE_FN(DestroyCommandPool, "vkDestroyCommandPool") &&
              DEVICE_FN(AllocateCommandBuffers, "vkAllocateCommandBuffers") &&
              DEVICE_FN(ResetCommandBuffer, "vkResetCommandBuffer") &&
              DEVICE_FN(BeginCommandBuffer, "vkBeginCommandBuffer") &&
              DEVICE_FN(EndCommandBuffer, "vkEndCommandBuffer") &&
              DEVICE_FN(QueueSubmit, "vkQueueSubmit") &&
              DEVICE_FN(CreateFence, "vkCreateFence") &&
              DEVICE_FN(DestroyFence, "vkDestroyFence") &&
              DEVICE_FN(GetFenceStatus, "vkGetFenceStatus") &&
              DEVICE_FN(ResetFences, "vkResetFences") &&
              DEVICE_FN(WaitForFences, "vkWaitForFences");
    if (!ok)
        return refuse(log, TLOG_ENODEVICE,
                      "the loader lacks a core function the library needs (or vkResetQueryPool: "
                      "is the device Vulkan 1.2, or VK_EXT_host_query_reset enabled?)");
    if ((t->flags & TLOG_VK_SYNCHRONIZATION2) &&
        !DEVICE_FN(CmdWriteTimestamp2, "vkCmdWriteTimestamp2", "vkCmdWriteTimestamp2KHR"))
        return refuse(log, TLOG_ENODEVICE,
                      "TLOG_VK_SYNCHRONIZATION2 given, but the device has no "
                      "vkCmdWriteTimestamp2");
    if (t->flags & TLOG_VK_CALIBRATED_TIMESTAMPS) {
        INSTANCE_FN(GetCalibrateableTimeDomains,
                    "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR",
                    "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
        DEVICE_FN(GetCalibratedTimestamps, "vkGetCalibratedTimestampsKHR",
                  "vkGetCalibratedTimestampsEXT");
    }
    INSTANCE_FN(EnumeratePhysicalDevices, "vkEnumeratePhysicalDevices");
    z->sync2 = z->fn.CmdWriteTimestamp2 != NULL;
    return TLOG_OK;
}

/* Whether the device's own time domain can be read on the host. */
static bool calibrated(vk_impl *z, VkPhysicalDevice physical)
{
    if (!z->fn.GetCalibrateableTimeDomains || !z->fn.GetCalibratedTimestamps)
        return false;
    VkTimeDomainEXT domains[16];
    uint32_t n = 16;
    VkResult r = z->fn.GetCalibrateableTimeDomains(physical, &n, domains);
    bool found = false;
    for (uint32_t i = 0; (r == VK_SUCCESS || r == VK_INCOMPLETE) && i < n; i++)
        found = found || domains[i] == VK_TIME_DOMAIN_DEVICE_EXT;
    return found;
}

/* Where `physical` is among the instance's physical devices (UINT32_MAX if
 * not found), which tells two devices of one model apart, as CUDA's
 * ordinal does. */
static uint32_t place_of(const vk_impl *z, VkInstance instance, VkPhysicalDevice physical)
{
    uint32_t n = 0, place = UINT32_MAX;
    if (!z->fn.EnumeratePhysicalDevices ||
        z->fn.EnumeratePhysicalDevices(instance, &n, NULL) != VK_SUCCESS || n == 0)
        return place;
    VkPhysicalDevice *all = calloc(n, sizeof *all);
    VkResult r = all ? z->fn.EnumeratePhysicalDevices(instance, &n, all)
                     : VK_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; (r == VK_SUCCESS || r == VK_INCOMPLETE) && i < n; i++)
        if (all[i] == physical && place == UINT32_MAX)
            place = i;
    free(all);
    return place;
}

/* Name ("model (N)", N its place_of), tick length and counter width: the
 * narrowest non-zero timestampValidBits of any family, since a scope may be
 * on any of them (differences modulo fewer bits are still right for a wider
 * counter). */
static int timer_of(tlog_log *log, vk_impl *z, VkInstance instance, VkPhysicalDevice physical)
{
    VkPhysicalDeviceProperties p;
    z->fn.GetPhysicalDeviceProperties(physical, &p);
    uint32_t place = place_of(z, instance, physical);
    if (place == UINT32_MAX)
        snprintf(z->name, sizeof z->name, "%.*s", VK_MAX_PHYSICAL_DEVICE_NAME_SIZE - 1,
                 p.deviceName);
    else
        snprintf(z->name, sizeof z->name, "%.*s (%u)", VK_MAX_PHYSICAL_DEVICE_NAME_SIZE - 1,
                 p.deviceName, place);
    uint32_t n = 0;
    z->fn.GetPhysicalDeviceQueueFamilyProperties(physical, &n, NULL);
    VkQueueFamilyProperties *families = n ? calloc(n, sizeof *families) : NULL;
    if (n && !families)
        return TLOG_ENOMEM;
    z->fn.GetPhysicalDeviceQueueFamilyProperties(physical, &n, families);
    unsigned bits = 0, own_bits = 0;
    for (uint32_t i = 0; i < n; i++) {
        unsigned b = families[i].timestampValidBits;
        if (b && (!bits || b < bits))
            bits = b;
        if (b && z->nfamilies < MAX_FAMILIES)
            z->families[z->nfamilies++] = i;
        if (i == z->family)
            own_bits = b;
    }
    free(families);
    if (!(p.limits.timestampPeriod > 0) || bits == 0 || bits > 64 || own_bits == 0) {
        char why[400];
        snprintf(why, sizeof why,
                 "%s cannot time work: timestampPeriod %g, timestampValidBits %u, %u on the "
                 "target's queue family %u",
                 z->name, (double)p.limits.timestampPeriod, bits, own_bits, z->family);
        return refuse(log, TLOG_ENODEVICE, why);
    }
    z->ns_per_tick = p.limits.timestampPeriod;
    z->valid_bits = bits;
    z->mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    return TLOG_OK;
}

static int impl_setup(tlog_log *log, vk_impl *z, const tlog_vk_target *t, bool *calibrated_out)
{
    z->log = log;
    z->device = t->device;
    z->queue = t->queue;
    z->family = t->queue_family;
    z->lock_queue = t->lock_queue;
    z->unlock_queue = t->unlock_queue;
    z->queue_user = t->queue_user;
    snprintf(z->name, sizeof z->name, "Vulkan device");
    int rc = load_functions(log, z, t);
    if (rc == TLOG_OK) {
        z->fn.GetPhysicalDeviceMemoryProperties(t->physical_device, &z->memory_types);
        rc = timer_of(log, z, t->instance, t->physical_device);
    }
    if (rc == TLOG_OK)
        rc = own_setup(z);
    *calibrated_out = rc == TLOG_OK && calibrated(z, t->physical_device);
    return rc;
}

int tlog_vk_device_create(tlog_log *log, const tlog_vk_target *target,
                          const tlog_device_config *config, tlog_device **out)
{
    tlog_vk_target t;
    if (!out)
        return refuse(log, TLOG_EINVAL, "tlog_vk_device_create without a place for the device");
    *out = NULL;
    int rc = target_of(log, target, &t);
    if (rc != TLOG_OK)
        return rc;
    vk_impl *z = calloc(1, sizeof *z);
    if (!z)
        return TLOG_ENOMEM;
    pthread_mutex_init(&z->lock, NULL);
    pthread_mutex_init(&z->read_lock, NULL);
    bool cal = false;
    rc = impl_setup(log, z, &t, &cal);
    if (rc == TLOG_OK)
        rc = tlog_device_register_(log, cal ? &vk_ops_calibrated : &vk_ops, z, z->name, config,
                                   out);
    if (rc != TLOG_OK && rc != TLOG_ENODEVICE)
        tlog_backend_report_(log, rc, "Vulkan: cannot set up %s: %s%s", z->name,
                             tlog_strerror(rc),
                             atomic_load(&z->lost) ? " (VK_ERROR_DEVICE_LOST)" : "");
    if (rc != TLOG_OK)
        impl_free(z);
    return rc;
}

static _Atomic uint64_t untimed;

uint64_t tlog_vk_scopes_untimed(void)
{
    return atomic_load(&untimed);
}

tlog_device_scope tlog_vk_begin(tlog_device *dev, VkCommandBuffer cmd, const tlog_site *site)
{
    if (!dev) {
        tlog_device_scope none = {NULL, 0};
        atomic_fetch_add_explicit(&untimed, 1, memory_order_relaxed);
        return none;
    }
    return tlog_device_begin(dev, (void *)cmd, site);
}
