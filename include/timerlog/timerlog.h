/*
 * libtimerlog: frame-by-frame scope timing for host threads and devices.
 *
 * Scopes placed with TIMERLOG_SCOPE("name") build one tree per thread. A scope
 * that opens with nothing else open on its thread is a *frame*: when it ends,
 * the frame becomes an immutable tree in a bounded queue, ready to be printed
 * (tlog_dump) or walked (tlog_frame_latest, tlog_node_*).
 *
 * Conventions
 *  - Functions that can fail return 0 or a negative TLOG_E* code;
 *    tlog_strerror() turns a code into a message. The library never exits or
 *    aborts the process.
 *  - A `tlog_log *` argument may be NULL, meaning the process-wide default log
 *    (created on first use).
 *  - After fork(), the child leaves every log made before it (and its frames,
 *    devices and subscriptions) to the parent: its default log is made afresh
 *    at its first use, with the same configuration (tlog_default_config may
 *    set another before that), and a log it inherited records nothing, is
 *    never locked, and makes functions that return a code answer TLOG_EINVAL
 *    (reported once, through the child's default log: its error callback,
 *    stderr unless tlog_default_config set one; the inherited log's callback
 *    is the parent's and is not called).
 *  - Structs that the library fills (`*_info`, tlog_stats) start with a `size`
 *    member: set it to sizeof the struct you pass; the library fills only that
 *    many bytes, so code built against an older header keeps working. A NULL
 *    struct, or a size too small to hold `size` itself, gives TLOG_EINVAL.
 *    Settings structs (tlog_config, tlog_device_config, tlog_subscriber,
 *    tlog_dump_options, ...) are read the same way, up to their `size`; a
 *    size that is no struct's (not a multiple of a pointer's size, so that
 *    it would cut a field in two) gives TLOG_EINVAL.
 *  - Times in results are nanoseconds, saturated at the bounds of their types.
 *    Raw clock readings are tlog_ticks, only meaningful through
 *    tlog_ticks_to_ns().
 */
#ifndef TIMERLOG_TIMERLOG_H
#define TIMERLOG_TIMERLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TIMERLOG_VERSION_MAJOR 0
#define TIMERLOG_VERSION_MINOR 2
#define TIMERLOG_VERSION_PATCH 0

#if defined(TIMERLOG_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#define TLOG_API __attribute__((visibility("default")))
#else
#define TLOG_API
#endif

/* Calls to tlog_begin and tlog_end (what the scope macros expand to) go
 * through the GOT rather than the PLT where the compiler offers that for
 * one function (GCC's noplt): a jump less a call. Linked statically, they
 * are direct calls all the same. */
#if defined(__has_attribute)
#if __has_attribute(noplt)
#define TLOG_NOPLT __attribute__((noplt))
#endif
#endif
#ifndef TLOG_NOPLT
#define TLOG_NOPLT
#endif

/* In C++ every function of the API is noexcept: an exception thrown by a
 * callback (error, clock, allocator, subscriber) ends the program with
 * std::terminate rather than unwinding through the library. */
#ifdef __cplusplus
#define TLOG_NOEXCEPT noexcept
#else
#define TLOG_NOEXCEPT
#endif

/* Private: the null pointer of the header's inline code and macros, which
 * C++ builds with -Wzero-as-null-pointer-constant accept. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define TIMERLOG_NULL_ nullptr
#else
#define TIMERLOG_NULL_ NULL
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Every status code, in one list: XX(NAME, value, message) gives TLOG_NAME
 * its value in enum tlog_status, its message in tlog_strerror and its name
 * in tlog_err_name. An application may expand it too, with its own XX, to
 * list or map the codes (as libuv's UV_ERRNO_MAP).
 */
#define TLOG_STATUS_MAP(XX)                                                  \
    XX(OK, 0, "success")                                                     \
    /* an argument is invalid */                                             \
    XX(EINVAL, -1, "invalid argument")                                       \
    /* an allocation failed */                                               \
    XX(ENOMEM, -2, "out of memory")                                          \
    /* no completed frame is available */                                    \
    XX(ENOFRAME, -3, "no completed frame")                                   \
    /* no open scope on this thread matches (or none is open) */             \
    XX(ENOTOPEN, -4, "no open scope matches")                                \
    /* an end does not match the innermost open scope */                     \
    XX(EMISMATCH, -5, "end does not match the innermost open scope")         \
    /* the thread is already working for a hand-off */                       \
    XX(EBUSY, -6, "busy: already in use")                                    \
    /* writing the output failed */                                          \
    XX(EIO, -7, "output error")                                              \
    /* scopes nested deeper than the configured limit */                     \
    XX(EDEPTH, -8, "scopes nested deeper than max_depth")                    \
    /* the thread's record budget is used up */                              \
    XX(EFULL, -9, "thread record budget used up")                            \
    /* work arrived after its frame had ended */                             \
    XX(ELATE, -10, "work arrived after its frame ended")                     \
    /* a thread ended with scopes still open */                              \
    XX(ETHREADEXIT, -11, "thread ended with scopes open")                    \
    /* the device or its runtime reported an error */                        \
    XX(EDEVICE, -12, "the device reported an error")                         \
    /* a wait for the device gave up */                                      \
    XX(ETIMEDOUT, -13, "timed out waiting for the device")                   \
    /* no usable device, or its runtime is missing */                        \
    XX(ENODEVICE, -14, "no usable device")                                   \
    /* the queue is being captured into a graph */                           \
    XX(ECAPTURE, -15, "the queue is being captured into a graph")            \
    /* not a timerlog stream, or a damaged one */                            \
    XX(EFORMAT, -16, "not a timerlog stream, or a damaged one")              \
    /* a stream from a newer, incompatible version */                        \
    XX(EVERSION, -17, "stream written by a newer, incompatible version")

#define TLOG_STATUS_ENUM_(name, value, message) TLOG_##name = value,
enum tlog_status {
    TLOG_STATUS_MAP(TLOG_STATUS_ENUM_)
};
#undef TLOG_STATUS_ENUM_

/* A static, human-readable message for a tlog_status code. Never NULL:
 * "unknown error" for a code not listed. Thread-safe. */
TLOG_API const char *tlog_strerror(int code) TLOG_NOEXCEPT;

/* The name of a tlog_status code as the enum spells it ("TLOG_EFULL" for
 * TLOG_EFULL), a static string, for logs and tests that want the constant
 * rather than a sentence. Never NULL: "TLOG_UNKNOWN" for a code not listed
 * (which is not itself a code). Thread-safe. */
TLOG_API const char *tlog_err_name(int code) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Levels and call sites                                                    */
/* ------------------------------------------------------------------------ */

enum tlog_level {
    TLOG_LEVEL_OFF = 0,    /* nothing is recorded */
    TLOG_LEVEL_COARSE = 1, /* sites of level 1 (the default for the macros) */
    TLOG_LEVEL_FINE = 2    /* sites of level 1 and 2 */
};

/*
 * One call site. Each macro use owns one static tlog_site; functions take a
 * pointer to it, so the hot path carries a pointer, never a string. Code that
 * makes names at run time gets stable sites from tlog_site_intern().
 * The library never writes to a site: it may live in read-only memory. Once
 * a scope has used it, a site and its title must stay where they are,
 * unchanged, for the life of the process: a log's statistics and its
 * subscribers know sites and titles by their addresses, which a freed site
 * may pass on to another. Static sites and interned ones do.
 */
typedef struct tlog_site {
    const char *name;     /* title printed in the tree */
    const char *file;     /* source file, as given by __FILE__ */
    const char *function; /* enclosing function, as given by __func__ */
    int line;             /* source line */
    int level;            /* TLOG_LEVEL_COARSE or TLOG_LEVEL_FINE; a site of
                           * any other level never passes a level check */
} tlog_site;

/*
 * The 64-bit id of a site, a hash of its file, function and line: the same
 * for the same site in every run of the same build, never 0. Computed on
 * each call (a few ns per byte of the path): cache it if you need it often.
 * 0 for a NULL site. Thread-safe.
 */
TLOG_API uint64_t tlog_site_id(const tlog_site *site) TLOG_NOEXCEPT;

/*
 * How many scopes of this site have been resolved into frames so far (frames
 * are resolved when first read, or, in a log keeping statistics, as soon as
 * they are ready; frames dropped unread are not counted otherwise).
 * 0 for a NULL site. Thread-safe.
 */
TLOG_API uint64_t tlog_site_instances(const tlog_site *site) TLOG_NOEXCEPT;

/*
 * A site for a name known only at run time. The strings are copied; the same
 * (name, file, function, line, level) always returns the same pointer, which
 * stays valid until the process ends. Returns NULL if name is NULL or memory
 * runs out. Thread-safe; takes a lock, so keep it out of inner loops. Its
 * table has no bound: for names that come from data (kernels, assets, user
 * labels), use TIMERLOG_SCOPE_NAMED or tlog_site_named, which are bounded.
 */
TLOG_API const tlog_site *tlog_site_intern(const char *name, const char *file,
                                           const char *function, int line,
                                           int level) TLOG_NOEXCEPT;

/*
 * Run-time names (TIMERLOG_SCOPE_NAMED). The process keeps one table of
 * (call site, name) pairs, shared by every log, with these bounds:
 *  - at most TLOG_RUNTIME_NAMES_MAX pairs. Once it is full, a name not in it
 *    gets its call site's own site, titled "(other names)": it is timed, on
 *    one row with the other refused names of that call site. Each such
 *    scope is counted (tlog_names_info.refused), and the first refusal of
 *    the process is reported once, as TLOG_EFULL, to the default log's error
 *    callback. Names already in the table keep their sites.
 *  - a name is kept to its first TLOG_RUNTIME_NAME_BYTES bytes (cut at a
 *    UTF-8 character boundary, "..." appended to its title); names that
 *    agree in those bytes share a site.
 * The table never shrinks and is never freed: it holds at most about
 * TLOG_RUNTIME_NAMES_MAX * (TLOG_RUNTIME_NAME_BYTES + 100) bytes (about
 * 1.4 MiB) besides a fixed 64 KiB index; each thread that looks names up
 * also holds 512 bytes, freed when it ends.
 */
#define TLOG_RUNTIME_NAMES_MAX 4096
#define TLOG_RUNTIME_NAME_BYTES 255

/*
 * The site for `name` at the call site `at`, a static site whose file,
 * function, line and level the result shares and whose name is the title of
 * refused names ("(other names)" for the macros). The name is copied: its
 * buffer may change or be freed as soon as this returns. The same (at, name)
 * always gives the same pointer, valid until the process ends (`at` must be
 * too). A NULL name gives `at` (not counted as refused); a NULL `at` gives
 * NULL. Thread-safe, and never blocks to find a name already in the table:
 * each thread remembers its last name of each call site (one compare of
 * the text when it comes again); other names cost a hash and a read of the
 * table without a lock. Only adding a name takes a lock.
 */
TLOG_API const tlog_site *tlog_site_named(const tlog_site *at,
                                          const char *name) TLOG_NOEXCEPT;

/* The table of run-time names, for the whole process. */
typedef struct tlog_names_info {
    size_t size;
    uint64_t names;    /* (call site, name) pairs in the table */
    uint64_t refused;  /* lookups of names that found the table full (or
                        * memory short) and got "(other names)" */
    uint64_t bytes;    /* memory the names hold, besides the fixed index */
} tlog_names_info;

/* Fills *out (set out->size first). Thread-safe. */
TLOG_API int tlog_names_get_info(tlog_names_info *out) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Logs and configuration                                                   */
/* ------------------------------------------------------------------------ */

typedef struct tlog_log tlog_log;
typedef uint64_t tlog_ticks;

/* Reads a custom clock: see tlog_config.clock. Must be monotonic per thread:
 * a scope whose end reads earlier than its begin is kept with a time of 0,
 * reported (TLOG_EINVAL) and counted (tlog_stats.clock_reversals). */
typedef tlog_ticks (*tlog_clock_fn)(void *user);

typedef struct tlog_error {
    int code;                 /* a TLOG_E* code */
    const char *message;      /* one line, no trailing newline */
    const tlog_site *site;    /* the site concerned, or NULL */
    uint32_t thread;          /* id of the thread concerned (1-based); 0 when
                               * no recording thread is: the stream writer,
                               * a device read, a thread with no state yet */
} tlog_error;

/* Receives the log's errors. Scopes dropped past the thread budget or
 * max_depth are reported at the first drop of each frame and counted at
 * every one (tlog_get_stats); other faults are reported each time. Called
 * on the thread that met the fault (the stream writer's, for a write), with
 * no lock of the library held: it may call the library. Without a
 * callback, stderr shows each kind of fault twice, then counts it. */
typedef void (*tlog_error_fn)(void *user, const tlog_error *error);

/* Flags for tlog_config.flags. */
enum tlog_config_flags {
    TLOG_CONFIG_START_OFF = 1u << 0,  /* start at TLOG_LEVEL_OFF */
    TLOG_CONFIG_IGNORE_ENV = 1u << 1, /* do not read TIMERLOG_* variables
                                       * (but TIMERLOG_ROCTX_LIBRARY, which
                                       * names roctx for the whole process) */
    /* Mirror every scope as an NVTX range in a "timerlog" domain, so that
     * Nsight Systems shows scopes beside the kernels (TIMERLOG_NVTX=1|0
     * overrides). In a build without NVTX, reported as TLOG_ENODEVICE. */
    TLOG_CONFIG_NVTX = 1u << 2,
    /* Mirror every scope as a roctx range, loading libroctx64 at run time
     * (TIMERLOG_ROCTX=1|0 overrides). Without it, reported as
     * TLOG_ENODEVICE. */
    TLOG_CONFIG_ROCTX = 1u << 3,
    /* Keep statistics of every frame across frames (see "Statistics across
     * frames" below and tlog_config.stats). TIMERLOG_REPORT=stats in the
     * environment also switches them on. */
    TLOG_CONFIG_STATS = 1u << 4
};

/*
 * Settings for statistics across frames (tlog_summary_create, and
 * tlog_config.stats for a log's own). A zero-initialised struct means "all
 * defaults"; set `size` to sizeof(tlog_summary_config) (0 is read as the
 * current size).
 */
typedef struct tlog_summary_config {
    size_t size;
    /* A frame whose root took longer than this is a hitch. 0: no budget. */
    uint64_t hitch_ns;
    /* A frame whose root took longer than this quantile (between 0 and 1,
     * e.g. 0.99) of the previous hitch_window frames of its thread and root
     * title is a hitch, once that many have been seen. "Longer" means past
     * the histogram bucket of the quantile (see TLOG_STATS_RELATIVE_ERROR):
     * a frame within 1/64 of the quantile may not count. 0: no quantile. */
    double hitch_quantile;
    /* Frames the quantile is taken over. 0 selects 128; at most 65536. */
    uint32_t hitch_window;
    /* Hitches kept, each with its whole frame; the oldest goes first. 0
     * selects 16; at most 4096. */
    uint32_t max_hitches;
    /* Rows kept, over all threads and root titles. A row that would be one
     * more is left out, with its subtree, and counted (rows_refused).
     * 0 selects 1,048,576. */
    uint32_t max_rows;
} tlog_summary_config;

/*
 * Settings for a log. A zero-initialised struct means "all defaults"; set
 * `size` to sizeof(tlog_config) (0 is read as the current size).
 */
typedef struct tlog_config {
    size_t size;
    /* Active level: TLOG_LEVEL_COARSE or TLOG_LEVEL_FINE; 0 selects
     * TLOG_LEVEL_FINE. To start switched off use TLOG_CONFIG_START_OFF.
     * TIMERLOG_LEVEL=0|1|2 in the environment overrides both. */
    int level;
    unsigned flags;           /* tlog_config_flags; other bits: TLOG_EINVAL */
    /* Completed frames kept for reading, per thread: when a thread has this
     * many waiting, its oldest is dropped and counted, so that a busy side
     * thread never pushes another thread's frames out. Frames of threads
     * that have exited are kept while the queue holds fewer than this many
     * per thread still recording, oldest dropped first. 0 selects 8. */
    uint32_t max_frames;
    /* Deepest nesting per thread; deeper scopes are dropped and counted.
     * 0 selects 128; at most 4096. */
    uint32_t max_depth;
    /* Bytes of scope records a thread may hold for its frame in progress
     * (16 a scope; 32 for a scope of 2^32 ticks or more and a few others,
     * doc/guide.md "Memory"); when used up, new scopes are dropped (with
     * their children) and counted. 0 selects 8 MiB; at least 64. */
    size_t thread_budget;
    /* Clock to read instead of the CPU's counter (deterministic tests,
     * simulated time). NULL selects the hardware clock. */
    tlog_clock_fn clock;
    void *clock_user;
    /* Ticks per second of `clock`; 0 means nanoseconds. */
    uint64_t clock_hz;
    /* Where recording errors go; NULL prints the first report of each kind
     * (and call site) on stderr, at the second one line saying that the rest
     * are only counted, and counts them. */
    tlog_error_fn on_error;
    void *error_user;
    /* Allocator for record memory: chunks of about 64 KiB, a per-thread
     * reserve of (max_depth + 1) * 32 bytes, and blocks of work handed from
     * thread to thread. Set both or neither (NULL selects malloc and free).
     * Called from recording and reading threads; must not call the library. */
    void *(*record_alloc)(void *user, size_t bytes);
    void (*record_free)(void *user, void *block);
    void *alloc_user;
    /* How long a forced sync (tlog_dump, tlog_sync) waits for device work
     * before giving up and marking what is left unresolved; the stream's
     * writer waits at most this long past a frame's end. 0 selects 5 s;
     * TIMERLOG_SYNC_TIMEOUT_MS in the environment overrides it. */
    uint64_t sync_timeout_ns;
    /* Streams every completed frame to this file (see tlog_stream_flush and
     * doc/stream.md); each `%` becomes the MPI rank when the environment
     * shows one (Open MPI, PMIx, MPICH/PMI, Slurm), else the process id.
     * NULL: no stream. TIMERLOG_OUTPUT=path overrides it. A path another
     * log (of this process or another) streams to is left to it: this log
     * then streams to the path with "-2" (or -3, ...) before its extension,
     * reported as TLOG_EBUSY. */
    const char *stream_path;
    /* Bytes buffered before a write, and the bound on frames waiting to be
     * written, counted in the record memory they hold, at least a chunk
     * each (64 KiB, or thread_budget when smaller) (past it, a frame's end
     * waits until they are down to half, tlog_stats.stream_waits, and
     * device work still pending in the frames written meanwhile is not
     * waited for but written unresolved, or left out and counted late while
     * another thread's forced sync holds the devices: a frame's end never
     * waits for a device); 0 selects
     * 4 MiB. TIMERLOG_BUFSIZE (bytes, or with a K, M or G suffix)
     * overrides it. */
    size_t stream_buffer;
    /* Record memory kept for reuse once the frames it held are done (the
     * log's pool of chunks), and made ready when a frame begins (as many
     * chunks as the thread's last frame took, their pages mapped): at most
     * this many bytes; what comes back beyond it is freed, so a burst of
     * threads or frames leaves no more behind. 0 selects 16 MiB; SIZE_MAX
     * keeps everything. */
    size_t pool_bytes;
    /* With TLOG_CONFIG_STATS (or TIMERLOG_REPORT=stats): what the log's
     * statistics keep. TIMERLOG_REPORT's hitch=MS replaces the budget and
     * hitch=pNN the quantile; the other stays as configured. */
    tlog_summary_config stats;
} tlog_config;

/*
 * Creates a log. `config` may be NULL for defaults. Returns TLOG_OK and sets
 * *out, or a negative code (TLOG_EINVAL for a bad config or a NULL out) and
 * sets *out to NULL.
 */
TLOG_API int tlog_create(const tlog_config *config, tlog_log **out) TLOG_NOEXCEPT;

/*
 * Destroys a log, every frame in it and every device bound to it. No thread
 * may be recording into the log, or holding its frames, while it is
 * destroyed; threads that recorded into it may be exiting at the same time.
 * Passing NULL does nothing (the default log lives until the process ends).
 */
TLOG_API void tlog_destroy(tlog_log *log) TLOG_NOEXCEPT;

/*
 * Sets the configuration of the default log. Must come before anything
 * creates it; returns TLOG_EBUSY if the default log already exists.
 * TLOG_EINVAL for a bad config, as tlog_create; the last one set stays.
 * stream_path is copied (TLOG_ENOMEM if it cannot be); the callbacks and
 * their user pointers are kept as given, to be called for the process's
 * life.
 */
TLOG_API int tlog_default_config(const tlog_config *config) TLOG_NOEXCEPT;

/* The default log, created on first use; NULL only if memory ran out. */
TLOG_API tlog_log *tlog_default(void) TLOG_NOEXCEPT;

/*
 * Changes the active level (TLOG_LEVEL_OFF, _COARSE or _FINE). Scopes already
 * open end normally. Change it between frames: an explicit TIMERLOG_BEGIN /
 * TIMERLOG_END pair that straddles a change is repaired like any mismatch.
 * TLOG_EINVAL for any other level, which leaves the level as it was.
 */
TLOG_API int tlog_set_level(tlog_log *log, int level) TLOG_NOEXCEPT;
TLOG_API int tlog_get_level(tlog_log *log) TLOG_NOEXCEPT;

/* Reads the log's clock. Cheap; thread-safe. */
TLOG_API tlog_ticks tlog_now(tlog_log *log) TLOG_NOEXCEPT;

/*
 * The clock the log reads: "tsc" (the x86-64 time-stamp counter, when the
 * CPU reports it invariant), "monotonic" (CLOCK_MONOTONIC: other platforms,
 * a counter that cannot be trusted, or TIMERLOG_CLOCK=monotonic in the
 * environment) or "custom" (tlog_config.clock).
 */
TLOG_API const char *tlog_clock_name(tlog_log *log) TLOG_NOEXCEPT;

/* Converts a difference of two tlog_now() readings to nanoseconds, at most
 * UINT64_MAX. Never waits, except in the process's first 20 us (it spins
 * for the rest of them), while the counter's rate has too short a
 * baseline. */
TLOG_API uint64_t tlog_ticks_to_ns(tlog_log *log, tlog_ticks ticks) TLOG_NOEXCEPT;

/* Counters of what happened; all only grow. */
typedef struct tlog_stats {
    size_t size;
    uint64_t frames_completed;  /* frames that entered the queue */
    uint64_t frames_dropped;    /* frames pushed out of a full queue unread */
    uint64_t scopes_dropped;    /* scopes lost to a full thread budget, to
                                 * record memory that could not be had, or
                                 * hand-off work refused (TLOG_EFULL) */
    uint64_t depth_overflows;   /* scopes lost to max_depth */
    uint64_t mismatched_ends;   /* ends that closed inner scopes first */
    uint64_t unmatched_ends;    /* ends with no matching open scope */
    uint64_t scopes_repaired;   /* scopes closed by a repair rule */
    uint64_t open_at_thread_exit; /* threads that ended inside scopes */
    uint64_t late_work;         /* hand-off work after its frame ended */
    uint64_t alloc_failures;    /* allocations that failed, each reported:
                                 * the scopes one cost are in scopes_dropped,
                                 * a frame lost whole is said in its report */
    uint64_t threads;           /* threads that have recorded into the log */
    uint64_t record_bytes;      /* memory held for scope records and
                                 * hand-off work (in use or kept for reuse) */
    uint64_t frames_streamed;   /* frames written to the stream */
    uint64_t frames_not_streamed; /* frames the stream could not take or
                                   * write (after a write error) */
    uint64_t subscribers;       /* subscriptions on the log now, the NVTX and
                                 * roctx forwarders' included */
    uint64_t resolve_bytes;     /* memory kept for resolving the next frame:
                                 * the resolver's scratch and a released
                                 * frame's node and instance arrays */
    uint64_t clock_reversals;   /* scopes whose end the clock read earlier
                                 * than their begin (time shown as 0) */
    uint64_t stream_waits;      /* frame ends that waited for the stream's
                                 * writer: the frames waiting for it held
                                 * stream_buffer bytes of records */
} tlog_stats;

/* Fills *out (set out->size first). Thread-safe. */
TLOG_API int tlog_get_stats(tlog_log *log, tlog_stats *out) TLOG_NOEXCEPT;

/*
 * Waits until every frame completed so far is in the stream file, and the
 * file is written up to it. TLOG_EINVAL when the log has no stream, TLOG_EIO
 * when writing it failed (reported once; the file holds what came before).
 * The file is ended when the log is destroyed, or at exit for the default
 * log.
 */
TLOG_API int tlog_stream_flush(tlog_log *log) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Names the calling thread ("Worker Thread 1"); the name titles the `==>`
 * rows of work it does for other threads' scopes. Up to 63 bytes are kept.
 * Unnamed threads are called "Thread N" (N = the thread's id in the log).
 * TLOG_EINVAL for a NULL name, which keeps the name the thread had.
 */
TLOG_API int tlog_thread_name(const char *name) TLOG_NOEXCEPT;

/* The calling thread's id in `log` (NULL: the default log), as frames and
 * rows report it (tlog_frame_info.thread); 0 if it never recorded there. */
TLOG_API uint32_t tlog_thread_id(tlog_log *log) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Scopes                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Opens a scope of `site` on the calling thread in the default log. Lock-free,
 * allocation-free once the thread is warm. Does not check the site's level:
 * the macros do that before calling. A NULL site opens nothing and is
 * reported (TLOG_EINVAL).
 */
TLOG_API TLOG_NOPLT void tlog_begin(const tlog_site *site) TLOG_NOEXCEPT;

/*
 * Closes the innermost open scope, which should be `site` (or a site of the
 * same name). Otherwise the repair rules apply:
 *  - if a scope of that name is open further out, the scopes inside it are
 *    closed at this instant (marked repaired), then it is closed;
 *  - if none is open, the end is ignored.
 * Each case is reported once through the error callback and counted. A NULL
 * site closes nothing and is reported (TLOG_EINVAL).
 */
TLOG_API TLOG_NOPLT void tlog_end(const tlog_site *site) TLOG_NOEXCEPT;

/* tlog_begin / tlog_end on an explicit log (NULL = default log), which
 * check the site's level; a NULL site opens or closes nothing and is
 * reported (TLOG_EINVAL) on that log. */
TLOG_API void tlog_log_begin(tlog_log *log, const tlog_site *site) TLOG_NOEXCEPT;
TLOG_API void tlog_log_end(tlog_log *log, const tlog_site *site) TLOG_NOEXCEPT;

/* Number of scopes open on the calling thread in `log`, counting those past
 * max_depth; adopting a token opens none. */
TLOG_API int tlog_depth(tlog_log *log) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Hand-off to worker threads and timings inserted by hand                  */
/* ------------------------------------------------------------------------ */

/* Names a scope of some thread's frame in progress. Copy it freely. */
typedef struct tlog_token {
    tlog_log *log;
    uint64_t frame;    /* private */
    uint32_t thread;   /* private; 0 for an empty token */
    uint32_t scope;    /* private */
} tlog_token;

/*
 * A token for the calling thread's innermost open scope, for worker threads
 * to adopt. Inside adopted work it returns the adopted token, so nested
 * workers report beside their parent worker. Returns an empty token (thread
 * 0) when no scope is open; adopting it fails with TLOG_EINVAL.
 */
TLOG_API tlog_token tlog_handoff(tlog_log *log) TLOG_NOEXCEPT;

/*
 * The calling thread starts working for the token's scope. Until
 * tlog_adopt_end(), its time shows as one `==>` row, titled with the
 * thread's name, under that scope, with the scopes it records nested
 * beneath. One adoption at a time per thread (TLOG_EBUSY otherwise).
 * TLOG_EINVAL for a NULL or empty token.
 */
TLOG_API int tlog_adopt_begin(const tlog_token *token) TLOG_NOEXCEPT;

/*
 * Ends the calling thread's adoption and hands its timings to the owner of
 * the scope. Scopes still open inside the adoption are closed and reported.
 * Work handed over after the owner's frame ended is dropped and counted as
 * late (TLOG_ELATE): join your workers before the frame ends. What all
 * threads hand to one frame is bounded by the log's thread_budget; beyond
 * it, work is dropped and counted (TLOG_EFULL). Takes one short lock.
 * TLOG_EINVAL for a NULL token or one the thread is not adopting.
 */
TLOG_API int tlog_adopt_end(const tlog_token *token) TLOG_NOEXCEPT;

typedef enum tlog_kind {
    TLOG_KIND_CONTROL = 0,   /* host time on the thread: `|->` rows, (C) */
    TLOG_KIND_EXECUTION = 1  /* work elsewhere (worker, device): `==>`, (E) */
} tlog_kind;

/*
 * Inserts a finished timing [start, end) (tlog_now() readings) as a child of
 * the calling thread's innermost open scope. TLOG_ENOTOPEN when none is open;
 * TLOG_EINVAL, and nothing inserted, for a NULL site, a kind other than
 * TLOG_KIND_CONTROL or TLOG_KIND_EXECUTION, or end before start.
 */
TLOG_API int tlog_insert(tlog_log *log, const tlog_site *site, tlog_kind kind,
                         tlog_ticks start, tlog_ticks end) TLOG_NOEXCEPT;

/* Same as tlog_insert, under the scope named by a token, from any thread.
 * TLOG_ELATE or TLOG_EFULL as for tlog_adopt_end; TLOG_EINVAL also for a
 * NULL or empty token. */
TLOG_API int tlog_insert_to(const tlog_token *token, const tlog_site *site,
                            tlog_kind kind, tlog_ticks start, tlog_ticks end) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Frames and the tree-walk API                                             */
/* ------------------------------------------------------------------------ */

typedef struct tlog_frame tlog_frame;
typedef struct tlog_node tlog_node;
/* Statistics across frames: see that section, after the readers. */
typedef struct tlog_summary tlog_summary;

/*
 * A frame belongs to the thread whose root scope made it. Frames wait in
 * the log's queue in order of completion, at most tlog_config.max_frames per
 * thread. The *_of functions select frames by thread: a thread id
 * (tlog_thread_id, tlog_frame_info.thread), TLOG_THREAD_SELF for the calling
 * thread's, or TLOG_THREAD_ANY for every thread's.
 */
#define TLOG_THREAD_ANY 0u
#define TLOG_THREAD_SELF 0xffffffffu

/*
 * The newest completed frame of `thread`, resolved, with a reference the
 * caller must give back with tlog_frame_release(). NULL when there is none.
 * The frame stays in the queue. Safe while other threads record. Waits for
 * the frame's device work still pending, if any (the forced sync, see
 * tlog_sync); work already done is read without waiting.
 */
TLOG_API tlog_frame *tlog_frame_latest_of(tlog_log *log, uint32_t thread) TLOG_NOEXCEPT;

/* tlog_frame_latest_of(log, TLOG_THREAD_ANY): the newest frame of any
 * thread. A dashboard that follows one thread's frames selects it with
 * tlog_frame_latest_of; tlog_dump prints the calling thread's. */
TLOG_API tlog_frame *tlog_frame_latest(tlog_log *log) TLOG_NOEXCEPT;

/* Takes the oldest completed frame of `thread` out of the queue (resolved,
 * referenced), waiting first for its device work still pending. */
TLOG_API tlog_frame *tlog_frame_pop_of(tlog_log *log, uint32_t thread) TLOG_NOEXCEPT;

/* tlog_frame_pop_of(log, TLOG_THREAD_ANY). */
TLOG_API tlog_frame *tlog_frame_pop(tlog_log *log) TLOG_NOEXCEPT;

/*
 * Whether the oldest completed frame of `thread` is ready, without blocking:
 * checks the device queues (one non-blocking query per queue with pending
 * work) and returns 1 when every device interval launched in the frame has
 * been read, 0 when some is still pending, TLOG_ENOFRAME when no frame is
 * waiting. Frames without device work are always ready.
 */
TLOG_API int tlog_frame_ready_of(tlog_log *log, uint32_t thread) TLOG_NOEXCEPT;

/* tlog_frame_ready_of(log, TLOG_THREAD_ANY). */
TLOG_API int tlog_frame_ready(tlog_log *log) TLOG_NOEXCEPT;

/* Takes the oldest completed frame of `thread` out of the queue if it is
 * ready, never waiting for a device; NULL otherwise (production mode). */
TLOG_API tlog_frame *tlog_frame_pop_ready_of(tlog_log *log, uint32_t thread) TLOG_NOEXCEPT;

/* tlog_frame_pop_ready_of(log, TLOG_THREAD_ANY). */
TLOG_API tlog_frame *tlog_frame_pop_ready(tlog_log *log) TLOG_NOEXCEPT;

/* Completed frames of `thread` waiting in the queue. */
TLOG_API size_t tlog_frame_count_of(tlog_log *log, uint32_t thread) TLOG_NOEXCEPT;

/* tlog_frame_count_of(log, TLOG_THREAD_ANY). */
TLOG_API size_t tlog_frame_count(tlog_log *log) TLOG_NOEXCEPT;

/* Gives back a reference from tlog_frame_latest or tlog_frame_pop (or any
 * function that gives a frame): once per reference, as with free(); the
 * frame is not to be used after its last. NULL does nothing. */
TLOG_API void tlog_frame_release(tlog_frame *frame) TLOG_NOEXCEPT;

typedef struct tlog_frame_info {
    size_t size;
    uint64_t serial;         /* 1, 2, ... per log, in order of completion */
    uint32_t thread;         /* id of the thread that ran the frame */
    const char *thread_name;
    int64_t start_ns;        /* frame start, since the log was created */
    uint64_t duration_ns;
    size_t nodes;            /* merged rows in the tree */
    size_t instances;        /* recorded scopes and timings, unmerged */
    uint64_t scopes_dropped; /* scopes lost to the budget or max_depth */
    uint64_t scopes_repaired;/* scopes closed by a repair rule */
    size_t tree_bytes;       /* memory the resolved frame holds */
    uint64_t device_intervals;  /* device intervals shown in the frame */
    uint64_t device_unresolved; /* of those, left unresolved (timeout, error) */
    uint32_t rank;           /* MPI rank of the recording process (0 if none) */
    uint32_t reduced_ranks;  /* a frame from tlog_frame_reduce: its inputs
                              * (ranks); 0 for other frames */
    size_t partial_rows;     /* of its rows, those some input lacks */
} tlog_frame_info;

/* TLOG_EINVAL for a NULL frame. */
TLOG_API int tlog_frame_get_info(const tlog_frame *frame, tlog_frame_info *out) TLOG_NOEXCEPT;

/* The root node, never NULL for a frame returned by this API; NULL for a
 * NULL frame. */
TLOG_API const tlog_node *tlog_frame_root(const tlog_frame *frame) TLOG_NOEXCEPT;

/* Navigation; NULL where there is no such node, and for a NULL node.
 * Children are in order of
 * first start, except worker threads' rows, which follow their siblings in
 * order of thread id. */
TLOG_API const tlog_node *tlog_node_parent(const tlog_node *node) TLOG_NOEXCEPT;
TLOG_API const tlog_node *tlog_node_first_child(const tlog_node *node) TLOG_NOEXCEPT;
TLOG_API const tlog_node *tlog_node_next_sibling(const tlog_node *node) TLOG_NOEXCEPT;

enum tlog_node_flags {
    TLOG_NODE_REPAIRED = 1u << 0,   /* some instance was closed by a repair */
    TLOG_NODE_DEVICE = 1u << 1,     /* a device interval */
    TLOG_NODE_UNRESOLVED = 1u << 2, /* some device interval has no timing:
                                     * the forced sync timed out or the
                                     * device reported an error */
    TLOG_NODE_FORCED_SYNC = 1u << 3, /* the wait of a forced sync: only in
                                      * streams of 0.1 versions */
    TLOG_NODE_PAST_FRAME = 1u << 4  /* `Device past frame end`: device work
                                     * still running when the root ended */
};

/*
 * One row of the tree: every instance of the same title and kind under the
 * same parent in one frame, merged.
 */
typedef struct tlog_node_info {
    size_t size;
    const char *name;
    tlog_kind kind;
    uint32_t thread;          /* id of the thread that recorded it */
    const char *thread_name;
    int depth;                /* 0 for the root */
    int64_t start_ns;         /* first start, from the frame's start */
    uint64_t total_ns;        /* inclusive: sum over instances */
    uint64_t self_ns;         /* total minus its control children */
    double percent_of_parent; /* total / parent's total * 100; 100 at root */
    uint64_t count;           /* instances merged into this row */
    uint64_t min_ns;
    uint64_t max_ns;
    const tlog_site *site;    /* call site of the first instance */
    const char *file;         /* site's file, or NULL for thread rows */
    int line;
    uint64_t site_id;         /* tlog_site_id(site), or 0 */
    unsigned flags;           /* tlog_node_flags */
    /* Device intervals: the scope that launched the first instance, when
     * that scope is in this frame (else NULL), and its call site, always. */
    const tlog_node *launcher;
    const tlog_site *launch_site;
    const char *device;       /* device name, or NULL for host rows */
    uint32_t queue;           /* 1-based queue number on that device, or 0 */
    /* Rows of a frame from tlog_frame_reduce (one input per rank): the
     * row's total on each rank, a rank without the row counting as 0.
     * total_ns and count are sums over the ranks. All 0 for other frames. */
    uint32_t ranks;           /* ranks that have this row */
    uint64_t rank_min_ns;
    uint64_t rank_max_ns;
    double rank_mean_ns;      /* over all ranks of the reduction */
    double imbalance;         /* rank_max_ns / rank_mean_ns: 1 is balanced */
} tlog_node_info;

/* TLOG_EINVAL for a NULL node. */
TLOG_API int tlog_node_get_info(const tlog_node *node, tlog_node_info *out) TLOG_NOEXCEPT;

/* What `visit` returns to go on past the node without visiting its
 * subtree (a dashboard's collapsed row). */
#define TLOG_WALK_SKIP_CHILDREN 0x7fffffff

/*
 * Calls `visit` for every node in depth-first order, parents first. A return
 * of TLOG_WALK_SKIP_CHILDREN skips the node's subtree; any other non-zero
 * return stops the walk and is returned. TLOG_EINVAL for a NULL frame or
 * visit.
 */
typedef int (*tlog_visit_fn)(void *user, const tlog_node *node,
                             const tlog_node_info *info);
TLOG_API int tlog_frame_walk(const tlog_frame *frame, tlog_visit_fn visit,
                             void *user) TLOG_NOEXCEPT;

/* One recorded instance, in the order scopes began per thread. */
typedef struct tlog_instance {
    size_t size;
    const tlog_node *node;    /* the merged row it belongs to */
    uint32_t thread;
    int64_t start_ns;         /* from the frame's start */
    uint64_t duration_ns;
    const tlog_node *launcher; /* device intervals: the launching scope's
                                * row in this frame, or NULL */
    /* Device intervals: the device and queue this one ran on (a row's
     * intervals may run on several queues; tlog_node_info has the
     * first's). NULL and 0 for other instances. */
    const char *device;
    uint32_t queue;
} tlog_instance;

/* The instance at `index`; TLOG_EINVAL for a NULL frame or an index from
 * tlog_frame_info.instances on (merged frames have no instances). */
TLOG_API int tlog_frame_get_instance(const tlog_frame *frame, size_t index,
                                     tlog_instance *out) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Device timers                                                            */
/* ------------------------------------------------------------------------ */

/*
 * A device: one GPU (or the simulated device) seen through one backend,
 * created by that backend's library (timerlog/cuda.h, timerlog/sim.h) and
 * bound to one log. A device scope puts a begin and an end marker into a
 * device queue (a cudaStream_t, a simulated queue) and returns at once;
 * nothing on the recording path waits for the device.
 *
 * A device scope must begin inside a frame (some scope open on the thread,
 * or adopted work): its interval belongs to that frame, which waits in the
 * queue until the interval has been read. Where the interval shows in the
 * frame depends only on recorded times and the frame's structure, never on
 * who read the device first (doc/format.md has the rule):
 *
 *  - under the first sync scope of its frame (TIMERLOG_SYNC_SCOPE, or
 *    TIMERLOG_SYNC_QUEUE_SCOPE bound to its queue) that it was launched
 *    before the end of and that it was complete by, beside the host's own
 *    wait;
 *  - else, if it ended before the frame's root did, under the scope that
 *    launched it;
 *  - else under one `(C) Device past frame end` row of the frame, whose time
 *    is how far the device ran past the root's end.
 *
 * Markers are read without blocking at the end of sync scopes and by
 * readiness checks (tlog_frame_ready, tlog_frame_pop_ready, the stream
 * writer); tlog_dump, tlog_frame_latest, tlog_frame_pop and tlog_sync wait
 * only for work still pending.
 */
typedef struct tlog_device tlog_device;

/* Flags for tlog_device_config.flags. */
enum tlog_device_flags {
    /* Also time the host side of each device scope (the launch) as a
     * `(C) Launch "name"` row. */
    TLOG_DEVICE_LAUNCH_ROWS = 1u << 0,
    /* Subtract the calibrated empty-scope offset (tlog_device_info.
     * empty_scope_ns) from every interval. */
    TLOG_DEVICE_SUBTRACT_OFFSET = 1u << 1,
    /* Make markers only when the device is made, when a read of the device
     * finds its pool low, and in tlog_device_reserve: no background thread
     * refills this device's pool. */
    TLOG_DEVICE_NO_MARKER_THREAD = 1u << 2
};

/* Settings for a device; zero-initialised means defaults. */
typedef struct tlog_device_config {
    size_t size;
    unsigned flags;          /* tlog_device_flags; other bits: TLOG_EINVAL */
    /* Device scopes that may be in flight at once (each holds two markers
     * until resolved). Beyond it new device scopes are dropped and counted.
     * 0 selects 2048; at most 1048576 (2^20), TLOG_EINVAL beyond. */
    uint32_t max_scopes;
    /* Scopes whose markers are made at a time, never by a device scope's
     * begin: when the device is made, then whenever the pool of ready
     * markers falls to half of this, by a background thread of the log (one
     * for all its devices) and by reads of the device. A device scope that
     * finds no marker ready is dropped and counted (scopes_dropped): a
     * frame that begins more device scopes than this before its first read
     * may outrun the thread; tlog_device_reserve makes room beforehand.
     * 0 selects 64; more than max_scopes is read as max_scopes. */
    uint32_t pool_batch;
} tlog_device_config;

typedef struct tlog_device_info {
    size_t size;
    const char *backend;      /* "sim", "cuda", ... */
    const char *name;         /* the device's name: its model and its place
                               * among the runtime's devices ("model (1)":
                               * CUDA's and HIP's ordinal, the place among
                               * every driver's or platform's devices for
                               * Level Zero and OpenCL, among the instance's
                               * physical devices for Vulkan) */
    /* What an empty device scope reads, measured when the device was
     * created: the fixed cost the markers add to every interval. */
    int64_t empty_scope_ns;
    uint64_t scopes;          /* device scopes recorded */
    uint64_t scopes_dropped;  /* lost to max_scopes */
    uint64_t scopes_outside_frame; /* begun with no scope open: not timed */
    uint64_t scopes_captured; /* queue was being captured: not timed */
    uint64_t scopes_failed;   /* the device refused a marker */
    uint64_t resolved;        /* intervals resolved with a timing */
    uint64_t unresolved;      /* intervals shown unresolved */
    uint64_t pending;         /* intervals waiting to be resolved */
    uint64_t pool_scopes;     /* scopes' worth of markers created */
    uint64_t pool_free;       /* of those, free for reuse */
    uint64_t queries;         /* non-blocking marker queries */
    uint64_t waits;           /* blocking waits (forced syncs only) */
    uint64_t late;            /* resolved after their frame was read or
                               * dropped, or with no memory left to keep
                               * them: not shown anywhere */
} tlog_device_info;

/* TLOG_EINVAL for a NULL device. */
TLOG_API int tlog_device_get_info(const tlog_device *dev, tlog_device_info *out) TLOG_NOEXCEPT;

/*
 * Makes markers now, on the calling thread, until `scopes` device scopes
 * can begin with markers ready, and with half a batch more so that they do
 * not set the marker thread going (at most max_scopes in flight): for an
 * application that knows its frames begin many device scopes before their
 * first sync (a CUDA event took about 0.6 us to make on an H100, in a probe
 * outside this library). TLOG_OK when that many are ready or the pool is at
 * max_scopes; TLOG_ENOMEM when memory or the backend ran out first (what was
 * made is kept); TLOG_EINVAL for a NULL device.
 */
TLOG_API int tlog_device_reserve(tlog_device *dev, uint32_t scopes) TLOG_NOEXCEPT;

/*
 * Destroys a device: intervals still pending are marked unresolved in their
 * frames, then the markers are released. No thread may be recording on the
 * device meanwhile. NULL does nothing. tlog_destroy destroys the devices of
 * its log: do not destroy them again after it.
 */
TLOG_API void tlog_device_destroy(tlog_device *dev) TLOG_NOEXCEPT;

/* An open device scope: pass it to tlog_device_end. Members are private. */
typedef struct tlog_device_scope {
    void *slot_;
    uint64_t gen_;
} tlog_device_scope;

/*
 * Opens a device scope of `site` on `queue` (a backend queue handle; NULL
 * means the backend's default queue, see its header). Checks the site's
 * level. Returns an empty scope (and counts why) when the site is switched
 * off, no scope is open on the thread, the pool is full, the queue is being
 * captured, or the device refuses the marker; ending an empty scope does
 * nothing. A NULL dev (a device that could not be made) gives an empty scope
 * without a report; a NULL site gives one and is reported (TLOG_EINVAL) on
 * the device's log, as tlog_begin(NULL) is.
 */
TLOG_API tlog_device_scope tlog_device_begin(tlog_device *dev, void *queue,
                                             const tlog_site *site) TLOG_NOEXCEPT;

/*
 * Closes a device scope (from any thread) and empties *scope. Returns
 * TLOG_ENOTOPEN for an empty scope, a NULL one or one already ended;
 * TLOG_EDEVICE if the
 * device refused the end marker, TLOG_ECAPTURE if the queue began to be
 * captured meanwhile, or TLOG_ENOMEM: the interval then shows unresolved.
 */
TLOG_API int tlog_device_end(tlog_device_scope *scope) TLOG_NOEXCEPT;

/*
 * Ends a sync scope: a scope opened with tlog_begin(site) around the
 * application's own wait on `dev` (NULL: every device of the default log).
 * Intervals of its frame on that device that were launched before it ended
 * and complete by then show under it as `==>` rows, unless an earlier sync
 * scope of the frame took them. Reads what is done without blocking. A NULL
 * site closes nothing and is reported (TLOG_EINVAL), as by tlog_end.
 */
TLOG_API void tlog_sync_end(tlog_device *dev, const tlog_site *site) TLOG_NOEXCEPT;

/* Same as tlog_sync_end, for a wait on one queue of `dev` (NULL queue: what
 * the backend's header says NULL means): only that queue's intervals show
 * under it. With a NULL dev, the same as tlog_sync_end(NULL, site). */
TLOG_API void tlog_sync_end_queue(tlog_device *dev, void *queue,
                                  const tlog_site *site) TLOG_NOEXCEPT;

/*
 * The forced sync: waits for the device work still pending of every
 * completed frame, at most the log's sync_timeout_ns, then reads it.
 * Intervals still incomplete at the timeout are marked unresolved in their
 * frames and TLOG_ETIMEDOUT is returned (and reported); nothing else is
 * lost. It adds no row anywhere: where intervals show does not depend on it.
 */
TLOG_API int tlog_sync(tlog_log *log) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Subscribers                                                              */
/* ------------------------------------------------------------------------ */

/*
 * Subscribers are told, through callbacks, what a log records as it happens:
 * scopes beginning and ending, frames ending and device intervals being
 * resolved. With none registered, a scope pays one predictable branch for
 * them at its begin and one at its end.
 *
 * Callbacks run on the thread where the event happens, with no lock of the
 * library held, and may call the library. A scope's begin callbacks run
 * once it is open: scopes they record nest in it. Scopes a callback begins
 * and frames it completes are not reported, so callbacks never recurse; the
 * end of a scope whose begin was reported is, wherever it happens (a begin
 * callback that ends its own scope is told of that end, and subscribers
 * registered after it are told of neither), and so are device intervals
 * that a callback's call resolves. A subscriber is told of the end of
 * exactly the scopes whose begin it was told of, for as long as it stays
 * registered, so ranges it opens at begins always balance. Scopes past
 * max_depth are not reported. While any log has subscribers, the begins of
 * the other logs' scopes take a short detour (two calls), without any of
 * the reporting.
 */

/* Flags of a tlog_scope_event. */
enum tlog_scope_event_flags {
    TLOG_SCOPE_EVENT_REPAIRED = 1u << 0, /* closed by a repair rule */
    TLOG_SCOPE_EVENT_DROPPED = 1u << 1   /* not recorded (thread budget) */
};

typedef struct tlog_scope_event {
    size_t size;              /* sizeof(tlog_scope_event) of the library */
    tlog_log *log;
    const tlog_site *site;    /* name, file, function, line */
    uint64_t site_id;         /* tlog_site_id(site) */
    /* Numbers the begins of this site reported to subscribers, from 1: no
     * two in the process share a number, and on each thread they grow.
     * Threads take them in blocks of 64, so with one thread reporting the
     * site they count 1, 2, 3, ...; with several, numbers are neither in
     * the order of time nor without gaps. The end carries its begin's
     * number. */
    uint64_t instance;
    uint32_t thread;          /* id of the thread in the log */
    unsigned flags;           /* tlog_scope_event_flags (ends only) */
    /* The time the scope records. Begin: its start, read once before the
     * callbacks, which therefore run (and count) inside the scope; a scope
     * dropped for lack of budget records none, and is told the time of
     * the call. End: its end, read before the callbacks, which run after
     * the scope. */
    tlog_ticks time;
    tlog_ticks start;         /* end: the scope's start; 0 if dropped */
} tlog_scope_event;

typedef struct tlog_frame_event {
    size_t size;
    tlog_log *log;
    uint64_t serial;          /* as tlog_frame_info.serial; 0 if the frame
                               * was lost for lack of memory */
    uint32_t thread;
    const tlog_site *site;    /* the frame's root scope */
    uint64_t site_id;
    tlog_ticks start, end;
} tlog_frame_event;

/* Flags of a tlog_device_event. */
enum tlog_device_event_flags {
    TLOG_DEVICE_EVENT_UNRESOLVED = 1u << 0 /* no timing: start == end */
};

typedef struct tlog_device_event {
    size_t size;
    tlog_log *log;
    const tlog_site *site;    /* the device scope's site */
    uint64_t site_id;
    uint64_t instance;        /* numbered like scope instances, with them */
    const char *device;       /* device name */
    uint32_t queue;           /* 1-based queue number on the device */
    const tlog_site *launch_site; /* host scope open when it was launched */
    tlog_ticks start, end;    /* on the host clock, like tlog_now() */
    unsigned flags;           /* tlog_device_event_flags */
} tlog_device_event;

/* A set of callbacks; any may be NULL. Zero-initialised means none. */
typedef struct tlog_subscriber {
    size_t size;              /* sizeof(tlog_subscriber); 0 = current */
    void *user;               /* passed to every callback */
    void (*scope_begin)(void *user, const tlog_scope_event *event);
    void (*scope_end)(void *user, const tlog_scope_event *event);
    void (*frame_end)(void *user, const tlog_frame_event *event);
    void (*device_interval)(void *user, const tlog_device_event *event);
} tlog_subscriber;

typedef struct tlog_subscription tlog_subscription;

/*
 * Registers a subscriber on a log (the struct is copied). Scopes already
 * open are not reported to it. Returns TLOG_OK and sets *out, TLOG_ENOMEM,
 * or TLOG_EINVAL for a NULL subscriber or out, or a size (other than 0) that
 * does not reach past scope_begin; *out is NULL on failure. Thread-safe, also
 * while other threads record.
 */
TLOG_API int tlog_subscribe(tlog_log *log, const tlog_subscriber *subscriber,
                            tlog_subscription **out) TLOG_NOEXCEPT;

/*
 * Unregisters a subscriber, safely while other threads record: when it
 * returns, no callback of it is running or will run, so its `user` data may
 * be freed. Called from inside any subscriber callback (of any log), it
 * only stops further calls, without waiting for other threads' callbacks to
 * finish. It also waits for callbacks of other logs running at the time:
 * keep callbacks short, and never wait in one for a thread that may be
 * unsubscribing.
 * NULL does nothing. tlog_destroy unregisters and frees what is left: a
 * subscription of a destroyed log is gone, and must not be passed here.
 */
TLOG_API void tlog_unsubscribe(tlog_subscription *subscription) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Text dump                                                                */
/* ------------------------------------------------------------------------ */

/* Rows below either threshold are hidden with their subtrees, except rows
 * above an `==>` row that passes both measured against the frame (at least
 * min_ns, and min_percent of the root): a long kernel launched from a short
 * scope stays visible, with the rows that lead to it. */
typedef struct tlog_dump_options {
    size_t size;              /* sizeof(tlog_dump_options); 0 = current */
    /* Rows shorter than this are hidden. */
    uint64_t min_ns;
    /* Rows below this percent of their parent are hidden. */
    double min_percent;
    /* Statistics columns: with a summary (see "Statistics across frames"),
     * each row of a frame is followed by the statistics of its row in the
     * summary (found by its path from the root, in the group of the
     * frame's thread and root title; `-` where the summary has none), as
     * `| median 0.010000s`. NULL: no columns. */
    const tlog_summary *summary;
    /* Which columns, tlog_dump_columns; 0 selects TLOG_COLUMNS_FRAME for a
     * frame and TLOG_COLUMNS_SUMMARY for tlog_summary_dump. */
    unsigned columns;
} tlog_dump_options;

/* Columns of statistics in a dump, in this order; each is of the row's
 * total per frame. */
enum tlog_dump_columns {
    TLOG_COLUMN_MEAN = 1u << 0,
    TLOG_COLUMN_MEDIAN = 1u << 1,
    TLOG_COLUMN_P90 = 1u << 2,
    TLOG_COLUMN_P99 = 1u << 3,
    TLOG_COLUMN_MIN = 1u << 4,
    TLOG_COLUMN_MAX = 1u << 5,
    /* The row's time in this frame less its median, signed: `| +0.004000s`
     * (frames only). */
    TLOG_COLUMN_DELTA = 1u << 6,
    /* Frames that had the row: `| in 998/1000 frames`. */
    TLOG_COLUMN_FRAMES = 1u << 7
};
#define TLOG_COLUMNS_FRAME (TLOG_COLUMN_MEDIAN | TLOG_COLUMN_P99 | TLOG_COLUMN_DELTA)
#define TLOG_COLUMNS_SUMMARY                                                 \
    (TLOG_COLUMN_MEDIAN | TLOG_COLUMN_P90 | TLOG_COLUMN_P99 | TLOG_COLUMN_MIN | \
     TLOG_COLUMN_MAX)

/*
 * Prints the calling thread's newest completed frame of `log` to `out`
 * (NULL = stdout), first waiting for its device work still pending, if any:
 *
 *   > 100.00% 1.000000s | (C) Frame
 *   |-> 50.00% 0.500000s | (C) Simulation
 *   . ==> 100.00% 0.500000s | (E) Worker Thread 1
 *
 * Returns TLOG_ENOFRAME when the calling thread has no completed frame (see
 * tlog_frame_latest_of and tlog_dump_frame for other threads' frames),
 * TLOG_ENOMEM when the frame could not be resolved for lack of memory (it
 * stays, and a later call tries again), TLOG_EIO on a write error.
 */
TLOG_API int tlog_dump(tlog_log *log, FILE *out) TLOG_NOEXCEPT;

/* Prints one frame with options (NULL = show every row). TLOG_EINVAL for a
 * NULL frame. */
TLOG_API int tlog_dump_frame(const tlog_frame *frame, FILE *out,
                             const tlog_dump_options *options) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Merging, exports and reading streams back                                */
/* ------------------------------------------------------------------------ */

/*
 * One tree out of n frames: rows with the same titles and kinds along the
 * same path from the root add up (count, total, min, max); the roots merge
 * under the first frame's title; a device row keeps the device, queue and
 * launcher of the first input row it came from. The result has rows only (no
 * instances) and is released with tlog_frame_release. The inputs may be
 * released first; the rows keep the inputs' titles and call sites, so a
 * frame merged from a reader's frames, like them, is released before the
 * reader is closed. TLOG_EINVAL, with *out NULL, when frames or out is NULL, n is 0
 * or one of the frames is NULL.
 */
TLOG_API int tlog_frame_merge(const tlog_frame *const *frames, size_t n,
                              tlog_frame **out) TLOG_NOEXCEPT;

/*
 * One tree out of one frame per rank (or per run, or per thread): merged
 * like tlog_frame_merge, and each row also gets the spread of its total
 * over the inputs (tlog_node_info.ranks, rank_min_ns, rank_mean_ns,
 * rank_max_ns, imbalance). Rows only some inputs have are kept, and counted
 * in tlog_frame_info.partial_rows. tlog_dump_frame prints such a frame with
 * the per-rank mean as its time and min, max and imbalance columns. See
 * timerlog/mpi.h to reduce across the ranks of an MPI job. Fails as
 * tlog_frame_merge does.
 */
TLOG_API int tlog_frame_reduce(const tlog_frame *const *frames, size_t n,
                               tlog_frame **out) TLOG_NOEXCEPT;

/*
 * Chrome Trace Event JSON, which Perfetto and chrome://tracing open: one
 * process per rank (per log, where a rank has frames of several: "rank 0,
 * log 2"), one track per host thread and per device queue (a thread's
 * inserted timings and forced syncs get a track beside it, and slices that
 * would overlap others of their track in part, over all the frames, a lane
 * beside it), complete ("X") events in microseconds, thread and queue names
 * as "M" events, and an arrow from each launching scope to its device
 * interval. Frames read from several streams may be mixed. out NULL =
 * stdout. n = 0 writes an empty trace; a NULL frame, a NULL array with
 * n > 0, or a frame with no timeline (from tlog_frame_merge or
 * tlog_frame_reduce) gives TLOG_EINVAL, and TLOG_ENOMEM comes, before
 * anything is written.
 */
TLOG_API int tlog_export_chrome(const tlog_frame *const *frames, size_t n, FILE *out) TLOG_NOEXCEPT;

/* {"frames":[...]}: each frame's tree, every field of tlog_node_info on
 * every row, children nested. A device row of a frame with instances also
 * has "queues": every [{"device", "queue"}] its intervals ran on, by
 * device name then queue ("queue" is the first interval's). Merged and
 * reduced frames too (without "queues"); TLOG_EINVAL for a NULL frame, or
 * a NULL array with n > 0, and TLOG_ENOMEM, both before anything is
 * written. */
TLOG_API int tlog_export_json(const tlog_frame *const *frames, size_t n, FILE *out) TLOG_NOEXCEPT;

/* CSV with a header line, one line per row: rank, frame, path (titles from
 * the root, joined by " / ", each (E) title led by "(E) ", as in
 * "Frame / (E) Worker 1 / Sort"), kind, thread, count, total, min, max
 * (ns), percent of parent. A title that holds " / " or starts with "(E) "
 * makes a path that reads like another's; the JSON export nests rows and
 * keeps them apart. Merged and reduced frames too; TLOG_EINVAL as
 * tlog_export_json. */
TLOG_API int tlog_export_csv(const tlog_frame *const *frames, size_t n, FILE *out) TLOG_NOEXCEPT;

/* Reads a stream file (doc/stream.md) frame by frame. */
typedef struct tlog_reader tlog_reader;

/*
 * Opens a stream file, or a stream in memory (not copied: keep it while
 * reading). Sets *out even on failure, so that tlog_reader_error can say
 * what is wrong: TLOG_EIO when the file cannot be opened, TLOG_EFORMAT when
 * it is not a stream, TLOG_EVERSION when a newer writer made it. Close the
 * reader either way. *out is NULL after TLOG_ENOMEM, and after TLOG_EINVAL:
 * a NULL path or out, or NULL data with a size.
 */
TLOG_API int tlog_reader_open(const char *path, tlog_reader **out) TLOG_NOEXCEPT;
TLOG_API int tlog_reader_open_memory(const void *data, size_t size, tlog_reader **out) TLOG_NOEXCEPT;

/*
 * The next frame, resolved, with a reference for tlog_frame_release; it may
 * refer to the reader's call sites, so release it before closing the reader.
 * TLOG_ENOFRAME at the end (tlog_reader_error then says whether the file was
 * ended properly), TLOG_EFORMAT on damage: the frames before it were good,
 * and tlog_reader_error names the problem and its byte offset. TLOG_EINVAL
 * for a NULL reader or frame, which reads nothing.
 */
TLOG_API int tlog_reader_next(tlog_reader *reader, tlog_frame **frame) TLOG_NOEXCEPT;

/* What went wrong, with its byte offset; "" while all is well. Never NULL,
 * also for a NULL reader. */
TLOG_API const char *tlog_reader_error(const tlog_reader *reader) TLOG_NOEXCEPT;

typedef struct tlog_reader_info {
    size_t size;
    unsigned version_major, version_minor;
    int64_t rank;            /* -1 when the writer saw no MPI rank */
    uint32_t pid;
    uint64_t start_wall_ns;  /* the log's creation, ns since the Unix epoch */
    size_t sites, threads, devices;  /* described so far */
    uint64_t frames;         /* read so far */
    uint64_t bytes_read;
    int ended;               /* the end block was read */
    uint64_t end_frames;     /* from the end block: frames the writer wrote */
    uint64_t frames_lost;    /* from the end block: frames it could not */
} tlog_reader_info;

/* TLOG_EINVAL for a NULL reader. */
TLOG_API int tlog_reader_get_info(const tlog_reader *reader, tlog_reader_info *out) TLOG_NOEXCEPT;

/* What the stream described so far: call sites by index, threads (with
 * their ids, if `id` is not NULL) and devices by index; NULL past the last,
 * and for a NULL reader. */
TLOG_API const tlog_site *tlog_reader_site(const tlog_reader *reader, size_t index) TLOG_NOEXCEPT;
TLOG_API const char *tlog_reader_thread(const tlog_reader *reader, size_t index,
                                        uint32_t *id) TLOG_NOEXCEPT;
TLOG_API const char *tlog_reader_device(const tlog_reader *reader, size_t index) TLOG_NOEXCEPT;

/* NULL does nothing. */
TLOG_API void tlog_reader_close(tlog_reader *reader) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Statistics across frames                                                 */
/* ------------------------------------------------------------------------ */

/*
 * A summary keeps, for each (thread name, root title) -- a *group* -- one
 * tree of rows, each row being a path from the root (titles and kinds, as
 * frames merge their rows), and for each row, over the frames that had it:
 * how many, and the mean, minimum, maximum and quantiles of its total, its
 * self time and its count of instances per frame. Host and device rows
 * alike. Memory does not grow with the number of frames: each of those
 * three quantities is kept in a histogram of logarithmic buckets (64 per
 * power of two), and a quantile read from it is within
 * TLOG_STATS_RELATIVE_ERROR of the exact value: for n values sorted
 * x[0] <= ... <= x[n-1], the q-quantile is x[r] with r = ceil(q * n) - 1
 * (at least 0; the median of an even count is the lower middle value), and
 * the estimate e satisfies |e - x[r]| <= x[r] / 128. Values below 128 are
 * kept exactly; the minimum, maximum and mean are exact (the mean of
 * uint64 sums that saturate). A histogram holds at most 3776 buckets of 8
 * bytes, and in practice only the span its values cover: 64 buckets for
 * values within a factor of 2.
 *
 * Summaries are fed with resolved frames: a log's frames as they are
 * resolved (TLOG_CONFIG_STATS), or any frame given to tlog_summary_add --
 * frames read back with tlog_reader_next give the same statistics as the
 * live frames they were written from.
 *
 * Hitches: a frame whose root took longer than a budget, or than a
 * quantile of the recent frames of its group (tlog_summary_config), is
 * kept whole (a reference to the frame) in a ring of max_hitches, oldest
 * out first. A hitch from a reader's frame holds that frame: destroy or
 * reset the summary before closing the reader.
 *
 * A summary is not locked: one thread at a time may change it, and reading
 * functions may run together while none does. Row pointers stay valid
 * until the summary is next changed (add, merge, reset) or destroyed.
 * Large frames (4,096 rows or more) like the one before them in their group
 * are counted into their rows in parts, after the frames that follow (at
 * most 32 wait), so that each add costs alike and little; every reading
 * function first counts what waits (the first of readers running together
 * does, the others wait for it), so what is read holds every frame added.
 * What lets them wait is memory the summary holds (tlog_summary_info.bytes):
 * 160 bytes per row of such a group, and 128 more for each of a row's self
 * time and count where they are kept apart (a parent's self time, a count
 * that changed).
 * Hitch frames hold a reference, and are frames like any other: a summary
 * holding frames of a log is destroyed (or reset) before the log, and one
 * holding frames from a reader before the reader is closed.
 */
typedef struct tlog_stat_row tlog_stat_row;

#define TLOG_STATS_RELATIVE_ERROR (1.0 / 128)

/* Makes an empty summary. `config` may be NULL for defaults. TLOG_EINVAL
 * (with *out NULL) for a NULL out or a bad config: a quantile outside
 * [0, 1), or a window or hitch count past its bound. */
TLOG_API int tlog_summary_create(const tlog_summary_config *config,
                                 tlog_summary **out) TLOG_NOEXCEPT;

/* Destroys a summary and gives back its hitch frames. NULL does nothing. */
TLOG_API void tlog_summary_destroy(tlog_summary *summary) TLOG_NOEXCEPT;

/*
 * Counts a resolved frame (as the frame functions and tlog_reader_next
 * give them, or a merge) in the group of its thread name and root title,
 * and keeps it as a hitch if it is one. All or nothing: TLOG_ENOMEM leaves
 * the summary as it was. Rows past max_rows are left out and counted.
 * TLOG_EINVAL for a NULL summary or frame.
 */
TLOG_API int tlog_summary_add(tlog_summary *summary, const tlog_frame *frame) TLOG_NOEXCEPT;

/*
 * Adds what `from` holds to `into`, as if its frames had been added there
 * (rows match by group and path; histograms add up exactly), and takes
 * references to its hitches, which go after those of `into`, oldest out
 * first. The recent frames a hitch quantile looks at are not carried over.
 * All or nothing, as tlog_summary_add. TLOG_EINVAL for a NULL argument or
 * into == from.
 */
TLOG_API int tlog_summary_merge(tlog_summary *into, const tlog_summary *from) TLOG_NOEXCEPT;

/*
 * One summary out of n, one per rank (or per run): merged as
 * tlog_summary_merge does, in order, and each row also gets its spread over
 * the inputs that have it (tlog_stat_info.ranks, rank_median_mean_ns,
 * rank_p99_max_ns, rank_p99_max_rank): the mean of their medians and the
 * slowest one's p99. An input may be NULL (a rank without statistics): it
 * is left out, but keeps its index, so that indexes stay ranks. The result
 * takes the configuration of the first input, and is the caller's
 * (tlog_summary_destroy). See timerlog/mpi.h to reduce across the ranks of
 * an MPI job. TLOG_EINVAL, with *out NULL, for a NULL array or out or n of
 * 0; TLOG_ENOMEM.
 */
TLOG_API int tlog_summary_reduce(const tlog_summary *const *summaries, size_t n,
                                 tlog_summary **out) TLOG_NOEXCEPT;

/* Empties a summary (rows, counts, hitches); the configuration stays.
 * TLOG_EINVAL for NULL. */
TLOG_API int tlog_summary_reset(tlog_summary *summary) TLOG_NOEXCEPT;

/*
 * A copy of the statistics `log` keeps (NULL: the default log), made under
 * its lock, for the caller to read and destroy with tlog_summary_destroy,
 * before the log (its hitches are the log's frames): frames still waiting
 * for device work are counted once they are resolved.
 * TLOG_EINVAL, with *out NULL, for a NULL out, a log that keeps no
 * statistics (neither TLOG_CONFIG_STATS nor TIMERLOG_REPORT=stats: also
 * reported) or one inherited across fork(); TLOG_ENOMEM. Thread-safe.
 */
TLOG_API int tlog_log_summary(tlog_log *log, tlog_summary **out) TLOG_NOEXCEPT;

/* Empties the statistics of `log` (NULL: the default log), as
 * tlog_summary_reset; frames resolved from then on are counted afresh.
 * TLOG_EINVAL when the log keeps none (also reported), or was inherited
 * across fork().
 * Thread-safe. */
TLOG_API int tlog_log_summary_reset(tlog_log *log) TLOG_NOEXCEPT;

typedef struct tlog_summary_info {
    size_t size;
    size_t groups;            /* (thread name, root title) pairs */
    size_t rows;              /* over all groups, roots included */
    uint64_t frames;          /* frames counted */
    uint64_t rows_refused;    /* rows of counted frames left out past max_rows,
                               * each once a frame: a row's subtree with it */
    uint64_t hitches_seen;    /* frames found to be hitches */
    size_t hitches;           /* of those, kept now */
    size_t bytes;             /* memory the summary holds, besides hitch frames */
    uint32_t reduced_ranks;   /* from tlog_summary_reduce: its inputs; else 0 */
} tlog_summary_info;

/* TLOG_EINVAL for a NULL summary. */
TLOG_API int tlog_summary_get_info(const tlog_summary *summary,
                                   tlog_summary_info *out) TLOG_NOEXCEPT;

/* The root row of group `group` (0 to groups - 1, in order of first
 * frame); NULL past the last, and for a NULL summary. */
TLOG_API const tlog_stat_row *tlog_summary_root(const tlog_summary *summary,
                                                size_t group) TLOG_NOEXCEPT;

/* Navigation, in order of first appearance; NULL where there is no such
 * row, and for a NULL row. */
TLOG_API const tlog_stat_row *tlog_stat_row_parent(const tlog_stat_row *row) TLOG_NOEXCEPT;
TLOG_API const tlog_stat_row *tlog_stat_row_first_child(const tlog_stat_row *row) TLOG_NOEXCEPT;
TLOG_API const tlog_stat_row *tlog_stat_row_next_sibling(const tlog_stat_row *row) TLOG_NOEXCEPT;

/* One quantity of a row over the frames that had it. */
typedef struct tlog_stat_value {
    double mean;
    uint64_t min;
    uint64_t max;
    uint64_t median;          /* quantile 0.5, within TLOG_STATS_RELATIVE_ERROR */
    uint64_t p90;             /* quantile 0.9 */
    uint64_t p99;             /* quantile 0.99 */
} tlog_stat_value;

typedef struct tlog_stat_info {
    size_t size;
    const char *name;         /* the row's title */
    tlog_kind kind;
    int depth;                /* 0 for the root */
    const char *thread_name;  /* the group's thread */
    const char *device;       /* device rows: the device's name; else NULL */
    uint64_t site_id;         /* tlog_site_id of the row's first site, or 0 */
    unsigned flags;           /* tlog_node_flags any of its frames had */
    uint64_t frames;          /* frames that had this row */
    uint64_t group_frames;    /* frames of its group */
    tlog_stat_value total_ns; /* the row's total in a frame */
    tlog_stat_value self_ns;  /* its self time in a frame */
    tlog_stat_value count;    /* its instances in a frame */
    /* Summaries from tlog_summary_reduce (one input per rank): the row's
     * total over the inputs that have it. All 0 for other summaries. */
    uint32_t ranks;           /* inputs (ranks) that have this row */
    double rank_median_mean_ns; /* the mean of their medians */
    uint64_t rank_p99_max_ns; /* the largest of their p99s: the slowest rank's */
    uint32_t rank_p99_max_rank; /* which input that was (its index) */
} tlog_stat_info;

/* TLOG_EINVAL for a NULL row. */
TLOG_API int tlog_stat_row_get_info(const tlog_stat_row *row, tlog_stat_info *out) TLOG_NOEXCEPT;

/* The quantities of a row. */
typedef enum tlog_stat_of {
    TLOG_STAT_TOTAL = 0,
    TLOG_STAT_SELF = 1,
    TLOG_STAT_COUNT = 2
} tlog_stat_of;

/* Any quantile q in [0, 1] of one quantity of a row, as defined above.
 * TLOG_EINVAL for a NULL row or out, an unknown quantity or q outside
 * [0, 1]. */
TLOG_API int tlog_stat_row_quantile(const tlog_stat_row *row, tlog_stat_of of, double q,
                                    uint64_t *out) TLOG_NOEXCEPT;

/*
 * Calls `visit` for every row of every group, group by group, depth-first,
 * parents first. Return values as for tlog_frame_walk. `visit` must not
 * change the summary (add, merge, reset): the walk reads its rows. TLOG_EINVAL
 * for a NULL summary or visit.
 */
typedef int (*tlog_stat_visit_fn)(void *user, const tlog_stat_row *row,
                                  const tlog_stat_info *info);
TLOG_API int tlog_summary_walk(const tlog_summary *summary, tlog_stat_visit_fn visit,
                               void *user) TLOG_NOEXCEPT;

/* The row of `summary` for `node` of `frame`: same group, same path. NULL
 * when the summary has none, and for a NULL argument or a node not of the
 * frame. */
TLOG_API const tlog_stat_row *tlog_summary_find(const tlog_summary *summary,
                                                const tlog_frame *frame,
                                                const tlog_node *node) TLOG_NOEXCEPT;

/*
 * A statistics view of a frame: calls `visit` for every node as
 * tlog_frame_walk does, with the statistics of its row in `summary` (NULL
 * when it has none). `visit` must not change the summary (add, merge,
 * reset). TLOG_EINVAL for a NULL frame, summary or visit; TLOG_ENOMEM before
 * any call.
 */
typedef int (*tlog_frame_stat_visit_fn)(void *user, const tlog_node *node,
                                        const tlog_node_info *info,
                                        const tlog_stat_info *stats);
TLOG_API int tlog_frame_walk_stats(const tlog_frame *frame, const tlog_summary *summary,
                                   tlog_frame_stat_visit_fn visit, void *user) TLOG_NOEXCEPT;

/* Why a frame is a hitch. */
enum tlog_hitch_reasons {
    TLOG_HITCH_BUDGET = 1u << 0,   /* longer than hitch_ns */
    TLOG_HITCH_QUANTILE = 1u << 1  /* longer than the quantile of recent frames */
};

typedef struct tlog_hitch_info {
    size_t size;
    const tlog_frame *frame;  /* the whole frame, while the summary keeps it */
    const char *thread_name;
    const char *root;         /* the root's title */
    uint64_t number;          /* 1, 2, ...: hitches seen by the summary */
    uint64_t duration_ns;     /* the root's total */
    unsigned reasons;         /* tlog_hitch_reasons */
    uint64_t budget_ns;       /* hitch_ns, when it was over it; else 0 */
    uint64_t quantile_ns;     /* the quantile of recent frames it was over; else 0 */
    uint64_t median_ns;       /* its group's median frame when it was kept */
} tlog_hitch_info;

/* Hitch `index` of those kept, 0 the oldest. TLOG_EINVAL for a NULL
 * summary or out, or an index from tlog_summary_info.hitches on. */
TLOG_API int tlog_summary_hitch(const tlog_summary *summary, size_t index,
                                tlog_hitch_info *out) TLOG_NOEXCEPT;

/*
 * Prints each group's tree of statistics, after a line naming the group,
 * then one line per hitch kept with the rows that made it slow:
 *
 *   # thread "Main", root "Frame": 1000 frames; time: mean per frame, quantiles within 0.79%
 *   > 100.00% 0.016700s | median 0.016500s | p90 ... | (C) Frame
 *   |-> 60.00% 0.010020s | median 0.010000s | p90 ... | (C) Simulation
 *   # hitch 1: thread "Main", root "Frame", frame 312: 0.031000s, over the budget 0.016600s; median frame 0.016500s; slower than their median self time: Render +0.012000s, Physics +0.002500s
 *
 * (doc/format.md has the exact grammar.)
 *
 * Each row shows the mean of its total over the frames that had it, as a
 * percentage of its parent's mean, then the columns of options->columns (0:
 * TLOG_COLUMNS_SUMMARY), ` [xN]` when it ran N > 1 times in a median
 * frame and ` [in F/G frames]` when only F of its group's G frames had it;
 * a reduced summary adds the mean of the ranks' medians and the slowest
 * rank's p99. options->min_ns and min_percent hide rows by their mean; NULL
 * options print every row with the default columns; NULL out: stdout.
 * TLOG_EINVAL for a NULL summary, TLOG_ENOMEM (nothing written), TLOG_EIO
 * on a write error.
 */
TLOG_API int tlog_summary_dump(const tlog_summary *summary, FILE *out,
                               const tlog_dump_options *options) TLOG_NOEXCEPT;

/*
 * Prints hitch `index`: a line saying what it was over, its frame as
 * tlog_dump_frame prints it with statistics columns from `summary` (0
 * columns: median and delta), and the rows that made it slow: those whose
 * self time was furthest above their median self time, by at least a
 * twentieth of how much longer than the median frame it was (at most 5). NULL out: stdout.
 * TLOG_EINVAL for a NULL summary or an index past the hitches kept;
 * TLOG_ENOMEM (nothing written); TLOG_EIO.
 */
TLOG_API int tlog_summary_dump_hitch(const tlog_summary *summary, size_t index, FILE *out,
                                     const tlog_dump_options *options) TLOG_NOEXCEPT;

/*
 * {"groups":[{"thread":..,"root":..,"frames":..,"rows":[..]}],"hitches":[..]}:
 * every row with its path and every field of tlog_stat_info, children
 * nested; every hitch with its fields and the rows that made it slow.
 * NULL out: stdout. TLOG_EINVAL for a NULL summary, TLOG_ENOMEM (nothing
 * written), TLOG_EIO on a write error.
 */
TLOG_API int tlog_summary_export_json(const tlog_summary *summary, FILE *out) TLOG_NOEXCEPT;

/*
 * CSV with a header line, one line per row: thread, root, path (titles
 * from the root, joined by " / ", (E) titles led by "(E) ", as
 * tlog_export_csv writes them), kind, device, frames, then mean, min,
 * median, p90, p99 and max of total and of self time (ns) and of count.
 * NULL out: stdout. TLOG_EINVAL for a NULL summary, TLOG_ENOMEM (nothing
 * written), TLOG_EIO on a write error.
 */
TLOG_API int tlog_summary_export_csv(const tlog_summary *summary, FILE *out) TLOG_NOEXCEPT;

/* CSV of the hitches kept, oldest first: number, thread, root, rank,
 * frame serial, duration, reasons (budget, quantile), budget, quantile,
 * median frame (ns), and the rows that made it slow ("path +excess_ns",
 * paths as tlog_summary_export_csv writes them, joined by "; "). Errors
 * as tlog_summary_export_csv. */
TLOG_API int tlog_summary_export_hitches_csv(const tlog_summary *summary,
                                             FILE *out) TLOG_NOEXCEPT;

/* ------------------------------------------------------------------------ */
/* Macros                                                                   */
/* ------------------------------------------------------------------------ */

/* Private: read by the macros for the one-branch level check. */
extern TLOG_API int tlog_active_level_;

#define TIMERLOG_CAT2_(a, b) a##b
#define TIMERLOG_CAT_(a, b) TIMERLOG_CAT2_(a, b)
/* A literal-name macro keeps a pointer to its name for the process's life,
 * so the name must be a string literal (or a macro that expands to one);
 * names made at run time take TIMERLOG_SCOPE_NAMED. In C++ anything else
 * fails at compile time with a message that says so; in C a pointer or an
 * array of the function's fails as a non-constant initializer, on the line
 * that names the way out, but a static or global array compiles, and its
 * row shows whatever the array holds when the frame is read. */
#define TIMERLOG_SITE_(var, lvl, nm)                                         \
    TIMERLOG_LITERAL_(nm)                                                    \
    static const tlog_site var = {                                           \
        (nm), /* not a string literal? use TIMERLOG_SCOPE_NAMED(name) */    \
        __FILE__, __func__, __LINE__, (lvl)}
#ifdef __cplusplus
extern "C++" {
namespace timerlog {
template <class T> struct is_literal_name_ { enum { value = 0 }; };
template <size_t N> struct is_literal_name_<const char (&)[N]> { enum { value = 1 }; };
} /* namespace timerlog */
}
#define TIMERLOG_LITERAL_(nm)                                                \
    static_assert(::timerlog::is_literal_name_<decltype((nm))>::value,       \
                  "the name of TIMERLOG_SCOPE (and of the other literal-name " \
                  "macros) must be a string literal: for a name made at run " \
                  "time, use TIMERLOG_SCOPE_NAMED(name)");
#else
#define TIMERLOG_LITERAL_(nm)
#endif

/* Levels other than COARSE and FINE never pass. The macros' sites are
 * static constants: only the compare with the active level is left at run
 * time. */
#if defined(__GNUC__) || defined(__clang__)
#define TIMERLOG_ON_(site)                                                   \
    __builtin_expect((site).level >= TLOG_LEVEL_COARSE &&                    \
                         (site).level <=                                     \
                             __atomic_load_n(&tlog_active_level_, __ATOMIC_RELAXED), 1)
#else
#define TIMERLOG_ON_(site)                                                   \
    ((site).level >= TLOG_LEVEL_COARSE && (site).level <= tlog_active_level_)
#endif

static inline const tlog_site *tlog_scope_enter_(const tlog_site *site)
{
    if (TIMERLOG_ON_(*site)) {
        tlog_begin(site);
        return site;
    }
    return TIMERLOG_NULL_;
}

#if defined(TIMERLOG_DISABLE)

#define TIMERLOG_SCOPE_L(lvl, name) ((void)0)
#define TIMERLOG_SCOPE_NAMED_L(lvl, name) ((void)sizeof(name)) /* no evaluation */
#define TIMERLOG_BEGIN_L(lvl, name) ((void)0)
#define TIMERLOG_END_L(lvl, name) ((void)0)
#define TIMERLOG_ADOPT(token) ((void)sizeof(token)) /* no evaluation */
#define TIMERLOG_DEVICE_SCOPE_L(lvl, dev, queue, name)                       \
    ((void)sizeof(dev), (void)sizeof(queue))
#define TIMERLOG_SYNC_SCOPE_L(lvl, dev, name) ((void)sizeof(dev))
#define TIMERLOG_SYNC_QUEUE_SCOPE_L(lvl, dev, queue, name)                   \
    ((void)sizeof(dev), (void)sizeof(queue))

#else

#define TIMERLOG_BEGIN_L(lvl, name)                                          \
    do {                                                                     \
        TIMERLOG_SITE_(tlog_site_b_, lvl, name);                             \
        if (TIMERLOG_ON_(tlog_site_b_)) tlog_begin(&tlog_site_b_);           \
    } while (0)
#define TIMERLOG_END_L(lvl, name)                                            \
    do {                                                                     \
        TIMERLOG_SITE_(tlog_site_e_, lvl, name);                             \
        if (TIMERLOG_ON_(tlog_site_e_)) tlog_end(&tlog_site_e_);             \
    } while (0)

#define TIMERLOG_SCOPE_L(lvl, name)                                          \
    TIMERLOG_SCOPE_ID_(__COUNTER__, lvl, name)
#define TIMERLOG_SCOPE_ID_(id, lvl, name)                                    \
    TIMERLOG_SCOPE_VARS_(TIMERLOG_CAT_(tlog_site_, id),                      \
                         TIMERLOG_CAT_(tlog_guard_, id), lvl, name)
#define TIMERLOG_SCOPE_NAMED_L(lvl, name)                                    \
    TIMERLOG_NAMED_ID_(__COUNTER__, lvl, name)
#define TIMERLOG_NAMED_ID_(id, lvl, name)                                    \
    TIMERLOG_NAMED_VARS_(TIMERLOG_CAT_(tlog_site_, id),                      \
                         TIMERLOG_CAT_(tlog_guard_, id), lvl, name)
/* The call site of a run-time name, and the site its refused names get. */
#define TIMERLOG_NAMED_SITE_(site, lvl)                                      \
    static const tlog_site site = {"(other names)", __FILE__, __func__,      \
                                   __LINE__, (lvl)}
#define TIMERLOG_ADOPT(token)                                                \
    TIMERLOG_ADOPT_ID_(TIMERLOG_CAT_(tlog_adopt_, __COUNTER__), token)
#define TIMERLOG_DEVICE_SCOPE_L(lvl, dev, queue, name)                       \
    TIMERLOG_DEVICE_GUARD_(lvl, tlog_device_enter_, name, dev, queue)
/* A device scope that ends with the enclosing block, for this header and
 * the backends' (TIMERLOG_CUDA_SCOPE, ...): `enter` is called with the
 * remaining arguments and the site, and gives the scope (an empty one when
 * the level is off). */
#define TIMERLOG_DEVICE_GUARD_(lvl, enter, name, ...)                        \
    TIMERLOG_DEVICE_GUARD_ID_(__COUNTER__, lvl, enter, name, __VA_ARGS__)
#define TIMERLOG_DEVICE_GUARD_ID_(id, lvl, enter, name, ...)                 \
    TIMERLOG_DEVICE_VARS_(TIMERLOG_CAT_(tlog_site_, id),                     \
                          TIMERLOG_CAT_(tlog_guard_, id), lvl, enter, name, __VA_ARGS__)
#define TIMERLOG_SYNC_SCOPE_L(lvl, dev, name)                                \
    TIMERLOG_SYNC_ID_(__COUNTER__, lvl, dev, name)
#define TIMERLOG_SYNC_ID_(id, lvl, dev, name)                                \
    TIMERLOG_SYNC_VARS_(TIMERLOG_CAT_(tlog_site_, id),                       \
                        TIMERLOG_CAT_(tlog_guard_, id), lvl, dev, name)
#define TIMERLOG_SYNC_QUEUE_SCOPE_L(lvl, dev, queue, name)                   \
    TIMERLOG_SYNC_QUEUE_ID_(__COUNTER__, lvl, dev, queue, name)
#define TIMERLOG_SYNC_QUEUE_ID_(id, lvl, dev, queue, name)                   \
    TIMERLOG_SYNC_QUEUE_VARS_(TIMERLOG_CAT_(tlog_site_, id),                 \
                              TIMERLOG_CAT_(tlog_guard_, id), lvl, dev, queue, name)

static inline tlog_device_scope tlog_device_enter_(tlog_device *dev, void *queue,
                                                   const tlog_site *site)
{
    tlog_device_scope none = {TIMERLOG_NULL_, 0};
    return TIMERLOG_ON_(*site) ? tlog_device_begin(dev, queue, site) : none;
}

/* Called by TIMERLOG_SCOPE_NAMED once the level check has passed. */
static inline const tlog_site *tlog_named_begin_(const tlog_site *at, const char *name)
{
    const tlog_site *site = tlog_site_named(at, name);
    tlog_begin(site);
    return site;
}

#ifdef __cplusplus
} /* extern "C" */
namespace timerlog {
/* Ends the scope when it goes out of scope; what TIMERLOG_SCOPE uses in C++. */
class scope_guard {
public:
    explicit scope_guard(const tlog_site *site) noexcept
        : site_(tlog_scope_enter_(site)) {}
    ~scope_guard() { if (site_) tlog_end(site_); }
    scope_guard(const scope_guard &) = delete;
    scope_guard &operator=(const scope_guard &) = delete;
private:
    const tlog_site *site_;
};
/* Ends a scope that TIMERLOG_SCOPE_NAMED began (NULL: none was). */
class named_guard {
public:
    explicit named_guard(const tlog_site *begun) noexcept : site_(begun) {}
    ~named_guard() { if (site_) tlog_end(site_); }
    named_guard(const named_guard &) = delete;
    named_guard &operator=(const named_guard &) = delete;
private:
    const tlog_site *site_;
};
/* The name TIMERLOG_SCOPE_NAMED takes: a C string, or anything with
 * c_str() (std::string), read before the full expression ends. */
inline const char *name_of_(const char *name) noexcept { return name; }
template <class S>
inline auto name_of_(const S &name) noexcept -> decltype(name.c_str())
{
    return name.c_str();
}
/* Works for a hand-off token while in scope; what TIMERLOG_ADOPT uses. */
class adopt_guard {
public:
    explicit adopt_guard(const tlog_token &token) noexcept
        : token_(token), ok_(tlog_adopt_begin(&token_) == TLOG_OK) {}
    ~adopt_guard() { if (ok_) tlog_adopt_end(&token_); }
    adopt_guard(const adopt_guard &) = delete;
    adopt_guard &operator=(const adopt_guard &) = delete;
private:
    tlog_token token_;
    bool ok_;
};
/* Ends a device scope when it goes out of scope. */
class device_guard {
public:
    device_guard(tlog_device *dev, void *queue, const tlog_site *site) noexcept
        : scope_(tlog_device_enter_(dev, queue, site)) {}
    /* Takes over a scope opened by a backend's own begin (CUDA, HIP, ...). */
    explicit device_guard(const tlog_device_scope &scope) noexcept : scope_(scope) {}
    ~device_guard() { if (scope_.slot_) tlog_device_end(&scope_); }
    device_guard(const device_guard &) = delete;
    device_guard &operator=(const device_guard &) = delete;
private:
    tlog_device_scope scope_;
};
/* A sync scope: what TIMERLOG_SYNC_SCOPE and, bound to one queue,
 * TIMERLOG_SYNC_QUEUE_SCOPE use. */
class sync_guard {
public:
    sync_guard(tlog_device *dev, const tlog_site *site) noexcept
        : dev_(dev), queue_(nullptr), bound_(false), site_(tlog_scope_enter_(site)) {}
    sync_guard(tlog_device *dev, void *queue, const tlog_site *site) noexcept
        : dev_(dev), queue_(queue), bound_(true), site_(tlog_scope_enter_(site)) {}
    ~sync_guard()
    {
        if (site_ && bound_) tlog_sync_end_queue(dev_, queue_, site_);
        else if (site_) tlog_sync_end(dev_, site_);
    }
    sync_guard(const sync_guard &) = delete;
    sync_guard &operator=(const sync_guard &) = delete;
private:
    tlog_device *dev_;
    void *queue_;
    bool bound_;
    const tlog_site *site_;
};
} /* namespace timerlog */
extern "C" {
#define TIMERLOG_SCOPE_VARS_(site, guard, lvl, name)                         \
    TIMERLOG_SITE_(site, lvl, name);                                         \
    ::timerlog::scope_guard guard(&site)
#define TIMERLOG_NAMED_VARS_(site, guard, lvl, name)                         \
    TIMERLOG_NAMED_SITE_(site, lvl);                                         \
    ::timerlog::named_guard guard(TIMERLOG_ON_(site)                         \
        ? tlog_named_begin_(&site, ::timerlog::name_of_(name)) : nullptr)
#define TIMERLOG_ADOPT_ID_(guard, token) ::timerlog::adopt_guard guard(token)
#define TIMERLOG_DEVICE_VARS_(site, guard, lvl, enter, name, ...)           \
    TIMERLOG_SITE_(site, lvl, name);                                         \
    ::timerlog::device_guard guard(enter(__VA_ARGS__, &site))
#define TIMERLOG_SYNC_VARS_(site, guard, lvl, dev, name)                     \
    TIMERLOG_SITE_(site, lvl, name);                                         \
    ::timerlog::sync_guard guard(dev, &site)
#define TIMERLOG_SYNC_QUEUE_VARS_(site, guard, lvl, dev, queue, name)        \
    TIMERLOG_SITE_(site, lvl, name);                                         \
    ::timerlog::sync_guard guard(dev, queue, &site)
#else
static inline void tlog_scope_exit_(const tlog_site *const *guard)
{
    if (*guard) tlog_end(*guard);
}
static inline void tlog_adopt_exit_(const tlog_token *token)
{
    if (token->thread) tlog_adopt_end(token);
}
static inline tlog_token tlog_adopt_enter_(tlog_token token)
{
    if (tlog_adopt_begin(&token) != TLOG_OK) token.thread = 0;
    return token;
}
#define TIMERLOG_SCOPE_VARS_(site, guard, lvl, name)                         \
    TIMERLOG_SITE_(site, lvl, name);                                         \
    __attribute__((cleanup(tlog_scope_exit_), unused)) const tlog_site *guard =      \
        tlog_scope_enter_(&site)
#define TIMERLOG_NAMED_VARS_(site, guard, lvl, name)                         \
    TIMERLOG_NAMED_SITE_(site, lvl);                                         \
    __attribute__((cleanup(tlog_scope_exit_), unused)) const tlog_site *guard =      \
        TIMERLOG_ON_(site) ? tlog_named_begin_(&site, (name)) : (const tlog_site *)0
#define TIMERLOG_ADOPT_ID_(guard, token)                                     \
    __attribute__((cleanup(tlog_adopt_exit_), unused)) tlog_token guard =            \
        tlog_adopt_enter_(token)
static inline void tlog_device_exit_(tlog_device_scope *scope)
{
    if (scope->slot_) tlog_device_end(scope);
}
typedef struct tlog_sync_guard_ {
    tlog_device *dev;
    void *queue;
    int bound;
    const tlog_site *site;
} tlog_sync_guard_;
static inline tlog_sync_guard_ tlog_sync_enter_(tlog_device *dev, void *queue, int bound,
                                                const tlog_site *site)
{
    tlog_sync_guard_ guard = {dev, queue, bound, tlog_scope_enter_(site)};
    return guard;
}
static inline void tlog_sync_exit_(const tlog_sync_guard_ *guard)
{
    if (guard->site && guard->bound) tlog_sync_end_queue(guard->dev, guard->queue, guard->site);
    else if (guard->site) tlog_sync_end(guard->dev, guard->site);
}
#define TIMERLOG_DEVICE_VARS_(site, guard, lvl, enter, name, ...)           \
    TIMERLOG_SITE_(site, lvl, name);                                         \
    __attribute__((cleanup(tlog_device_exit_), unused)) tlog_device_scope guard =    \
        enter(__VA_ARGS__, &site)
#define TIMERLOG_SYNC_VARS_(site, guard, lvl, dev, name)                     \
    TIMERLOG_SITE_(site, lvl, name);                                         \
    __attribute__((cleanup(tlog_sync_exit_), unused)) tlog_sync_guard_ guard =       \
        tlog_sync_enter_(dev, (void *)0, 0, &site)
#define TIMERLOG_SYNC_QUEUE_VARS_(site, guard, lvl, dev, queue, name)        \
    TIMERLOG_SITE_(site, lvl, name);                                         \
    __attribute__((cleanup(tlog_sync_exit_), unused)) tlog_sync_guard_ guard =       \
        tlog_sync_enter_(dev, queue, 1, &site)
#endif

#endif /* TIMERLOG_DISABLE */

/* A scope of level 1 (coarse) that ends with the enclosing block. `name`
 * must be a string literal: the site keeps a pointer to it. */
#define TIMERLOG_SCOPE(name) TIMERLOG_SCOPE_L(TLOG_LEVEL_COARSE, name)
/*
 * A scope of level 1 whose name is made at run time: any `const char *`
 * expression (in C++ also anything with c_str(), such as a std::string),
 * evaluated only when the level is active. The name is copied, so its
 * buffer may be reused or freed as soon as the scope has begun. The same
 * name at the same call site is always the same site, and rows merge by
 * title as usual. Names come from one bounded table per process (see
 * TLOG_RUNTIME_NAMES_MAX): past it, new names are timed under the call
 * site's "(other names)" row, counted in tlog_names_info.refused and
 * reported once. Costs one call and a compare of the name with the last
 * one the thread gave this call site; another name also costs a hash and a
 * lock-free read of the table (doc/guide.md has figures).
 * TIMERLOG_SCOPE_NAMED_L takes a level first, like TIMERLOG_SCOPE_L.
 */
#define TIMERLOG_SCOPE_NAMED(name) TIMERLOG_SCOPE_NAMED_L(TLOG_LEVEL_COARSE, name)
/* Explicit pairs; the end names the same title as the begin. */
#define TIMERLOG_BEGIN(name) TIMERLOG_BEGIN_L(TLOG_LEVEL_COARSE, name)
#define TIMERLOG_END(name) TIMERLOG_END_L(TLOG_LEVEL_COARSE, name)
/* A device scope on `queue` of `dev` that ends with the enclosing block. */
#define TIMERLOG_DEVICE_SCOPE(dev, queue, name)                              \
    TIMERLOG_DEVICE_SCOPE_L(TLOG_LEVEL_COARSE, dev, queue, name)
/* A sync scope around the application's own wait on `dev` (NULL: every
 * device of the default log); ends with the enclosing block. */
#define TIMERLOG_SYNC_SCOPE(dev, name)                                       \
    TIMERLOG_SYNC_SCOPE_L(TLOG_LEVEL_COARSE, dev, name)
/* A sync scope around a wait on one queue of `dev` (a cudaStream_t, a
 * hipStream_t, a Level Zero command list, a simulated queue): it shows only
 * that queue's intervals. */
#define TIMERLOG_SYNC_QUEUE_SCOPE(dev, queue, name)                          \
    TIMERLOG_SYNC_QUEUE_SCOPE_L(TLOG_LEVEL_COARSE, dev, queue, name)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIMERLOG_TIMERLOG_H */
