/*
 * Histograms of logarithmic buckets (summary.h): values below 128 each in a
 * bucket of their own, above that 64 buckets per power of two, so that a
 * bucket's middle is within 1/128 of every value in it. A histogram holds
 * the span of buckets it has needed, one bucket in place, more on the heap,
 * widened by doubling; the memory it holds is added to a counter the
 * caller gives.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "summary.h"

/* The middle of bucket i. */
static uint64_t bucket_value(unsigned i)
{
    if (i < 2 * TLOG_SKETCH_SUB)
        return i;
    return tlog_bucket_low_(i) + ((uint64_t)1 << (i / TLOG_SKETCH_SUB - 1u)) / 2;
}

bool tlog_sketch_widen_(size_t *bytes, tlog_sketch *sk, unsigned i)
{
    if (!sk->cap) {   /* the first value: in place */
        sk->lo = (uint16_t)i;
        sk->cap = 1;
        sk->u.one = 0;
        return true;
    }
    unsigned lo = i < sk->lo ? i : sk->lo;
    unsigned hi = i >= (unsigned)sk->lo + sk->cap ? i + 1 : sk->lo + sk->cap;
    unsigned cap = hi - lo;
    if (cap < 2u * sk->cap)
        cap = 2u * sk->cap;   /* doubling: a histogram widens a few times only */
    if (cap < 4)
        cap = 4;
    if (cap > TLOG_SKETCH_BUCKETS)
        cap = TLOG_SKETCH_BUCKETS;
    /* Grow towards the new bucket, keeping the span within the range. */
    if (i < sk->lo)
        lo = hi > cap ? hi - cap : 0;
    if (lo + cap > TLOG_SKETCH_BUCKETS)
        lo = TLOG_SKETCH_BUCKETS - cap;
    uint64_t *bins = tlog_calloc_(cap, sizeof *bins);
    if (!bins)
        return false;
    memcpy(bins + (sk->lo - lo), tlog_bins_(sk), sk->cap * sizeof *bins);
    tlog_sketch_free_(bytes, sk);
    *bytes += cap * sizeof *bins;
    sk->u.heap = bins;
    sk->lo = (uint16_t)lo;
    sk->cap = (uint16_t)cap;
    return true;
}

void tlog_sketch_free_(size_t *bytes, tlog_sketch *sk)
{
    if (sk->cap > 1) {
        *bytes -= sk->cap * sizeof *sk->u.heap;
        free(sk->u.heap);
    }
    sk->u.heap = NULL;
    sk->cap = sk->lo = 0;
}

bool tlog_sketch_copy_(size_t *bytes, tlog_sketch *to, const tlog_sketch *from)
{
    uint64_t *bins = NULL;
    if (from->cap > 1 && !(bins = tlog_malloc_(from->cap * sizeof *bins)))
        return false;
    tlog_sketch_free_(bytes, to);
    if (from->cap > 1) {
        memcpy(bins, from->u.heap, from->cap * sizeof *bins);
        *bytes += from->cap * sizeof *bins;
        to->u.heap = bins;
    } else {
        to->u.one = from->u.one;
    }
    to->lo = from->lo;
    to->cap = from->cap;
    return true;
}

bool tlog_sketch_reserve_like_(size_t *bytes, tlog_sketch *into, const tlog_sketch *from)
{
    unsigned first = 0, last = 0;
    bool any = false;
    for (unsigned k = 0; k < from->cap; k++)
        if (tlog_cbins_(from)[k]) {
            if (!any)
                first = from->lo + k;
            last = from->lo + k;
            any = true;
        }
    return !any ||
           (tlog_sketch_reserve_(bytes, into, first) && tlog_sketch_reserve_(bytes, into, last));
}

void tlog_acc_add_(tlog_acc *into, const tlog_acc *from)
{
    into->sum = tlog_sat_add_(into->sum, from->sum);
    if (from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
    for (unsigned k = 0; k < from->sk.cap; k++)
        if (tlog_cbins_(&from->sk)[k]) {
            uint64_t *bin = &tlog_bins_(&into->sk)[from->sk.lo + k - into->sk.lo];
            *bin = tlog_sat_add_(*bin, tlog_cbins_(&from->sk)[k]);
        }
}

/* The rank the q-quantile of n values is at: ceil(q * n) - 1, at least 0,
 * without libm; a product a hair above a whole number (0.99 * 100) is
 * taken as that number. */
uint64_t tlog_rank_of_(double q, uint64_t n)
{
    double x = q * (double)n;
    if (!(x < 0x1p64))   /* n near 2^64: past what converts */
        return n ? n - 1 : 0;
    uint64_t r = (uint64_t)x;
    if ((double)r < x - 1e-9 * (x > 1 ? x : 1))
        r++;
    if (r > n)
        r = n;
    return r ? r - 1 : 0;
}

unsigned tlog_sketch_quantile_bucket_(const tlog_sketch *sk, uint64_t n, double q)
{
    uint64_t rank = tlog_rank_of_(q, n), seen = 0;
    for (unsigned k = 0; k < sk->cap; k++) {
        seen = tlog_sat_add_(seen, tlog_cbins_(sk)[k]);   /* counts merged saturate */
        if (seen > rank)
            return sk->lo + k;
    }
    return sk->cap ? sk->lo + sk->cap - 1u : 0;
}

uint64_t tlog_sketch_bucket_value_(unsigned i)
{
    return bucket_value(i);
}

uint64_t tlog_sketch_quantile_(const tlog_acc *a, uint64_t n, double q)
{
    if (!n)
        return 0;
    uint64_t rank = tlog_rank_of_(q, n);
    if (rank == 0 || rank == n - 1)   /* the extremes are kept exactly */
        return rank ? a->max : a->min;
    uint64_t v = bucket_value(tlog_sketch_quantile_bucket_(&a->sk, n, q));
    return v < a->min ? a->min : v > a->max ? a->max : v;
}

void tlog_stat_value_(const tlog_acc *a, uint64_t n, tlog_stat_value *v)
{
    memset(v, 0, sizeof *v);
    if (!n)
        return;
    v->mean = (double)a->sum / (double)n;
    v->min = a->min;
    v->max = a->max;
    v->median = tlog_sketch_quantile_(a, n, 0.5);
    v->p90 = tlog_sketch_quantile_(a, n, 0.9);
    v->p99 = tlog_sketch_quantile_(a, n, 0.99);
}
