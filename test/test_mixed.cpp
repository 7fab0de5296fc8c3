// C and C++ translation units recording into one frame, with the C++
// guards, and C++ exceptions leaving scopes through their destructors. The
// whole API is noexcept in C++.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <timerlog/timerlog.h>

#include "mixed.h"

static int failures;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

static_assert(noexcept(tlog_begin(nullptr)), "the C API is noexcept in C++");
static_assert(noexcept(tlog_dump(nullptr, nullptr)), "the C API is noexcept in C++");
static_assert(noexcept(timerlog::scope_guard(nullptr)), "guards do not throw");

extern "C" void mixed_cpp_kernel(void)
{
    TIMERLOG_SCOPE("C++ kernel");
}

static void throws_inside_a_scope()
{
    TIMERLOG_SCOPE("Throws");
    throw std::runtime_error("leaves through the guard");
}

static const tlog_node *child(const tlog_node *n, const char *name)
{
    for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c)) {
        tlog_node_info i{};
        i.size = sizeof i;
        tlog_node_get_info(c, &i);
        if (std::strcmp(i.name, name) == 0)
            return c;
    }
    return nullptr;
}

static uint64_t count_of(const tlog_node *n)
{
    tlog_node_info i{};
    i.size = sizeof i;
    tlog_node_get_info(n, &i);
    return i.count;
}

int main()
{
    {
        TIMERLOG_SCOPE("C++ frame");
        mixed_c_step(3);
        mixed_c_explicit();
        try {
            throws_inside_a_scope();
        } catch (const std::runtime_error &) {
        }
        CHECK(tlog_depth(nullptr) == 1);   // the throwing scope was closed
    }
    tlog_frame *f = tlog_frame_latest(nullptr);
    CHECK(f != nullptr);
    if (!f)
        return 1;
    const tlog_node *root = tlog_frame_root(f);
    const tlog_node *step = child(root, "C step");
    CHECK(step != nullptr);
    const tlog_node *kernel = step ? child(step, "C++ kernel") : nullptr;
    CHECK(kernel != nullptr && count_of(kernel) == 3);
    CHECK(child(root, "C explicit") != nullptr);
    const tlog_node *thrown = child(root, "Throws");
    CHECK(thrown != nullptr);
    tlog_frame_info fi{};
    fi.size = sizeof fi;
    tlog_frame_get_info(f, &fi);
    CHECK(fi.scopes_repaired == 0);   // closed by the guard, not repaired
    tlog_stats s{};
    s.size = sizeof s;
    tlog_get_stats(nullptr, &s);
    CHECK(s.mismatched_ends == 0 && s.unmatched_ends == 0);
    tlog_frame_release(f);
    std::printf("%s: %d check(s) failed\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
