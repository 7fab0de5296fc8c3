/* Pages mapped ahead of use: record chunks made ready before a frame begins
 * are written into by its scopes without a page fault each. */
#ifndef TIMERLOG_PREFAULT_H
#define TIMERLOG_PREFAULT_H

#include <stddef.h>

#include "internal.h"

/* Maps every page of [p, p + bytes), memory the caller owns and will
 * overwrite: its contents are left undefined. */
TLOG_INTERNAL void tlog_prefault_(void *p, size_t bytes);

#endif
