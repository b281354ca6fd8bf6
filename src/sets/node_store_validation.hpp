// src/sets/node_store_validation.hpp: the node store's checks of what the media holds
// (node_store.hpp, "Validation"), shared by open(), validate(), recorded_shape() and
// recover(). Every check reads only; a failed one throws damaged_pool (kind damaged_object,
// region "node_store") naming the word, the list or the area, before anything is written.
#pragma once

#include <cstdint>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sets/node_store_layout.hpp"

namespace ferrite::sets::detail {

// Where the heap lies in the pool: heap offset h is pool offset heap_in_pool + h. Throws
// usage_error if the heap's region is not inside the pool (the caller's mistake).
std::uint64_t heap_in_pool(const pmem::pool_ref& pool, const alloc::buddy_heap& heap);

// What validation found: every word below has been checked.
struct checked_store {
    node_store_header* header = nullptr;
    std::uint64_t header_offset = 0;       // heap offset of the header block
    node_store_shape shape;                // as recorded (blank_node all zero: not recorded)
    std::vector<std::uint64_t> areas;      // heap offsets, lists 0..63 in turn, each from its head
    std::vector<std::uint64_t> pending;    // header and areas still allocation_pending
};

// The header at pool offset `anchor` and every area of its lists (node_store.hpp).
checked_store check_store(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor);

}  // namespace ferrite::sets::detail
