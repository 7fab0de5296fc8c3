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

/* Instance counts live here, keyed by the site's address, so that sites can
 * be read-only. Updated once per resolved frame, never on the hot path. */
typedef struct site_count {
    const tlog_site *site;
    uint64_t count;
} site_count;

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static site_count *count_table;
static size_t count_cap, count_len;

static size_t count_slot(site_count *table, size_t cap, const tlog_site *site)
{
    size_t h = (size_t)(((uintptr_t)site >> 3) * 0x9e3779b97f4a7c15ull);
    size_t mask = cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask)
        if (table[i].site == site || !table[i].site)
            return i;
}

static bool count_grow(void)
{
    size_t cap = count_cap ? count_cap * 2 : 256;
    site_count *table = calloc(cap, sizeof *table);
    if (!table)
        return false;
    for (size_t i = 0; i < count_cap; i++)
        if (count_table[i].site)
            table[count_slot(table, cap, count_table[i].site)] = count_table[i];
    free(count_table);
    count_table = table;
    count_cap = cap;
    return true;
}

void tlog_site_count_(const tlog_site *const *sites, const uint64_t *counts, size_t n)
{
    pthread_mutex_lock(&count_lock);
    for (size_t k = 0; k < n; k++) {
        if (!sites[k])
            continue;
        if ((count_len + 1) * 2 > count_cap && !count_grow())
            break;
        site_count *e = &count_table[count_slot(count_table, count_cap, sites[k])];
        if (!e->site) {
            e->site = sites[k];
            count_len++;
        }
        e->count += counts[k];
    }
    pthread_mutex_unlock(&count_lock);
}

uint64_t tlog_site_instances(const tlog_site *site)
{
    uint64_t n = 0;
    pthread_mutex_lock(&count_lock);
    if (site && count_cap) {
        const site_count *e = &count_table[count_slot(count_table, count_cap, site)];
        n = e->site ? e->count : 0;
    }
    pthread_mutex_unlock(&count_lock);
    return n;
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
