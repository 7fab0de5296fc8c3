// The header from C++: RAII scopes, hand-off guards, device and sync scopes
// (on the simulated device), mixed with the C API.
#include <cstdio>
#include <cstring>
#include <thread>

#include <timerlog/sim.h>
#include <timerlog/timerlog.h>

static int failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,      \
                         __LINE__, #cond);                                   \
            failures++;                                                      \
        }                                                                    \
    } while (0)

static const tlog_node *child(const tlog_node *n, const char *name)
{
    for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c)) {
        tlog_node_info info{};
        info.size = sizeof info;
        tlog_node_get_info(c, &info);
        if (std::strcmp(info.name, name) == 0)
            return c;
    }
    return nullptr;
}

static void frame(tlog_sim *sim, tlog_device *gpu)
{
    TIMERLOG_SCOPE("Frame");
    {
        TIMERLOG_DEVICE_SCOPE(gpu, nullptr, "Kernel");
        tlog_sim_launch(sim, nullptr, 1000);
    }
    {
        TIMERLOG_SYNC_SCOPE(gpu, "Sync");
        tlog_sim_queue_sync(sim, nullptr);
        tlog_sim_settle(sim);
    }
    tlog_sim_queue *q = tlog_sim_queue_create(sim);
    {
        TIMERLOG_DEVICE_SCOPE(gpu, q, "On q");
        tlog_sim_launch(sim, q, 1000);
    }
    {
        TIMERLOG_SYNC_QUEUE_SCOPE(gpu, q, "Wait q");
        tlog_sim_queue_sync(sim, q);
        tlog_sim_settle(sim);
    }
    {
        TIMERLOG_SCOPE("Scoped block");
        TIMERLOG_SCOPE_L(TLOG_LEVEL_FINE, "Fine");
    }
    tlog_token token = tlog_handoff(nullptr);
    std::thread worker([token] {
        tlog_thread_name("C++ worker");
        TIMERLOG_ADOPT(token);
        TIMERLOG_SCOPE("Lambda work");
    });
    worker.join();
}

int main()
{
    tlog_sim *sim = nullptr;
    tlog_device *gpu = nullptr;
    CHECK(tlog_sim_create(nullptr, &sim) == TLOG_OK);
    CHECK(tlog_sim_device_create(sim, nullptr, nullptr, &gpu) == TLOG_OK);
    frame(sim, gpu);
    tlog_frame *f = tlog_frame_latest(nullptr);
    CHECK(f != nullptr);
    if (!f)
        return 1;
    const tlog_node *root = tlog_frame_root(f);
    const tlog_node *sync = child(root, "Sync");
    CHECK(sync != nullptr);
    CHECK(sync && child(sync, "Kernel") != nullptr);
    const tlog_node *waitq = child(root, "Wait q");
    CHECK(waitq && child(waitq, "On q") != nullptr);
    const tlog_node *block = child(root, "Scoped block");
    CHECK(block != nullptr);
    CHECK(child(block, "Fine") != nullptr);
    const tlog_node *row = child(root, "C++ worker");
    CHECK(row != nullptr);
    CHECK(row && child(row, "Lambda work") != nullptr);
    tlog_frame_release(f);
    tlog_stats s{};
    s.size = sizeof s;
    tlog_get_stats(nullptr, &s);
    CHECK(s.mismatched_ends + s.unmatched_ends + s.late_work == 0);
    tlog_device_destroy(gpu);
    tlog_sim_destroy(sim);
    return failures ? 1 : 0;
}
