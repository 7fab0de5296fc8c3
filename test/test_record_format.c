/* The two forms of a scope record (lib/record.h) on their own: what fits
 * the compact form takes one slot, anything else two, and both read back
 * exactly, walking forwards or backwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "record.h"

/* Sites are only stored and compared here, never read. */
static const tlog_site *site_at(uint64_t address)
{
    return (const tlog_site *)(uintptr_t)address;
}

typedef struct sample {
    uint64_t site;
    tlog_ticks start, end;
    uint32_t depth, flags, tag;
    size_t slots;   /* the form it must take */
} sample;

#define BASE 1000000007ull

static const sample samples[] = {
    /* compact */
    {0x1000, BASE, BASE, 0, 0, 0, 1},
    {0x7fffffffeff0ull, BASE + 0xffffffffull, BASE + 0xffffffffull + 0xffffffffull, 4096, 0, 0, 1},
    {0xffffffffffffull, BASE + 5, BASE + 9, 17, TLOG_REC_INSERT, 0, 1},
    {0x555555554010ull, BASE + 1, BASE + 2, 3, TLOG_REC_INSERT | TLOG_REC_EXEC, 0, 1},
    /* wide: a site above 2^48 (a tagged pointer), with bit 63 too */
    {0x1000000000000ull, BASE, BASE + 1, 1, 0, 0, 2},
    {0xff00555555554010ull, BASE, BASE + 1, 2, 0, 0, 2},
    {0x8000000000001000ull, BASE, BASE + 1, 2, TLOG_REC_EXEC, 0, 2},
    /* wide: a start 2^32 ticks after the base, or before it */
    {0x1000, BASE + 0x100000000ull, BASE + 0x100000001ull, 1, 0, 0, 2},
    {0x1000, BASE - 1, BASE + 1, 1, 0, 0, 2},
    /* wide: a duration of 2^32 ticks, or an end before the start */
    {0x1000, BASE, BASE + 0x100000000ull, 1, 0, 0, 2},
    {0x1000, BASE + 10, BASE + 9, 1, 0, 0, 2},
    {0x1000, 0, UINT64_MAX, 1, 0, 0, 2},
    /* wide: flags a compact record has no room for, a sync scope's tag */
    {0x1000, BASE, BASE + 1, 5, TLOG_REC_REPAIRED, 0, 2},
    {0x1000, BASE, BASE + 1, 5, TLOG_REC_SYNC, 7, 2},
    {0x1000, BASE, BASE + 1, 4096, TLOG_REC_SYNC | TLOG_REC_REPAIRED, UINT32_MAX, 2},
};
#define NSAMPLES (sizeof samples / sizeof samples[0])

static void assert_same(const tlog_rec_view *v, const sample *s)
{
    assert_int_equal((uintptr_t)v->site, s->site);
    assert_int_equal(v->start, s->start);
    assert_int_equal(v->end, s->end);
    assert_int_equal(v->depth, s->depth);
    assert_int_equal(v->flags, s->flags);
    assert_int_equal(v->tag, s->tag);
}

static size_t put(tlog_rec *r, const sample *s)
{
    return tlog_rec_put_(r, BASE, site_at(s->site), s->start, s->end, s->depth, s->flags,
                         s->tag);
}

static void each_record_takes_its_form_and_reads_back(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSAMPLES; i++) {
        tlog_rec r[2];
        assert_int_equal(put(r, &samples[i]), samples[i].slots);
        assert_int_equal(tlog_rec_is_wide_(&r[0]), samples[i].slots == 2);
        tlog_rec_view v;
        assert_int_equal(tlog_rec_get_(r, BASE, &v), samples[i].slots);
        assert_same(&v, &samples[i]);
        assert_int_equal(tlog_rec_get_back_(&r[samples[i].slots - 1], BASE, &v),
                         samples[i].slots);
        assert_same(&v, &samples[i]);
    }
}

/* What the fast path checks before it writes a compact record itself. */
static void the_compact_check_is_the_compact_form(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSAMPLES; i++) {
        const sample *s = &samples[i];
        if (s->flags & ~(unsigned)TLOG_REC_COMPACT_FLAGS || s->tag)
            continue;
        assert_int_equal(tlog_rec_compact_((uintptr_t)s->site, s->start - BASE,
                                           s->end - s->start),
                         s->slots == 1);
    }
}

/* Mixed forms one after another: a walk either way meets every record. */
static void a_run_of_mixed_records_walks_both_ways(void **state)
{
    (void)state;
    tlog_rec run[4 * NSAMPLES * 2];
    size_t at[4 * NSAMPLES], n = 0, slots = 0;
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < NSAMPLES; i++) {
            size_t j = (i * 7 + k * 3) % NSAMPLES;
            at[n++] = j;
            slots += put(&run[slots], &samples[j]);
        }
    size_t i = 0, seen = 0;
    while (i < slots) {
        tlog_rec_view v;
        i += tlog_rec_get_(&run[i], BASE, &v);
        assert_same(&v, &samples[at[seen++]]);
    }
    assert_int_equal(i, slots);
    assert_int_equal(seen, n);
    while (i > 0) {
        tlog_rec_view v;
        i -= tlog_rec_get_back_(&run[i - 1], BASE, &v);
        assert_same(&v, &samples[at[--seen]]);
    }
    assert_int_equal(seen, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_record_takes_its_form_and_reads_back),
        cmocka_unit_test(the_compact_check_is_the_compact_form),
        cmocka_unit_test(a_run_of_mixed_records_walks_both_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
