// ferrite/index/nodes.hpp: the index's two node types, line by line: a leaf of width 14 with
// its permutation word, and an interior node of 15 keys and 16 children.
//
// Algorithm: [MASSTREE] (docs/references.md): a B+-tree whose nodes each carry a
// version word (node_version.hpp); a leaf keeps its keys unsorted in slots and their order in
// the permutation (permutation.hpp); leaves are linked left to right (`next`) and each keeps
// the lowest key it may hold (`low_key`), so a reader that reached a leaf just before it split
// finds its key by walking right. 8-byte keys compared as unsigned integers (Masstree's ikey;
// one layer: no key longer than 8 bytes yet) and 8-byte values stored in the leaf.
//
// The leaf's line layout is the one InCLL ([NVM] ch. 3, L919-953, L1063-1078) needs, so that
// the durable tree adds its undo words without moving anything; in the volatile tree the
// words marked "InCLL" stay 0:
//   line 0  version | parent | permutation | permutation_incll (InCLL) | node_epoch (InCLL) |
//           low_key | next | modstate
//           -- the permutation, its undo copy and the epoch of the copy share one line, so
//              "permutation_incll := permutation; node_epoch := current; permutation := new"
//              reaches the media in that order without a write-back between (same-line order)
//   line 1  keys 0-7
//   line 2  keys 8-13 | dirty_epoch | logged_epoch (InCLL bookkeeping, not state)
//   line 3  values 0-6 | value_incll[0] (InCLL: slot index, old value, low epoch bits)
//   line 4  values 7-13 | value_incll[1]
// Five lines, 320 bytes; the static_asserts below hold the layout.
// The interior node: line 0 version | parent | nkeys | keys 0-4, then keys 5-14 and children
// 0-15 | dirty_epoch | logged_epoch (320 bytes). InCLL logs interior nodes in its external
// per-thread log, so they hold no undo words. Links (parent, next, children) are self-relative
// (rel_ptr.hpp), so a pool of nodes may be mapped anywhere.
//
// What differs from Masstree: the leaf's lower bound is its own field (Masstree reads it from
// slot 0 and therefore never reuses slot 0 for another key); no prev pointer (no reverse
// scans), no key suffixes, no layers; nodes are never removed or merged (see tree.hpp).
//
// Crash consistency: the durable tree's argument is in incll.hpp. Every field readers share is
// an atomic word; `modstate` and the bookkeeping words are read and written only under the
// node's lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ferrite/index/node_version.hpp"
#include "ferrite/index/permutation.hpp"
#include "ferrite/index/rel_ptr.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::index {

struct interior;

struct node_base {
    explicit node_base(std::uint64_t v) noexcept : version(v) {}
    node_version version;
    atomic_rel_ptr<interior> parent;  // changed under the parent's lock (its split)
    // The leaf bit is fixed at creation, so this needs no stable version (and does not wait
    // for a node another writer holds marked).
    bool is_leaf() const noexcept { return node_version::is_leaf(version.peek()); }
};

struct alignas(64) leaf : node_base {
    static constexpr unsigned width = 14;
    static constexpr unsigned values_per_line = 7;
    enum : std::uint64_t { modstate_insert = 0, modstate_remove = 1 };

    explicit leaf(std::uint64_t version_word, std::uint64_t low) noexcept
        : node_base(version_word | node_version::leaf_bit), low_key(low) {}

    // line 0
    std::atomic<std::uint64_t> perm{permutation::empty(width).value()};
    std::atomic<std::uint64_t> permutation_incll{0};  // InCLL: the permutation at the start of node_epoch
    std::atomic<std::uint64_t> node_epoch{0};         // InCLL: the epoch permutation_incll belongs to
    const std::uint64_t low_key;          // fixed for the leaf's life: leaves never merge
    atomic_rel_ptr<leaf> next;
    std::uint64_t modstate = modstate_insert;  // under the lock: a slot was freed by erase
    // lines 1-2
    std::atomic<std::uint64_t> keys[width] = {};
    // InCLL bookkeeping (durable tree; written under the lock, reset by recovery, not state):
    FERRITE_FLOW_SKIP std::uint64_t dirty_epoch = 0;   // epoch * 32 + the lines written in it (bit i: line i); on that epoch's dirty list
    FERRITE_FLOW_SKIP std::uint64_t logged_epoch = 0;  // the epoch the leaf went to the external undo log in
    // lines 3-4
    struct alignas(64) value_line {
        std::atomic<std::uint64_t> values[values_per_line] = {};
        std::atomic<std::uint64_t> value_incll{0};  // InCLL: incll_words.hpp
    } value_lines[2];

    std::atomic<std::uint64_t>& value(unsigned slot) noexcept {
        return value_lines[slot / values_per_line].values[slot % values_per_line];
    }
    const std::atomic<std::uint64_t>& value(unsigned slot) const noexcept {
        return value_lines[slot / values_per_line].values[slot % values_per_line];
    }
};

struct alignas(64) interior : node_base {
    static constexpr unsigned max_keys = 15;

    explicit interior(std::uint64_t version_word) noexcept : node_base(version_word) {}

    std::atomic<std::uint64_t> nkeys{0};
    std::atomic<std::uint64_t> keys[max_keys] = {};
    atomic_rel_ptr<node_base> children[max_keys + 1];
    FERRITE_FLOW_SKIP std::uint64_t dirty_epoch = 0; FERRITE_FLOW_SKIP std::uint64_t logged_epoch = 0;  // InCLL bookkeeping, as the leaf's

    // The child whose range holds `key`: child i holds [keys[i-1], keys[i]). Reads without
    // the lock may see a node in the middle of a change (the caller validates the version);
    // nkeys is clamped so the reads stay inside the node, and the child may be null.
    node_base* child_for(std::uint64_t key) const noexcept {
        std::uint64_t n = nkeys.load(std::memory_order_acquire);
        if (n > max_keys) n = max_keys;
        unsigned i = 0;
        while (i < n && keys[i].load(std::memory_order_acquire) <= key) ++i;
        return children[i].load(std::memory_order_acquire);
    }
};

static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && std::atomic<std::uint64_t>::is_always_lock_free,
              "the node layout assumes 8-byte lock-free atomic words");
// The types are not standard-layout (a base with a member), so offsetof is only conditionally
// supported; GCC and Clang compute it for single non-virtual inheritance, which is all there is.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
static_assert(offsetof(leaf, perm) == 16 && offsetof(leaf, permutation_incll) == 24 && offsetof(leaf, node_epoch) == 32,
              "the permutation, its InCLL copy and the node epoch must share line 0");
static_assert(offsetof(leaf, keys) == 64, "keys start on line 1");
static_assert(offsetof(leaf, value_lines) == 192 && sizeof(leaf::value_line) == 64,
              "each value line holds 7 values and its InCLL word");
#pragma GCC diagnostic pop
static_assert(sizeof(leaf) == 320, "a leaf is five cache lines");
static_assert(sizeof(interior) == 320, "an interior node is five cache lines");

}  // namespace ferrite::index
