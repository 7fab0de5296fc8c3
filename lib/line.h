/* A name as one line of text: what the text dump, the statistics' text
 * and the timerlog command write of titles and thread names. Not
 * installed. */
#ifndef TIMERLOG_LINE_H
#define TIMERLOG_LINE_H

#include <stdbool.h>
#include <stdio.h>

/* Whether byte c of a title is written as it is in the text dump: not a
 * control character (a newline, a tab), which is written as a space so
 * that every row stays one line. */
static inline bool tlog_line_char_(unsigned char c)
{
    return c >= 0x20 && c != 0x7f;
}

/* A title or a name in the text dump, the statistics' text and the
 * command's headers: a name cannot break a line or drive a terminal. */
static inline void tlog_put_line_text_(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(tlog_line_char_((unsigned char)*s) ? *s : ' ', out);
}

#endif
