/* The files the commands read, standard input among them (input.h). */
#include "input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char input_stdin[] = "(standard input)";

/* Standard input's bytes, once read. */
static char *stdin_data;
static size_t stdin_size;
static int stdin_status = 1;   /* 1 not read yet; else TLOG_OK or an error */
static int stdin_errno;        /* why it could not be read */

void input_name_stdin(char **files, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(files[k], "-") == 0)
            files[k] = (char *)input_stdin;
}

/* Reads standard input to its end, doubling the copy as it grows. */
static int read_stdin(void)
{
    size_t cap = 0;
    for (;;) {
        if (stdin_size == cap) {
            size_t more = cap ? 2 * cap : 1u << 16;
            char *grown = more > cap ? realloc(stdin_data, more) : NULL;
            if (!grown)
                return TLOG_ENOMEM;
            stdin_data = grown;
            cap = more;
        }
        errno = 0;
        size_t got = fread(stdin_data + stdin_size, 1, cap - stdin_size, stdin);
        stdin_size += got;
        if (got == 0 && ferror(stdin)) {
            stdin_errno = errno;
            return TLOG_EIO;
        }
        if (got == 0)
            return TLOG_OK;
    }
}

int input_open(const char *path, tlog_reader **out)
{
    if (path != input_stdin)
        return tlog_reader_open(path, out);
    *out = NULL;
    if (stdin_status == 1)
        stdin_status = read_stdin();
    return stdin_status == TLOG_OK ? tlog_reader_open_memory(stdin_data, stdin_size, out)
                                   : stdin_status;
}

void input_problem(char *msg, size_t size, const char *path, const tlog_reader *r, int rc)
{
    if (rc == TLOG_EIO && r)   /* the reader's message names the file */
        snprintf(msg, size, "%s", tlog_reader_error(r));
    else if (rc == TLOG_EIO && path == input_stdin)
        snprintf(msg, size, "%s: cannot read: %s", path,
                 stdin_errno ? strerror(stdin_errno) : "read error");
    else
        snprintf(msg, size, "%s: %s", path, r ? tlog_reader_error(r) : tlog_strerror(rc));
}

void input_release(void)
{
    free(stdin_data);
    stdin_data = NULL;
    stdin_size = 0;
    stdin_status = 1;
    stdin_errno = 0;
}
