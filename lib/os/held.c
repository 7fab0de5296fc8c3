/* Files held while a log writes them (held.h): flock, which every system
 * the library builds for has. */
#include "held.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* `path` with "-n" before its extension (after the last '.' of its last
 * part, not a leading one) into out; false when it does not fit. */
static bool numbered_path(const char *path, unsigned n, char *out, size_t size)
{
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    size_t stem = dot && dot != name ? (size_t)(dot - path) : strlen(path);
    int len = snprintf(out, size, "%.*s-%u%s", (int)stem, path, n, path + stem);
    return len > 0 && (size_t)len < size;
}

/* The file at `path` opened and held; -1 with errno set, EWOULDBLOCK when
 * another holds it. */
static int open_and_hold(const char *path)
{
    /* Non-blocking, so that a FIFO nobody reads fails (ENXIO) instead of
     * holding its writer for ever; blocking again once open. */
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(fd);
        errno = EWOULDBLOCK;
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

int tlog_open_held_(const char *wanted, char *opened, size_t size)
{
    if (snprintf(opened, size, "%s", wanted) >= (int)size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (unsigned n = 2;; n++) {
        int fd = open_and_hold(opened);
        if (fd >= 0 || errno != EWOULDBLOCK)
            return fd;
        if (n > TLOG_HELD_MAX_NUMBERED || !numbered_path(wanted, n, opened, size)) {
            errno = EBUSY;
            return -1;
        }
    }
}

bool tlog_held_empty_(int fd)
{
    struct stat st;
    return fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ftruncate(fd, 0) == 0;
}
