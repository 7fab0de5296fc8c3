/* `timerlog report`: one self-contained HTML page of a run's frames. */
#ifndef TIMERLOG_TOOLS_REPORT_H
#define TIMERLOG_TOOLS_REPORT_H

#include <stdio.h>

/*
 * Runs `timerlog report ARGS`: argv[0] is the first argument after
 * "report". The page goes to `out` (or the file of -o), messages to `err`.
 * Returns the exit status that tools/timerlog.c documents (0, 1 or 2).
 * Never exits, and frees all it takes.
 */
int timerlog_report(int argc, char **argv, FILE *out, FILE *err);

/* The page's source (tools/report/), embedded at build time by
 * tools/report/embed.py: NUL-terminated text. */
extern const char timerlog_report_html[];
extern const char timerlog_report_css[];
extern const char timerlog_report_js[];

#endif
