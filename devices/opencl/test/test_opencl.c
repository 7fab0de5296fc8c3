/*
 * The OpenCL backend's own rules on a real runtime (pocl in CI), one
 * process per case; the shared behaviour is in suite_opencl.c. Each case
 * skips with 77 where there is no platform (except no-platform, which runs
 * where the ICD loader is pointed at no vendor).
 *
 * The program defines a few OpenCL entry points itself: the dynamic linker
 * binds the library's calls to them before libOpenCL's, and each passes the
 * call on to the runtime (dlsym RTLD_NEXT). They count what the library
 * calls (blocking waits, flushes, events made and released, queue
 * references), inject errors that the runtime gives only under real
 * pressure (CL_OUT_OF_RESOURCES from an enqueue), and, for host-timer, give
 * pocl the clGetDeviceAndHostTimer it lacks, on the clock pocl's profiling
 * reads (CLOCK_MONOTONIC_RAW, lib/CL/pocl_timing.c). The test's own calls
 * are marked and not counted.
 *
 *   test_opencl CASE   (run without arguments for the list)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "cl_test.h"

#define US 1000ull
#define MS 1000000ull

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* ------------------------------------------------------------------------ */
/* Interposed entry points                                                  */
/* ------------------------------------------------------------------------ */

static _Thread_local bool app;      /* the test's own call: not counted */
#define APP(expr) (app = true, (expr), app = false)

static struct {
    atomic_int blocking;            /* clFinish, clWaitForEvents */
    atomic_int flushes;
    atomic_int flushes_watched;     /* of `watched` */
    atomic_int events_made;         /* marker, barrier and user events */
    atomic_int events_released;
    atomic_int released_early;      /* released while still pending */
    atomic_int queue_refs;          /* created or retained, minus released */
    atomic_int timer_calls;
    atomic_int inject;              /* enqueues still to refuse */
} counts;
static _Atomic(cl_command_queue) watched;
static atomic_bool fake_timer;
static _Atomic uint64_t fake_timer_delay_ns;

#define REAL(name) static __typeof__(&name) real_##name
REAL(clEnqueueMarkerWithWaitList);
REAL(clEnqueueBarrierWithWaitList);
REAL(clCreateUserEvent);
REAL(clReleaseEvent);
REAL(clGetEventInfo);
REAL(clFinish);
REAL(clWaitForEvents);
REAL(clFlush);
REAL(clCreateCommandQueue);
REAL(clRetainCommandQueue);
REAL(clReleaseCommandQueue);
REAL(clGetPlatformInfo);
REAL(clGetDeviceAndHostTimer);

#define RESOLVE(name) *(void **)&real_##name = dlsym(RTLD_NEXT, #name)

static bool resolve_real(void)
{
    RESOLVE(clEnqueueMarkerWithWaitList);
    RESOLVE(clEnqueueBarrierWithWaitList);
    RESOLVE(clCreateUserEvent);
    RESOLVE(clReleaseEvent);
    RESOLVE(clGetEventInfo);
    RESOLVE(clFinish);
    RESOLVE(clWaitForEvents);
    RESOLVE(clFlush);
    RESOLVE(clCreateCommandQueue);
    RESOLVE(clRetainCommandQueue);
    RESOLVE(clReleaseCommandQueue);
    RESOLVE(clGetPlatformInfo);
    RESOLVE(clGetDeviceAndHostTimer);
    return real_clEnqueueMarkerWithWaitList && real_clGetDeviceAndHostTimer && real_clFlush;
}

static bool injected(void)
{
    if (app)
        return false;
    int n = atomic_load(&counts.inject);
    while (n > 0 && !atomic_compare_exchange_weak(&counts.inject, &n, n - 1)) {
    }
    return n > 0;
}

cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n, const cl_event *wait,
                                   cl_event *ev)
{
    if (injected())
        return CL_OUT_OF_RESOURCES;
    cl_int e = real_clEnqueueMarkerWithWaitList(q, n, wait, ev);
    if (e == CL_SUCCESS && ev && !app)
        atomic_fetch_add(&counts.events_made, 1);
    return e;
}

cl_int clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n, const cl_event *wait,
                                    cl_event *ev)
{
    if (injected())
        return CL_OUT_OF_RESOURCES;
    cl_int e = real_clEnqueueBarrierWithWaitList(q, n, wait, ev);
    if (e == CL_SUCCESS && ev && !app)
        atomic_fetch_add(&counts.events_made, 1);
    return e;
}

cl_event clCreateUserEvent(cl_context context, cl_int *e)
{
    cl_event ev = real_clCreateUserEvent(context, e);
    if (ev && !app)
        atomic_fetch_add(&counts.events_made, 1);
    return ev;
}

cl_int clReleaseEvent(cl_event ev)
{
    if (!app) {
        cl_int status = CL_COMPLETE;
        real_clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (status > CL_COMPLETE)
            atomic_fetch_add(&counts.released_early, 1);
        atomic_fetch_add(&counts.events_released, 1);
    }
    return real_clReleaseEvent(ev);
}

cl_int clFinish(cl_command_queue q)
{
    if (!app)
        atomic_fetch_add(&counts.blocking, 1);
    return real_clFinish(q);
}

cl_int clWaitForEvents(cl_uint n, const cl_event *events)
{
    if (!app)
        atomic_fetch_add(&counts.blocking, 1);
    return real_clWaitForEvents(n, events);
}

cl_int clFlush(cl_command_queue q)
{
    if (!app) {
        atomic_fetch_add(&counts.flushes, 1);
        if (q == atomic_load(&watched))
            atomic_fetch_add(&counts.flushes_watched, 1);
    }
    return real_clFlush(q);
}

cl_command_queue clCreateCommandQueue(cl_context context, cl_device_id device,
                                      cl_command_queue_properties props, cl_int *e)
{
    cl_command_queue q = real_clCreateCommandQueue(context, device, props, e);
    if (q && !app)
        atomic_fetch_add(&counts.queue_refs, 1);
    return q;
}

cl_int clRetainCommandQueue(cl_command_queue q)
{
    if (!app)
        atomic_fetch_add(&counts.queue_refs, 1);
    return real_clRetainCommandQueue(q);
}

cl_int clReleaseCommandQueue(cl_command_queue q)
{
    if (!app)
        atomic_fetch_sub(&counts.queue_refs, 1);
    return real_clReleaseCommandQueue(q);
}

cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info name, size_t size,
                         void *value, size_t *size_ret)
{
    if (name == CL_PLATFORM_HOST_TIMER_RESOLUTION && atomic_load(&fake_timer)) {
        cl_ulong one = 1;
        if (value && size >= sizeof one)
            memcpy(value, &one, sizeof one);
        if (size_ret)
            *size_ret = sizeof one;
        return CL_SUCCESS;
    }
    return real_clGetPlatformInfo(platform, name, size, value, size_ret);
}

cl_int clGetDeviceAndHostTimer(cl_device_id device, cl_ulong *device_ns, cl_ulong *host_ns)
{
    if (!atomic_load(&fake_timer))
        return real_clGetDeviceAndHostTimer(device, device_ns, host_ns);
    if (!app)
        atomic_fetch_add(&counts.timer_calls, 1);
    uint64_t delay = atomic_load(&fake_timer_delay_ns);
    if (delay) {
        struct timespec nap = {0, (long)delay};
        nanosleep(&nap, NULL);
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    *device_ns = (cl_ulong)ts.tv_sec * 1000000000u + (cl_ulong)ts.tv_nsec;
    *host_ns = *device_ns;
    return CL_SUCCESS;
}

static void reset_counts(void)
{
    atomic_store(&counts.blocking, 0);
    atomic_store(&counts.flushes, 0);
    atomic_store(&counts.flushes_watched, 0);
    atomic_store(&counts.events_made, 0);
    atomic_store(&counts.events_released, 0);
    atomic_store(&counts.released_early, 0);
    atomic_store(&counts.queue_refs, 0);
    atomic_store(&counts.timer_calls, 0);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static cl_test_env env;

/* Every report a log made. */
typedef struct reports {
    int count;
    char text[64][200];
    int code[64];
} reports;

static void collect(void *user, const tlog_error *e)
{
    reports *r = user;
    if (r->count < 64) {
        snprintf(r->text[r->count], sizeof r->text[0], "%s", e->message);
        r->code[r->count] = e->code;
    }
    r->count++;
}

/* Reports whose text contains `what`. */
static int reported(const reports *r, const char *what)
{
    int n = 0;
    for (int k = 0; k < r->count && k < 64; k++)
        n += strstr(r->text[k], what) != NULL;
    return n;
}

static void print_reports(const reports *r)
{
    for (int k = 0; k < r->count && k < 64; k++)
        printf("  report: %s\n", r->text[k]);
}

static tlog_log *make_log(reports *r, uint64_t sync_timeout_ns)
{
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV, .max_frames = 64,
                     .sync_timeout_ns = sync_timeout_ns, .on_error = collect, .error_user = r};
    tlog_log *log = NULL;
    CHECK(tlog_create(&c, &log) == TLOG_OK);
    return log;
}

static tlog_device *make_device(tlog_log *log, const tlog_device_config *config)
{
    tlog_device *dev = NULL;
    CHECK(tlog_cl_device_create(log, env.context, env.device, config, &dev) == TLOG_OK);
    return dev;
}

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, __FILE__, "test", 0, TLOG_LEVEL_COARSE);
}

static tlog_device_info info(tlog_device *dev)
{
    tlog_device_info i = {.size = sizeof i};
    CHECK(tlog_device_get_info(dev, &i) == TLOG_OK);
    return i;
}

static cl_command_queue queue(cl_command_queue_properties props)
{
    cl_command_queue q = NULL;
    APP(q = cl_test_queue(&env, props));
    CHECK(q != NULL);
    return q;
}

static void app_finish(cl_command_queue q)
{
    cl_int e;
    APP(e = clFinish(q));
    CHECK(e == CL_SUCCESS);
}

static void app_release_queue(cl_command_queue q)
{
    APP(clFinish(q));
    APP(clReleaseCommandQueue(q));
}

static void app_release_event(cl_event ev)
{
    APP(clReleaseEvent(ev));
}

static void spin(cl_command_queue q, uint64_t ns)
{
    cl_int e;
    APP(e = cl_test_spin(q, ns, 0, NULL, NULL));
    CHECK(e == CL_SUCCESS);
}

/* A gate the queue waits at until open_gate (a barrier on a user event). */
static cl_event close_gate(cl_command_queue q)
{
    cl_int e = CL_SUCCESS;
    cl_event gate = NULL;
    APP(gate = clCreateUserEvent(env.context, &e));
    CHECK(e == CL_SUCCESS);
    APP(e = clEnqueueBarrierWithWaitList(q, 1, &gate, NULL));
    CHECK(e == CL_SUCCESS);
    return gate;
}

static void open_gate(cl_event gate, cl_int status)
{
    cl_int e;
    APP(e = clSetUserEventStatus(gate, status));
    CHECK(e == CL_SUCCESS);
    app_release_event(gate);
}

typedef struct found {
    const char *name;
    const tlog_node *node;
    tlog_node_info info;
} found;

static int match(void *user, const tlog_node *node, const tlog_node_info *i)
{
    found *f = user;
    if (strcmp(i->name, f->name) != 0)
        return 0;
    f->node = node;
    f->info = *i;
    return 1;
}

static const tlog_node *row(const tlog_frame *frame, const char *name, tlog_node_info *out)
{
    found f = {.name = name, .info = {.size = sizeof f.info}};
    if (frame)
        tlog_frame_walk(frame, match, &f);
    if (out)
        *out = f.info;
    return f.node;
}

static const char *parent_name(const tlog_node *node)
{
    tlog_node_info i = {.size = sizeof i};
    const tlog_node *p = node ? tlog_node_parent(node) : NULL;
    return p && tlog_node_get_info(p, &i) == TLOG_OK ? i.name : "";
}

/* Durations of the instances of `node`, in the order they were recorded. */
static size_t durations(const tlog_frame *f, const tlog_node *node, int64_t *out, size_t max)
{
    size_t n = 0;
    tlog_instance in = {.size = sizeof in};
    for (size_t k = 0; n < max && tlog_frame_get_instance(f, k, &in) == TLOG_OK; k++)
        if (in.node == node)
            out[n++] = (int64_t)in.duration_ns;
    return n;
}

static tlog_instance first_instance(const tlog_frame *f, const tlog_node *node)
{
    tlog_instance in = {.size = sizeof in};
    for (size_t k = 0; tlog_frame_get_instance(f, k, &in) == TLOG_OK; k++)
        if (in.node == node)
            return in;
    tlog_instance none = {.size = sizeof none};
    return none;
}

static tlog_frame_info frame_info(const tlog_frame *f)
{
    tlog_frame_info fi = {.size = sizeof fi};
    CHECK(f && tlog_frame_get_info(f, &fi) == TLOG_OK);
    return fi;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts v; the value at fraction p of the way (0.5: the median). */
static int64_t pct(int64_t *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return n ? v[(size_t)(p * (double)(n - 1) + 0.5)] : 0;
}

static int skipped;

/* Skips the case where the runtime cannot do what it needs. */
static bool need(bool have, const char *what)
{
    if (!have) {
        printf("skipped: %s\n", what);
        skipped = 1;
    }
    return have;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/* With no platform (the ICD loader pointed at no vendor): a clear report,
 * and scopes on the NULL device that only count themselves while frames
 * go on. */
static void no_platform(void)
{
    reports r = {0};
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = (tlog_device *)&r;
    CHECK(tlog_cl_device_create(log, NULL, NULL, NULL, &dev) == TLOG_ENODEVICE);
    CHECK(dev == NULL);
    CHECK(r.count == 1 && r.code[0] == TLOG_ENODEVICE);
    CHECK(reported(&r, "no platform") == 1);
    for (int frame = 0; frame < 3; frame++) {
        tlog_log_begin(log, site("frame"));
        for (int k = 0; k < 10; k++) {
            tlog_device_scope s = tlog_cl_begin(NULL, NULL, site("kernel"));
            CHECK(tlog_device_end(&s) == TLOG_ENOTOPEN);
        }
        tlog_log_end(log, site("frame"));
    }
    CHECK(tlog_cl_scopes_untimed() == 30);
    CHECK(tlog_frame_count(log) == 3);
    CHECK(tlog_frame_ready(log) == 1);
    CHECK(tlog_cl_device_create(log, (cl_context)&r, NULL, NULL, &dev) == TLOG_EINVAL);
    CHECK(tlog_cl_device_create(log, NULL, NULL, NULL, NULL) == TLOG_EINVAL);
    print_reports(&r);
    tlog_destroy(log);
}

/* OpenCL C kernels of n, 2n and 4n steps, each in a scope on a held queue:
 * every interval encloses its kernel's own START..END and exceeds it by
 * little (in the closest of several runs: load on the machine only widens
 * the gaps), so the intervals keep the kernels' proportions, whatever the
 * load makes of the kernels' own times. */
static void relative_cost(void)
{
    enum { REPS = 9 };
    static const char *const names[3] = {"x1", "x2", "x4"};
    reports r = {0};
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    bool built;
    APP(built = cl_test_build_work(&env, q));
    CHECK(built);
    if (!built)
        return;
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = make_device(log, NULL);
    cl_ulong steps = (cl_ulong)(env.steps_per_ns * 1e6);   /* about 1 ms */
    int64_t lib[3][REPS], own[3][REPS], extra[3][REPS];
    for (int rep = 0; rep < REPS; rep++) {
        cl_event ev[3];
        tlog_log_begin(log, site("frame"));
        cl_event gate = close_gate(q);
        for (int k = 0; k < 3; k++) {
            tlog_device_scope s = tlog_cl_begin(dev, q, site(names[k]));
            cl_int e;
            APP(e = cl_test_work(&env, q, steps << k, &ev[k]));
            CHECK(e == CL_SUCCESS);
            CHECK(tlog_device_end(&s) == TLOG_OK);
        }
        open_gate(gate, CL_COMPLETE);
        app_finish(q);
        tlog_log_end(log, site("frame"));
        CHECK(tlog_frame_ready(log) == 1);
        tlog_frame *f = tlog_frame_pop(log);
        for (int k = 0; k < 3; k++) {
            tlog_node_info i;
            CHECK(row(f, names[k], &i) != NULL);
            lib[k][rep] = (int64_t)i.total_ns;
            own[k][rep] = cl_test_span(ev[k], NULL);
            extra[k][rep] = lib[k][rep] - own[k][rep];
            CHECK(extra[k][rep] >= 0);
            app_release_event(ev[k]);
        }
        tlog_frame_release(f);
    }
    int64_t med_lib[3], med_own[3];
    for (int k = 0; k < 3; k++) {
        med_lib[k] = pct(lib[k], REPS, 0.5);
        med_own[k] = pct(own[k], REPS, 0.5);
        /* Load on the machine only adds to the runtime's gaps around a
         * kernel: the closest bracket shows what the markers add. */
        CHECK(pct(extra[k], REPS, 0.0) <= (int64_t)(300 * US) + med_own[k] / 10);
    }
    printf("kernels of %llu steps, x2, x4: intervals %.3f, %.3f, %.3f ms (ratios %.2f, %.2f); "
           "the kernels' own %.3f, %.3f, %.3f ms (ratios %.2f, %.2f)\n",
           (unsigned long long)steps, med_lib[0] / 1e6, med_lib[1] / 1e6, med_lib[2] / 1e6,
           (double)med_lib[1] / (double)med_lib[0], (double)med_lib[2] / (double)med_lib[0],
           med_own[0] / 1e6, med_own[1] / 1e6, med_own[2] / 1e6,
           (double)med_own[1] / (double)med_own[0], (double)med_own[2] / (double)med_own[0]);
    CHECK(med_lib[0] < med_lib[1] && med_lib[1] < med_lib[2]);
    CHECK(info(dev).resolved == 3 * REPS);
    CHECK(r.count == 0);
    print_reports(&r);
    tlog_destroy(log);
    app_release_queue(q);
}

/* On an out-of-order queue, the begin waits for the work enqueued before
 * the scope, and the scope's work waits for the begin: a 2 ms kernel behind
 * 20 ms of unrelated work reads 2 ms (with plain markers it would read
 * about 0). Scopes on an in-order queue beside it are timed too. */
static void out_of_order(void)
{
    if (!need(env.native, "no native kernels"))
        return;
    reports r = {0};
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = make_device(log, NULL);
    cl_command_queue qo =
        queue(CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_command_queue qi = queue(CL_QUEUE_PROFILING_ENABLE);
    tlog_log_begin(log, site("frame"));
    spin(qo, 20 * MS);
    tlog_device_scope s = tlog_cl_begin(dev, qo, site("after"));
    spin(qo, 2 * MS);
    CHECK(tlog_device_end(&s) == TLOG_OK);
    s = tlog_cl_begin(dev, qo, site("pair"));
    spin(qo, 3 * MS);
    spin(qo, 3 * MS);
    CHECK(tlog_device_end(&s) == TLOG_OK);
    s = tlog_cl_begin(dev, qi, site("in order"));
    spin(qi, 1 * MS);
    CHECK(tlog_device_end(&s) == TLOG_OK);
    tlog_log_end(log, site("frame"));
    app_finish(qo);
    app_finish(qi);
    CHECK(tlog_frame_ready(log) == 1);
    tlog_frame *f = tlog_frame_pop(log);
    tlog_node_info after, pair, inorder;
    CHECK(row(f, "after", &after) != NULL);
    CHECK(row(f, "pair", &pair) != NULL);
    CHECK(row(f, "in order", &inorder) != NULL);
    CHECK_NEAR(after.total_ns, 2 * MS, 300 * US);
    /* The two kernels of the pair may run side by side. */
    CHECK(pair.total_ns >= 3 * MS && pair.total_ns <= 6 * MS + 300 * US);
    CHECK_NEAR(inorder.total_ns, 1 * MS, 300 * US);
    CHECK(after.queue == pair.queue && after.queue != inorder.queue);
    printf("out of order: after %.3f ms, pair %.3f ms; in order %.3f ms\n",
           after.total_ns / 1e6, pair.total_ns / 1e6, inorder.total_ns / 1e6);
    tlog_frame_release(f);
    CHECK(r.count == 0);
    print_reports(&r);
    tlog_destroy(log);
    app_release_queue(qo);
    app_release_queue(qi);
}

/* A scope on a queue it cannot be timed on is refused, counted, and
 * reported with the reason, once per queue in a row. */
/* The name the library gives env.device: its model, then its place among
 * every platform's devices in turn, "model (N)", as CUDA's ordinal. */
static const char *ordinal_name(void)
{
    static char name[300];
    char model[256] = "";
    clGetDeviceInfo(env.device, CL_DEVICE_NAME, sizeof model - 1, model, NULL);
    cl_platform_id platforms[16];
    cl_uint np = 0, before = 0;
    clGetPlatformIDs(16, platforms, &np);
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_device_id devices[64];
        cl_uint n = 0;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 64, devices, &n) != CL_SUCCESS)
            continue;
        for (cl_uint k = 0; k < n && k < 64; k++)
            if (devices[k] == env.device)
                snprintf(name, sizeof name, "%s (%u)", model, before + k);
        before += n;
    }
    return name;
}

static void queue_checks(void)
{
    /* Named as the other backends name a device. */
    {
        reports named = {0};
        tlog_log *l = make_log(&named, 0);
        tlog_device *d = make_device(l, NULL);
        CHECK(strcmp(info(d).name, ordinal_name()) == 0);
        tlog_device_destroy(d);
        tlog_destroy(l);
    }
    reports r = {0};
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = make_device(log, NULL);
    cl_command_queue plain = queue(0), good = queue(CL_QUEUE_PROFILING_ENABLE);
    tlog_log_begin(log, site("frame"));
    tlog_device_scope s = tlog_cl_begin(dev, NULL, site("no queue"));
    CHECK(s.slot_ == NULL);
    CHECK(reported(&r, "is NULL") == 1);
    for (int k = 0; k < 3; k++) {
        s = tlog_cl_begin(dev, plain, site("unprofiled"));
        CHECK(s.slot_ == NULL);
    }
    CHECK(reported(&r, "without CL_QUEUE_PROFILING_ENABLE") == 1);

    /* A queue of a sub-device: another device than the tlog_device's. */
    cl_device_partition_property parts[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id sub[16];
    cl_uint nsub = 0;
    int refusals = 5;
    if (clCreateSubDevices(env.device, parts, 0, NULL, &nsub) == CL_SUCCESS && nsub > 0 &&
        nsub <= 16 && clCreateSubDevices(env.device, parts, nsub, sub, NULL) == CL_SUCCESS) {
        cl_int e = CL_SUCCESS;
        cl_context sub_ctx = clCreateContext(NULL, 1, &sub[0], NULL, NULL, &e);
        cl_command_queue other = NULL;
        APP(other = clCreateCommandQueue(sub_ctx, sub[0], CL_QUEUE_PROFILING_ENABLE, &e));
        CHECK(e == CL_SUCCESS);
        s = tlog_cl_begin(dev, other, site("other device"));
        CHECK(s.slot_ == NULL);
        CHECK(reported(&r, "another device") == 1);
        app_release_queue(other);
        clReleaseContext(sub_ctx);
        for (cl_uint k = 0; k < nsub; k++)
            clReleaseDevice(sub[k]);
        refusals++;
    } else {
        printf("no sub-device: the other-device check is not run\n");
    }
    s = tlog_cl_begin(dev, good, site("profiled"));
    CHECK(s.slot_ != NULL);
    spin(good, 100 * US);
    CHECK(tlog_device_end(&s) == TLOG_OK);
    s = tlog_cl_begin(dev, plain, site("unprofiled"));   /* again, after another */
    CHECK(s.slot_ == NULL);
    CHECK(reported(&r, "without CL_QUEUE_PROFILING_ENABLE") == 2);
    tlog_log_end(log, site("frame"));
    app_finish(good);
    CHECK(info(dev).scopes_failed == (uint64_t)refusals);
    CHECK(tlog_frame_ready(log) == 1);
    tlog_frame *f = tlog_frame_pop(log);
    tlog_frame_info fi = frame_info(f);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 0);
    tlog_frame_release(f);
    print_reports(&r);
    tlog_destroy(log);
    app_release_queue(plain);
    app_release_queue(good);
}

/* A command that fails (it waited for an event the application failed)
 * makes the scope around it unresolved, with a report naming the status;
 * a marker the queue refuses (CL_OUT_OF_RESOURCES) is reported by name,
 * at a begin (not timed, counted) and at an end (unresolved); other scopes
 * go on. */
static void device_errors(void)
{
    if (!need(env.native, "no native kernels"))
        return;
    reports r = {0};
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = make_device(log, NULL);
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE), q2 = queue(CL_QUEUE_PROFILING_ENABLE);

    cl_int e = CL_SUCCESS;
    cl_event doomed = NULL, failing = NULL;
    APP(doomed = clCreateUserEvent(env.context, &e));
    tlog_log_begin(log, site("frame"));
    tlog_device_scope s = tlog_cl_begin(dev, q, site("fails"));
    /* With an event of its own: pocl 3.1 aborts the process when a command
     * without one fails for its wait list. */
    APP(e = cl_test_spin(q, 100 * US, 1, &doomed, &failing));
    CHECK(e == CL_SUCCESS);
    CHECK(tlog_device_end(&s) == TLOG_OK);
    tlog_log_end(log, site("frame"));
    APP(clFlush(q));
    open_gate(doomed, -1);
    int64_t t0 = cl_test_now_ns();
    CHECK(tlog_sync(log) == TLOG_EDEVICE);
    CHECK(cl_test_now_ns() - t0 < 500 * (int64_t)MS);
    tlog_frame *f = tlog_frame_pop(log);
    tlog_frame_info fi = frame_info(f);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 1);
    tlog_frame_release(f);
    CHECK(reported(&r, "\"fails\" failed") == 1);
    app_release_event(failing);

    /* The failure's status, at the next scope; that scope is timed. */
    tlog_log_begin(log, site("frame"));
    s = tlog_cl_begin(dev, q2, site("fine"));
    spin(q2, 100 * US);
    CHECK(tlog_device_end(&s) == TLOG_OK);
    CHECK(reported(&r, "execution status -1") == 1);

    atomic_store(&counts.inject, 1);
    s = tlog_cl_begin(dev, q2, site("refused at begin"));
    CHECK(s.slot_ == NULL);
    CHECK(reported(&r, "CL_OUT_OF_RESOURCES") == 1);
    s = tlog_cl_begin(dev, q2, site("refused at end"));
    spin(q2, 100 * US);
    atomic_store(&counts.inject, 1);
    CHECK(tlog_device_end(&s) == TLOG_EDEVICE);
    CHECK(reported(&r, "CL_OUT_OF_RESOURCES") == 2);
    tlog_log_end(log, site("frame"));
    app_finish(q2);
    CHECK(tlog_frame_ready(log) == 1);
    f = tlog_frame_pop(log);
    fi = frame_info(f);
    CHECK(fi.device_intervals == 2 && fi.device_unresolved == 1);
    tlog_node_info i;
    CHECK(row(f, "fine", &i) != NULL && !(i.flags & TLOG_NODE_UNRESOLVED));
    CHECK(row(f, "refused at end", &i) != NULL && (i.flags & TLOG_NODE_UNRESOLVED));
    tlog_frame_release(f);
    tlog_device_info di = info(dev);
    CHECK(di.scopes_failed == 2 && di.unresolved == 2 && di.resolved == 1);
    print_reports(&r);
    tlog_destroy(log);
    app_release_queue(q);
    app_release_queue(q2);
}

/* Device creation, sync scopes, readiness checks, popping frames, the
 * forced sync and the device's destruction make no blocking OpenCL call;
 * a queue the application never flushes has its frames ready anyway, the
 * library flushing it. */
static void never_blocks(void)
{
    if (!need(env.native, "no native kernels"))
        return;
    reports r = {0};
    reset_counts();
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = make_device(log, NULL);
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    cl_command_queue qo = queue(CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    for (int frame = 0; frame < 30; frame++) {
        tlog_log_begin(log, site("frame"));
        for (int k = 0; k < 2; k++) {
            tlog_device_scope s = tlog_cl_begin(dev, q, site("on q"));
            spin(q, 200 * US);
            tlog_device_end(&s);
        }
        tlog_device_scope s = tlog_cl_begin(dev, qo, site("on qo"));
        spin(qo, 500 * US);
        tlog_device_end(&s);
        tlog_log_begin(log, site("wait q"));
        app_finish(q);
        tlog_sync_end_queue(dev, q, site("wait q"));
        tlog_log_end(log, site("frame"));
        tlog_frame_ready(log);
        if (frame % 10 == 9) {
            FILE *null = fopen("/dev/null", "w");
            CHECK(tlog_dump(log, null) == TLOG_OK);   /* waits for qo: forced */
            fclose(null);
        }
        tlog_frame *f;
        while ((f = tlog_frame_pop_ready(log)) != NULL)
            tlog_frame_release(f);
    }
    CHECK(tlog_sync(log) == TLOG_OK);

    /* Never flushed, never waited for by the application; held at first,
     * so that the markers are found still queued. */
    cl_command_queue quiet = queue(CL_QUEUE_PROFILING_ENABLE);
    atomic_store(&watched, quiet);
    tlog_log_begin(log, site("frame"));
    cl_event gate = close_gate(quiet);
    tlog_device_scope s = tlog_cl_begin(dev, quiet, site("unflushed"));
    spin(quiet, 100 * US);
    tlog_device_end(&s);
    tlog_log_end(log, site("frame"));
    CHECK(tlog_frame_ready(log) == 0);
    CHECK(tlog_frame_ready(log) == 0);
    CHECK(atomic_load(&counts.flushes_watched) == 1);   /* once per marker */
    APP(clSetUserEventStatus(gate, CL_COMPLETE));
    app_release_event(gate);
    int64_t t0 = cl_test_now_ns();
    tlog_frame *f = NULL;
    while (!(f = tlog_frame_pop_ready(log)) && cl_test_now_ns() - t0 < 5000 * (int64_t)MS) {
        struct timespec nap = {0, 100000};
        nanosleep(&nap, NULL);
    }
    CHECK(f != NULL);
    tlog_frame_info fi = frame_info(f);
    CHECK(fi.device_intervals == 1 && fi.device_unresolved == 0);
    tlog_frame_release(f);
    CHECK(atomic_load(&counts.flushes_watched) <= 2);

    tlog_device_info di = info(dev);
    CHECK(di.resolved == 30 * 3 + 1 && di.unresolved == 0);
    CHECK(di.queries > 0);
    tlog_destroy(log);
    printf("blocking calls by the library: %d; flushes: %d (of the unflushed queue: %d); "
           "queries %llu, forced-sync waits %llu\n",
           atomic_load(&counts.blocking), atomic_load(&counts.flushes),
           atomic_load(&counts.flushes_watched), (unsigned long long)di.queries,
           (unsigned long long)di.waits);
    CHECK(atomic_load(&counts.blocking) == 0);
    CHECK(r.count == 0);
    print_reports(&r);
    app_release_queue(q);
    app_release_queue(qo);
    app_release_queue(quiet);
}

/* Every event the library makes is released once its time was read, never
 * while its command is pending (until the device is destroyed), and every
 * queue reference it takes is given back. */
static void events_released(void)
{
    if (!need(env.native, "no native kernels"))
        return;
    reports r = {0};
    reset_counts();
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = make_device(log, NULL);
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    cl_command_queue qo = queue(CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    for (int frame = 0; frame < 50; frame++) {
        tlog_log_begin(log, site("frame"));
        for (int k = 0; k < 3; k++) {
            cl_command_queue on = k == 2 ? qo : q;
            tlog_device_scope s = tlog_cl_begin(dev, on, site(k == 2 ? "on qo" : "on q"));
            spin(on, 50 * US);
            tlog_device_end(&s);
        }
        tlog_log_begin(log, site("wait"));
        app_finish(q);
        app_finish(qo);
        tlog_sync_end(dev, site("wait"));
        tlog_log_end(log, site("frame"));
        CHECK(tlog_frame_ready(log) == 1);
        tlog_frame_release(tlog_frame_pop_ready(log));
    }
    CHECK(info(dev).resolved == 150);
    /* Read, so let go: at most the anchor still in flight is held. */
    int held = atomic_load(&counts.events_made) - atomic_load(&counts.events_released);
    printf("events made %d, released %d, held after every interval was read: %d\n",
           atomic_load(&counts.events_made), atomic_load(&counts.events_released), held);
    CHECK(held >= 0 && held <= 1);
    CHECK(atomic_load(&counts.released_early) == 0);
    /* Destroying the device lets go of what is left (an anchor may still
     * be in flight: OpenCL lets its command finish). */
    tlog_destroy(log);
    CHECK(atomic_load(&counts.events_made) == atomic_load(&counts.events_released));
    CHECK(atomic_load(&counts.events_made) >= 300);
    CHECK(atomic_load(&counts.queue_refs) == 0);
    CHECK(r.count == 0);
    print_reports(&r);
    app_release_queue(q);
    app_release_queue(qo);
}

/* Where the platform has clGetDeviceAndHostTimer (here pocl's clock, lent
 * by this program), every frame's anchor reads it, and device rows land
 * where the queue ran them; a timer too slow to anchor with is not used. */
static void host_timer(void)
{
    if (!need(env.native, "no native kernels"))
        return;
    reports r = {0};
    atomic_store(&fake_timer, true);
    reset_counts();
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = make_device(log, NULL);
    int at_creation = atomic_load(&counts.timer_calls);
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    for (int frame = 0; frame < 10; frame++) {
        tlog_log_begin(log, site("frame"));
        tlog_log_begin(log, site("host work"));
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
        tlog_log_end(log, site("host work"));
        tlog_device_scope s = tlog_cl_begin(dev, q, site("placed"));
        spin(q, 1 * MS);
        tlog_device_end(&s);
        APP(clFlush(q));
        app_finish(q);
        /* After the queue finished: when the device work began within the
         * window depends on when pocl's thread ran, not on the anchor. */
        tlog_log_begin(log, site("finished"));
        tlog_log_end(log, site("finished"));
        tlog_log_end(log, site("frame"));
        CHECK(tlog_frame_ready(log) == 1);
        tlog_frame *f = tlog_frame_pop(log);
        const tlog_node *host = row(f, "host work", NULL), *fin = row(f, "finished", NULL);
        tlog_node_info di;
        const tlog_node *dn = row(f, "placed", &di);
        CHECK(host && fin && dn);
        if (host && fin && dn) {
            tlog_instance ih = first_instance(f, host), id = first_instance(f, dn),
                          is = first_instance(f, fin);
            int64_t tol = 300 * (int64_t)US;
            CHECK(id.start_ns >= ih.start_ns + (int64_t)ih.duration_ns - tol);
            CHECK(id.start_ns + (int64_t)id.duration_ns <= is.start_ns + tol);
            /* On an idle queue the interval also holds the host's gap
             * between the begin and the kernel's enqueue. */
            CHECK(di.total_ns >= 1 * MS - 300 * US);
            if (frame == 9)
                printf("placement with the device timer: host work ends %lld ns, device "
                       "%lld to %lld ns, queue finished by %lld ns\n",
                       (long long)(ih.start_ns + (int64_t)ih.duration_ns),
                       (long long)id.start_ns, (long long)(id.start_ns + (int64_t)id.duration_ns),
                       (long long)is.start_ns);
        }
        tlog_frame_release(f);
    }
    int per_frames = atomic_load(&counts.timer_calls) - at_creation;
    printf("clGetDeviceAndHostTimer: %d calls at creation, %d over 10 frames\n", at_creation,
           per_frames);
    CHECK(at_creation >= 5);
    CHECK(per_frames >= 9);
    tlog_destroy(log);

    /* Too slow to anchor with: the queue's anchors instead. */
    atomic_store(&fake_timer_delay_ns, 200 * US);
    reset_counts();
    log = make_log(&r, 0);
    dev = make_device(log, NULL);
    at_creation = atomic_load(&counts.timer_calls);
    for (int frame = 0; frame < 3; frame++) {
        tlog_log_begin(log, site("frame"));
        tlog_device_scope s = tlog_cl_begin(dev, q, site("placed"));
        spin(q, 100 * US);
        tlog_device_end(&s);
        tlog_log_end(log, site("frame"));
        app_finish(q);
        CHECK(tlog_frame_ready(log) == 1);
        tlog_frame_release(tlog_frame_pop(log));
    }
    CHECK(at_creation == 5);
    CHECK(atomic_load(&counts.timer_calls) == at_creation);
    CHECK(info(dev).resolved == 3);
    tlog_destroy(log);
    atomic_store(&fake_timer, false);
    CHECK(r.count == 0);
    print_reports(&r);
    app_release_queue(q);
}

/* A frame that begins more scopes than max_scopes: the rest are dropped,
 * counted and reported once, without any wait; the pool serves the next
 * frame again. */
static void pool_exhaustion(void)
{
    if (!need(env.native, "no native kernels"))
        return;
    reports r = {0};
    tlog_log *log = make_log(&r, 0);
    tlog_device_config dc = {.size = sizeof dc, .max_scopes = 8, .pool_batch = 8};
    tlog_device *dev = make_device(log, &dc);
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    for (int frame = 0; frame < 2; frame++) {
        tlog_log_begin(log, site("frame"));
        cl_event gate = close_gate(q);
        int64_t t0 = cl_test_now_ns();
        int timed = 0;
        for (int k = 0; k < 20; k++) {
            tlog_device_scope s = tlog_cl_begin(dev, q, site("scope"));
            timed += s.slot_ != NULL;
            spin(q, 10 * US);
            tlog_device_end(&s);
        }
        int64_t took = cl_test_now_ns() - t0;
        CHECK(timed == 8);
        CHECK(took < 200 * (int64_t)MS);   /* nothing waited for the held queue */
        open_gate(gate, CL_COMPLETE);
        tlog_log_end(log, site("frame"));
        app_finish(q);
        CHECK(tlog_frame_ready(log) == 1);
        tlog_frame *f = tlog_frame_pop(log);
        tlog_frame_info fi = frame_info(f);
        CHECK(fi.device_intervals == 8 && fi.device_unresolved == 0);
        tlog_frame_release(f);
    }
    tlog_device_info i = info(dev);
    CHECK(i.scopes == 16 && i.scopes_dropped == 24 && i.pool_scopes == 8);
    CHECK(r.count == 1 && r.code[0] == TLOG_EFULL);
    print_reports(&r);
    tlog_destroy(log);
    app_release_queue(q);
}

/* 3,000 frames of real kernels on an in-order and an out-of-order queue:
 * the pool, the events the library holds and resident memory stay flat
 * (not resident memory under AddressSanitizer, whose quarantine holds on
 * to what the runtime frees). */
static void long_loop_flat_memory(void)
{
    reports r = {0};
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    cl_command_queue qo = queue(CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    bool built;
    APP(built = cl_test_build_work(&env, q));
    CHECK(built);
    if (!built)
        return;
    reset_counts();
    tlog_log *log = make_log(&r, 0);
    tlog_device *dev = make_device(log, NULL);
    enum { FRAMES = 3000, WARM = 500 };
    long rss_warm = 0;
    uint64_t pool_warm = 0;
    int held_warm = 0;
    cl_ulong steps = (cl_ulong)(env.steps_per_ns * 5000) + 1;   /* about 5 us */
    for (int frame = 0; frame < FRAMES; frame++) {
        tlog_log_begin(log, site("frame"));
        for (int k = 0; k < 3; k++) {
            cl_command_queue on = k == 2 ? qo : q;
            tlog_device_scope s = tlog_cl_begin(dev, on, site(k == 2 ? "on qo" : "on q"));
            cl_int e;
            APP(e = cl_test_work(&env, on, steps, NULL));
            CHECK(e == CL_SUCCESS);
            tlog_device_end(&s);
        }
        tlog_log_begin(log, site("wait"));
        app_finish(q);
        app_finish(qo);
        tlog_sync_end(dev, site("wait"));
        tlog_log_end(log, site("frame"));
        tlog_frame *f;
        while ((f = tlog_frame_pop_ready(log)) != NULL)
            tlog_frame_release(f);
        if (frame == WARM) {
            rss_warm = check_rss_kib();
            pool_warm = info(dev).pool_scopes;
            held_warm = atomic_load(&counts.events_made) - atomic_load(&counts.events_released);
        }
    }
    CHECK(tlog_sync(log) == TLOG_OK);
    long rss_end = check_rss_kib();
    tlog_device_info i = info(dev);
    int held_end = atomic_load(&counts.events_made) - atomic_load(&counts.events_released);
    printf("%d frames: resident %ld KiB after %d, %ld KiB at the end; pool %llu scopes after "
           "%d, %llu at the end; events held %d after %d, %d at the end\n",
           FRAMES, rss_warm, WARM, rss_end, (unsigned long long)pool_warm, WARM,
           (unsigned long long)i.pool_scopes, held_warm, WARM, held_end);
    CHECK(i.resolved == 3 * FRAMES && i.unresolved == 0 && i.scopes_dropped == 0);
    CHECK(i.pool_scopes == pool_warm);
    CHECK(held_end <= 1 && held_warm <= 1);
#ifndef UNDER_ASAN
    CHECK(rss_end - rss_warm < 2048);
#endif
    CHECK(r.count == 0);
    print_reports(&r);
    tlog_destroy(log);
    app_release_queue(q);
    app_release_queue(qo);
}

/* The accuracy reference: for each size of a real kernel, the library's
 * marker-pair interval against the kernel's own CL_PROFILING_COMMAND_START
 * to END, raw and with the calibrated empty-scope offset taken off
 * (TLOG_DEVICE_SUBTRACT_OFFSET), on a queue held until every scope is
 * enqueued so that the host's gaps do not count. Prints the offset's
 * median and spread; the markers must enclose every kernel. */
static void accuracy(void)
{
    enum { REPS = 41 };
    static const double sizes_us[] = {10, 100, 1000, 5000};
    reports r = {0};
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    bool built;
    APP(built = cl_test_build_work(&env, q));
    CHECK(built);
    if (!built)
        return;
    tlog_log *log = make_log(&r, 0);
    tlog_device_config dc = {.size = sizeof dc, .flags = TLOG_DEVICE_SUBTRACT_OFFSET};
    tlog_device *dev = make_device(log, &dc);
    int64_t offset = info(dev).empty_scope_ns;
    printf("accuracy on %s: empty-scope offset %lld ns (subtracted below)\n", info(dev).name,
           (long long)offset);
    printf("%9s %11s %11s %11s | offset of the corrected interval: %9s %9s %9s %9s %9s\n",
           "kernel", "self (med)", "raw (med)", "corrected", "median", "p10", "p90", "min", "max");
    for (size_t z = 0; z < sizeof sizes_us / sizeof sizes_us[0]; z++) {
        cl_ulong steps = (cl_ulong)(env.steps_per_ns * sizes_us[z] * 1e3) + 1;
        cl_event ev[REPS];
        tlog_log_begin(log, site("frame"));
        cl_event gate = close_gate(q);
        for (int k = 0; k < REPS; k++) {
            tlog_device_scope s = tlog_cl_begin(dev, q, site("kernel"));
            cl_int e;
            APP(e = cl_test_work(&env, q, steps, &ev[k]));
            CHECK(e == CL_SUCCESS);
            tlog_device_end(&s);
        }
        open_gate(gate, CL_COMPLETE);
        app_finish(q);
        tlog_log_end(log, site("frame"));
        tlog_frame *f = tlog_frame_pop(log);
        int64_t lib[REPS], self[REPS], off[REPS], raw_off[REPS];
        size_t n = durations(f, row(f, "kernel", NULL), lib, REPS);
        CHECK(n == REPS);
        for (size_t k = 0; k < n; k++) {
            self[k] = cl_test_span(ev[k], NULL);
            off[k] = lib[k] - self[k];
            raw_off[k] = off[k] + offset;
        }
        for (int k = 0; k < REPS; k++)
            app_release_event(ev[k]);
        tlog_frame_release(f);
        if (n != REPS)
            return;
        /* The markers enclose the kernel: the raw interval is never the
         * shorter. */
        CHECK(pct(raw_off, n, 0.0) >= 0);
        int64_t med_self = pct(self, n, 0.5), med_lib = pct(lib, n, 0.5);
        int64_t med = pct(off, n, 0.5);
        printf("%7.0fus %9.1fus %9.1fus %9.1fus | %43.1fus %7.1fus %7.1fus %7.1fus %7.1fus\n",
               sizes_us[z], med_self / 1e3, (med_lib + offset) / 1e3, med_lib / 1e3, med / 1e3,
               pct(off, n, 0.1) / 1e3, pct(off, n, 0.9) / 1e3, pct(off, n, 0.0) / 1e3,
               pct(off, n, 1.0) / 1e3);
        /* The runtime's own gaps around a kernel on a CPU device: a few
         * microseconds, far more under load, which only widens them. */
        CHECK(med >= -(int64_t)(50 * US) && med <= (int64_t)(1 * MS));
        CHECK(pct(off, n, 0.0) <= (int64_t)(50 * US));
    }
    CHECK(r.count == 0);
    print_reports(&r);
    tlog_destroy(log);
    app_release_queue(q);
}

/* The header's sync scopes in the default log: one around a
 * clWaitForEvents on an event enqueued on one queue after the scope takes
 * only that queue's intervals; one around clFinish of every queue takes the
 * rest. */
static void sync_scopes(void)
{
    if (!need(env.native, "no native kernels"))
        return;
    tlog_device *dev = NULL;
    CHECK(tlog_cl_device_create(NULL, env.context, env.device, NULL, &dev) == TLOG_OK);
    cl_command_queue a = queue(CL_QUEUE_PROFILING_ENABLE), b = queue(CL_QUEUE_PROFILING_ENABLE);
    {
        TIMERLOG_SCOPE("Frame");
        cl_event done = NULL;
        {
            TIMERLOG_CL_SCOPE(dev, a, "On a");
            spin(a, 1 * MS);
        }
        {
            TIMERLOG_CL_SCOPE(dev, b, "On b");
            spin(b, 2 * MS);
        }
        {
            /* The application's own marker after the scope: waiting for
             * it waits for the scope's end too. */
            TIMERLOG_CL_SYNC_QUEUE_SCOPE(dev, a, "Wait for a");
            APP(clEnqueueMarkerWithWaitList(a, 0, NULL, &done));
            APP(clWaitForEvents(1, &done));
        }
        {
            TIMERLOG_CL_SYNC_SCOPE(dev, "Wait for all");
            app_finish(a);
            app_finish(b);
        }
        app_release_event(done);
    }
    CHECK(tlog_frame_ready(NULL) == 1);
    tlog_frame *f = tlog_frame_pop(NULL);
    const tlog_node *on_a = row(f, "On a", NULL), *on_b = row(f, "On b", NULL);
    CHECK(on_a && on_b);
    CHECK(strcmp(parent_name(on_a), "Wait for a") == 0);
    CHECK(strcmp(parent_name(on_b), "Wait for all") == 0);
    CHECK(tlog_dump_frame(f, stdout, NULL) == TLOG_OK);
    tlog_frame_release(f);
    tlog_device_destroy(dev);
    app_release_queue(a);
    app_release_queue(b);
}

typedef struct rule {
    const char *name;
    void (*run)(void);
} rule;

static const rule rules[] = {
    {"no-platform", no_platform},
    {"relative-cost", relative_cost},
    {"out-of-order", out_of_order},
    {"queue-checks", queue_checks},
    {"device-errors", device_errors},
    {"never-blocks", never_blocks},
    {"events-released", events_released},
    {"host-timer", host_timer},
    {"pool-exhaustion", pool_exhaustion},
    {"long-loop-flat-memory", long_loop_flat_memory},
    {"accuracy", accuracy},
    {"sync-scopes", sync_scopes},
};

int main(int argc, char **argv)
{
    if (!resolve_real()) {
        fprintf(stderr, "cannot find the OpenCL runtime's own entry points\n");
        return 1;
    }
    for (size_t k = 0; argc == 2 && k < sizeof rules / sizeof rules[0]; k++) {
        if (strcmp(argv[1], rules[k].name) != 0)
            continue;
        bool no_platform_case = rules[k].run == no_platform;
        bool have;
        APP(have = cl_test_open(&env));
        if (have == no_platform_case) {
            printf("%s: %s\n", rules[k].name,
                   have ? "a platform is there (run with OCL_ICD_VENDORS naming none)"
                        : "no platform, skipped");
            if (have)
                cl_test_close(&env);
            return have ? 1 : SKIP;
        }
        rules[k].run();
        APP(cl_test_close(&env));
        printf("%s: %d failed checks%s\n", rules[k].name, check_failures,
               skipped ? ", skipped" : "");
        return check_failures ? 1 : skipped ? SKIP : 0;
    }
    fprintf(stderr, "usage: test_opencl CASE; cases:");
    for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++)
        fprintf(stderr, " %s", rules[k].name);
    fputc('\n', stderr);
    return 1;
}
