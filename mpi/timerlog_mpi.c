/*
 * Reducing frames across MPI ranks: each rank encodes its frame's rows as a
 * small stream in memory (doc/stream.md) and sends its length, then the
 * bytes in chunks of at most 16 KiB, to root, which reads them back and
 * reduces them with tlog_frame_reduce. Statistics travel the same way,
 * encoded by tlog_summary_encode_ and reduced with tlog_summary_reduce.
 *
 * Messages go over a private duplicate of the caller's communicator, made
 * once per communicator and kept as its attribute, so that no receive of
 * the application can take them. Root takes every message in step, even
 * when it has no memory for a frame (it then receives into a buffer on its
 * stack and leaves that rank out).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "exchange.h"
#include "timerlog/mpi.h"

#define LEN_TAG 1
#define FRAME_TAG 2
#define CHUNK 16384
/* Larger frames are not sent: the reader takes at most 256 MiB a block. */
#define MAX_FRAME ((size_t)250 << 20)

static int from_mpi(int rc)
{
    return rc == MPI_SUCCESS ? TLOG_OK : TLOG_EIO;
}

/* ------------------------------------------------------------------------ */
/* A private communicator                                                   */
/* ------------------------------------------------------------------------ */

/* The attribute that holds a communicator's duplicate, made once for the
 * process; threads calling collectives on different communicators may
 * come here at once. */
static pthread_once_t inner_key_once = PTHREAD_ONCE_INIT;
static int inner_key = MPI_KEYVAL_INVALID;

/* A duplicate is kept as its Fortran handle, an integer, in the attribute's
 * pointer: no memory to allocate, so no rank can fail where the others went
 * on into a collective over the duplicate (they would wait for it). */
static void *as_attr(MPI_Comm comm)
{
    return (void *)(intptr_t)MPI_Comm_c2f(comm);
}

static MPI_Comm of_attr(const void *attr)
{
    return MPI_Comm_f2c((MPI_Fint)(intptr_t)attr);
}

static int free_inner(MPI_Comm comm, int key, void *attr, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    MPI_Comm inner = of_attr(attr);
    return MPI_Comm_free(&inner);
}

static void make_inner_key(void)
{
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_inner, &inner_key, NULL) !=
        MPI_SUCCESS)
        inner_key = MPI_KEYVAL_INVALID;
}

/* The duplicate of `comm` the library talks over; collective the first
 * time on each communicator. */
static int private_comm(MPI_Comm comm, MPI_Comm *out)
{
    pthread_once(&inner_key_once, make_inner_key);
    if (inner_key == MPI_KEYVAL_INVALID)
        return TLOG_EIO;
    void *attr;
    int found = 0;
    if (MPI_Comm_get_attr(comm, inner_key, &attr, &found) != MPI_SUCCESS)
        return TLOG_EIO;
    if (found) {
        *out = of_attr(attr);
        return TLOG_OK;
    }
    MPI_Comm dup;
    if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS)
        return TLOG_EIO;
    if (MPI_Comm_set_attr(comm, inner_key, as_attr(dup)) != MPI_SUCCESS) {
        MPI_Comm_free(&dup);
        return TLOG_EIO;
    }
    *out = dup;
    return TLOG_OK;
}

/* ------------------------------------------------------------------------ */
/* Moving frames                                                            */
/* ------------------------------------------------------------------------ */

static int send_frame(const char *bytes, unsigned long len, int root, MPI_Comm comm)
{
    int rc = MPI_Send(&len, 1, MPI_UNSIGNED_LONG, root, LEN_TAG, comm);
    for (unsigned long at = 0; at < len && rc == MPI_SUCCESS; at += CHUNK)
        rc = MPI_Send(bytes + at, (int)(len - at < CHUNK ? len - at : CHUNK), MPI_BYTE, root,
                      FRAME_TAG, comm);
    return from_mpi(rc);
}

/* Receives a frame of `len` bytes into `bytes`, or, when NULL, into a
 * scratch buffer (the frame is lost). */
static int recv_chunks(char *bytes, unsigned long len, int from, MPI_Comm comm)
{
    char scratch[CHUNK];
    int rc = MPI_SUCCESS;
    for (unsigned long at = 0; at < len && rc == MPI_SUCCESS; at += CHUNK)
        rc = MPI_Recv(bytes ? bytes + at : scratch, (int)(len - at < CHUNK ? len - at : CHUNK),
                      MPI_BYTE, from, FRAME_TAG, comm, MPI_STATUS_IGNORE);
    return from_mpi(rc);
}

/* This rank's frame as bytes; nothing when there is none. */
static int encode(const tlog_frame *frame, void **bytes, unsigned long *len)
{
    *bytes = NULL;
    *len = 0;
    if (!frame)
        return TLOG_OK;
    size_t n;
    int rc = tlog_frame_encode_(frame, bytes, &n);
    if (rc == TLOG_OK && n > MAX_FRAME) {
        free(*bytes);
        *bytes = NULL;
        return TLOG_ENOMEM;
    }
    if (rc == TLOG_OK)
        *len = (unsigned long)n;
    return rc;
}

/* One rank's frame on root: its bytes, the reader over them, the frame. */
typedef struct arrival {
    void *bytes;
    tlog_reader *reader;
    tlog_frame *frame;
} arrival;

static int decode(arrival *a, size_t len)
{
    int rc = tlog_reader_open_memory(a->bytes, len, &a->reader);
    if (rc == TLOG_OK)
        rc = tlog_reader_next(a->reader, &a->frame);
    return rc == TLOG_OK ? TLOG_OK : rc == TLOG_ENOMEM ? TLOG_ENOMEM : TLOG_EFORMAT;
}

static void arrival_free(arrival *a)
{
    tlog_frame_release(a->frame);
    tlog_reader_close(a->reader);
    free(a->bytes);
}

/* Root's side of rank r: the bytes it sent, its length first (the root's
 * own are `mine`). *bytes is then `mine` or a block for the caller to free. */
static int take_bytes(int r, int me, void *mine, unsigned long my_len, MPI_Comm comm,
                      void **bytes, unsigned long *len)
{
    *bytes = mine;
    *len = my_len;
    if (r == me)
        return TLOG_OK;
    int rc = from_mpi(MPI_Recv(len, 1, MPI_UNSIGNED_LONG, r, LEN_TAG, comm, MPI_STATUS_IGNORE));
    if (rc != TLOG_OK)
        return rc;
    void *got = *len ? malloc(*len) : NULL;
    rc = recv_chunks(got, *len, r, comm);
    if (rc == TLOG_OK && *len && !got)
        rc = TLOG_ENOMEM;
    if (rc != TLOG_OK) {
        free(got);
        return rc;
    }
    *bytes = got;
    return TLOG_OK;
}

/* Root's side of rank r: its frame, if it sent one and it could be read. */
static int take_frame(int r, int me, void *mine, unsigned long my_len, MPI_Comm comm,
                      arrival *a)
{
    unsigned long len;
    void *bytes;
    int rc = take_bytes(r, me, mine, my_len, comm, &bytes, &len);
    if (rc != TLOG_OK)
        return rc;
    if (!len)
        return TLOG_ENOFRAME;
    a->bytes = bytes;
    return decode(a, len);
}

/* Root: takes every rank's frame in rank order (its own is `mine`) and
 * reduces those that could be read. */
static int gather_and_reduce(void *mine, unsigned long my_len, int size, int me,
                             MPI_Comm comm, tlog_frame **out)
{
    arrival *a = calloc((size_t)size, sizeof *a);
    const tlog_frame **frames = calloc((size_t)size, sizeof *frames);
    int rc = a && frames ? TLOG_OK : TLOG_ENOMEM, n = 0;
    arrival none;
    for (int r = 0; r < size; r++) {
        arrival *slot = a ? &a[r] : &none;
        *slot = (arrival){0};
        int got = take_frame(r, me, r == me ? mine : NULL, my_len, comm, slot);
        if (got == TLOG_OK && a && frames)
            frames[n++] = slot->frame;
        else if (got != TLOG_ENOFRAME && rc == TLOG_OK)
            rc = got;
        if (!a)
            arrival_free(slot);   /* nowhere to keep it */
    }
    if (n) {
        int reduced = tlog_frame_reduce(frames, (size_t)n, out);
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
    for (int r = 0; a && r < size; r++)
        arrival_free(&a[r]);
    free(a);
    free(frames);
    return rc;
}

int tlog_mpi_reduce(const tlog_frame *frame, MPI_Comm comm, int root, tlog_frame **out)
{
    if (out)
        *out = NULL;
    int me, size, inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return inter ? TLOG_EINVAL : TLOG_EIO;   /* the same on every rank */
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return TLOG_EIO;
    if (root < 0 || root >= size)
        return TLOG_EINVAL;
    MPI_Comm inner;
    int rc = private_comm(comm, &inner);
    if (rc != TLOG_OK)
        return rc;
    void *bytes = NULL;
    unsigned long len = 0;
    rc = out ? encode(frame, &bytes, &len) : TLOG_EINVAL;   /* takes part all the same */
    if (me != root) {
        int sent = send_frame(bytes, len, root, inner);
        free(bytes);
        return rc != TLOG_OK ? rc : sent;
    }
    tlog_frame *reduced = NULL;
    int got = gather_and_reduce(bytes, len, size, me, inner, &reduced);
    if (out)
        *out = reduced;
    else
        tlog_frame_release(reduced);
    return rc != TLOG_OK ? rc : got;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

/* Root's side of rank r: its summary, if it sent one and it could be read;
 * NULL otherwise, with why in the result (TLOG_ENOFRAME: it had none). */
static int take_summary(int r, int me, void *mine, unsigned long my_len, MPI_Comm comm,
                        tlog_summary **out)
{
    *out = NULL;
    unsigned long len;
    void *bytes;
    int rc = take_bytes(r, me, mine, my_len, comm, &bytes, &len);
    if (rc != TLOG_OK)
        return rc;
    rc = len ? tlog_summary_decode_(bytes, len, out) : TLOG_ENOFRAME;
    if (bytes != mine)
        free(bytes);
    return rc;
}

/* Root: takes every rank's summary in rank order (its own is `mine`) and
 * reduces those that could be read, each at its rank's index. */
static int gather_summaries(void *mine, unsigned long my_len, int size, int me,
                            MPI_Comm comm, tlog_summary **out)
{
    tlog_summary **in = calloc((size_t)size, sizeof *in);
    int rc = in ? TLOG_OK : TLOG_ENOMEM, n = 0;
    for (int r = 0; r < size; r++) {
        tlog_summary *got = NULL;
        int taken = take_summary(r, me, r == me ? mine : NULL, my_len, comm, &got);
        if (taken == TLOG_OK && in) {
            in[r] = got;
            n++;
        } else {
            tlog_summary_destroy(got);
            if (taken != TLOG_ENOFRAME && rc == TLOG_OK)
                rc = taken == TLOG_ENOMEM || taken == TLOG_EIO ? taken : TLOG_EFORMAT;
        }
    }
    if (n) {
        int reduced = tlog_summary_reduce((const tlog_summary *const *)in, (size_t)size, out);
        if (reduced != TLOG_OK)
            rc = reduced;
    } else if (rc == TLOG_OK) {
        rc = TLOG_ENOFRAME;
    }
    for (int r = 0; in && r < size; r++)
        tlog_summary_destroy(in[r]);
    free(in);
    return rc;
}

int tlog_mpi_reduce_summary(const tlog_summary *summary, MPI_Comm comm, int root,
                            tlog_summary **out)
{
    if (out)
        *out = NULL;
    int me, size, inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return inter ? TLOG_EINVAL : TLOG_EIO;
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return TLOG_EIO;
    if (root < 0 || root >= size)
        return TLOG_EINVAL;
    MPI_Comm inner;
    int rc = private_comm(comm, &inner);
    if (rc != TLOG_OK)
        return rc;
    void *bytes = NULL;
    size_t n = 0;
    rc = !out ? TLOG_EINVAL : summary ? tlog_summary_encode_(summary, &bytes, &n) : TLOG_OK;
    if (rc == TLOG_OK && n > MAX_FRAME)
        rc = TLOG_ENOMEM;
    if (rc != TLOG_OK) {   /* takes part all the same, with nothing */
        free(bytes);
        bytes = NULL;
        n = 0;
    }
    if (me != root) {
        int sent = send_frame(bytes, (unsigned long)n, root, inner);
        free(bytes);
        return rc != TLOG_OK ? rc : sent;
    }
    tlog_summary *reduced = NULL;
    int got = gather_summaries(bytes, (unsigned long)n, size, me, inner, &reduced);
    free(bytes);
    if (out)
        *out = reduced;
    else
        tlog_summary_destroy(reduced);
    return rc != TLOG_OK ? rc : got;
}

int tlog_mpi_dump_stats(tlog_log *log, MPI_Comm comm, int root, FILE *out)
{
    tlog_summary *mine = NULL, *reduced = NULL;
    int kept = tlog_log_summary(log, &mine);
    int rc = tlog_mpi_reduce_summary(mine, comm, root, &reduced);
    tlog_summary_destroy(mine);
    if (rc == TLOG_OK && kept != TLOG_OK && kept != TLOG_EINVAL)
        rc = kept;
    if (reduced) {
        int printed = tlog_summary_dump(reduced, out, NULL);
        if (rc == TLOG_OK)
            rc = printed;
        tlog_summary_destroy(reduced);
    }
    return rc;
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
