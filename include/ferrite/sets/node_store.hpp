// ferrite/sets/node_store.hpp: durable areas of one-line nodes on the buddy heap, with the
// header of one durable set or map.
//
// INTERFACE FIXED BY THE DURABLE-SETS PLAN (issue 18); implementation in src/sets/node_store.cpp.
//
// Paper: durable sets (Zuriel et al., OOPSLA 2019), "Memory management" (L567-587): nodes
// live in durable areas that recovery scans; free lists are volatile and rebuilt; each
// thread has a persistent list of its areas (area address written and flushed, then linked
// and flushed). Link-free and SOFT persist no links: a node's own line says whether it is a
// member, so the areas are the whole persistent state of a set besides its header.
//
// Persistent layout (all offsets are heap offsets, the heap's convention):
//   header block  {magic, version, shape (algorithm, layout, key/value size, area size),
//                  checksum of those, area_lists heads[list_count]}   (one heap block)
//   area block    line 0: {magic, owner (heap offset of the header), next area, list index,
//                  node count, checksum}; lines 1..n-1: node slots of node_size bytes
// A thread appends areas to list (this_thread_id() % list_count) under that list's volatile
// lock; it bumps through its current area, then reuses nodes from its volatile free list.
//
// Fresh areas: every slot is written with shape.blank_node (the algorithm's "never used,
// not a member" line: zeroed memory would read as a valid member to link-free, the notes'
// warning) and written back, with one pfence, before the area is linked.
//
// Crash consistency (area growth):  block := heap.allocate (pending); fill header + blank
// slots; pwb every line; pfence; area.next := head (already in the fill); head := block,
// pwb, pfence (commit); heap.confirm_allocation(block). A crash before the commit leaves an
// unconfirmed block that heap.finish_recovery() frees; after it, recover() confirms it.
// Areas are never returned to the heap while the set exists.
//
// Validation (never trust the media): open() and validate() check the header (magic,
// version, checksum, shape against the caller's expectation) and walk every list: each area
// must be a live (or allocation-pending, between recover and finish) heap block of exactly
// the area size, with a valid header naming this set as owner and this list, no area twice,
// at most heap_size / area_size areas. Failures throw damaged_pool naming the list and area;
// nothing is written. Node contents are the algorithm's to validate.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::sets {

inline constexpr std::size_t node_size = 64;  // one cache line per node
inline constexpr unsigned area_list_count = 64;

struct alignas(node_size) node_line {
    std::byte bytes[node_size];
};

// What the algorithm above stores; recorded in the header and checked at open.
struct node_store_shape {
    std::uint32_t algorithm = 0;   // 1 link-free, 2 SOFT (sets/.. headers define them)
    std::uint32_t layout = 0;      // 1 ordered list, 2 hash table
    std::uint32_t key_size = 0;
    std::uint32_t value_size = 0;
    std::uint32_t area_bytes = 64 * 1024;  // power of two, >= 4 KiB; line 0 is the area header
    node_line blank_node{};        // written to every fresh slot (not recorded)
};

// One durable area as recovery sees it.
struct area_view {
    node_line* first;   // first node slot (line 1 of the area)
    std::size_t count;  // node slots
};

class node_store {
public:
    // Creates the header and no area; anchor := header offset is the commit point (pwb +
    // pfence of the anchor word are the caller's: the catalog entry's anchor, as elsewhere).
    // On failure nothing stays allocated and anchor stays 0.
    static node_store create(const pmem::pool_ref& pool, alloc::buddy_heap& heap,
                             std::uint64_t& anchor, const node_store_shape& shape);
    // Validates header and areas (see above) against `expected` (its blank_node is used for
    // new areas), and reads nothing else. damaged_pool / pool_error(type_mismatch) on failure.
    static node_store open(const pmem::pool_ref& pool, alloc::buddy_heap& heap,
                           std::uint64_t anchor, const node_store_shape& expected);
    // Read-only validation; returns the pool offsets of every heap block the set owns
    // (header and areas), for the catalog's ownership check.
    static std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                               std::uint64_t anchor);
    // The recorded shape (after validation), e.g. for `pool info`.
    static node_store_shape recorded_shape(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                           std::uint64_t anchor);
    // Crash recovery of the areas, between heap.recover() and heap.finish_recovery():
    // confirms every linked area still pending. Restartable; validates first.
    static void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor);

    node_store(node_store&&) noexcept;
    node_store& operator=(node_store&&) noexcept;
    ~node_store();

    // A node slot for the calling thread: from its free list, else the next never-used slot
    // of its current area, else a new area (throws heap's out-of-memory error if the heap is
    // full). Contents: shape.blank_node, or whatever the slot's last user left.
    node_line* allocate();
    // Back to the calling thread's free list (volatile; no persistence instruction).
    void free(node_line* node);
    // Recovery: hands dead nodes found by a scan to the free lists (thread-safe).
    void add_free(std::span<node_line* const> nodes);
    // Every area, in list order (stable while no thread allocates).
    std::vector<area_view> areas() const;
    // Runs fn(area) for every area on `threads` worker threads (0: hardware concurrency,
    // at most the number of areas; 1: the calling thread). Exceptions are rethrown.
    void scan_parallel(unsigned threads, const std::function<void(const area_view&)>& fn) const;
    // A node of this store at pool offset `pool_offset`, or nullptr if the offset is not a
    // node slot of one of its areas (validating a location read from the media). O(1).
    node_line* node_at(std::uint64_t pool_offset) const noexcept;
    std::uint64_t pool_offset_of(const node_line* node) const noexcept;
    const node_store_shape& shape() const noexcept;
    // Node slots in all areas, and slots never handed out (volatile counts).
    std::size_t capacity() const noexcept;

private:
    struct state;
    explicit node_store(std::unique_ptr<state> s);
    std::unique_ptr<state> state_;
};

}  // namespace ferrite::sets
