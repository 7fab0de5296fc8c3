/* The end of a stream as the commands that read one say it. */
#ifndef TIMERLOG_TOOLS_ENDING_H
#define TIMERLOG_TOOLS_ENDING_H

#include <stdbool.h>
#include <stdio.h>

#include <timerlog/timerlog.h>

/* After the last frame of the stream at `path`, `rc` being what
 * tlog_reader_next answered last: says on `err` as warnings what its
 * frames lack though none is damaged (a file cut short, with no end block;
 * frames its writer could not write; frames its end block counts that were
 * not read) and returns true; false, saying nothing, when rc is damage,
 * which each command says its own way. */
bool warn_at_end(tlog_reader *r, const char *path, int rc, FILE *err);

#endif
