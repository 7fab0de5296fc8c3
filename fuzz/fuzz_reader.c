/*
 * libFuzzer target: the stream reader on arbitrary bytes, and everything a
 * frame read back goes through (tree walk, dump, the three exports, merge
 * and reduce). Any crash, sanitizer report or leak is a bug; a damaged input
 * must only ever give an error.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true -Dbuildtype=debugoptimized \
 *       -Doptimization=1 -Dc_args=-fno-omit-frame-pointer \
 *       -Db_sanitize=address,undefined -Db_lundef=false
 *   build-fuzz/fuzz/fuzz_reader -max_len=2048 NEW_CORPUS_DIR fuzz/corpus
 *
 * Each frame is walked and dumped as it is read; the exports, the merge and
 * the reduce then take all the input's frames at once, so that each frame
 * goes through each of them once (not once per pair of frames). 2 KiB holds
 * a few frames (fuzz/corpus/device_pair.tlog: two with device rows); larger
 * inputs cost more per run and found no more in as much time.
 *
 * Built with -DFUZZ_ALLOC_FAIL (fuzz_reader_alloc, in a -Dtest_hooks=true
 * build), the input's last two bytes also pick an allocation of the run to
 * fail (their value modulo 1024; 0: none), so that every allocation the
 * reader and what follows it make fails with damaged input around it: an
 * allocation failure must only ever give an error too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <timerlog/timerlog.h>

#include "sink.h"

/* More frames than an input of -max_len bytes can hold. */
#define MAX_FRAMES 64

static int visit(void *user, const tlog_node *node, const tlog_node_info *info)
{
    (void)node;
    *(uint64_t *)user += info->count;
    return 0;
}

/* What `timerlog info` shows: the header and the tables read so far. */
static void describe(const tlog_reader *r, FILE *out)
{
    tlog_reader_info info = {.size = sizeof info};
    tlog_reader_get_info(r, &info);
    fprintf(out, "%u.%u %llu %s\n", info.version_major, info.version_minor,
            (unsigned long long)info.frames, tlog_reader_error(r));
    const tlog_site *s;
    for (size_t k = 0; (s = tlog_reader_site(r, k)) != NULL; k++)
        fprintf(out, "%s %s %s %d\n", s->name, s->file, s->function, s->line);
    const char *name;
    uint32_t id;
    for (size_t k = 0; (name = tlog_reader_thread(r, k, &id)) != NULL; k++)
        fprintf(out, "%u %s\n", id, name);
    for (size_t k = 0; (name = tlog_reader_device(r, k)) != NULL; k++)
        fprintf(out, "%s\n", name);
}

static void dump_merged(const tlog_frame *const *frames, size_t n, FILE *out,
                        int (*combine)(const tlog_frame *const *, size_t, tlog_frame **))
{
    tlog_frame *merged;
    if (combine(frames, n, &merged) != TLOG_OK)
        return;
    tlog_dump_frame(merged, out, NULL);
    tlog_frame_release(merged);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(const uint8_t *data, size_t size)
{
    FILE *out = fuzz_sink();
    if (!out)
        return;
    tlog_reader *r = NULL;
    /* All held across later reads, as a reader's user may hold them. */
    tlog_frame *frames[MAX_FRAMES];
    size_t n = 0;
    if (tlog_reader_open_memory(data, size, &r) == TLOG_OK) {
        while (n < MAX_FRAMES && tlog_reader_next(r, &frames[n]) == TLOG_OK) {
            const tlog_frame *f = frames[n++];
            uint64_t rows = 0;
            tlog_frame_walk(f, visit, &rows);
            /* Rows below half their parent hidden; in every other frame
             * also those shorter than 1 us. The merged frames below are
             * dumped whole. */
            tlog_dump_options hide = {.size = sizeof hide, .min_percent = 50,
                                      .min_ns = n % 2 ? 1000 : 0};
            tlog_dump_frame(f, out, &hide);
        }
    }
    describe(r, out);
    const tlog_frame *const *all = (const tlog_frame *const *)frames;
    if (n) {
        tlog_export_chrome(all, n, out);
        tlog_export_json(all, n, out);
        tlog_export_csv(all, n, out);
        dump_merged(all, n, out, tlog_frame_merge);
        dump_merged(all, n, out, tlog_frame_reduce);
    }
    for (size_t k = 0; k < n; k++)
        tlog_frame_release(frames[k]);
    tlog_reader_close(r);
}

#ifdef FUZZ_ALLOC_FAIL
void tlog_test_fail_alloc(uint64_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size -= 2;
    tlog_test_fail_alloc(((unsigned)data[size] | (unsigned)data[size + 1] << 8) % 1024);
    run(data, size);
    tlog_test_fail_alloc(0);
    return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size);
    return 0;
}
#endif
