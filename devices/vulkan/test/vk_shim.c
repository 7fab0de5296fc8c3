/* The tests' stand-in for the library's vkGetInstanceProcAddr (vk_shim.h). */
#include <pthread.h>
#include <string.h>

#include "vk_shim.h"

vk_shim shim;

static PFN_vkGetDeviceProcAddr real_gdpa;
static PFN_vkGetPhysicalDeviceProperties real_properties;
static PFN_vkGetPhysicalDeviceQueueFamilyProperties real_families;
static PFN_vkGetCalibratedTimestampsEXT real_calibrated;
static PFN_vkQueueSubmit real_submit;
static PFN_vkCreateQueryPool real_create_pool;
static PFN_vkDestroyQueryPool real_destroy_pool;
static PFN_vkGetFenceStatus real_fence_status;

static pthread_mutex_t base_lock = PTHREAD_MUTEX_INITIALIZER;
static bool have_base;
static uint64_t base;            /* the first reading, in device ticks */
static double device_period = 1;

/* A device reading on the shim's counter. */
uint64_t shim_convert(uint64_t ticks)
{
    pthread_mutex_lock(&base_lock);
    if (!have_base) {
        base = ticks;
        have_base = true;
    }
    int64_t since = (int64_t)(ticks - base);
    pthread_mutex_unlock(&base_lock);
    double period = shim.period > 0 ? shim.period : device_period;
    double scaled = (double)since * device_period / period;
    uint64_t t = shim.start_ticks + (uint64_t)(int64_t)(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
    unsigned bits = shim.valid_bits ? shim.valid_bits : 64;
    return bits == 64 ? t : t & ((UINT64_C(1) << bits) - 1);
}

static VkResult lost_or(VkResult r)
{
    return atomic_load(&shim.lose) ? VK_ERROR_DEVICE_LOST : r;
}

static void VKAPI_CALL properties(VkPhysicalDevice physical, VkPhysicalDeviceProperties *p)
{
    real_properties(physical, p);
    device_period = p->limits.timestampPeriod;
    if (shim.period > 0)
        p->limits.timestampPeriod = (float)shim.period;
}

static void VKAPI_CALL families(VkPhysicalDevice physical, uint32_t *n,
                                VkQueueFamilyProperties *out)
{
    real_families(physical, n, out);
    for (uint32_t i = 0; out && shim.valid_bits && i < *n; i++)
        if (out[i].timestampValidBits)
            out[i].timestampValidBits = shim.valid_bits;
}

static VkResult VKAPI_CALL calibrated(VkDevice device, uint32_t count,
                                      const VkCalibratedTimestampInfoEXT *info,
                                      uint64_t *stamps, uint64_t *deviation)
{
    return lost_or(real_calibrated(device, count, info, stamps, deviation));
}

static VkResult VKAPI_CALL submit(VkQueue queue, uint32_t n, const VkSubmitInfo *s, VkFence f)
{
    atomic_fetch_add(&shim.submits, 1);
    if (atomic_load(&shim.lose))
        return VK_ERROR_DEVICE_LOST;
    return real_submit(queue, n, s, f);
}

static VkResult VKAPI_CALL create_pool(VkDevice device, const VkQueryPoolCreateInfo *info,
                                       const VkAllocationCallbacks *alloc, VkQueryPool *out)
{
    if (atomic_load(&shim.fail_pools))
        return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    VkResult r = lost_or(real_create_pool(device, info, alloc, out));
    if (r == VK_SUCCESS) {
        atomic_fetch_add(&shim.pools, 1);
        atomic_fetch_add(&shim.pools_live, 1);
    }
    return r;
}

static void VKAPI_CALL destroy_pool(VkDevice device, VkQueryPool pool,
                                    const VkAllocationCallbacks *alloc)
{
    if (pool)
        atomic_fetch_sub(&shim.pools_live, 1);
    real_destroy_pool(device, pool, alloc);
}

static VkResult VKAPI_CALL fence_status(VkDevice device, VkFence fence)
{
    return lost_or(real_fence_status(device, fence));
}

static const struct {
    const char *name;
    PFN_vkVoidFunction shim;
    PFN_vkVoidFunction *real;
} device_fns[] = {
    {"vkGetCalibratedTimestampsEXT", (PFN_vkVoidFunction)calibrated,
     (PFN_vkVoidFunction *)&real_calibrated},
    {"vkGetCalibratedTimestampsKHR", (PFN_vkVoidFunction)calibrated,
     (PFN_vkVoidFunction *)&real_calibrated},
    {"vkQueueSubmit", (PFN_vkVoidFunction)submit, (PFN_vkVoidFunction *)&real_submit},
    {"vkCreateQueryPool", (PFN_vkVoidFunction)create_pool,
     (PFN_vkVoidFunction *)&real_create_pool},
    {"vkDestroyQueryPool", (PFN_vkVoidFunction)destroy_pool,
     (PFN_vkVoidFunction *)&real_destroy_pool},
    {"vkGetFenceStatus", (PFN_vkVoidFunction)fence_status,
     (PFN_vkVoidFunction *)&real_fence_status},
};

static PFN_vkVoidFunction VKAPI_CALL device_proc_addr(VkDevice device, const char *name)
{
    PFN_vkVoidFunction f = real_gdpa(device, name);
    for (size_t i = 0; f && i < sizeof device_fns / sizeof device_fns[0]; i++)
        if (strcmp(name, device_fns[i].name) == 0) {
            *device_fns[i].real = f;
            return device_fns[i].shim;
        }
    return f;
}

PFN_vkVoidFunction VKAPI_CALL shim_get_instance_proc_addr(VkInstance instance, const char *name)
{
    PFN_vkVoidFunction f = vkGetInstanceProcAddr(instance, name);
    if (!f)
        return NULL;
    if (strcmp(name, "vkGetDeviceProcAddr") == 0) {
        real_gdpa = (PFN_vkGetDeviceProcAddr)f;
        return (PFN_vkVoidFunction)device_proc_addr;
    }
    if (strcmp(name, "vkGetPhysicalDeviceProperties") == 0) {
        real_properties = (PFN_vkGetPhysicalDeviceProperties)f;
        return (PFN_vkVoidFunction)properties;
    }
    if (strcmp(name, "vkGetPhysicalDeviceQueueFamilyProperties") == 0) {
        real_families = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)f;
        return (PFN_vkVoidFunction)families;
    }
    return f;
}
