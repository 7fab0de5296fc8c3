/* A log's own statistics across frames and the report at exit (stats.c).
 * Not installed. */
#ifndef TIMERLOG_STATS_H
#define TIMERLOG_STATS_H

#include "log.h"

/* stats.c: a log's own statistics and the report at exit */
/* Reads TIMERLOG_REPORT and makes the log's summary when statistics are
 * on; TLOG_ENOMEM. */
TLOG_INTERNAL int tlog_stats_open_(tlog_log *log);
/* Says what was wrong with TIMERLOG_REPORT, if anything. */
TLOG_INTERNAL void tlog_stats_report_env_(tlog_log *log);
/* Counts a frame this call resolved, if the log keeps statistics. */
TLOG_INTERNAL void tlog_stats_feed_(tlog_frame *f);
/* Counts a frame pushed out of the queue unread; a failure is said. */
TLOG_INTERNAL void tlog_stats_count_evicted_(tlog_frame *f);
/* Writes the report TIMERLOG_REPORT asks for, if any, once. */
TLOG_INTERNAL void tlog_stats_write_report_(tlog_log *log);
TLOG_INTERNAL void tlog_stats_close_(tlog_log *log);
static inline bool tlog_stats_on_(const tlog_log *log)
{
    return log->stats.summary != NULL;
}

#endif
