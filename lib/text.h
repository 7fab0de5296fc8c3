/* Text the dump and the exports write: JSON strings, CSV fields, UTF-8,
 * and numbers whatever the locale (export.c). Not installed. */
#ifndef TIMERLOG_TEXT_H
#define TIMERLOG_TEXT_H

#include "internal.h"

/* export.c: text for the JSON and CSV writers. */
/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
TLOG_INTERNAL void tlog_json_str_(FILE *out, const char *s);
/* A CSV field, quoted when it needs to be. */
TLOG_INTERNAL void tlog_csv_field_(FILE *out, const char *s);
/* Text as UTF-8 (U+FFFD for bytes that are not), quotes doubled when
 * `quote`. */
TLOG_INTERNAL void tlog_put_utf8_(FILE *out, const char *s, bool quote);

/* Writes v >= 0 with `decimals` (at most 9) digits after a '.', whatever
 * the locale (printf's %f would write a ',' in some), into buf, which
 * holds at least 32 bytes; its length. Digit by digit: the dump writes one
 * per row. */
static inline int tlog_format_fixed_(char *buf, double v, int decimals)
{
    if (!(v >= 0) || v > 1e12) {   /* NaN, negative or absurd: never from real data */
        const char *text = v > 1e12 ? "1e12" : "0";
        memcpy(buf, text, strlen(text) + 1);
        return (int)strlen(text);
    }
    uint64_t scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    uint64_t units = (uint64_t)(v * (double)scale + 0.5);
    uint64_t whole = units / scale, fraction = units % scale;
    char backwards[32];
    int n = 0, i = 0;
    do {   /* at least one digit, as "%0*llu" writes */
        backwards[n++] = (char)('0' + fraction % 10);
        fraction /= 10;
    } while (++i < decimals);
    backwards[n++] = '.';
    do {
        backwards[n++] = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    for (i = 0; i < n; i++)
        buf[i] = backwards[n - 1 - i];
    buf[n] = '\0';
    return n;
}

static inline void tlog_put_fixed_(FILE *out, double v, int decimals)
{
    char buf[32];
    fwrite(buf, 1, (size_t)tlog_format_fixed_(buf, v, decimals), out);
}

#endif
