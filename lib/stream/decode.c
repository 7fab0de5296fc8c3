/*
 * Decoding a FRAME block (doc/stream.md) into a resolved frame, the inverse
 * of encode.c. Input is untrusted: every count is checked against the bytes
 * there are, every index against what it indexes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "decode.h"
#include "format.h"
#include "frame.h"
#include "tree.h"

#define NONE TLOG_STREAM_NONE
/* The smallest encoded node and instance of each major version, to bound
 * counts before allocating. */
#define MIN_NODE_BYTES_V1 82u
#define INSTANCE_BYTES_V1 28u
#define MIN_NODE_BYTES 15u
#define MIN_INSTANCE_BYTES 3u
/* A thread's scopes, a worker's row and its scopes, a device row. */
#define MAX_DEPTH (2 * (int)TLOG_MAX_DEPTH + 8)

typedef struct in {
    tlog_cursor c;
    char *arena;                  /* where strings are copied, NUL-ended */
} in;

static uint8_t u8(in *c)
{
    return tlog_read_u8_(&c->c);
}

static uint32_t u32(in *c)
{
    return tlog_read_u32_(&c->c);
}

static uint64_t u64(in *c)
{
    return tlog_read_u64_(&c->c);
}

static uint64_t var(in *c)
{
    return tlog_read_varint_(&c->c);
}

/* A varint that must fit 32 bits; one that does not is as damaged as an
 * overlong one. */
static uint32_t var32(in *c)
{
    uint64_t v = var(c);
    if (v <= UINT32_MAX)
        return (uint32_t)v;
    c->c.overlong = true;
    return 0;
}

/* An index written plus one, 0 for none (version 2). */
static uint32_t var_index(in *c)
{
    uint32_t v = var32(c);
    return v == 0 ? NONE : v - 1;
}

/* Copies a string into the arena: it costs there at most what it takes in
 * the block (2-byte length in, NUL out), so the arena never overflows. */
static const char *str(in *c)
{
    size_t n;
    const char *s = tlog_read_str_(&c->c, &n);
    if (c->c.short_read)
        return "";
    char *out = c->arena;
    memcpy(out, s, n);
    out[n] = '\0';
    c->arena += n + 1;
    return out;
}

static int bad(char *why, size_t size, const char *what)
{
    snprintf(why, size, "corrupt frame block: %s", what);
    return TLOG_EFORMAT;
}

/* Frame header fields, before the rows. */
static void read_head(in *c, tlog_frame *f, uint32_t *nnodes, uint32_t *ninsts)
{
    f->serial = u64(c);
    f->thread = u32(c);
    const char *tname = str(c);
    snprintf(f->thread_name, sizeof f->thread_name, "%s", tname);
    f->start_ns = (int64_t)u64(c);
    f->duration_ns = u64(c);
    f->dropped = u64(c);
    f->repaired = u64(c);
    f->device_rows = u64(c);
    f->device_unresolved = u64(c);
    *nnodes = u32(c);
    *ninsts = u32(c);
}

typedef struct row_refs {
    uint32_t launcher, launch_site, device, queue;
} row_refs;

/* A row's fields in version 1: fixed widths, every field present. */
static void read_fields_v1(in *c, tlog_tree_row *n, uint32_t *parent, uint32_t *site,
                           row_refs *refs)
{
    *parent = u32(c);
    *site = u32(c);
    n->name = str(c);
    n->kind = u8(c);
    n->flags = u8(c);
    n->thread = u32(c);
    n->thread_name = str(c);
    n->start = u64(c);
    n->total = u64(c);
    n->self = u64(c);
    n->min = u64(c);
    n->max = u64(c);
    n->count = u64(c);
    refs->launcher = u32(c);
    refs->launch_site = u32(c);
    refs->device = u32(c);
    refs->queue = u32(c);
}

/* A row's fields in version 2: varints, the parent as the distance back
 * to it, device fields only in device rows. */
static void read_fields(in *c, uint32_t i, tlog_tree_row *n, uint32_t *parent, uint32_t *site,
                        row_refs *refs)
{
    uint32_t back = var32(c);
    /* Out of range, the parent becomes one the checks refuse. */
    *parent = back == 0 ? NONE : back <= i ? i - back : i;
    *site = var_index(c);
    n->name = str(c);
    n->kind = u8(c);
    n->flags = u8(c);
    n->thread = var32(c);
    n->thread_name = str(c);
    n->start = (uint64_t)tlog_unzigzag_(var(c));
    n->total = var(c);
    n->self = var(c);
    n->min = var(c);
    n->max = var(c);
    n->count = var(c);
    *refs = (row_refs){NONE, NONE, NONE, 0};
    if (!(n->flags & TLOG_NODE_DEVICE))
        return;
    refs->launcher = var_index(c);
    refs->launch_site = var_index(c);
    refs->device = var_index(c);
    refs->queue = var32(c);
}

static int read_node(in *c, const tlog_decode_tables *t, tlog_tree *tree, uint32_t i,
                     uint32_t nnodes, row_refs *refs, char *why, size_t size)
{
    tlog_tree_row row = {0};
    uint32_t parent, site;
    if (t->major == 1)
        read_fields_v1(c, &row, &parent, &site, refs);
    else
        read_fields(c, i, &row, &parent, &site, refs);
    /* An overlong number leaves the cursor at the end: it comes first. */
    if (c->c.overlong)
        return bad(why, size, "a row holds a number too large for its field");
    if (c->c.short_read)
        return bad(why, size, "rows run past the block");
    if ((i == 0) != (parent == NONE) || (i && parent >= i))
        return bad(why, size, "a row's parent is not an earlier row");
    if ((site != NONE && site >= t->nsites) ||
        (refs->launch_site != NONE && refs->launch_site >= t->nsites))
        return bad(why, size, "a row names an undescribed call site");
    if (refs->launcher != NONE && refs->launcher >= nnodes)
        return bad(why, size, "a row's launcher is out of range");
    if (refs->device != NONE && !t->device(t->user, refs->device))
        return bad(why, size, "a row names an undescribed device");
    if (row.kind > TLOG_KIND_EXECUTION)
        return bad(why, size, "a row of unknown kind");
    /* A device row names its device; no other row has device fields. */
    bool device = (row.flags & TLOG_NODE_DEVICE) != 0;
    if (device != (refs->device != NONE) ||
        (!device && (refs->launcher != NONE || refs->launch_site != NONE)))
        return bad(why, size, "a row's device fields contradict its flags");
    uint32_t at = tlog_tree_append_(tree, parent);
    if (at == TLOG_TREE_NONE)
        return TLOG_ENOMEM;
    tlog_tree_row *n = &tree->rows[at];
    row.first = n->first;
    *n = row;
    n->site = site == NONE ? NULL : t->sites[site];
    return TLOG_OK;
}

static int attach_devs(const tlog_decode_tables *t, tlog_frame *f, const row_refs *refs,
                       const uint32_t *num)
{
    size_t ndev = 0;
    for (size_t i = 0; i < f->nnodes; i++)
        ndev += refs[i].device != NONE || refs[i].launch_site != NONE ||
                refs[i].launcher != NONE;
    int rc = tlog_frame_alloc_devs_(f, ndev);
    if (rc != TLOG_OK || !ndev)
        return rc;
    ndev = 0;
    for (size_t i = 0; i < f->nnodes; i++) {
        const row_refs *r = &refs[i];
        if (r->device == NONE && r->launch_site == NONE && r->launcher == NONE)
            continue;
        tlog_node_dev *d = &f->node_devs[ndev++];
        d->launcher = r->launcher == NONE ? NULL : &f->nodes[num[r->launcher]];
        d->launch_site = r->launch_site == NONE ? NULL : t->sites[r->launch_site];
        d->device = r->device == NONE ? NULL : t->device(t->user, r->device);
        d->queue = r->queue;
        f->nodes[num[i]].dev = d;
    }
    return TLOG_OK;
}

static bool too_deep(const tlog_frame *f)
{
    for (size_t i = 0; i < f->nnodes; i++)
        if (f->nodes[i].depth > MAX_DEPTH)
            return true;
    return false;
}

/* Rows as they came: children in that order, self times as written, and
 * percentages as the resolver makes them, so that a dump reads the same
 * byte for byte. The nodes are numbered in pre-order (*num: a row's node). */
static int read_rows(in *c, const tlog_decode_tables *t, tlog_frame *f, uint32_t nnodes,
                     tlog_tree *tree, char *why, size_t size)
{
    row_refs *refs = tlog_calloc_(nnodes, sizeof *refs);
    int rc = refs ? TLOG_OK : TLOG_ENOMEM;
    for (uint32_t i = 0; rc == TLOG_OK && i < nnodes; i++)
        rc = read_node(c, t, tree, i, nnodes, &refs[i], why, size);
    if (rc == TLOG_OK) {
        tlog_tree_finish how = {TLOG_TREE_AS_MADE, true, 0, 0};
        rc = tlog_tree_finish_(tree, f, &how);
    }
    if (rc == TLOG_OK && too_deep(f))
        rc = bad(why, size, "rows nest deeper than any frame can");
    if (rc == TLOG_OK)
        rc = attach_devs(t, f, refs, tree->renumber);
    free(refs);
    return rc;
}

/* An instance's fields in version 1: fixed widths. */
static void read_instance_v1(in *c, tlog_inst *x, uint32_t *launcher)
{
    x->node = u32(c);
    x->thread = u32(c);
    x->start_ns = (int64_t)u64(c);
    x->duration_ns = u64(c);
    *launcher = u32(c);
}

/* An instance in version 2 (encode.c: put_instance). A row out of range
 * becomes NONE, which the caller refuses. */
static void read_instance(in *c, const tlog_frame *f, tlog_inst *x, uint32_t *launcher,
                          int64_t *last_start)
{
    uint64_t tag = var(c);
    x->node = tag >> 2 < NONE ? (uint32_t)(tag >> 2) : NONE;
    x->start_ns = (int64_t)((uint64_t)*last_start + (uint64_t)tlog_unzigzag_(var(c)));
    *last_start = x->start_ns;
    x->duration_ns = var(c);
    x->thread = tag & TLOG_INST_OTHER_THREAD ? var32(c) : f->thread;
    *launcher = tag & TLOG_INST_LAUNCHER ? var32(c) : NONE;
}

static int read_instances(in *c, tlog_frame *f, const uint32_t *num, unsigned major, char *why,
                          size_t size)
{
    if (f->device_rows > f->ninsts)
        return bad(why, size, "more device intervals than instances");
    f->inst_devs = tlog_calloc_(f->device_rows ? f->device_rows : 1, sizeof *f->inst_devs);
    if (!f->inst_devs)
        return TLOG_ENOMEM;
    size_t ndev = 0;
    int64_t last_start = 0;
    for (size_t k = 0; k < f->ninsts; k++) {
        tlog_inst *x = &f->insts[k];
        uint32_t launcher;
        if (major == 1)
            read_instance_v1(c, x, &launcher);
        else
            read_instance(c, f, x, &launcher, &last_start);
        if (c->c.overlong)
            return bad(why, size, "an instance holds a number too large for its field");
        if (c->c.short_read)
            return bad(why, size, "instances run past the block");
        if (x->node >= f->nnodes || (launcher != NONE && launcher >= f->nnodes))
            return bad(why, size, "an instance names a row out of range");
        x->node = num[x->node];
        launcher = launcher == NONE ? NONE : num[launcher];
        if (!(f->nodes[x->node].flags & TLOG_NODE_DEVICE))
            continue;
        if (ndev == f->device_rows)
            return bad(why, size, "more device instances than announced");
        const tlog_node_dev *row = f->nodes[x->node].dev;   /* until a QUEUES block says */
        f->inst_devs[ndev++] = (tlog_inst_dev){(uint32_t)k, launcher, row ? row->device : NULL,
                                               row ? row->queue : 0};
    }
    if (ndev != f->device_rows)
        return bad(why, size, "fewer device instances than announced");
    return TLOG_OK;
}

int tlog_decode_frame_(const tlog_decode_tables *t, const uint8_t *p, size_t n,
                       tlog_frame **out, char *why, size_t why_size)
{
    *out = NULL;
    tlog_frame *f = tlog_frame_alloc_(NULL);
    char *arena = tlog_malloc_(n + 1);
    if (!f || !arena) {
        tlog_frame_release(f);
        free(arena);
        return TLOG_ENOMEM;
    }
    in c = {{.p = p, .end = p + n}, arena};
    f->strings = arena;
    atomic_store(&f->resolved, true);
    uint32_t nnodes, ninsts;
    read_head(&c, f, &nnodes, &ninsts);
    size_t left = (size_t)(c.c.end - c.c.p);
    size_t node_bytes = t->major == 1 ? MIN_NODE_BYTES_V1 : MIN_NODE_BYTES;
    size_t inst_bytes = t->major == 1 ? INSTANCE_BYTES_V1 : MIN_INSTANCE_BYTES;
    int rc = TLOG_OK;
    if (c.c.short_read || nnodes == 0 || nnodes > left / node_bytes ||
        ninsts > (left - nnodes * node_bytes) / inst_bytes)
        rc = bad(why, why_size, "row or instance counts do not fit the block");
    tlog_tree tree = {0};
    if (rc == TLOG_OK) {
        f->ninsts = ninsts;
        f->insts = tlog_calloc_(ninsts ? ninsts : 1, sizeof *f->insts);
        rc = f->insts ? read_rows(&c, t, f, nnodes, &tree, why, why_size) : TLOG_ENOMEM;
    }
    if (rc == TLOG_OK)
        rc = read_instances(&c, f, tree.renumber, t->major, why, why_size);
    tlog_tree_free_(&tree);
    if (rc == TLOG_OK && c.c.p != c.c.end)
        rc = bad(why, why_size, "bytes left over after the instances");
    if (rc != TLOG_OK) {
        tlog_frame_release(f);
        return rc;
    }
    *out = f;
    return TLOG_OK;
}

static int bad_queues(char *why, size_t size, const char *what)
{
    snprintf(why, size, "corrupt queues block: %s", what);
    return TLOG_EFORMAT;
}

int tlog_decode_queues_(const tlog_decode_tables *t, const uint8_t *p, size_t n, tlog_frame *f,
                        char *why, size_t why_size)
{
    in c = {{.p = p, .end = p + n}, NULL};
    uint64_t count = var(&c);
    uint64_t inst = 0;
    size_t d = 0;   /* inst_devs are in instance order, as the entries */
    for (uint64_t e = 0; e < count && !c.c.short_read && !c.c.overlong; e++) {
        inst += var(&c);
        uint32_t device = var_index(&c), queue = var32(&c);
        while (d < f->device_rows && f->inst_devs[d].inst < inst)
            d++;
        if (c.c.short_read || c.c.overlong)
            break;
        if (d == f->device_rows || f->inst_devs[d].inst != inst)
            return bad_queues(why, why_size, "an instance that is no device interval");
        const char *name = device == NONE ? NULL : t->device(t->user, device);
        if (device != NONE && !name)
            return bad_queues(why, why_size, "an undescribed device");
        f->inst_devs[d].device = name;
        f->inst_devs[d].queue = queue;
    }
    if (c.c.short_read || c.c.overlong || c.c.p != c.c.end)
        return bad_queues(why, why_size, "fewer or more bytes than its entries");
    return TLOG_OK;
}
