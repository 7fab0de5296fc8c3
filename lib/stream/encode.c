/*
 * Encoding resolved frames as stream blocks (doc/stream.md): each call site,
 * thread name and device is described once, before the first frame that
 * refers to it; a frame is its rows in tree order, then its instances.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "encode.h"
#include "map.h"
#include "util.h"
#include "exchange.h"
#include "format.h"
#include "frame.h"
#include "tree.h"

/* ------------------------------------------------------------------------ */
/* Bytes                                                                    */
/* ------------------------------------------------------------------------ */

/* Room for n more bytes (4 KiB at least); false (and `failed` set) if
 * memory ran out. */
static bool reserve(tlog_bytes *b, size_t n)
{
    if (b->failed)
        return false;
    size_t need = b->len + n;
    if (!TLOG_GROW(b->data, b->cap, need < 4096 ? 4096 : need))
        b->failed = true;
    return !b->failed;
}

static uint8_t *grow(tlog_bytes *b, size_t n)
{
    if (!reserve(b, n))
        return NULL;
    uint8_t *p = b->data + b->len;
    b->len += n;
    return p;
}

static void put_u8(tlog_bytes *b, uint8_t v)
{
    uint8_t *p = grow(b, 1);
    if (p)
        *p = v;
}

static void put_u32(tlog_bytes *b, uint32_t v)
{
    uint8_t *p = grow(b, 4);
    if (p)
        tlog_put_u32_(p, v);
}

static void put_u64(tlog_bytes *b, uint64_t v)
{
    uint8_t *p = grow(b, 8);
    if (p)
        tlog_put_u64_(p, v);
}

/* A string longer than a string's most is cut, at a character's start so
 * that its UTF-8 stays whole, and counted. */
static void put_str(tlog_bytes *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > TLOG_STREAM_STRING_MAX) {
        n = TLOG_STREAM_STRING_MAX;
        while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
        b->cut++;
    }
    uint8_t *p = grow(b, 2 + n);
    if (p) {
        tlog_put_u16_(p, (uint16_t)n);
        if (n)   /* a site may have no file or function: s is then NULL */
            memcpy(p + 2, s, n);
    }
}

static size_t block_begin(tlog_bytes *b, uint32_t type)
{
    size_t at = b->len;
    put_u32(b, type);
    put_u32(b, 0);
    return at;
}

static void block_end(tlog_bytes *b, size_t at)
{
    if (b->failed)
        return;
    tlog_put_u32_(b->data + at + 4, (uint32_t)(b->len - at - TLOG_BLOCK_HEAD));
    uint32_t crc = tlog_crc32_(0, b->data + at, b->len - at);
    put_u32(b, crc);
}

/* ------------------------------------------------------------------------ */
/* What the stream has described                                            */
/* ------------------------------------------------------------------------ */

/* Index of `key` in the map, or TLOG_STREAM_NONE. */
static uint32_t map_find(const tlog_map *m, const void *key)
{
    uint32_t i;
    return tlog_map_get_(m, (uintptr_t)key, &i) ? i : TLOG_STREAM_NONE;
}

static size_t str_bytes(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return 2 + (n > TLOG_STREAM_STRING_MAX ? TLOG_STREAM_STRING_MAX : n);
}

/* A description goes into `seen` only with its whole block in `b`: a frame
 * that runs out of memory leaves the descriptions before it complete, and
 * nothing described that was not written. */
static bool room_for_block(tlog_bytes *b, size_t payload)
{
    return reserve(b, TLOG_BLOCK_HEAD + payload + 4);
}

/* A new index for `key`, whose description of `payload` bytes the caller
 * writes next; TLOG_STREAM_NONE (and `b` failed) if memory ran out. */
static uint32_t map_add(tlog_map *m, tlog_bytes *b, const void *key, size_t payload)
{
    uint32_t i = (uint32_t)m->count;
    if (!room_for_block(b, payload) || !tlog_map_put_(m, (uintptr_t)key, i)) {
        b->failed = true;
        return TLOG_STREAM_NONE;
    }
    return i;
}

void tlog_seen_free_(tlog_seen *s)
{
    tlog_map_free_(&s->sites);
    tlog_map_free_(&s->devices);
    free(s->threads);
    memset(s, 0, sizeof *s);
}

static uint32_t site_index(tlog_seen *seen, tlog_bytes *b, const tlog_site *site)
{
    if (!site)
        return TLOG_STREAM_NONE;
    uint32_t i = map_find(&seen->sites, site);
    if (i != TLOG_STREAM_NONE)
        return i;
    i = map_add(&seen->sites, b, site, 4 + 8 + 4 + 1 + str_bytes(site->name) +
                                           str_bytes(site->file) + str_bytes(site->function));
    if (i == TLOG_STREAM_NONE)
        return i;
    size_t at = block_begin(b, TLOG_BLOCK_SITE);
    put_u32(b, i);
    put_u64(b, tlog_site_id(site));
    put_u32(b, (uint32_t)site->line);
    put_u8(b, (uint8_t)site->level);
    put_str(b, site->name);
    put_str(b, site->file);
    put_str(b, site->function);
    block_end(b, at);
    return i;
}

static uint32_t device_index(tlog_seen *seen, tlog_bytes *b, const char *device)
{
    if (!device)
        return TLOG_STREAM_NONE;
    uint32_t i = map_find(&seen->devices, device);
    if (i != TLOG_STREAM_NONE)
        return i;
    i = map_add(&seen->devices, b, device, 4 + str_bytes(device));
    if (i == TLOG_STREAM_NONE)
        return i;
    size_t at = block_begin(b, TLOG_BLOCK_DEVICE);
    put_u32(b, i);
    put_str(b, device);
    block_end(b, at);
    return i;
}

/* Describes thread `id` again whenever its name changes. */
static void note_thread(tlog_seen *seen, tlog_bytes *b, uint32_t id, const char *name)
{
    if (id == 0 || !name)
        return;
    if (id >= seen->nthreads) {
        size_t had = seen->nthreads;
        if (!TLOG_GROW(seen->threads, seen->nthreads, (size_t)id + 1)) {
            b->failed = true;
            return;
        }
        memset(seen->threads + had, 0, (seen->nthreads - had) * sizeof *seen->threads);
    }
    if (seen->threads[id][0] && strncmp(seen->threads[id], name, TLOG_NAME_MAX - 1) == 0)
        return;
    if (!room_for_block(b, 4 + str_bytes(name)))
        return;
    snprintf(seen->threads[id], TLOG_NAME_MAX, "%s", name);
    size_t at = block_begin(b, TLOG_BLOCK_THREAD);
    put_u32(b, id);
    put_str(b, name);
    block_end(b, at);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

static void describe(tlog_seen *seen, tlog_bytes *b, const tlog_frame *f)
{
    note_thread(seen, b, f->thread, f->thread_name);
    /* Every thread that handed the frame work: a row merges the work of
     * threads of one name, whose ids its node names only the first of. */
    for (size_t k = 0; f->worker_threads && k < f->nworker_names; k++)
        note_thread(seen, b, f->worker_threads[k], f->worker_names[k]);
    for (size_t d = 0; d < f->device_rows; d++)
        device_index(seen, b, f->inst_devs[d].device);
    for (size_t i = 0; i < f->nnodes; i++) {
        const tlog_node *n = &f->nodes[i];
        site_index(seen, b, n->site);
        if (n->dev) {
            site_index(seen, b, n->dev->launch_site);
            device_index(seen, b, n->dev->device);
        } else if (n->thread != f->thread && !n->site) {
            note_thread(seen, b, n->thread, n->thread_name);
        }
    }
}

/* A node's index; nodes are numbered in tree order (tree.h), which is the
 * order rows are written in and the reader rebuilds. */
static uint32_t index_of(const tlog_frame *f, const tlog_node *n)
{
    return n ? (uint32_t)(n - f->nodes) : TLOG_STREAM_NONE;
}

/* A varint of an index that may be NONE: 0 for none, else index + 1. */
static uint64_t index_plus_one(uint32_t i)
{
    return i == TLOG_STREAM_NONE ? 0 : (uint64_t)i + 1;
}

static void put_var(tlog_bytes *b, uint64_t v)
{
    if (reserve(b, TLOG_VARINT_MAX))
        b->len += tlog_put_varint_(b->data + b->len, v);
}

static void put_node(tlog_seen *seen, tlog_bytes *b, const tlog_frame *f, const tlog_node *n)
{
    uint32_t i = index_of(f, n);
    put_var(b, n->parent ? i - index_of(f, n->parent) : 0);
    put_var(b, n->site ? index_plus_one(map_find(&seen->sites, n->site)) : 0);
    put_str(b, n->name);
    put_u8(b, n->kind);
    put_u8(b, n->flags);
    put_var(b, n->thread);
    put_str(b, n->thread_name);
    put_var(b, tlog_zigzag_(n->start_ns));
    put_var(b, n->total_ns);
    put_var(b, n->self_ns);
    put_var(b, n->min_ns);
    put_var(b, n->max_ns);
    put_var(b, n->count);
    if (!(n->flags & TLOG_NODE_DEVICE))
        return;
    const tlog_node_dev *d = n->dev;
    put_var(b, d ? index_plus_one(index_of(f, d->launcher)) : 0);
    put_var(b, d && d->launch_site ? index_plus_one(map_find(&seen->sites, d->launch_site))
                                   : 0);
    put_var(b, d && d->device ? index_plus_one(map_find(&seen->devices, d->device)) : 0);
    put_var(b, d ? d->queue : 0);
}

/* An instance: its row and two flags in one varint, its start as the
 * difference from the instance before (instances come in the order scopes
 * began, so that is small), its duration, then its thread if not the
 * frame's and its launcher if it has one. */
enum { INST_MAX_BYTES = 5 * TLOG_VARINT_MAX };

static size_t put_instance(uint8_t *p, const tlog_inst *in, uint32_t frame_thread,
                           uint32_t launcher, int64_t *last_start)
{
    uint64_t tag = (uint64_t)in->node << 2;
    tag |= in->thread != frame_thread ? TLOG_INST_OTHER_THREAD : 0;
    tag |= launcher != TLOG_STREAM_NONE ? TLOG_INST_LAUNCHER : 0;
    /* Wrapping difference: the reader adds it back the same way. */
    int64_t delta = (int64_t)((uint64_t)in->start_ns - (uint64_t)*last_start);
    *last_start = in->start_ns;
    size_t n = tlog_put_varint_(p, tag);
    n += tlog_put_varint_(p + n, tlog_zigzag_(delta));
    n += tlog_put_varint_(p + n, in->duration_ns);
    if (tag & TLOG_INST_OTHER_THREAD)
        n += tlog_put_varint_(p + n, in->thread);
    if (tag & TLOG_INST_LAUNCHER)
        n += tlog_put_varint_(p + n, launcher);
    return n;
}

static void put_instances(tlog_bytes *b, const tlog_frame *f)
{
    size_t dev = 0;
    int64_t last_start = 0;
    for (size_t k = 0; k < f->ninsts; k++) {
        uint32_t launcher = TLOG_STREAM_NONE;
        if (dev < f->device_rows && f->inst_devs[dev].inst == k) {
            uint32_t l = f->inst_devs[dev++].launcher;
            launcher = l == UINT32_MAX ? TLOG_STREAM_NONE : l;
        }
        if (!reserve(b, INST_MAX_BYTES))
            return;
        b->len += put_instance(b->data + b->len, &f->insts[k], f->thread, launcher, &last_start);
    }
}

/* The instances of device rows, which a reader takes for device intervals:
 * the frame's device intervals, and a host execution entry that shares a
 * device row's title and scope. */
static uint64_t device_row_instances(const tlog_frame *f)
{
    if (!f->device_rows)
        return 0;   /* no device interval: no device row */
    uint64_t n = 0;
    for (size_t k = 0; k < f->ninsts; k++)
        n += (f->nodes[f->insts[k].node].flags & TLOG_NODE_DEVICE) != 0;
    return n;
}

/* Whether device interval d ran elsewhere than its row says (the row's
 * first interval's device and queue). */
static bool elsewhere(const tlog_frame *f, const tlog_inst_dev *d)
{
    const tlog_node_dev *row = f->nodes[f->insts[d->inst].node].dev;
    if (!row)
        return d->device || d->queue;
    return d->queue != row->queue ||
           (d->device != row->device &&
            (!d->device || !row->device || strcmp(d->device, row->device) != 0));
}

/* The QUEUES block of a frame whose device intervals did not all run
 * where their rows say, before the frame's: how many, then for each its
 * instance (the difference from the one before), its device (index plus
 * one) and its queue. */
static void put_queues(tlog_seen *seen, tlog_bytes *b, const tlog_frame *f)
{
    size_t n = 0;
    for (size_t d = 0; d < f->device_rows; d++)
        n += elsewhere(f, &f->inst_devs[d]);
    if (!n)
        return;
    size_t at = block_begin(b, TLOG_BLOCK_QUEUES);
    put_var(b, n);
    uint32_t last = 0;
    for (size_t d = 0; d < f->device_rows; d++) {
        const tlog_inst_dev *x = &f->inst_devs[d];
        if (!elsewhere(f, x))
            continue;
        put_var(b, x->inst - last);
        last = x->inst;
        put_var(b, x->device ? index_plus_one(map_find(&seen->devices, x->device)) : 0);
        put_var(b, x->queue);
    }
    block_end(b, at);
}

/* With `instances` false, the rows only (what a reduction needs). */
static int encode_frame(tlog_seen *seen, const tlog_frame *f, tlog_bytes *b, bool instances)
{
    describe(seen, b, f);
    size_t described = b->len;
    if (instances)
        put_queues(seen, b, f);
    size_t at = block_begin(b, TLOG_BLOCK_FRAME);
    put_u64(b, f->serial);
    put_u32(b, f->thread);
    put_str(b, f->thread_name);
    put_u64(b, (uint64_t)f->start_ns);
    put_u64(b, f->duration_ns);
    put_u64(b, f->dropped);
    put_u64(b, f->repaired);
    put_u64(b, instances ? device_row_instances(f) : 0);
    put_u64(b, f->device_unresolved);
    put_u32(b, (uint32_t)f->nnodes);
    put_u32(b, instances ? (uint32_t)f->ninsts : 0);
    for (size_t k = 0; k < f->nnodes; k++)
        put_node(seen, b, f, &f->nodes[k]);
    if (instances)
        put_instances(b, f);
    bool too_large = !b->failed && b->len - at - TLOG_BLOCK_HEAD > tlog_stream_block_limit_();
    block_end(b, at);
    if (!b->failed && !too_large)
        return TLOG_OK;
    b->len = described;   /* the descriptions stand; the frame is not written */
    return too_large ? TLOG_EIO : TLOG_ENOMEM;
}

int tlog_encode_frame_(tlog_seen *seen, const tlog_frame *f, tlog_bytes *b)
{
    return encode_frame(seen, f, b, true);
}

void tlog_encode_header_(uint8_t out[TLOG_STREAM_HEADER_BYTES], uint32_t rank, uint32_t pid,
                         uint64_t wall_ns)
{
    memset(out, 0, TLOG_STREAM_HEADER_BYTES);
    memcpy(out, TLOG_STREAM_MAGIC, 8);
    tlog_put_u16_(out + 8, TLOG_STREAM_MAJOR);
    tlog_put_u16_(out + 10, TLOG_STREAM_MINOR);
    tlog_put_u32_(out + 12, TLOG_STREAM_HEADER_BYTES);
    tlog_put_u32_(out + 16, rank);
    tlog_put_u32_(out + 20, pid);
    tlog_put_u64_(out + 24, wall_ns);
}

void tlog_encode_end_(tlog_bytes *b, uint64_t frames, uint64_t frames_lost)
{
    size_t at = block_begin(b, TLOG_BLOCK_END);
    put_u64(b, frames);
    put_u64(b, frames_lost);
    block_end(b, at);
}

int tlog_frame_encode_(const tlog_frame *f, void **data, size_t *len)
{
    if (!f || !data || !len || !atomic_load_explicit(&f->resolved, memory_order_acquire))
        return TLOG_EINVAL;
    tlog_bytes b = {0};
    tlog_seen seen = {0};
    uint8_t *head = grow(&b, TLOG_STREAM_HEADER_BYTES);
    if (head)
        tlog_encode_header_(head, f->rank, 0, f->wall0_ns);
    int rc = encode_frame(&seen, f, &b, false);
    tlog_encode_end_(&b, 1, 0);
    tlog_seen_free_(&seen);
    if (rc != TLOG_OK || b.failed) {
        free(b.data);
        return rc != TLOG_OK ? rc : TLOG_ENOMEM;
    }
    *data = b.data;
    *len = b.len;
    return TLOG_OK;
}

/* ------------------------------------------------------------------------ */
/* CRC-32                                                                   */
/* ------------------------------------------------------------------------ */

/* Slicing by 8: crc_table[k][i] is the CRC of byte i followed by k zero
 * bytes, so that eight bytes cost eight independent lookups instead of a
 * chain of eight. The writer runs every byte it writes through here. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (uint32_t i = 0; i < 256; i++)
            crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xff];
}

uint32_t tlog_crc32_(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&crc_once, crc_init);
    const uint32_t (*t)[256] = (const uint32_t (*)[256])crc_table;
    const uint8_t *p = data;
    crc = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint32_t lo = crc ^ tlog_get_u32_(p), hi = tlog_get_u32_(p + 4);
        crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
              t[4][lo >> 24] ^ t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
              t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    }
    while (n--)
        crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}
