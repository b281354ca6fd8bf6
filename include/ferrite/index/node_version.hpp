// ferrite/index/node_version.hpp: the version word of an index node (Masstree's nodeversion):
// the node's lock for writers and the counters optimistic readers validate against.
//
// Algorithm: [MASSTREE]'s node version (docs/references.md). One 64-bit word per node:
//   bit 0        locked     a writer holds the node
//   bit 1        inserting  the holder is changing what a reader could be reading (a slot a
//                           reader's permutation may still name, an interior node's arrays)
//   bit 2        splitting  the holder is splitting the node (or growing the root above it)
//   bit 3        root       the node is the tree's root
//   bit 4        leaf       the node is a leaf (fixed at creation)
//   bits 8-31    vinsert    bumped by unlock() after an "inserting" hold
//   bits 32-63   vsplit     bumped by unlock() after a "splitting" hold
// A reader takes stable() (spins while inserting or splitting is set), reads the node, and
// accepts what it read only if has_changed() is false afterwards; has_split() tells it whether
// the keys it wants may have moved to a right sibling (leaf) or elsewhere (interior: restart
// from the root). Writers lock() (CAS on the lock bit), mark_insert() / mark_split() before
// the stores a reader must not accept, and unlock().
//
// Memory order, without standalone fences (the thread sanitizer does not model them): the
// mark is stored before the holder's data stores, which are release stores, and a reader's
// data loads are acquire loads, so a reader that loaded a value the holder stored also sees
// the mark (or the unlock after it) when it loads the version again. On x86 every one of
// these is a plain mov.
//
// What differs from Masstree: no "deleted" bit and no node merging (erase only removes keys
// from a leaf's permutation; empty leaves stay); the counters' widths are ferrite's (vinsert
// wraps within its 24 bits instead of carrying into vsplit). Waiters spin with
// pmem::wait_hint() and yield now and then (the crash simulator's scheduler passes its token
// at wait_hint; oversubscribed machines make progress).
//
// Crash consistency: none here. The word is volatile state: after a restart every node's lock
// is reinitialised (InCLL recovery keeps its own lock array because the word on the media may
// hold a lock bit from before the crash).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "ferrite/pmem/primitives.hpp"

namespace ferrite::index {

class node_version {
public:
    static constexpr std::uint64_t lock_bit = 1, inserting_bit = 2, splitting_bit = 4, root_bit = 8, leaf_bit = 16;
    static constexpr std::uint64_t dirty_bits = inserting_bit | splitting_bit;
    static constexpr std::uint64_t vinsert_low = std::uint64_t{1} << 8;
    static constexpr std::uint64_t vinsert_mask = ((std::uint64_t{1} << 32) - 1) & ~(vinsert_low - 1);
    static constexpr std::uint64_t vsplit_low = std::uint64_t{1} << 32;

    explicit node_version(std::uint64_t initial = 0) noexcept : word_(initial) {}

    static bool is_leaf(std::uint64_t v) noexcept { return (v & leaf_bit) != 0; }
    static bool is_root(std::uint64_t v) noexcept { return (v & root_bit) != 0; }

    // A version with no writer in the middle of a change (the lock bit may be set).
    std::uint64_t stable() const noexcept {
        for (unsigned spins = 0;; ++spins) {
            const std::uint64_t v = word_.load(std::memory_order_acquire);
            if ((v & dirty_bits) == 0) return v;
            pause(spins);
        }
    }
    // Did anything but the lock bit change since the stable version `v`?
    bool has_changed(std::uint64_t v) const noexcept {
        return (word_.load(std::memory_order_acquire) ^ v) > lock_bit;
    }
    // Did the node split between the two versions?
    static bool has_split(std::uint64_t before, std::uint64_t after) noexcept { return (before ^ after) >= vsplit_low; }

    void lock() noexcept {
        for (unsigned spins = 0;; ++spins) {
            std::uint64_t v = word_.load(std::memory_order_relaxed);
            if ((v & lock_bit) == 0 &&
                word_.compare_exchange_weak(v, v | lock_bit, std::memory_order_acquire, std::memory_order_relaxed))
                return;
            pause(spins);
        }
    }
    // The holder's own operations (the word changes only under the lock):
    void mark_insert() noexcept { set(word_.load(std::memory_order_relaxed) | inserting_bit); }
    void mark_split() noexcept { set(word_.load(std::memory_order_relaxed) | splitting_bit); }
    void clear_root() noexcept { set(word_.load(std::memory_order_relaxed) & ~root_bit); }
    void unlock() noexcept {
        std::uint64_t v = word_.load(std::memory_order_relaxed);
        if (v & inserting_bit) v = (v & ~vinsert_mask) | ((v + vinsert_low) & vinsert_mask);
        if (v & splitting_bit) v += vsplit_low;
        word_.store(v & ~(lock_bit | dirty_bits), std::memory_order_release);
    }
    // Recovery's reinitialisation of a word read from the media (no other thread uses the node yet).
    void reset(std::uint64_t v) noexcept { set(v); }
    // The word as it is, for the bits fixed at creation (leaf).
    std::uint64_t peek() const noexcept { return word_.load(std::memory_order_relaxed); }
    bool locked() const noexcept { return (word_.load(std::memory_order_relaxed) & lock_bit) != 0; }

private:
    void set(std::uint64_t v) noexcept { word_.store(v, std::memory_order_relaxed); }
    static void pause(unsigned spins) noexcept {
        pmem::wait_hint();
        if (spins % 64 == 63) std::this_thread::yield();
    }

    std::atomic<std::uint64_t> word_;
};

}  // namespace ferrite::index
