/* The lock rules check themselves in a debug build: a *_locked function
 * called without its lock, a lock taken against lock.h's order or two of
 * one row, and a lock given back that was not held each fail an assertion
 * (the process aborts). Built from the library's objects, to call its
 * internal functions; skipped in a release build, where the checks are
 * compiled out. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "log.h"
#include "record.h"

#ifdef NDEBUG
int main(void)
{
    puts("skip: a release build compiles the lock checks out");
    return 77;
}
#else

/* Runs fn in a child process; true if the child aborted. */
static bool aborts(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The assertion's message is expected: keep it off the test log. */
        if (!freopen("/dev/null", "w", stderr))
            _exit(2);
        fn();
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static tlog_log *log_for_child;

static void find_thread_without_the_log_lock(void)
{
    tlog_thread_find_locked_(log_for_child, 1);
}

static void find_thread_with_the_log_lock(void)
{
    tlog_lock_(&log_for_child->lock, TLOG_LOCK_LOG);
    tlog_thread_find_locked_(log_for_child, 1);
    tlog_unlock_(&log_for_child->lock);
}

static void a_locked_function_asserts_its_lock(void **state)
{
    (void)state;
    assert_int_equal(tlog_create(NULL, &log_for_child), TLOG_OK);
    assert_true(aborts(find_thread_without_the_log_lock));
    assert_false(aborts(find_thread_with_the_log_lock));
    tlog_destroy(log_for_child);
}

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER;

static void take_in_order(void)
{
    tlog_lock_(&outer, TLOG_LOCK_DEFAULT_LOG);
    tlog_lock_(&inner, TLOG_LOCK_LOG);
    tlog_unlock_(&inner);
    tlog_unlock_(&outer);
}

static void take_against_the_order(void)
{
    tlog_lock_(&inner, TLOG_LOCK_LOG);
    tlog_lock_(&outer, TLOG_LOCK_DEFAULT_LOG);
}

static void take_two_of_one_row(void)
{
    tlog_lock_(&outer, TLOG_LOCK_FRAME);
    tlog_lock_(&inner, TLOG_LOCK_FRAME);
}

static void locks_follow_the_table(void **state)
{
    (void)state;
    assert_false(aborts(take_in_order));
    assert_true(aborts(take_against_the_order));
    assert_true(aborts(take_two_of_one_row));
}

static void give_back_unheld(void)
{
    tlog_unlock_(&outer);
}

static void only_a_held_lock_is_given_back(void **state)
{
    (void)state;
    assert_true(aborts(give_back_unheld));
}

static void held_means_held_by_this_thread(void **state)
{
    (void)state;
    assert_false(tlog_lock_held_(&outer));
    tlog_lock_(&outer, TLOG_LOCK_LOG);
    assert_true(tlog_lock_held_(&outer));
    assert_false(tlog_lock_held_(&inner));
    tlog_unlock_(&outer);
    assert_false(tlog_lock_held_(&outer));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_locked_function_asserts_its_lock),
        cmocka_unit_test(locks_follow_the_table),
        cmocka_unit_test(only_a_held_lock_is_given_back),
        cmocka_unit_test(held_means_held_by_this_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
