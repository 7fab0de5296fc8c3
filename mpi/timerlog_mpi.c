/*
 * Reducing frames across MPI ranks: each rank encodes its frame as a small
 * stream in memory (doc/stream.md), root gathers them, reads them back and
 * reduces them with tlog_frame_reduce. Frames travel point to point in
 * chunks of at most 64 KiB, so that root can always take a message in step,
 * even into a scratch buffer when it has no memory left for it.
 */
#include <limits.h>
#include <stdlib.h>

#include "exchange.h"
#include "timerlog/mpi.h"

#define FRAME_TAG 0x746c   /* "tl" */
#define CHUNK 65536

/* One rank's frame on root: its bytes, the reader over them, the frame. */
typedef struct arrival {
    void *bytes;
    tlog_reader *reader;
    tlog_frame *frame;
} arrival;

static int from_mpi(int rc)
{
    return rc == MPI_SUCCESS ? TLOG_OK : TLOG_EIO;
}

static int send_chunks(const char *bytes, int len, int root, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    for (int at = 0; at < len && rc == MPI_SUCCESS; at += CHUNK)
        rc = MPI_Send(bytes + at, len - at < CHUNK ? len - at : CHUNK, MPI_BYTE, root,
                      FRAME_TAG, comm);
    return from_mpi(rc);
}

/* Into `bytes`, or into a scratch buffer (the frame is lost) when NULL. */
static int recv_chunks(char *bytes, int len, int from, MPI_Comm comm)
{
    static _Thread_local char scratch[CHUNK];
    int rc = MPI_SUCCESS;
    for (int at = 0; at < len && rc == MPI_SUCCESS; at += CHUNK)
        rc = MPI_Recv(bytes ? bytes + at : scratch, len - at < CHUNK ? len - at : CHUNK,
                      MPI_BYTE, from, FRAME_TAG, comm, MPI_STATUS_IGNORE);
    return from_mpi(rc);
}

/* This rank's frame as bytes; an empty message when there is none. */
static int encode(const tlog_frame *frame, void **bytes, int *len)
{
    *bytes = NULL;
    *len = 0;
    if (!frame)
        return TLOG_OK;
    size_t n;
    int rc = tlog_frame_encode_(frame, bytes, &n);
    if (rc == TLOG_OK && n > INT_MAX) {
        free(*bytes);
        *bytes = NULL;
        return TLOG_ENOMEM;
    }
    if (rc == TLOG_OK)
        *len = (int)n;
    return rc;
}

static int decode(arrival *a, size_t len)
{
    int rc = tlog_reader_open_memory(a->bytes, len, &a->reader);
    if (rc == TLOG_OK)
        rc = tlog_reader_next(a->reader, &a->frame);
    return rc == TLOG_OK ? TLOG_OK : rc == TLOG_ENOMEM ? TLOG_ENOMEM : TLOG_EFORMAT;
}

static void arrivals_free(arrival *a, int n)
{
    for (int i = 0; i < n; i++) {
        tlog_frame_release(a[i].frame);
        tlog_reader_close(a[i].reader);
        free(a[i].bytes);
    }
    free(a);
}

/* Root: receives every rank's frame (its own is `mine`) and reduces them. */
static int gather_and_reduce(void *mine, const int *lens, int size, int me, MPI_Comm comm,
                             tlog_frame **out)
{
    arrival *a = calloc((size_t)size, sizeof *a);
    const tlog_frame **frames = calloc((size_t)size, sizeof *frames);
    int rc = a && frames ? TLOG_OK : TLOG_ENOMEM, nframes = 0;
    for (int r = 0; r < size; r++) {
        if (!lens[r])
            continue;
        void *bytes = r == me ? mine : malloc((size_t)lens[r]);
        int got = bytes ? TLOG_OK : TLOG_ENOMEM;
        if (r != me) {   /* received even without room, to keep MPI in step */
            int recv = recv_chunks(bytes, lens[r], r, comm);
            if (got == TLOG_OK)
                got = recv;
        }
        if (a && got == TLOG_OK) {
            a[r].bytes = bytes;
            got = decode(&a[r], (size_t)lens[r]);
        } else if (r != me) {
            free(bytes);
        }
        if (got == TLOG_OK && frames)
            frames[nframes++] = a[r].frame;
        else if (rc == TLOG_OK)
            rc = got;
    }
    if (frames && nframes) {
        int reduced = tlog_frame_reduce(frames, (size_t)nframes, out);
        if (reduced == TLOG_OK)
            reduced = tlog_frame_intern_sites_(*out);
        if (reduced != TLOG_OK) {
            tlog_frame_release(*out);
            *out = NULL;
            rc = reduced;
        }
    } else if (rc == TLOG_OK) {
        rc = TLOG_ENOFRAME;
    }
    if (a)
        arrivals_free(a, size);
    else if (mine)
        free(mine);
    free(frames);
    return rc;
}

int tlog_mpi_reduce(const tlog_frame *frame, MPI_Comm comm, int root, tlog_frame **out)
{
    int me, size;
    if (from_mpi(MPI_Comm_rank(comm, &me)) != TLOG_OK ||
        from_mpi(MPI_Comm_size(comm, &size)) != TLOG_OK)
        return TLOG_EIO;
    int rc = out && root >= 0 && root < size ? TLOG_OK : TLOG_EINVAL;
    if (out)
        *out = NULL;
    if (root < 0 || root >= size)
        return TLOG_EINVAL;   /* the same on every rank: no one takes part */
    void *bytes = NULL;
    int len = 0;
    if (rc == TLOG_OK)
        rc = encode(frame, &bytes, &len);
    int *lens = me == root ? calloc((size_t)size, sizeof *lens) : NULL;
    int gathered = from_mpi(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, root, comm));
    if (me != root) {
        int sent = gathered == TLOG_OK ? send_chunks(bytes, len, root, comm) : gathered;
        free(bytes);
        return rc != TLOG_OK ? rc : sent;
    }
    if (gathered != TLOG_OK || !lens) {
        /* Without the lengths the frames cannot be taken in step. */
        free(bytes);
        free(lens);
        return gathered != TLOG_OK ? gathered : TLOG_ENOMEM;
    }
    tlog_frame *reduced = NULL;
    int got = gather_and_reduce(bytes, lens, size, me, comm, &reduced);
    free(lens);
    if (out)
        *out = reduced;
    else
        tlog_frame_release(reduced);
    return rc != TLOG_OK ? rc : got;
}

int tlog_mpi_dump(tlog_log *log, MPI_Comm comm, int root, FILE *out)
{
    tlog_frame *mine = tlog_frame_latest(log), *reduced = NULL;
    int rc = tlog_mpi_reduce(mine, comm, root, &reduced);
    tlog_frame_release(mine);
    if (reduced) {
        int printed = tlog_dump_frame(reduced, out, NULL);
        if (rc == TLOG_OK)
            rc = printed;
        tlog_frame_release(reduced);
    }
    return rc;
}
