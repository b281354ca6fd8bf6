// ferrite/combining/dfc_node_store.hpp: DFC's node pool, grown into a buddy heap on demand.
//
// Paper: DFC stack ("003" L303-320) preallocates 4096 nodes in NVM and keeps which are in use
// in a volatile two-level bitmap rebuilt by recovery. The issue asks for a pool that grows
// beyond that. Here the nodes live in chunks:
//
//   chunk 0        the nodes inside the DFC region (its capacity is fixed at create)
//   chunk k >= 1   first_growth_nodes << (k - 1) nodes in a block of an alloc::buddy_heap,
//                  allocated when every node of the earlier chunks is in use
//
// A node number is (chunk << 32) | index, index from 1 (0 stays the null link), so finding
// a node is one shift and one table load, and the node numbers already linked never move.
// Each chunk has its own volatile node_bitmap (dfc_node_pool.hpp); allocation and release
// cost no persistence instruction, as in the paper.
//
// Growth (by the combiner, inside a phase; rare): block := heap.allocate (pending);
// table.offset[k-1] := its heap offset, pwb, pfence; heap.confirm_allocation(block). The
// nodes of the new chunk are then written and linked by the phase like any other, and the
// phase's commit makes them reachable.
//
// Release (by recovery, which every open runs, under the combiner lock after its phase):
// while the last grown chunk holds no node in use, it goes back to the heap through the
// heap's deallocation protocol: heap.deallocate(block) (pending: still allocated);
// table.offset[k-1] := 0, pwb (the commit: the chunk is no longer the structure's);
// heap.confirm_deallocation(block), which orders that write-back before it frees the block. So a structure that grew and emptied again returns that
// memory at its next open. Only the trailing chunk goes (node numbers in the others never
// move), only when recovery's garbage collection found none of its nodes reachable, and
// only when no root word of either root copy names one of its nodes (validation checks the
// copy not in use as well).
//
// Crash consistency
//   persistent: the chunk table (dfc_layout.hpp), written once per chunk and before any
//               commit that links one of its nodes (its own pfence), so every node a
//               committed version reaches is in a chunk the media knows.
//   crash after allocate, before the table entry is durable: the block is an unconfirmed
//               allocation, which heap.finish_recovery() frees.
//   crash after the table entry, before the confirmation: validation finds the block still
//               pending; recover_chunks() confirms it (confirm_allocation is idempotent).
//   release, crash after deallocate, before the cleared entry is durable: the table still
//               names the last chunk, its block pending deallocation; validation accepts
//               that for the last chunk only, recovery checks that none of its nodes is
//               reachable (damaged_pool otherwise) and recover_chunks() redoes the release.
//   release, crash after the cleared entry: nothing names the block; the heap's
//               finish_recovery() completes its deallocation.
//   Hence a DFC structure that can grow is opened between heap.recover() and
//   heap.finish_recovery(), as every heap client is (buddy_heap.hpp).
//
// Validation: the store trusts nothing it did not check. The table's words, the chunk sizes
// and the heap blocks behind them are validated before attach() (dfc_validation.hpp), and
// node numbers read from the media (roots, links) go through contains() before node(); only
// the combiner's own allocations and the links it wrote since are used unchecked.
#pragma once

#include <array>
#include <cstdint>
#include <exception>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_node_pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::combining {

inline constexpr unsigned dfc_index_bits = 32;  // node number = chunk << 32 | index (from 1)
inline constexpr std::uint64_t dfc_index_mask = (std::uint64_t{1} << dfc_index_bits) - 1;

// Where the chunks of a node pool are (chunk 0 in the region, the grown ones in heap blocks),
// as validation found them (dfc_validation.hpp). Volatile.
struct dfc_chunk_map {
    unsigned count = 0;
    std::array<dfc_node*, dfc_max_chunks> base{};        // node index 1 of each chunk
    std::array<std::uint64_t, dfc_max_chunks> nodes{};   // its node count
    bool contains(std::uint64_t n) const noexcept {
        const std::uint64_t k = n >> dfc_index_bits, i = n & dfc_index_mask;
        return k < count && i >= 1 && i <= nodes[k];
    }
    const dfc_node& node(std::uint64_t n) const noexcept {  // requires contains(n)
        return base[n >> dfc_index_bits][(n & dfc_index_mask) - 1];
    }
};

class dfc_node_store {
public:
    static constexpr unsigned index_bits = dfc_index_bits;
    static constexpr std::uint64_t index_mask = dfc_index_mask;

    // Nodes in chunk k >= 1 of a table whose first grown chunk holds `first` nodes.
    static constexpr std::uint64_t grown_chunk_nodes(std::uint64_t first, unsigned k) noexcept {
        return first << (k - 1);
    }

    // Bind to the chunks validation found (dfc_validation.hpp: every word of the chunk table
    // checked against `heap`, which is null only if the structure never grew) and to the
    // table that growth appends to. Reads nothing from the media itself.
    void attach(const dfc_chunk_map& chunks, dfc_chunk_table* table, alloc::buddy_heap* heap) {
        table_ = table;
        heap_ = heap;
        chunks_ = chunks.count;
        for (unsigned k = 0; k < chunks_; ++k) {
            base_[k] = chunks.base[k];
            capacity_[k] = chunks.nodes[k];
        }
        reset_all_free();
    }

    // Recovery: confirm a grown chunk whose allocation the crash left pending, and finish a
    // release of the last chunk that the crash interrupted (releasing_last()).
    void recover_chunks() {
        for (unsigned k = 1; k < chunks_; ++k)
            if (heap_->state(base_[k]) == alloc::block_state::allocation_pending) heap_->confirm_allocation(base_[k]);
        if (releasing_last()) release_last();
    }
    // Whether a crash interrupted the release of the last chunk (its block is pending
    // deallocation while the table still names it). Recovery requires that none of its nodes
    // be in use before it finishes the release.
    bool releasing_last() const noexcept {
        return chunks_ > 1 && heap_->state(base_[chunks_ - 1]) == alloc::block_state::deallocation_pending;
    }
    bool chunk_in_use(unsigned k) const noexcept { return bits_[k].used() != 0; }
    // Give every trailing grown chunk without a node in use back to the heap (see above),
    // unless `named(k)`: a root word of either root copy names a node of chunk k (the copy
    // not in use is validated too, so it must keep naming nodes of the pool). Stops, keeping
    // the chunk, if the heap refuses (its confirm slots are full).
    template <class NamedByARoot>
    void release_empty_chunks(NamedByARoot named) {
        while (chunks_ > 1 && !chunk_in_use(chunks_ - 1) && !named(chunks_ - 1))
            if (!release_last()) return;
    }

    dfc_node& node(std::uint64_t n) const noexcept { return base_[n >> index_bits][(n & index_mask) - 1]; }
    bool contains(std::uint64_t n) const noexcept {
        const std::uint64_t k = n >> index_bits, i = n & index_mask;
        return k < chunks_ && i >= 1 && i <= capacity_[k];
    }
    unsigned chunks() const noexcept { return chunks_; }
    std::uint64_t capacity() const noexcept {
        std::uint64_t c = 0;
        for (unsigned k = 0; k < chunks_; ++k) c += capacity_[k];
        return c;
    }
    std::uint64_t used() const noexcept {
        std::uint64_t u = 0;
        for (unsigned k = 0; k < chunks_; ++k) u += bits_[k].used();
        return u;
    }
    bool can_grow() const noexcept { return heap_ != nullptr && table_->first_growth_nodes != 0; }

    // A free node (contents garbage), growing the pool if every node is in use and a heap
    // was given; 0 if none can be had (the structure answers `full`).
    std::uint64_t allocate() noexcept {
        for (unsigned k = hint_; k < chunks_; ++k)
            if (const auto i = bits_[k].allocate()) {
                hint_ = k;
                return (std::uint64_t{k} << index_bits) | i;
            }
        if (!grow()) return 0;
        hint_ = chunks_ - 1;
        return (std::uint64_t{hint_} << index_bits) | bits_[hint_].allocate();
    }
    void release(std::uint64_t n) noexcept {
        const auto k = static_cast<unsigned>(n >> index_bits);
        bits_[k].release(n & index_mask);
        if (k < hint_) hint_ = k;
    }

    // Recovery's garbage collection: everything free, then take() every reachable node.
    void reset_all_free() {
        for (unsigned k = 0; k < chunks_; ++k) bits_[k].reset_all_free(capacity_[k]);
        hint_ = 0;
    }
    bool is_free(std::uint64_t n) const noexcept { return bits_[n >> index_bits].is_free(n & index_mask); }
    void take(std::uint64_t n) noexcept { bits_[n >> index_bits].take(n & index_mask); }

private:
    bool release_last() {
        const unsigned k = chunks_ - 1;
        void* block = base_[k];
        try {
            heap_->deallocate(block);  // pending: still allocated (a no-op if it already is)
        } catch (const std::exception&) {
            return false;  // nothing changed: the chunk stays
        }
        table_->offset[k - 1] = 0;
        // The commit: durable before the block can be freed. confirm_deallocation orders
        // the caller's write-backs before it frees (buddy_heap.hpp), so no pfence here:
        // flush mutation testing found one redundant.
        pmem::pwb(&table_->offset[k - 1]);
        chunks_ = k;
        base_[k] = nullptr;
        capacity_[k] = 0;
        if (hint_ >= chunks_) hint_ = 0;
        try {
            heap_->confirm_deallocation(block);
        } catch (const std::exception&) {
            // Left pending: nothing names the block, so the heap's next finish_recovery()
            // completes the deallocation.
        }
        return true;
    }

    FERRITE_FLOW_ROOT bool grow() noexcept {
        if (!can_grow() || chunks_ == dfc_max_chunks) return false;
        const unsigned k = chunks_;
        const std::uint64_t nodes = grown_chunk_nodes(table_->first_growth_nodes, k);
        if (nodes > index_mask) return false;
        void* block = nullptr;
        try {
            block = heap_->allocate(nodes * sizeof(dfc_node));  // pending until confirmed
        } catch (...) {
            return false;  // heap exhausted (or its confirm slots): the push answers `full`
        }
        table_->offset[k - 1] = heap_->offset_of(block);
        pmem::pwb(&table_->offset[k - 1]);
        pmem::pfence();  // the chunk is known to recovery before any of its nodes is linked
        try {
            heap_->confirm_allocation(block);
        } catch (...) {
            // Cannot happen for a block just allocated; if it did, the block stays pending
            // and the next recovery confirms it (recover_chunks).
        }
        base_[k] = static_cast<dfc_node*>(block);
        capacity_[k] = nodes;
        bits_[k].reset_all_free(nodes);
        chunks_ = k + 1;
        return true;
    }

    dfc_chunk_table* table_ = nullptr;
    alloc::buddy_heap* heap_ = nullptr;
    unsigned chunks_ FERRITE_FLOW_SKIP = 0, hint_ FERRITE_FLOW_SKIP = 0;
    std::array<dfc_node*, dfc_max_chunks> base_ FERRITE_FLOW_SKIP{};
    std::array<std::uint64_t, dfc_max_chunks> capacity_ FERRITE_FLOW_SKIP{};
    std::array<node_bitmap, dfc_max_chunks> bits_ FERRITE_FLOW_SKIP{};
};

}  // namespace ferrite::combining
