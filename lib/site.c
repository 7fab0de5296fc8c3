/* Call sites: stable ids, instance counts, sites made at run time. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fork.h"
#include "log.h"
#include "map.h"
#include "record.h"
#include "site.h"
#include "util.h"

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
static tlog_map entry_map;          /* a site's address -> its entry in entries */
static tlog_site_entry **entries;
static size_t entries_cap, entries_len;

/* Caller holds entries_lock. */
static tlog_site_entry *entry_locked(const tlog_site *site, bool make)
{
    tlog_assert_held_(&entries_lock);
    uint32_t i;
    if (tlog_map_get_(&entry_map, (uintptr_t)site, &i))
        return entries[i];
    tlog_site_entry *e = NULL;
    if (!make || entries_len >= UINT32_MAX ||
        !TLOG_GROW(entries, entries_cap, entries_len + 1) ||
        !(e = tlog_calloc_(1, sizeof *e)) ||
        !tlog_map_put_(&entry_map, (uintptr_t)site, (uint32_t)entries_len)) {
        free(e);
        return NULL;
    }
    e->site = site;
    e->id = tlog_site_id(site);
    entries[entries_len++] = e;
    return e;
}

tlog_site_entry *tlog_site_entry_(const tlog_site *site)
{
    tlog_test_site_lookup_();
    tlog_lock_(&entries_lock, TLOG_LOCK_SITE_ENTRIES);
    tlog_site_entry *e = entry_locked(site, true);
    tlog_unlock_(&entries_lock);
    return e;
}

void tlog_site_count_(const tlog_site *const *sites, const uint64_t *counts, size_t n)
{
    tlog_lock_(&entries_lock, TLOG_LOCK_SITE_ENTRIES);
    for (size_t k = 0; k < n; k++) {
        tlog_site_entry *e = sites[k] ? entry_locked(sites[k], true) : NULL;
        if (e)
            atomic_fetch_add_explicit(&e->resolved, counts[k], memory_order_relaxed);
    }
    tlog_unlock_(&entries_lock);
}

uint64_t tlog_site_instances(const tlog_site *site)
{
    if (!site)
        return 0;
    tlog_lock_(&entries_lock, TLOG_LOCK_SITE_ENTRIES);
    tlog_site_entry *e = entry_locked(site, false);
    tlog_unlock_(&entries_lock);
    return e ? atomic_load_explicit(&e->resolved, memory_order_relaxed) : 0;
}

bool tlog_same_title_(const tlog_site *a, const tlog_site *b)
{
    return a == b || a->name == b->name ||
           (a->name && b->name && strcmp(a->name, b->name) == 0);
}

/* Interned sites live until the process ends, like the static ones, found
 * by the hash of their fields. */
typedef struct interned {
    tlog_site site;
    char strings[];
} interned;

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static tlog_map intern_map;         /* intern_hash -> the site's place in interns */
static interned **interns;
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

/* Caller holds intern_lock. */
static interned *intern_find_locked(uint64_t h, const char *name, const char *file,
                                    const char *function, int line, int level)
{
    tlog_assert_held_(&intern_lock);
    const tlog_map *m = &intern_map;
    for (size_t at = tlog_map_first_(m, h); tlog_map_has_(m, at); at = tlog_map_next_(m, at, h)) {
        interned *it = interns[m->slots[at].value];
        const tlog_site *s = &it->site;
        if (s->line == line && s->level == level && str_eq(s->name, name) &&
            str_eq(s->file, file) && str_eq(s->function, function))
            return it;
    }
    return NULL;
}

/* Caller holds intern_lock. NULL when memory ran out. */
static interned *intern_add_locked(uint64_t h, const char *name, const char *file,
                                   const char *function, int line, int level)
{
    tlog_assert_held_(&intern_lock);
    size_t len = strlen(name) + 1 + (file ? strlen(file) + 1 : 0) +
                 (function ? strlen(function) + 1 : 0);
    interned *it = NULL;
    if (intern_len >= UINT32_MAX || !TLOG_GROW(interns, intern_cap, intern_len + 1) ||
        !(it = tlog_calloc_(1, sizeof *it + len)) ||
        !tlog_map_put_(&intern_map, h, (uint32_t)intern_len)) {
        free(it);
        return NULL;
    }
    char *cursor = it->strings;
    it->site.name = copy_into(&cursor, name);
    it->site.file = copy_into(&cursor, file);
    it->site.function = copy_into(&cursor, function);
    it->site.line = line;
    it->site.level = level;
    interns[intern_len++] = it;
    return it;
}

const tlog_site *tlog_site_intern(const char *name, const char *file,
                                  const char *function, int line, int level)
{
    if (!name)
        return NULL;
    uint64_t h = intern_hash(name, file, function, line, level);
    tlog_lock_(&intern_lock, TLOG_LOCK_SITE_INTERN);
    interned *it = intern_find_locked(h, name, file, function, line, level);
    if (!it)
        it = intern_add_locked(h, name, file, function, line, level);
    tlog_unlock_(&intern_lock);
    return it ? &it->site : NULL;
}

/* Run-time names (tlog_site_named): a table of (call site, name) pairs with
 * a fixed index of twice TLOG_RUNTIME_NAMES_MAX slots, so it is never more
 * than half full and never grows or moves. A slot, once set, never changes
 * and its entry never changes either: readers probe it without a lock, and
 * only adding a name takes one. */
typedef struct named {
    tlog_site site;       /* first: a site pointer is a pointer to its entry */
    const tlog_site *at;  /* the call site */
    uint64_t hash;
    uint32_t len;         /* bytes of the name kept, the key */
    bool cut;             /* the name was longer: text is its head, then "..." */
    char text[];
} named;

#define NAMED_SLOTS (2 * TLOG_RUNTIME_NAMES_MAX)

static pthread_mutex_t named_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(named *) named_index[NAMED_SLOTS];
static atomic_size_t named_count;
static _Atomic uint64_t named_refused, named_bytes;
static atomic_bool named_full_reported, named_nomem_reported;

/* Each thread remembers the last name of each call site it used (by the
 * call site's address, direct-mapped), so that a call site that sees its
 * last name again costs one compare of the text, and threads that give one
 * call site names of their own never write the same memory. Freed when the
 * thread ends. */
#define NAMED_RECENT 64

typedef struct named_recent {
    const named *last[NAMED_RECENT];
} named_recent;

static TLOG_TLS named_recent *my_recent;
static pthread_key_t recent_key;
static pthread_once_t recent_key_once = PTHREAD_ONCE_INIT;
static bool recent_key_made;

static void recent_free(void *p)
{
    my_recent = NULL;
    free(p);
}

static void make_recent_key(void)
{
    recent_key_made = pthread_key_create(&recent_key, recent_free) == 0;
}

__attribute__((destructor)) static void delete_recent_key(void)
{
    if (recent_key_made)
        pthread_key_delete(recent_key);
}

static named_recent *own_recent(void)
{
    pthread_once(&recent_key_once, make_recent_key);
    if (!recent_key_made)
        return NULL;
    named_recent *r = tlog_calloc_(1, sizeof *r);
    if (r && pthread_setspecific(recent_key, r) != 0) {
        free(r);
        r = NULL;
    }
    return my_recent = r;
}

static size_t recent_slot(const tlog_site *at)
{
    return (size_t)(((uint64_t)(uintptr_t)at >> 3) * 0x9e3779b97f4a7c15ull >> 58);
}

/* How many bytes of `name` are kept: all of them, or for a longer name its
 * first TLOG_RUNTIME_NAME_BYTES, less a UTF-8 character that would be cut. */
static size_t named_key_len(const char *name, bool *cut)
{
    size_t n = strnlen(name, TLOG_RUNTIME_NAME_BYTES + 1);
    *cut = n > TLOG_RUNTIME_NAME_BYTES;
    if (*cut)
        for (n = TLOG_RUNTIME_NAME_BYTES; n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80;)
            n--;
    return n;
}

static uint64_t named_hash(const tlog_site *at, const char *name, size_t len)
{
    uint64_t h = ((uint64_t)(uintptr_t)at >> 3) * 0x9e3779b97f4a7c15ull ^ len;
    for (; len >= 8; name += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, name, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, name, len);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

static named *named_find(const tlog_site *at, uint64_t h, const char *name, size_t len,
                         bool cut)
{
    for (size_t i = h & (NAMED_SLOTS - 1);; i = (i + 1) & (NAMED_SLOTS - 1)) {
        named *e = atomic_load_explicit(&named_index[i], memory_order_acquire);
        if (!e)
            return NULL;
        if (e->hash == h && e->at == at && e->len == len && e->cut == cut &&
            memcmp(e->text, name, len) == 0)
            return e;
    }
}

/* Whether `e` is the entry of `name`: one compare of the text unless the
 * entry holds the head of a longer name. */
static bool named_is(const named *e, const char *name)
{
    if (!e->cut)
        return strcmp(e->text, name) == 0;
    bool cut;
    return named_key_len(name, &cut) == e->len && cut && memcmp(e->text, name, e->len) == 0;
}

/* Caller holds named_lock. NULL when the table is full or memory ran out
 * (*nomem tells which). */
static named *named_add_locked(const tlog_site *at, uint64_t h, const char *name, size_t len,
                        bool cut, bool *nomem)
{
    tlog_assert_held_(&named_lock);
    if (atomic_load_explicit(&named_count, memory_order_relaxed) >= TLOG_RUNTIME_NAMES_MAX)
        return NULL;
    size_t bytes = sizeof(named) + len + (cut ? 4 : 1);
    named *e = tlog_malloc_(bytes);
    if (!e) {
        *nomem = true;
        return NULL;
    }
    memcpy(e->text, name, len);
    memcpy(e->text + len, cut ? "..." : "", cut ? 4 : 1);
    e->site = *at;
    e->site.name = e->text;
    e->at = at;
    e->hash = h;
    e->len = (uint32_t)len;
    e->cut = cut;
    size_t i = h & (NAMED_SLOTS - 1);
    while (atomic_load_explicit(&named_index[i], memory_order_relaxed))
        i = (i + 1) & (NAMED_SLOTS - 1);
    atomic_store_explicit(&named_index[i], e, memory_order_release);
    atomic_fetch_add_explicit(&named_count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&named_bytes, bytes, memory_order_relaxed);
    return e;
}

/* A name that did not fit: counted; the first of the process is reported. */
static const tlog_site *named_refuse(const tlog_site *at, const char *name, bool nomem)
{
    atomic_fetch_add_explicit(&named_refused, 1, memory_order_relaxed);
    const char *title = at->name ? at->name : "";
    atomic_bool *once = nomem ? &named_nomem_reported : &named_full_reported;
    if (!atomic_load_explicit(once, memory_order_relaxed) &&
        !atomic_exchange_explicit(once, true, memory_order_relaxed)) {
        tlog_log *log = tlog_default();
        if (!log)
            return at;
        if (nomem)
            tlog_report_(log, tlog_thread_peek_(log), TLOG_ENOMEM, at,
                         "out of memory for the run-time name \"%.64s\": timed as \"%s\" "
                         "(counted in tlog_names_info.refused)", name, title);
        else
            tlog_report_(log, tlog_thread_peek_(log), TLOG_EFULL, at,
                         "more than %d run-time names: \"%.64s\" and later new names are "
                         "timed as \"%s\" of their call site (counted in "
                         "tlog_names_info.refused)", TLOG_RUNTIME_NAMES_MAX, name, title);
    }
    return at;
}

const tlog_site *tlog_site_named(const tlog_site *at, const char *name)
{
    if (!at || !name)
        return at;
    named_recent *recent = my_recent;
    size_t slot = recent_slot(at);
    if (recent) {
        const named *last = recent->last[slot];
        if (last && last->at == at && named_is(last, name))
            return &last->site;
    }
    bool cut, nomem = false;
    size_t len = named_key_len(name, &cut);
    uint64_t h = named_hash(at, name, len);
    named *e = named_find(at, h, name, len, cut);
    if (!e) {
        if (atomic_load_explicit(&named_count, memory_order_relaxed) >= TLOG_RUNTIME_NAMES_MAX)
            return named_refuse(at, name, false);
        tlog_lock_(&named_lock, TLOG_LOCK_SITE_NAMED);
        e = named_find(at, h, name, len, cut);
        if (!e)
            e = named_add_locked(at, h, name, len, cut, &nomem);
        tlog_unlock_(&named_lock);
        if (!e)
            return named_refuse(at, name, nomem);
    }
    if (recent || (recent = own_recent()) != NULL)
        recent->last[slot] = e;
    return &e->site;
}

int tlog_names_get_info(tlog_names_info *out)
{
    tlog_names_info info = {
        .size = sizeof info,
        .names = atomic_load_explicit(&named_count, memory_order_relaxed),
        .refused = atomic_load_explicit(&named_refused, memory_order_relaxed),
        .bytes = atomic_load_explicit(&named_bytes, memory_order_relaxed),
    };
    return tlog_copy_sized_(out, &info, sizeof info);
}

/* Outer to inner: none of these is held while another is taken. */
void tlog_site_atfork_(int phase)
{
    pthread_mutex_t *locks[] = {&named_lock, &intern_lock, &entries_lock};
    const enum tlog_lock_rank ranks[] = {TLOG_LOCK_SITE_NAMED, TLOG_LOCK_SITE_INTERN,
                                         TLOG_LOCK_SITE_ENTRIES};
    size_t n = sizeof locks / sizeof locks[0];
    for (size_t i = 0; i < n; i++) {
        size_t k = phase == TLOG_FORK_PREPARE ? i : n - 1 - i;
        tlog_fork_lock_(locks[k], ranks[k], phase);
    }
}
