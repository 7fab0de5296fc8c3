/*
 * Device rows from Vulkan: a small compute loop on the first device the
 * loader finds (Mesa's lavapipe runs it on the CPU where there is no GPU).
 * Each frame records two command buffers. The simulation's dispatches are
 * waited for inside a sync scope bound to their command buffer (its fence),
 * so their intervals show under it; the rendering's stand-in dispatches
 * are still running when the frame ends, and show under the frame's
 * `Device past frame end` row. Every frame is printed as it ends: each
 * device row appears once, in the frame that launched it.
 *
 * The compute shader is ../devices/vulkan/shaders/work.comp, compiled at
 * build time. Exits 77 where there is no usable Vulkan device.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <timerlog/timerlog.h>
#include <timerlog/vulkan.h>

#include "work_spv.h"

typedef struct gpu {
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    unsigned flags;              /* what the device was made with */
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDescriptorSetLayout set_layout;
    VkDescriptorPool descriptors;
    VkDescriptorSet set;
    VkPipelineLayout layout;
    VkPipeline work;
    VkCommandPool pool;
    VkCommandBuffer sim, draw;
    VkFence sim_done, draw_done;
} gpu;

static void host_work(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static bool has_extension(VkPhysicalDevice physical, const char *name)
{
    VkExtensionProperties ext[256];
    uint32_t n = 256;
    vkEnumerateDeviceExtensionProperties(physical, NULL, &n, ext);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(ext[i].extensionName, name) == 0)
            return true;
    return false;
}

/* The first device, with a compute queue that writes timestamps and the
 * hostQueryReset feature the library needs; synchronization2 and calibrated
 * timestamps where it has them. */
static bool open_device(gpu *g)
{
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "vulkan_frames",
                             .apiVersion = VK_API_VERSION_1_3};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app};
    uint32_t n = 1;
    if (vkCreateInstance(&ici, NULL, &g->instance) != VK_SUCCESS)
        return false;
    VkResult r = vkEnumeratePhysicalDevices(g->instance, &n, &g->physical);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0)
        return false;
    VkQueueFamilyProperties families[16];
    n = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(g->physical, &n, families);
    for (g->family = 0; g->family < n; g->family++)
        if ((families[g->family].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
            families[g->family].timestampValidBits)
            break;
    VkPhysicalDeviceSynchronization2Features sync2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES};
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &sync2};
    VkPhysicalDeviceFeatures2 features = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          .pNext = &v12};
    vkGetPhysicalDeviceFeatures2(g->physical, &features);
    if (g->family == n || !v12.hostQueryReset)
        return false;
    /* Only what is used is enabled. */
    VkPhysicalDeviceSynchronization2Features sync2_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES,
        .synchronization2 = sync2.synchronization2};
    VkPhysicalDeviceVulkan12Features v12_on = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = &sync2_on, .hostQueryReset = VK_TRUE};
    VkPhysicalDeviceFeatures2 on = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &v12_on};
    g->flags = TLOG_VK_HOST_QUERY_RESET;
    if (sync2.synchronization2)
        g->flags |= TLOG_VK_SYNCHRONIZATION2;
    const char *ext[1];
    uint32_t next = 0;
    if (has_extension(g->physical, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME)) {
        ext[next++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
        g->flags |= TLOG_VK_CALIBRATED_TIMESTAMPS;
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = g->family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .pNext = &on,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &q,
                              .enabledExtensionCount = next,
                              .ppEnabledExtensionNames = ext};
    if (vkCreateDevice(g->physical, &dci, NULL, &g->device) != VK_SUCCESS)
        return false;
    vkGetDeviceQueue(g->device, g->family, 0, &g->queue);
    return true;
}

/* A host-visible buffer for the shader's results. */
static bool make_buffer(gpu *g)
{
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = 8192,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    if (vkCreateBuffer(g->device, &bci, NULL, &g->buffer) != VK_SUCCESS)
        return false;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g->device, g->buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(g->physical, &mp);
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = UINT32_MAX};
    for (uint32_t i = 0; i < mp.memoryTypeCount && mai.memoryTypeIndex == UINT32_MAX; i++)
        if ((req.memoryTypeBits & (1u << i)) &&
            (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
            mai.memoryTypeIndex = i;
    return mai.memoryTypeIndex != UINT32_MAX &&
           vkAllocateMemory(g->device, &mai, NULL, &g->memory) == VK_SUCCESS &&
           vkBindBufferMemory(g->device, g->buffer, g->memory, 0) == VK_SUCCESS;
}

/* The work shader, its buffer bound, and what the frames record into. */
static bool make_pipeline(gpu *g)
{
    VkDescriptorSetLayoutBinding b = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                      VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo sl = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = 1, .pBindings = &b};
    VkPushConstantRange pc = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo dp = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 1, .poolSizeCount = 1, .pPoolSizes = &size};
    VkShaderModuleCreateInfo sm = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = sizeof tlog_vk_work_spv,
                                   .pCode = tlog_vk_work_spv};
    VkShaderModule module;
    if (vkCreateDescriptorSetLayout(g->device, &sl, NULL, &g->set_layout) != VK_SUCCESS ||
        vkCreateDescriptorPool(g->device, &dp, NULL, &g->descriptors) != VK_SUCCESS ||
        vkCreateShaderModule(g->device, &sm, NULL, &module) != VK_SUCCESS)
        return false;
    VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1, .pSetLayouts = &g->set_layout,
                                     .pushConstantRangeCount = 1, .pPushConstantRanges = &pc};
    VkComputePipelineCreateInfo cp = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT, .module = module, .pName = "main"}};
    VkDescriptorSetAllocateInfo ds = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = g->descriptors,
                                      .descriptorSetCount = 1, .pSetLayouts = &g->set_layout};
    bool ok = vkCreatePipelineLayout(g->device, &pl, NULL, &g->layout) == VK_SUCCESS;
    cp.layout = g->layout;
    ok = ok && vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &cp, NULL, &g->work) ==
                   VK_SUCCESS;
    vkDestroyShaderModule(g->device, module, NULL);
    ok = ok && vkAllocateDescriptorSets(g->device, &ds, &g->set) == VK_SUCCESS;
    if (!ok)
        return false;
    VkDescriptorBufferInfo bi = {g->buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .dstSet = g->set, .descriptorCount = 1,
                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = &bi};
    vkUpdateDescriptorSets(g->device, 1, &w, 0, NULL);
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = g->family};
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (vkCreateCommandPool(g->device, &pi, NULL, &g->pool) != VK_SUCCESS)
        return false;
    ai.commandPool = g->pool;
    return vkAllocateCommandBuffers(g->device, &ai, &g->sim) == VK_SUCCESS &&
           vkAllocateCommandBuffers(g->device, &ai, &g->draw) == VK_SUCCESS &&
           vkCreateFence(g->device, &fi, NULL, &g->sim_done) == VK_SUCCESS &&
           vkCreateFence(g->device, &fi, NULL, &g->draw_done) == VK_SUCCESS;
}

/* `rounds` of the work shader, after the work before it on `cmd`. */
static void dispatch(gpu *g, VkCommandBuffer cmd, uint32_t rounds)
{
    uint32_t args[2] = {rounds, 0};
    VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &after, 0, NULL, 0, NULL);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->work);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->layout, 0, 1, &g->set, 0,
                            NULL);
    vkCmdPushConstants(cmd, g->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof args, args);
    vkCmdDispatch(cmd, 1, 1, 1);
}

static void begin(VkCommandBuffer cmd)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    vkResetCommandBuffer(cmd, 0);
    vkBeginCommandBuffer(cmd, &bi);
}

static void submit(gpu *g, VkCommandBuffer cmd, VkFence done)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1, .pCommandBuffers = &cmd};
    vkEndCommandBuffer(cmd);
    vkResetFences(g->device, 1, &done);
    vkQueueSubmit(g->queue, 1, &si, done);
}

static void simulate(gpu *g, tlog_device *dev)
{
    TIMERLOG_SCOPE("Simulation");
    begin(g->sim);
    {
        TIMERLOG_SCOPE("Filter 1");
        host_work(1000);
        TIMERLOG_VK_SCOPE(dev, g->sim, "Filter 1: GPU Parallel Operation 1");
        dispatch(g, g->sim, 8000);
    }
    {
        TIMERLOG_VK_SCOPE(dev, g->sim, "Filter 1: GPU Parallel Operation 2");
        dispatch(g, g->sim, 4000);
    }
    submit(g, g->sim, g->sim_done);
    {
        TIMERLOG_SCOPE("Filter 2");
        host_work(500);
        TIMERLOG_VK_SYNC_CMD_SCOPE(dev, g->sim, "GPU Sync \"wait for filter 1\"");
        vkWaitForFences(g->device, 1, &g->sim_done, VK_TRUE, UINT64_MAX);
    }
}

/* Submitted and not waited for: still running when the frame ends. */
static void render(gpu *g, tlog_device *dev)
{
    TIMERLOG_SCOPE("Rendering");
    begin(g->draw);
    {
        TIMERLOG_VK_SCOPE(dev, g->draw, "Upload to device");
        dispatch(g, g->draw, 1500);
    }
    {
        TIMERLOG_VK_SCOPE(dev, g->draw, "Draw");
        dispatch(g, g->draw, 9000);
    }
    submit(g, g->draw, g->draw_done);
    host_work(800);
}

/* One dispatch run and waited for: a device may compile the shader at its
 * first use (lavapipe does), which is no frame's work. */
static void warm_up(gpu *g)
{
    begin(g->sim);
    dispatch(g, g->sim, 1);
    submit(g, g->sim, g->sim_done);
    vkWaitForFences(g->device, 1, &g->sim_done, VK_TRUE, UINT64_MAX);
}

static void close_device(gpu *g)
{
    if (g->device) {
        vkDeviceWaitIdle(g->device);
        vkDestroyFence(g->device, g->sim_done, NULL);
        vkDestroyFence(g->device, g->draw_done, NULL);
        vkDestroyCommandPool(g->device, g->pool, NULL);
        vkDestroyPipeline(g->device, g->work, NULL);
        vkDestroyPipelineLayout(g->device, g->layout, NULL);
        vkDestroyDescriptorPool(g->device, g->descriptors, NULL);
        vkDestroyDescriptorSetLayout(g->device, g->set_layout, NULL);
        vkDestroyBuffer(g->device, g->buffer, NULL);
        vkFreeMemory(g->device, g->memory, NULL);
        vkDestroyDevice(g->device, NULL);
    }
    if (g->instance)
        vkDestroyInstance(g->instance, NULL);
}

int main(void)
{
    gpu g = {0};
    if (!open_device(&g)) {
        puts("vulkan_frames: no Vulkan device with a timestamp-writing compute queue and "
             "hostQueryReset");
        close_device(&g);
        return 77;
    }
    tlog_device *dev = NULL;
    tlog_vk_target target = {.size = sizeof target,
                             .instance = g.instance,
                             .physical_device = g.physical,
                             .device = g.device,
                             .queue = g.queue,
                             .queue_family = g.family,
                             .flags = g.flags};
    int rc = make_buffer(&g) && make_pipeline(&g) ? TLOG_OK : TLOG_EDEVICE;
    if (rc == TLOG_OK) {
        warm_up(&g);
        rc = tlog_vk_device_create(NULL, &target, NULL, &dev);
    }
    if (rc != TLOG_OK) {
        fprintf(stderr, "vulkan_frames: %s\n", tlog_strerror(rc));
        close_device(&g);
        return 1;
    }
    for (int frame = 0; frame < 3 && rc == TLOG_OK; frame++) {
        {
            TIMERLOG_SCOPE("Frame");
            simulate(&g, dev);
            render(&g, dev);
        }
        printf("%s# frame %d\n", frame ? "\n" : "", frame + 1);
        rc = tlog_dump(NULL, stdout);   /* waits for the draw still running */
        vkWaitForFences(g.device, 1, &g.draw_done, VK_TRUE, UINT64_MAX);
    }
    tlog_device_destroy(dev);   /* before the VkDevice it times */
    close_device(&g);
    return rc == TLOG_OK ? 0 : 1;
}
