/* The tests' Vulkan application (vk_app.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin_spv.h"
#include "vk_app.h"
#include "work_spv.h"

#define SKIP 77
#define SPIN_CHUNK_NS 50000000ull

static bool has_extension(VkPhysicalDevice physical, const char *name)
{
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(physical, NULL, &n, NULL);
    VkExtensionProperties *ext = calloc(n ? n : 1, sizeof *ext);
    bool found = false;
    if (ext && vkEnumerateDeviceExtensionProperties(physical, NULL, &n, ext) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(ext[i].extensionName, name) == 0;
    free(ext);
    return found;
}

static int first_device(vk_app *a)
{
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "timerlog tests",
                             .apiVersion = VK_API_VERSION_1_3};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app};
    VkResult r = vkCreateInstance(&ici, NULL, &a->instance);
    if (r != VK_SUCCESS) {
        printf("no Vulkan instance (VkResult %d): skipped\n", (int)r);
        a->instance = VK_NULL_HANDLE;
        return SKIP;
    }
    uint32_t n = 1;
    r = vkEnumeratePhysicalDevices(a->instance, &n, &a->physical);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
        printf("no Vulkan device: skipped\n");
        return SKIP;
    }
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(a->physical, &p);
    snprintf(a->name, sizeof a->name, "%s", p.deviceName);
    a->period = p.limits.timestampPeriod;
    if (VK_API_VERSION_MINOR(p.apiVersion) < 2 && VK_API_VERSION_MAJOR(p.apiVersion) == 1) {
        printf("%s is Vulkan 1.%u; the tests need 1.2: skipped\n", a->name,
               VK_API_VERSION_MINOR(p.apiVersion));
        return SKIP;
    }
    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(a->physical, &nf, NULL);
    VkQueueFamilyProperties fam[16];
    nf = nf > 16 ? 16 : nf;
    vkGetPhysicalDeviceQueueFamilyProperties(a->physical, &nf, fam);
    for (a->family = 0; a->family < nf; a->family++)
        if ((fam[a->family].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            fam[a->family].timestampValidBits)
            return 0;
    printf("%s has no compute queue that writes timestamps: skipped\n", a->name);
    return SKIP;
}

static int make_device(vk_app *a, unsigned want)
{
    VkPhysicalDeviceShaderClockFeaturesKHR clock = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    VkPhysicalDeviceSynchronization2Features sync2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES, .pNext = &clock};
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &sync2};
    VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                   .pNext = &v12};
    vkGetPhysicalDeviceFeatures2(a->physical, &f);
    if (!v12.hostQueryReset || !clock.shaderDeviceClock || !f.features.shaderInt64 ||
        !has_extension(a->physical, VK_KHR_SHADER_CLOCK_EXTENSION_NAME)) {
        printf("%s lacks hostQueryReset, a device shader clock or 64-bit integers: skipped\n",
               a->name);
        return SKIP;
    }
    const char *ext[3] = {VK_KHR_SHADER_CLOCK_EXTENSION_NAME};
    uint32_t next = 1;
    a->flags = TLOG_VK_HOST_QUERY_RESET;
    bool has_sync2 = sync2.synchronization2 &&
                     (has_extension(a->physical, VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME));
    if (!(want & VK_APP_SYNC2) || !has_sync2)
        sync2.synchronization2 = VK_FALSE;
    else {
        ext[next++] = VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME;
        a->flags |= TLOG_VK_SYNCHRONIZATION2;
    }
    if ((want & VK_APP_CALIBRATED) &&
        has_extension(a->physical, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME)) {
        ext[next++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
        a->flags |= TLOG_VK_CALIBRATED_TIMESTAMPS;
    }
    /* Only what is used: a device with everything on would hide a missing
     * flag. */
    VkPhysicalDeviceShaderClockFeaturesKHR clock_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR,
        .shaderDeviceClock = VK_TRUE};
    VkPhysicalDeviceSynchronization2Features sync2_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES,
        .pNext = &clock_on, .synchronization2 = sync2.synchronization2};
    VkPhysicalDeviceVulkan12Features v12_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &sync2_on,
        .hostQueryReset = VK_TRUE};
    VkPhysicalDeviceFeatures2 on = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &v12_on, .features.shaderInt64 = VK_TRUE};
    float priority = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = a->family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &on,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &q,
                              .enabledExtensionCount = next,
                              .ppEnabledExtensionNames = ext};
    VkResult r = vkCreateDevice(a->physical, &dci, NULL, &a->device);
    if (r != VK_SUCCESS) {
        fprintf(stderr, "vkCreateDevice: %d\n", (int)r);
        a->device = VK_NULL_HANDLE;
        return 1;
    }
    vkGetDeviceQueue(a->device, a->family, 0, &a->queue);
    return 0;
}

static uint32_t memory_type(vk_app *a, uint32_t bits, VkMemoryPropertyFlags want)
{
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(a->physical, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
            return i;
    return UINT32_MAX;
}

static VkResult make_buffer(vk_app *a)
{
    VkDeviceSize size = 2 * VK_APP_SLOTS * sizeof(uint64_t);
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = size,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT};
    VkResult r = vkCreateBuffer(a->device, &bci, NULL, &a->buffer);
    if (r != VK_SUCCESS)
        return r;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(a->device, a->buffer, &req);
    VkMemoryAllocateInfo mai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = memory_type(a, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                               VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)};
    if (mai.memoryTypeIndex == UINT32_MAX)
        return VK_ERROR_FEATURE_NOT_PRESENT;
    void *p = NULL;
    if ((r = vkAllocateMemory(a->device, &mai, NULL, &a->memory)) != VK_SUCCESS ||
        (r = vkBindBufferMemory(a->device, a->buffer, a->memory, 0)) != VK_SUCCESS ||
        (r = vkMapMemory(a->device, a->memory, 0, size, 0, &p)) != VK_SUCCESS)
        return r;
    a->words = p;
    memset(p, 0, size);
    return VK_SUCCESS;
}

static VkResult make_descriptors(vk_app *a)
{
    VkDescriptorSetLayoutBinding b = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                      VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo sl = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = 1,
                                          .pBindings = &b};
    VkPushConstantRange pc = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 16};
    VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &a->set_layout,
                                     .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &pc};
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo dp = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 1,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
    VkDescriptorSetAllocateInfo ds = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &a->set_layout};
    VkResult r;
    if ((r = vkCreateDescriptorSetLayout(a->device, &sl, NULL, &a->set_layout)) != VK_SUCCESS ||
        (r = vkCreatePipelineLayout(a->device, &pl, NULL, &a->layout)) != VK_SUCCESS ||
        (r = vkCreateDescriptorPool(a->device, &dp, NULL, &a->descriptors)) != VK_SUCCESS)
        return r;
    ds.descriptorPool = a->descriptors;
    if ((r = vkAllocateDescriptorSets(a->device, &ds, &a->set)) != VK_SUCCESS)
        return r;
    VkDescriptorBufferInfo bi = {a->buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .dstSet = a->set,
                              .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &bi};
    vkUpdateDescriptorSets(a->device, 1, &w, 0, NULL);
    return VK_SUCCESS;
}

static VkResult make_pipeline(vk_app *a, const uint32_t *code, size_t size, VkPipeline *out)
{
    VkShaderModuleCreateInfo smci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                     .codeSize = size,
                                     .pCode = code};
    VkShaderModule module;
    VkResult r = vkCreateShaderModule(a->device, &smci, NULL, &module);
    if (r != VK_SUCCESS)
        return r;
    VkComputePipelineCreateInfo cp = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main"},
        .layout = a->layout};
    r = vkCreateComputePipelines(a->device, VK_NULL_HANDLE, 1, &cp, NULL, out);
    vkDestroyShaderModule(a->device, module, NULL);
    return r;
}

/* Both shaders run once, so that their first dispatch (compiled then, on
 * llvmpipe) is not in any test's timings. */
static int warm_up(vk_app *a)
{
    vk_stream *s = vk_stream_create(a);
    if (!s)
        return 1;
    vk_app_spin(a, s->open, 1000, 0);
    vk_app_work(a, s->open, 1, 0);
    int rc = vk_stream_finish(s);
    vk_stream_destroy(s);
    return rc;
}

int vk_app_open(vk_app *a, unsigned want)
{
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->queue_lock, NULL);
    int rc = first_device(a);
    if (rc == 0)
        rc = make_device(a, want);
    VkResult r = VK_SUCCESS;
    if (rc == 0 && ((r = make_buffer(a)) != VK_SUCCESS || (r = make_descriptors(a)) != VK_SUCCESS ||
                    (r = make_pipeline(a, tlog_vk_spin_spv, sizeof tlog_vk_spin_spv, &a->spin)) !=
                        VK_SUCCESS ||
                    (r = make_pipeline(a, tlog_vk_work_spv, sizeof tlog_vk_work_spv, &a->work)) !=
                        VK_SUCCESS)) {
        fprintf(stderr, "setting up the test application: VkResult %d\n", (int)r);
        rc = 1;
    }
    if (rc == 0)
        rc = warm_up(a);
    if (rc != 0)
        vk_app_close(a);
    return rc;
}

void vk_app_close(vk_app *a)
{
    if (a->device) {
        vkDeviceWaitIdle(a->device);
        vkDestroyPipeline(a->device, a->spin, NULL);
        vkDestroyPipeline(a->device, a->work, NULL);
        vkDestroyDescriptorPool(a->device, a->descriptors, NULL);
        vkDestroyPipelineLayout(a->device, a->layout, NULL);
        vkDestroyDescriptorSetLayout(a->device, a->set_layout, NULL);
        vkDestroyBuffer(a->device, a->buffer, NULL);
        vkFreeMemory(a->device, a->memory, NULL);
        vkDestroyDevice(a->device, NULL);
    }
    if (a->instance)
        vkDestroyInstance(a->instance, NULL);
    pthread_mutex_destroy(&a->queue_lock);
    memset(a, 0, sizeof *a);
}

static void lock_queue(void *user)
{
    pthread_mutex_lock(&((vk_app *)user)->queue_lock);
}

static void unlock_queue(void *user)
{
    pthread_mutex_unlock(&((vk_app *)user)->queue_lock);
}

tlog_vk_target vk_app_target(vk_app *a)
{
    tlog_vk_target t = {.size = sizeof t,
                        .instance = a->instance,
                        .physical_device = a->physical,
                        .device = a->device,
                        .queue = a->queue,
                        .queue_family = a->family,
                        .flags = a->flags,
                        .lock_queue = lock_queue,
                        .unlock_queue = unlock_queue,
                        .queue_user = a};
    return t;
}

/* Work on a command buffer runs in order, as on a CUDA stream. */
static void after_previous(VkCommandBuffer cmd)
{
    VkMemoryBarrier m = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                         .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                         .dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &m, 0, NULL, 0, NULL);
}

void vk_app_spin(vk_app *a, VkCommandBuffer cmd, uint64_t ns, uint32_t slot)
{
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->spin);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->layout, 0, 1, &a->set, 0,
                            NULL);
    do {
        uint64_t args[2] = {ns < SPIN_CHUNK_NS ? ns : SPIN_CHUNK_NS, slot % VK_APP_SLOTS};
        after_previous(cmd);
        vkCmdPushConstants(cmd, a->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof args, args);
        vkCmdDispatch(cmd, 1, 1, 1);
        ns -= args[0];
    } while (ns > 0);
}

void vk_app_work(vk_app *a, VkCommandBuffer cmd, uint32_t rounds, uint32_t slot)
{
    uint32_t args[2] = {rounds, slot % VK_APP_SLOTS};
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->work);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->layout, 0, 1, &a->set, 0,
                            NULL);
    after_previous(cmd);
    vkCmdPushConstants(cmd, a->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof args, args);
    vkCmdDispatch(cmd, 1, 1, 1);
}

VkResult vk_app_submit(vk_app *a, VkCommandBuffer cmd, VkFence fence)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cmd};
    pthread_mutex_lock(&a->queue_lock);
    VkResult r = vkQueueSubmit(a->queue, 1, &si, fence);
    pthread_mutex_unlock(&a->queue_lock);
    return r;
}

VkResult vk_app_wait_idle(vk_app *a)
{
    pthread_mutex_lock(&a->queue_lock);
    VkResult r = vkQueueWaitIdle(a->queue);
    pthread_mutex_unlock(&a->queue_lock);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Streams                                                                  */
/* ------------------------------------------------------------------------ */

static int stream_open(vk_stream *s)
{
    VkDevice d = s->app->device;
    if (s->nspare) {
        s->nspare--;
        s->open = s->spare[s->nspare].cmd;
        s->open_fence = s->spare[s->nspare].fence;
        if (vkResetCommandBuffer(s->open, 0) != VK_SUCCESS ||
            vkResetFences(d, 1, &s->open_fence) != VK_SUCCESS)
            return 1;
    } else {
        VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                          .commandPool = s->pool,
                                          .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                          .commandBufferCount = 1};
        VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        if (vkAllocateCommandBuffers(d, &ai, &s->open) != VK_SUCCESS ||
            vkCreateFence(d, &fi, NULL, &s->open_fence) != VK_SUCCESS)
            return 1;
    }
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    return vkBeginCommandBuffer(s->open, &bi) != VK_SUCCESS;
}

vk_stream *vk_stream_create(vk_app *a)
{
    vk_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->app = a;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = a->family};
    VkEventCreateInfo ei = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    if (vkCreateCommandPool(a->device, &pi, NULL, &s->pool) != VK_SUCCESS ||
        vkCreateEvent(a->device, &ei, NULL, &s->gate) != VK_SUCCESS || stream_open(s) != 0) {
        vk_stream_destroy(s);
        return NULL;
    }
    return s;
}

int vk_stream_submit(vk_stream *s)
{
    if (s->nran == VK_STREAM_MAX || vkEndCommandBuffer(s->open) != VK_SUCCESS ||
        vk_app_submit(s->app, s->open, s->open_fence) != VK_SUCCESS)
        return 1;
    s->ran[s->nran].cmd = s->open;
    s->ran[s->nran].fence = s->open_fence;
    s->nran++;
    return stream_open(s);
}

int vk_stream_finish(vk_stream *s)
{
    int rc = vk_stream_submit(s);
    for (int i = 0; i < s->nran; i++) {
        if (vkWaitForFences(s->app->device, 1, &s->ran[i].fence, VK_TRUE, UINT64_MAX) !=
            VK_SUCCESS)
            rc = 1;
        s->spare[s->nspare++] = s->ran[i];
    }
    s->nran = 0;
    return rc;
}

int vk_stream_hold(vk_stream *s)
{
    if (vkResetEvent(s->app->device, s->gate) != VK_SUCCESS)
        return 1;
    vkCmdWaitEvents(s->open, 1, &s->gate, VK_PIPELINE_STAGE_HOST_BIT,
                    VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, NULL, 0, NULL, 0, NULL);
    s->held = true;
    return 0;
}

int vk_stream_release(vk_stream *s)
{
    s->held = false;
    return vkSetEvent(s->app->device, s->gate) != VK_SUCCESS;
}

void vk_stream_destroy(vk_stream *s)
{
    if (!s)
        return;
    VkDevice d = s->app->device;
    if (s->held)
        vk_stream_release(s);
    if (s->open) {
        vk_stream_finish(s);
        vkEndCommandBuffer(s->open);
        vkDestroyFence(d, s->open_fence, NULL);
    }
    for (int i = 0; i < s->nspare; i++)
        vkDestroyFence(d, s->spare[i].fence, NULL);
    if (s->gate)
        vkDestroyEvent(d, s->gate, NULL);
    if (s->pool)
        vkDestroyCommandPool(d, s->pool, NULL);
    free(s);
}
