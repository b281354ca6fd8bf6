// ferrite/alloc/heap_layout.hpp: how a buddy heap lies in persistent memory.
//
// Algorithm: the binary buddy system (Knowlton 1965), persistent as in the PFC thesis
// ([PFC] in docs/references.md, section 5.3, Alg 5.11): areas
// of 2^k bytes (order k), one doubly linked free list per order whose links live in the free
// blocks themselves, and per-block bookkeeping of which order a block is used or free at.
//
// Differences from the paper:
//   * Links are heap offsets (distance from the heap's first byte; 0 = none), never raw
//     pointers: a pool maps at a different address on every open.
//   * The per-block "header" is a byte map outside the blocks, one byte per 64-byte granule,
//     so a live block's every byte belongs to its user (the paper's PAGE has a header word):
//       0             the granule is inside a block (not its first granule)
//       free_tag | k  a free block of order k starts here
//       live_tag | k  a live (allocated) block of order k starts here
//   * The arena need not be a power of two: it starts as its binary decomposition (the
//     largest aligned power-of-two blocks that tile it); a block whose buddy would lie beyond
//     the arena never merges.
//
// Region of a heap (all offsets relative to its first byte, every part 64-byte aligned):
//
//   heap_header      identity (magic, version, geometry, checksum) + free-list heads
//   log_control      one line: the undo log's tag word (undo_log.hpp)
//   log_entries      2 x log_capacity x {offset, old value} (two halves)
//   confirm slots    slot_count 8-byte words (confirm_table.hpp)
//   block map        one byte per granule of the arena
//   arena            the blocks; arena_size is a multiple of 64
//
// Crash consistency: the identity is written once by create() and made durable before the
// magic word, which is written last (its commit point); the heads, the map, the links of
// free blocks and the slots change only through the undo log (undo_log.hpp) or, for a
// confirm slot, with one 8-byte store (confirm_table.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ferrite::alloc {

inline constexpr std::uint64_t heap_magic = 0x5041454859444455ull;  // "UDDYHEAP"
inline constexpr std::uint32_t heap_format_version = 1;
inline constexpr unsigned min_order = 6;          // 64-byte blocks: one cache line
inline constexpr unsigned order_limit = 64;       // orders are < 64
inline constexpr std::uint64_t granule = std::uint64_t{1} << min_order;
inline constexpr std::uint8_t free_tag = 0x40;
inline constexpr std::uint8_t live_tag = 0x80;
inline constexpr std::uint8_t order_mask = 0x3f;

// The geometry of a heap, derived from its region size and slot count alone (so open() can
// recompute it and compare with the stored copy).
struct heap_geometry {
    std::uint64_t region_size = 0;
    std::uint64_t slot_count = 0;
    std::uint64_t log_capacity = 0;   // undo-log entries per half
    std::uint64_t log_offset = 0;     // log_control line; entries follow it
    std::uint64_t slots_offset = 0;
    std::uint64_t map_offset = 0;
    std::uint64_t arena_offset = 0;
    std::uint64_t arena_size = 0;     // multiple of granule
    std::uint64_t max_order = 0;      // floor(log2(arena_size))
    friend bool operator==(const heap_geometry&, const heap_geometry&) = default;
};

struct alignas(64) heap_identity {
    std::uint64_t magic;    // heap_magic; written last by create()
    std::uint32_t version;
    std::uint32_t reserved0;
    heap_geometry geometry;
    std::uint64_t checksum;  // FNV-1a 64 of version .. geometry
};

// The persistent header at the start of a heap region.
struct heap_header {
    heap_identity identity;
    alignas(64) std::array<std::uint64_t, order_limit> free_heads;  // persistent: heap offsets
};

// The first 16 bytes of a free block.
struct free_links {
    std::uint64_t next;  // persistent: heap offset of the next free block of this order, 0 = none
    std::uint64_t prev;  // persistent: heap offset of the previous one, 0 = none (head)
};

struct log_entry {
    std::uint64_t offset;  // heap offset of an 8-byte word the operation changes
    std::uint64_t old;     // its value before the operation
};

inline constexpr std::uint64_t align_up(std::uint64_t n, std::uint64_t a) noexcept {
    return (n + a - 1) / a * a;
}

inline constexpr unsigned floor_log2(std::uint64_t n) noexcept {
    return 63u - static_cast<unsigned>(__builtin_clzll(n));
}

// Undo-log entries an operation of a heap with this max order can need (see buddy_heap.cpp:
// a request splitting from max_order to min_order logs 4 + 5 per level, a release merging up
// 6 + 4 per level).
inline constexpr std::uint64_t log_capacity_for(unsigned max_order) noexcept {
    return 8 + 5 * std::uint64_t{max_order - min_order + 1};
}

// Lay out a region of `region_size` bytes with `slot_count` confirm slots. Returns a
// geometry with arena_size == 0 if the region is too small for one 64-byte block.
heap_geometry compute_geometry(std::uint64_t region_size, std::uint64_t slot_count) noexcept;

std::uint64_t identity_checksum(const heap_identity&) noexcept;

// Whether a heap operation can change the 8-byte word at heap offset `off` (so an undo-log
// entry may name it): a free-list head of an order the arena has, a confirm slot, a word of
// the block map, or the next/prev link at the start of a granule of the arena. Never the
// identity, the log itself or padding.
bool loggable_word(const heap_geometry& g, std::uint64_t off) noexcept;

}  // namespace ferrite::alloc
