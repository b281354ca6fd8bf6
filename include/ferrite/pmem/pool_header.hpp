// ferrite/pmem/pool_header.hpp: the on-media header of a pool file (format version 2).
//
// A pool file is a 4 KiB header followed by the pool's data area. The header has three parts:
//
//   identity   (offset 0, 256 bytes, written once at create, covered by a checksum)
//       magic "FERRITE\0", format version, header size, pool size, UUID, layout name,
//       creation time, checksum (FNV-1a 64 over the bytes before it)
//   state      (offset 256, one cache line, changed while the pool is open)
//       root offset, root size, data top (bytes used), clean-shutdown flag, profile (what the
//       pool was made to hold: 0 = plain, or a store's heap and catalog; a store whose heap
//       or catalog root is still missing is an unfinished initialisation), 3 reserved words (0)
//   roots      (offset 320, one cache line: the table of registered roots)
//       8 entries, one 8-byte word each: root id in the top 16 bits, pool offset in the low
//       48 (pools are at most 1 TiB), 0 = empty. Entries are used in order (no empty entry
//       before a used one). Ids: 1 = the heap (alloc::buddy_heap), 2 = the catalog
//       (alloc::name_directory's first block); a new feature takes the next id here and
//       registers itself with pool_ref::register_root, with no new header field.
//
// Format history: version 1 had one state word per feature (heap offset, catalog offset)
// instead of the roots table. Version 2 refuses a version-1 pool with wrong_version (the
// message names both versions); nothing upgrades one in place.
//
// Crash consistency: the identity part is written and persisted in a temporary file that is
// linked into place only afterwards, so a pool file under its final name always has a
// complete identity. The state fields are aligned 8-byte words in one cache line; within a
// line, stores persist in program order (axiom 1), so writing root_size and data_top before
// root_offset makes root_offset the commit point of root allocation. A roots entry packs its
// id and offset into one aligned 8-byte word, so its store is the registration's commit point:
// it persists whole or not at all (the structure it names is formatted and durable before).
// The words are not checksummed (they change while the pool is open); pool::open cross-checks
// every entry (id nonzero and unique, offset inside the used data area, 64-byte aligned, no
// two entries at one offset, the catalog above the heap) before anything uses one.
// All integers are little-endian (x86-64 is the only supported architecture).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ferrite::pmem {

inline constexpr std::array<char, 8> pool_magic{'F', 'E', 'R', 'R', 'I', 'T', 'E', '\0'};
inline constexpr std::uint32_t pool_format_version = 2;
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
    std::uint64_t profile;         // pool_profile: plain (0) or store (a heap and a catalog)
    std::array<std::uint64_t, 3> reserved;  // 0
};
static_assert(sizeof(pool_state) == 64);

// Registered roots: what a feature registers to be found again (see the table above).
using root_id = std::uint16_t;
namespace root_ids {
inline constexpr root_id heap = 1;     // alloc::buddy_heap
inline constexpr root_id catalog = 2;  // alloc::name_directory (its first block)
}  // namespace root_ids
inline constexpr std::size_t max_roots = 8;
inline constexpr unsigned root_offset_bits = 48;
inline constexpr std::uint64_t root_offset_mask = (std::uint64_t{1} << root_offset_bits) - 1;
static_assert(max_pool_size <= root_offset_mask, "a roots entry holds any offset inside a pool");

constexpr std::uint64_t root_entry(root_id id, std::uint64_t offset) noexcept {
    return (std::uint64_t{id} << root_offset_bits) | (offset & root_offset_mask);
}
constexpr root_id root_entry_id(std::uint64_t entry) noexcept {
    return static_cast<root_id>(entry >> root_offset_bits);
}
constexpr std::uint64_t root_entry_offset(std::uint64_t entry) noexcept { return entry & root_offset_mask; }

struct alignas(64) pool_roots {
    std::array<std::uint64_t, max_roots> entries;  // root_entry(id, offset); 0 = empty
};
static_assert(sizeof(pool_roots) == 64);

struct pool_header {
    pool_identity identity;
    pool_state state;
    pool_roots roots;
    std::uint8_t unused[pool_header_size - sizeof(pool_identity) - sizeof(pool_state) - sizeof(pool_roots)];
};
static_assert(offsetof(pool_header, state) == 256 && offsetof(pool_header, roots) == 320,
              "the on-media layout of format version 2");
static_assert(sizeof(pool_header) == pool_header_size);

std::uint64_t identity_checksum(const pool_identity&) noexcept;

}  // namespace ferrite::pmem
