/*
 * A summary as bytes, for passing statistics between processes (the ranks
 * of an MPI job): the groups, each with its rows in order (parents first),
 * each row with its figures and histograms. Little-endian, in one piece:
 *
 *   "TLSU" u32 version(2) u64 frames u64 rows_refused u64 hitches_seen
 *   u32 groups u32 rows, then per group: str thread, u32 rows in the group,
 *   then per row: u32 parent (index among the rows so far, or ~0 for the
 *   group's root, its first row), u8 kind, u8 flags, u8 self_same,
 *   str name, u8 has_device [str device], u64 site_id, u64 frames, and per
 *   quantity (total, count, self): u64 sum, min, max, u16 lo, u16 n,
 *   n x u64 counts of buckets lo..lo+n-1.
 *
 * str is a u32 length and the bytes, which hold no NUL: titles of any
 * length pass whole. Hitches are frames and stay where they are. Decoding
 * checks every count against the bytes there are and every figure against
 * the others (the counts of a histogram add up to its row's frames, its
 * first and last counts are in the buckets of the minimum and the maximum,
 * the sum lies between frames times each, the groups' frames are among the
 * summary's), so damaged bytes give TLOG_EFORMAT, never a summary that
 * reads wrong.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bytes.h"
#include "exchange.h"
#include "summary.h"

#define NONE TLOG_ROW_NONE
#define MAGIC "TLSU"
#define VERSION 2u
#define HEAD_BYTES (4 + 4 + 8 * 3 + 4 * 2)
#define STR_HEAD 4
#define MIN_ROW_BYTES (4 + 3 + STR_HEAD + 1 + 8 + 8 + 3 * (8 * 3 + 4))

/* ------------------------------------------------------------------------ */
/* Encoding                                                                 */
/* ------------------------------------------------------------------------ */

static uint8_t *put_str(uint8_t *p, const char *s)
{
    size_t n = strlen(s);
    tlog_put_u32_(p, (uint32_t)n);
    memcpy(p + STR_HEAD, s, n);
    return p + STR_HEAD + n;
}

/* What put_str writes of s, or SIZE_MAX past what a u32 length holds. */
static size_t str_bytes(const char *s)
{
    size_t n = strlen(s);
    return n > UINT32_MAX ? SIZE_MAX : STR_HEAD + n;
}

/* a + b, or SIZE_MAX past what a size_t holds. */
static size_t add_size(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* The buckets of quantity q of row r written out: none for a self time
 * that is its total. */
static uint16_t bins_written(const tlog_summary *s, uint32_t r, int q, const tlog_acc *a)
{
    return q == TLOG_ACC_SELF && s->hot[r].self_same ? 0 : a->sk.cap;
}

static size_t row_bytes(const tlog_summary *s, uint32_t r)
{
    const tlog_stat_row *x = &s->rows[r];
    size_t n = add_size(4 + 3 + 1 + 8 + 8, str_bytes(s->hot[r].name));
    if (x->device)
        n = add_size(n, str_bytes(x->device));
    for (int q = 0; q < 3; q++) {
        const tlog_acc a = tlog_row_quantity_(s, r, q);
        n = add_size(n, 8 * 3 + 4 + bins_written(s, r, q, &a) * 8u);
    }
    return n;
}

/* Rows of a group in pre-order, each with the index of its parent among
 * the rows written before it. */
static uint8_t *put_row(uint8_t *p, const tlog_summary *s, uint32_t r, uint32_t parent)
{
    const tlog_row_hot *h = &s->hot[r];
    const tlog_stat_row *x = &s->rows[r];
    tlog_put_u32_(p, parent);
    p[4] = h->kind;
    p[5] = h->flags;
    p[6] = h->self_same;
    p = put_str(p + 7, h->name);
    *p++ = x->device != NULL;
    if (x->device)
        p = put_str(p, x->device);
    tlog_put_u64_(p, x->site_id);
    tlog_put_u64_(p + 8, h->frames);
    p += 16;
    for (int q = 0; q < 3; q++) {
        const tlog_acc a = tlog_row_quantity_(s, r, q);
        uint16_t n = bins_written(s, r, q, &a);
        tlog_put_u64_(p, a.sum);
        tlog_put_u64_(p + 8, a.min);
        tlog_put_u64_(p + 16, a.max);
        tlog_put_u16_(p + 24, n ? a.sk.lo : 0);
        tlog_put_u16_(p + 26, n);
        p += 28;
        for (unsigned k = 0; k < n; k++, p += 8)
            tlog_put_u64_(p, tlog_cbins_(&a.sk)[k]);
    }
    return p;
}

/* The next row in pre-order within a group. */
static uint32_t next_row(const tlog_summary *s, uint32_t r)
{
    if (s->rows[r].first_child != NONE)
        return s->rows[r].first_child;
    while (r != NONE && s->rows[r].next_sibling == NONE)
        r = s->hot[r].parent;
    return r == NONE ? NONE : s->rows[r].next_sibling;
}

int tlog_summary_encode_(const tlog_summary *s, void **data, size_t *len)
{
    if (!s || !data || !len)
        return TLOG_EINVAL;
    tlog_summary_settle_(s);
    *data = NULL;
    *len = 0;
    size_t n = HEAD_BYTES;
    for (size_t g = 0; g < s->ngroups; g++)
        n = add_size(n, add_size(str_bytes(s->groups[g].thread_name), 4));
    for (size_t r = 0; r < s->nrows; r++)
        n = add_size(n, row_bytes(s, (uint32_t)r));
    if (n == SIZE_MAX)
        return TLOG_ENOMEM;   /* more than memory can hold */
    /* Where each row goes in the bytes: its index in the order written. */
    uint32_t *order = tlog_malloc_((s->nrows ? s->nrows : 1) * sizeof *order);
    uint8_t *out = tlog_malloc_(n);
    if (!order || !out) {
        free(order);
        free(out);
        return TLOG_ENOMEM;
    }
    uint8_t *p = out;
    memcpy(p, MAGIC, 4);
    tlog_put_u32_(p + 4, VERSION);
    tlog_put_u64_(p + 8, s->frames);
    tlog_put_u64_(p + 16, s->rows_refused);
    tlog_put_u64_(p + 24, s->hitches_seen);
    tlog_put_u32_(p + 32, (uint32_t)s->ngroups);
    tlog_put_u32_(p + 36, (uint32_t)s->nrows);
    p += HEAD_BYTES;
    uint32_t written = 0;
    for (size_t g = 0; g < s->ngroups; g++) {
        p = put_str(p, s->groups[g].thread_name);
        uint8_t *count = p;
        p += 4;
        uint32_t first = written;
        for (uint32_t r = s->groups[g].root; r != NONE; r = next_row(s, r)) {
            order[r] = written++;
            uint32_t parent = s->hot[r].parent;
            p = put_row(p, s, r, parent == NONE ? NONE : order[parent]);
        }
        tlog_put_u32_(count, written - first);
    }
    free(order);
    *data = out;
    *len = (size_t)(p - out);
    return TLOG_OK;
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct reading {
    tlog_cursor c;
    char *text[2];           /* two strings at a time, NUL-ended */
    size_t cap[2];
    tlog_summary *s;
    uint32_t *rows;          /* the summary's row for each row read */
    uint32_t nread, nrows;
    uint64_t root_frames;    /* of the groups read, saturating */
} reading;

/* A string into text[k]: TLOG_EFORMAT past the end or for a NUL in it,
 * TLOG_ENOMEM. */
static int get_str(reading *rd, int k)
{
    uint32_t n = tlog_read_u32_(&rd->c);
    const uint8_t *p = rd->c.short_read ? NULL : tlog_need_(&rd->c, n);
    if (!p || memchr(p, 0, n))
        return TLOG_EFORMAT;
    if (!TLOG_GROW(rd->text[k], rd->cap[k], (size_t)n + 1))
        return TLOG_ENOMEM;
    memcpy(rd->text[k], p, n);
    rd->text[k][n] = '\0';
    return TLOG_OK;
}

/* a * b, or UINT64_MAX where that does not fit, as a saturating sum of b
 * values of a would end. */
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* Whether the counts of a histogram of n buckets from lo, of some frames,
 * begin in the bucket of its minimum and end in that of its maximum, as
 * counting leaves them. */
static bool counts_span_extremes(const tlog_acc *a, unsigned lo, unsigned n)
{
    const uint64_t *bins = tlog_cbins_(&a->sk) + (lo - a->sk.lo);
    unsigned first = 0, last = n;
    while (first < n && !bins[first])
        first++;
    while (last > first && !bins[last - 1])
        last--;
    return first < n && lo + first == tlog_bucket_of_(a->min) &&
           lo + last - 1 == tlog_bucket_of_(a->max);
}

static uint16_t get_u16(reading *rd)
{
    const uint8_t *p = tlog_need_(&rd->c, 2);
    return p ? tlog_get_u16_(p) : 0;
}

/* One quantity of row x: its figures and its histogram, whose counts must
 * add up to the row's frames. */
static int get_acc(reading *rd, uint32_t r, int q, bool kept)
{
    const tlog_row_hot *x = &rd->s->hot[r];
    tlog_acc *a = q == TLOG_ACC_TOTAL ? &rd->s->hot[r].total
                  : q == TLOG_ACC_COUNT ? &rd->s->rows[r].count : &rd->s->rows[r].self;
    a->sum = tlog_read_u64_(&rd->c);
    a->min = tlog_read_u64_(&rd->c);
    a->max = tlog_read_u64_(&rd->c);
    unsigned lo = get_u16(rd), n = get_u16(rd);
    if (rd->c.short_read || (!kept && n) || lo + n > TLOG_SKETCH_BUCKETS ||
        (size_t)(rd->c.end - rd->c.p) / 8 < n)
        return TLOG_EFORMAT;
    if (kept && x->frames && (a->min > a->max || !n))
        return TLOG_EFORMAT;
    /* A row of no frames has seen nothing: extremes it never saw would
     * let counting take values whose buckets its histogram lacks. */
    if (kept && !x->frames && (a->sum || a->min != UINT64_MAX || a->max))
        return TLOG_EFORMAT;
    if (n && (!tlog_sketch_reserve_(&rd->s->bytes, &a->sk, lo) ||
              !tlog_sketch_reserve_(&rd->s->bytes, &a->sk, lo + n - 1)))
        return TLOG_ENOMEM;
    uint64_t total = 0;   /* saturating, as merged counts are */
    for (unsigned k = 0; k < n; k++) {
        uint64_t v = tlog_read_u64_(&rd->c);
        total = tlog_sat_add_(total, v);
        tlog_bins_(&a->sk)[lo + k - a->sk.lo] = v;
    }
    if (!kept || !x->frames)
        return kept && total ? TLOG_EFORMAT : TLOG_OK;
    if (total != x->frames || !counts_span_extremes(a, lo, n) ||
        a->sum < sat_mul(a->min, x->frames) || a->sum > sat_mul(a->max, x->frames))
        return TLOG_EFORMAT;
    return TLOG_OK;
}

static int get_row(reading *rd, uint32_t group_root_read, uint32_t *root)
{
    uint32_t parent = tlog_read_u32_(&rd->c);
    unsigned kind = tlog_read_u8_(&rd->c), flags = tlog_read_u8_(&rd->c),
             same = tlog_read_u8_(&rd->c);
    int rc = get_str(rd, 0);
    if (rc != TLOG_OK)
        return rc;
    if (kind > TLOG_KIND_EXECUTION || flags > 0x1f || same > 1)
        return TLOG_EFORMAT;
    bool has_device = tlog_read_u8_(&rd->c) != 0;
    if (has_device && (rc = get_str(rd, 1)) != TLOG_OK)
        return rc;
    bool is_root = rd->nread == group_root_read;
    if (is_root != (parent == NONE) || (is_root && has_device) ||
        (!is_root && (parent < group_root_read || parent >= rd->nread)))
        return TLOG_EFORMAT;   /* a root first, then rows under earlier rows of its group */
    uint32_t r;
    rc = is_root ? tlog_summary_load_group_(rd->s, rd->text[1], rd->text[0], kind, &r)
                     : tlog_summary_load_row_(rd->s, rd->rows[parent], kind, rd->text[0],
                                              has_device ? rd->text[1] : NULL, &r);
    if (rc != TLOG_OK)
        return rc;
    if (is_root)
        *root = r;
    rd->rows[rd->nread++] = r;
    tlog_row_hot *x = &rd->s->hot[r];
    x->kind = (uint8_t)kind;
    x->flags = (uint8_t)flags;
    x->self_same = same;
    rd->s->rows[r].site_id = tlog_read_u64_(&rd->c);
    x->frames = tlog_read_u64_(&rd->c);
    if (is_root)
        rd->root_frames = tlog_sat_add_(rd->root_frames, x->frames);
    static const int order[3] = {TLOG_ACC_TOTAL, TLOG_ACC_COUNT, TLOG_ACC_SELF};
    for (int k = 0; k < 3 && rc == TLOG_OK; k++)
        rc = get_acc(rd, r, order[k], !(order[k] == TLOG_ACC_SELF && same));
    return rd->c.short_read ? TLOG_EFORMAT : rc;
}

static int get_group(reading *rd)
{
    int rc = get_str(rd, 1);
    if (rc != TLOG_OK)
        return rc;
    uint32_t n = tlog_read_u32_(&rd->c);
    if (rd->c.short_read || !n || n > rd->nrows - rd->nread)
        return TLOG_EFORMAT;
    uint32_t first = rd->nread, root = NONE;
    /* The group's thread name is text[1] until its root row is made. */
    for (uint32_t k = 0; k < n && rc == TLOG_OK; k++)
        rc = get_row(rd, first, &root);
    return rc;
}

/* Every frame added to a summary counts in it, and once in its group's
 * root unless the group could not be had (past max_rows). */
static int decode(reading *rd, uint32_t ngroups, uint64_t frames)
{
    for (uint32_t g = 0; g < ngroups; g++) {
        int rc = get_group(rd);
        if (rc != TLOG_OK)
            return rc;
    }
    return rd->nread == rd->nrows && rd->c.p == rd->c.end && rd->root_frames <= frames
               ? TLOG_OK : TLOG_EFORMAT;
}

int tlog_summary_decode_(const void *data, size_t len, tlog_summary **out)
{
    if (out)
        *out = NULL;
    if (!data || !out)
        return TLOG_EINVAL;
    reading rd = {.c = {.p = data, .end = (const uint8_t *)data + len}};
    const uint8_t *head = tlog_need_(&rd.c, HEAD_BYTES);
    if (!head || memcmp(head, MAGIC, 4) != 0 || tlog_get_u32_(head + 4) != VERSION)
        return TLOG_EFORMAT;
    uint32_t ngroups = tlog_get_u32_(head + 32);
    rd.nrows = tlog_get_u32_(head + 36);
    if (ngroups > rd.nrows || rd.nrows >= NONE || rd.nrows > len / MIN_ROW_BYTES)
        return TLOG_EFORMAT;
    int rc = tlog_summary_create(NULL, &rd.s);
    rd.rows = tlog_malloc_((rd.nrows ? rd.nrows : 1) * sizeof *rd.rows);
    if (rc == TLOG_OK && !rd.rows)
        rc = TLOG_ENOMEM;
    if (rc == TLOG_OK)
        rc = decode(&rd, ngroups, tlog_get_u64_(head + 8));
    free(rd.rows);
    free(rd.text[0]);
    free(rd.text[1]);
    if (rc != TLOG_OK) {
        tlog_summary_destroy(rd.s);
        return rc;
    }
    rd.s->frames = tlog_get_u64_(head + 8);
    rd.s->rows_refused = tlog_get_u64_(head + 16);
    rd.s->hitches_seen = tlog_get_u64_(head + 24);
    *out = rd.s;
    return TLOG_OK;
}
