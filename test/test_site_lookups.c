/* A thread that tells subscribers of scopes looks each site's entry up
 * (under the site table's lock) once, however many sites take turns, up to
 * the 2,048 its table of sites holds. Counts the lookups through the hook
 * of a -Dtest_hooks=true build. */
#include "common.h"

uint64_t tlog_test_site_lookups(void);

enum { SITES = 1000, ROUNDS = 3 };

static void empty_callback(void *user, const tlog_scope_event *e)
{
    (void)user;
    (void)e;
}

static const tlog_site *sites[SITES];

/* Lookups of a frame of ROUNDS turns of the first n sites, told to one
 * subscriber. */
static uint64_t lookups_of_turns(tlog_log *log, int n)
{
    tlog_subscriber sub = {.size = sizeof sub, .scope_begin = empty_callback,
                           .scope_end = empty_callback};
    tlog_subscription *s = NULL;
    assert_int_equal(tlog_subscribe(log, &sub, &s), TLOG_OK);
    static const tlog_site frame = {"Frame", "turns.c", "turns", 0, TLOG_LEVEL_COARSE};
    uint64_t before = tlog_test_site_lookups();
    tlog_log_begin(log, &frame);
    for (int round = 0; round < ROUNDS; round++)
        for (int i = 0; i < n; i++) {
            tlog_log_begin(log, sites[i]);
            tlog_log_end(log, sites[i]);
        }
    tlog_log_end(log, &frame);
    uint64_t lookups = tlog_test_site_lookups() - before;
    tlog_unsubscribe(s);
    return lookups;
}

static void each_site_is_looked_up_once_however_many_take_turns(void **state)
{
    (void)state;
    for (int i = 0; i < SITES; i++) {
        char name[32];
        snprintf(name, sizeof name, "Turn %d", i);
        sites[i] = tlog_site_intern(name, "turns.c", "turns", i + 1, TLOG_LEVEL_COARSE);
    }
    tlog_config c = test_config(NULL);
    tlog_log *log = make_log(&c);
    /* The frame's site and the first ten; then the rest, new to the thread. */
    assert_int_equal(lookups_of_turns(log, 10), 11);
    assert_int_equal(lookups_of_turns(log, SITES), SITES - 10);
    assert_int_equal(lookups_of_turns(log, SITES), 0);
    tlog_destroy(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_site_is_looked_up_once_however_many_take_turns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
