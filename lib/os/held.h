/* Files held while a log writes them: an advisory lock, kept while the
 * descriptor is open, so that no other log, of this process or another,
 * writes the same file at once (the stream, the statistics report). */
#ifndef TIMERLOG_HELD_H
#define TIMERLOG_HELD_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

/* Paths tried when a file is another's: path-2 up to this. */
#define TLOG_HELD_MAX_NUMBERED 100u

/* Opens `wanted` for writing, creating it, and holds it. A path that is
 * held already is left as it is, and wanted-2, wanted-3, ... (numbered
 * before the extension) are tried in its place; the path opened is copied
 * to `opened` (`size` bytes). Nothing is truncated. The open does not wait
 * for a reader of a FIFO (ENXIO when there is none); the descriptor blocks
 * once open. A file system without locks is written as it is. The
 * descriptor, or -1 with errno set (EBUSY: every path tried is held). */
TLOG_INTERNAL int tlog_open_held_(const char *wanted, char *opened, size_t size);

/* Empties the file a held descriptor opened, when it is a regular one (a
 * FIFO or a device is written as it is); false with errno set when it
 * cannot be. */
TLOG_INTERNAL bool tlog_held_empty_(int fd);

#endif
