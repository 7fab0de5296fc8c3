/*
 * The device behaviour suite on Vulkan, on whatever device the loader finds
 * (Mesa's lavapipe in CI; skips with 77 without one). A queue of the suite
 * is a stream of command buffers (vk_app.h), all submitted to the device's
 * one queue; work is the spin shader, which runs for a given time by the
 * device's real-time clock. Holds are a vkCmdWaitEvents on an event the
 * host sets.
 *
 *   suite_vulkan calibrated   anchors from VK_EXT_calibrated_timestamps,
 *                             timestamps by vkCmdWriteTimestamp2
 *   suite_vulkan submitted    neither: anchors are timestamps submitted on
 *                             the library's queue, vkCmdWriteTimestamp
 *   suite_vulkan wrap32       a 32-bit counter of 2.5 ns ticks that wraps
 *                             0.3 s into the run (through the shim, in a
 *                             -Dtest_hooks=true build)
 *   suite_vulkan wrap64       a 64-bit counter that wraps 0.2 s into the run
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <timerlog/vulkan.h>

#include "device_suite.h"
#include "vk_app.h"
#include "vk_shim.h"


static vk_app app;
static bool through_shim;
static atomic_uint next_slot;

static int open_device(tlog_log *log, tlog_device **out)
{
    tlog_vk_target t = vk_app_target(&app);
    if (through_shim)
        t.get_instance_proc_addr = shim_get_instance_proc_addr;
    return tlog_vk_device_create(log, &t, NULL, out);
}

static void *queue_create(void)
{
    return vk_stream_create(&app);
}

static void queue_destroy(void *q)
{
    vk_stream_destroy(q);
}

static void *handle(void *q)
{
    return ((vk_stream *)q)->open;
}

static int launch(void *cmd, uint64_t ns)
{
    vk_app_spin(&app, cmd, ns, atomic_fetch_add(&next_slot, 1));
    return 0;
}

static int submit(void *q)
{
    return vk_stream_submit(q);
}

static int finish(void *q)
{
    return vk_stream_finish(q);
}

static int hold(void *q)
{
    return vk_stream_hold(q);
}

static int release(void *q)
{
    return vk_stream_release(q);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "calibrated";
    unsigned want = VK_APP_SYNC2 | VK_APP_CALIBRATED;
    if (strcmp(mode, "submitted") == 0) {
        want = 0;
    } else if (strncmp(mode, "wrap", 4) == 0) {
#ifdef TLOG_TEST_HOOKS_BUILD
        tlog_vk_test_convert(shim_convert);
#else
        printf("%s needs a -Dtest_hooks=true build: skipped\n", mode);
        return 77;
#endif
    }
    if (strcmp(mode, "wrap32") == 0) {
        shim.valid_bits = 32;
        shim.period = 2.5;
        shim.start_ticks = (UINT64_C(1) << 32) - 120000000u;   /* 0.3 s of 2.5 ns */
        through_shim = true;
    } else if (strcmp(mode, "wrap64") == 0) {
        shim.valid_bits = 64;
        shim.start_ticks = UINT64_MAX - 200000000u;             /* 0.2 s of 1 ns */
        through_shim = true;
    } else if (strcmp(mode, "calibrated") != 0 && strcmp(mode, "submitted") != 0) {
        fprintf(stderr, "usage: suite_vulkan [calibrated|submitted|wrap32|wrap64]\n");
        return 2;
    }
#ifdef VK_APP_UNDER_TSAN
    printf("%s: the suite's timings are not checked under ThreadSanitizer: lavapipe's "
           "allocations and locks go through its interceptors, and the device runs several "
           "times slower (test_vulkan threads records from threads under it)\n", mode);
    return 77;
#endif
    int rc = vk_app_open(&app, want);
    if (rc != 0)
        return rc;
    printf("%s: %s, timestamps by %s, anchors by %s\n", mode, app.name,
           app.flags & TLOG_VK_SYNCHRONIZATION2 ? "vkCmdWriteTimestamp2" : "vkCmdWriteTimestamp",
           app.flags & TLOG_VK_CALIBRATED_TIMESTAMPS ? "calibrated timestamps" : "submissions");
    char name[64];
    snprintf(name, sizeof name, "vulkan (%s)", mode);
    const suite_backend b = {
        .name = name,
        .open = open_device,
        .queue_create = queue_create,
        .queue_destroy = queue_destroy,
        .handle = handle,
        .launch = launch,
        .submit = submit,
        .finish = finish,
        .hold = hold,
        .release = release,
        /* lavapipe runs the device on the host's cores: each timestamp
         * flushes its queue (10-50 us), and a dispatch costs tens of us. */
        .tolerance_ns = 300000,
        .serial_queues = true,
        /* ... and a busy host delays its threads by milliseconds. */
        .retries = 4,
    };
    rc = suite_run(&b);
    vk_app_close(&app);
    return rc;
}
