// ferrite/sets/node_store_layout.hpp: how a node store (node_store.hpp) lies in the heap.
//
// Two kinds of heap block, both written whole before anything names them:
//   node_store_header  the set's header: identity and shape, then the 64 area-list heads
//   area_header        line 0 of every area; lines 1..n-1 are node slots
// Every link is a heap offset (buddy_heap::offset_of; 0 = none), so a pool that maps at
// another address reads the same. The identity words and an area's line 0 are written once
// (create / growth) and never change; only a list head changes, from one area to a newer one
// whose next names the old head. Checksums are FNV-1a 64 over the words before them, so a
// damaged or hostile word is found before it is used as a size or an offset.
#pragma once

#include "ferrite/pmem/checksum.hpp"
#include "ferrite/pmem/flow.hpp"
#include <array>
#include <cstddef>
#include <cstdint>

namespace ferrite::sets {

inline constexpr std::uint64_t node_store_magic = 0x5245444145485353ull;  // "SSHEADER"
inline constexpr std::uint64_t area_magic = 0x4145524153455453ull;        // "STESAREA"
inline constexpr std::uint32_t node_store_version = 1;
inline constexpr std::uint32_t min_area_bytes = 4096;

namespace layout {

using pmem::fnv1a64;  // FNV-1a 64 of `n` bytes

}  // namespace layout

struct alignas(64) node_store_identity {
    std::uint64_t magic;       // node_store_magic; set by create() before the header is written back
    std::uint32_t version;     // node_store_version
    std::uint32_t list_count;  // area_list_count
    std::uint32_t algorithm;   // node_store_shape's fields
    std::uint32_t layout;
    std::uint32_t key_size;
    std::uint32_t value_size;
    std::uint32_t area_bytes;
    std::uint32_t reserved;    // 0
    std::uint64_t checksum;    // FNV-1a 64 of magic .. reserved

    std::uint64_t compute_checksum() const noexcept {
        return layout::fnv1a64(reinterpret_cast<const unsigned char*>(this), offsetof(node_store_identity, checksum));
    }
};

// The header block (one heap block of 1 KiB: 9 lines).
struct node_store_header {
    node_store_identity identity;
    // Heap offset of the newest area of list i (0: none). Written by growth only.
    alignas(64) std::array<std::uint64_t, 64> heads FERRITE_FLOW_SENTINEL;
};
static_assert(sizeof(node_store_header) == 64 * 9);

// Line 0 of an area.
struct alignas(64) area_header {
    std::uint64_t magic;  // area_magic
    std::uint64_t owner;  // heap offset of the node_store_header whose list holds this area
    std::uint64_t next;   // heap offset of the next (older) area of the same list, 0: the last
    std::uint32_t list;   // index of that list
    std::uint32_t nodes;  // node slots: area_bytes / 64 - 1
    std::uint64_t checksum;  // FNV-1a 64 of magic .. nodes

    std::uint64_t compute_checksum() const noexcept {
        return layout::fnv1a64(reinterpret_cast<const unsigned char*>(this), offsetof(area_header, checksum));
    }
};
static_assert(sizeof(area_header) == 64);

}  // namespace ferrite::sets
