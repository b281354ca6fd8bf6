// pmem/checksum.hpp: CRC-32C against its published check value, the instruction path against
// the table path (a log written on one CPU is read on another), and chaining.
#include "ferrite/pmem/checksum.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ferrite::pmem {
namespace {

TEST(Crc32c, MatchesTheCheckValue) {
    const char digits[] = "123456789";
    EXPECT_EQ(crc32c(digits, 9), 0xe3069283u);
    EXPECT_EQ(crc32c_portable(digits, 9), 0xe3069283u);
    EXPECT_EQ(crc32c(digits, 0), 0u);
}

TEST(Crc32c, InstructionAndTableAgreeAndChain) {
    std::vector<unsigned char> b(200);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(i * 131 + 7);
    for (std::size_t from = 0; from < 9; ++from)
        for (std::size_t n = 0; from + n <= b.size(); n += 7) {
            const auto whole = crc32c(b.data() + from, n);
            ASSERT_EQ(whole, crc32c_portable(b.data() + from, n)) << from << " " << n;
            const std::size_t cut = n / 3;
            ASSERT_EQ(crc32c(b.data() + from + cut, n - cut, crc32c(b.data() + from, cut)), whole) << from << " " << n;
        }
}

TEST(Crc32c, ChangesWithOneBit) {
    std::vector<unsigned char> b(64, 0x5a);
    const auto before = crc32c(b.data(), b.size());
    for (std::size_t bit = 0; bit < b.size() * 8; ++bit) {
        b[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
        ASSERT_NE(crc32c(b.data(), b.size()), before) << bit;
        b[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    }
}

}  // namespace
}  // namespace ferrite::pmem
