// ferrite/sets/node_store.hpp: durable areas of one-line nodes on the buddy heap, with the
// header of one durable set or map.
//
// Interface fixed by the durable-sets plan (issue 18): the link-free and SOFT tables code
// against it. Implementation: src/sets/node_store.cpp (create, open, recovery, allocation,
// growth) and src/sets/node_store_validation.cpp (the checks); layout in node_store_layout.hpp.
//
// Paper: durable sets (Zuriel et al., OOPSLA 2019), "Memory management" (L567-587): nodes
// live in durable areas that recovery scans; free lists are volatile and rebuilt; each
// thread has a persistent list of its areas (area address written and flushed, then linked
// and flushed). Link-free and SOFT persist no links: a node's own line says whether it is a
// member, so the areas are the whole persistent state of a set besides its header.
// Differences from the paper:
//   * 64 persistent area lists, thread id modulo 64 (ids are dense and reused, sync/
//     thread_id.hpp), instead of one list per thread: the header has a fixed size, and
//     threads that share a list take its volatile lock only to link a new area.
//   * Recovery hands the dead nodes it finds to a shared depot (add_free), which every
//     thread's cache refills from in batches before it grows a new area.
//   * Fresh slots hold the algorithm's blank_node, written back before the area is linked
//     (the paper's areas are allocated zeroed, which reads as a member to link-free).
//   * Areas are heap blocks under the heap's confirm protocol, never returned to the heap
//     while the set exists; every word is validated before use (the paper trusts the media).
//
// Persistent layout (node_store_layout.hpp). The anchor is a pool offset, as every container
// anchor; links inside the store are heap offsets (buddy_heap::offset_of):
//   header block  {magic, version, list count, shape (algorithm, layout, key/value size,
//                  area size), checksum of those, heads[64]}   (one heap block of 1 KiB)
//   area block    exactly shape.area_bytes; line 0: {magic, owner (heap offset of the
//                  header), next area, list index, node count, checksum}; lines 1..n-1:
//                  node slots of node_size bytes
// Buddy blocks are aligned to their size within the heap's arena, so a node's area is its
// offset rounded down to area_bytes: node_at() is one lookup in a volatile hash set.
//
// Volatile state: per thread (this_thread_id(), lazily allocated) a cache = the bump cursor
// of its current area + a free vector; a shared depot (mutex) fed by add_free(); the set of
// areas (shared mutex); a spin lock per list. allocate() takes from the cache's free vector,
// else the next never-used slot of its area, else a batch of up to 64 from the depot, else
// a new area. No thread waits for another across a persistence instruction except at a list
// lock, whose wait loop calls pmem::wait_hint() (alloc/spin_lock.hpp): the crash simulator
// switches threads there; the mutexes guard volatile code only.
//
// Crash consistency
//   create:  header := identity + checksum, heads 0 (in a pending heap block); pwb every
//            line; pfence (PP: complete before named); anchor := its pool offset; pwb;
//            pfence (the commit: the anchor durable before the heap forgets the block);
//            heap.confirm_allocation. A crash before the anchor is durable leaves a pending
//            block that heap.finish_recovery() frees; after it, recover() confirms it.
//   growth:  block := heap.allocate(area_bytes) (pending); every slot := blank_node; pwb
//            every slot line; then, under the list's lock: line 0 := {.., next := head,
//            checksum}; pwb line 0; pfence (PP: the whole area durable before it is linked);
//            head := block (the commit); pwb; pfence (PP: linked durably before the heap
//            forgets its pending slot); unlock; heap.confirm_allocation(block). A crash before
//            the head is durable leaves an unlinked pending block (finish_recovery frees it);
//            after it, the area is reachable, complete, and recover() confirms it. Heads of
//            eight lists share a line: another list's write-back can only make a head durable
//            early, and a head is stored only after its area is durable.
//   Line 0 and the identity are written once; a head only ever moves to a newer area whose
//   next names the old head, so every list stays a chain of complete areas at every crash.
//   Areas are never returned to the heap while the set exists.
//   allocate / free / add_free write nothing persistent outside growth.
//
// Validation (never trust the media): open(), validate(), recorded_shape() and recover()
// check the header (in the pool, 64-byte aligned, a live or allocation-pending heap block big
// enough; magic, checksum, version, list count, area_bytes a power of two from 4 KiB to the
// heap's largest block, key + value within a node) and walk every list: each area must lie
// in the heap's arena at a multiple of area_bytes, not be the header, be a live (or
// allocation-pending, between heap.recover() and heap.finish_recovery()) heap block of
// exactly area_bytes, with a valid line 0 (magic, checksum) naming this header as owner and
// this list; no area twice (a cycle, or two lists sharing one), at most arena_size /
// area_bytes areas. Offsets are compared as integers before any pointer is formed. Failures
// throw damaged_pool (kind damaged_object, region "node_store") naming the list and area;
// a shape other than the caller's is pool_error(type_mismatch); nothing is written. Node
// contents are the algorithm's to validate (node_at() for locations read from nodes).
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
    // Creates the header and no area; anchor := the header's pool offset is the commit
    // point, written back and fenced here (as containers/publish.hpp does), then the header
    // block is confirmed. usage_error for a bad shape (area_bytes not a power of two from
    // 4 KiB to heap.max_allocation(), key + value beyond a node); the heap's errors if it has
    // no block. On failure nothing stays allocated and anchor stays 0.
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
    // confirms the header and every linked area still pending. Restartable; validates first
    // (and writes nothing if validation fails).
    static void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor);

    node_store(node_store&&) noexcept;
    node_store& operator=(node_store&&) noexcept;
    ~node_store();

    // A node slot for the calling thread: from its free list, else the next never-used slot
    // of its current area, else a batch from the depot (add_free), else a new area (throws
    // the heap's out_of_memory / confirm_table_full if it has no block; nothing changes).
    // Contents: shape.blank_node, or whatever the slot's last user left. Thread-safe.
    node_line* allocate();
    // Back to the calling thread's free list (volatile; no persistence instruction). The
    // node must have come from allocate() or a scan of this store, and not be free already.
    void free(node_line* node);
    // Recovery: hands dead nodes found by a scan to the shared depot, from which every
    // thread's allocate() refills (thread-safe; volatile).
    void add_free(std::span<node_line* const> nodes);
    // Every area: those open() found, lists 0..63 in turn, each from its head, then those
    // grown since, in growth order (stable while no thread allocates).
    std::vector<area_view> areas() const;
    // Runs fn(area) for every area on `threads` worker threads (0: hardware concurrency,
    // at most the number of areas; 1: the calling thread). Exceptions are rethrown.
    void scan_parallel(unsigned threads, const std::function<void(const area_view&)>& fn) const;
    // A node of this store at pool offset `pool_offset`, or nullptr if the offset is not a
    // node slot of one of its areas (validating a location read from the media): line 0 of
    // an area, an offset inside a slot, another block of the heap are refused. O(1): a hash
    // lookup under a shared lock. Thread-safe.
    node_line* node_at(std::uint64_t pool_offset) const noexcept;
    std::uint64_t pool_offset_of(const node_line* node) const noexcept;
    const node_store_shape& shape() const noexcept;
    // Node slots in all areas (a volatile count).
    std::size_t capacity() const noexcept;

private:
    struct state;
    explicit node_store(std::unique_ptr<state> s);
    std::unique_ptr<state> state_;
};

}  // namespace ferrite::sets
