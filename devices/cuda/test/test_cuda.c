/*
 * The CUDA backend's tests. Plain C with a few check macros rather than
 * cmocka, so that they build on GPU machines that have only the toolkit.
 *
 *   test_cuda --no-device   the no-device path (exit 77 where a GPU exists)
 *   test_cuda               behaviour on a GPU (exit 77 where none exists):
 *                           accuracy against the kernels' own clock, sync
 *                           scopes and the forced sync, graph capture left
 *                           intact, and a 10,000-frame loop with flat memory
 *
 * The backend's rules that need no real kernel are tested on any machine,
 * against the test runtime, in test/test_cuda_rules.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <timerlog/cuda.h>

#include "check.h"
#include "test_kernels_ptx.h"

#define CUDA_OK(call)                                                        \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                    cudaGetErrorString(e_));                                 \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static int gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

/* Whether the test runtime answers in place of the toolkit's libcudart:
 * these tests would then pass without a GPU. */
static int on_test_runtime(void)
{
    struct cudaDeviceProp p;
    return cudaGetDeviceProperties(&p, 0) == cudaSuccess &&
           strncmp(p.name, "timerlog test", 13) == 0;
}

static const tlog_site *site(const char *name)
{
    return tlog_site_intern(name, __FILE__, "test", 0, TLOG_LEVEL_COARSE);
}

/* ------------------------------------------------------------------------ */
/* No device                                                                */
/* ------------------------------------------------------------------------ */

static int no_device(void)
{
    if (gpu_count() > 0) {
        puts("a GPU is present: the no-device path is not tested here");
        return SKIP;
    }
    check_errors errs = {0};
    tlog_config cfg = {.size = sizeof cfg, .on_error = check_collect, .error_user = &errs};
    CHECK(tlog_default_config(&cfg) == TLOG_OK);

    tlog_device *dev = (tlog_device *)&errs;
    CHECK(tlog_cuda_device_create(NULL, 0, NULL, &dev) == TLOG_ENODEVICE);
    CHECK(dev == NULL);
    CHECK(errs.count == 1 && errs.last_code == TLOG_ENODEVICE);
    CHECK(strstr(errs.last, "CUDA: no usable device") != NULL);

    for (int frame = 0; frame < 3; frame++) {
        TIMERLOG_SCOPE("Frame");
        for (int k = 0; k < 10; k++) {
            TIMERLOG_CUDA_SCOPE(NULL, "Kernel");
        }
        TIMERLOG_CUDA_SYNC_SCOPE("Sync");
    }
    CHECK(tlog_cuda_scopes_untimed() == 30);
    CHECK(tlog_cuda_device(NULL) == NULL);
    CHECK(tlog_frame_ready(NULL) == 1);
    FILE *sink = tmpfile();
    CHECK(tlog_dump(NULL, sink) == TLOG_OK);
    fclose(sink);
    printf("no device: %s; 30 scopes untimed, frames unaffected\n", errs.last);
    return check_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* On a GPU                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct gpu {
    tlog_log *log;
    tlog_device *dev;
    cudaStream_t stream;
    cudaKernel_t spin;
    uint64_t *self_ns;       /* device memory: what each kernel measured */
} gpu;

static void launch_spin(gpu *g, cudaStream_t s, uint64_t ns, uint64_t *out)
{
    dim3 one = {1, 1, 1};
    void *args[] = {&ns, &out};
    CUDA_OK(cudaLaunchKernel((const void *)g->spin, one, one, args, 0, s));
}

static void gpu_setup(gpu *g)
{
    tlog_config cfg = {.size = sizeof cfg, .max_frames = 4};
    CHECK(tlog_create(&cfg, &g->log) == TLOG_OK);
    tlog_device_config dc = {.size = sizeof dc, .flags = TLOG_DEVICE_SUBTRACT_OFFSET};
    CHECK(tlog_cuda_device_create(g->log, 0, &dc, &g->dev) == TLOG_OK);
    CUDA_OK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    cudaLibrary_t lib;
    CUDA_OK(cudaLibraryLoadData(&lib, tlog_test_kernels_ptx, NULL, NULL, 0, NULL, NULL, 0));
    CUDA_OK(cudaLibraryGetKernel(&g->spin, lib, "tlog_test_spin"));
    CUDA_OK(cudaMalloc((void **)&g->self_ns, 64 * sizeof(uint64_t)));
}

static tlog_device_info info_of(tlog_device *dev)
{
    tlog_device_info i = {.size = sizeof i};
    tlog_device_get_info(dev, &i);
    return i;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Durations of the instances of `node`, in delivery order. */
static size_t durations_of(const tlog_frame *f, const tlog_node *node, int64_t *out,
                           size_t max)
{
    size_t n = 0;
    tlog_instance in = {.size = sizeof in};
    for (size_t k = 0; n < max && tlog_frame_get_instance(f, k, &in) == TLOG_OK; k++)
        if (in.node == node)
            out[n++] = (int64_t)in.duration_ns;
    return n;
}

static const tlog_node *child(const tlog_node *n, const char *name)
{
    tlog_node_info i = {.size = sizeof i};
    for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c))
        if (tlog_node_get_info(c, &i) == TLOG_OK && strcmp(i.name, name) == 0)
            return c;
    return NULL;
}

/* Kernels that spin a known time, each in a device scope on a stream kept
 * busy so that the host's launch gaps do not count; the offset-corrected
 * interval must be within max(1 us, 2%) of what the kernel measured. */
static void accuracy(gpu *g)
{
    enum { REPS = 15 };
    const uint64_t durations[] = {1000, 10000, 100000, 1000000, 10000000};
    int64_t offset = info_of(g->dev).empty_scope_ns;
    printf("empty-scope offset: %lld ns\n", (long long)offset);
    printf("%10s %12s %12s %12s %10s\n", "kernel", "self (med)", "raw (med)",
           "corrected", "error");
    for (size_t d = 0; d < sizeof durations / sizeof durations[0]; d++) {
        const tlog_site *scope = site("Spin");
        tlog_log_begin(g->log, site("Frame"));
        launch_spin(g, g->stream, 3000000, g->self_ns + 63);   /* keeps it busy */
        for (int r = 0; r < REPS; r++) {
            tlog_device_scope s = tlog_device_begin(g->dev, g->stream, scope);
            launch_spin(g, g->stream, durations[d], g->self_ns + r);
            tlog_device_end(&s);
        }
        tlog_log_begin(g->log, site("Sync"));
        CUDA_OK(cudaStreamSynchronize(g->stream));
        tlog_sync_end(g->dev, site("Sync"));
        tlog_log_end(g->log, site("Frame"));

        uint64_t self[REPS];
        CUDA_OK(cudaMemcpy(self, g->self_ns, sizeof self, cudaMemcpyDeviceToHost));
        tlog_frame *f = tlog_frame_pop_ready(g->log);
        CHECK(f != NULL);
        if (!f)
            return;
        int64_t scoped[REPS], err[REPS], selfs[REPS];
        size_t n = durations_of(f, child(child(tlog_frame_root(f), "Sync"), "Spin"),
                                scoped, REPS);
        CHECK(n == REPS);
        for (size_t r = 0; r < n; r++) {
            selfs[r] = (int64_t)self[r];
            err[r] = scoped[r] - selfs[r];
        }
        qsort(selfs, n, sizeof selfs[0], cmp_i64);
        qsort(scoped, n, sizeof scoped[0], cmp_i64);
        qsort(err, n, sizeof err[0], cmp_i64);
        int64_t med_err = err[n / 2];
        int64_t tol = (int64_t)durations[d] / 50 > 1000 ? (int64_t)durations[d] / 50 : 1000;
        printf("%9.3fus %10.3fus %10.3fus %10.3fus %8.3fus %s\n", durations[d] / 1e3,
               selfs[n / 2] / 1e3, (scoped[n / 2] + offset) / 1e3, scoped[n / 2] / 1e3,
               med_err / 1e3, llabs(med_err) <= tol ? "ok" : "OUT OF TOLERANCE");
        CHECK(llabs(med_err) <= tol);
        tlog_frame_release(f);
    }
}

/* Sync scopes show what completed; tlog_dump forces one wait for the rest;
 * nothing else waits. */
static void sync_points(gpu *g)
{
    tlog_log_begin(g->log, site("Frame"));
    tlog_device_scope s = tlog_device_begin(g->dev, g->stream, site("Short"));
    launch_spin(g, g->stream, 100000, g->self_ns);
    tlog_device_end(&s);
    tlog_log_begin(g->log, site("Sync"));
    CUDA_OK(cudaStreamSynchronize(g->stream));
    tlog_sync_end(g->dev, site("Sync"));
    s = tlog_device_begin(g->dev, g->stream, site("Long"));
    launch_spin(g, g->stream, 50000000, g->self_ns);
    tlog_device_end(&s);
    tlog_log_end(g->log, site("Frame"));

    CHECK(tlog_frame_ready(g->log) == 0);
    CHECK(info_of(g->dev).waits == 0);
    FILE *out = tmpfile();
    CHECK(tlog_dump(g->log, out) == TLOG_OK);
    char text[2048] = {0};
    rewind(out);
    CHECK(fread(text, 1, sizeof text - 1, out) > 0);
    fclose(out);
    fputs(text, stdout);
    CHECK(strstr(text, "|-> ") && strstr(text, "(C) Sync\n"));
    CHECK(strstr(text, ". ==> ") && strstr(text, "(E) Short\n"));
    CHECK(strstr(text, "(C) Device past frame end\n"));
    CHECK(strstr(text, "(E) Long\n"));
    CHECK(info_of(g->dev).waits >= 1);
    tlog_frame_release(tlog_frame_pop(g->log));
}

typedef struct poller {
    tlog_log *log;
    int rounds;
} poller;

static void *poll_thread(void *p)
{
    poller *pl = p;
    for (int i = 0; i < pl->rounds; i++)
        tlog_frame_ready(pl->log);
    return NULL;
}

/* A stream being captured is never recorded into, and queries from other
 * threads (relaxed capture mode) leave the capture valid. */
static void capture(gpu *g)
{
    cudaStream_t cs;
    CUDA_OK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    tlog_log_begin(g->log, site("Frame"));
    tlog_device_scope pending = tlog_device_begin(g->dev, g->stream, site("Pending"));
    launch_spin(g, g->stream, 20000000, g->self_ns);
    tlog_device_end(&pending);
    tlog_log_end(g->log, site("Frame"));   /* a frame with work to query */

    uint64_t captured = info_of(g->dev).scopes_captured;
    tlog_log_begin(g->log, site("Frame"));
    CUDA_OK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
    tlog_device_scope s = tlog_device_begin(g->dev, cs, site("In graph"));
    launch_spin(g, cs, 1000, g->self_ns + 1);
    tlog_device_end(&s);
    poller pl = {g->log, 200};
    pthread_t th;
    pthread_create(&th, NULL, poll_thread, &pl);
    pthread_join(th, NULL);
    cudaGraph_t graph;
    cudaError_t e = cudaStreamEndCapture(cs, &graph);
    CHECK(e == cudaSuccess);
    tlog_log_end(g->log, site("Frame"));
    CHECK(info_of(g->dev).scopes_captured == captured + 1);
    if (e == cudaSuccess) {
        cudaGraphExec_t exec;
        CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
        CHECK(cudaGraphLaunch(exec, cs) == cudaSuccess);
        CUDA_OK(cudaStreamSynchronize(cs));
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    printf("capture: intact; %llu scope(s) on the captured stream skipped\n",
           (unsigned long long)(info_of(g->dev).scopes_captured - captured));
    CHECK(tlog_sync(g->log) == TLOG_OK);
    while (tlog_frame_count(g->log))
        tlog_frame_release(tlog_frame_pop(g->log));
    cudaStreamDestroy(cs);
}

/* 10,000 frames of 100 device scopes: the pool stops growing and resident
 * memory stays flat. */
static void long_loop(gpu *g)
{
    enum { FRAMES = 10000, SCOPES = 100 };
    uint64_t pool_at_100 = 0;
    long rss_at_1000 = 0;
    for (int frame = 0; frame < FRAMES; frame++) {
        tlog_log_begin(g->log, site("Frame"));
        for (int k = 0; k < SCOPES; k++) {
            tlog_device_scope s = tlog_device_begin(g->dev, g->stream, site("Tiny"));
            launch_spin(g, g->stream, 0, g->self_ns + (k & 31));
            tlog_device_end(&s);
        }
        tlog_log_begin(g->log, site("Sync"));
        CUDA_OK(cudaStreamSynchronize(g->stream));
        tlog_sync_end(g->dev, site("Sync"));
        tlog_log_end(g->log, site("Frame"));
        tlog_frame_release(tlog_frame_pop_ready(g->log));
        if (frame == 99)
            pool_at_100 = info_of(g->dev).pool_scopes;
        if (frame == 999)
            rss_at_1000 = check_rss_kib();
    }
    tlog_device_info i = info_of(g->dev);
    long rss_end = check_rss_kib();
    printf("10000 frames x 100 scopes: pool %llu scopes after 100 frames, %llu at the "
           "end; resident %ld KiB after 1000 frames, %ld KiB at the end; %llu resolved, "
           "%llu dropped\n",
           (unsigned long long)pool_at_100, (unsigned long long)i.pool_scopes, rss_at_1000,
           rss_end, (unsigned long long)i.resolved, (unsigned long long)i.scopes_dropped);
    CHECK(i.pool_scopes == pool_at_100);
    CHECK(rss_end - rss_at_1000 < 1024);
    CHECK(i.scopes_dropped == 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--no-device") == 0)
        return no_device();
    if (gpu_count() == 0) {
        puts("no CUDA device: skipped");
        return SKIP;
    }
    if (on_test_runtime()) {
        fprintf(stderr, "the CUDA test runtime was loaded in place of libcudart\n");
        return 1;
    }
    gpu g = {0};
    gpu_setup(&g);
    if (check_failures)
        return 1;
    accuracy(&g);
    sync_points(&g);
    capture(&g);
    long_loop(&g);
    tlog_destroy(g.log);
    printf("%s\n", check_failures ? "FAILED" : "all CUDA checks passed");
    return check_failures ? 1 : 0;
}
