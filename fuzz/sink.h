/*
 * Where the fuzz targets print: a stream that takes every byte and keeps
 * none, so that dumps and exports run their formatting in full without a
 * write(2) per buffer.
 */
#ifndef TIMERLOG_FUZZ_SINK_H
#define TIMERLOG_FUZZ_SINK_H

#include <stdio.h>
#include <stdio_ext.h>
#include <sys/types.h>

static ssize_t fuzz_sink_write(void *cookie, const char *buf, size_t size)
{
    (void)cookie;
    (void)buf;
    return (ssize_t)size;
}

/* One stream for the whole run; NULL when it cannot be made. */
static FILE *fuzz_sink(void)
{
    static FILE *sink;
    if (!sink) {
        cookie_io_functions_t io = {.write = fuzz_sink_write};
        sink = fopencookie(NULL, "w", io);
        if (sink) {
            setvbuf(sink, NULL, _IOFBF, 1 << 16);
            /* Only the fuzzing thread writes: no lock per character. */
            __fsetlocking(sink, FSETLOCKING_BYCALLER);
        }
    }
    return sink;
}

#endif
