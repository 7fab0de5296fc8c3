/* The timerlog command as a function: the program's main and the CLI's
 * fuzz target call it. */
#ifndef TIMERLOG_TOOLS_CLI_H
#define TIMERLOG_TOOLS_CLI_H

#include <stdio.h>

/*
 * Runs `timerlog argv[1] ...` (argv[0] is the program's name): results go
 * to `out`, messages and progress to `err`. Returns the exit status that
 * tools/timerlog.c documents (0, 1 or 2). Never exits, and frees all it
 * takes, so it may run again and again in one process; not thread-safe.
 */
int timerlog_main(int argc, char **argv, FILE *out, FILE *err);

#endif
