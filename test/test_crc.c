/* The CRC-32 that closes every stream block is zlib's (IEEE 802.3, reflected,
 * 0xedb88320), whatever the length and alignment of the bytes: compared with
 * the bitwise definition, and with the check value of the standard. Built
 * from the library's objects, where the function lives. */
#include "common.h"
#include "stream/format.h"

/* The definition, one bit at a time. */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
    return ~crc;
}

static void check_string_gives_the_standard_value(void **state)
{
    (void)state;
    assert_int_equal(tlog_crc32_(0, "123456789", 9), 0xcbf43926u);
    assert_int_equal(tlog_crc32_(0, "", 0), 0);
}

static void every_length_and_alignment_matches_the_definition(void **state)
{
    (void)state;
    uint8_t buf[600];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= 520; n++)
            assert_int_equal(tlog_crc32_(0, buf + off, n), crc32_bitwise(0, buf + off, n));
}

static void a_crc_continues_across_calls(void **state)
{
    (void)state;
    const uint8_t text[] = "scopes, frames and device intervals, block by block";
    size_t n = sizeof text - 1;
    for (size_t cut = 0; cut <= n; cut++)
        assert_int_equal(tlog_crc32_(tlog_crc32_(0, text, cut), text + cut, n - cut),
                         crc32_bitwise(0, text, n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_string_gives_the_standard_value),
        cmocka_unit_test(every_length_and_alignment_matches_the_definition),
        cmocka_unit_test(a_crc_continues_across_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
