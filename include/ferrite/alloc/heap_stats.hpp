// ferrite/alloc/heap_stats.hpp: what `ferrite pool info` / `pool check` report about a heap.
//
// Plain value types filled by buddy_heap::usage() and buddy_heap::blocks(); problems found by
// buddy_heap::check() are strings (one per problem, empty list = consistent). Volatile.
#pragma once

#include <array>
#include <cstdint>

#include "ferrite/alloc/heap_layout.hpp"

namespace ferrite::alloc {

// What a pointer (or heap offset) is, for a client's recovery and for tests.
enum class block_state : std::uint8_t {
    not_a_block,           // outside the arena, or not the first byte of a block
    free,                  // the first byte of a free block
    live,                  // a confirmed allocated block
    allocation_pending,    // allocated, confirm_allocation not yet called
    deallocation_pending,  // deallocated, confirm_deallocation not yet called
};
const char* to_string(block_state) noexcept;

struct heap_usage {
    unsigned min_order = alloc::min_order;
    unsigned max_order = 0;
    std::uint64_t arena_bytes = 0;     // bytes that blocks can occupy
    std::uint64_t bytes_free = 0;      // in free blocks
    std::uint64_t bytes_used = 0;      // arena_bytes - bytes_free (rounding to 2^k included)
    std::uint64_t largest_free = 0;    // bytes of the largest free block (0 if none)
    double fragmentation = 0;          // 1 - largest_free / bytes_free (0 if nothing free)
    std::array<std::uint64_t, order_limit> free_blocks{};  // per order
    std::array<std::uint64_t, order_limit> live_blocks{};  // per order, pending included
    std::uint64_t confirm_slots = 0;
    std::uint64_t pending_allocations = 0;
    std::uint64_t pending_deallocations = 0;
};

struct block_info {
    std::uint64_t offset = 0;  // from the heap's first byte
    unsigned order = 0;        // the block is 2^order bytes
    block_state state = block_state::not_a_block;
};

}  // namespace ferrite::alloc
