// Run-time names from C++: TIMERLOG_SCOPE_NAMED takes a const char * or a
// std::string (temporaries too), copies it, gives one row per name, and
// past the bound of the table times new names under "(other names)".
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

static int reports, full_reports;
static std::string last_report;

static void on_error(void *, const tlog_error *e)
{
    reports++;
    full_reports += e->code == TLOG_EFULL;
    last_report = e->message;
}

static tlog_node_info info_of(const tlog_node *n)
{
    tlog_node_info info{};
    info.size = sizeof info;
    tlog_node_get_info(n, &info);
    return info;
}

static const tlog_node *child(const tlog_node *n, const char *name)
{
    for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c))
        if (std::strcmp(info_of(c).name, name) == 0)
            return c;
    return nullptr;
}

static size_t children(const tlog_node *n)
{
    size_t k = 0;
    for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c))
        k++;
    return k;
}

static uint64_t count_of(const tlog_node *root, const char *name)
{
    const tlog_node *row = child(root, name);
    return row ? info_of(row).count : 0;
}

static tlog_names_info names_info()
{
    tlog_names_info info{};
    info.size = sizeof info;
    CHECK(tlog_names_get_info(&info) == TLOG_OK);
    return info;
}

static void same_name_is_one_row()
{
    {
        TIMERLOG_SCOPE("Frame");
        std::string kernel = "saxpy";
        for (int i = 0; i < 2; i++) {
            TIMERLOG_SCOPE_NAMED(kernel);             // a std::string
        }
        const char *again = "saxpy";
        { TIMERLOG_SCOPE_NAMED(again); }              // another call site, same row
        for (int i = 0; i < 3; i++) {
            TIMERLOG_SCOPE_NAMED("Step " + std::to_string(i % 2));   // a temporary
        }
        TIMERLOG_SCOPE(__func__);                     // literal-name macros still take arrays
    }
    tlog_frame *f = tlog_frame_latest(nullptr);
    CHECK(f != nullptr);
    if (!f)
        return;
    const tlog_node *root = tlog_frame_root(f);
    CHECK(children(root) == 4);
    CHECK(count_of(root, "saxpy") == 3);
    CHECK(count_of(root, "Step 0") == 2);
    CHECK(count_of(root, "Step 1") == 1);
    CHECK(count_of(root, "same_name_is_one_row") == 1);
    tlog_frame_release(f);
}

// The name's storage changes or goes away as soon as the scope has begun:
// the rows keep their names (AddressSanitizer would see a read of it).
static void storage_reused_after_begin()
{
    {
        TIMERLOG_SCOPE("Frame");
        std::string asset = "Load brick.png";
        {
            TIMERLOG_SCOPE_NAMED(asset);
            asset.assign(200, 'X');                   // reallocates: the old buffer is freed
            std::vector<char> label(32);
            for (int i = 0; i < 3; i++) {
                std::snprintf(label.data(), label.size(), "Mip %d", i);
                TIMERLOG_SCOPE_NAMED(label.data());
                std::strcpy(label.data(), "overwritten");
            }
            label.clear();
            label.shrink_to_fit();
        }
    }
    tlog_frame *f = tlog_frame_latest(nullptr);
    CHECK(f != nullptr);
    if (!f)
        return;
    const tlog_node *load = child(tlog_frame_root(f), "Load brick.png");
    CHECK(load != nullptr);
    CHECK(load && children(load) == 3);
    CHECK(load && child(load, "Mip 2") != nullptr);
    tlog_frame_release(f);
}

static int names_made;

static std::string make_name()
{
    names_made++;
    return "Made";
}

static void level_is_checked_first()
{
    tlog_set_level(nullptr, TLOG_LEVEL_COARSE);
    {
        TIMERLOG_SCOPE("Frame");
        TIMERLOG_SCOPE_NAMED_L(TLOG_LEVEL_FINE, make_name());
    }
    CHECK(names_made == 0);
    tlog_set_level(nullptr, TLOG_LEVEL_FINE);
    {
        TIMERLOG_SCOPE("Frame");
        TIMERLOG_SCOPE_NAMED_L(TLOG_LEVEL_FINE, make_name());
    }
    CHECK(names_made == 1);
    tlog_frame *f = tlog_frame_latest(nullptr);
    CHECK(f && child(tlog_frame_root(f), "Made") != nullptr);
    if (f)
        tlog_frame_release(f);
}

// One call site for every name of the fill: names are kept per call site.
static void asset_scope(const std::string &name)
{
    TIMERLOG_SCOPE_NAMED(name);
}

static void table_full_gives_other_names()
{
    uint64_t before = names_info().names;
    const int past = 7;
    int fill = TLOG_RUNTIME_NAMES_MAX - (int)before;
    {
        TIMERLOG_SCOPE("Frame");
        for (int i = 0; i < fill + past; i++)
            asset_scope("asset " + std::to_string(i));
    }
    tlog_names_info info = names_info();
    CHECK(info.names == TLOG_RUNTIME_NAMES_MAX);
    CHECK(info.refused == (uint64_t)past);
    CHECK(reports == 1 && full_reports == 1);
    CHECK(last_report.find("(other names)") != std::string::npos);
    tlog_frame *f = tlog_frame_latest(nullptr);
    CHECK(f != nullptr);
    if (!f)
        return;
    const tlog_node *root = tlog_frame_root(f);
    CHECK(children(root) == (size_t)fill + 1);
    CHECK(count_of(root, "(other names)") == (uint64_t)past);
    CHECK(count_of(root, "asset 0") == 1);
    CHECK(count_of(root, ("asset " + std::to_string(fill - 1)).c_str()) == 1);
    CHECK(count_of(root, ("asset " + std::to_string(fill)).c_str()) == 0);
    tlog_frame_release(f);
    {
        TIMERLOG_SCOPE("Frame");
        asset_scope("asset 0");                       // in the table: kept
        asset_scope("new");                           // not: refused, not reported
        TIMERLOG_SCOPE_NAMED("asset 0");              // new at this call site: refused
    }
    CHECK(names_info().names == TLOG_RUNTIME_NAMES_MAX);
    CHECK(names_info().refused == (uint64_t)past + 2);
    CHECK(reports == 1);
    f = tlog_frame_latest(nullptr);
    CHECK(f != nullptr);
    if (!f)
        return;
    root = tlog_frame_root(f);
    CHECK(children(root) == 2);
    CHECK(count_of(root, "asset 0") == 1);
    CHECK(count_of(root, "(other names)") == 2);
    tlog_frame_release(f);
}

int main()
{
    tlog_config c{};
    c.size = sizeof c;
    c.flags = TLOG_CONFIG_IGNORE_ENV;
    c.on_error = on_error;
    if (tlog_default_config(&c) != TLOG_OK)
        return 1;
    same_name_is_one_row();
    storage_reused_after_begin();
    level_is_checked_first();
    CHECK(reports == 0);
    table_full_gives_other_names();
    tlog_stats s{};
    s.size = sizeof s;
    tlog_get_stats(nullptr, &s);
    CHECK(s.mismatched_ends + s.unmatched_ends == 0);
    return failures ? 1 : 0;
}
