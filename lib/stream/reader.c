/*
 * Reading a stream (doc/stream.md) back into frames that the tree-walk API,
 * the dump and the exports take like any other. Every length, index and
 * checksum is checked before use: damage stops the reading with a message
 * that names the problem and its byte offset, and what came before it stays
 * available.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "decode.h"
#include "format.h"
#include "frame.h"
#include "map.h"
#include "util.h"

typedef struct named {
    uint32_t id;
    char *name;
} named;

struct tlog_reader {
    FILE *fp;                     /* or: */
    const uint8_t *mem;
    size_t mem_len;
    uint64_t offset;              /* bytes consumed */
    uint8_t *block;               /* the current block, header to checksum */
    size_t block_cap;
    uint64_t block_at;            /* its offset */

    tlog_reader_info info;
    tlog_site **sites;            /* by stream index */
    size_t nsites, capsites;
    named *threads, *devices;
    size_t nthreads, capthreads, ndevices, capdevices;
    tlog_map thread_ids, device_ids;   /* id -> position in threads, devices */
    char **retired;               /* replaced names: frames may still use them */
    size_t nretired, capretired;
    uint8_t *queues;              /* a QUEUES block's payload, for the next frame */
    size_t nqueues, capqueues;
    bool has_queues;
    uint64_t total;               /* input size, when known */
    int status;                   /* TLOG_OK until the end or damage */
    char error[256];
};

static int damage(tlog_reader *r, int code, uint64_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int damage(tlog_reader *r, int code, uint64_t at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->error, sizeof r->error, "%s at byte %llu", what, (unsigned long long)at);
    r->status = code;
    return code;
}

/* ------------------------------------------------------------------------ */
/* Bytes in                                                                 */
/* ------------------------------------------------------------------------ */

/* Reads exactly n bytes to dst; fewer means the input ended. */
static size_t take(tlog_reader *r, void *dst, size_t n)
{
    size_t got;
    if (r->fp) {
        got = fread(dst, 1, n, r->fp);
    } else {
        size_t left = r->mem_len - (size_t)r->offset;
        got = n < left ? n : left;
        if (got)
            memcpy(dst, r->mem + r->offset, got);
    }
    r->offset += got;
    return got;
}

static char *dup_str(tlog_cursor *c)
{
    size_t n;
    const char *s = tlog_read_str_(c, &n);
    char *out = tlog_malloc_(n + 1);
    if (out) {
        memcpy(out, s, n);
        out[n] = '\0';
    }
    return out;
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                  */
/* ------------------------------------------------------------------------ */

static int read_header(tlog_reader *r)
{
    uint8_t h[TLOG_STREAM_HEADER_BYTES];
    size_t got = take(r, h, sizeof h);
    if (got == 0)
        return damage(r, TLOG_EFORMAT, 0, "empty input, not a timerlog stream");
    if (got < 8 || memcmp(h, TLOG_STREAM_MAGIC, 8) != 0)
        return damage(r, TLOG_EFORMAT, 0, "not a timerlog stream (no \"TLOGSTRM\" magic)");
    if (got < sizeof h)
        return damage(r, TLOG_EFORMAT, got, "truncated header (%zu of %u bytes)", got,
                      TLOG_STREAM_HEADER_BYTES);
    r->info.version_major = tlog_get_u16_(h + 8);
    r->info.version_minor = tlog_get_u16_(h + 10);
    uint32_t header_bytes = tlog_get_u32_(h + 12);
    if (r->info.version_major < TLOG_STREAM_OLDEST_MAJOR ||
        r->info.version_major > TLOG_STREAM_MAJOR)
        return damage(r, r->info.version_major > TLOG_STREAM_MAJOR ? TLOG_EVERSION
                                                                   : TLOG_EFORMAT,
                      8, "stream version %u.%u; this reader reads versions %u to %u",
                      r->info.version_major, r->info.version_minor,
                      TLOG_STREAM_OLDEST_MAJOR, TLOG_STREAM_MAJOR);
    if (header_bytes < TLOG_STREAM_HEADER_BYTES || header_bytes > 65536)
        return damage(r, TLOG_EFORMAT, 12, "bad header size %u", header_bytes);
    uint32_t rank = tlog_get_u32_(h + 16);
    r->info.rank = rank == TLOG_STREAM_NONE ? -1 : (int64_t)rank;
    r->info.pid = tlog_get_u32_(h + 20);
    r->info.start_wall_ns = tlog_get_u64_(h + 24);
    /* A later minor version may have a longer header: skip the rest. */
    for (uint32_t skip = header_bytes - TLOG_STREAM_HEADER_BYTES; skip; skip--) {
        uint8_t b;
        if (take(r, &b, 1) != 1)
            return damage(r, TLOG_EFORMAT, r->offset, "truncated header");
    }
    return TLOG_OK;
}

static int open_common(tlog_reader *r, tlog_reader **out)
{
    r->info.size = sizeof r->info;
    r->info.rank = -1;
    r->status = read_header(r);
    *out = r;
    return r->status;
}

int tlog_reader_open(const char *path, tlog_reader **out)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return TLOG_EINVAL;
    tlog_reader *r = tlog_calloc_(1, sizeof *r);
    if (!r)
        return TLOG_ENOMEM;
    r->fp = fopen(path, "rb");
    /* A directory opens for reading, and then reads nothing: say what it is
     * rather than call it a damaged stream. */
    struct stat st;
    if (r->fp && fstat(fileno(r->fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(r->fp);
        r->fp = NULL;
        errno = EISDIR;
    }
    if (!r->fp) {
        snprintf(r->error, sizeof r->error, "cannot open %s: %s", path, strerror(errno));
        r->status = TLOG_EIO;
        *out = r;
        return TLOG_EIO;
    }
    /* A regular file's size bounds what a block may announce. */
    if (fseek(r->fp, 0, SEEK_END) == 0) {
        long size = ftell(r->fp);
        r->total = size > 0 ? (uint64_t)size : 0;
        rewind(r->fp);
    }
    return open_common(r, out);
}

int tlog_reader_open_memory(const void *data, size_t size, tlog_reader **out)
{
    if (out)
        *out = NULL;
    if ((!data && size) || !out)
        return TLOG_EINVAL;
    tlog_reader *r = tlog_calloc_(1, sizeof *r);
    if (!r)
        return TLOG_ENOMEM;
    r->mem = data;
    r->mem_len = size;
    r->total = size;
    return open_common(r, out);
}

void tlog_reader_close(tlog_reader *r)
{
    if (!r)
        return;
    if (r->fp)
        fclose(r->fp);
    for (size_t i = 0; i < r->nsites; i++) {
        if (!r->sites[i])
            continue;
        free((char *)r->sites[i]->name);
        free((char *)r->sites[i]->file);
        free((char *)r->sites[i]->function);
        free(r->sites[i]);
    }
    for (size_t i = 0; i < r->nthreads; i++)
        free(r->threads[i].name);
    for (size_t i = 0; i < r->ndevices; i++)
        free(r->devices[i].name);
    for (size_t i = 0; i < r->nretired; i++)
        free(r->retired[i]);
    free(r->retired);
    free(r->queues);
    tlog_map_free_(&r->thread_ids);
    tlog_map_free_(&r->device_ids);
    free(r->sites);
    free(r->threads);
    free(r->devices);
    free(r->block);
    free(r);
}

const char *tlog_reader_error(const tlog_reader *r)
{
    return r ? r->error : "no reader";
}

int tlog_reader_get_info(const tlog_reader *r, tlog_reader_info *out)
{
    if (!r)
        return TLOG_EINVAL;
    tlog_reader_info info = r->info;
    info.sites = r->nsites;
    info.threads = r->nthreads;
    info.devices = r->ndevices;
    info.bytes_read = r->offset;
    return tlog_copy_sized_(out, &info, sizeof info);
}

const tlog_site *tlog_reader_site(const tlog_reader *r, size_t index)
{
    return r && index < r->nsites ? r->sites[index] : NULL;
}

const char *tlog_reader_thread(const tlog_reader *r, size_t index, uint32_t *id)
{
    if (!r || index >= r->nthreads)
        return NULL;
    if (id)
        *id = r->threads[index].id;
    return r->threads[index].name;
}

const char *tlog_reader_device(const tlog_reader *r, size_t index)
{
    return r && index < r->ndevices ? r->devices[index].name : NULL;
}

/* ------------------------------------------------------------------------ */
/* Blocks                                                                   */
/* ------------------------------------------------------------------------ */

/* Fuzzing builds neither check nor compute block checksums: mutated blocks
 * then reach the decoder, and no time goes into a sum nobody compares. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
static const bool checksums_checked = false;
#else
static const bool checksums_checked = true;
#endif

/* Whether a block of `len` bytes from the offset lies past the file's
 * size. A file still being written grows after it is opened: the size is
 * asked again before a block is called truncated. */
static bool past_the_file(tlog_reader *r, uint32_t len)
{
    uint64_t need = (uint64_t)len + TLOG_BLOCK_TAIL;
    if (!r->total || (r->offset <= r->total && need <= r->total - r->offset))
        return false;
    struct stat st;
    if (r->fp && fstat(fileno(r->fp), &st) == 0 && (uint64_t)st.st_size > r->total)
        r->total = (uint64_t)st.st_size;
    return r->offset > r->total || need > r->total - r->offset;
}

/* Reads the next whole block, checksum checked. TLOG_ENOFRAME at a clean
 * end of input (between blocks). */
static int next_block(tlog_reader *r, uint32_t *type, tlog_cursor *payload)
{
    uint8_t head[TLOG_BLOCK_HEAD];
    r->block_at = r->offset;
    size_t got = take(r, head, sizeof head);
    if (got == 0)
        return TLOG_ENOFRAME;
    if (got < sizeof head)
        return damage(r, TLOG_EFORMAT, r->block_at, "truncated block header");
    *type = tlog_get_u32_(head);
    uint32_t len = tlog_get_u32_(head + 4);
    if (len > TLOG_STREAM_MAX_PAYLOAD || past_the_file(r, len))
        return damage(r, TLOG_EFORMAT, r->block_at,
                      "truncated block (type %u, %u bytes announced)", tlog_get_u32_(head),
                      len);
    size_t whole = TLOG_BLOCK_HEAD + (size_t)len + TLOG_BLOCK_TAIL;
    if (!TLOG_GROW(r->block, r->block_cap, whole))
        return damage(r, TLOG_ENOMEM, r->block_at, "no memory for a block of %u bytes", len);
    memcpy(r->block, head, sizeof head);
    if (take(r, r->block + sizeof head, whole - sizeof head) < whole - sizeof head)
        return damage(r, TLOG_EFORMAT, r->block_at,
                      "truncated block (type %u, %u bytes announced)", *type, len);
    uint32_t crc = tlog_get_u32_(r->block + TLOG_BLOCK_HEAD + len);
    if (checksums_checked && tlog_crc32_(0, r->block, TLOG_BLOCK_HEAD + len) != crc)
        return damage(r, TLOG_EFORMAT, r->block_at, "corrupt block (type %u): bad checksum",
                      *type);
    *payload = (tlog_cursor){.p = r->block + TLOG_BLOCK_HEAD,
                             .end = r->block + TLOG_BLOCK_HEAD + len};
    return TLOG_OK;
}

static int read_site(tlog_reader *r, tlog_cursor *c)
{
    uint32_t index = tlog_read_u32_(c);
    tlog_read_u64_(c);   /* the id: recomputed from file, function and line */
    int line = (int)tlog_read_u32_(c);
    int level = tlog_read_u8_(c);
    if (index != r->nsites)
        return damage(r, TLOG_EFORMAT, r->block_at, "site %u out of order (expected %zu)",
                      index, r->nsites);
    tlog_site *s = tlog_calloc_(1, sizeof *s);
    if (!s || !TLOG_GROW(r->sites, r->capsites, r->nsites + 1)) {
        free(s);
        return damage(r, TLOG_ENOMEM, r->block_at, "no memory for sites");
    }
    s->line = line;
    s->level = level;
    s->name = dup_str(c);
    s->file = dup_str(c);
    s->function = dup_str(c);
    r->sites[r->nsites++] = s;
    if (!s->name || !s->file || !s->function)
        return damage(r, TLOG_ENOMEM, r->block_at, "no memory for sites");
    return c->short_read ? damage(r, TLOG_EFORMAT, r->block_at, "truncated site block")
                         : TLOG_OK;
}

/* Position of `id` in its array, or SIZE_MAX. */
static size_t id_find(const tlog_map *m, uint32_t id)
{
    uint32_t pos;
    return tlog_map_get_(m, id, &pos) ? pos : SIZE_MAX;
}

/* THREAD and DEVICE blocks: an id and a name. A later name replaces one for
 * later frames; the earlier stays alive for frames already read. */
static int read_named(tlog_reader *r, tlog_cursor *c, named **arr, size_t *n, size_t *cap,
                      tlog_map *ids, const char *what)
{
    uint32_t id = tlog_read_u32_(c);
    char *name = dup_str(c);
    if (c->short_read || !name) {
        free(name);
        return damage(r, c->short_read ? TLOG_EFORMAT : TLOG_ENOMEM, r->block_at,
                      "truncated %s block", what);
    }
    size_t at = id_find(ids, id);
    if (at != SIZE_MAX) {
        if (!TLOG_GROW(r->retired, r->capretired, r->nretired + 1)) {
            free(name);
            return damage(r, TLOG_ENOMEM, r->block_at, "no memory for names");
        }
        r->retired[r->nretired++] = (*arr)[at].name;
        (*arr)[at].name = name;
        return TLOG_OK;
    }
    /* UINT32_MAX is TLOG_STREAM_NONE, "no device", in a frame's rows. */
    if (id == UINT32_MAX || !TLOG_GROW(*arr, *cap, *n + 1) ||
        !tlog_map_put_(ids, id, (uint32_t)*n)) {
        free(name);
        return damage(r, id == UINT32_MAX ? TLOG_EFORMAT : TLOG_ENOMEM, r->block_at,
                      "cannot keep %s %u", what, id);
    }
    (*arr)[(*n)++] = (named){id, name};
    return TLOG_OK;
}

static int read_end(tlog_reader *r, tlog_cursor *c)
{
    r->info.end_frames = tlog_read_u64_(c);
    r->info.frames_lost = tlog_read_u64_(c);
    if (c->short_read)
        return damage(r, TLOG_EFORMAT, r->block_at, "truncated end block");
    r->info.ended = true;
    uint8_t extra;
    if (take(r, &extra, 1))
        return damage(r, TLOG_EFORMAT, r->offset - 1, "data after the end block");
    return TLOG_ENOFRAME;
}

static const char *device_named(void *user, uint32_t index)
{
    const tlog_reader *r = user;
    size_t at = id_find(&r->device_ids, index);
    return at == SIZE_MAX ? NULL : r->devices[at].name;
}

/* A QUEUES block: kept for the frame that follows it. */
static int keep_queues(tlog_reader *r, const tlog_cursor *c)
{
    size_t n = (size_t)(c->end - c->p);
    if (!TLOG_GROW(r->queues, r->capqueues, n ? n : 1))
        return damage(r, TLOG_ENOMEM, r->block_at, "no memory for a queues block");
    memcpy(r->queues, c->p, n);
    r->nqueues = n;
    r->has_queues = true;
    return TLOG_OK;
}

static int read_frame(tlog_reader *r, const tlog_cursor *c, tlog_frame **out)
{
    tlog_decode_tables t = {r->sites, r->nsites, device_named, r, r->info.version_major};
    char why[160];
    int rc = tlog_decode_frame_(&t, c->p, (size_t)(c->end - c->p), out, why, sizeof why);
    if (rc == TLOG_OK && r->has_queues &&
        (rc = tlog_decode_queues_(&t, r->queues, r->nqueues, *out, why, sizeof why)) != TLOG_OK) {
        tlog_frame_release(*out);
        *out = NULL;
    }
    r->has_queues = false;
    if (rc == TLOG_ENOMEM)
        return damage(r, rc, r->block_at, "no memory for a frame");
    if (rc != TLOG_OK)
        return damage(r, rc, r->block_at, "%s", why);
    (*out)->rank = r->info.rank < 0 ? 0 : (uint32_t)r->info.rank;
    (*out)->wall0_ns = r->info.start_wall_ns;
    return TLOG_OK;
}

int tlog_reader_next(tlog_reader *r, tlog_frame **out)
{
    if (!r || !out)
        return TLOG_EINVAL;
    *out = NULL;
    while (r->status == TLOG_OK) {
        uint32_t type = 0;
        tlog_cursor c;
        int rc = next_block(r, &type, &c);
        if (rc == TLOG_ENOFRAME) {
            if (!r->info.ended)
                snprintf(r->error, sizeof r->error,
                         "the stream ends without its end block at byte %llu (the "
                         "writer stopped early); the frames before are complete",
                         (unsigned long long)r->offset);
            r->status = rc;
        }
        if (rc != TLOG_OK)
            return r->status;
        switch (type) {
        case TLOG_BLOCK_SITE: rc = read_site(r, &c); break;
        case TLOG_BLOCK_THREAD:
            rc = read_named(r, &c, &r->threads, &r->nthreads, &r->capthreads,
                            &r->thread_ids, "thread");
            break;
        case TLOG_BLOCK_DEVICE:
            rc = read_named(r, &c, &r->devices, &r->ndevices, &r->capdevices,
                            &r->device_ids, "device");
            break;
        case TLOG_BLOCK_FRAME:
            rc = read_frame(r, &c, out);
            if (rc == TLOG_OK) {
                r->info.frames++;
                return TLOG_OK;
            }
            break;
        case TLOG_BLOCK_QUEUES: rc = keep_queues(r, &c); break;
        case TLOG_BLOCK_END: rc = read_end(r, &c); r->status = rc; return rc;
        default: break;   /* from a later minor version: skipped */
        }
        if (rc != TLOG_OK)
            return r->status;
    }
    return r->status;
}
