/*
 * Frames passed between processes, for libtimerlog-mpi: exported from
 * libtimerlog, but not part of its public API. Not installed.
 */
#ifndef TIMERLOG_EXCHANGE_H
#define TIMERLOG_EXCHANGE_H

#include "timerlog/timerlog.h"

/*
 * A resolved frame's rows (not its instances) as a complete stream in
 * memory (doc/stream.md): header, what the frame refers to, the frame, the
 * end block. tlog_reader_open_memory reads it back. *data is malloc'd.
 * TLOG_EINVAL for a frame not resolved, TLOG_ENOMEM, TLOG_EIO for a frame
 * whose block would be larger than a reader takes.
 */
TLOG_API int tlog_frame_encode_(const tlog_frame *frame, void **data, size_t *len);

/*
 * Points the rows of a frame made by tlog_frame_merge or tlog_frame_reduce
 * at interned copies of their call sites and of their launching scopes'
 * (tlog_site_intern), so that the frame outlives the readers its inputs
 * came from.
 */
TLOG_API int tlog_frame_intern_sites_(tlog_frame *frame);

/*
 * A summary's groups and rows, with every figure and histogram (not its
 * hitches, which are frames), as bytes that tlog_summary_decode_ reads back
 * into an equal summary of default configuration; for passing statistics
 * between processes. *data is malloc'd. TLOG_EINVAL for NULL arguments,
 * TLOG_ENOMEM.
 */
TLOG_API int tlog_summary_encode_(const tlog_summary *summary, void **data, size_t *len);

/*
 * Reads what tlog_summary_encode_ wrote. Input is untrusted: TLOG_EFORMAT,
 * with *out NULL, for anything that is not such bytes, whole; TLOG_ENOMEM;
 * TLOG_EINVAL for NULL arguments.
 */
TLOG_API int tlog_summary_decode_(const void *data, size_t len, tlog_summary **out);

#endif
