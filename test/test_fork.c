/* fork() while other threads are inside the library (recording, resolving,
 * streaming, interning run-time names, converting ticks): the child finds
 * none of the process-wide locks held, records into a log of its own,
 * resolves, dumps and streams it, reads the stream back, and exits; no child
 * hangs. */
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

static void *busy(void *arg)
{
    (void)arg;
    char name[32];
    for (unsigned long k = 0; !atomic_load(&stop); k++) {
        TIMERLOG_SCOPE("Frame");
        {
            TIMERLOG_SCOPE("Work");
            snprintf(name, sizeof name, "Item %lu", k % 100);
            TIMERLOG_SCOPE_NAMED(name);
        }
        tlog_site_intern(name, __FILE__, __func__, __LINE__, TLOG_LEVEL_COARSE);
        tlog_frame_release(tlog_frame_latest(NULL));   /* resolves: sites, clock */
        tlog_ticks_to_ns(NULL, tlog_now(NULL));
    }
    return NULL;
}

static char parent_stream[256], child_stream[300];

/* The child's stream holds its one frame. */
static int child_stream_read_back(void)
{
    tlog_reader *r;
    tlog_frame *f = NULL;
    int rc = tlog_reader_open(child_stream, &r) == TLOG_OK &&
             tlog_reader_next(r, &f) == TLOG_OK ? 0 : 4;
    tlog_frame_release(f);
    tlog_reader_close(r);
    unlink(child_stream);
    return rc;
}

/* In the child: a log of its own that streams, a frame, its dump, the
 * stream read back. */
static int child_main(void)
{
    snprintf(child_stream, sizeof child_stream, "%s.%d", parent_stream, (int)getpid());
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .stream_path = child_stream};
    tlog_log *log;
    if (tlog_create(&c, &log) != TLOG_OK)
        return 2;
    const tlog_site *named = tlog_site_named(site_named("Child"), "Child work");
    tlog_log_begin(log, site_named("Child frame"));
    tlog_log_begin(log, named);
    tlog_log_end(log, named);
    tlog_log_end(log, site_named("Child frame"));
    tlog_frame *f = tlog_frame_latest(log);
    FILE *out = fopen("/dev/null", "w");
    int rc = f && out && tlog_dump_frame(f, out, NULL) == TLOG_OK ? 0 : 3;
    if (out)
        fclose(out);
    tlog_frame_release(f);
    if (rc == 0 && tlog_stream_flush(log) != TLOG_OK)
        rc = 5;
    tlog_destroy(log);
    return rc ? rc : child_stream_read_back();
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
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, busy, NULL), 0);
    int hung = 0, failed = 0;
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(child_main());
        int status = wait_for(pid);
        hung += status == -1;
        failed += status != 0 && status != -1;
    }
    atomic_store(&stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    unlink(parent_stream);
    print_message("%d children: %d hung, %d failed\n", FORKS, hung, failed);
    assert_int_equal(hung, 0);
    assert_int_equal(failed, 0);
}

int main(void)
{
#ifdef ALLOCATOR_FORK_UNSAFE
    puts("skipped: the sanitizer's allocator is not fork-safe with other threads "
         "allocating");
    return 77;
#endif
    /* The parent's default log streams too: its writer is busy at fork(). */
    snprintf(parent_stream, sizeof parent_stream, "%s/timerlog-fork-%d.tlog",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .stream_path = parent_stream};
    if (tlog_default_config(&c) != TLOG_OK)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(children_forked_mid_recording_finish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
