/* A frame loop resolves a frame as large as the last into arrays of the
 * same size. Freed between frames, arrays of megabytes often go back to
 * the system (the C library returns the free top of its heap, and maps
 * large blocks apart), and the next resolve writes its nodes into fresh
 * pages the kernel must clear first: up to a page fault per 4 KiB, as
 * often as the program's other allocations leave the freed memory to the
 * system. The log keeps the arrays of a released frame instead, one set,
 * and the next resolve writes into memory already touched.
 *
 * An array stays kept by the rule of tlog_worth_keeping_ (spares.h), which
 * the resolver's scratch follows too. Of two arrays on offer at once, the
 * larger is kept. */
#include "spares.h"

#include <stdatomic.h>

#include "alloc.h"
#include "frame.h"
#include "log.h"

/* One frame's arrays; either may be NULL. */
typedef struct kept {
    tlog_node *nodes;
    size_t capnodes;
    tlog_inst *insts;
    size_t capinsts;
} kept;

struct tlog_spares {
    atomic_int refs;              /* the log and each frame that took it */
    _Atomic(kept *) slot;         /* NULL while a resolve or a release has it */
    atomic_size_t bytes;          /* of the arrays in the slot */
};

static size_t kept_bytes(const kept *k)
{
    return k->capnodes * sizeof *k->nodes + k->capinsts * sizeof *k->insts;
}

/* What the slot holds, taken, its bytes no longer counted; NULL if empty. */
static kept *take_slot(tlog_spares *sp)
{
    kept *k = atomic_exchange(&sp->slot, NULL);
    if (k)
        atomic_fetch_sub(&sp->bytes, kept_bytes(k));
    return k;
}

static void kept_free(kept *k)
{
    if (!k)
        return;
    free(k->nodes);
    free(k->insts);
    free(k);
}

static void spares_release(tlog_spares *sp)
{
    if (sp && atomic_fetch_sub(&sp->refs, 1) == 1) {
        kept_free(atomic_load(&sp->slot));
        free(sp);
    }
}

/* The log's spares, made by the first frame that needs them; NULL when
 * memory ran out (frames then allocate their own arrays). */
static tlog_spares *spares_of(tlog_log *log)
{
    tlog_spares *sp = atomic_load_explicit(&log->spares, memory_order_acquire);
    if (sp)
        return sp;
    tlog_spares *made = tlog_calloc_(1, sizeof *made);
    if (!made)
        return NULL;
    atomic_init(&made->refs, 1);
    atomic_init(&made->slot, NULL);
    atomic_init(&made->bytes, 0);
    if (atomic_compare_exchange_strong(&log->spares, &sp, made))
        return made;
    free(made);   /* another resolve made them first */
    return sp;
}

/* The slot back, or its holder freed when the slot was filled meanwhile.
 * Its bytes are counted before another can take them off. */
static void put_back(tlog_spares *sp, kept *k)
{
    size_t bytes = kept_bytes(k);
    atomic_fetch_add(&sp->bytes, bytes);
    kept *none = NULL;
    if (!atomic_compare_exchange_strong(&sp->slot, &none, k)) {
        atomic_fetch_sub(&sp->bytes, bytes);
        kept_free(k);
    }
}

/* A kept array, with its capacity, to a frame that has none of its own. */
static void move(void **to, size_t *to_cap, void **from, size_t *from_cap)
{
    if (*to)
        return;
    *to = *from;
    *to_cap = *from_cap;
    *from = NULL;
    *from_cap = 0;
}

void tlog_spares_take_(tlog_log *log, tlog_frame *f)
{
    if (!f->spares) {
        f->spares = spares_of(log);
        if (!f->spares)
            return;
        atomic_fetch_add(&f->spares->refs, 1);
    }
    kept *k = take_slot(f->spares);
    if (!k)
        return;
    move((void **)&f->nodes, &f->capnodes, (void **)&k->nodes, &k->capnodes);
    move((void **)&f->insts, &f->capinsts, (void **)&k->insts, &k->capinsts);
    put_back(f->spares, k);   /* the holder, for the next release */
}

/* The larger of the kept array and the offered one stays in *kept_p; the
 * other is freed. The offered one is freed outright when its frame needed
 * much less of it. */
static void offer(void **kept_p, size_t *kept_cap, void *array, size_t cap, size_t used,
                  size_t size)
{
    if (!array)
        return;
    if (!tlog_worth_keeping_(cap * size, used * size) || cap <= *kept_cap) {
        free(array);
        return;
    }
    free(*kept_p);
    *kept_p = array;
    *kept_cap = cap;
}

void tlog_spares_give_(tlog_frame *f)
{
    tlog_spares *sp = f->spares;
    if (!sp)
        return;
    kept *k = take_slot(sp);
    if (!k)
        k = tlog_calloc_(1, sizeof *k);
    if (k) {
        offer((void **)&k->nodes, &k->capnodes, f->nodes, f->capnodes, f->nnodes,
              sizeof *f->nodes);
        offer((void **)&k->insts, &k->capinsts, f->insts, f->capinsts, f->ninsts,
              sizeof *f->insts);
        put_back(sp, k);
    } else {
        free(f->nodes);
        free(f->insts);
    }
    f->nodes = NULL;
    f->insts = NULL;
    f->capnodes = f->capinsts = 0;
    f->spares = NULL;
    spares_release(sp);
}

void tlog_spares_drop_(tlog_log *log)
{
    spares_release(atomic_exchange(&log->spares, NULL));
}

size_t tlog_spares_bytes_(tlog_log *log)
{
    tlog_spares *sp = atomic_load_explicit(&log->spares, memory_order_acquire);
    return sp ? atomic_load_explicit(&sp->bytes, memory_order_relaxed) : 0;
}
