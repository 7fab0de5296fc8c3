/*
 * The binary stream: every completed frame of a log, written to a file by a
 * writer thread of its own (doc/stream.md).
 *
 * The recording path does not change: a frame's end hands the frame (one
 * more reference) to the writer, which waits for its device work without
 * blocking anyone (readiness polls, then one forced sync past the log's sync
 * timeout), resolves it, encodes it into a bounded buffer and writes the
 * buffer out when full or idle. Frames waiting for the writer are bounded by
 * the same size: beyond it, a frame's end waits for the writer, so nothing
 * is ever dropped. A file that cannot be opened or written is reported once;
 * recording goes on, and what was written stays readable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "encode.h"
#include "internal.h"

#define DEFAULT_BUFFER ((size_t)4 << 20)
#define MIN_BUFFER ((size_t)4096)
#define READY_POLL_NS 1000000L

struct tlog_stream {
    tlog_log *log;
    char path[4096];
    int fd;
    uint8_t *buf;
    size_t cap, used;
    tlog_bytes scratch;
    tlog_seen seen;

    pthread_mutex_t lock;
    pthread_cond_t work;        /* a frame arrived, or stop */
    pthread_cond_t room;        /* the writer took a frame */
    pthread_cond_t idle;        /* everything handed over is on disk */
    pthread_t writer;
    atomic_bool stopping;       /* set under the lock; the writer also peeks */
    tlog_frame **pending;       /* FIFO ring */
    size_t head, count, ring;
    size_t pending_bytes;       /* raw records the waiting frames hold */
    bool busy;                  /* the writer holds a frame */

    atomic_bool failed;         /* the file cannot be written: stop */
    _Atomic uint64_t frames_written, frames_lost;
};

static const tlog_site stream_site = {"Forced sync \"stream\"", __FILE__, "stream", __LINE__,
                                      TLOG_LEVEL_COARSE};

/* ------------------------------------------------------------------------ */
/* Path and settings                                                        */
/* ------------------------------------------------------------------------ */

/* The MPI rank the environment shows (Open MPI, PMIx, MPICH/PMI, Slurm), or
 * -1. */
long tlog_env_rank_(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long r = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && r >= 0)
            return r;
    }
    return -1;
}

/* Copies `pattern` with each `%` replaced by the rank, or the process id when
 * no rank is visible. */
static bool expand_path(const char *pattern, char *out, size_t size)
{
    long rank = tlog_env_rank_();
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

/* TIMERLOG_BUFSIZE: bytes, with an optional K, M or G suffix. */
static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (end == s || (shift && end[1]) || (!shift && *end) || v > (SIZE_MAX >> shift))
        return 0;
    return (size_t)v << shift;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

static void fail(tlog_stream *s, int err)
{
    s->failed = true;
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

static void flush(tlog_stream *s)
{
    write_all(s, s->buf, s->used);
    s->used = 0;
}

/* Adds encoded blocks to the buffer, writing it out whenever it fills. */
static void put(tlog_stream *s, const uint8_t *p, size_t n)
{
    if (s->used + n > s->cap)
        flush(s);
    if (n > s->cap) {
        write_all(s, p, n);
        return;
    }
    memcpy(s->buf + s->used, p, n);
    s->used += n;
}

/* Waits, without blocking anything else, for the frame's device work; past
 * the log's sync timeout (or when stopping) forces one sync. */
static void wait_ready(tlog_stream *s, tlog_frame *f)
{
    int64_t give_up = tlog_mono_ns_() + (int64_t)(s->log->cfg.sync_timeout_ns < (1ull << 61)
                                                      ? s->log->cfg.sync_timeout_ns
                                                      : (1ull << 61));
    while (!tlog_device_frame_ready_(f)) {
        tlog_devices_poll_(s->log);
        if (tlog_device_frame_ready_(f))
            return;
        if (s->stopping || tlog_mono_ns_() >= give_up) {
            tlog_device_settle_(f, &stream_site);
            return;
        }
        struct timespec nap = {0, READY_POLL_NS};
        nanosleep(&nap, NULL);
    }
}

static void write_frame(tlog_stream *s, tlog_frame *f)
{
    if (s->failed) {
        s->frames_lost++;
        return;
    }
    wait_ready(s, f);
    int rc = tlog_frame_resolve_once_(f, &stream_site);
    s->scratch.len = 0;
    if (rc == TLOG_OK)
        rc = tlog_encode_frame_(&s->seen, f, &s->scratch);
    if (rc != TLOG_OK) {
        s->frames_lost++;
        tlog_report_(s->log, NULL, rc, NULL, "frame %llu not streamed: %s",
                     (unsigned long long)f->serial, tlog_strerror(rc));
        s->scratch.failed = false;
        return;
    }
    put(s, s->scratch.data, s->scratch.len);
    s->frames_written++;
}

static void finish_file(tlog_stream *s)
{
    if (s->failed)
        return;
    s->scratch.len = 0;
    tlog_encode_end_(&s->scratch, s->frames_written, s->frames_lost);
    put(s, s->scratch.data, s->scratch.len);
    flush(s);
}

static void *writer_main(void *arg)
{
    tlog_stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->count && !s->stopping)
            pthread_cond_wait(&s->work, &s->lock);
        if (!s->count)
            break;
        tlog_frame *f = s->pending[s->head];
        s->busy = true;
        pthread_mutex_unlock(&s->lock);
        write_frame(s, f);
        pthread_mutex_lock(&s->lock);
        s->head = (s->head + 1) % s->ring;
        s->count--;
        s->pending_bytes -= f->stream_bytes;
        s->busy = false;
        if (!s->count) {
            pthread_mutex_unlock(&s->lock);
            flush(s);   /* idle: put what there is on disk */
            pthread_mutex_lock(&s->lock);
            pthread_cond_broadcast(&s->idle);
        }
        pthread_cond_broadcast(&s->room);
        pthread_mutex_unlock(&s->lock);
        tlog_frame_release(f);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
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
    s->fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s->fd < 0) {
        int err = errno;
        tlog_report_(s->log, NULL, TLOG_EIO, NULL,
                     "cannot open the stream %s: %s; streaming is off", s->path,
                     strerror(err));
        return TLOG_EIO;
    }
    uint8_t header[TLOG_STREAM_HEADER_BYTES];
    long rank = tlog_env_rank_();
    tlog_encode_header_(header, rank >= 0 ? (uint32_t)rank : TLOG_STREAM_NONE,
                        (uint32_t)getpid(), s->log->wall0_ns);
    put(s, header, sizeof header);
    flush(s);
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
                         "TIMERLOG_BUFSIZE=%s is not a size (bytes, or a number with K, "
                         "M or G); ignored", size);
    }
    if (!*bytes)
        *bytes = DEFAULT_BUFFER;
    if (*bytes < MIN_BUFFER)
        *bytes = MIN_BUFFER;
    return path && *path ? path : NULL;
}

int tlog_stream_open_(tlog_log *log)
{
    size_t bytes;
    const char *pattern = stream_settings(log, &bytes);
    if (!pattern)
        return TLOG_OK;
    tlog_stream *s = calloc(1, sizeof *s);
    if (!s)
        return TLOG_ENOMEM;
    s->log = log;
    s->fd = -1;
    s->cap = bytes;
    s->ring = 64;
    s->buf = malloc(bytes);
    s->pending = malloc(s->ring * sizeof *s->pending);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->room, NULL);
    pthread_cond_init(&s->idle, NULL);
    int rc = !s->buf || !s->pending ? TLOG_ENOMEM : TLOG_OK;
    if (rc == TLOG_OK && !expand_path(pattern, s->path, sizeof s->path)) {
        tlog_report_(log, NULL, TLOG_EINVAL, NULL, "stream path \"%s\" is too long; "
                     "streaming is off", pattern);
        rc = TLOG_EINVAL;
    }
    if (rc == TLOG_OK)
        rc = open_file(s);
    if (rc == TLOG_OK && pthread_create(&s->writer, NULL, writer_main, s) != 0)
        rc = TLOG_ENOMEM;
    if (rc != TLOG_OK) {
        stream_free(s);
        return rc;
    }
    log->stream = s;
    return TLOG_OK;
}

/* Caller holds s->lock. */
static bool grow_ring(tlog_stream *s)
{
    size_t ring = s->ring * 2;
    tlog_frame **p = malloc(ring * sizeof *p);
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
    tlog_stream *s = log->stream;
    if (!s)
        return false;
    if (atomic_load_explicit(&s->failed, memory_order_relaxed)) {
        atomic_fetch_add(&s->frames_lost, 1);   /* nothing can be written */
        return false;
    }
    pthread_mutex_lock(&s->lock);
    /* Bounded: beyond the buffer's size in waiting frames, wait for the
     * writer rather than drop anything. */
    while (s->pending_bytes && s->pending_bytes + f->stream_bytes > s->cap && !s->stopping)
        pthread_cond_wait(&s->room, &s->lock);
    bool taken = !s->stopping && (s->count < s->ring || grow_ring(s));
    if (taken) {
        s->pending[(s->head + s->count) % s->ring] = f;
        s->count++;
        s->pending_bytes += f->stream_bytes;
        pthread_cond_signal(&s->work);
    } else {
        s->frames_lost++;
    }
    pthread_mutex_unlock(&s->lock);
    return taken;
}

void tlog_stream_close_(tlog_log *log, bool release)
{
    tlog_stream *s = log->stream;
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_broadcast(&s->work);
    pthread_cond_broadcast(&s->room);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->writer, NULL);
    /* At exit other threads may still end frames: leave them a stream that
     * takes nothing. */
    if (release) {
        log->stream = NULL;
        stream_free(s);
    }
}

int tlog_stream_flush(tlog_log *log)
{
    log = tlog_resolve_log_(log);
    tlog_stream *s = log ? log->stream : NULL;
    if (!s)
        return TLOG_EINVAL;
    pthread_mutex_lock(&s->lock);
    while ((s->count || s->busy) && !s->stopping)
        pthread_cond_wait(&s->idle, &s->lock);
    bool failed = s->failed;
    pthread_mutex_unlock(&s->lock);
    return failed ? TLOG_EIO : TLOG_OK;
}

void tlog_stream_stats_(tlog_log *log, uint64_t *written, uint64_t *lost)
{
    tlog_stream *s = log->stream;
    *written = *lost = 0;
    if (!s)
        return;
    *written = atomic_load(&s->frames_written);
    *lost = atomic_load(&s->frames_lost);
}
