/*
 * The one hash map of the code base: 64-bit keys to 32-bit values, open
 * addressing with linear probing over a power-of-two array of slots that is
 * never more than half full. Header-only, so that the tools use it too. Not
 * installed.
 *
 * It serves two kinds of tables:
 *  - exact keys (a packed (parent, title, kind), a pointer, an id): a slot
 *    holding the key is the entry. tlog_map_get_ / tlog_map_put_, or
 *    tlog_map_find_ then tlog_map_set_ to look up and insert in one probe.
 *  - keys that are a 64-bit hash of the caller's item (a string, several
 *    fields): items may share a key, so the caller walks every slot of the
 *    key and compares its own item, which the slot's value names:
 *
 *        size_t at = tlog_map_first_(m, h);
 *        for (; tlog_map_has_(m, at); at = tlog_map_next_(m, at, h))
 *            if (same(&items[m->slots[at].value], x))
 *                return m->slots[at].value;
 *        // `at` is now the empty slot where x goes: tlog_map_set_(m, at, h, n)
 *
 * Each entry also has 32 bits of the caller's own (tlog_map_slot.extra) in
 * what would otherwise be the slot's padding.
 *
 * The empty slot's key is TLOG_MAP_EMPTY (UINT64_MAX). A key equal to it is
 * stored as UINT64_MAX - 1, so to the map those two are one key: a table of
 * hashed keys loses nothing by it (its items are compared anyway); a table
 * of exact keys must not use both. tlog_map_find_, the one-probe lookup of
 * the hot paths, skips the fold: its keys are never TLOG_MAP_EMPTY (a packed
 * row key, a pointer and a 32-bit id cannot be it).
 *
 * Slots are allocated through alloc.h (so an allocation-failure test reaches
 * them). When memory runs out, nothing changes and false is returned. A zero-initialised tlog_map is an empty map; one map must not
 * be used by two threads at once unless all of them only read.
 */
#ifndef TIMERLOG_MAP_H
#define TIMERLOG_MAP_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "util.h"

#define TLOG_MAP_EMPTY UINT64_MAX
/* No slot: what tlog_map_first_ gives for a map that has none yet. */
#define TLOG_MAP_END SIZE_MAX
/* Slots of a map's first allocation. */
#define TLOG_MAP_MIN_SLOTS 64

typedef struct tlog_map_slot {
    uint64_t key;          /* TLOG_MAP_EMPTY: free */
    uint32_t value;
    uint32_t extra;        /* the caller's, in the slot's spare bytes: 0 when
                            * set, then kept with the entry (a count, say,
                            * read beside the value with no second lookup) */
} tlog_map_slot;

typedef struct tlog_map {
    tlog_map_slot *slots;  /* cap of them; NULL while cap is 0 */
    size_t cap;            /* 0 or a power of two */
    size_t count;          /* slots in use */
} tlog_map;

/* `key` as the map stores it (TLOG_MAP_EMPTY folded to UINT64_MAX - 1). */
static inline uint64_t tlog_map_key_(uint64_t key)
{
    return key == TLOG_MAP_EMPTY ? TLOG_MAP_EMPTY - 1 : key;
}

/* The slot where the probe for a stored key starts. cap must not be 0. */
static inline size_t tlog_map_home_(const tlog_map *m, uint64_t key)
{
    return (size_t)tlog_mix64_(key) & (m->cap - 1);
}

/* From slot `at` on, the first slot holding stored key `key` or empty. */
static inline size_t tlog_map_seek_(const tlog_map *m, size_t at, uint64_t key)
{
    const tlog_map_slot *s = m->slots;
    size_t mask = m->cap - 1;
    while (s[at].key != key && s[at].key != TLOG_MAP_EMPTY)
        at = (at + 1) & mask;
    return at;
}

/* The first slot of `key`: the slot of the first entry with that key or,
 * where there is none, the empty slot where an entry of it goes
 * (tlog_map_set_). TLOG_MAP_END when the map has no slots yet. */
static inline size_t tlog_map_first_(const tlog_map *m, uint64_t key)
{
    if (!m->cap)
        return TLOG_MAP_END;
    key = tlog_map_key_(key);
    return tlog_map_seek_(m, tlog_map_home_(m, key), key);
}

/* After slot `at` of `key` (one tlog_map_first_ or tlog_map_next_ gave and
 * that tlog_map_has_), the next slot of another entry with that key, or
 * the empty slot where a new entry of it goes. */
static inline size_t tlog_map_next_(const tlog_map *m, size_t at, uint64_t key)
{
    return tlog_map_seek_(m, (at + 1) & (m->cap - 1), tlog_map_key_(key));
}

/* Whether slot `at` holds an entry: false for an empty slot and for
 * TLOG_MAP_END. Also walks all entries: for at in [0, cap). */
static inline bool tlog_map_has_(const tlog_map *m, size_t at)
{
    return at < m->cap && m->slots[at].key != TLOG_MAP_EMPTY;
}

/* Grows to 2 * need slots or more (need <= SIZE_MAX / 4), the entries
 * rehashed from their stored keys; false when memory ran out, the map then
 * unchanged. */
static inline bool tlog_map_grow_(tlog_map *m, size_t need)
{
    size_t cap = m->cap ? m->cap : TLOG_MAP_MIN_SLOTS;
    while (cap < 2 * need)
        cap *= 2;
    if (cap > SIZE_MAX / sizeof(tlog_map_slot))
        return false;
    tlog_map_slot *slots = tlog_malloc_(cap * sizeof *slots);
    if (!slots)
        return false;
    memset(slots, 0xff, cap * sizeof *slots);
    tlog_map old = *m;
    m->slots = slots;
    m->cap = cap;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].key != TLOG_MAP_EMPTY)
            slots[tlog_map_seek_(m, tlog_map_home_(m, old.slots[i].key), TLOG_MAP_EMPTY)] =
                old.slots[i];
    free(old.slots);
    return true;
}

/* Room for `more` entries beyond those held, the map staying at most half
 * full; grows (doubling, from TLOG_MAP_MIN_SLOTS) when needed. False when
 * memory ran out or the size does not fit: the map is then unchanged. Slot
 * numbers from before a call that grew are no longer valid. */
static inline bool tlog_map_reserve_(tlog_map *m, size_t more)
{
    if (more <= (m->cap >> 1) - m->count)   /* count <= cap / 2 always */
        return true;
    if (more > SIZE_MAX / 4 - m->count)
        return false;
    return tlog_map_grow_(m, m->count + more);
}

/* Puts (key, value) in `at`, the empty slot where the probe for `key` ended
 * (tlog_map_find_, or tlog_map_first_ / tlog_map_next_), with nothing
 * changed in the map since and room reserved (tlog_map_reserve_) before the
 * probe. */
static inline void tlog_map_set_(tlog_map *m, size_t at, uint64_t key, uint32_t value)
{
    assert(at < m->cap && m->slots[at].key == TLOG_MAP_EMPTY && m->count < (m->cap >> 1));
    m->slots[at] = (tlog_map_slot){tlog_map_key_(key), value, 0};
    m->count++;
}

/* Adds an entry of `key`, after those it already has (an exact-key table
 * then finds the first); false when memory ran out, nothing changed. */
static inline bool tlog_map_put_(tlog_map *m, uint64_t key, uint32_t value)
{
    if (!tlog_map_reserve_(m, 1))
        return false;
    size_t at = tlog_map_first_(m, key);
    while (tlog_map_has_(m, at))
        at = tlog_map_next_(m, at, key);
    tlog_map_set_(m, at, key, value);
    return true;
}

/* For tables of exact keys (never TLOG_MAP_EMPTY: no fold on this path),
 * lookup and insert in one probe, on a map that has slots
 * (tlog_map_reserve_ made room first): whether `key` has an entry, *at then
 * its slot; else *at is the empty slot where an entry of it goes
 * (tlog_map_set_). */
static inline bool tlog_map_find_(const tlog_map *m, uint64_t key, size_t *at)
{
    assert(m->cap && key != TLOG_MAP_EMPTY);
    const tlog_map_slot *s = m->slots;
    size_t mask = m->cap - 1, i = (size_t)tlog_mix64_(key) & mask;
    for (; s[i].key != TLOG_MAP_EMPTY; i = (i + 1) & mask)
        if (s[i].key == key) {
            *at = i;
            return true;
        }
    *at = i;
    return false;
}

/* The value of `key`'s first entry in *value (not touched when there is
 * none); whether there is one. For tables of exact keys. */
static inline bool tlog_map_get_(const tlog_map *m, uint64_t key, uint32_t *value)
{
    size_t at = tlog_map_first_(m, key);
    if (!tlog_map_has_(m, at))
        return false;
    *value = m->slots[at].value;
    return true;
}

/* Removes the entry in slot `at` (one that tlog_map_has_). The entries
 * after it in its run move back into the hole when their probe passes it
 * (backward shift), so every other entry stays findable and no tombstone
 * is left; slot `at` may then hold one of them, and a walk over all slots
 * that removes looks at `at` again (it may also meet again an entry that
 * wrapped round from slot 0 into the last slots). Never allocates. */
static inline void tlog_map_remove_(tlog_map *m, size_t at)
{
    assert(tlog_map_has_(m, at));
    size_t mask = m->cap - 1, hole = at;
    for (size_t j = (at + 1) & mask; m->slots[j].key != TLOG_MAP_EMPTY; j = (j + 1) & mask) {
        size_t home = tlog_map_home_(m, m->slots[j].key);
        if (((j - hole) & mask) <= ((j - home) & mask)) {   /* hole in [home, j) */
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = TLOG_MAP_EMPTY;
    m->count--;
}

/* Forgets every entry, keeping the slots for the next use. */
static inline void tlog_map_clear_(tlog_map *m)
{
    if (m->slots)
        memset(m->slots, 0xff, m->cap * sizeof *m->slots);
    m->count = 0;
}

/* Frees the slots; the map is then empty (zero) and may be used again. */
static inline void tlog_map_free_(tlog_map *m)
{
    free(m->slots);
    *m = (tlog_map){NULL, 0, 0};
}

#endif
