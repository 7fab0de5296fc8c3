/* Text the dump and the exports write: JSON strings, CSV fields, UTF-8,
 * and numbers whatever the locale (export.c). Not installed. */
#ifndef TIMERLOG_TEXT_H
#define TIMERLOG_TEXT_H

#include "internal.h"
#include "line.h"

/* export.c: text for the JSON and CSV writers. */
/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
TLOG_INTERNAL void tlog_json_str_(FILE *out, const char *s);
/* A CSV field, quoted when it needs to be. */
TLOG_INTERNAL void tlog_csv_field_(FILE *out, const char *s);
/* Text as UTF-8 (U+FFFD for bytes that are not), quotes doubled when
 * `quote`. */
TLOG_INTERNAL void tlog_put_utf8_(FILE *out, const char *s, bool quote);
/* One title of a row's path in a CSV field, as tlog_put_utf8_, led by
 * "(E) " when it is work done elsewhere: the dump's and `timerlog diff`'s
 * notation, which keeps a host row and a device row of one title, and
 * their children, on paths of their own. */
TLOG_INTERNAL void tlog_put_path_title_(FILE *out, const char *title, tlog_kind kind, bool quote);

/* Writes v >= 0 with `decimals` (at most 9) digits after a '.', whatever
 * the locale (printf's %f would write a ',' in some), into buf, which
 * holds at least 32 bytes; its length. Digit by digit: the dump writes one
 * per row. Any v a uint64 holds (a mean of nanoseconds) is written whole;
 * NaN and negatives (never from real data) as 0, and past 2^64 its
 * largest double below. */
static inline int tlog_format_fixed_(char *buf, double v, int decimals)
{
    if (!(v >= 0))
        v = 0;
    if (v >= 0x1p64)
        v = 0x1p64 - 2048;
    uint64_t scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    /* Rounded as a whole in units of the last decimal (104.5 hundredths,
     * the double nearest 1.045 times 100, rounds up) while those fit; past
     * that, the whole part as it is and the fraction apart. */
    double units = v * (double)scale;
    uint64_t whole, fraction;
    if (units < 0x1p63) {
        uint64_t u = (uint64_t)(units + 0.5);
        whole = u / scale;
        fraction = u % scale;
    } else {
        whole = (uint64_t)v;
        fraction = (uint64_t)((v - (double)whole) * (double)scale + 0.5);
        if (fraction >= scale) {   /* rounded up to the next whole */
            whole++;
            fraction -= scale;
        }
    }
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


/* The result of writing to `out`: TLOG_EIO if any write failed, what was
 * still buffered included (flushed here, rather than left for a close the
 * caller may not check). */
static inline int tlog_written_(FILE *out)
{
    return fflush(out) != 0 || ferror(out) ? TLOG_EIO : TLOG_OK;
}

static inline void tlog_put_fixed_(FILE *out, double v, int decimals)
{
    char buf[32];
    fwrite(buf, 1, (size_t)tlog_format_fixed_(buf, v, decimals), out);
}

#endif
