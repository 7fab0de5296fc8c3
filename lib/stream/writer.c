/*
 * The binary stream: every completed frame of a log, written to a file by a
 * writer thread of its own (doc/stream.md).
 *
 * The recording path does not change: a frame's end hands the frame (one
 * more reference) to the writer, which waits for its device work without
 * blocking anyone (readiness polls until the log's sync timeout past the
 * hand-over, then a forced sync that waits no longer), resolves it, encodes
 * it into a bounded buffer and writes the buffer out when full or idle.
 * Frames waiting for the writer are bounded by the same size: beyond it, a
 * frame's end waits for the writer, so nothing is ever dropped; the writer
 * then waits for no device, so that frame ends never wait for one (work
 * not done yet is written unresolved, or left out while another thread's
 * forced sync holds the devices). A file that cannot be opened or written
 * is reported once; recording goes on, and what was written stays
 * readable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "encode.h"
#include "fork.h"
#include "frame.h"
#include "held.h"
#include "log.h"
#include "upcalls.h"

#define DEFAULT_BUFFER ((size_t)4 << 20)
#define MIN_BUFFER ((size_t)4096)
#define MAX_BUFFER ((size_t)1 << 30)
#define READY_POLL_NS 1000000L
#define WRITER_NAP_NS 1000000L

struct tlog_stream {
    tlog_log *log;
    char path[4096];
    char wanted[4096];        /* the path asked for, when another's took it */
    int fd;
    uint8_t *buf;
    size_t cap, used;
    tlog_bytes scratch;
    tlog_seen seen;

    pthread_mutex_t lock;
    pthread_cond_t work;        /* a frame arrived, or stop */
    pthread_cond_t room;        /* waiting frames fell to half the bound */
    pthread_cond_t idle;        /* everything handed over is on disk */
    pthread_t writer;
    atomic_bool stopping;       /* set under the lock; the writer also peeks */
    tlog_frame **pending;       /* FIFO ring */
    size_t head, count, ring;
    size_t pending_bytes;       /* raw records the waiting frames hold */
    size_t blocked;             /* frame ends waiting for room */
    bool busy;                  /* the writer holds a frame */

    atomic_bool failed;         /* the file cannot be written: stop */
    bool has_writer;
    bool opening;               /* open_file writes the header */
    int write_errno;            /* why the last write failed */
    bool said_cut;              /* a string cut to fit was reported */
    bool said_crowded;          /* device work given up for room: reported */
    size_t room_for;            /* the largest frame a waiting frame end holds */
    uint64_t taken, done;       /* frames handed over / processed */
    uint64_t flushed;           /* `done` when the file last caught up */
    uint64_t flush_wanted;      /* a flush waits for `done` to reach this */
    size_t in_buffer;           /* frames whose blocks sit in the buffer */
    _Atomic uint64_t frames_written, frames_lost;
    _Atomic uint64_t waits;     /* frame ends that waited for room */
};

/* ------------------------------------------------------------------------ */
/* Path and settings                                                        */
/* ------------------------------------------------------------------------ */

bool tlog_expand_path_(const char *pattern, char *out, size_t size)
{
    long rank = tlog_fork_generation_() ? -1 : tlog_env_rank_();
    long id = rank >= 0 ? rank : (long)getpid();
    size_t n = 0;
    for (const char *p = pattern; *p; p++) {
        int w = *p == '%' ? snprintf(out + n, size - n, "%ld", id)
                          : snprintf(out + n, size - n, "%c", *p);
        if (w < 0 || (size_t)w >= size - n)
            return false;
        n += (size_t)w;
    }
    return n > 0;
}

/* TIMERLOG_BUFSIZE: bytes, with an optional K, M or G suffix, at most
 * MAX_BUFFER; 0 for anything else (a sign, overflow, trailing text). */
static size_t parse_size(const char *s)
{
    if (*s < '0' || *s > '9')
        return 0;   /* strtoull would take "-1" as its largest value */
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return 0;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (end == s || (shift && end[1]) || (!shift && *end) || v > (MAX_BUFFER >> shift))
        return 0;
    return (size_t)v << shift;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

static void fail(tlog_stream *s, int err)
{
    s->failed = true;
    s->write_errno = err;
    if (s->opening)
        return;   /* open_file says it, once */
    tlog_report_(s->log, NULL, TLOG_EIO, NULL,
                 "cannot write the stream %s: %s; streaming stops here, what was "
                 "written before stays readable",
                 s->path, strerror(err));
}

static void write_all(tlog_stream *s, const uint8_t *p, size_t n)
{
    while (n && !s->failed) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fail(s, w < 0 ? errno : ENOSPC);
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Writes the buffer out; the frames in it count as written only then. */
static void flush(tlog_stream *s)
{
    write_all(s, s->buf, s->used);
    s->used = 0;
    atomic_fetch_add(s->failed ? &s->frames_lost : &s->frames_written, s->in_buffer);
    s->in_buffer = 0;
}

/* Adds one frame's blocks (or the header, or the end block) to the buffer,
 * writing the buffer out first when they do not fit: the buffer only ever
 * holds whole frames. */
static void put(tlog_stream *s, const uint8_t *p, size_t n, bool frame)
{
    if (s->used + n > s->cap)
        flush(s);
    if (n > s->cap) {
        write_all(s, p, n);
        if (frame)
            atomic_fetch_add(s->failed ? &s->frames_lost : &s->frames_written, 1);
        return;
    }
    memcpy(s->buf + s->used, p, n);
    s->used += n;
    s->in_buffer += frame;
}

/* Why the writer gave up device work of frame f: frame ends waited for
 * room (said once: rather than they wait for a device), or the log's sync
 * timeout passed since the frame's end. What was pending is written
 * unresolved, or left out (counted late) when another thread's forced sync
 * held the devices. */
static void say_given_up(tlog_stream *s, const tlog_frame *f, bool crowded)
{
    if (crowded && !s->said_crowded) {
        s->said_crowded = true;
        tlog_report_(s->log, NULL, TLOG_ETIMEDOUT, NULL,
                     "stream %s: frame %llu still had device work pending when the frames "
                     "waiting to be written filled the stream's buffer; what was not done "
                     "is not waited for, rather than frame ends wait for the device (a "
                     "larger stream buffer, TIMERLOG_BUFSIZE, lets frames wait longer; said "
                     "once)",
                     s->path, (unsigned long long)f->serial);
    } else if (!crowded) {
        tlog_report_(s->log, NULL, TLOG_ETIMEDOUT, NULL,
                     "stream %s: frame %llu: device work not done %.3f s after the frame "
                     "ended (the log's sync timeout) is not waited for",
                     s->path, (unsigned long long)f->serial,
                     (double)s->log->cfg.sync_timeout_ns / 1e9);
    }
}

/* Whether a frame end waits for room that writing this frame would help
 * make: not once the waiting frames fit in half the buffer (its waiters are
 * about to go), and not while stopping (they go anyway). Caller holds the
 * lock. */
static bool crowded_locked(const tlog_stream *s)
{
    return s->blocked > 0 && !s->stopping && s->pending_bytes + s->room_for > s->cap / 2;
}

/* Waits on s->work (whose clock is CLOCK_MONOTONIC) until `until`
 * (tlog_mono_ns_) at most. Caller holds the lock. */
static void wait_work_until(tlog_stream *s, int64_t until)
{
    struct timespec ts = {(time_t)(until / 1000000000), (long)(until % 1000000000)};
    pthread_cond_timedwait(&s->work, &s->lock, &ts);
}

/* Until its deadline is past, sleeps a poll's time, or less when a frame's
 * end waiting for room or the stream stopping wakes it; whether the wait
 * for the frame's device work is over, and why. */
static bool ready_wait_over(tlog_stream *s, const tlog_frame *f, bool *crowded)
{
    int64_t now = tlog_mono_ns_();
    tlog_lock_(&s->lock, TLOG_LOCK_STREAM);
    *crowded = crowded_locked(s);
    bool over = *crowded || s->stopping || now >= f->stream_due_ns;
    if (!over) {
        int64_t until = now + READY_POLL_NS < f->stream_due_ns ? now + READY_POLL_NS
                                                                : f->stream_due_ns;
        wait_work_until(s, until);
    }
    tlog_unlock_(&s->lock);
    return over;
}

/* Waits, without blocking anything else, for the frame's device work until
 * the log's sync timeout past its hand-over: a backlog of frames on a
 * device that hangs costs one timeout, not one each. When frame ends wait
 * for room, what is not done is given up at once; when the stream stops,
 * it is waited for until then. */
static void wait_ready(tlog_stream *s, tlog_frame *f)
{
    if (tlog_frame_ready_(f))   /* most frames: host work only, or done */
        return;
    for (;;) {
        tlog_devices_poll_(s->log);
        if (tlog_frame_ready_(f))
            return;
        bool crowded;
        if (!ready_wait_over(s, f, &crowded))
            continue;
        int64_t now = tlog_mono_ns_();
        if (crowded || now >= f->stream_due_ns) {
            if (tlog_device_settle_(f, now, false) != TLOG_OK)   /* no wait: said here */
                say_given_up(s, f, crowded);
        } else {
            tlog_device_settle_(f, f->stream_due_ns, true);   /* stopping */
        }
        return;
    }
}

static void write_frame(tlog_stream *s, tlog_frame *f)
{
    if (s->failed) {
        s->frames_lost++;
        return;
    }
    wait_ready(s, f);
    int rc = tlog_frame_resolve_once_(f, TLOG_NO_WAIT);   /* waited for: not twice */
    s->scratch.len = 0;
    s->scratch.failed = false;
    s->scratch.cut = 0;
    if (rc == TLOG_OK)
        rc = tlog_encode_frame_(&s->seen, f, &s->scratch);
    if (s->scratch.cut && !s->said_cut) {
        s->said_cut = true;
        tlog_report_(s->log, NULL, TLOG_EINVAL, NULL, "frame %llu: a title or name longer than "
                     "%u bytes is cut to that length in the stream %s (said once)",
                     (unsigned long long)f->serial, TLOG_STREAM_STRING_MAX, s->path);
    }
    if (rc == TLOG_OK) {
        put(s, s->scratch.data, s->scratch.len, true);
        return;
    }
    /* A frame that found no memory, or too large for a reader to take, is
     * lost, counted and said; the stream goes on with the next, and the
     * descriptions that were whole are written, as the encoder now counts
     * them described. */
    s->frames_lost++;
    if (s->scratch.len)
        put(s, s->scratch.data, s->scratch.len, false);
    tlog_report_(s->log, NULL, rc, NULL, "frame %llu not streamed to %s: %s (the stream "
                 "goes on; the count of frames not streamed ends the file)",
                 (unsigned long long)f->serial, s->path,
                 rc == TLOG_EIO ? "its block would be larger than a reader takes"
                                : tlog_strerror(rc));
}

static void finish_file(tlog_stream *s)
{
    if (s->failed)
        return;
    flush(s);
    s->scratch.len = 0;
    tlog_encode_end_(&s->scratch, s->frames_written, s->frames_lost);
    put(s, s->scratch.data, s->scratch.len, false);
    flush(s);
}

/* The writer looks for frames every millisecond rather than being woken by
 * each frame's end: a wake-up there tends to run the writer on the
 * recording thread's own core, which then pays for the writer's work.
 * Frame ends only wake it when the waiting frames fill half the bound, and
 * flushes and stopping always do. */
static void nap(tlog_stream *s)
{
    wait_work_until(s, tlog_mono_ns_() + WRITER_NAP_NS);
}

static void *writer_main(void *arg)
{
    tlog_stream *s = arg;
    tlog_lock_(&s->lock, TLOG_LOCK_STREAM);
    for (;;) {
        while (!s->count && !s->stopping)
            nap(s);
        if (!s->count)
            break;
        tlog_frame *f = s->pending[s->head];
        s->busy = true;
        tlog_unlock_(&s->lock);
        write_frame(s, f);
        tlog_lock_(&s->lock, TLOG_LOCK_STREAM);
        s->head = (s->head + 1) % s->ring;
        s->count--;
        s->done++;
        s->pending_bytes -= f->stream_bytes;
        if (s->blocked && s->pending_bytes <= s->cap / 2)
            pthread_cond_broadcast(&s->room);
        if (!s->count || (s->flush_wanted > s->flushed && s->done >= s->flush_wanted)) {
            /* Idle, or someone waits: put what there is on disk. */
            uint64_t done = s->done;
            tlog_unlock_(&s->lock);
            flush(s);
            tlog_lock_(&s->lock, TLOG_LOCK_STREAM);
            s->flushed = done;
            pthread_cond_broadcast(&s->idle);
        }
        s->busy = false;
        tlog_unlock_(&s->lock);
        tlog_frame_release(f);
        tlog_lock_(&s->lock, TLOG_LOCK_STREAM);
    }
    tlog_unlock_(&s->lock);
    finish_file(s);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Life                                                                     */
/* ------------------------------------------------------------------------ */

static void stream_free(tlog_stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s->pending);
    free(s->scratch.data);
    tlog_seen_free_(&s->seen);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->room);
    pthread_cond_destroy(&s->idle);
    free(s);
}

static int open_file(tlog_stream *s)
{
    memcpy(s->wanted, s->path, sizeof s->wanted);
    s->fd = tlog_open_held_(s->wanted, s->path, sizeof s->path);
    if (s->fd >= 0 && !tlog_held_empty_(s->fd)) {
        int err = errno;
        close(s->fd);
        s->fd = -1;
        errno = err;
    }
    if (s->fd < 0) {
        tlog_report_(s->log, NULL, TLOG_EIO, NULL,
                     "cannot open the stream %.200s: %s; streaming is off", s->path,
                     errno == ENXIO   ? "a FIFO with no reader"
                     : errno == EBUSY ? "it and the paths numbered after it are other streams'"
                                      : strerror(errno));
        return TLOG_EIO;
    }
    if (strcmp(s->path, s->wanted) != 0)
        tlog_report_(s->log, NULL, TLOG_EBUSY, NULL,
                     "the stream %.200s is another log's or process's; this log streams to "
                     "%.200s", s->wanted, s->path);
    s->opening = true;
    uint8_t header[TLOG_STREAM_HEADER_BYTES];
    long rank = tlog_env_rank_();
    tlog_encode_header_(header, rank >= 0 ? (uint32_t)rank : TLOG_STREAM_NONE,
                        (uint32_t)getpid(), s->log->wall0_ns);
    put(s, header, sizeof header, false);
    write_all(s, s->buf, s->used);
    s->used = 0;
    s->opening = false;
    if (s->failed)
        tlog_report_(s->log, NULL, TLOG_EIO, NULL,
                     "cannot write the stream %.200s: %s; streaming is off", s->path,
                     strerror(s->write_errno));
    return s->failed ? TLOG_EIO : TLOG_OK;
}

/* The path and buffer size the log streams to: the environment overrides
 * the config unless told not to. */
static const char *stream_settings(const tlog_log *log, size_t *bytes)
{
    const char *path = log->cfg.stream_path;
    *bytes = log->cfg.stream_buffer;
    if (!(log->cfg.flags & TLOG_CONFIG_IGNORE_ENV)) {
        const char *env = getenv("TIMERLOG_OUTPUT");
        const char *size = getenv("TIMERLOG_BUFSIZE");
        if (env && *env)
            path = env;
        if (size && *size && parse_size(size))
            *bytes = parse_size(size);
        else if (size && *size)
            tlog_report_((tlog_log *)log, NULL, TLOG_EINVAL, NULL,
                         "TIMERLOG_BUFSIZE=%.40s is not a size (bytes, or a number with K, "
                         "M or G, at most 1G); the default is used", size);
    }
    if (!*bytes)
        *bytes = DEFAULT_BUFFER;
    if (*bytes < MIN_BUFFER)
        *bytes = MIN_BUFFER;
    return path && *path ? path : NULL;
}

/* Opens the log's stream. A stream that cannot write stays, failed, so that
 * its frames are counted and tlog_stream_flush says so. The reason is
 * reported as the log is made: tlog_report_ tells it once no lock is held. */
int tlog_stream_open_(tlog_log *log)
{
    size_t bytes;
    const char *pattern = stream_settings(log, &bytes);
    if (!pattern)
        return TLOG_OK;
    if (log->is_default && tlog_fork_generation_() && !strchr(pattern, '%')) {
        /* The parent's default log writes that file. */
        tlog_report_(log, NULL, TLOG_EINVAL, NULL,
                     "the stream %.200s is the parent process's; this forked process's "
                     "frames are not streamed (a %% in the path makes one file per "
                     "process)", pattern);
        return TLOG_EINVAL;
    }
    tlog_stream *s = tlog_calloc_(1, sizeof *s);
    if (!s) {
        tlog_report_(log, NULL, TLOG_ENOMEM, NULL,
                     "no memory for the stream %.200s; streaming is off", pattern);
        return TLOG_ENOMEM;
    }
    s->log = log;
    s->fd = -1;
    s->cap = bytes;
    s->ring = 64;
    s->buf = tlog_malloc_(bytes);
    s->pending = tlog_malloc_(s->ring * sizeof *s->pending);
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->work, &attr);
    pthread_condattr_destroy(&attr);
    pthread_cond_init(&s->room, NULL);
    pthread_cond_init(&s->idle, NULL);
    int rc = TLOG_OK;
    if (!s->buf || !s->pending) {
        /* Kept, failed: its frames are counted as not streamed, and
         * tlog_stream_flush answers TLOG_EIO. */
        tlog_report_(log, NULL, TLOG_ENOMEM, NULL,
                     "no memory for the stream's buffer (%zu bytes); streaming is off", bytes);
        rc = TLOG_ENOMEM;
    } else if (!tlog_expand_path_(pattern, s->path, sizeof s->path)) {
        tlog_report_(log, NULL, TLOG_EINVAL, NULL,
                     "stream path \"%.200s\" is too long; streaming is off", pattern);
        rc = TLOG_EINVAL;
    }
    if (rc == TLOG_OK)
        rc = open_file(s);
    if (rc == TLOG_OK) {
        s->has_writer = pthread_create(&s->writer, NULL, writer_main, s) == 0;
        if (!s->has_writer) {
            tlog_report_(log, NULL, TLOG_ENOMEM, NULL,
                         "cannot start the stream's writer thread; streaming is off");
            rc = TLOG_ENOMEM;
        }
    }
    if (rc != TLOG_OK)
        atomic_store(&s->failed, true);
    atomic_store_explicit(&log->stream, s, memory_order_release);
    return rc;
}

/* Caller holds s->lock. */
static bool grow_ring_locked(tlog_stream *s)
{
    tlog_assert_held_(&s->lock);
    size_t ring = s->ring * 2;
    tlog_frame **p = tlog_malloc_(ring * sizeof *p);
    if (!p)
        return false;
    for (size_t i = 0; i < s->count; i++)
        p[i] = s->pending[(s->head + i) % s->ring];
    free(s->pending);
    s->pending = p;
    s->head = 0;
    s->ring = ring;
    return true;
}

bool tlog_stream_take_(tlog_log *log, tlog_frame *f)
{
    tlog_stream *s = atomic_load_explicit(&log->stream, memory_order_acquire);
    if (!s)
        return false;
    if (atomic_load_explicit(&s->failed, memory_order_relaxed)) {
        atomic_fetch_add(&s->frames_lost, 1);   /* nothing can be written */
        return false;
    }
    f->stream_due_ns = tlog_deadline_after_(log->cfg.sync_timeout_ns);
    tlog_lock_(&s->lock, TLOG_LOCK_STREAM);
    /* Bounded: beyond the buffer's size in waiting frames, wait for the
     * writer rather than drop anything, until the frame fits in half of it:
     * a thread that ends frames faster than the writer takes them then
     * sleeps once per half a buffer of frames, not once per frame. The
     * writer, woken, stops waiting for device work. */
    if (s->pending_bytes && s->pending_bytes + f->stream_bytes > s->cap) {
        s->blocked++;
        if (f->stream_bytes > s->room_for)
            s->room_for = f->stream_bytes;
        pthread_cond_signal(&s->work);
        atomic_fetch_add_explicit(&s->waits, 1, memory_order_relaxed);
        while (s->pending_bytes && s->pending_bytes + f->stream_bytes > s->cap / 2 &&
               !s->stopping)
            pthread_cond_wait(&s->room, &s->lock);
        if (--s->blocked == 0)
            s->room_for = 0;
    }
    bool taken = !s->stopping && (s->count < s->ring || grow_ring_locked(s));
    if (taken) {
        s->pending[(s->head + s->count) % s->ring] = f;
        s->count++;
        s->taken++;
        s->pending_bytes += f->stream_bytes;
        if (s->pending_bytes > s->cap / 2)
            pthread_cond_signal(&s->work);
    } else {
        s->frames_lost++;
    }
    tlog_unlock_(&s->lock);
    return taken;
}

void tlog_stream_close_(tlog_log *log, bool release)
{
    tlog_stream *s = atomic_load_explicit(&log->stream, memory_order_acquire);
    if (!s)
        return;
    tlog_lock_(&s->lock, TLOG_LOCK_STREAM);
    s->stopping = true;
    pthread_cond_broadcast(&s->work);
    pthread_cond_broadcast(&s->room);
    pthread_cond_broadcast(&s->idle);
    tlog_unlock_(&s->lock);
    if (s->has_writer)
        pthread_join(s->writer, NULL);
    s->has_writer = false;
    /* At exit other threads may still end frames: leave them a stream that
     * takes nothing. */
    if (release) {
        atomic_store(&log->stream, NULL);
        stream_free(s);
    }
}

int tlog_stream_flush(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    tlog_stream *s = log ? atomic_load_explicit(&log->stream, memory_order_acquire) : NULL;
    if (!s)
        return TLOG_EINVAL;
    if (!s->has_writer)
        return TLOG_EIO;
    tlog_lock_(&s->lock, TLOG_LOCK_STREAM);
    /* The frames handed over so far, not the ones that keep coming. */
    uint64_t target = s->taken;
    if (target > s->flush_wanted)
        s->flush_wanted = target;
    pthread_cond_signal(&s->work);
    while (s->flushed < target && !s->stopping && !s->failed)
        pthread_cond_wait(&s->idle, &s->lock);
    bool failed = s->failed;
    tlog_unlock_(&s->lock);
    return failed ? TLOG_EIO : TLOG_OK;
}

void tlog_stream_stats_(tlog_log *log, uint64_t *written, uint64_t *lost, uint64_t *waits)
{
    tlog_stream *s = atomic_load_explicit(&log->stream, memory_order_acquire);
    *written = *lost = *waits = 0;
    if (!s)
        return;
    *written = atomic_load(&s->frames_written);
    *lost = atomic_load(&s->frames_lost);
    *waits = atomic_load_explicit(&s->waits, memory_order_relaxed);
}
