/* `timerlog diff`: compares the rows of two runs, frame by frame. */
#ifndef TIMERLOG_TOOLS_DIFF_H
#define TIMERLOG_TOOLS_DIFF_H

#include <stdio.h>

/* Exit status of `timerlog diff`, as diff(1) has it: a CI job fails on 1 for
 * a regression and on 2 for trouble. */
enum {
    TIMERLOG_DIFF_SAME = 0,    /* no row got slower */
    TIMERLOG_DIFF_SLOWER = 1,  /* some row got slower, significantly and beyond
                                * the threshold */
    TIMERLOG_DIFF_TROUBLE = 2  /* usage error, a file unreadable or damaged,
                                * nothing to compare, or the output failed */
};

/*
 * Runs `timerlog diff ARGS`: argv[0] is the first argument after "diff".
 * Results go to `out` (or the file of -o), messages to `err`. Returns one of
 * the statuses above. Never exits, and frees all it takes.
 */
int timerlog_diff(int argc, char **argv, FILE *out, FILE *err);

#endif
