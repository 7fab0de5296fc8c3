/*
 * A small Vulkan application for the backend's tests, bench and suite: an
 * instance and a device on the first physical device the loader finds
 * (Mesa's lavapipe in CI), the two compute shaders of ../shaders, and
 * streams of command buffers that play the part of queues.
 *
 * Every VkQueue submission of the application and of the library goes
 * through one mutex (the target's lock_queue), so threads may submit at
 * will.
 */
#ifndef TIMERLOG_TEST_VK_APP_H
#define TIMERLOG_TEST_VK_APP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <timerlog/vulkan.h>

/* Under ThreadSanitizer, lavapipe's allocations and locks go through its
 * interceptors: the device itself runs several times slower, so tests that
 * check how long it took skip there. */
#if defined(__SANITIZE_THREAD__)
#define VK_APP_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VK_APP_UNDER_TSAN 1
#endif
#endif

/* What to enable on the device, where it has it. */
enum vk_app_want {
    VK_APP_SYNC2 = 1u << 0,         /* synchronization2 */
    VK_APP_CALIBRATED = 1u << 1     /* calibrated timestamps */
};

#define VK_APP_SLOTS 512            /* self_ns slots of the spin shader */

typedef struct vk_app {
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    unsigned flags;                 /* tlog_vk_flags of what was enabled */
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    double period;                  /* timestampPeriod */
    pthread_mutex_t queue_lock;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline spin, work;
    VkDescriptorPool descriptors;
    VkDescriptorSet set;
    VkBuffer buffer;
    VkDeviceMemory memory;
    volatile uint64_t *words;       /* [slot]: spin's own time; [512+]: work */
} vk_app;

/* 0 once open; 77 (the tests' skip) when the loader finds no device, or
 * none with what the tests need (printed); 1 on a failure. */
int vk_app_open(vk_app *a, unsigned want);
void vk_app_close(vk_app *a);

/* The target for a device of the library on `a`, with its flags. */
tlog_vk_target vk_app_target(vk_app *a);

/* Records into `cmd`: spinning for `ns` (self time in words[slot]), in
 * dispatches of at most 50 ms; `rounds` of the work shader; each after a
 * barrier, so that work on a command buffer runs in order. */
void vk_app_spin(vk_app *a, VkCommandBuffer cmd, uint64_t ns, uint32_t slot);
void vk_app_work(vk_app *a, VkCommandBuffer cmd, uint32_t rounds, uint32_t slot);

/* vkQueueSubmit of one command buffer, under the queue lock. */
VkResult vk_app_submit(vk_app *a, VkCommandBuffer cmd, VkFence fence);
/* vkQueueWaitIdle under the queue lock. */
VkResult vk_app_wait_idle(vk_app *a);

/*
 * A stream: the command buffer being recorded, and those submitted and not
 * yet waited for. Command buffers and fences are reused once waited for.
 * A stream is used by one thread at a time.
 */
#define VK_STREAM_MAX 64

typedef struct vk_stream {
    vk_app *app;
    VkCommandPool pool;
    VkCommandBuffer open;           /* recording */
    VkFence open_fence;
    struct { VkCommandBuffer cmd; VkFence fence; } ran[VK_STREAM_MAX], spare[VK_STREAM_MAX];
    int nran, nspare;
    VkEvent gate;                   /* what a hold waits for */
    bool held;
} vk_stream;

vk_stream *vk_stream_create(vk_app *a);
/* Waits for the stream first. */
void vk_stream_destroy(vk_stream *s);
/* Ends the open command buffer, submits it and opens a new one: 0 or 1. */
int vk_stream_submit(vk_stream *s);
/* Submits, then waits for everything submitted: 0 or 1. */
int vk_stream_finish(vk_stream *s);
/* The open command buffer waits for an event until vk_stream_release sets
 * it: what is recorded meanwhile runs back to back. */
int vk_stream_hold(vk_stream *s);
int vk_stream_release(vk_stream *s);

#endif
