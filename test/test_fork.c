/* fork() while other threads are inside the library (recording into the
 * default log and into a log of their own, resolving, streaming, telling a
 * subscriber, interning run-time names, converting ticks): the child finds
 * none of the library's locks held. Its default log starts afresh: it
 * records, resolves, dumps and streams there, to a file of its own; the
 * parent's log is refused, said once; a log it makes itself works as any
 * other. No child hangs. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define FORKS 200

/* The sanitizers' allocator (AddressSanitizer's in GCC 12 and LLVM before
 * 17, ThreadSanitizer's) is not locked around fork(): a child can find it
 * held by a thread that allocated at that moment, and hang in malloc
 * whatever the library does. ThreadSanitizer also refuses to start a thread
 * (the child's stream writer) after such a fork. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOCATOR_FORK_UNSAFE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ALLOCATOR_FORK_UNSAFE 1
#endif
#endif

static atomic_bool stop;
static tlog_log *parent_log;          /* made by the parent (keeping statistics), busy at fork() */
static collected_errors errors;       /* the default log's reports */
static char stream_pattern[256];      /* the default log's, with a % */

static void on_scope(void *user, const tlog_scope_event *e)
{
    (void)e;
    atomic_fetch_add((atomic_ulong *)user, 1);
}

static void *busy(void *arg)
{
    (void)arg;
    char name[32];
    const tlog_site *own = site_named("Own log frame");
    for (unsigned long k = 0; !atomic_load(&stop); k++) {
        {
            TIMERLOG_SCOPE("Frame");
            TIMERLOG_SCOPE("Work");
            snprintf(name, sizeof name, "Item %lu", k % 100);
            TIMERLOG_SCOPE_NAMED(name);
        }
        tlog_log_begin(parent_log, own);
        tlog_log_end(parent_log, own);
        tlog_site_intern(name, __FILE__, __func__, __LINE__, TLOG_LEVEL_COARSE);
        tlog_frame_release(tlog_frame_latest(NULL));   /* resolves: sites, clock */
        tlog_frame_release(tlog_frame_pop(parent_log));
        tlog_ticks_to_ns(NULL, tlog_now(NULL));
    }
    return NULL;
}

/* The file the default log of process `pid` streams to. */
static void stream_of(pid_t pid, char *out, size_t size)
{
    const char *cut = strchr(stream_pattern, '%');
    snprintf(out, size, "%.*s%d%s", (int)(cut - stream_pattern), stream_pattern, (int)pid,
             cut + 1);
}

/* `path` holds one frame, whose root is `title`. */
static int holds_one_frame(const char *path, const char *title)
{
    tlog_reader *r;
    tlog_frame *f = NULL, *more = NULL;
    int rc = 4;
    if (tlog_reader_open(path, &r) != TLOG_OK)
        return rc;
    if (tlog_reader_next(r, &f) == TLOG_OK && tlog_reader_next(r, &more) == TLOG_ENOFRAME) {
        tlog_node_info info = {.size = sizeof info};
        if (tlog_node_get_info(tlog_frame_root(f), &info) == TLOG_OK &&
            strcmp(info.name, title) == 0)
            rc = 0;
    }
    tlog_frame_release(f);
    tlog_frame_release(more);
    tlog_reader_close(r);
    unlink(path);
    return rc;
}

/* The child's default log: a frame, its dump, its stream read back. */
static int child_default_log(void)
{
    {
        TIMERLOG_SCOPE("Child frame");
        TIMERLOG_SCOPE("Child work");
    }
    FILE *out = fopen("/dev/null", "w");
    int rc = out && tlog_dump(NULL, out) == TLOG_OK ? 0 : 3;
    if (out)
        fclose(out);
    if (rc == 0 && tlog_stream_flush(NULL) != TLOG_OK)
        rc = 5;
    char path[300];
    stream_of(getpid(), path, sizeof path);
    return rc ? rc : holds_one_frame(path, "Child frame");
}

/* A log the child makes: a frame and its dump. */
static int child_own_log(void)
{
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log;
    if (tlog_create(&c, &log) != TLOG_OK)
        return 6;
    tlog_log_begin(log, site_named("Made here"));
    tlog_log_end(log, site_named("Made here"));
    tlog_frame *f = tlog_frame_latest(log);
    FILE *out = fopen("/dev/null", "w");
    int rc = f && out && tlog_dump_frame(f, out, NULL) == TLOG_OK ? 0 : 7;
    if (out)
        fclose(out);
    tlog_frame_release(f);
    tlog_destroy(log);
    return rc;
}

/* The parent's log: refused at once, without touching its locks, and said
 * once. */
static int child_parent_log(void)
{
    tlog_stats st = {.size = sizeof st};
    tlog_log_begin(parent_log, site_named("Not here"));
    tlog_log_end(parent_log, site_named("Not here"));
    tlog_summary *kept = (tlog_summary *)&st;
    bool refused = tlog_get_stats(parent_log, &st) == TLOG_EINVAL &&
                   tlog_frame_latest(parent_log) == NULL &&
                   tlog_frame_count(parent_log) == 0 && tlog_stream_flush(parent_log) ==
                                                            TLOG_EINVAL &&
                   tlog_log_summary(parent_log, &kept) == TLOG_EINVAL && kept == NULL &&
                   tlog_log_summary_reset(parent_log) == TLOG_EINVAL;
    tlog_destroy(parent_log);
    if (!refused)
        return 8;
    return count_code(&errors, TLOG_EINVAL) == 1 && strstr(errors.last, "before fork()")
               ? 0
               : 9;
}

static int child_main(void)
{
    memset(&errors, 0, sizeof errors);   /* the parent's, copied */
    int rc = child_default_log();
    if (rc == 0)
        rc = child_own_log();
    if (rc == 0)
        rc = child_parent_log();
    return rc;
}

/* The child's status, or -1 if it did not end within 10 s (then killed). */
static int wait_for(pid_t pid)
{
    for (int tries = 0; tries < 10000; tries++) {
        int status;
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static void children_forked_mid_recording_finish(void **state)
{
    (void)state;
    atomic_ulong events = 0;
    tlog_subscriber sub = {.size = sizeof sub, .user = &events, .scope_end = on_scope};
    tlog_subscription *subscription;
    assert_int_equal(tlog_subscribe(NULL, &sub, &subscription), TLOG_OK);
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV | TLOG_CONFIG_STATS};
    assert_int_equal(tlog_create(&c, &parent_log), TLOG_OK);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, busy, NULL), 0);
    int hung = 0, failed = 0, first_failure = 0;
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(child_main());
        int status = wait_for(pid);
        hung += status == -1;
        failed += status != 0 && status != -1;
        if (status != 0 && !first_failure)
            first_failure = status;
    }
    atomic_store(&stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    tlog_unsubscribe(subscription);
    tlog_destroy(parent_log);
    print_message("%d children: %d hung, %d failed (first status %d)\n", FORKS, hung,
                  failed, first_failure);
    assert_int_equal(hung, 0);
    assert_int_equal(failed, 0);
    assert_true(atomic_load(&events) > 0);
}

/* A child forked inside a scope ends it there without a report: the
 * beginning is in the parent's log. Its next frame is whole. */
static void scope_open_across_fork_ends_quietly_in_the_child(void **state)
{
    (void)state;
    pid_t pid;
    {
        TIMERLOG_SCOPE("Open at fork");
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            memset(&errors, 0, sizeof errors);
    }
    if (pid == 0) {
        { TIMERLOG_SCOPE("After"); }
        tlog_stats st = {.size = sizeof st};
        tlog_frame *f = tlog_frame_latest(NULL);
        tlog_node_info info = {.size = sizeof info};
        bool whole = f && tlog_node_get_info(tlog_frame_root(f), &info) == TLOG_OK &&
                     strcmp(info.name, "After") == 0;
        tlog_frame_release(f);
        _exit(!whole ? 2 : tlog_get_stats(NULL, &st) != TLOG_OK ? 3
                       : st.unmatched_ends != 0 || errors.count != 0 ? 4 : 0);
    }
    assert_int_equal(wait_for(pid), 0);
}

bool tlog_test_any_subscriber(void) __attribute__((weak));   /* -Dtest_hooks=true */

static void on_nothing(void *user, const tlog_scope_event *e)
{
    (void)user;
    (void)e;
}

/* The parent's subscribers stay the parent's: the child's scopes go the way
 * of a process without any, until a log of the child's has one. */
static void a_child_does_not_take_its_parent_s_subscribers(void **state)
{
    (void)state;
    if (!tlog_test_any_subscriber)
        skip();
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log = NULL;
    assert_int_equal(tlog_create(&c, &log), TLOG_OK);
    tlog_subscriber sub = {.size = sizeof sub, .scope_begin = on_nothing};
    tlog_subscription *subscription;
    assert_int_equal(tlog_subscribe(log, &sub, &subscription), TLOG_OK);
    assert_true(tlog_test_any_subscriber());
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        bool none = !tlog_test_any_subscriber();
        tlog_log *own = NULL;
        tlog_subscription *mine = NULL;
        bool own_told = tlog_create(&c, &own) == TLOG_OK &&
                        tlog_subscribe(own, &sub, &mine) == TLOG_OK &&
                        tlog_test_any_subscriber();
        tlog_unsubscribe(mine);
        bool none_again = !tlog_test_any_subscriber();
        tlog_unsubscribe(subscription);   /* the parent's: refused */
        _exit(!none ? 2 : !own_told ? 3 : !none_again ? 4 : 0);
    }
    assert_int_equal(wait_for(pid), 0);
    assert_true(tlog_test_any_subscriber());
    tlog_unsubscribe(subscription);
    tlog_destroy(log);
}

/* Forked twice inside a scope: the grandchild ends it quietly too, and a
 * stray end after it is still reported, once. */
static void scope_open_across_two_forks_ends_quietly_in_the_grandchild(void **state)
{
    (void)state;
    const tlog_site *open = tlog_site_intern("Open across forks", __FILE__, __func__, __LINE__,
                                             TLOG_LEVEL_COARSE);
    const tlog_site *stray = tlog_site_intern("Stray", __FILE__, __func__, __LINE__,
                                              TLOG_LEVEL_COARSE);
    tlog_log_begin(NULL, open);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pid_t grandchild = fork();
        if (grandchild == 0) {
            tlog_log_end(NULL, open);    /* begun two processes up: quiet */
            tlog_log_end(NULL, stray);   /* nothing open: reported */
            tlog_stats st = {.size = sizeof st};
            _exit(tlog_get_stats(NULL, &st) != TLOG_OK ? 3 : st.unmatched_ends != 1 ? 4 : 0);
        }
        int status = grandchild < 0 ? 5 : wait_for(grandchild);
        tlog_log_end(NULL, open);
        _exit(status);
    }
    tlog_log_end(NULL, open);
    assert_int_equal(wait_for(pid), 0);
}

/* Threads that meet the default log as it is being made: every one's
 * report reaches the callback (one a site), none held back for the thread
 * that made the log. In children, whose default logs are made afresh. */
enum { MEETING = 8 };

static pthread_barrier_t meeting;

static void *end_nothing(void *arg)
{
    char title[32];
    snprintf(title, sizeof title, "Stray %d", (int)(intptr_t)arg);
    const tlog_site *site = tlog_site_intern(title, __FILE__, __func__, __LINE__,
                                             TLOG_LEVEL_COARSE);
    pthread_barrier_wait(&meeting);
    tlog_log_end(NULL, site);
    return NULL;
}

static void reports_as_the_default_log_is_made_all_arrive(void **state)
{
    (void)state;
    for (int trial = 0; trial < 30; trial++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            memset(&errors, 0, sizeof errors);
            pthread_barrier_init(&meeting, NULL, MEETING);
            pthread_t th[MEETING];
            for (intptr_t k = 0; k < MEETING; k++)
                pthread_create(&th[k], NULL, end_nothing, (void *)k);
            for (int k = 0; k < MEETING; k++)
                pthread_join(th[k], NULL);
            tlog_stats st = {.size = sizeof st};
            _exit(tlog_get_stats(NULL, &st) != TLOG_OK           ? 3
                  : st.unmatched_ends != MEETING                 ? 4
                  : count_code(&errors, TLOG_ENOTOPEN) != MEETING ? 5
                                                                   : 0);
        }
        assert_int_equal(wait_for(pid), 0);
    }
}

/* The forking thread's last scopes were in a log of its own: in the child,
 * that log is refused like any inherited one (said once), although the
 * thread found its state there last. */
static void a_log_the_forking_thread_used_last_is_refused_in_the_child(void **state)
{
    (void)state;
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV};
    tlog_log *log;
    assert_int_equal(tlog_create(&c, &log), TLOG_OK);
    const tlog_site *site = site_named("Parent's");
    tlog_log_begin(log, site);
    tlog_log_end(log, site);
    tlog_log_begin(log, site);   /* found as the state used last */
    tlog_log_end(log, site);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        memset(&errors, 0, sizeof errors);
        tlog_log_begin(log, site);
        tlog_log_end(log, site);
        bool said = count_code(&errors, TLOG_EINVAL) == 1 && strstr(errors.last, "before fork()");
        tlog_stats st = {.size = sizeof st};
        _exit(!said ? 2 : tlog_get_stats(log, &st) != TLOG_EINVAL ? 3 : 0);
    }
    assert_int_equal(wait_for(pid), 0);
    assert_int_equal(tlog_frame_count(log), 2);
    tlog_destroy(log);
}

int main(void)
{
#ifdef ALLOCATOR_FORK_UNSAFE
    puts("skipped: the sanitizer's allocator is not fork-safe with other threads "
         "allocating");
    return 77;
#endif
    /* The default log streams, one file per process: the parent's writer
     * is busy at fork(). */
    snprintf(stream_pattern, sizeof stream_pattern, "%s/timerlog-fork-%%.tlog",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .stream_path = stream_pattern, .on_error = collect_error,
                     .error_user = &errors};
    if (tlog_default_config(&c) != TLOG_OK)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(children_forked_mid_recording_finish),
        cmocka_unit_test(scope_open_across_fork_ends_quietly_in_the_child),
        cmocka_unit_test(scope_open_across_two_forks_ends_quietly_in_the_grandchild),
        cmocka_unit_test(a_child_does_not_take_its_parent_s_subscribers),
        cmocka_unit_test(reports_as_the_default_log_is_made_all_arrive),
        cmocka_unit_test(a_log_the_forking_thread_used_last_is_refused_in_the_child),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char path[300];
    tlog_stream_flush(NULL);
    stream_of(getpid(), path, sizeof path);
    unlink(path);
    return rc;
}
