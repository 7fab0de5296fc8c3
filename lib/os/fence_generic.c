/* Asymmetric fences where the system has no way to fence other threads:
 * both sides fence fully. */
#include "fence.h"

bool tlog_fence_asymmetric_;

void tlog_fence_heavy_(void)
{
    atomic_thread_fence(memory_order_seq_cst);
}
