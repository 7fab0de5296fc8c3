/*
 * libFuzzer target: the stream reader on arbitrary bytes, and everything a
 * frame read back goes through (tree walk, dump, the three exports). Any
 * crash, sanitizer report or leak is a bug; a damaged input must only ever
 * give an error.
 *
 *   meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined (CC=clang)
 *   build-fuzz/fuzz/fuzz_reader NEW_CORPUS_DIR fuzz/corpus
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <timerlog/timerlog.h>

static int visit(void *user, const tlog_node *node, const tlog_node_info *info)
{
    (void)node;
    *(uint64_t *)user += info->count;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    tlog_reader *r = NULL;
    tlog_frame *prev = NULL;   /* held across reads, as a reader's user may */
    if (tlog_reader_open_memory(data, size, &r) == TLOG_OK) {
        tlog_frame *f;
        while (tlog_reader_next(r, &f) == TLOG_OK) {
            uint64_t rows = 0;
            tlog_frame_walk(f, visit, &rows);
            tlog_dump_frame(f, sink, NULL);
            tlog_dump_options hide = {.size = sizeof hide, .min_percent = 50};
            tlog_dump_frame(f, sink, &hide);
            const tlog_frame *two[2] = {f, prev};
            size_t n = prev ? 2 : 1;
            tlog_export_chrome(two, n, sink);
            tlog_export_json(two, n, sink);
            tlog_export_csv(two, n, sink);
            tlog_frame *merged;
            if (tlog_frame_merge(two, n, &merged) == TLOG_OK)
                tlog_frame_release(merged);
            tlog_frame_release(prev);
            prev = f;
        }
    }
    tlog_frame_release(prev);
    tlog_reader_close(r);
    return 0;
}
