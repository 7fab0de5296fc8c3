/* Asymmetric fences on Linux: membarrier(2), private expedited (4.14+).
 * Without it (an older kernel, or a sandbox that refuses the call) readers
 * fence fully, and the heavy side is a full fence of its own. */
#define _GNU_SOURCE   /* syscall */
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fence.h"

bool tlog_fence_asymmetric_;

static long membarrier(int cmd)
{
    return syscall(__NR_membarrier, cmd, 0, 0);
}

__attribute__((constructor)) static void fence_register(void)
{
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    tlog_fence_asymmetric_ = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                             membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

void tlog_fence_heavy_(void)
{
    if (!tlog_fence_asymmetric_ || membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
        atomic_thread_fence(memory_order_seq_cst);
}
