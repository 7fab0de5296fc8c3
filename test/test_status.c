/* Status codes: each has its value of old, a message and a name of its own,
 * all from TLOG_STATUS_MAP; a code not listed gets the documented
 * fallbacks, never NULL. */
#include <limits.h>

#include "common.h"

/* The values are ABI: the list must keep them. */
_Static_assert(TLOG_OK == 0 && TLOG_EINVAL == -1 && TLOG_ENOMEM == -2 &&
               TLOG_ENOFRAME == -3 && TLOG_ENOTOPEN == -4 && TLOG_EMISMATCH == -5 &&
               TLOG_EBUSY == -6 && TLOG_EIO == -7 && TLOG_EDEPTH == -8 &&
               TLOG_EFULL == -9 && TLOG_ELATE == -10 && TLOG_ETHREADEXIT == -11 &&
               TLOG_EDEVICE == -12 && TLOG_ETIMEDOUT == -13 && TLOG_ENODEVICE == -14 &&
               TLOG_ECAPTURE == -15 && TLOG_EFORMAT == -16 && TLOG_EVERSION == -17,
               "status values changed");

struct code {
    int value;
    const char *name;
    const char *message;
};

#define AS_ROW(name, value, message) {TLOG_##name, "TLOG_" #name, message},
static const struct code codes[] = {TLOG_STATUS_MAP(AS_ROW)};
#undef AS_ROW
#define NCODES (sizeof codes / sizeof codes[0])

static void the_list_holds_every_code_from_ok_to_eversion(void **state)
{
    (void)state;
    assert_int_equal(NCODES, 1 - TLOG_EVERSION);
    for (size_t i = 0; i < NCODES; i++)
        assert_int_equal(codes[i].value, -(int)i);
}

static void every_code_has_its_own_name(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCODES; i++) {
        const char *name = tlog_err_name(codes[i].value);
        assert_non_null(name);
        assert_string_equal(name, codes[i].name);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(name, tlog_err_name(codes[j].value));
    }
    assert_string_equal(tlog_err_name(TLOG_EFULL), "TLOG_EFULL");
    assert_string_equal(tlog_err_name(TLOG_OK), "TLOG_OK");
}

static void every_code_has_its_own_message(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCODES; i++) {
        const char *m = tlog_strerror(codes[i].value);
        assert_non_null(m);
        assert_string_equal(m, codes[i].message);
        assert_string_not_equal(m, "unknown error");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(m, tlog_strerror(codes[j].value));
    }
    /* Messages of old, unchanged by the list. */
    assert_string_equal(tlog_strerror(TLOG_EFULL), "thread record budget used up");
    assert_string_equal(tlog_strerror(TLOG_EVERSION),
                        "stream written by a newer, incompatible version");
}

static void unknown_codes_get_the_fallbacks(void **state)
{
    (void)state;
    const int unknown[] = {1, 2, TLOG_EVERSION - 1, -100, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_non_null(tlog_err_name(unknown[i]));
        assert_string_equal(tlog_err_name(unknown[i]), "TLOG_UNKNOWN");
        assert_string_equal(tlog_strerror(unknown[i]), "unknown error");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_list_holds_every_code_from_ok_to_eversion),
        cmocka_unit_test(every_code_has_its_own_name),
        cmocka_unit_test(every_code_has_its_own_message),
        cmocka_unit_test(unknown_codes_get_the_fallbacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
