/* Statistics across frames: the summary and its histograms, shared by
 * sketch.c (the histograms), summary.c (keeping them), summary_read.c
 * (reading them), summary_out.c (writing them out), dump.c (their columns)
 * and stats.c (a log's own). Not installed. */
#ifndef TIMERLOG_SUMMARY_H
#define TIMERLOG_SUMMARY_H

#include "internal.h"
#include "map.h"

/*
 * A histogram of uint64 values in logarithmic buckets: values below 128
 * each have their own; above, each power of two [2^e, 2^(e+1)) is cut into
 * 64 equal buckets, so a bucket is at most 1/64 of its lowest value wide
 * and its middle is within 1/128 of every value in it. 3776 buckets cover
 * every uint64; a histogram holds only the span [lo, lo + cap) it has
 * needed, grown on demand, and one bucket in place.
 */
#define TLOG_SKETCH_SUB 64u
#define TLOG_SKETCH_BUCKETS 3776u

typedef struct tlog_sketch {
    union {
        uint64_t *heap;      /* cap > 1 */
        uint64_t one;        /* cap == 1: a histogram of one value so far
                              * (a count that never changes) holds it here */
    } u;
    uint16_t lo, cap;
} tlog_sketch;

static inline uint64_t *tlog_bins_(tlog_sketch *sk)
{
    return sk->cap == 1 ? &sk->u.one : sk->u.heap;
}

static inline const uint64_t *tlog_cbins_(const tlog_sketch *sk)
{
    return sk->cap == 1 ? &sk->u.one : sk->u.heap;
}

/* One quantity of a row over frames. */
typedef struct tlog_acc {
    uint64_t sum;            /* saturating */
    uint64_t min, max;
    tlog_sketch sk;
} tlog_acc;

#define TLOG_ROW_NONE UINT32_MAX

/* A row's quantities, as its notes and the serialized form order them. */
enum { TLOG_ACC_TOTAL, TLOG_ACC_COUNT, TLOG_ACC_SELF };

/* The most a count kept as count_same can be. */
#define TLOG_COUNT_SAME_MAX 255u

/* What adding a frame reads and writes of a row, in one cache line, in an
 * array of its own by row index (tlog_summary.hot): a frame's rows are
 * made in the order its nodes come, so the frames after it walk this array
 * in order and, for a leaf called as often in every frame, touch nothing
 * else of the row but its total's histogram. */
typedef struct tlog_row_hot {
    _Alignas(64) uint32_t parent;
    uint8_t kind;
    uint8_t flags;
    /* Its self time has been its total in every frame so far (a leaf):
     * its self quantity is not kept, the total stands for it. */
    bool self_same;
    /* Not 0: its count has been this (at most TLOG_COUNT_SAME_MAX) in
     * every frame so far, and its count quantity is not kept but follows
     * from it (tlog_count_same_acc_). */
    uint8_t count_same;
    uint64_t frames;
    tlog_acc total;
    const char *name;        /* the summary's copy */
} tlog_row_hot;

/* The rest of a row, by the same index (tlog_summary.rows): what readers
 * walk, and the handle the public functions give them. A row's self time
 * comes first, beside the links, in the line a parent's frames write. */
struct tlog_stat_row {
    _Alignas(64) tlog_acc self;  /* unless self_same */
    uint32_t first_child, last_child, next_sibling;
    uint32_t group;
    int depth;
    tlog_acc count;          /* unless count_same */
    const struct tlog_summary *owner;
    const char *device;      /* the summary's copy, or NULL */
    uint64_t site_id;
};

/* What a row was before a frame changed what cannot be subtracted again
 * (a minimum, a maximum, a flag, a sum that saturated): an add that fails
 * half-way puts it back. */
typedef struct tlog_undo {
    uint32_t row;
    uint8_t flags;
    bool self_same;
    uint8_t count_same;
    uint64_t min[3], max[3], sum[3];   /* TLOG_ACC_ order */
} tlog_undo;

/* A hitch kept: the frame, with a reference. */
typedef struct tlog_hitch {
    tlog_frame *frame;
    uint32_t group;
    uint64_t number;
    uint64_t duration_ns;
    unsigned reasons;
    uint64_t budget_ns, quantile_ns, median_ns;
} tlog_hitch;

/* What counting a frame later needs of one of its nodes (the root
 * aside), as the group's last frame counted at once left its row: a frame is
 * counted later only where each node has these (summary.c: put_later). */
typedef struct tlog_later_node {
    uint32_t parent;          /* its parent's node index */
    uint8_t kind;
    uint8_t flags;            /* the row's: a node with others is counted now */
    uint8_t count_same;       /* the row's; 0: its count is a value to keep */
    bool self_same;           /* the row's; false: its self time is one */
    /* The totals its histogram holds the buckets of: total_n values from
     * total_lo (a compare, where most nodes have nothing else to check). */
    uint32_t total_lo, total_n;
    /* The buckets its count's and self time's histograms hold, where kept. */
    uint16_t count_lo, count_cap, self_lo, self_cap;
    /* Its title: in a summary that trusts site titles, the address of its
     * site's (NULL without one); else its row's (a kept string). */
    const char *title;
} tlog_later_node;

#define TLOG_LATER_FRAMES 32u

/* A group's frames counted later: each one's values of the kept
 * quantities, node after node, in `slots` slots of a run of its own
 * (summary.c: later_run), the last TLOG_LATER_FRAMES frames' in turn. Its
 * nodes are counted in TLOG_LATER_FRAMES parts, one after each frame
 * (summary.c: count_part). */
typedef struct tlog_later {
    tlog_later_node *nodes;   /* by node index; nnodes 0: none is */
    size_t nnodes, capnodes;
    size_t slots;
    size_t stride;            /* values from a run to the next: slots, rounded up */
    uint32_t *values;         /* TLOG_LATER_FRAMES runs */
    size_t capvalues;
    uint64_t written;         /* frames whose values were written */
    size_t part_slot[TLOG_LATER_FRAMES];   /* each part's first slot */
} tlog_later;

/* A (thread name, root title) pair: its root row, the frames it saw
 * lately (for the hitch quantile) and what the last frame's rows mapped
 * to (a frame usually has the rows the one before it had). */
typedef struct tlog_group {
    const char *thread_name; /* the summary's copy */
    uint32_t root;
    uint64_t *recent;        /* ring of the last window root totals */
    uint32_t nrecent, next_recent;
    tlog_sketch window;      /* the same totals, for their quantile */
    unsigned quantile;       /* the bucket of their hitch quantile */
    uint64_t below;          /* how many of them lie below that bucket */
    uint32_t *map;           /* rows of the last frame's nodes, by index */
    size_t capmap;
    /* With tlog_summary_trust_site_titles_: the titles of the last frame's
     * nodes that have a call site, by index (NULL for the others). A call
     * site's title stays where it is for the life of the process (sites are
     * static or interned for good), so a node whose title is at the same
     * address has the same title: for node indexes below `trusted` the
     * address is compared first. */
    const char **seen;
    size_t trusted;
    tlog_later *later;       /* NULL until a frame of the group is large */
} tlog_group;

/* What a title of the frame being added (at `title`) is, as a kept string
 * (summary.c: frame_title), while `add` is the summary's adds. */
typedef struct tlog_title_memo {
    const char *title;
    const char *kept;        /* NULL: no row has its text */
    uint64_t add;
} tlog_title_memo;

/* A row's spread over the inputs of a reduction (one per rank). */
typedef struct tlog_row_ranks {
    uint32_t present;        /* inputs that had the row */
    uint32_t p99_max_rank;   /* the input with the largest p99 */
    double median_sum;       /* of the inputs' medians */
    uint64_t p99_max;
} tlog_row_ranks;

/* Strings, in blocks that never move. */
typedef struct tlog_arena_block {
    struct tlog_arena_block *next;
    size_t used, cap;
    char data[];
} tlog_arena_block;

struct tlog_summary {
    tlog_summary_config cfg;  /* defaults filled in */
    tlog_row_hot *hot;        /* rows, in two arrays by the same index */
    tlog_stat_row *rows;
    size_t nrows, caprows;
    tlog_map index;           /* rows under a parent by hash of (parent,
                               * kind, title): the row's index */
    tlog_group *groups;
    size_t ngroups, capgroups;
    tlog_map group_index;     /* groups by hash of (thread name, root title) */
    uint32_t last_group;      /* the last frame's: the next frame's, mostly */
    tlog_arena_block *arena;
    tlog_undo *undo;          /* scratch of an add */
    size_t nundo, capundo;
    tlog_hitch *hitches;      /* ring of cfg.max_hitches */
    size_t hitch_first, nhitches;
    uint64_t hitches_seen;
    uint64_t frames;
    uint64_t rows_refused;
    /* From tlog_summary_reduce: its inputs, and each row's spread over
     * them (rows made later have none). */
    uint32_t reduced;
    tlog_row_ranks *ranks;
    size_t nranks;
    size_t bytes;             /* what it holds, besides hitch frames */
    bool trust_site_titles;   /* tlog_summary_trust_site_titles_ */
    /* The strings kept in the arena, each text once (summary.c:
     * keep_string), and a map from their texts' hashes to them. */
    const char **kept;
    size_t nkept, capkept;
    tlog_map kept_index;
    /* An add's titles by address: the kept string of their text (open
     * addressing; entries of earlier adds are free). */
    tlog_title_memo *memo;
    size_t memo_mask;
    uint64_t adds;            /* adds of large frames begun: the memo's own */
    /* Some group has frames waiting to be counted (tlog_later): readers
     * count them first, the first under the lock (tlog_summary_settle_). */
    atomic_bool waiting;
    pthread_mutex_t settle_lock;
};

/* Counts the frames waiting to be, before `s` is read. A reading function
 * may, in a summary that is const to it: readers run together while no
 * thread changes the summary, and the first of them counts under the
 * lock while the others wait for it. */
TLOG_INTERNAL void tlog_summary_settle_slow_(const tlog_summary *s);
static inline void tlog_summary_settle_(const tlog_summary *s)
{
    if (atomic_load_explicit(&s->waiting, memory_order_acquire))
        tlog_summary_settle_slow_(s);
}

/* The spread of row r over the inputs of a reduction, or NULL. */
static inline const tlog_row_ranks *tlog_row_ranks_(const tlog_summary *s, const tlog_stat_row *r)
{
    size_t i = (size_t)(r - s->rows);
    return s->ranks && i < s->nranks && s->ranks[i].present ? &s->ranks[i] : NULL;
}

/* sketch.c: histograms */
/* The bucket of v. */
static inline unsigned tlog_bucket_of_(uint64_t v)
{
    /* e: the bits v is shifted by to keep its top 7; 0 below 128, where
     * each value is its own bucket. No branch: frames count three values
     * per row. */
    unsigned e = (unsigned)(63 - __builtin_clzll(v | TLOG_SKETCH_SUB)) - 6u;
    return TLOG_SKETCH_SUB * e + (unsigned)(v >> e);
}
/* The lowest value of bucket i (0 to TLOG_SKETCH_BUCKETS - 1). */
static inline uint64_t tlog_bucket_low_(unsigned i)
{
    if (i < 2 * TLOG_SKETCH_SUB)
        return i;
    unsigned e = i / TLOG_SKETCH_SUB - 1u;
    return (uint64_t)(TLOG_SKETCH_SUB + i % TLOG_SKETCH_SUB) << e;
}
/* Widens `sk` to hold bucket i, adding what it takes to *bytes; false when
 * memory ran out (it stays as it was). */
TLOG_INTERNAL bool tlog_sketch_widen_(size_t *bytes, tlog_sketch *sk, unsigned i);
/* The same, almost always without a call: it holds bucket i already. */
static inline bool tlog_sketch_reserve_(size_t *bytes, tlog_sketch *sk, unsigned i)
{
    return (i - sk->lo < sk->cap) || tlog_sketch_widen_(bytes, sk, i);
}
/* Widens `into` to hold every bucket `from` has counts in. */
TLOG_INTERNAL bool tlog_sketch_reserve_like_(size_t *bytes, tlog_sketch *into,
                                             const tlog_sketch *from);
TLOG_INTERNAL void tlog_sketch_free_(size_t *bytes, tlog_sketch *sk);
/* Makes `to` a copy of `from`; false when memory ran out (it stays as it
 * was). */
TLOG_INTERNAL bool tlog_sketch_copy_(size_t *bytes, tlog_sketch *to, const tlog_sketch *from);
/* Adds `from` to `into`, which holds its buckets (tlog_sketch_reserve_like_). */
TLOG_INTERNAL void tlog_acc_add_(tlog_acc *into, const tlog_acc *from);
/* The bucket the q-quantile of n values is in, and a bucket's middle. */
TLOG_INTERNAL unsigned tlog_sketch_quantile_bucket_(const tlog_sketch *sk, uint64_t n,
                                                    double q);
TLOG_INTERNAL uint64_t tlog_sketch_bucket_value_(unsigned i);
/* The rank of the q-quantile of n values, from 0. */
TLOG_INTERNAL uint64_t tlog_rank_of_(double q, uint64_t n);

/* strcmp(a, b) == 0 for the short titles rows have, without a call: four
 * characters a turn, each read only once those before it matched (so
 * never past the end of either). */
static inline bool tlog_same_name_(const char *a, const char *b)
{
    for (;; a += 4, b += 4) {
        if (a[0] != b[0])
            return false;
        if (!a[0])
            return true;
        if (a[1] != b[1])
            return false;
        if (!a[1])
            return true;
        if (a[2] != b[2])
            return false;
        if (!a[2])
            return true;
        if (a[3] != b[3])
            return false;
        if (!a[3])
            return true;
    }
}

/* summary.c */
/* Has `s` know the rows of a group's next frame by the addresses of the
 * titles of its last frame's nodes that have a call site, without reading
 * them: for a log's own summary, whose frames are the log's, titled by
 * their sites. A summary fed decoded or merged frames, whose titles live in
 * the frames, must compare the text. */
TLOG_INTERNAL void tlog_summary_trust_site_titles_(tlog_summary *s);
TLOG_INTERNAL int tlog_summary_normalize_(const tlog_summary_config *in,
                                          tlog_summary_config *out);
/* The row under `parent` of that kind and title, or TLOG_ROW_NONE. */
TLOG_INTERNAL uint32_t tlog_summary_find_row_(const tlog_summary *s, uint32_t parent,
                                              unsigned kind, const char *name);
/* The group of (thread name, root title), or TLOG_ROW_NONE. */
TLOG_INTERNAL uint32_t tlog_summary_find_group_(const tlog_summary *s, const char *thread,
                                                const char *root);
/* A new group and its root row, or a new row under `parent`, for rows
 * read back (summary_codec.c): TLOG_EFORMAT when it is there already,
 * TLOG_ENOMEM. */
TLOG_INTERNAL int tlog_summary_load_group_(tlog_summary *s, const char *thread,
                                           const char *root, unsigned kind, uint32_t *row);
TLOG_INTERNAL int tlog_summary_load_row_(tlog_summary *s, uint32_t parent, unsigned kind,
                                         const char *name, const char *device, uint32_t *row);
/* The rows of `s` for every node of `f`, by node index (TLOG_ROW_NONE where
 * it has none), into rows[f->nnodes]. */
TLOG_INTERNAL void tlog_summary_map_frame_(const tlog_summary *s, const tlog_frame *f,
                                           uint32_t *rows);
/* Quantiles of n values counted in `a`, and all its figures (sketch.c). */
TLOG_INTERNAL uint64_t tlog_sketch_quantile_(const tlog_acc *a, uint64_t n, double q);
TLOG_INTERNAL void tlog_stat_value_(const tlog_acc *a, uint64_t n, tlog_stat_value *v);
/* The count quantity of a row whose count was c (not 0) in each of its
 * frames: what counting them would have left, its histogram one bucket in
 * place. */
static inline tlog_acc tlog_count_same_acc_(unsigned c, uint64_t frames)
{
    tlog_acc a = {.sum = frames > UINT64_MAX / c ? UINT64_MAX : c * frames, .min = c, .max = c};
    a.sk.u.one = frames;
    a.sk.lo = (uint16_t)tlog_bucket_of_(c);
    a.sk.cap = 1;
    return a;
}

/* Quantity q (TLOG_ACC_) of row i as it is kept, a copy: a self time not
 * kept (self_same) is what its fields hold, a count not kept
 * (count_same) is made up. */
static inline tlog_acc tlog_row_quantity_(const tlog_summary *s, uint32_t i, int q)
{
    const tlog_row_hot *x = &s->hot[i];
    if (q == TLOG_ACC_TOTAL)
        return x->total;
    if (q == TLOG_ACC_SELF)
        return s->rows[i].self;
    return x->count_same ? tlog_count_same_acc_(x->count_same, x->frames) : s->rows[i].count;
}

/* The hot part of a row. */
static inline const tlog_row_hot *tlog_row_hot_(const tlog_stat_row *r)
{
    return &r->owner->hot[r - r->owner->rows];
}

/* One quantity of a row, a copy: a leaf's total stands for its self time. */
static inline tlog_acc tlog_row_acc_(const tlog_stat_row *r, tlog_stat_of of)
{
    const tlog_summary *s = r->owner;
    uint32_t i = (uint32_t)(r - s->rows);
    if (of == TLOG_STAT_SELF)
        return tlog_row_quantity_(s, i, s->hot[i].self_same ? TLOG_ACC_TOTAL : TLOG_ACC_SELF);
    return tlog_row_quantity_(s, i, of == TLOG_STAT_COUNT ? TLOG_ACC_COUNT : TLOG_ACC_TOTAL);
}

/* The frames of a row's group. */
static inline uint64_t tlog_row_group_frames_(const tlog_stat_row *r)
{
    const tlog_summary *s = r->owner;
    return s->hot[s->groups[r->group].root].frames;
}

/* The path's rows, in `rows` of the summary, for print helpers. */
static inline const tlog_stat_row *tlog_stat_row_at_(const tlog_summary *s, uint32_t i)
{
    return i == TLOG_ROW_NONE ? NULL : &s->rows[i];
}

/* dump.c: pieces of the text dump the statistics share. */
/* The dump options a caller gave, as this version reads them: an older,
 * shorter struct's missing fields zero, a size of 0 read as the current
 * size, and o->size the current one; false for a size too small to hold
 * `size` itself. NULL gives the defaults. */
TLOG_INTERNAL bool tlog_dump_options_of_(const tlog_dump_options *in, tlog_dump_options *o);
/* tlog_dump_frame, calling head(out, arg) once nothing can fail before
 * the first row. */
TLOG_INTERNAL int tlog_dump_frame_headed_(const tlog_frame *frame, FILE *out,
                                          const tlog_dump_options *options,
                                          void (*head)(FILE *out, const void *arg),
                                          const void *arg);
TLOG_INTERNAL void tlog_dump_prefix_(FILE *out, int depth, int kind);
TLOG_INTERNAL void tlog_put_seconds_(FILE *out, uint64_t ns);
/* The statistics columns of `row` (NULL: `-` in each), and with
 * TLOG_COLUMN_DELTA, of `ns` against its median. */
TLOG_INTERNAL void tlog_put_stat_columns_(FILE *out, const tlog_stat_row *row, unsigned columns,
                                          uint64_t ns);

/* summary_out.c */
/* The rows of hitch `h` whose self time was furthest above their median,
 * at most `max`, into rows (node indexes) and excess (ns); returns how
 * many. */
TLOG_INTERNAL size_t tlog_hitch_culprits_(const tlog_summary *s, const tlog_hitch *h,
                                          const uint32_t *map, size_t max, uint32_t *nodes,
                                          uint64_t *excess);

#endif
