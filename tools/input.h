/* The files the commands read, standard input among them. */
#ifndef TIMERLOG_TOOLS_INPUT_H
#define TIMERLOG_TOOLS_INPUT_H

#include <stddef.h>

#include <timerlog/timerlog.h>

/* How the commands name standard input in what they print. */
extern const char input_stdin[];

/* Replaces each "-" of the n files with input_stdin, the name under which
 * input_open reads standard input and messages say which file they mean.
 * A file that is really named as input_stdin reads is still a file: only
 * this string, not its text, stands for standard input. */
void input_name_stdin(char **files, size_t n);

/* tlog_reader_open, except for input_stdin: standard input, read whole on
 * its first open and kept, so that every file that names it (and a command
 * that reads its files twice) reads the same stream. TLOG_EIO with *out
 * NULL when standard input cannot be read, TLOG_ENOMEM when it does not
 * fit in memory. */
int input_open(const char *path, tlog_reader **out);

/* Room for what input_problem says: a path as long as the system's
 * longest, and the reason. */
#define INPUT_PROBLEM_SIZE 4608

/* Says in msg why input_open(path) answered rc, *r being what it set:
 * the reader's message, which names the file, or the file's name and the
 * reason. */
void input_problem(char *msg, size_t size, const char *path, const tlog_reader *r, int rc);

/* Frees standard input's copy, once every reader input_open made is
 * closed. */
void input_release(void);

#endif
