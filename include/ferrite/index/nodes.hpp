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
// With 16-byte keys (key128, key.hpp; tree.hpp says why wide keys rather than layers) the
// same leaf is seven lines, 448 bytes; line 0 keeps everything InCLL's same-line argument needs
// and the low key moves out of it (it never changes, so it needs no line of its own order):
//   line 0  version | parent | permutation | permutation_incll (InCLL) | node_epoch (InCLL) |
//           next | modstate | (spare)
//   line 1  low_key (16) | keys 0-2 (16 each)
//   line 2  keys 3-6
//   line 3  keys 7-10
//   line 4  keys 11-13 | dirty_epoch | logged_epoch
//   line 5  values 0-6 | value_incll[0]
//   line 6  values 7-13 | value_incll[1]
// and the interior node is version | parent | nkeys | 15 keys of 16 bytes | 16 children |
// dirty_epoch | logged_epoch (408 bytes, seven lines, 448). Every 16-byte key sits at a
// 16-byte aligned offset, so its two words share a line. Both widths' nodes give the InCLL
// engine the same facts (lines, key_line, first_value_line), so it is one template.
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

#include "ferrite/index/key.hpp"
#include "ferrite/index/node_version.hpp"
#include "ferrite/index/permutation.hpp"
#include "ferrite/index/rel_ptr.hpp"
#include "ferrite/pmem/flow.hpp"

namespace ferrite::index {

template <class K>
struct basic_interior;

struct node_base {
    explicit node_base(std::uint64_t v) noexcept : version(v) {}
    node_version version;
    atomic_rel_ptr<node_base> parent;  // an interior node; changed under the parent's lock (its split)
    // The leaf bit is fixed at creation, so this needs no stable version (and does not wait
    // for a node another writer holds marked).
    bool is_leaf() const noexcept { return node_version::is_leaf(version.peek()); }
};

// The leaf's parts that do not depend on the key width.
struct leaf_constants {
    static constexpr unsigned width = 14;
    static constexpr unsigned values_per_line = 7;
    enum : std::uint64_t { modstate_insert = 0, modstate_remove = 1 };
    struct alignas(64) value_line {
        std::atomic<std::uint64_t> values[values_per_line] = {};
        std::atomic<std::uint64_t> value_incll{0};  // InCLL: incll_words.hpp
    };
};

// A leaf of 16-byte keys (the layout above); the 8-byte one is the specialization below.
template <class K>
struct alignas(64) basic_leaf : node_base, leaf_constants {
    using key_type = K;
    static constexpr unsigned lines = 7;
    static constexpr unsigned first_value_line = 5;
    // The line of slot's key: low_key takes the first 16 bytes of line 1.
    static constexpr unsigned key_line(unsigned slot) noexcept { return 1 + (slot + 1) / 4; }

    explicit basic_leaf(std::uint64_t version_word, const K& low) noexcept
        : node_base(version_word | node_version::leaf_bit), low_key(low) {}

    // line 0
    std::atomic<std::uint64_t> perm{permutation::empty(width).value()};
    std::atomic<std::uint64_t> permutation_incll{0};  // InCLL: the permutation at the start of node_epoch
    std::atomic<std::uint64_t> node_epoch{0};         // InCLL: the epoch permutation_incll belongs to
    atomic_rel_ptr<basic_leaf> next;
    std::uint64_t modstate = modstate_insert;  // under the lock: a slot was freed by erase
    std::uint64_t spare = 0;
    // lines 1-4
    const K low_key;  // fixed for the leaf's life: leaves never merge
    atomic_key<K> keys[width] = {};
    FERRITE_FLOW_SKIP std::uint64_t dirty_epoch = 0;   // InCLL bookkeeping, as the 8-byte leaf's
    FERRITE_FLOW_SKIP std::uint64_t logged_epoch = 0;
    // lines 5-6
    value_line value_lines[2];

    std::atomic<std::uint64_t>& value(unsigned slot) noexcept {
        return value_lines[slot / values_per_line].values[slot % values_per_line];
    }
    const std::atomic<std::uint64_t>& value(unsigned slot) const noexcept {
        return value_lines[slot / values_per_line].values[slot % values_per_line];
    }
};

template <>
struct alignas(64) basic_leaf<std::uint64_t> : node_base, leaf_constants {
    using key_type = std::uint64_t;
    static constexpr unsigned lines = 5;
    static constexpr unsigned first_value_line = 3;
    static constexpr unsigned key_line(unsigned slot) noexcept { return 1 + slot / 8; }

    explicit basic_leaf(std::uint64_t version_word, std::uint64_t low) noexcept
        : node_base(version_word | node_version::leaf_bit), low_key(low) {}

    // line 0
    std::atomic<std::uint64_t> perm{permutation::empty(width).value()};
    std::atomic<std::uint64_t> permutation_incll{0};  // InCLL: the permutation at the start of node_epoch
    std::atomic<std::uint64_t> node_epoch{0};         // InCLL: the epoch permutation_incll belongs to
    const std::uint64_t low_key;          // fixed for the leaf's life: leaves never merge
    atomic_rel_ptr<basic_leaf> next;
    std::uint64_t modstate = modstate_insert;  // under the lock: a slot was freed by erase
    // lines 1-2
    std::atomic<std::uint64_t> keys[width] = {};
    // InCLL bookkeeping (durable tree; written under the lock, reset by recovery, not state):
    FERRITE_FLOW_SKIP std::uint64_t dirty_epoch = 0;   // epoch * 32 + the lines written in it (bit i: line i); on that epoch's dirty list
    FERRITE_FLOW_SKIP std::uint64_t logged_epoch = 0;  // the epoch the leaf went to the external undo log in
    // lines 3-4
    value_line value_lines[2];

    std::atomic<std::uint64_t>& value(unsigned slot) noexcept {
        return value_lines[slot / values_per_line].values[slot % values_per_line];
    }
    const std::atomic<std::uint64_t>& value(unsigned slot) const noexcept {
        return value_lines[slot / values_per_line].values[slot % values_per_line];
    }
};

template <class K>
struct alignas(64) basic_interior : node_base {
    using key_type = K;
    static constexpr unsigned max_keys = 15;
    static constexpr unsigned lines = sizeof(K) == 8 ? 5 : 7;

    explicit basic_interior(std::uint64_t version_word) noexcept : node_base(version_word) {}

    std::atomic<std::uint64_t> nkeys{0};
    atomic_key<K> keys[max_keys] = {};
    atomic_rel_ptr<node_base> children[max_keys + 1];
    FERRITE_FLOW_SKIP std::uint64_t dirty_epoch = 0; FERRITE_FLOW_SKIP std::uint64_t logged_epoch = 0;  // InCLL bookkeeping, as the leaf's

    // The child whose range holds `key`: child i holds [keys[i-1], keys[i]). Reads without
    // the lock may see a node in the middle of a change (the caller validates the version);
    // nkeys is clamped so the reads stay inside the node, and the child may be null.
    node_base* child_for(const K& key) const noexcept {
        std::uint64_t n = nkeys.load(std::memory_order_acquire);
        if (n > max_keys) n = max_keys;
        unsigned i = 0;
        while (i < n && keys[i].load(std::memory_order_acquire) <= key) ++i;
        return children[i].load(std::memory_order_acquire);
    }
};

using leaf = basic_leaf<std::uint64_t>;
using interior = basic_interior<std::uint64_t>;
using leaf16 = basic_leaf<key128>;
using interior16 = basic_interior<key128>;

// The bytes of every node of a tree of K keys (leaves and interior nodes share the arena).
template <class K>
inline constexpr std::uint64_t node_bytes_of = sizeof(basic_leaf<K>);

static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && std::atomic<std::uint64_t>::is_always_lock_free,
              "the node layout assumes 8-byte lock-free atomic words");
// The types are not standard-layout (a base with a member), so offsetof is only conditionally
// supported; GCC and Clang compute it for single non-virtual inheritance, which is all there is.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
static_assert(offsetof(leaf, perm) == 16 && offsetof(leaf, permutation_incll) == 24 && offsetof(leaf, node_epoch) == 32,
              "the permutation, its InCLL copy and the node epoch must share line 0");
static_assert(offsetof(leaf, low_key) == 40 && offsetof(leaf, next) == 48, "the 8-byte leaf's line 0 is layout 1's");
static_assert(offsetof(leaf, keys) == 64, "keys start on line 1");
static_assert(offsetof(leaf, value_lines) == 192 && sizeof(leaf::value_line) == 64,
              "each value line holds 7 values and its InCLL word");
static_assert(offsetof(leaf16, perm) == 16 && offsetof(leaf16, permutation_incll) == 24 && offsetof(leaf16, node_epoch) == 32,
              "the permutation, its InCLL copy and the node epoch must share line 0 (16-byte keys too)");
static_assert(offsetof(leaf16, next) == 40 && offsetof(leaf16, low_key) == 64, "the 16-byte leaf's line 0, then its low key");
static_assert(offsetof(leaf16, keys) == 80 && sizeof(atomic_key<key128>) == 16,
              "16-byte keys at 16-byte aligned offsets (a key's two words share a line)");
static_assert(offsetof(leaf16, dirty_epoch) == 304 && offsetof(leaf16, value_lines) == 320,
              "the 16-byte leaf's value lines are lines 5 and 6");
static_assert(offsetof(interior16, keys) == 24 && offsetof(interior16, keys) % 8 == 0);
#pragma GCC diagnostic pop
static_assert(sizeof(leaf) == 320, "a leaf is five cache lines");
static_assert(sizeof(interior) == 320, "an interior node is five cache lines");
static_assert(sizeof(leaf16) == 448 && sizeof(interior16) == 448, "16-byte-key nodes are seven cache lines");
static_assert(leaf16::key_line(13) == 4 && leaf16::key_line(2) == 1 && leaf16::key_line(3) == 2);

}  // namespace ferrite::index
