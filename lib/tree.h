/*
 * The one builder of a frame's rows (tlog_node). Its three producers add
 * rows their own way: resolve.c merges recorded instances by (parent row,
 * kind, title), merge.c merges rows of several frames the same way, and
 * decode.c appends rows read from a stream as they come. finish() then
 * writes the frame's nodes once: links children, computes depths and self
 * times. Not installed.
 */
#ifndef TIMERLOG_TREE_H
#define TIMERLOG_TREE_H

#include "internal.h"
#include "map.h"
#include "util.h"

/* A resolved row of a frame's tree: two cache lines, in an array aligned
 * to them. The first holds what statistics read of every node
 * (summary.c), so that counting a frame too large for the caches reads one
 * line a node. */
struct tlog_node {
    const tlog_node *parent;
    const char *name;
    const tlog_site *site;
    uint64_t total_ns;
    uint64_t self_ns;
    uint64_t count;
    uint8_t kind;
    uint8_t flags;
    uint32_t thread;
    int depth;
    const tlog_node *first_child;
    const tlog_node *next_sibling;
    const char *thread_name;
    int64_t start_ns;
    uint64_t min_ns;
    uint64_t max_ns;
    const struct tlog_node_dev *dev; /* device rows only */
    const struct tlog_node_ranks *ranks; /* rows of reduced frames only */
};

#define TLOG_NODE_ALIGN 64
_Static_assert(sizeof(struct tlog_node) == 2 * TLOG_NODE_ALIGN, "a node is two cache lines");
_Static_assert(offsetof(struct tlog_node, depth) + sizeof(int) <= TLOG_NODE_ALIGN,
               "what statistics read is in a node's first line");

/* n's total in percent of its parent's; the root is 100%. Not kept in the
 * node: it follows from the two totals. */
static inline double tlog_node_percent_(const tlog_node *n)
{
    if (!n->parent)
        return 100.0;
    return n->parent->total_ns ? 100.0 * (double)n->total_ns / (double)n->parent->total_ns
                               : 0.0;
}

/* A row's total across the inputs (ranks) of a reduced frame; an input
 * without the row counts as 0. */
typedef struct tlog_node_ranks {
    uint32_t present;        /* inputs that have the row */
    uint64_t min_ns, max_ns;
    double mean_ns;
} tlog_node_ranks;

/* What a device row adds to a node; kept aside, host rows are most rows. */
typedef struct tlog_node_dev {
    const tlog_node *launcher;
    const tlog_site *launch_site;
    const char *device;
    uint32_t queue;
} tlog_node_dev;

/* A device instance's launcher and queue, by instance index: a row's
 * intervals may run on several queues (its tlog_node_dev has the first's). */
typedef struct tlog_inst_dev {
    uint32_t inst;
    uint32_t launcher;       /* node index, or UINT32_MAX */
    const char *device;      /* interned, or the reader's */
    uint32_t queue;
} tlog_inst_dev;

/* One instance on the frame's timeline. */
typedef struct tlog_inst {
    uint32_t node;
    uint32_t thread;
    int64_t start_ns;
    uint64_t duration_ns;
} tlog_inst;

/* The node after `n` in pre-order (parents first), skipping n's children
 * unless `into_children`; NULL after the last. Iterative: trees may be deep. */
static inline const tlog_node *tlog_node_next_(const tlog_node *n, bool into_children)
{
    if (into_children && n->first_child)
        return n->first_child;
    while (n && !n->next_sibling)
        n = n->parent;
    return n ? n->next_sibling : NULL;
}

#define TLOG_TREE_NONE UINT32_MAX

/* A row while it is built. Times are in the producer's units: clock ticks
 * for resolve.c (converted by finish), nanoseconds otherwise. */
typedef struct tlog_tree_row {
    const char *name;
    const char *thread_name;
    const tlog_site *site;
    uint32_t thread;
    uint32_t first;           /* producer's: which instance came first */
    uint8_t kind;
    uint8_t flags;            /* tlog_node_flags */
    uint64_t count, total, min, max;
    uint64_t self;            /* TLOG_TREE_SELF_GIVEN only */
    uint64_t start;           /* first start; compared as a signed difference */
} tlog_tree_row;

/* How a row's children are found: a list of them while they are few,
 * then the row map (tree.c). */
typedef struct tlog_tree_link {
    uint32_t key;             /* title << 1 | kind, by which its parent finds it */
    uint32_t child;           /* its list, a ring in the order made: the
                               * child found or made last, */
    uint32_t sibling;         /* and from each child the next in the ring */
    uint32_t nchildren;       /* in the list; TLOG_TREE_NONE: in the row map */
} tlog_tree_link;

typedef struct tlog_tree {
    tlog_tree_row *rows;
    size_t nrows, caprows;
    uint32_t *parents;        /* row i's parent (TLOG_TREE_NONE for the root,
                               * row 0), packed apart: finish's passes over
                               * all rows read only these */
    size_t capparents;
    tlog_tree_link *links;    /* per row */
    size_t caplinks;
    tlog_map row_map;         /* (parent, title, kind) -> row, for rows with
                               * many children; filled only once a frame
                               * parts from the last (tree.c: as_last) */
    bool map_filled;          /* it holds every such row made so far */
    bool as_last;             /* every row made so far is the last frame's
                               * row of that number */
    size_t last_nrows;        /* the last frame's rows, whose parents and
                               * keys are where a row of this frame has not
                               * yet been made */
    const char **titles;      /* title id -> text */
    size_t ntitles, captitles;
    tlog_map title_map;       /* the text's hash -> title ids */
    /* finish()'s scratch: children grouped by parent, subtree sizes, each
     * row's node index (renumber) and each node's row (row_at). */
    uint32_t *order, *starts, *size, *renumber, *row_at;
    size_t caporder, capstarts, capsize, caprenumber, caprowat;
} tlog_tree;

/* Forgets the rows and titles, keeping the memory for the next frame. */
TLOG_INTERNAL void tlog_tree_clear_(tlog_tree *t);
TLOG_INTERNAL void tlog_tree_free_(tlog_tree *t);

/* The id of title `name` (not copied: it must outlive the tree), made on
 * first use; TLOG_TREE_NONE if memory ran out. */
TLOG_INTERNAL uint32_t tlog_tree_title_(tlog_tree *t, const char *name);

/* The row of `kind` titled `title` under `parent` (TLOG_TREE_NONE: the
 * root), made if new with its name, zero counts and min at UINT64_MAX, and
 * *made set (when `made` is not NULL); TLOG_TREE_NONE if memory ran out. Rows are numbered in the
 * order they are made: a parent before its children. */
TLOG_INTERNAL uint32_t tlog_tree_row_(tlog_tree *t, uint32_t parent, uint32_t title,
                                      uint8_t kind, const char *name, bool *made);

/* A new row under `parent` that merges with nothing; TLOG_TREE_NONE if
 * memory ran out. */
TLOG_INTERNAL uint32_t tlog_tree_append_(tlog_tree *t, uint32_t parent);

/* Adds one instance of `duration` to a row; the total saturates. */
static inline void tlog_tree_add_(tlog_tree_row *r, uint64_t duration, uint64_t start)
{
    r->count++;
    r->total = tlog_sat_add_(r->total, duration);
    if (duration < r->min)
        r->min = duration;
    if (duration > r->max)
        r->max = duration;
    if ((int64_t)(start - r->start) < 0 || r->count == 1)
        r->start = start;
}

enum tlog_tree_order {
    /* Siblings by first start, worker threads' `==>` rows last, by thread. */
    TLOG_TREE_BY_START,
    /* Siblings in the order their rows were made. */
    TLOG_TREE_AS_MADE
};

typedef struct tlog_tree_finish {
    enum tlog_tree_order order;
    bool self_given;          /* rows carry their self time; else computed */
    double rate;              /* ns per unit of the rows' times; 0: already ns */
    uint64_t origin;          /* with rate: the unit time that is 0 ns */
} tlog_tree_finish;

/* Writes the rows as the frame's nodes (f->nodes, f->nnodes; into the
 * frame's own array when its capnodes suffice), linked, with
 * depths and self times, numbered in pre-order (walking the
 * nodes array in order is walking the tree); the node of row r is then
 * t->renumber[r]. TLOG_ENOMEM. */
TLOG_INTERNAL int tlog_tree_finish_(tlog_tree *t, tlog_frame *f, const tlog_tree_finish *how);

/* Ticks from `origin` as signed nanoseconds, saturating. */
TLOG_INTERNAL int64_t tlog_tree_offset_ns_(uint64_t t, uint64_t origin, double rate);

#endif
