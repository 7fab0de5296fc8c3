/* The hash map of lib/map.h, on its own: what is put is found, growth keeps
 * every entry, every entry of a shared key is visited, removal keeps the
 * others findable, and an allocation that fails changes nothing. Built with
 * TIMERLOG_TEST_HOOKS and an allocation hook of its own, so that every build
 * runs the failure cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "map.h"

static uint64_t allocations, fail_at;   /* fail_at: the allocation that fails; 0: none */

bool tlog_alloc_fails_(void)
{
    return ++allocations == fail_at;
}

static void fail_allocation(uint64_t n)
{
    allocations = 0;
    fail_at = n;
}

static uint64_t next_random(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Every slot of the map from a full walk: entries counted, none lost. */
static size_t entries_in(const tlog_map *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
        n += tlog_map_has_(m, i);
    return n;
}

static void a_map_without_slots_finds_nothing(void **state)
{
    (void)state;
    tlog_map m = {0};
    uint32_t v = 7;
    assert_int_equal(tlog_map_first_(&m, 42), TLOG_MAP_END);
    assert_false(tlog_map_has_(&m, tlog_map_first_(&m, 42)));
    assert_false(tlog_map_get_(&m, 42, &v));
    assert_int_equal(v, 7);
    tlog_map_clear_(&m);
    tlog_map_free_(&m);
    assert_null(m.slots);
}

static void finds_what_was_put(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint64_t keys[N];
    uint64_t x = 1;
    tlog_map m = {0};
    keys[0] = 0;
    keys[1] = 1;
    keys[2] = TLOG_MAP_EMPTY - 2;
    for (size_t i = 3; i < N; i++)
        keys[i] = next_random(&x);
    for (size_t i = 0; i < N; i++)
        assert_true(tlog_map_put_(&m, keys[i], (uint32_t)i));
    assert_int_equal(m.count, N);
    for (size_t i = 0; i < N; i++) {
        uint32_t v = UINT32_MAX;
        assert_true(tlog_map_get_(&m, keys[i], &v));
        assert_int_equal(v, i);
    }
    for (int k = 0; k < 1000; k++) {
        uint32_t v;
        assert_false(tlog_map_get_(&m, next_random(&x), &v));
    }
    tlog_map_free_(&m);
}

/* The probe for a missing key ends at the slot where tlog_map_set_ puts
 * it, and one probe then serves lookup and insert. */
static void the_probe_ends_where_the_key_goes(void **state)
{
    (void)state;
    tlog_map m = {0};
    for (uint64_t key = 0; key < 300; key++) {
        assert_true(tlog_map_reserve_(&m, 1));
        size_t at = tlog_map_first_(&m, key * 3);
        assert_false(tlog_map_has_(&m, at));
        tlog_map_set_(&m, at, key * 3, (uint32_t)key);
        at = tlog_map_first_(&m, key * 3);
        assert_true(tlog_map_has_(&m, at));
        assert_int_equal(m.slots[at].value, key);
    }
    assert_int_equal(m.count, 300);
    tlog_map_free_(&m);
}

/* A hashed key equal to the empty slot's is folded into the key below it:
 * both walks find the entry, which is stored under the folded key. */
static void the_empty_key_is_one_with_the_key_below_it(void **state)
{
    (void)state;
    tlog_map m = {0};
    assert_true(tlog_map_put_(&m, TLOG_MAP_EMPTY, 5));
    size_t at = tlog_map_first_(&m, TLOG_MAP_EMPTY);
    assert_true(tlog_map_has_(&m, at));
    assert_int_equal(m.slots[at].value, 5);
    assert_true(m.slots[at].key == TLOG_MAP_EMPTY - 1);
    assert_int_equal(tlog_map_first_(&m, TLOG_MAP_EMPTY - 1), at);
    assert_false(tlog_map_has_(&m, tlog_map_next_(&m, at, TLOG_MAP_EMPTY)));
    uint32_t v = 0;
    assert_true(tlog_map_get_(&m, TLOG_MAP_EMPTY - 1, &v));
    assert_int_equal(v, 5);
    v = 0;
    assert_true(tlog_map_get_(&m, TLOG_MAP_EMPTY, &v));
    assert_int_equal(v, 5);
    assert_int_equal(entries_in(&m), 1);
    tlog_map_free_(&m);
}

/* An entry's extra bytes start at 0 and travel with it through growth and
 * removal's shifts. */
static void extra_travels_with_its_entry(void **state)
{
    (void)state;
    tlog_map m = {0};
    for (uint32_t i = 0; i < 1000; i++) {
        assert_true(tlog_map_reserve_(&m, 1));
        size_t at;
        assert_false(tlog_map_find_(&m, i, &at));
        tlog_map_set_(&m, at, i, i);
        assert_int_equal(m.slots[at].extra, 0);
        m.slots[at].extra = i * 3;
    }
    for (uint32_t i = 0; i < 1000; i += 3) {
        size_t at;
        assert_true(tlog_map_find_(&m, i, &at));
        tlog_map_remove_(&m, at);
    }
    for (uint32_t i = 0; i < 1000; i++) {
        size_t at;
        assert_int_equal(tlog_map_find_(&m, i, &at), i % 3 != 0);
        if (i % 3)
            assert_int_equal(m.slots[at].extra, i * 3);
    }
    tlog_map_free_(&m);
}

static void grows_keeping_everything(void **state)
{
    (void)state;
    tlog_map m = {0};
    size_t grew = 0, cap = 0;
    for (uint32_t i = 0; i < 20000; i++) {
        assert_true(tlog_map_put_(&m, (uint64_t)i << 32 | (i * 2u + 1u), i));
        assert_true(m.count * 2 <= m.cap);
        if (m.cap != cap) {
            assert_true(cap == 0 ? m.cap == TLOG_MAP_MIN_SLOTS : m.cap == cap * 2);
            cap = m.cap;
            grew++;
            for (uint32_t k = 0; k <= i; k++) {
                uint32_t v = UINT32_MAX;
                assert_true(tlog_map_get_(&m, (uint64_t)k << 32 | (k * 2u + 1u), &v));
                assert_int_equal(v, k);
            }
        }
    }
    assert_true(grew >= 9);
    assert_int_equal(entries_in(&m), 20000);
    /* Room asked for ahead grows once, to what it needs. */
    tlog_map_free_(&m);
    assert_true(tlog_map_reserve_(&m, 1000));
    assert_int_equal(m.cap, 2048);
    assert_true(tlog_map_reserve_(&m, 1024));
    assert_int_equal(m.cap, 2048);
    tlog_map_free_(&m);
}

/* Items that share a hash: the walk of that key visits each once, passes
 * over other keys in the run, and ends at an empty slot. */
static void colliding_hashes_are_all_visited(void **state)
{
    (void)state;
    tlog_map m = {0};
    const uint64_t shared = 0x1234567890abcdefull;
    assert_true(tlog_map_reserve_(&m, 200));
    /* Keys with the shared key's home slot, which fill the same run. */
    uint64_t neighbours[40];
    size_t nn = 0;
    size_t home = tlog_map_home_(&m, shared);
    for (uint64_t k = 0; nn < 40; k++)
        if (k != shared && tlog_map_home_(&m, k) == home)
            neighbours[nn++] = k;
    for (uint32_t i = 0; i < 40; i++) {   /* runs of one to three of the key */
        if (i % 3 != 1)
            assert_true(tlog_map_put_(&m, neighbours[i], 1000 + i));
        assert_true(tlog_map_put_(&m, shared, i));
    }
    bool seen[40] = {false};
    size_t visits = 0;
    size_t at = tlog_map_first_(&m, shared);
    for (; tlog_map_has_(&m, at); at = tlog_map_next_(&m, at, shared)) {
        uint32_t v = m.slots[at].value;
        assert_int_equal(m.slots[at].key, shared);
        assert_true(v < 40);
        assert_false(seen[v]);
        seen[v] = true;
        visits++;
    }
    assert_int_equal(visits, 40);
    assert_true(at < m.cap);
    assert_int_equal(m.slots[at].key, TLOG_MAP_EMPTY);
    /* One more of the key goes where the walk ended, and is visited too. */
    tlog_map_set_(&m, at, shared, 40);
    visits = 0;
    for (at = tlog_map_first_(&m, shared); tlog_map_has_(&m, at);
         at = tlog_map_next_(&m, at, shared))
        visits++;
    assert_int_equal(visits, 41);
    /* Growth rehashes them into one run of their own; still all visited. */
    assert_true(tlog_map_reserve_(&m, m.cap));
    visits = 0;
    for (at = tlog_map_first_(&m, shared); tlog_map_has_(&m, at);
         at = tlog_map_next_(&m, at, shared))
        visits++;
    assert_int_equal(visits, 41);
    for (uint32_t i = 0; i < 40; i++) {
        uint32_t v = 0;
        assert_int_equal(tlog_map_get_(&m, neighbours[i], &v), i % 3 != 1);
        if (i % 3 != 1)
            assert_int_equal(v, 1000 + i);
    }
    tlog_map_free_(&m);
}

/* Removal from the middle of long runs (many keys of one home, then keys
 * of the next homes) keeps every remaining entry findable, checked against
 * a plain list after every removal and insertion. */
static void removal_keeps_later_probes_findable(void **state)
{
    (void)state;
    enum { N = 400 };
    static uint64_t keys[N];
    static bool in[N];
    tlog_map m = {0};
    assert_true(tlog_map_reserve_(&m, N));
    size_t cap = m.cap;
    /* Three neighbouring homes, the last wrapping round the end. */
    size_t homes[3] = {cap - 2, cap - 1, 0};
    size_t n = 0;
    for (uint64_t k = 1; n < N / 4; k++)
        for (int h = 0; h < 3 && n < N / 4; h++)
            if (tlog_map_home_(&m, k) == homes[h])
                keys[n++] = k;
    uint64_t x = 7;
    while (n < N)
        keys[n++] = next_random(&x) | 1u;
    for (size_t i = 0; i < N; i++) {
        assert_true(tlog_map_put_(&m, keys[i], (uint32_t)i));
        in[i] = true;
    }
    assert_int_equal(m.cap, cap);
    for (int step = 0; step < 3 * N; step++) {
        size_t i = (size_t)(next_random(&x) % N);
        size_t at = tlog_map_first_(&m, keys[i]);
        assert_int_equal(tlog_map_has_(&m, at), in[i]);
        if (in[i])
            tlog_map_remove_(&m, at);
        else
            assert_true(tlog_map_put_(&m, keys[i], (uint32_t)i));
        in[i] = !in[i];
        size_t live = 0;
        for (size_t k = 0; k < N; k++) {
            uint32_t v = UINT32_MAX;
            assert_int_equal(tlog_map_get_(&m, keys[k], &v), in[k]);
            if (in[k]) {
                assert_int_equal(v, k);
                live++;
            }
        }
        assert_int_equal(m.count, live);
        assert_int_equal(entries_in(&m), live);
    }
    tlog_map_free_(&m);
}

/* Removing while walking all slots: slot `at` is looked at again, since an
 * entry from later in its run may have moved into it. */
static void removal_during_a_walk_reaches_every_entry(void **state)
{
    (void)state;
    tlog_map m = {0};
    for (uint32_t i = 0; i < 500; i++)
        assert_true(tlog_map_put_(&m, i, i));
    size_t removed = 0;
    for (size_t at = 0; at < m.cap;) {
        if (tlog_map_has_(&m, at) && m.slots[at].value % 2 == 0) {
            tlog_map_remove_(&m, at);
            removed++;
        } else {
            at++;
        }
    }
    assert_int_equal(removed, 250);
    assert_int_equal(m.count, 250);
    for (uint32_t i = 0; i < 500; i++) {
        uint32_t v;
        assert_int_equal(tlog_map_get_(&m, i, &v), i % 2 == 1);
    }
    tlog_map_free_(&m);
}

static void clear_forgets_entries_and_keeps_the_slots(void **state)
{
    (void)state;
    tlog_map m = {0};
    for (uint32_t i = 0; i < 100; i++)
        assert_true(tlog_map_put_(&m, i, i));
    tlog_map_slot *slots = m.slots;
    size_t cap = m.cap;
    tlog_map_clear_(&m);
    assert_ptr_equal(m.slots, slots);
    assert_int_equal(m.cap, cap);
    assert_int_equal(m.count, 0);
    assert_int_equal(entries_in(&m), 0);
    uint32_t v;
    assert_false(tlog_map_get_(&m, 5, &v));
    tlog_map_free_(&m);
}

static void allocation_failure_changes_nothing(void **state)
{
    (void)state;
    tlog_map m = {0};
    /* The first allocation of an empty map. */
    fail_allocation(1);
    assert_false(tlog_map_put_(&m, 1, 1));
    fail_allocation(1);
    assert_false(tlog_map_reserve_(&m, 1));
    assert_null(m.slots);
    assert_int_equal(m.cap, 0);
    assert_int_equal(m.count, 0);
    fail_allocation(0);
    /* A growth: fill to half, then the next entry needs twice the slots. */
    for (uint32_t i = 0; i < TLOG_MAP_MIN_SLOTS / 2; i++)
        assert_true(tlog_map_put_(&m, i, i));
    tlog_map before = m;
    tlog_map_slot copy[TLOG_MAP_MIN_SLOTS];
    memcpy(copy, m.slots, sizeof copy);
    fail_allocation(1);
    assert_false(tlog_map_put_(&m, 1000, 1000));
    fail_allocation(1);
    assert_false(tlog_map_reserve_(&m, 1));
    assert_ptr_equal(m.slots, before.slots);
    assert_int_equal(m.cap, before.cap);
    assert_int_equal(m.count, before.count);
    assert_memory_equal(m.slots, copy, sizeof copy);
    uint32_t v;
    assert_false(tlog_map_get_(&m, 1000, &v));
    /* Room that does not fit in memory at all. */
    fail_allocation(0);
    assert_false(tlog_map_reserve_(&m, SIZE_MAX / 2));
    assert_false(tlog_map_reserve_(&m, SIZE_MAX / 8));
    assert_int_equal(m.cap, before.cap);
    /* Once memory is back, the same put succeeds and all is there. */
    assert_true(tlog_map_put_(&m, 1000, 1000));
    assert_int_equal(m.cap, 2 * before.cap);
    for (uint32_t i = 0; i < TLOG_MAP_MIN_SLOTS / 2; i++) {
        assert_true(tlog_map_get_(&m, i, &v));
        assert_int_equal(v, i);
    }
    assert_true(tlog_map_get_(&m, 1000, &v));
    tlog_map_free_(&m);
}

/* util.h's growth helper, which the tables' item arrays use beside the
 * map: doubling, and nothing changed when memory runs out. */
static void growth_doubles_and_a_failure_changes_nothing(void **state)
{
    (void)state;
    int *items = NULL;
    size_t cap = 0;
    assert_true(TLOG_GROW(items, cap, 1));
    assert_int_equal(cap, 8);
    assert_true(TLOG_GROW(items, cap, 8));
    assert_int_equal(cap, 8);
    assert_true(TLOG_GROW(items, cap, 9));
    assert_int_equal(cap, 16);
    assert_true(TLOG_GROW(items, cap, 100));
    assert_int_equal(cap, 128);
    items[127] = 3;
    int *kept = items;
    fail_allocation(1);
    assert_false(TLOG_GROW(items, cap, 129));
    assert_ptr_equal(items, kept);
    assert_int_equal(cap, 128);
    fail_allocation(0);
    assert_false(TLOG_GROW(items, cap, SIZE_MAX / 2));
    assert_int_equal(cap, 128);
    assert_int_equal(items[127], 3);
    free(items);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_map_without_slots_finds_nothing),
        cmocka_unit_test(finds_what_was_put),
        cmocka_unit_test(the_probe_ends_where_the_key_goes),
        cmocka_unit_test(the_empty_key_is_one_with_the_key_below_it),
        cmocka_unit_test(extra_travels_with_its_entry),
        cmocka_unit_test(grows_keeping_everything),
        cmocka_unit_test(colliding_hashes_are_all_visited),
        cmocka_unit_test(removal_keeps_later_probes_findable),
        cmocka_unit_test(removal_during_a_walk_reaches_every_entry),
        cmocka_unit_test(clear_forgets_entries_and_keeps_the_slots),
        cmocka_unit_test(allocation_failure_changes_nothing),
        cmocka_unit_test(growth_doubles_and_a_failure_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
