/* The public API misused: every function given NULL for each pointer, one
 * at a time, and values out of range (sizes, counts, flags, levels, kinds).
 * Each call does what timerlog.h and timerlog/sim.h promise: the documented
 * code, no crash, no change to state it should leave alone, and a report
 * on the log's error path where the header says so. Runs in its own
 * process: the first tests configure the default log. */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "device_fixture.h"

static collected_errors default_errors;
static char dir[] = "/tmp/timerlog-misuse-XXXXXX";

static const char *in_dir(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* Somewhere for an out pointer to point before a call that must clear it. */
static max_align_t not_an_object;
#define SENTINEL(type) ((type *)(void *)&not_an_object)

static void *plain_alloc(void *user, size_t bytes)
{
    (void)user;
    return malloc(bytes);
}

static void plain_free(void *user, void *block)
{
    (void)user;
    free(block);
}

/* Configurations tlog_create and tlog_default_config refuse. Each would
 * otherwise give a log at TLOG_LEVEL_FINE that prints its errors. */
static size_t bad_configs(tlog_config *out)
{
    /* The last ends inside the error callback's pointer: no struct's size. */
    const size_t too_short[] = {1, sizeof(size_t) - 1,
                                offsetof(tlog_config, level) + sizeof(int) - 1,
                                offsetof(tlog_config, on_error) + 4};
    const int levels[] = {-1, 3, INT_MIN, INT_MAX};
    const unsigned flags[] = {1u << 5, 1u << 31};
    size_t n = 0;
    for (size_t i = 0; i < sizeof too_short / sizeof too_short[0]; i++)
        out[n++] = (tlog_config){.size = too_short[i]};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        out[n++] = (tlog_config){.size = sizeof(tlog_config), .level = levels[i]};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        out[n++] = (tlog_config){.size = sizeof(tlog_config), .flags = flags[i]};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .max_depth = 4097};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .max_depth = UINT32_MAX};
    /* less than four records */
    out[n++] = (tlog_config){.size = sizeof(tlog_config),
                             .thread_budget = 4 * SCOPE_RECORD_BYTES - 1};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .record_alloc = plain_alloc};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .record_free = plain_free};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .stats = {.hitch_quantile = 1}};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .stats = {.hitch_quantile = -1}};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .stats = {.max_hitches = 4097}};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .stats = {.hitch_window = 65537}};
    out[n++] = (tlog_config){.size = sizeof(tlog_config), .stats = {.size = 1}};
    return n;
}

#define BAD_CONFIGS_MAX 32

/* ------------------------------------------------------------------------ */
/* The default log                                                          */
/* ------------------------------------------------------------------------ */

/* Refused configurations leave the one given before in place: the default
 * log is made with it (its level, its error callback). */
static void default_config_with_a_bad_config_is_einval_and_keeps_the_last(void **state)
{
    (void)state;
    tlog_config good = test_config(&default_errors);
    good.level = TLOG_LEVEL_COARSE;
    assert_int_equal(tlog_default_config(&good), TLOG_OK);
    tlog_config bad[BAD_CONFIGS_MAX];
    size_t n = bad_configs(bad);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tlog_default_config(&bad[i]), TLOG_EINVAL);
    assert_int_equal(tlog_active_level_, TLOG_LEVEL_COARSE);
    tlog_log *log = tlog_default();
    assert_non_null(log);
    assert_ptr_equal(tlog_default(), log);
    assert_int_equal(tlog_get_level(NULL), TLOG_LEVEL_COARSE);
    assert_string_equal(tlog_clock_name(NULL), "custom");
    at_ms(7);
    assert_int_equal(tlog_now(NULL), 7 * NS_PER_MS);
    tlog_begin(NULL);   /* reaches the callback given first */
    assert_int_equal(count_code(&default_errors, TLOG_EINVAL), 1);
    default_errors = (collected_errors){0};
}

static void default_config_once_the_default_log_exists(void **state)
{
    (void)state;
    tlog_config good = test_config(&default_errors);
    assert_int_equal(tlog_default_config(&good), TLOG_EBUSY);
    assert_int_equal(tlog_default_config(NULL), TLOG_EBUSY);
    tlog_config bad = {.size = sizeof bad, .level = 9};
    assert_int_equal(tlog_default_config(&bad), TLOG_EINVAL);
    assert_int_equal(tlog_get_level(NULL), TLOG_LEVEL_COARSE);
}

/* tlog_begin(NULL) and tlog_end(NULL) record nothing and are reported on
 * the default log. */
static void begin_and_end_with_null_site_are_reported_on_the_default_log(void **state)
{
    (void)state;
    static const tlog_site frame = {"Frame", __FILE__, __func__, __LINE__, TLOG_LEVEL_COARSE};
    tlog_stats before = stats_of(NULL);
    tlog_begin(&frame);
    tlog_begin(NULL);
    tlog_end(NULL);
    assert_int_equal(tlog_depth(NULL), 1);
    tlog_end(&frame);
    assert_int_equal(count_code(&default_errors, TLOG_EINVAL), 2);
    assert_non_null(strstr(default_errors.last, "tlog_end(NULL)"));
    tlog_frame *f = tlog_frame_pop(NULL);
    assert_non_null(f);
    assert_int_equal(child_count(tlog_frame_root(f)), 0);
    tlog_frame_release(f);
    tlog_stats after = stats_of(NULL);
    assert_int_equal(after.unmatched_ends, before.unmatched_ends);
    assert_int_equal(after.mismatched_ends, before.mismatched_ends);
    default_errors = (collected_errors){0};
}

static void set_level_out_of_range_is_einval_and_keeps_the_level(void **state)
{
    (void)state;
    const int bad[] = {-1, 3, INT_MIN, INT_MAX};
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    assert_int_equal(tlog_set_level(log, TLOG_LEVEL_COARSE), TLOG_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(tlog_set_level(log, bad[i]), TLOG_EINVAL);
        assert_int_equal(tlog_get_level(log), TLOG_LEVEL_COARSE);
        assert_int_equal(tlog_set_level(NULL, bad[i]), TLOG_EINVAL);
        assert_int_equal(tlog_get_level(NULL), TLOG_LEVEL_COARSE);
        assert_int_equal(tlog_active_level_, TLOG_LEVEL_COARSE);
    }
    tlog_destroy(log);
}

/* ------------------------------------------------------------------------ */
/* Logs                                                                     */
/* ------------------------------------------------------------------------ */

static void create_with_null_out_is_einval(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    assert_int_equal(tlog_create(NULL, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_create(&c, NULL), TLOG_EINVAL);
}

/* A NULL config is every default. */
static void create_with_null_config_takes_the_defaults(void **state)
{
    (void)state;
    tlog_log *log = NULL;
    assert_int_equal(tlog_create(NULL, &log), TLOG_OK);
    assert_non_null(log);
    tlog_destroy(log);
}

static void create_with_a_bad_config_is_einval_and_sets_out_null(void **state)
{
    (void)state;
    tlog_config bad[BAD_CONFIGS_MAX];
    size_t n = bad_configs(bad);
    for (size_t i = 0; i < n; i++) {
        tlog_log *log = SENTINEL(tlog_log);
        assert_int_equal(tlog_create(&bad[i], &log), TLOG_EINVAL);
        assert_null(log);
    }
}

/* A size of 0 is the current size; a longer struct (a newer header's) is
 * read up to what this library knows. */
static void create_reads_a_config_by_its_size(void **state)
{
    (void)state;
    struct {
        tlog_config c;
        unsigned char newer[64];
    } big;
    memset(&big, 0, sizeof big);
    big.c = test_config(NULL);
    big.c.level = TLOG_LEVEL_COARSE;
    big.c.size = sizeof big;
    memset(big.newer, 0xff, sizeof big.newer);
    tlog_log *log = make_log(&big.c);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_COARSE);
    tlog_destroy(log);
    big.c.size = 0;
    log = make_log(&big.c);
    assert_int_equal(tlog_get_level(log), TLOG_LEVEL_COARSE);
    tlog_destroy(log);
    tlog_destroy(NULL);   /* does nothing */
}

static void strerror_of_an_unknown_code_is_a_message(void **state)
{
    (void)state;
    const int unknown[] = {1, -18, 100, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_non_null(tlog_strerror(unknown[i]));
        assert_string_equal(tlog_strerror(unknown[i]), "unknown error");
    }
    assert_string_equal(tlog_strerror(TLOG_OK), "success");
    for (int code = TLOG_EINVAL; code >= TLOG_EVERSION; code--)
        assert_string_not_equal(tlog_strerror(code), "unknown error");
}

/* What a struct the library fills holds past its size field before the
 * call: a call that fails, or is given a short size, leaves it there. */
#define PATTERN 0xa5

static bool untouched_after_size(const void *p, size_t bytes)
{
    const unsigned char *b = p;
    for (size_t i = sizeof(size_t); i < bytes; i++)
        if (b[i] != PATTERN)
            return false;
    return true;
}

static void get_stats_with_null_or_short_size_is_einval(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    assert_int_equal(tlog_get_stats(log, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_get_stats(NULL, NULL), TLOG_EINVAL);
    const size_t sizes[] = {0, 1, sizeof(size_t) - 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tlog_stats s;
        memset(&s, PATTERN, sizeof s);
        s.size = sizes[i];
        assert_int_equal(tlog_get_stats(log, &s), TLOG_EINVAL);
        assert_true(untouched_after_size(&s, sizeof s));
    }
    tlog_destroy(log);
}

/* The library fills no more than the size says, and no more than it
 * knows, whatever the size. */
static void get_stats_fills_only_what_size_covers(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    struct {
        tlog_stats s;
        unsigned char newer[32];
    } big;
    memset(&big, PATTERN, sizeof big);
    big.s.size = sizeof(size_t);
    assert_int_equal(tlog_get_stats(log, &big.s), TLOG_OK);
    assert_true(untouched_after_size(&big, sizeof big));
    big.s.size = sizeof big;
    assert_int_equal(tlog_get_stats(log, &big.s), TLOG_OK);
    assert_int_equal(big.s.frames_completed, 0);
    for (size_t i = 0; i < sizeof big.newer; i++)
        assert_int_equal(big.newer[i], PATTERN);
    tlog_destroy(log);
}

/* A conversion past the range of uint64_t gives its largest value. */
static void ticks_to_ns_saturates(void **state)
{
    (void)state;
    tlog_config c = test_config(NULL);
    c.clock_hz = 1;   /* one tick is a second */
    tlog_log *seconds = make_log(&c);
    assert_int_equal(tlog_ticks_to_ns(seconds, 3), 3000000000ull);
    assert_int_equal(tlog_ticks_to_ns(seconds, UINT64_MAX / 1000000000u + 1), UINT64_MAX);
    assert_int_equal(tlog_ticks_to_ns(seconds, UINT64_MAX), UINT64_MAX);
    c.clock_hz = 0;   /* nanoseconds */
    tlog_log *ns = make_log(&c);
    assert_int_equal(tlog_ticks_to_ns(ns, 12345), 12345);
    assert_int_equal(tlog_ticks_to_ns(ns, UINT64_MAX), UINT64_MAX);
    assert_int_not_equal(tlog_ticks_to_ns(NULL, 1), 0);
    tlog_destroy(seconds);
    tlog_destroy(ns);
}

static void stream_flush_without_a_stream_is_einval(void **state)
{
    fixture *fx = *state;
    assert_int_equal(tlog_stream_flush(fx->log), TLOG_EINVAL);
    assert_int_equal(tlog_stream_flush(NULL), TLOG_EINVAL);
    assert_int_equal(fx->errors.count, 0);
}

/* ------------------------------------------------------------------------ */
/* Sites                                                                    */
/* ------------------------------------------------------------------------ */

static void site_id_and_instances_of_null_are_zero(void **state)
{
    (void)state;
    assert_int_equal(tlog_site_id(NULL), 0);
    assert_int_equal(tlog_site_instances(NULL), 0);
}

static void site_intern_with_null_name_is_null(void **state)
{
    (void)state;
    assert_null(tlog_site_intern(NULL, "misuse.c", "f", 1, TLOG_LEVEL_COARSE));
    assert_null(tlog_site_intern(NULL, NULL, NULL, 0, 0));
    /* File and function may be left out. */
    const tlog_site *s = tlog_site_intern("Bare", NULL, NULL, -1, TLOG_LEVEL_FINE);
    assert_non_null(s);
    assert_null(s->file);
    assert_ptr_equal(tlog_site_intern("Bare", NULL, NULL, -1, TLOG_LEVEL_FINE), s);
}

static void site_named_with_null_gives_its_call_site_or_null(void **state)
{
    (void)state;
    static const tlog_site at = {"(other names)", __FILE__, __func__, __LINE__,
                                 TLOG_LEVEL_COARSE};
    tlog_names_info before = {.size = sizeof before};
    assert_int_equal(tlog_names_get_info(&before), TLOG_OK);
    assert_null(tlog_site_named(NULL, "name"));
    assert_null(tlog_site_named(NULL, NULL));
    assert_ptr_equal(tlog_site_named(&at, NULL), &at);
    tlog_names_info after = {.size = sizeof after};
    assert_int_equal(tlog_names_get_info(&after), TLOG_OK);
    assert_int_equal(after.names, before.names);
    assert_int_equal(after.refused, before.refused);
}

static void names_get_info_with_null_or_short_size_is_einval(void **state)
{
    (void)state;
    assert_int_equal(tlog_names_get_info(NULL), TLOG_EINVAL);
    tlog_names_info info;
    memset(&info, PATTERN, sizeof info);
    info.size = 0;
    assert_int_equal(tlog_names_get_info(&info), TLOG_EINVAL);
    assert_true(untouched_after_size(&info, sizeof info));
}

/* Only levels 1 and 2 are ever switched on: sites of other levels record
 * nothing and are not reported, through the macros, tlog_log_begin and
 * tlog_log_end, whatever the active level. */
static void sites_of_levels_other_than_coarse_and_fine_never_record(void **state)
{
    fixture *fx = *state;
    const int odd[] = {TLOG_LEVEL_OFF, -1, 3, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        const tlog_site *s = tlog_site_intern("Odd", "misuse.c", "f", 1, odd[i]);
        assert_non_null(s);
        tlog_log_begin(fx->log, s);
        assert_int_equal(tlog_depth(fx->log), 0);
        tlog_log_end(fx->log, s);
        begin_at(fx->log, "Frame", 0);
        tlog_log_begin(fx->log, s);
        assert_int_equal(tlog_depth(fx->log), 1);
        tlog_log_end(fx->log, s);
        end_at(fx->log, "Frame", 1);
        assert_int_equal(tlog_set_level(fx->log, TLOG_LEVEL_OFF), TLOG_OK);
        tlog_log_begin(fx->log, s);
        assert_int_equal(tlog_depth(fx->log), 0);
        tlog_log_end(fx->log, s);
        assert_int_equal(tlog_set_level(fx->log, TLOG_LEVEL_FINE), TLOG_OK);
    }
    assert_int_equal(fx->errors.count, 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_int_equal(child_count(tlog_frame_root(f)), 0);
    tlog_frame_release(f);
    assert_int_equal(stats_of(fx->log).unmatched_ends, 0);
    {
        TIMERLOG_SCOPE_L(0, "Level zero");
        TIMERLOG_SCOPE_L(-1, "Level minus one");
        TIMERLOG_SCOPE_L(3, "Level three");
        TIMERLOG_BEGIN_L(0, "Pair at level zero");
        assert_int_equal(tlog_depth(NULL), 0);
        TIMERLOG_END_L(0, "Pair at level zero");
    }
    assert_int_equal(tlog_frame_count(NULL), 0);
    assert_int_equal(default_errors.count, 0);
}

/* ------------------------------------------------------------------------ */
/* Threads and scopes                                                       */
/* ------------------------------------------------------------------------ */

static void thread_name_null_is_einval_and_keeps_the_name(void **state)
{
    fixture *fx = *state;
    assert_int_equal(tlog_thread_name("Misuser"), TLOG_OK);
    assert_int_equal(tlog_thread_name(NULL), TLOG_EINVAL);
    begin_at(fx->log, "Frame", 0);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    tlog_frame_info fi = {.size = sizeof fi};
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    assert_string_equal(fi.thread_name, "Misuser");
    tlog_frame_release(f);
}

/* A thread that never recorded in a log has no id, no depth and no scope
 * to hand off there. */
static void thread_that_never_recorded_has_nothing_to_give(void **state)
{
    fixture *fx = *state;
    assert_int_equal(tlog_thread_id(fx->log), 0);
    assert_int_equal(tlog_depth(fx->log), 0);
    tlog_token t = tlog_handoff(fx->log);
    assert_int_equal(t.thread, 0);
    assert_int_equal(tlog_adopt_begin(&t), TLOG_EINVAL);
    assert_int_equal(tlog_insert(fx->log, site_named("Alone"), TLOG_KIND_CONTROL, 0, 1),
                     TLOG_ENOTOPEN);
    /* The same on the default log, where this thread has no scope open. */
    t = tlog_handoff(NULL);
    assert_int_equal(t.thread, 0);
    assert_ptr_equal(t.log, tlog_default());
    assert_int_equal(tlog_insert(NULL, site_named("Alone"), TLOG_KIND_CONTROL, 0, 1),
                     TLOG_ENOTOPEN);
    assert_int_not_equal(tlog_thread_id(NULL), 0);   /* it recorded there before */
    assert_int_equal(default_errors.count, 0);
}

/* tlog_log_begin and tlog_log_end with a NULL site open and close nothing
 * and are reported, as tlog_begin and tlog_end, on their own log. */
static void log_begin_and_end_with_null_site_are_reported_on_their_log(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    tlog_log_begin(fx->log, NULL);
    assert_int_equal(tlog_depth(fx->log), 1);
    assert_int_equal(count_code(&fx->errors, TLOG_EINVAL), 1);
    assert_non_null(strstr(fx->errors.last, "tlog_log_begin(log, NULL)"));
    tlog_log_end(fx->log, NULL);
    assert_int_equal(tlog_depth(fx->log), 1);
    assert_int_equal(count_code(&fx->errors, TLOG_EINVAL), 2);
    assert_non_null(strstr(fx->errors.last, "tlog_log_end(log, NULL)"));
    end_at(fx->log, "Frame", 1);
    tlog_log_end(fx->log, NULL);   /* nothing open */
    assert_int_equal(fx->errors.count, 3);
    assert_int_equal(default_errors.count, 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_int_equal(child_count(tlog_frame_root(f)), 0);
    tlog_frame_release(f);
    tlog_stats s = stats_of(fx->log);
    assert_int_equal(s.unmatched_ends + s.mismatched_ends, 0);
    /* On the default log when log is NULL. */
    tlog_log_begin(NULL, NULL);
    tlog_log_end(NULL, NULL);
    assert_int_equal(count_code(&default_errors, TLOG_EINVAL), 2);
    assert_int_equal(tlog_depth(NULL), 0);
    default_errors = (collected_errors){0};
}

/* A clock of the application's that goes back within a scope: the scope
 * stays in the frame with a time of 0, and that is said (naming it and how
 * far the clock went back) and counted; a scope the clock ran forward in is
 * not. */
static void a_clock_that_goes_back_in_a_scope_is_reported_and_counted(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    begin_at(fx->log, "Back", 20);
    end_at(fx->log, "Back", 15);
    begin_at(fx->log, "Forward", 16);
    end_at(fx->log, "Forward", 18);
    end_at(fx->log, "Frame", 30);
    assert_int_equal(fx->errors.count, 1);
    assert_int_equal(count_code(&fx->errors, TLOG_EINVAL), 1);
    assert_non_null(strstr(fx->errors.last, "went back 5000000 ns"));
    assert_non_null(strstr(fx->errors.last, "\"Back\""));
    assert_int_equal(stats_of(fx->log).clock_reversals, 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_node *back = child_named(tlog_frame_root(f), "Back");
    assert_non_null(back);
    assert_int_equal(info_of(back).total_ns, 0);
    assert_int_equal(info_of(child_named(tlog_frame_root(f), "Forward")).total_ns, 2000000);
    tlog_frame_release(f);
    /* The root too. */
    begin_at(fx->log, "Frame", 40);
    end_at(fx->log, "Frame", 39);
    assert_int_equal(stats_of(fx->log).clock_reversals, 2);
    assert_non_null(strstr(fx->errors.last, "\"Frame\""));
    assert_int_equal(default_errors.count, 0);
}

typedef struct adopter {
    tlog_token token;
    int begin_null, begin_empty, end_null, end_other, begin, end;
} adopter;

static void *adopt_with_bad_tokens(void *arg)
{
    adopter *a = arg;
    tlog_token empty = {0};
    tlog_token other = a->token;
    other.scope++;
    a->begin_null = tlog_adopt_begin(NULL);
    a->begin_empty = tlog_adopt_begin(&empty);
    a->end_null = tlog_adopt_end(NULL);
    a->begin = tlog_adopt_begin(&a->token);
    a->end_other = tlog_adopt_end(&other);
    a->end = tlog_adopt_end(&a->token);
    return NULL;
}

/* Bad tokens are refused without disturbing the adoption in progress. */
static void adopt_with_null_or_wrong_token_is_einval(void **state)
{
    fixture *fx = *state;
    assert_int_equal(tlog_adopt_end(NULL), TLOG_EINVAL);
    begin_at(fx->log, "Frame", 0);
    adopter a = {.token = tlog_handoff(fx->log)};
    assert_int_equal(tlog_adopt_end(&a.token), TLOG_EINVAL);   /* not adopting it */
    assert_int_equal(tlog_depth(fx->log), 1);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, adopt_with_bad_tokens, &a), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    end_at(fx->log, "Frame", 1);
    assert_int_equal(a.begin_null, TLOG_EINVAL);
    assert_int_equal(a.begin_empty, TLOG_EINVAL);
    assert_int_equal(a.end_null, TLOG_EINVAL);
    assert_int_equal(a.begin, TLOG_OK);
    assert_int_equal(a.end_other, TLOG_EINVAL);
    assert_int_equal(a.end, TLOG_OK);
    assert_int_equal(fx->errors.count, 0);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_int_equal(child_count(tlog_frame_root(f)), 1);   /* the worker's row */
    tlog_frame_release(f);
}

static void insert_with_bad_arguments_is_einval_and_records_nothing(void **state)
{
    fixture *fx = *state;
    const tlog_site *site = site_named("Inserted");
    const tlog_kind kinds[] = {(tlog_kind)2, (tlog_kind)-1, (tlog_kind)INT_MAX};
    assert_int_equal(tlog_insert(fx->log, site, TLOG_KIND_CONTROL, 0, 1), TLOG_ENOTOPEN);
    begin_at(fx->log, "Frame", 0);
    tlog_token token = tlog_handoff(fx->log);
    tlog_token empty = {0};
    assert_int_equal(tlog_insert(fx->log, NULL, TLOG_KIND_CONTROL, 0, 1), TLOG_EINVAL);
    assert_int_equal(tlog_insert(fx->log, site, TLOG_KIND_CONTROL, 2, 1), TLOG_EINVAL);
    assert_int_equal(tlog_insert_to(NULL, site, TLOG_KIND_CONTROL, 0, 1), TLOG_EINVAL);
    assert_int_equal(tlog_insert_to(&empty, site, TLOG_KIND_CONTROL, 0, 1), TLOG_EINVAL);
    assert_int_equal(tlog_insert_to(&token, NULL, TLOG_KIND_CONTROL, 0, 1), TLOG_EINVAL);
    assert_int_equal(tlog_insert_to(&token, site, TLOG_KIND_CONTROL, 2, 1), TLOG_EINVAL);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        assert_int_equal(tlog_insert(fx->log, site, kinds[i], 0, 1), TLOG_EINVAL);
        assert_int_equal(tlog_insert_to(&token, site, kinds[i], 0, 1), TLOG_EINVAL);
    }
    assert_int_equal(tlog_depth(fx->log), 1);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_int_equal(child_count(tlog_frame_root(f)), 0);
    tlog_frame_release(f);
    tlog_stats s = stats_of(fx->log);
    assert_int_equal(s.scopes_dropped + s.late_work, 0);
    assert_int_equal(fx->errors.count, 0);
}

/* A timing as long as the clock allows, or far from the frame, is kept
 * with its times saturated, and prints and exports like any other. */
static void insert_of_extreme_times_saturates(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    assert_int_equal(tlog_insert(fx->log, site_named("Forever"), TLOG_KIND_CONTROL, 0,
                                 UINT64_MAX), TLOG_OK);
    assert_int_equal(tlog_insert(fx->log, site_named("Far"), TLOG_KIND_EXECUTION,
                                 (uint64_t)INT64_MAX, (uint64_t)INT64_MAX), TLOG_OK);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    const tlog_node *forever = child_named(tlog_frame_root(f), "Forever");
    const tlog_node *far = child_named(tlog_frame_root(f), "Far");
    assert_non_null(forever);
    assert_non_null(far);
    assert_int_equal(info_of(forever).total_ns, UINT64_MAX);
    assert_int_equal(info_of(far).start_ns, INT64_MAX);
    free(dump_string(f, NULL));
    const tlog_frame *frames[] = {f};
    FILE *fp = tmpfile();
    assert_int_equal(tlog_export_chrome(frames, 1, fp), TLOG_OK);
    assert_int_equal(tlog_export_json(frames, 1, fp), TLOG_OK);
    assert_int_equal(tlog_export_csv(frames, 1, fp), TLOG_OK);
    fclose(fp);
    tlog_frame_release(f);
}

/* Timings whose sum passes what a uint64 holds: the row's total stays at
 * its largest value (never below its own longest instance), the parent's
 * self time at 0, and merged frames add up the same way. A timing past a
 * double's 53 bits is kept to the nanosecond on a nanosecond clock. */
static void totals_past_the_range_saturate(void **state)
{
    fixture *fx = *state;
    const uint64_t half = UINT64_MAX / 2 + 10, exact = (1ull << 63) + 9;
    begin_at(fx->log, "Frame", 0);
    for (int k = 0; k < 2; k++)
        assert_int_equal(tlog_insert(fx->log, site_named("Long"), TLOG_KIND_CONTROL, 0, half),
                         TLOG_OK);
    assert_int_equal(tlog_insert(fx->log, site_named("Exact"), TLOG_KIND_CONTROL, 0, exact),
                     TLOG_OK);
    end_at(fx->log, "Frame", 1000);
    tlog_frame *f = tlog_frame_latest(fx->log);
    assert_non_null(f);
    tlog_node_info lng = info_of(child_named(tlog_frame_root(f), "Long"));
    assert_int_equal(lng.count, 2);
    assert_int_equal(lng.total_ns, UINT64_MAX);
    assert_int_equal(lng.max_ns, half);
    assert_int_equal(info_of(child_named(tlog_frame_root(f), "Exact")).total_ns, exact);
    assert_int_equal(info_of(tlog_frame_root(f)).self_ns, 0);
    const tlog_frame *twice[] = {f, f};
    tlog_frame *merged = NULL;
    assert_int_equal(tlog_frame_merge(twice, 2, &merged), TLOG_OK);
    lng = info_of(child_named(tlog_frame_root(merged), "Long"));
    assert_int_equal(lng.count, 4);
    assert_int_equal(lng.total_ns, UINT64_MAX);
    tlog_frame_release(merged);
    tlog_frame_release(f);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

static void frame_queue_of_an_unknown_thread_is_empty_and_left_alone(void **state)
{
    fixture *fx = *state;
    assert_null(tlog_frame_latest(fx->log));
    assert_null(tlog_frame_pop(fx->log));
    assert_null(tlog_frame_pop_ready(fx->log));
    assert_int_equal(tlog_frame_ready(fx->log), TLOG_ENOFRAME);
    assert_int_equal(tlog_frame_count(fx->log), 0);
    begin_at(fx->log, "Frame", 0);
    end_at(fx->log, "Frame", 1);
    const uint32_t unknown[] = {12345, TLOG_THREAD_SELF - 1};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_null(tlog_frame_latest_of(fx->log, unknown[i]));
        assert_null(tlog_frame_pop_of(fx->log, unknown[i]));
        assert_null(tlog_frame_pop_ready_of(fx->log, unknown[i]));
        assert_int_equal(tlog_frame_ready_of(fx->log, unknown[i]), TLOG_ENOFRAME);
        assert_int_equal(tlog_frame_count_of(fx->log, unknown[i]), 0);
    }
    assert_int_equal(tlog_frame_count(fx->log), 1);
    assert_int_equal(stats_of(fx->log).frames_dropped, 0);
    /* NULL is the default log, which holds no frame now. */
    assert_null(tlog_frame_latest_of(NULL, 12345));
    assert_null(tlog_frame_pop_of(NULL, TLOG_THREAD_SELF));
    assert_null(tlog_frame_pop_ready_of(NULL, TLOG_THREAD_ANY));
    assert_null(tlog_frame_latest(NULL));
    assert_null(tlog_frame_pop_ready(NULL));
    assert_int_equal(tlog_frame_ready_of(NULL, TLOG_THREAD_ANY), TLOG_ENOFRAME);
    assert_int_equal(tlog_frame_ready(NULL), TLOG_ENOFRAME);
    assert_int_equal(tlog_frame_count_of(NULL, TLOG_THREAD_SELF), 0);
}

static int count_visits(void *user, const tlog_node *node, const tlog_node_info *info)
{
    (void)node;
    (void)info;
    ++*(int *)user;
    return 0;
}

static void frame_reading_with_null_is_einval_or_null(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    begin_at(fx->log, "Child", 0);
    end_at(fx->log, "Child", 1);
    end_at(fx->log, "Frame", 2);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_node *root = tlog_frame_root(f);
    assert_non_null(root);

    tlog_frame_info fi;
    memset(&fi, PATTERN, sizeof fi);
    fi.size = sizeof fi;
    assert_int_equal(tlog_frame_get_info(NULL, &fi), TLOG_EINVAL);
    assert_int_equal(tlog_frame_get_info(f, NULL), TLOG_EINVAL);
    fi.size = 0;
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_EINVAL);
    assert_true(untouched_after_size(&fi, sizeof fi));

    assert_null(tlog_frame_root(NULL));
    assert_null(tlog_node_parent(NULL));
    assert_null(tlog_node_first_child(NULL));
    assert_null(tlog_node_next_sibling(NULL));
    assert_null(tlog_node_parent(root));
    assert_null(tlog_node_next_sibling(root));

    tlog_node_info ni;
    memset(&ni, PATTERN, sizeof ni);
    ni.size = sizeof ni;
    assert_int_equal(tlog_node_get_info(NULL, &ni), TLOG_EINVAL);
    assert_int_equal(tlog_node_get_info(root, NULL), TLOG_EINVAL);
    ni.size = sizeof(size_t) - 1;
    assert_int_equal(tlog_node_get_info(root, &ni), TLOG_EINVAL);
    assert_true(untouched_after_size(&ni, sizeof ni));

    int visits = 0;
    assert_int_equal(tlog_frame_walk(NULL, count_visits, &visits), TLOG_EINVAL);
    assert_int_equal(tlog_frame_walk(f, NULL, &visits), TLOG_EINVAL);
    assert_int_equal(visits, 0);
    assert_int_equal(tlog_frame_walk(f, count_visits, &visits), TLOG_OK);
    assert_int_equal(visits, 2);

    fi.size = sizeof fi;
    assert_int_equal(tlog_frame_get_info(f, &fi), TLOG_OK);
    tlog_instance in;
    memset(&in, PATTERN, sizeof in);
    in.size = sizeof in;
    assert_int_equal(tlog_frame_get_instance(NULL, 0, &in), TLOG_EINVAL);
    assert_int_equal(tlog_frame_get_instance(f, 0, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_frame_get_instance(f, fi.instances, &in), TLOG_EINVAL);
    assert_int_equal(tlog_frame_get_instance(f, SIZE_MAX, &in), TLOG_EINVAL);
    assert_true(untouched_after_size(&in, sizeof in));
    in.size = 0;
    assert_int_equal(tlog_frame_get_instance(f, 0, &in), TLOG_EINVAL);
    in.size = sizeof in;
    assert_int_equal(tlog_frame_get_instance(f, 0, &in), TLOG_OK);

    tlog_frame_release(NULL);   /* does nothing */
    tlog_frame_release(f);
}

static void dump_of_a_null_frame_is_einval_and_writes_nothing(void **state)
{
    fixture *fx = *state;
    FILE *fp = tmpfile();
    tlog_dump_options o = {.size = sizeof o};
    assert_int_equal(tlog_dump_frame(NULL, fp, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_dump_frame(NULL, fp, &o), TLOG_EINVAL);
    /* A size that cuts the summary's pointer in two: no struct's. */
    begin_at(fx->log, "Frame", 0);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    tlog_dump_options cut = {.size = offsetof(tlog_dump_options, summary) + 4};
    assert_int_equal(tlog_dump_frame(f, fp, &cut), TLOG_EINVAL);
    tlog_frame_release(f);
    tlog_frame_release(tlog_frame_pop(fx->log));   /* none left to dump below */
    assert_int_equal(tlog_dump(fx->log, fp), TLOG_ENOFRAME);
    assert_int_equal(tlog_dump(fx->log, NULL), TLOG_ENOFRAME);
    assert_int_equal(ftell(fp), 0);
    fclose(fp);
}

/* Options are read by their size like every other settings struct: 0 is
 * the current size, a longer struct is read up to what is known. */
static void dump_options_are_read_by_their_size(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    begin_at(fx->log, "Big", 0);
    end_at(fx->log, "Big", 90);
    begin_at(fx->log, "Small", 90);
    end_at(fx->log, "Small", 91);
    end_at(fx->log, "Frame", 100);
    tlog_frame *f = tlog_frame_latest(fx->log);
    tlog_dump_options sized = {.size = sizeof sized, .min_ns = 5 * NS_PER_MS};
    char *expected = dump_string(f, &sized);
    assert_null(strstr(expected, "Small"));
    assert_non_null(strstr(expected, "# 1 rows hidden"));
    tlog_dump_options zero = {.min_ns = 5 * NS_PER_MS};
    char *text = dump_string(f, &zero);
    assert_string_equal(text, expected);
    free(text);
    struct {
        tlog_dump_options o;
        unsigned char newer[32];
    } big;
    memset(&big, 0xff, sizeof big);
    big.o = sized;
    big.o.size = sizeof big;
    text = dump_string(f, &big.o);
    assert_string_equal(text, expected);
    free(text);
    free(expected);
    tlog_frame_release(f);
}

/* A NULL `out` writes to stdout. */
static void output_to_null_goes_to_stdout(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_frame *one[] = {f};
    fflush(stdout);
    int saved = dup(fileno(stdout));
    FILE *capture = tmpfile();
    dup2(fileno(capture), fileno(stdout));
    int rc[5] = {tlog_dump_frame(f, NULL, NULL), tlog_dump(fx->log, NULL),
                 tlog_export_chrome(one, 1, NULL), tlog_export_json(one, 1, NULL),
                 tlog_export_csv(one, 1, NULL)};
    fflush(stdout);
    dup2(saved, fileno(stdout));
    close(saved);
    for (int i = 0; i < 5; i++)
        assert_int_equal(rc[i], TLOG_OK);
    fseek(capture, 0, SEEK_END);
    char *text = read_back(capture);
    assert_non_null(strstr(text, "> 100.00% 0.001000s | (C) Frame\n"));
    assert_non_null(strstr(text, "\"traceEvents\""));
    assert_non_null(strstr(text, "{\"frames\":["));
    assert_non_null(strstr(text, "rank,frame,path"));
    free(text);
    tlog_frame_release(f);
}

typedef int (*merge_fn)(const tlog_frame *const *, size_t, tlog_frame **);

/* Refused merges set *out to NULL and make nothing. */
static void merge_and_reduce_with_bad_arguments_are_einval(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_frame *one[] = {f};
    const tlog_frame *with_null[] = {f, NULL};
    const tlog_frame *null_first[] = {NULL, f};
    const merge_fn fns[] = {tlog_frame_merge, tlog_frame_reduce};
    for (size_t k = 0; k < 2; k++) {
        tlog_frame *out = SENTINEL(tlog_frame);
        assert_int_equal(fns[k](NULL, 1, &out), TLOG_EINVAL);
        assert_null(out);
        out = SENTINEL(tlog_frame);
        assert_int_equal(fns[k](one, 0, &out), TLOG_EINVAL);
        assert_null(out);
        out = SENTINEL(tlog_frame);
        assert_int_equal(fns[k](with_null, 2, &out), TLOG_EINVAL);
        assert_null(out);
        out = SENTINEL(tlog_frame);
        assert_int_equal(fns[k](null_first, 2, &out), TLOG_EINVAL);
        assert_null(out);
        out = SENTINEL(tlog_frame);
        assert_int_equal(fns[k](one, SIZE_MAX, &out), TLOG_EINVAL);
        assert_null(out);
        assert_int_equal(fns[k](one, 1, NULL), TLOG_EINVAL);
        assert_int_equal(fns[k](one, 1, &out), TLOG_OK);
        tlog_frame_release(out);
    }
    tlog_frame_release(f);
}

typedef int (*export_fn)(const tlog_frame *const *, size_t, FILE *);

/* The three exports agree: a NULL frame anywhere in the array, a NULL
 * array of frames or a count no array can have are refused before
 * anything is written. No frames is an empty document. */
static void exports_refuse_a_null_frame_and_write_nothing(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    const tlog_frame *with_null[] = {f, NULL};
    const tlog_frame *null_first[] = {NULL, f};
    const tlog_frame *one[] = {f};
    const export_fn fns[] = {tlog_export_chrome, tlog_export_json, tlog_export_csv};
    for (size_t k = 0; k < 3; k++) {
        FILE *fp = tmpfile();
        assert_int_equal(fns[k](with_null, 2, fp), TLOG_EINVAL);
        assert_int_equal(fns[k](null_first, 2, fp), TLOG_EINVAL);
        assert_int_equal(fns[k](NULL, 1, fp), TLOG_EINVAL);
        assert_int_equal(fns[k](one, SIZE_MAX, fp), TLOG_EINVAL);
        assert_int_equal(ftell(fp), 0);
        assert_int_equal(fns[k](NULL, 0, fp), TLOG_OK);
        assert_true(ftell(fp) > 0);
        fclose(fp);
    }
    tlog_frame_release(f);
}

/* ------------------------------------------------------------------------ */
/* Statistics across frames                                                 */
/* ------------------------------------------------------------------------ */

/* Every statistics call with NULL for each pointer and with indexes and
 * values out of range: the documented code, out pointers cleared, nothing
 * written, and the summary as it was. */
static void summary_calls_with_null_or_out_of_range(void **state)
{
    fixture *fx = *state;
    begin_at(fx->log, "Frame", 0);
    end_at(fx->log, "Frame", 1);
    tlog_frame *f = tlog_frame_latest(fx->log);
    tlog_summary *s = SENTINEL(tlog_summary);
    assert_int_equal(tlog_summary_create(NULL, NULL), TLOG_EINVAL);
    tlog_summary_config short_cfg = {.size = 1};
    assert_int_equal(tlog_summary_create(&short_cfg, &s), TLOG_EINVAL);
    short_cfg.size = sizeof(size_t) + 4;   /* no struct's size */
    assert_int_equal(tlog_summary_create(&short_cfg, &s), TLOG_EINVAL);
    assert_null(s);
    assert_int_equal(tlog_summary_create(NULL, &s), TLOG_OK);
    tlog_summary_destroy(NULL);

    assert_int_equal(tlog_summary_add(NULL, f), TLOG_EINVAL);
    assert_int_equal(tlog_summary_add(s, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_merge(NULL, s), TLOG_EINVAL);
    assert_int_equal(tlog_summary_merge(s, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_merge(s, s), TLOG_EINVAL);
    assert_int_equal(tlog_summary_reset(NULL), TLOG_EINVAL);
    const tlog_summary *inputs[] = {s, NULL};
    tlog_summary *reduced = SENTINEL(tlog_summary);
    assert_int_equal(tlog_summary_reduce(NULL, 1, &reduced), TLOG_EINVAL);
    assert_null(reduced);
    reduced = SENTINEL(tlog_summary);
    assert_int_equal(tlog_summary_reduce(inputs, 0, &reduced), TLOG_EINVAL);
    assert_null(reduced);
    assert_int_equal(tlog_summary_reduce(inputs, 2, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_reduce(inputs + 1, 1, &reduced), TLOG_OK);   /* all NULL */
    tlog_summary_info ri = {.size = sizeof ri};
    assert_int_equal(tlog_summary_get_info(reduced, &ri), TLOG_OK);
    assert_int_equal(ri.frames, 0);
    assert_int_equal(ri.reduced_ranks, 1);
    tlog_summary_destroy(reduced);
    tlog_summary_info si = {.size = sizeof si};
    assert_int_equal(tlog_summary_get_info(NULL, &si), TLOG_EINVAL);
    assert_int_equal(tlog_summary_get_info(s, NULL), TLOG_EINVAL);
    si.size = sizeof(size_t) - 1;
    assert_int_equal(tlog_summary_get_info(s, &si), TLOG_EINVAL);
    assert_int_equal(tlog_summary_add(s, f), TLOG_OK);
    si.size = sizeof si;
    assert_int_equal(tlog_summary_get_info(s, &si), TLOG_OK);
    assert_int_equal(si.frames, 1);

    assert_null(tlog_summary_root(NULL, 0));
    assert_null(tlog_summary_root(s, 1));
    assert_null(tlog_summary_root(s, SIZE_MAX));
    const tlog_stat_row *root = tlog_summary_root(s, 0);
    assert_non_null(root);
    assert_null(tlog_stat_row_parent(NULL));
    assert_null(tlog_stat_row_first_child(NULL));
    assert_null(tlog_stat_row_next_sibling(NULL));
    assert_null(tlog_stat_row_parent(root));
    tlog_stat_info info = {.size = sizeof info};
    assert_int_equal(tlog_stat_row_get_info(NULL, &info), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_get_info(root, NULL), TLOG_EINVAL);
    uint64_t q = 7;
    assert_int_equal(tlog_stat_row_quantile(NULL, TLOG_STAT_TOTAL, 0.5, &q), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_quantile(root, TLOG_STAT_TOTAL, 0.5, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_quantile(root, (tlog_stat_of)3, 0.5, &q), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_quantile(root, (tlog_stat_of)-1, 0.5, &q), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_quantile(root, TLOG_STAT_TOTAL, -0.1, &q), TLOG_EINVAL);
    assert_int_equal(tlog_stat_row_quantile(root, TLOG_STAT_TOTAL, 1.1, &q), TLOG_EINVAL);
    assert_int_equal(q, 7);
    assert_int_equal(tlog_summary_walk(NULL, NULL, NULL), TLOG_EINVAL);
    assert_null(tlog_summary_find(NULL, f, tlog_frame_root(f)));
    assert_null(tlog_summary_find(s, NULL, tlog_frame_root(f)));
    assert_null(tlog_summary_find(s, f, NULL));
    begin_at(fx->log, "Frame", 2);
    end_at(fx->log, "Frame", 3);
    tlog_frame *other = tlog_frame_latest(fx->log);
    assert_ptr_not_equal(other, f);
    assert_null(tlog_summary_find(s, f, tlog_frame_root(other)));   /* not of the frame */
    tlog_frame_release(other);
    assert_int_equal(tlog_frame_walk_stats(NULL, s, NULL, NULL), TLOG_EINVAL);
    tlog_hitch_info h = {.size = sizeof h};
    assert_int_equal(tlog_summary_hitch(NULL, 0, &h), TLOG_EINVAL);
    assert_int_equal(tlog_summary_hitch(s, 0, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_hitch(s, 0, &h), TLOG_EINVAL);   /* none kept */

    FILE *fp = tmpfile();
    assert_int_equal(tlog_summary_dump(NULL, fp, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_dump_hitch(NULL, 0, fp, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_dump_hitch(s, 0, fp, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_summary_export_json(NULL, fp), TLOG_EINVAL);
    assert_int_equal(tlog_summary_export_csv(NULL, fp), TLOG_EINVAL);
    assert_int_equal(tlog_summary_export_hitches_csv(NULL, fp), TLOG_EINVAL);
    assert_int_equal(ftell(fp), 0);
    fclose(fp);

    assert_int_equal(tlog_log_summary(fx->log, NULL), TLOG_EINVAL);
    tlog_summary *copy = SENTINEL(tlog_summary);
    assert_int_equal(tlog_log_summary(fx->log, &copy), TLOG_EINVAL);   /* keeps none */
    assert_null(copy);
    assert_int_equal(tlog_log_summary_reset(fx->log), TLOG_EINVAL);
    assert_int_equal(tlog_summary_get_info(s, &si), TLOG_OK);
    assert_int_equal(si.frames, 1);
    tlog_summary_destroy(s);
    tlog_frame_release(f);
}

/* ------------------------------------------------------------------------ */
/* Reading streams back                                                     */
/* ------------------------------------------------------------------------ */

static const char *streamed_file(void)
{
    const char *path = in_dir("one.tlog");
    collected_errors errors = {0};
    tlog_config c = test_config(&errors);
    c.stream_path = path;
    tlog_log *log = make_log(&c);
    begin_at(log, "Frame", 0);
    end_at(log, "Frame", 1);
    assert_int_equal(tlog_stream_flush(log), TLOG_OK);
    tlog_destroy(log);
    assert_int_equal(errors.count, 0);
    return path;
}

static void reader_open_with_null_is_einval_and_sets_out_null(void **state)
{
    (void)state;
    const char *path = streamed_file();
    tlog_reader *r = SENTINEL(tlog_reader);
    assert_int_equal(tlog_reader_open(NULL, &r), TLOG_EINVAL);
    assert_null(r);
    assert_int_equal(tlog_reader_open(path, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_reader_open(NULL, NULL), TLOG_EINVAL);
    static const char bytes[] = "TLOGSTRM";
    r = SENTINEL(tlog_reader);
    assert_int_equal(tlog_reader_open_memory(NULL, 8, &r), TLOG_EINVAL);
    assert_null(r);
    assert_int_equal(tlog_reader_open_memory(bytes, 8, NULL), TLOG_EINVAL);
    /* Nothing at all is not a stream, and says so. */
    assert_int_equal(tlog_reader_open_memory(NULL, 0, &r), TLOG_EFORMAT);
    assert_non_null(r);
    assert_string_not_equal(tlog_reader_error(r), "");
    tlog_reader_close(r);
    tlog_reader_close(NULL);   /* does nothing */
}

static void reader_calls_with_null_or_past_the_end_leave_it_alone(void **state)
{
    (void)state;
    tlog_reader *r = NULL;
    assert_int_equal(tlog_reader_open(streamed_file(), &r), TLOG_OK);
    tlog_frame *f = SENTINEL(tlog_frame);
    assert_int_equal(tlog_reader_next(NULL, &f), TLOG_EINVAL);
    assert_int_equal(tlog_reader_next(r, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_reader_next(NULL, NULL), TLOG_EINVAL);
    /* The reader has not moved: its one frame comes next. */
    assert_int_equal(tlog_reader_next(r, &f), TLOG_OK);
    assert_non_null(f);
    tlog_frame_release(f);
    assert_string_equal(tlog_reader_error(r), "");
    assert_non_null(tlog_reader_error(NULL));

    tlog_reader_info info;
    memset(&info, PATTERN, sizeof info);
    info.size = sizeof info;
    assert_int_equal(tlog_reader_get_info(NULL, &info), TLOG_EINVAL);
    assert_int_equal(tlog_reader_get_info(r, NULL), TLOG_EINVAL);
    info.size = 0;
    assert_int_equal(tlog_reader_get_info(r, &info), TLOG_EINVAL);
    assert_true(untouched_after_size(&info, sizeof info));
    info.size = sizeof info;
    assert_int_equal(tlog_reader_get_info(r, &info), TLOG_OK);
    assert_int_equal(info.frames, 1);

    assert_null(tlog_reader_site(NULL, 0));
    assert_non_null(tlog_reader_site(r, 0));
    assert_null(tlog_reader_site(r, info.sites));
    assert_null(tlog_reader_site(r, SIZE_MAX));
    uint32_t id = 777;
    assert_null(tlog_reader_thread(NULL, 0, &id));
    assert_null(tlog_reader_thread(r, info.threads, &id));
    assert_null(tlog_reader_thread(r, SIZE_MAX, &id));
    assert_int_equal(id, 777);
    assert_non_null(tlog_reader_thread(r, 0, NULL));   /* the id is optional */
    assert_null(tlog_reader_device(NULL, 0));
    assert_null(tlog_reader_device(r, info.devices));
    assert_null(tlog_reader_device(r, SIZE_MAX));
    tlog_reader_close(r);
}

/* ------------------------------------------------------------------------ */
/* Subscribers                                                              */
/* ------------------------------------------------------------------------ */

static int subscriber_calls;

static void count_scope_event(void *user, const tlog_scope_event *event)
{
    (void)user;
    (void)event;
    subscriber_calls++;
}

static void subscribe_with_bad_arguments_is_einval_and_registers_nothing(void **state)
{
    fixture *fx = *state;
    tlog_subscriber good = {.size = sizeof good, .scope_begin = count_scope_event,
                            .scope_end = count_scope_event};
    /* The third ends where the callbacks begin: it has none of them. */
    const size_t too_short[] = {1, sizeof(size_t), offsetof(tlog_subscriber, scope_begin),
                                offsetof(tlog_subscriber, scope_begin) - 1,
                                offsetof(tlog_subscriber, scope_begin) + 4};
    tlog_subscription *sub = SENTINEL(tlog_subscription);
    assert_int_equal(tlog_subscribe(fx->log, NULL, &sub), TLOG_EINVAL);
    assert_null(sub);
    assert_int_equal(tlog_subscribe(fx->log, &good, NULL), TLOG_EINVAL);
    for (size_t i = 0; i < sizeof too_short / sizeof too_short[0]; i++) {
        tlog_subscriber bad = good;
        bad.size = too_short[i];
        sub = SENTINEL(tlog_subscription);
        assert_int_equal(tlog_subscribe(fx->log, &bad, &sub), TLOG_EINVAL);
        assert_null(sub);
    }
    subscriber_calls = 0;
    begin_at(fx->log, "Frame", 0);
    end_at(fx->log, "Frame", 1);
    assert_int_equal(subscriber_calls, 0);
    tlog_unsubscribe(NULL);   /* does nothing */
    /* The shortest: scope_begin alone. */
    tlog_subscriber shortest = good;
    shortest.size = offsetof(tlog_subscriber, scope_begin) + sizeof shortest.scope_begin;
    assert_int_equal(tlog_subscribe(fx->log, &shortest, &sub), TLOG_OK);
    begin_at(fx->log, "Frame", 2);
    end_at(fx->log, "Frame", 3);
    assert_int_equal(subscriber_calls, 1);   /* its scope_end is past its size */
    tlog_unsubscribe(sub);
    subscriber_calls = 0;
    /* A size of 0 is the current size. */
    tlog_subscriber zero = good;
    zero.size = 0;
    assert_int_equal(tlog_subscribe(fx->log, &zero, &sub), TLOG_OK);
    begin_at(fx->log, "Frame", 2);
    end_at(fx->log, "Frame", 3);
    assert_int_equal(subscriber_calls, 2);
    tlog_unsubscribe(sub);
    /* NULL is the default log. */
    assert_int_equal(tlog_subscribe(NULL, &good, &sub), TLOG_OK);
    tlog_unsubscribe(sub);
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

static void device_calls_with_null_device_or_info(void **state)
{
    sim_fixture *fx = *state;
    tlog_device_info info;
    memset(&info, PATTERN, sizeof info);
    info.size = sizeof info;
    assert_int_equal(tlog_device_get_info(NULL, &info), TLOG_EINVAL);
    assert_int_equal(tlog_device_get_info(fx->dev, NULL), TLOG_EINVAL);
    info.size = 0;
    assert_int_equal(tlog_device_get_info(fx->dev, &info), TLOG_EINVAL);
    assert_true(untouched_after_size(&info, sizeof info));
    assert_int_equal(tlog_device_reserve(NULL, 1), TLOG_EINVAL);
    tlog_device_destroy(NULL);   /* does nothing */
    assert_int_equal(tlog_device_end(NULL), TLOG_ENOTOPEN);
    /* A device that could not be made is NULL: its scopes are empty and
     * not reported, so that the program runs on without one. */
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(NULL, fx->q1, site_named("Kernel"));
    assert_null(s.slot_);
    assert_int_equal(tlog_device_end(&s), TLOG_ENOTOPEN);
    host_end(fx, "Frame");
    assert_int_equal(fx->errors.count, 0);
    assert_int_equal(default_errors.count, 0);
    assert_int_equal(device_info(fx).scopes, 0);
}

/* tlog_device_begin with a NULL site opens nothing and is reported on the
 * device's log, as tlog_begin(NULL) is on the default log; a site of a
 * level never switched on is not timed and not reported. */
static void device_begin_with_null_site_is_reported(void **state)
{
    sim_fixture *fx = *state;
    uint64_t records = sim_stats(fx).records;
    host_begin(fx, "Frame");
    tlog_device_scope s = tlog_device_begin(fx->dev, fx->q1, NULL);
    assert_null(s.slot_);
    assert_int_equal(count_code(&fx->errors, TLOG_EINVAL), 1);
    assert_non_null(strstr(fx->errors.last, "tlog_device_begin(dev, queue, NULL)"));
    const int odd[] = {TLOG_LEVEL_OFF, -1, 3};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        s = tlog_device_begin(fx->dev, fx->q1,
                              tlog_site_intern("Odd kernel", "misuse.c", "f", 1, odd[i]));
        assert_null(s.slot_);
    }
    host_end(fx, "Frame");
    assert_int_equal(fx->errors.count, 1);
    assert_int_equal(device_info(fx).scopes, 0);
    assert_int_equal(sim_stats(fx).records, records);
    /* With no device either, on the default log. */
    s = tlog_device_begin(NULL, NULL, NULL);
    assert_null(s.slot_);
    assert_int_equal(count_code(&default_errors, TLOG_EINVAL), 1);
    default_errors = (collected_errors){0};
}

/* Ending a sync scope with a NULL site closes nothing and is reported on
 * the device's log (the default log without a device). */
static void sync_end_with_null_site_is_reported_and_closes_nothing(void **state)
{
    sim_fixture *fx = *state;
    host_begin(fx, "Frame");
    host_begin(fx, "Wait");
    tlog_sync_end(fx->dev, NULL);
    assert_int_equal(tlog_depth(fx->log), 2);
    assert_non_null(strstr(fx->errors.last, "tlog_sync_end(dev, NULL)"));
    tlog_sync_end_queue(fx->dev, fx->q1, NULL);
    assert_int_equal(tlog_depth(fx->log), 2);
    assert_non_null(strstr(fx->errors.last, "tlog_sync_end_queue(dev, queue, NULL)"));
    assert_int_equal(count_code(&fx->errors, TLOG_EINVAL), 2);
    tlog_sync_end_queue(fx->dev, fx->q1, site_named("Wait"));
    host_end(fx, "Frame");
    assert_int_equal(fx->errors.count, 2);
    tlog_sync_end(NULL, NULL);
    tlog_sync_end_queue(NULL, NULL, NULL);
    assert_int_equal(count_code(&default_errors, TLOG_EINVAL), 2);
    assert_int_equal(tlog_sync(NULL), TLOG_OK);
    assert_int_equal(tlog_sync(fx->log), TLOG_OK);
    tlog_stats s = stats_of(fx->log);
    assert_int_equal(s.unmatched_ends + s.mismatched_ends, 0);
    default_errors = (collected_errors){0};
}

static void device_reserve_of_zero_or_a_huge_count_stops_at_max_scopes(void **state)
{
    (void)state;
    sim_options o = {.max_scopes = 16, .pool_batch = UINT32_MAX};   /* batch: at most 16 */
    sim_fixture *fx = sim_fixture_make(&o);
    assert_int_equal(device_info(fx).pool_scopes, 16);
    assert_int_equal(tlog_device_reserve(fx->dev, 0), TLOG_OK);
    assert_int_equal(tlog_device_reserve(fx->dev, UINT32_MAX), TLOG_OK);
    assert_int_equal(device_info(fx).pool_scopes, 16);
    sim_fixture_free(fx);
}

static void sim_device_create_with_bad_arguments_is_einval(void **state)
{
    sim_fixture *fx = *state;
    uint64_t markers = sim_stats(fx).markers_live;
    tlog_device_config bad[] = {
        {.size = 1},
        {.size = sizeof(size_t) - 1},
        {.size = sizeof(size_t) + 4},
        {.size = sizeof(tlog_device_config), .flags = 1u << 3},
        {.size = sizeof(tlog_device_config), .flags = 1u << 31},
        {.size = sizeof(tlog_device_config), .max_scopes = (1u << 20) + 1},
        {.size = sizeof(tlog_device_config), .max_scopes = UINT32_MAX},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tlog_device *dev = SENTINEL(tlog_device);
        assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, &bad[i], &dev), TLOG_EINVAL);
        assert_null(dev);
    }
    tlog_device *dev = SENTINEL(tlog_device);
    assert_int_equal(tlog_sim_device_create(NULL, fx->log, NULL, &dev), TLOG_EINVAL);
    assert_null(dev);
    assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, NULL, NULL), TLOG_EINVAL);
    assert_int_equal(sim_stats(fx).markers_live, markers);
    /* The largest max_scopes is allowed; markers are made a batch at a time. */
    tlog_device_config most = {.size = sizeof most, .max_scopes = 1u << 20};
    assert_int_equal(tlog_sim_device_create(fx->sim, fx->log, &most, &dev), TLOG_OK);
    tlog_device_destroy(dev);
    assert_int_equal(sim_stats(fx).markers_live, markers);
    /* NULL is the default log. */
    assert_int_equal(tlog_sim_device_create(fx->sim, NULL, NULL, &dev), TLOG_OK);
    tlog_device_destroy(dev);
    assert_int_equal(sim_stats(fx).markers_live, markers);
}

/* ------------------------------------------------------------------------ */
/* The simulated device                                                     */
/* ------------------------------------------------------------------------ */

static void sim_create_with_bad_arguments_is_einval(void **state)
{
    (void)state;
    tlog_sim *sim = SENTINEL(tlog_sim);
    tlog_sim_config c = {.size = 1};
    assert_int_equal(tlog_sim_create(&c, &sim), TLOG_EINVAL);
    assert_null(sim);
    c.size = sizeof(size_t) - 1;
    assert_int_equal(tlog_sim_create(&c, &sim), TLOG_EINVAL);
    c.size = offsetof(tlog_sim_config, clock) + 4;   /* half the clock's pointer */
    assert_int_equal(tlog_sim_create(&c, &sim), TLOG_EINVAL);
    assert_int_equal(tlog_sim_create(NULL, NULL), TLOG_EINVAL);
    c.size = 0;   /* the current size */
    assert_int_equal(tlog_sim_create(&c, &sim), TLOG_OK);
    tlog_sim_destroy(sim);
    tlog_sim_destroy(NULL);   /* does nothing */
}

/* Every call on a NULL simulator refuses or does nothing, and reads of its
 * clock give 0. */
static void sim_calls_with_null_sim(void **state)
{
    (void)state;
    tlog_sim_gate *gate = SENTINEL(tlog_sim_gate);
    tlog_sim_marker *m = SENTINEL(tlog_sim_marker);
    tlog_sim_stats st = {.size = sizeof st};
    uint64_t ns = 5;
    assert_null(tlog_sim_queue_create(NULL));
    assert_int_equal(tlog_sim_launch(NULL, NULL, 1), TLOG_EINVAL);
    assert_int_equal(tlog_sim_gate_create(NULL, &gate), TLOG_EINVAL);
    assert_null(gate);
    gate = SENTINEL(tlog_sim_gate);
    assert_int_equal(tlog_sim_hold(NULL, NULL, &gate), TLOG_EINVAL);
    assert_null(gate);
    assert_int_equal(tlog_sim_queue_sync(NULL, NULL), TLOG_EINVAL);
    tlog_sim_advance(NULL, 1);
    assert_int_equal(tlog_sim_now(NULL), 0);
    assert_int_equal(tlog_sim_clock(NULL), 0);
    tlog_sim_settle(NULL);
    assert_int_equal(tlog_sim_inject(NULL, TLOG_SIM_FAULT_HANG, 1), TLOG_EINVAL);
    assert_int_equal(tlog_sim_get_stats(NULL, &st), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_create(NULL, &m), TLOG_EINVAL);
    assert_null(m);
    assert_int_equal(tlog_sim_marker_record(NULL, NULL, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_query(NULL, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_wait(NULL, NULL, 0), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_time(NULL, NULL, &ns), TLOG_EINVAL);
    assert_int_equal(ns, 5);
}

static void sim_gates_with_null_are_refused_or_ignored(void **state)
{
    sim_fixture *fx = *state;
    tlog_sim_gate *gate = NULL;
    assert_int_equal(tlog_sim_gate_create(fx->sim, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_hold(fx->sim, fx->q1, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_gate_wait(fx->sim, fx->q1, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_gate_create(fx->sim, &gate), TLOG_OK);
    assert_int_equal(tlog_sim_gate_wait(NULL, fx->q1, gate), TLOG_EINVAL);
    tlog_sim_gate_open(NULL, gate);
    tlog_sim_gate_open(fx->sim, NULL);
    tlog_sim_gate_close(NULL, gate);
    tlog_sim_gate_close(fx->sim, NULL);
    tlog_sim_gate_destroy(NULL, gate);
    tlog_sim_gate_destroy(fx->sim, NULL);
    /* The gate is still closed and still there: a queue waits for it. */
    assert_int_equal(tlog_sim_gate_wait(fx->sim, fx->q1, gate), TLOG_OK);
    tlog_sim_marker *m = NULL;
    assert_int_equal(tlog_sim_marker_create(fx->sim, &m), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(fx->sim, fx->q1, m), TLOG_OK);
    sim_at(fx, 1.0);
    assert_int_equal(tlog_sim_marker_query(fx->sim, m), 1);
    tlog_sim_gate_open(fx->sim, gate);
    assert_int_equal(tlog_sim_queue_sync(fx->sim, fx->q1), TLOG_OK);
    assert_int_equal(tlog_sim_queue_sync(fx->sim, NULL), TLOG_OK);
    assert_int_equal(tlog_sim_marker_query(fx->sim, m), TLOG_OK);
    tlog_sim_gate_destroy(fx->sim, gate);
    tlog_sim_marker_destroy(fx->sim, m);
}

static void sim_markers_with_null_are_refused_or_ignored(void **state)
{
    sim_fixture *fx = *state;
    tlog_sim_stats before = sim_stats(fx);
    tlog_sim_marker *m = NULL;
    uint64_t ns = 5;
    assert_int_equal(tlog_sim_marker_create(fx->sim, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_create(fx->sim, &m), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(NULL, fx->q1, m), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_record(fx->sim, fx->q1, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_query(NULL, m), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_query(fx->sim, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_wait(NULL, m, 1), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_wait(fx->sim, NULL, 1), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_time(NULL, m, &ns), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_time(fx->sim, NULL, &ns), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_time(fx->sim, m, NULL), TLOG_EINVAL);
    assert_int_equal(tlog_sim_marker_time(fx->sim, m, &ns), TLOG_EINVAL);   /* never recorded */
    assert_int_equal(ns, 5);
    tlog_sim_marker_destroy(NULL, m);
    tlog_sim_marker_destroy(fx->sim, NULL);
    tlog_sim_stats after = sim_stats(fx);
    assert_int_equal(after.records, before.records);
    assert_int_equal(after.markers_live, before.markers_live + 1);   /* m is still there */
    assert_int_equal(tlog_sim_marker_record(fx->sim, fx->q1, m), TLOG_OK);
    assert_int_equal(tlog_sim_marker_wait(fx->sim, m, UINT64_MAX), TLOG_OK);
    assert_int_equal(tlog_sim_marker_time(fx->sim, m, &ns), TLOG_OK);
    tlog_sim_marker_destroy(fx->sim, m);
    assert_int_equal(sim_stats(fx).markers_live, before.markers_live);
}

static void sim_get_stats_with_null_or_short_size_is_einval(void **state)
{
    sim_fixture *fx = *state;
    assert_int_equal(tlog_sim_get_stats(fx->sim, NULL), TLOG_EINVAL);
    tlog_sim_stats s;
    memset(&s, PATTERN, sizeof s);
    s.size = 0;
    assert_int_equal(tlog_sim_get_stats(fx->sim, &s), TLOG_EINVAL);
    assert_true(untouched_after_size(&s, sizeof s));
}

static void sim_inject_of_an_unknown_fault_is_einval(void **state)
{
    sim_fixture *fx = *state;
    const int unknown[] = {0, TLOG_SIM_FAULT_STALL + 1, -1, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        assert_int_equal(tlog_sim_inject(fx->sim, unknown[i], 1), TLOG_EINVAL);
    assert_int_equal(tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_RECORD_ERROR, 0), TLOG_OK);
    /* Nothing was armed: markers record. */
    tlog_sim_marker *m = NULL;
    assert_int_equal(tlog_sim_marker_create(fx->sim, &m), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(fx->sim, fx->q1, m), TLOG_OK);
    assert_int_equal(tlog_sim_marker_wait(fx->sim, m, UINT64_MAX), TLOG_OK);
    tlog_sim_marker_destroy(fx->sim, m);
}

/* Counts add up to at most UINT_MAX faults rather than wrap around to a
 * few. */
static void sim_inject_counts_saturate(void **state)
{
    sim_fixture *fx = *state;
    assert_int_equal(tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_HANG, UINT_MAX), TLOG_OK);
    assert_int_equal(tlog_sim_inject(fx->sim, TLOG_SIM_FAULT_HANG, 2), TLOG_OK);
    tlog_sim_marker *m[3] = {NULL};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tlog_sim_marker_create(fx->sim, &m[i]), TLOG_OK);
        assert_int_equal(tlog_sim_marker_record(fx->sim, fx->q1, m[i]), TLOG_OK);
    }
    sim_at(fx, 1.0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tlog_sim_marker_query(fx->sim, m[i]), 1);   /* hung */
        tlog_sim_marker_destroy(fx->sim, m[i]);
    }
}

/* The manual clock stops at its end rather than wrap to the start. */
static void sim_advance_saturates(void **state)
{
    (void)state;
    tlog_sim *sim = NULL;
    assert_int_equal(tlog_sim_create(NULL, &sim), TLOG_OK);
    tlog_sim_advance(sim, 10);
    assert_int_equal(tlog_sim_now(sim), 10);
    tlog_sim_advance(sim, UINT64_MAX);
    assert_int_equal(tlog_sim_now(sim), UINT64_MAX);
    tlog_sim_advance(sim, 1);
    assert_int_equal(tlog_sim_now(sim), UINT64_MAX);
    assert_int_equal(tlog_sim_clock(sim), UINT64_MAX);
    tlog_sim_settle(sim);
    tlog_sim_destroy(sim);
}

/* A kernel longer than the clock can run keeps its queue busy: what
 * follows it is never reached, rather than reached at once. */
static void sim_kernel_of_the_longest_duration_keeps_its_queue(void **state)
{
    (void)state;
    tlog_sim *sim = NULL;
    tlog_sim_config c = {.size = sizeof c, .marker_ns = UINT64_MAX};
    assert_int_equal(tlog_sim_create(&c, &sim), TLOG_OK);
    tlog_sim_queue *q = tlog_sim_queue_create(sim);
    assert_non_null(q);
    tlog_sim_advance(sim, 1000);
    assert_int_equal(tlog_sim_launch(sim, q, UINT64_MAX), TLOG_OK);
    tlog_sim_marker *after_kernel = NULL, *first = NULL, *second = NULL;
    assert_int_equal(tlog_sim_marker_create(sim, &after_kernel), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(sim, q, after_kernel), TLOG_OK);
    /* The default queue: a marker takes the rest of time too. */
    assert_int_equal(tlog_sim_marker_create(sim, &first), TLOG_OK);
    assert_int_equal(tlog_sim_marker_create(sim, &second), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(sim, NULL, first), TLOG_OK);
    assert_int_equal(tlog_sim_marker_record(sim, NULL, second), TLOG_OK);
    tlog_sim_advance(sim, 1000000);
    tlog_sim_settle(sim);
    assert_int_equal(tlog_sim_marker_query(sim, after_kernel), 1);
    assert_int_equal(tlog_sim_marker_wait(sim, after_kernel, 1000000), TLOG_ETIMEDOUT);
    assert_int_equal(tlog_sim_marker_query(sim, first), TLOG_OK);
    assert_int_equal(tlog_sim_marker_query(sim, second), 1);
    tlog_sim_marker_destroy(sim, after_kernel);
    tlog_sim_marker_destroy(sim, first);
    tlog_sim_marker_destroy(sim, second);
    tlog_sim_destroy(sim);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_config_with_a_bad_config_is_einval_and_keeps_the_last),
        cmocka_unit_test(default_config_once_the_default_log_exists),
        cmocka_unit_test(begin_and_end_with_null_site_are_reported_on_the_default_log),
        cmocka_unit_test(set_level_out_of_range_is_einval_and_keeps_the_level),
        cmocka_unit_test(create_with_null_out_is_einval),
        cmocka_unit_test(create_with_null_config_takes_the_defaults),
        cmocka_unit_test(create_with_a_bad_config_is_einval_and_sets_out_null),
        cmocka_unit_test(create_reads_a_config_by_its_size),
        cmocka_unit_test(strerror_of_an_unknown_code_is_a_message),
        cmocka_unit_test(get_stats_with_null_or_short_size_is_einval),
        cmocka_unit_test(get_stats_fills_only_what_size_covers),
        cmocka_unit_test(ticks_to_ns_saturates),
        cmocka_unit_test_setup_teardown(stream_flush_without_a_stream_is_einval, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test(site_id_and_instances_of_null_are_zero),
        cmocka_unit_test(site_intern_with_null_name_is_null),
        cmocka_unit_test(site_named_with_null_gives_its_call_site_or_null),
        cmocka_unit_test(names_get_info_with_null_or_short_size_is_einval),
        cmocka_unit_test_setup_teardown(sites_of_levels_other_than_coarse_and_fine_never_record,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(thread_name_null_is_einval_and_keeps_the_name,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(thread_that_never_recorded_has_nothing_to_give,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(log_begin_and_end_with_null_site_are_reported_on_their_log,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(a_clock_that_goes_back_in_a_scope_is_reported_and_counted,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(adopt_with_null_or_wrong_token_is_einval, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(insert_with_bad_arguments_is_einval_and_records_nothing,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(totals_past_the_range_saturate, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(insert_of_extreme_times_saturates, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(frame_queue_of_an_unknown_thread_is_empty_and_left_alone,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(frame_reading_with_null_is_einval_or_null, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(dump_of_a_null_frame_is_einval_and_writes_nothing,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(dump_options_are_read_by_their_size, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(output_to_null_goes_to_stdout, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(merge_and_reduce_with_bad_arguments_are_einval,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(exports_refuse_a_null_frame_and_write_nothing,
                                        fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(summary_calls_with_null_or_out_of_range, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test(reader_open_with_null_is_einval_and_sets_out_null),
        cmocka_unit_test(reader_calls_with_null_or_past_the_end_leave_it_alone),
        cmocka_unit_test_setup_teardown(
            subscribe_with_bad_arguments_is_einval_and_registers_nothing, fixture_setup,
            fixture_teardown),
        cmocka_unit_test_setup_teardown(device_calls_with_null_device_or_info, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(device_begin_with_null_site_is_reported, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(sync_end_with_null_site_is_reported_and_closes_nothing,
                                        sim_setup, sim_teardown),
        cmocka_unit_test(device_reserve_of_zero_or_a_huge_count_stops_at_max_scopes),
        cmocka_unit_test_setup_teardown(sim_device_create_with_bad_arguments_is_einval,
                                        sim_setup, sim_teardown),
        cmocka_unit_test(sim_create_with_bad_arguments_is_einval),
        cmocka_unit_test(sim_calls_with_null_sim),
        cmocka_unit_test_setup_teardown(sim_gates_with_null_are_refused_or_ignored, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(sim_markers_with_null_are_refused_or_ignored, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(sim_get_stats_with_null_or_short_size_is_einval,
                                        sim_setup, sim_teardown),
        cmocka_unit_test_setup_teardown(sim_inject_of_an_unknown_fault_is_einval, sim_setup,
                                        sim_teardown),
        cmocka_unit_test_setup_teardown(sim_inject_counts_saturate, sim_setup, sim_teardown),
        cmocka_unit_test(sim_advance_saturates),
        cmocka_unit_test(sim_kernel_of_the_longest_duration_keeps_its_queue),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(in_dir("one.tlog"));
    rmdir(dir);
    return rc;
}
