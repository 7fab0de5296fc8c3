/* Call sites: titles compared and hashed, ids, and what the library keeps
 * per site (site.c). Not installed. */
#ifndef TIMERLOG_SITE_H
#define TIMERLOG_SITE_H

#include "internal.h"

/* site.c */
TLOG_INTERNAL uint64_t tlog_hash_str_(uint64_t h, const char *s);
TLOG_INTERNAL bool tlog_same_title_(const tlog_site *a, const tlog_site *b);
TLOG_INTERNAL void tlog_site_count_(const tlog_site *const *sites, const uint64_t *counts,
                                    size_t n);
/* What the library keeps per site (site.c). */
typedef struct tlog_site_entry {
    const tlog_site *site;
    uint64_t id;                  /* tlog_site_id(site) */
    _Atomic uint64_t resolved;    /* tlog_site_instances */
    _Atomic uint64_t reported;    /* instance numbers given out to threads, in blocks
                                   * (subscribe.c) */
} tlog_site_entry;
/* The site's entry, made on first use; stays valid for the process's life.
 * NULL if memory ran out. Takes a lock: cache what it returns. */
TLOG_INTERNAL tlog_site_entry *tlog_site_entry_(const tlog_site *site);
/* Counts a call of tlog_site_entry_, in a -Dtest_hooks=true build
 * (test_hooks.c); nothing otherwise. */
#ifdef TIMERLOG_TEST_HOOKS
TLOG_INTERNAL void tlog_test_site_lookup_(void);
#else
static inline void tlog_test_site_lookup_(void) {}
#endif

#endif
