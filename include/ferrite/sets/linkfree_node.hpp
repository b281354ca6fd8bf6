// ferrite/sets/linkfree_node.hpp: the node of the link-free list and hash set, its validity
// bits and its flush flags.
//
// Paper: [SETS] (docs/references.md), section 3, Listing 1 (L142-158) and the auxiliary
// functions (L160-166).
//
// One node is one 64-byte line, in a node_store slot (sets/node_store.hpp) or, for the
// volatile sentinels (the list head, the hash set's bucket sentinels), allocated with new:
//   u8 v1, u8 v2          validity bits: valid iff v1 == v2 (each 0 or 1 on the media)
//   u8 insert_flushed     FLUSH_INSERT already wrote this node's insertion back
//   u8 delete_flushed     FLUSH_DELETE already wrote this node's deletion back
//   u32 pad
//   u64 next              raw pointer to the successor | Harris mark in bit 0 (deleted)
//   u64 so_key            order: (so_key, key bytes); recomputed from the key at recovery
//   K key; V value        sizeof(K) + sizeof(V) <= 40
// Links are never persisted meaningfully: recovery reads only next's mark bit. A node is a
// member of the set after a crash iff it is valid and unmarked.
//
// Every field that threads race on (v1, v2, the flags, next) is accessed through
// std::atomic_ref; key, value and so_key are written only while the node is unreachable
// (between allocation and the release CAS that links it) and read after an acquire load.
//
// The states of a slot, as the media may hold them (stores to one line reach the media in
// program order, so the media always holds a prefix of the line's stores):
//   blank / free         valid, next = marked null (1): not a member. blank_line() is what
//                        node_store writes to never-used slots (zeroed memory would read as
//                        a member: [SETS] defect #2), and normalise() brings every dead node
//                        found at recovery to the same state before it is reused: an invalid
//                        dead node whose v1 the next insert flipped would otherwise turn
//                        valid with its old key and an unmarked next, a member again (the
//                        link-free twin of [SETS] defect #4).
//   initialising         prepare_insert() first flips v1 (invalid), then writes key, value,
//                        so_key, flags and next: every prefix of these is invalid.
//   linked, invalid      after the linking CAS, until some thread makes it valid: a crash
//                        loses the insertion (it had not been reported).
//   valid, unmarked      a member (make_valid(), then flush_insert() before reporting it).
//   valid, marked        deleted (remove makes the node valid before marking it, so a
//                        marked node is always valid, L272); flush_delete() before reporting.
//   abandoned            an insert whose CAS lost and that found the key present after all:
//                        abandon() writes next = marked null, then v2 := v1 (valid, marked),
//                        so the line never reads valid and unmarked with the dead key
//                        ([SETS] defect #1).
// The flush flags are cleared by prepare_insert(): a reused node's flags are its last
// user's, and a set flag would skip the write-back of the new insertion or deletion.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sets/split_order.hpp"

namespace ferrite::sets {

inline constexpr std::uintptr_t linkfree_mark = 1;
// Where next and the key lie in every linkfree_node (read without K and V by node_check.cpp).
inline constexpr std::size_t linkfree_next_offset = 8;
inline constexpr std::size_t linkfree_key_offset = 24;

// The damage link-free recovery (linkfree_table.hpp) and the untyped node check
// (node_check.cpp, for `pool check`) refuse, with one wording: validity bits other than 0
// or 1, and two member nodes (valid, unmarked) of one key.
inline void check_validity_bits(std::uint8_t v1, std::uint8_t v2, std::uint64_t area_offset, std::size_t index) {
    if (v1 > 1 || v2 > 1)
        throw_damaged(pool_errc::damaged_object, "link-free set", "",
                      "node " + std::to_string(index) + " of the area at pool offset " + std::to_string(area_offset) +
                          " has validity bits " + std::to_string(v1) + "/" + std::to_string(v2) +
                          " (each must be 0 or 1)");
}
[[noreturn]] inline void duplicate_members(std::uint64_t first, std::uint64_t second) {
    throw_damaged(pool_errc::damaged_object, "link-free set", "",
                  "two member nodes (pool offsets " + std::to_string(first) + " and " + std::to_string(second) +
                      ") hold the same key");
}

template <class K, class V>
struct alignas(node_size) linkfree_node {
    static_assert(check_payload<K, V>());

    std::uint8_t v1;
    std::uint8_t v2;
    std::uint8_t insert_flushed FERRITE_FLOW_SKIP;  // hints: a lost flag costs one more write-back
    std::uint8_t delete_flushed FERRITE_FLOW_SKIP;
    std::uint32_t pad;
    std::uintptr_t next FERRITE_FLOW_SKIP;  // links are not persisted (recovery reads only the mark, which flush_delete's write-back of the node persists)
    std::uint64_t so_key;
    K key;
    [[no_unique_address]] V value;
    static_assert(alignof(K) <= 8, "a link-free key lies at byte 24 of its node (node_check.cpp reads it there)");

    // --- atomic views of the raced fields ---
    std::atomic_ref<std::uint8_t> a_v1() noexcept { return std::atomic_ref<std::uint8_t>(v1); }
    std::atomic_ref<std::uint8_t> a_v2() noexcept { return std::atomic_ref<std::uint8_t>(v2); }
    std::atomic_ref<std::uintptr_t> a_next() noexcept { return std::atomic_ref<std::uintptr_t>(next); }

    std::uintptr_t load_next() noexcept { return a_next().load(std::memory_order_acquire); }
    bool marked() noexcept { return (load_next() & linkfree_mark) != 0; }
    bool valid() noexcept { return a_v1().load(std::memory_order_acquire) == a_v2().load(std::memory_order_acquire); }

    // makeValid (L162): v2 := v1. Every thread that makes a node valid stores the same value.
    void make_valid() noexcept {
        const auto b = a_v1().load(std::memory_order_acquire);
        if (a_v2().load(std::memory_order_acquire) != b) a_v2().store(b, std::memory_order_release);
    }

    // FLUSH_INSERT / FLUSH_DELETE (L162): write the line back and fence, once. A flag is
    // set only after the fence, by a thread that saw the state it stands for (valid, or
    // marked) before its write-back, so a set flag means that state is durable.
    // The write-back carries the caller's location, so that flush mutation testing switches
    // off each caller's write-back on its own (the fence is one site for all of them).
    FERRITE_FLOW_ROOT void flush_insert(const pmem::site& where = pmem::site::current()) noexcept {
        std::atomic_ref<std::uint8_t> flag(insert_flushed);
        if (flag.load(std::memory_order_acquire) != 0) return;
        pmem::pwb(this, where);
        pmem::pfence();
        flag.store(1, std::memory_order_release);
    }
    FERRITE_FLOW_ROOT void flush_delete(const pmem::site& where = pmem::site::current()) noexcept {
        std::atomic_ref<std::uint8_t> flag(delete_flushed);
        if (flag.load(std::memory_order_acquire) != 0) return;
        FERRITE_FLOW_STORED_ELSEWHERE(this, sizeof *this);  // the mark, stored by remove (any thread)
        pmem::pwb(this, where);
        pmem::pfence();
        flag.store(1, std::memory_order_release);
    }

    // Allocation (L227, Listing 4 lines 11-16, before the link): the node is valid (free or blank) and
    // unreachable. flipV1 makes it invalid first; the paper's release fence (L249) is there
    // to keep the compiler from moving the other stores of this line above it, which a
    // compiler barrier does (x86 keeps one core's stores in order, and one line's stores
    // reach the media in that order); other threads see the node only through the release
    // CAS that links it.
    void prepare_insert(std::uint64_t so, const K& k, const V& v, linkfree_node* succ) noexcept {
        a_v1().store(static_cast<std::uint8_t>(a_v1().load(std::memory_order_relaxed) ^ 1U), std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);
        std::atomic_ref<std::uint8_t>(insert_flushed).store(0, std::memory_order_relaxed);
        std::atomic_ref<std::uint8_t>(delete_flushed).store(0, std::memory_order_relaxed);
        so_key = so;
        std::memcpy(&key, &k, sizeof(K));
        if constexpr (!std::is_empty_v<V>) std::memcpy(&value, &v, sizeof(V));
        a_next().store(reinterpret_cast<std::uintptr_t>(succ), std::memory_order_relaxed);
    }

    // An initialised node that was never linked goes back to "valid and deleted" (the
    // listing omits this): marked first, then valid, so no prefix is valid and unmarked.
    void abandon() noexcept {
        a_next().store(linkfree_mark, std::memory_order_release);
        make_valid();
    }

    // Recovery: a dead node (invalid, or valid and marked) to the free state, the same
    // order as abandon(). Volatile: if it never reaches the media, the media still holds a
    // dead line, and the next prepare_insert() store reaches it only after these.
    void normalise() noexcept {
        abandon();
        std::atomic_ref<std::uint8_t>(insert_flushed).store(0, std::memory_order_relaxed);
        std::atomic_ref<std::uint8_t>(delete_flushed).store(0, std::memory_order_relaxed);
    }

    static linkfree_node* from(node_line* line) noexcept { return reinterpret_cast<linkfree_node*>(line); }
    node_line* line() noexcept { return reinterpret_cast<node_line*>(this); }
};

// The line node_store writes to every fresh slot: valid (0, 0), next = marked null.
inline node_line linkfree_blank_line() noexcept {
    node_line l{};
    const std::uintptr_t marked_null = linkfree_mark;
    std::memcpy(l.bytes + 8, &marked_null, sizeof marked_null);
    return l;
}

}  // namespace ferrite::sets
