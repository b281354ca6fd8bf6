// ferrite/alloc/buddy_heap.hpp: a persistent buddy allocator with the confirm protocol.
//
// Paper: PFC thesis, section 5.3 (Alg 5.11-5.16, the allocator behind the persistent vector):
// binary buddy system with one persistent doubly linked free list per order, one undo-log
// entry per REQUEST / RELEASE, RECOVER rolling a half-done operation back, and the
// confirmation protocol that keeps crashes from leaking or double-freeing blocks.
//
//   auto p = ferrite::pmem::pool::create("data", "my-layout", 64 << 20);
//   auto* r = static_cast<std::byte*>(p.root_bytes(32 << 20));
//   auto heap = ferrite::alloc::buddy_heap::create(p, r - p.base(), 32 << 20);
//   void* b = heap.allocate(200);                 // a 256-byte block, pending
//   my_root.ptr = offset_of(b); pwb(&my_root.ptr); pfence();   // the client persists it
//   heap.confirm_allocation(b);                   // now the client owns it
//   heap.deallocate(b);                           // pending: still allocated
//   my_root.ptr = 0; pwb(&my_root.ptr); pfence(); // the client forgets it durably
//   heap.confirm_deallocation(b);                 // now it is free
//
//   // after a restart:
//   auto heap = ferrite::alloc::buddy_heap::open(p, offset);
//   heap.recover();              // 1. roll back the interrupted heap operation
//   ... every client recovers: confirm_allocation() each block it references that is
//       allocation_pending; finish (or undo) each removal it had started ...
//   heap.finish_recovery();      // 2. free unconfirmed allocations, complete deallocations
//
// Differences from the paper:
//   * The undo log holds before-images of every word an operation changes (undo_log.hpp),
//     so the rollback is derived from the forward operation instead of being written as a
//     separate procedure (the extracted Alg 5.14/5.16 do not match Alg 5.12/5.13).
//   * Links are heap offsets, the per-block order/used bits a byte map (heap_layout.hpp).
//   * The persistent references are a fixed table of confirm slots (confirm_table.hpp);
//     a full table throws confirm_table_full. Setting an allocation's slot is part of the
//     REQUEST and clearing a deallocation's slot part of the RELEASE (one undo entry).
//   * confirm_replacement(fresh, old), for clients that swap one block for another (a grown
//     array): confirming fresh and starting to free old reuse fresh's slot, so a full table
//     (other clients' pending blocks) cannot stop a replacement that already committed,
//     nor the recovery that finishes it.
//   * One spin lock per heap makes it thread-safe (the paper's allocator runs only inside
//     the combiner). Its wait loop calls pmem::wait_hint() (spin_lock.hpp).
//   * recover() restores the heap; finish_recovery() is the paper's "after every client
//     recovered" step, explicit. Slots pending at recover() are reserved until then, so
//     allocations made by clients while recovering are never reclaimed by it.
//
// Crash consistency
//   persistent: free-list heads, the links in free blocks, the block map, the undo log, the
//   confirm slots (heap_layout.hpp). Every block is exactly one of free (in the map as free,
//   on its order's list), live, or pending (live and named by a slot).
//   allocate:  REQUEST under the undo log (unlink, split, map, slot := allocation).
//              LP/PP: the log's commit (tag := none, durable) before it returns.
//   confirm_allocation: slot := empty, pwb, pfence (LP/PP).
//   deallocate: slot := deallocation, pwb, pfence (LP/PP); the block stays allocated.
//   confirm_replacement(fresh, old): fresh's slot := old's deallocation, pwb, pfence (LP/PP):
//              both steps in one store, so replacing a block never waits for a free slot.
//   confirm_deallocation: RELEASE under the undo log (merge, map, insert, slot := empty);
//              LP/PP: the log's commit.
//   recover(): validate (below), then roll an armed log back (undo_log.hpp); reserve the
//              slots in use. The
//              cleared log tag is written back by the next confirm-slot store (whose own
//              pfence makes it durable first) or replaced by the next operation's tag.
//   Every operation ends with a pfence, so nothing it did can reach the media after a store
//   its caller makes next; confirm_deallocation also begins with one (the log's first),
//   so the caller's earlier pwbs are durable before the block can be freed.
//   finish_recovery(): RELEASE every reserved slot's block that is still pending.
//   Repeated calls after a crash are harmless: deallocate of a block already pending
//   deallocation and confirm_* of a block with no slot of that kind do nothing.
//
// Validation: nothing read from the region is trusted (a damaged or hostile pool file must
// not make the heap hand a live block out twice, or write outside the region or into other
// objects). Every value is checked before it is used as a size, an offset or a pointer, and
// every check runs before the operation plans its first write: a failed one throws
// heap_error (a damaged_pool of kind damaged_heap) naming the list, slot or offset and what
// is wrong, and leaves every byte of the region unchanged.
//   open():     header (magic, version, checksum, geometry); the undo log (control word:
//               known kind, 1..capacity entries; each entry a word an operation can write,
//               none twice); then, as the log's rollback would leave them, every free-list
//               head (0, or a block in the arena aligned to its order, free at that order in
//               the map, with no prev; 0 for orders the arena lacks) and every confirm slot
//               (empty, or a known kind naming a granule-aligned block start that the map
//               says is live; no block named twice). O(log^2 + orders + slots log slots),
//               independent of the arena's size: the lists' interiors and the map are not
//               walked.
//   recover():  the same again, before the rollback writes anything.
//   allocate:   the block taken from list j: in the arena, aligned to 2^j from its start,
//               fits, map byte free|j, no prev; its next 0 or a block passing the same
//               checks whose prev names it; no block starts where the split puts the upper
//               halves. O(1) beyond the split itself: the next block's map byte is the
//               only word read that the operation does not write anyway.
//   release (confirm_deallocation, finish_recovery): the released block's map byte is
//               live at an order the arena has, aligned, inside it, and no block starts at
//               off + 2^m for m below that order (one byte per order: a grown order would
//               free the neighbours); each buddy merged: map byte free|m, the head exactly if
//               it has no prev, prev and next free blocks of order m whose links name it
//               back; the head it is pushed in front of: free at its order, no prev. O(1) per
//               level besides the released block's O(order) bytes. finish_recovery plans
//               every release first (one write set), so it too throws before any write.
//   state(), deallocate, confirm_*, block_size(): the pointer's map byte decodes to a block
//               of this heap (heap_error otherwise; usage_error for a pointer that is no block
//               start); they write only a slot, or release through the checks above.
//   check():   walks everything, every offset validated before it is dereferenced, each
//               walk bounded by the arena's block count: it ends on any bytes.
// Lists are checked where they are used, not at open (that would cost O(arena)): a damaged
// link deep in a list throws when the hand-out or merge reaches it. What no check can tell
// apart from a real state is left: a slot naming a live block as a pending deallocation (the
// client that holds it must notice), a block leaked by a damaged link (check() reports it).
//
// Errors: bad input throws and leaves the heap unchanged: usage_error for size 0, a size
// beyond max_allocation(), a pointer that is not a live block of this heap, a double free;
// out_of_memory (a std::bad_alloc) when no block is big enough; confirm_table_full; and
// heap_error when open() finds no valid heap or any operation finds it damaged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/alloc/confirm_table.hpp"
#include "ferrite/alloc/heap_layout.hpp"
#include "ferrite/alloc/heap_stats.hpp"
#include "ferrite/alloc/spin_lock.hpp"
#include "ferrite/alloc/undo_log.hpp"

namespace ferrite::pmem {
class pool;
class pool_ref;
}

namespace ferrite::alloc {

struct heap_options {
    std::uint64_t confirm_slots = 64;  // at most this many unconfirmed (de)allocations
};

class buddy_heap {
public:
    // ---- constructors ----------------------------------------------------------------
    // Format `size` bytes of `p` at `offset` (64-byte aligned; the range must lie in the
    // pool's data area, e.g. inside its root) as an empty heap and open it. The pool's first
    // heap is registered in its roots table (pool::heap_offset), where tools find it. Throws
    // usage_error if the range is outside the pool or too small for one block.
    static buddy_heap create(const pmem::pool_ref& p, std::uint64_t offset, std::uint64_t size,
                             heap_options options = {});
    // Open the heap created at `offset`. Validates the header, the log, the free-list heads
    // and the confirm slots (heap_error on anything else; see "Validation"); call recover()
    // before changing it. A read-only pool can be opened for usage()/check().
    static buddy_heap open(const pmem::pool_ref& p, std::uint64_t offset);
    // The same over plain memory (a region the caller maps and keeps; tests, embedding).
    static buddy_heap create_in(void* region, std::uint64_t size, heap_options options = {});
    static buddy_heap open_in(void* region, std::uint64_t size, bool read_only = false);

    // Immovable: catalogs and structures keep a pointer to their heap, so a moved heap would
    // leave them dangling. The factories return it by guaranteed copy elision
    // (`auto h = buddy_heap::open(...)`, `new buddy_heap(buddy_heap::open(...))`).
    buddy_heap(buddy_heap&&) = delete;
    buddy_heap& operator=(buddy_heap&&) = delete;
    buddy_heap(const buddy_heap&) = delete;
    buddy_heap& operator=(const buddy_heap&) = delete;
    ~buddy_heap() = default;

    // ---- recovery --------------------------------------------------------------------
    // Roll back an interrupted operation; reserve the slots of unconfirmed operations for
    // finish_recovery(). Idempotent; restartable after a crash inside it.
    void recover();
    // After every client has recovered: free every unconfirmed allocation and complete every
    // unconfirmed deallocation found by recover(). Restartable (after a crash, open, recover
    // and call it again).
    void finish_recovery();
    bool recovery_finished() const noexcept;
    // Opened (after a restart, or read-only) and recover() not yet called: every change throws.
    bool needs_recovery() const noexcept { return phase_ == phase::needs_recovery; }

    // ---- allocation (the confirm protocol) --------------------------------------------
    // A block of at least `bytes` bytes (the smallest power of two >= max(bytes, 64)),
    // 64-byte aligned, pending until confirm_allocation.
    void* allocate(std::size_t bytes);
    // The caller has persisted its reference to p. No-op if p is already confirmed.
    void confirm_allocation(void* p);
    // Start freeing p: it stays allocated until confirm_deallocation. No-op if p is already
    // pending deallocation.
    void deallocate(void* p);
    // The caller has durably dropped its references to p: free it. No-op if p has no
    // pending deallocation (already confirmed). Ordering guarantee: the caller's write-backs
    // (pwb) issued before this call are durable before the block can be freed, so the
    // caller needs no pfence of its own between dropping its reference and this call.
    void confirm_deallocation(void* p);
    // The caller has durably replaced its reference to `old` by one to `fresh` (a grown
    // array, say): confirm_allocation(fresh) and deallocate(old) as one confirm-slot store,
    // fresh's pending slot becoming old's deallocation. Unlike the two calls, it needs no
    // free slot, so a full table cannot stop it, nor a recovery that repeats it. Repeatable
    // (fresh confirmed and old pending: no-op); bad pointers throw as the two calls do.
    // confirm_deallocation(old) completes it.
    void confirm_replacement(void* fresh, void* old);

    // ---- observers -------------------------------------------------------------------
    block_state state(const void* p) const;
    std::size_t block_size(const void* p) const;  // usable bytes of a live block; 0 if none
    std::size_t max_allocation() const noexcept { return std::size_t{1} << geometry_.max_order; }
    const heap_geometry& geometry() const noexcept { return geometry_; }
    std::byte* base() const noexcept { return base_; }
    std::uint64_t offset_of(const void* p) const noexcept {
        return static_cast<std::uint64_t>(static_cast<const std::byte*>(p) - base_);
    }
    void* at(std::uint64_t heap_offset) const noexcept { return base_ + heap_offset; }

    // ---- introspection (pool info / pool check) ---------------------------------------
    heap_usage usage() const;
    std::vector<block_info> blocks() const;  // every block in address order
    // Every inconsistency found (free lists linked both ways, in range, aligned, agreeing
    // with the map; blocks tile the arena; free buddies merged; slots name live blocks once;
    // no operation half-done). Empty: consistent.
    std::vector<std::string> check() const;

private:
    enum class phase : std::uint8_t { needs_recovery, clients_recovering, running };

    // An opened heap (ph = needs_recovery) checks its region first (check_region()).
    buddy_heap(std::byte* base, const heap_geometry& g, bool read_only, phase ph);
    static heap_geometry validate(const std::byte* base, std::uint64_t available);
    static void format(std::byte* base, const heap_geometry& g);
    // create's checks of region and options, then format: the new heap's geometry.
    static heap_geometry format_new(void* region, std::uint64_t size, heap_options options);

    heap_header* header() const noexcept { return reinterpret_cast<heap_header*>(base_); }
    std::uint64_t* head(unsigned order) const noexcept { return &header()->free_heads[order]; }
    free_links* links(std::uint64_t off) const noexcept { return reinterpret_cast<free_links*>(base_ + off); }
    std::uint64_t* map_word(std::uint64_t gi) const noexcept {
        return reinterpret_cast<std::uint64_t*>(base_ + geometry_.map_offset) + gi / 8;
    }
    std::uint64_t granule_of(std::uint64_t off) const noexcept { return (off - geometry_.arena_offset) / granule; }
    std::uint8_t map_tag(std::uint64_t off) const noexcept;
    std::uint8_t planned_tag(std::uint64_t off) const noexcept;
    void plan_tag(std::uint64_t off, std::uint8_t tag);
    // Heap offset of p if it lies in the arena on a granule boundary, else 0.
    std::uint64_t arena_offset_of(const void* p) const noexcept;
    block_state state_locked(std::uint64_t off) const;
    void confirm_allocation_locked(void* p);
    void deallocate_locked(void* p);
    void require_writable(const char* what) const;
    void release_locked(std::uint64_t off, std::uint64_t slot);
    void plan_release(std::uint64_t off, std::uint64_t slot);

    // Validation of what the region holds, before it is used (see "Validation" above).
    // Reads go through ws_ (the operation planned so far, or recover()'s overlay of the
    // log's before-images); each throws heap_error saying what is wrong, and writes nothing.
    bool block_fits(std::uint64_t off, unsigned k) const noexcept;
    void require_free_block(std::uint64_t off, unsigned k, const char* role, std::uint64_t of) const;
    void check_head(unsigned k) const;
    void check_unlink(std::uint64_t off, unsigned k) const;
    unsigned live_order(std::uint64_t off, const char* what, std::uint64_t slot) const;
    void check_region();
    heap_usage usage_locked() const;
    std::string describe(const void* p) const;

    std::byte* base_ = nullptr;
    heap_geometry geometry_{};
    bool read_only_ = false;
    // volatile
    phase phase_ = phase::running;
    undo_log log_;
    confirm_table table_;
    write_set ws_;
    std::vector<char> reserved_;  // per slot: pending at recover(), kept for finish_recovery
    mutable detail::spin_lock lock_;
};

// The pool offset of the heap's first byte (heap offset h is pool offset heap_in_pool + h),
// for structures whose anchors are pool offsets of heap blocks. usage_error (naming `who`)
// if the heap does not lie inside the pool.
std::uint64_t heap_in_pool(const pmem::pool_ref& pool, const buddy_heap& heap, std::string_view who);

}  // namespace ferrite::alloc
