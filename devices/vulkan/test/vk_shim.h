/*
 * A stand-in vkGetInstanceProcAddr for the library (tlog_vk_target.
 * get_instance_proc_addr): every call goes to the real driver, and the
 * shim can make the device look otherwise than it is, or fail.
 *
 *  - a narrower counter and a longer tick: timestampValidBits and
 *    timestampPeriod as set; in a -Dtest_hooks=true build, shim_convert
 *    given to the library's tlog_vk_test_convert turns every reading of
 *    the device's counter (timestamps and calibrated readings alike) into
 *    that counter, starting at start_ticks at the first reading, so that
 *    it wraps when the test wants;
 *  - a lost device: VK_ERROR_DEVICE_LOST from every call that returns a
 *    VkResult once `lose` is set;
 *  - query pools that cannot be made: VK_ERROR_OUT_OF_DEVICE_MEMORY from
 *    vkCreateQueryPool while `fail_pools` is set;
 *  - counts of the library's submissions and query pools.
 *
 * The application's own calls go to Vulkan directly and see the device as
 * it is.
 */
#ifndef TIMERLOG_TEST_VK_SHIM_H
#define TIMERLOG_TEST_VK_SHIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <timerlog/vulkan.h>

typedef struct vk_shim {
    unsigned valid_bits;         /* 0: the device's */
    double period;               /* ns per tick; 0: the device's */
    uint64_t start_ticks;        /* the first reading, with a period or bits set */
    atomic_bool lose;
    atomic_bool fail_pools;
    _Atomic uint64_t submits;    /* the library's vkQueueSubmit calls */
    _Atomic uint64_t pools;      /* query pools made */
    _Atomic uint64_t pools_live;
} vk_shim;

extern vk_shim shim;

PFN_vkVoidFunction VKAPI_CALL shim_get_instance_proc_addr(VkInstance instance, const char *name);

/* A reading of the device's counter as the shim's counter reads it. */
uint64_t shim_convert(uint64_t ticks);

#ifdef TLOG_TEST_HOOKS_BUILD
/* libtimerlog-vulkan's hook in a -Dtest_hooks=true build. */
TLOG_API void tlog_vk_test_convert(uint64_t (*convert)(uint64_t ticks));
#endif

#endif
