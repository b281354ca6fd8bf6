// ferrite/pmem/checksum.hpp: the checksums of ferrite's on-media data.
//   fnv1a64  the identity blocks (pool header, node store, checkpoint log and image
//            headers): a few dozen bytes written once, checked at every open, where a fast
//            hash of large data is not needed.
//   crc32c   CRC-32C (Castagnoli, the polynomial of iSCSI, ext4 and SSE 4.2's crc32
//            instruction) of larger data written on a hot path: the checkpoint log's records
//            (checkpoint/epoch_log.cpp, format version 3). The crc32 instruction where the CPU
//            has it (8 bytes a cycle, no chain of multiplies), else a table, with the same
//            result, so a log is read the same on either. It detects every error of up to 3
//            bits and every burst of up to 32 bits in a record of a few lines, and other damage
//            but for 1 in 2^32.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ferrite::pmem {

inline std::uint64_t fnv1a64(const void* p, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ull) noexcept {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

namespace detail {

// The byte-at-a-time table of CRC-32C (reflected polynomial 0x82f63b78).
inline constexpr std::array<std::uint32_t, 256> crc32c_table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        t[i] = c;
    }
    return t;
}();

inline std::uint32_t crc32c_table_update(std::uint32_t state, const unsigned char* b, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) state = crc32c_table[(state ^ b[i]) & 0xff] ^ (state >> 8);
    return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_hw_update(std::uint32_t state, const unsigned char* b,
                                                                          std::size_t n) noexcept {
    std::uint64_t s = state;
    for (; n >= 8; b += 8, n -= 8) {
        std::uint64_t w;
        std::memcpy(&w, b, 8);
        s = __builtin_ia32_crc32di(s, w);
    }
    auto s32 = static_cast<std::uint32_t>(s);
    for (; n > 0; ++b, --n) s32 = __builtin_ia32_crc32qi(s32, *b);
    return s32;
}

inline bool crc32c_hw() noexcept {
    static const bool has = __builtin_cpu_supports("sse4.2");
    return has;
}
#endif

}  // namespace detail

// CRC-32C of [p, p + n), continuing `prev` (the CRC-32C of what came before; 0 to start):
// crc32c(b, nb, crc32c(a, na)) is the CRC-32C of a followed by b. crc32c("123456789") is
// 0xe3069283.
inline std::uint32_t crc32c(const void* p, std::size_t n, std::uint32_t prev = 0) noexcept {
    const auto* b = static_cast<const unsigned char*>(p);
#if defined(__x86_64__)
    if (detail::crc32c_hw()) return ~detail::crc32c_hw_update(~prev, b, n);
#endif
    return ~detail::crc32c_table_update(~prev, b, n);
}

// The table path alone (tests compare it with the instruction's).
inline std::uint32_t crc32c_portable(const void* p, std::size_t n, std::uint32_t prev = 0) noexcept {
    return ~detail::crc32c_table_update(~prev, static_cast<const unsigned char*>(p), n);
}

}  // namespace ferrite::pmem
