// Persistence primitives (primitives.hpp) under the backend in use: what each one does to the
// data (pwb/pfence/psync leave it alone, nt_store/nt_memcpy store it) and how much it adds to
// the calling thread's counters (pwb_range per line, nt_memcpy per word plus head/tail lines).
#include "ferrite/pmem/primitives.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "ferrite/pmem/backend.hpp"
#include "test_support.hpp"

namespace pm = ferrite::pmem;

namespace {

constexpr std::size_t line = pm::cache_line_size;

struct alignas(64) line_buffer {
    std::array<unsigned char, 8 * line> bytes;
};

void fill_pattern(unsigned char* p, std::size_t n, unsigned seed) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>((i * 7 + seed) & 0xff);
}

class PrimitivesTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(pm::installed_observer(), nullptr);
        pm::reset_thread_counters();
    }
};

TEST_F(PrimitivesTest, CacheLineIs64Bytes) { EXPECT_EQ(pm::cache_line_size, 64u); }

TEST_F(PrimitivesTest, PwbCountsOneLineAndKeepsTheData) {
    line_buffer buf{};
    fill_pattern(buf.bytes.data(), buf.bytes.size(), 1);
    const line_buffer before = buf;

    pm::pwb(&buf.bytes[10]);
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.pwb_lines = 1}));
    pm::pwb(&buf.bytes[line * 3 + 63]);
    pm::pwb(&buf.bytes[0]);
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.pwb_lines = 3}));
    EXPECT_EQ(std::memcmp(&buf, &before, sizeof buf), 0);
}

TEST_F(PrimitivesTest, PwbRangeCountsEveryOverlappingLine) {
    struct range_case {
        std::size_t offset, len, lines;
    };
    const range_case cases[] = {
        {0, 0, 0},     {5, 0, 0},          // zero length writes back nothing
        {0, 1, 1},     {63, 1, 1},         // one byte
        {0, 64, 1},    {64, 64, 1},        // exactly one aligned line
        {0, 128, 2},   {0, 5 * line, 5},   // exact line counts
        {0, 65, 2},    {63, 2, 2},         // one byte over a line boundary
        {60, 8, 2},    {1, 64, 2},         // unaligned, spanning two lines
        {32, 64, 2},   {1, 127, 2},        // unaligned, ending exactly at a boundary
        {1, 128, 3},   {100, 300, 6},      // unaligned, several lines
    };
    line_buffer buf{};
    fill_pattern(buf.bytes.data(), buf.bytes.size(), 2);
    const line_buffer before = buf;
    for (const auto& c : cases) {
        pm::reset_thread_counters();
        pm::pwb_range(buf.bytes.data() + c.offset, c.len);
        EXPECT_EQ(pm::thread_counters(), (pm::counters{.pwb_lines = c.lines}))
            << "pwb_range(offset " << c.offset << ", len " << c.len << ")";
    }
    EXPECT_EQ(std::memcmp(&buf, &before, sizeof buf), 0);
}

TEST_F(PrimitivesTest, PfenceCountsFences) {
    pm::pfence();
    pm::pfence();
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.pfences = 2}));
}

TEST_F(PrimitivesTest, PsyncCountsSyncs) {
    pm::psync();
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.psyncs = 1}));
}

TEST_F(PrimitivesTest, NtStoreStoresTheValue) {
    alignas(64) std::uint64_t words[8] = {};
    pm::nt_store(&words[0], 0x0123456789abcdefull);
    pm::nt_store(&words[7], ~std::uint64_t{0});
    pm::nt_store(&words[3], 42);
    EXPECT_EQ(pm::thread_counters(), (pm::counters{.nt_stores = 3}));
    pm::pfence();
    EXPECT_EQ(words[0], 0x0123456789abcdefull);
    EXPECT_EQ(words[3], 42u);
    EXPECT_EQ(words[7], ~std::uint64_t{0});
    EXPECT_EQ(words[1] | words[2] | words[4] | words[5] | words[6], 0u);
    pm::nt_store(&words[3], 7);  // overwrite
    pm::pfence();
    EXPECT_EQ(words[3], 7u);
}

// nt_memcpy: 8-byte-aligned destination words go out as NT stores; the unaligned head (up to
// the first 8-byte boundary) and tail are stored normally and written back (one line each).
pm::counters expected_nt_memcpy_counters(std::uintptr_t dst, std::size_t n) {
    if (n == 0) return {};
    std::size_t head = (8 - (dst & 7)) & 7;
    if (head > n) head = n;
    const std::size_t body = (n - head) / 8;
    const std::size_t tail = (n - head) % 8;
    return {.pwb_lines = (head != 0 ? 1u : 0u) + (tail != 0 ? 1u : 0u), .nt_stores = body};
}

TEST_F(PrimitivesTest, NtMemcpyExplicitCases) {
    struct copy_case {
        std::size_t dst_offset, len;
        pm::counters expected;
    };
    const copy_case cases[] = {
        {0, 0, {}},                                   // nothing
        {3, 0, {}},                                   // nothing, unaligned
        {0, 8, {.nt_stores = 1}},                     // one aligned word
        {0, 64, {.nt_stores = 8}},                    // one aligned line
        {0, 13, {.pwb_lines = 1, .nt_stores = 1}},    // aligned head, unaligned tail
        {3, 5, {.pwb_lines = 1}},                     // head only, up to the boundary
        {3, 2, {.pwb_lines = 1}},                     // head only, inside one word
        {3, 64, {.pwb_lines = 2, .nt_stores = 7}},    // head 5 + 7 words + tail 3
        {7, 9, {.pwb_lines = 1, .nt_stores = 1}},     // head 1 + one word
        {60, 10, {.pwb_lines = 2, .nt_stores = 0}},   // head 4, tail 6 (spans two lines)
    };
    std::array<unsigned char, 256> src{};
    fill_pattern(src.data(), src.size(), 3);
    for (const auto& c : cases) {
        line_buffer dst{};
        pm::reset_thread_counters();
        pm::nt_memcpy(dst.bytes.data() + c.dst_offset, src.data(), c.len);
        const auto got = pm::thread_counters();
        pm::pfence();
        EXPECT_EQ(got, c.expected) << "dst offset " << c.dst_offset << ", len " << c.len;
        EXPECT_EQ(std::memcmp(dst.bytes.data() + c.dst_offset, src.data(), c.len), 0);
    }
}

// Under every backend: with `none` (persistent caches) the body is one plain copy, not NT
// stores, and must copy and count exactly as the NT path does.
class NtMemcpyUnderEachBackend : public ferrite_test::backend_test,
                                 public ::testing::WithParamInterface<pm::backend> {};

TEST_P(NtMemcpyUnderEachBackend, CopiesEveryAlignmentAndLength) {
    if (!pm::cpu_supports(GetParam())) GTEST_SKIP() << "this CPU does not support " << pm::to_string(GetParam());
    pm::set_backend(GetParam());
    ASSERT_EQ(pm::installed_observer(), nullptr);
    constexpr unsigned char guard = 0xEE;
    std::array<unsigned char, 256 + 16> src{};
    fill_pattern(src.data(), src.size(), 5);
    for (std::size_t dst_off = 0; dst_off < 16; ++dst_off) {
        for (std::size_t src_off : {0u, 1u, 3u, 8u}) {
            for (std::size_t n = 0; n <= 200; ++n) {
                line_buffer dst;
                dst.bytes.fill(guard);
                unsigned char* d = dst.bytes.data() + dst_off;
                pm::reset_thread_counters();
                pm::nt_memcpy(d, src.data() + src_off, n);
                const auto got = pm::thread_counters();
                pm::pfence();
                ASSERT_EQ(got, expected_nt_memcpy_counters(reinterpret_cast<std::uintptr_t>(d), n))
                    << "dst offset " << dst_off << ", src offset " << src_off << ", len " << n;
                ASSERT_EQ(std::memcmp(d, src.data() + src_off, n), 0)
                    << "dst offset " << dst_off << ", src offset " << src_off << ", len " << n;
                for (std::size_t i = 0; i < dst.bytes.size(); ++i) {
                    if (i >= dst_off && i < dst_off + n) continue;
                    ASSERT_EQ(dst.bytes[i], guard)
                        << "byte " << i << " outside the copy changed (dst offset " << dst_off
                        << ", len " << n << ")";
                }
            }
        }
    }
}

// nt_copy_lines under every backend: whole lines copied from any source alignment, nothing
// around them touched, n / 8 NT stores counted and no pwb.
TEST_P(NtMemcpyUnderEachBackend, NtCopyLinesCopiesWholeLines) {
    if (!pm::cpu_supports(GetParam())) GTEST_SKIP() << "this CPU does not support " << pm::to_string(GetParam());
    pm::set_backend(GetParam());
    constexpr unsigned char guard = 0xEE;
    std::array<unsigned char, 4 * line + 24> src{};  // the largest source offset is 24
    fill_pattern(src.data(), src.size(), 9);
    for (std::size_t src_off : {0u, 1u, 8u, 24u}) {
        for (std::size_t lines = 0; lines <= 4; ++lines) {
            line_buffer dst;
            dst.bytes.fill(guard);
            pm::reset_thread_counters();
            pm::nt_copy_lines(dst.bytes.data() + line, src.data() + src_off, lines * line);
            const auto got = pm::thread_counters();
            pm::pfence();
            ASSERT_EQ(got, (pm::counters{.nt_stores = lines * line / 8})) << src_off << " " << lines;
            ASSERT_EQ(std::memcmp(dst.bytes.data() + line, src.data() + src_off, lines * line), 0) << src_off << " " << lines;
            for (std::size_t i = 0; i < dst.bytes.size(); ++i)
                if (i < line || i >= line + lines * line) {
                    ASSERT_EQ(dst.bytes[i], guard) << i;
                }
        }
    }
    pm::pfence();
}

INSTANTIATE_TEST_SUITE_P(AllBackends, NtMemcpyUnderEachBackend, ::testing::ValuesIn(pm::all_backends),
                         [](const ::testing::TestParamInfo<pm::backend>& backend_info) {
                             return std::string(pm::to_string(backend_info.param));
                         });

TEST_F(PrimitivesTest, CountersAddUpOverAMixedSequence) {
    line_buffer buf{};
    alignas(8) std::uint64_t word = 0;
    std::array<unsigned char, 100> src{};
    fill_pattern(src.data(), src.size(), 9);
    pm::pwb(&buf.bytes[0]);                           // 1 line
    pm::pwb_range(&buf.bytes[10], 200);               // bytes 10..209: lines 0..3, 4 lines
    pm::nt_store(&word, 5);                           // 1 NT store
    pm::nt_memcpy(&buf.bytes[300], src.data(), 100);  // 300 % 8 = 4: head 4 (1 line), 12 words
    pm::pfence();
    pm::psync();
    pm::psync();
    EXPECT_EQ(pm::thread_counters(),
              (pm::counters{.pwb_lines = 1 + 4 + 1, .pfences = 1, .psyncs = 2, .nt_stores = 1 + 12}));
    EXPECT_EQ(word, 5u);
    EXPECT_EQ(std::memcmp(&buf.bytes[300], src.data(), src.size()), 0);
}

}  // namespace
