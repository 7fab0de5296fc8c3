/* Call sites: stable ids, instance counts, sites made at run time. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* FNV-1a: stable across runs and platforms, which an address is not. */
uint64_t tlog_hash_str_(uint64_t h, const char *s)
{
    if (!s)
        return h;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t tlog_site_id(const tlog_site *site)
{
    if (!site)
        return 0;
    uint64_t id = tlog_hash_str_(0xcbf29ce484222325ull, site->file);
    id = tlog_hash_str_(id ^ 0xff, site->function);
    id ^= (uint64_t)(unsigned)site->line;
    id *= 0x100000001b3ull;
    id ^= id >> 29;
    return id ? id : 1;
}

/* What the library keeps per site, keyed by the site's address so that
 * sites can be read-only: its id, and its instance counts. Entries are
 * never freed or moved, so callers may keep pointers to them. */
static pthread_mutex_t entries_lock = PTHREAD_MUTEX_INITIALIZER;
static tlog_site_entry **entries;   /* open addressing */
static size_t entries_cap, entries_len;

static size_t entry_slot(tlog_site_entry **table, size_t cap, const tlog_site *site)
{
    size_t h = (size_t)(((uintptr_t)site >> 3) * 0x9e3779b97f4a7c15ull);
    for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!table[i] || table[i]->site == site)
            return i;
}

static bool entries_grow(void)
{
    size_t cap = entries_cap ? entries_cap * 2 : 256;
    tlog_site_entry **table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    for (size_t i = 0; i < entries_cap; i++)
        if (entries[i])
            table[entry_slot(table, cap, entries[i]->site)] = entries[i];
    free(entries);
    entries = table;
    entries_cap = cap;
    return true;
}

/* Caller holds entries_lock. */
static tlog_site_entry *entry_locked(const tlog_site *site, bool make)
{
    if (!entries_cap && !make)
        return NULL;
    if ((entries_len + 1) * 2 > entries_cap && (!make || !entries_grow()))
        return entries_cap ? entries[entry_slot(entries, entries_cap, site)] : NULL;
    size_t i = entry_slot(entries, entries_cap, site);
    if (!entries[i] && make && (entries[i] = calloc(1, sizeof *entries[i])) != NULL) {
        entries[i]->site = site;
        entries[i]->id = tlog_site_id(site);
        entries_len++;
    }
    return entries[i];
}

tlog_site_entry *tlog_site_entry_(const tlog_site *site)
{
    pthread_mutex_lock(&entries_lock);
    tlog_site_entry *e = entry_locked(site, true);
    pthread_mutex_unlock(&entries_lock);
    return e;
}

void tlog_site_count_(const tlog_site *const *sites, const uint64_t *counts, size_t n)
{
    pthread_mutex_lock(&entries_lock);
    for (size_t k = 0; k < n; k++) {
        tlog_site_entry *e = sites[k] ? entry_locked(sites[k], true) : NULL;
        if (e)
            atomic_fetch_add_explicit(&e->resolved, counts[k], memory_order_relaxed);
    }
    pthread_mutex_unlock(&entries_lock);
}

uint64_t tlog_site_instances(const tlog_site *site)
{
    if (!site)
        return 0;
    pthread_mutex_lock(&entries_lock);
    tlog_site_entry *e = entry_locked(site, false);
    pthread_mutex_unlock(&entries_lock);
    return e ? atomic_load_explicit(&e->resolved, memory_order_relaxed) : 0;
}

bool tlog_same_title_(const tlog_site *a, const tlog_site *b)
{
    return a == b || a->name == b->name ||
           (a->name && b->name && strcmp(a->name, b->name) == 0);
}

/* Interned sites live until the process ends, like the static ones, in a
 * hash table of chains that doubles as it fills. */
typedef struct interned {
    struct interned *next;
    uint64_t hash;
    tlog_site site;
    char strings[];
} interned;

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static interned **intern_table;
static size_t intern_cap, intern_len;

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static char *copy_into(char **cursor, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *dst = *cursor;
    memcpy(dst, s, n);
    *cursor += n;
    return dst;
}

static uint64_t intern_hash(const char *name, const char *file, const char *function,
                            int line, int level)
{
    uint64_t h = tlog_hash_str_(0xcbf29ce484222325ull, name);
    h = tlog_hash_str_(h ^ 1, file);
    h = tlog_hash_str_(h ^ 2, function);
    return (h ^ (uint64_t)(unsigned)line ^ ((uint64_t)(unsigned)level << 32)) *
           0x9e3779b97f4a7c15ull;
}

static bool intern_grow(void)
{
    size_t cap = intern_cap ? intern_cap * 2 : 64;
    interned **table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    for (size_t i = 0; i < intern_cap; i++)
        for (interned *it = intern_table[i], *next; it; it = next) {
            next = it->next;
            it->next = table[it->hash & (cap - 1)];
            table[it->hash & (cap - 1)] = it;
        }
    free(intern_table);
    intern_table = table;
    intern_cap = cap;
    return true;
}

static interned *intern_find(uint64_t h, const char *name, const char *file,
                             const char *function, int line, int level)
{
    if (!intern_cap)
        return NULL;
    for (interned *it = intern_table[h & (intern_cap - 1)]; it; it = it->next) {
        const tlog_site *s = &it->site;
        if (it->hash == h && s->line == line && s->level == level && str_eq(s->name, name) &&
            str_eq(s->file, file) && str_eq(s->function, function))
            return it;
    }
    return NULL;
}

const tlog_site *tlog_site_intern(const char *name, const char *file,
                                  const char *function, int line, int level)
{
    if (!name)
        return NULL;
    uint64_t h = intern_hash(name, file, function, line, level);
    pthread_mutex_lock(&intern_lock);
    interned *it = intern_find(h, name, file, function, line, level);
    if (!it && (intern_len < intern_cap || intern_grow())) {
        size_t len = strlen(name) + 1 + (file ? strlen(file) + 1 : 0) +
                     (function ? strlen(function) + 1 : 0);
        it = calloc(1, sizeof *it + len);
        if (it) {
            char *cursor = it->strings;
            it->hash = h;
            it->site.name = copy_into(&cursor, name);
            it->site.file = copy_into(&cursor, file);
            it->site.function = copy_into(&cursor, function);
            it->site.line = line;
            it->site.level = level;
            it->next = intern_table[h & (intern_cap - 1)];
            intern_table[h & (intern_cap - 1)] = it;
            intern_len++;
        }
    }
    pthread_mutex_unlock(&intern_lock);
    return it ? &it->site : NULL;
}
