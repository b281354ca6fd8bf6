// ferrite/index/incll_lazy.hpp: InCLL's per-node recovery ([NVM] ch. 3 L1104-1174), shared by
// the eager walk at open (incll_recovery.cpp) and the lazy recovery that does the same for
// each node at its first access (issue 21 item 4).
//
// node_recovery: validates one node read from the media and rolls it back. A leaf whose
// node_epoch is a pending epoch gets its permutation back from permutation_incll; a value
// undo word of a pending epoch gets its value back; every undo word is cleared, node_epoch
// reset; locks, the parent link, modstate and the dirty/logged bookkeeping are reset (they
// are volatile state on the media). Interior nodes hold no undo words: their external log
// images were restored at open. Validation: an interior node's key count and key order, every
// child link naming an allocated node of the arena; a leaf's permutations and undo words, its
// next link naming an allocated leaf with a higher low key. Damage: damaged_pool, region
// "incll tree". Restartable: each store comes after the one it depends on in the same line
// (permutation before node_epoch := 0, value before its undo word := 0).
//
// lazy_recovery: what open() left pending, and the volatile state that recovers it node by
// node. A state byte per node allocated at open (0 unrecovered, 1 recovered, 2 recovered and
// changed by the rollback, 3 damaged) and a lock array (node index -> spin lock): the first
// access to a node, reader or writer, takes its lock, rolls it back (once: the state is
// checked again under the lock) and publishes the state with a release store; later accesses
// cost one acquire load. Nodes allocated after open are never pending.
// The tree reaches a node only through a recovered node: the root is recovered at open, a
// child when the descent reads it from its recovered parent (the parent link it gets), a leaf
// reached through a `next` link by a descent to its low key (tree_read.cpp, tree_write.cpp),
// and a split recovers every child of the interior node it splits before it moves any
// (tree_split.cpp), so the parent link a late first access sets can never undo a move.
//
// Crash consistency with epochs that commit while nodes are still pending: open() rolls back
// the failed epoch F's external log (fenced), then records in the commit line pending := F and
// durable_epoch := F (one line; pending is stored first) and the run's epochs start at F + 1.
// An unrecovered node on the media still holds F's undo words, and every recovered node's
// rollback stores share a line with the undo word or permutation they replace, so any prefix of
// a line's stores the media holds rolls back to the same state under "pending F". Hence while
// pending is set, a crash (in epoch E > F) is recovered by rolling back both F and E: open()
// does that eagerly (two pending epochs: node_epoch is 64 bits, and undo words' 16 low bits
// cannot alias because the run's wrap finishes recovery first, below). finish() recovers every
// node, writes back the lines its rollbacks changed, fences, and only then clears pending
// (a store that reaches the media with the next commit line; lost, the next open is eager,
// which is correct); it runs at a clean close and before the wrap scrub of the 16 epoch bits
// (which must not clear a pending undo word unapplied), so a wrap never starts with pending
// set. An open whose first epoch F + 1 is itself a wrap epoch recovers eagerly (every undo
// word cleared), for the same reason.
//
// What differs from the thesis: the thesis rolls a node back on first access by comparing its
// epoch with the recovered one; here the per-node state is a volatile byte array (a node's
// media words could alias a later run), and the commit line names the pending epoch so that a
// crash before every node was reached recovers correctly.
//
// Both classes are templates on the key type (basic_node_recovery<K>, basic_lazy_recovery<K>;
// key.hpp), explicitly instantiated for 8-byte and 16-byte keys in incll_lazy.cpp: only the
// node size and the lines a rollback writes back differ.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ferrite/index/incll_layout.hpp"
#include "ferrite/index/nodes.hpp"

namespace ferrite::index {

// The lines of a leaf a rollback may change: permutation and node_epoch, the two value lines.
template <class K>
inline constexpr unsigned rolled_back_lines_of[] = {0, basic_leaf<K>::first_value_line, basic_leaf<K>::first_value_line + 1};
inline constexpr const auto& rolled_back_lines = rolled_back_lines_of<std::uint64_t>;
static_assert(rolled_back_lines[1] == 3 && rolled_back_lines[2] == 4);

// Both for the two key widths (K: nodes.hpp), explicitly instantiated in incll_lazy.cpp.
template <class K>
class basic_node_recovery {
public:
    using leaf = basic_leaf<K>;
    using interior = basic_interior<K>;
    static constexpr std::uint64_t node_bytes = node_bytes_of<K>;

    // Nodes below `allocated` (the committed arena counter) are the media's; pending epochs
    // a and b (0: none) are rolled back.
    basic_node_recovery(std::byte* region, const incll_layout::geometry& g, std::uint64_t allocated, std::uint64_t epoch_a,
                  std::uint64_t epoch_b) noexcept
        : region_(region), arena_offset_(g.arena_offset), allocated_(allocated), a_(epoch_a), b_(epoch_b) {}

    bool is_node_offset(std::uint64_t off) const noexcept {
        if (off < arena_offset_) return false;
        const std::uint64_t rel = off - arena_offset_;
        return rel % node_bytes == 0 && rel / node_bytes < allocated_;
    }
    node_base* node_at(std::uint64_t off, const char* what) const;
    std::uint64_t index_of(const node_base* n) const noexcept {
        return static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(n) - region_ - arena_offset_) /
               node_bytes;
    }
    std::uint64_t allocated() const noexcept { return allocated_; }
    node_base* node_of(std::uint64_t index) const noexcept {
        return reinterpret_cast<node_base*>(region_ + arena_offset_ + index * node_bytes);
    }

    // Validates n (a node of the arena) and rolls it back; parent: its parent (null: the root).
    // Returns whether the rollback changed state words (lines 0, 3 or 4 then need a write-back
    // before the pending epoch may be forgotten). Throws damaged_pool.
    bool recover(node_base* n, interior* parent) const;
    // The child i of a recovered interior node (validated by its recover()).
    static node_base* child(const interior* in, std::uint64_t i) noexcept {
        return in->children[i].load(std::memory_order_relaxed);
    }

private:
    bool recover_leaf(leaf* l, std::uint64_t index) const;
    void check_interior(const interior* in, std::uint64_t index) const;
    bool pending(std::uint64_t epoch) const noexcept { return epoch != 0 && (epoch == a_ || epoch == b_); }
    bool pending_low(std::uint64_t low) const noexcept;

    std::byte* const region_;
    const std::uint64_t arena_offset_, allocated_, a_, b_;
};

template <class K>
class basic_lazy_recovery {
public:
    using leaf = basic_leaf<K>;
    using interior = basic_interior<K>;
    // After open() rolled back the external log and recorded `pending` in the commit line.
    basic_lazy_recovery(std::byte* region, const incll_layout::geometry& g, std::uint64_t allocated, std::uint64_t pending);
    ~basic_lazy_recovery();

    // n is recovered when this returns (parent: the node it was read from; null for the root).
    // Throws damaged_pool if n is damaged (now or at an earlier access).
    void ensure(node_base* n, interior* parent) {
        if (finished_.load(std::memory_order_acquire)) return;
        const std::uint64_t i = nodes_.index_of(n);
        if (i >= nodes_.allocated()) return;  // allocated in this run
        const std::uint8_t s = state_[i].load(std::memory_order_acquire);
        if (s == recovered || s == changed) return;
        slow(n, parent, true);
    }
    bool is_recovered(const node_base* n) const noexcept {
        if (finished_.load(std::memory_order_acquire)) return true;
        const std::uint64_t i = nodes_.index_of(n);
        if (i >= nodes_.allocated()) return true;
        const std::uint8_t s = state_[i].load(std::memory_order_acquire);
        return s == recovered || s == changed;
    }
    // The same for a split, which cannot stop half way: a damaged node is marked (the next
    // ensure() of it throws) instead of thrown.
    void ensure_nothrow(node_base* n, interior* parent) noexcept;
    // Every node reachable from root, recovered (concurrent operations allowed).
    void recover_all(node_base* root);
    // recover_all, then the rollbacks' lines written back and fenced, then the commit line's
    // pending epoch cleared (made durable by the next commit). Only with no writer inside an operation and no
    // epoch end running (a clean close; the epoch end before the wrap scrub).
    FERRITE_FLOW_ROOT void finish(node_base* root);
    bool finished() const noexcept { return finished_.load(std::memory_order_acquire); }
    std::uint64_t pending_epoch() const noexcept { return pending_; }
    std::uint64_t recovered_count() const noexcept { return count_.load(std::memory_order_relaxed); }

private:
    enum : std::uint8_t { unrecovered = 0, recovered = 1, changed = 2, damaged = 3 };
    void slow(node_base* n, interior* parent, bool may_throw);
    void walk(node_base* n, interior* parent, unsigned depth);

    std::byte* const region_;
    const basic_node_recovery<K> nodes_;
    const std::uint64_t pending_;
    FERRITE_FLOW_SKIP std::unique_ptr<std::atomic<std::uint8_t>[]> state_;
    static constexpr unsigned lock_count = 1024;
    FERRITE_FLOW_SKIP std::unique_ptr<std::atomic<std::uint32_t>[]> locks_;
    FERRITE_FLOW_SKIP std::atomic<bool> finished_{false};
    FERRITE_FLOW_SKIP std::atomic<std::uint64_t> count_{0};
};

extern template class basic_node_recovery<std::uint64_t>;
extern template class basic_node_recovery<key128>;
extern template class basic_lazy_recovery<std::uint64_t>;
extern template class basic_lazy_recovery<key128>;
using node_recovery = basic_node_recovery<std::uint64_t>;
using lazy_recovery = basic_lazy_recovery<std::uint64_t>;

}  // namespace ferrite::index
