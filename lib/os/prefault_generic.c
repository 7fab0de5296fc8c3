/* Pages mapped ahead of use, where the system offers no call for it: one
 * write per page. */
#include <stdint.h>

#include "prefault.h"

#define PAGE 4096u

void tlog_prefault_(void *p, size_t bytes)
{
    volatile char *c = p;
    for (size_t i = 0; i < bytes; i += PAGE - ((uintptr_t)(c + i) & (PAGE - 1)))
        c[i] = 0;
}
