/* Asymmetric fences: a reader that must order a store before a load
 * (subscribe.c: "busy" before "which list") pays only a compiler barrier,
 * and the rare writer that must see it (an unsubscribe waiting for readers)
 * makes every running thread of the process execute a full barrier. Where
 * the system cannot do that, readers fall back to a full fence. */
#ifndef TIMERLOG_FENCE_H
#define TIMERLOG_FENCE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "internal.h"

/* True once the process may use the heavy side (set at load time). */
extern TLOG_INTERNAL bool tlog_fence_asymmetric_;

/* The reader's side: orders its earlier stores before its later loads. */
static inline void tlog_fence_light_(void)
{
    if (TLOG_LIKELY(tlog_fence_asymmetric_))
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

/* The writer's side: after it returns, every light fence that some thread
 * passed has the effect of a full one. */
TLOG_INTERNAL void tlog_fence_heavy_(void);

#endif
