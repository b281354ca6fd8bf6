// ferrite/pmem/pool_header.hpp: the on-media header of a pool file (format version 1).
//
// A pool file is a 4 KiB header followed by the pool's data area. The header has two parts:
//
//   identity   (offset 0, 256 bytes, written once at create, covered by a checksum)
//       magic "FERRITE\0", format version, header size, pool size, UUID, layout name,
//       creation time, checksum (FNV-1a 64 over the bytes before it)
//   state      (offset 256, one cache line, changed while the pool is open)
//       root offset, root size, data top (bytes used), clean-shutdown flag, heap offset
//       (where the pool's heap lives, so that tools can find it; 0 in pools without one),
//       catalog offset (the first block of the directory of named objects; 0 = none),
//       profile (what the pool was made to hold: 0 = plain, or a store's heap and catalog;
//       a store whose heap or catalog word is still 0 is an unfinished initialisation)
//
// Crash consistency: the identity part is written and persisted in a temporary file that is
// linked into place only afterwards, so a pool file under its final name always has a
// complete identity. The state fields are aligned 8-byte words in one cache line; within a
// line, stores persist in program order (axiom 1), so writing root_size and data_top before
// root_offset makes root_offset the commit point of root allocation.
// All integers are little-endian (x86-64 is the only supported architecture).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ferrite::pmem {

inline constexpr std::array<char, 8> pool_magic{'F', 'E', 'R', 'R', 'I', 'T', 'E', '\0'};
inline constexpr std::uint32_t pool_format_version = 1;
inline constexpr std::size_t pool_header_size = 4096;
inline constexpr std::size_t max_layout_name = 63;  // bytes, without the terminating NUL
inline constexpr std::uint64_t min_pool_size = 64 * 1024;
inline constexpr std::uint64_t max_pool_size = std::uint64_t{1} << 40;  // 1 TiB

struct pool_identity {
    std::array<char, 8> magic;
    std::uint32_t version;
    std::uint32_t header_size;
    std::uint64_t pool_size;
    std::array<std::uint8_t, 16> uuid;
    std::array<char, max_layout_name + 1> layout;
    std::uint64_t created_unix_ns;
    std::array<std::uint8_t, 256 - 8 - 4 - 4 - 8 - 16 - 64 - 8 - 8> reserved;
    std::uint64_t checksum;  // FNV-1a 64 of every byte above

    std::string_view layout_name() const noexcept;
    std::string uuid_string() const;
};
static_assert(sizeof(pool_identity) == 256);

struct alignas(64) pool_state {
    std::uint64_t root_offset;     // 0 = no root yet; commit point of root allocation
    std::uint64_t root_size;
    std::uint64_t data_top;        // first unused byte of the data area (bump allocation)
    std::uint64_t clean_shutdown;  // 1 = closed cleanly, 0 = open or crashed
    std::uint64_t heap_offset;     // the pool's registered heap (alloc::buddy_heap), 0 = none
    std::uint64_t catalog_offset;  // the pool's name catalog (alloc::name_directory), 0 = none
    std::uint64_t profile;         // pool_profile: plain (0) or store (a heap and a catalog)
    std::uint64_t reserved;
};
static_assert(sizeof(pool_state) == 64);

struct pool_header {
    pool_identity identity;
    pool_state state;
    std::uint8_t unused[pool_header_size - sizeof(pool_identity) - sizeof(pool_state)];
};
static_assert(sizeof(pool_header) == pool_header_size);

std::uint64_t identity_checksum(const pool_identity&) noexcept;

}  // namespace ferrite::pmem
