/* The node and instance arrays of a log's released frames, kept for its
 * next resolve (spares.c). Not installed. */
#ifndef TIMERLOG_SPARES_H
#define TIMERLOG_SPARES_H

#include "internal.h"

/* Memory a log keeps for its next resolve (the resolver's scratch, a
 * released frame's arrays) stays kept while it is at most
 * TLOG_KEEP_BYTES, or at most four times what the frame that used it last
 * needed: a log resolving large frames one after another makes it once,
 * and the first smaller frame after a large one gives it back. */
#define TLOG_KEEP_BYTES ((size_t)8 << 20)

static inline bool tlog_worth_keeping_(size_t bytes, size_t needed)
{
    return bytes <= TLOG_KEEP_BYTES || bytes / 4 <= needed;
}

/* What a log keeps, shared with its resolved frames (each holds a
 * reference: a frame may be released after its log is destroyed). */
typedef struct tlog_spares tlog_spares;

/* Before a frame of the log is resolved: the frame takes a reference to
 * the log's spares (made with the first frame) and, where it has none of
 * its own, the arrays they keep, with their capacities (capnodes,
 * capinsts). A frame that gets none allocates its own. */
TLOG_INTERNAL void tlog_spares_take_(tlog_log *log, tlog_frame *f);
/* As a frame is freed: its arrays go to its log's spares when worth
 * keeping (freed otherwise), and its reference is dropped. */
TLOG_INTERNAL void tlog_spares_give_(tlog_frame *f);
/* The log's reference, dropped as it is destroyed. */
TLOG_INTERNAL void tlog_spares_drop_(tlog_log *log);
/* The bytes of the arrays the log keeps (tlog_stats.resolve_bytes). */
TLOG_INTERNAL size_t tlog_spares_bytes_(tlog_log *log);

#endif
