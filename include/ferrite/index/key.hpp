// ferrite/index/key.hpp: the index's two key types and what the tree needs of each: 8-byte
// keys (std::uint64_t, Masstree's ikey) and 16-byte keys (key128), both compared as unsigned
// integers, and the atomic slot a node keeps one in.
//
// Algorithm: [MASSTREE] (docs/references.md) compares keys 8 bytes at a time as unsigned
// integers (big-endian byte order makes that the byte order) and goes down a layer of trees
// for the next 8 bytes. Here a 16-byte key is one wide key instead (tree.hpp says why):
// key128 {hi, lo} ordered by hi, then lo, both unsigned, i.e. as the 16 bytes of the
// big-endian encoding of hi then lo.
//
// The slot: atomic_key<K>. For std::uint64_t it is std::atomic<std::uint64_t> itself (the
// 8-byte tree compiles to what it was before keys were a parameter). For key128 it is two
// atomic words, loaded and stored one after the other: a reader without the lock may see hi
// of one key and lo of another (a torn key); every such read is followed by the validation of
// the node's version (a writer changes a key only under the node's lock with the version
// marked, or in a slot no published permutation names), so a torn key is never acted upon,
// as with every other field a reader copies ([MASSTREE] readers copy nodes the same way).
//
// Crash consistency: none here. A key's two words share a cache line in every node
// (nodes.hpp's static_asserts: 16-byte keys sit at 16-byte aligned offsets), and InCLL never
// relies on the order of a key's own stores: a key is written only into a slot that was free
// at the start of the epoch (undone by the permutation's rollback) or into a node logged
// whole before (incll.hpp).
#pragma once

#include <atomic>
#include <compare>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ferrite::index {

// A 16-byte key: hi is compared first, both words as unsigned integers.
struct key128 {
    std::uint64_t hi = 0;
    std::uint64_t lo = 0;
    friend constexpr bool operator==(const key128&, const key128&) noexcept = default;
    friend constexpr std::strong_ordering operator<=>(const key128&, const key128&) noexcept = default;
};
static_assert(sizeof(key128) == 16);

// A node's key slot; load/store as std::atomic's. The key128 one is two words (see above).
template <class K>
struct atomic_key_for;
template <>
struct atomic_key_for<std::uint64_t> {
    using type = std::atomic<std::uint64_t>;
};
struct atomic_key128 {
    std::atomic<std::uint64_t> hi{0};
    std::atomic<std::uint64_t> lo{0};
    key128 load(std::memory_order order) const noexcept { return key128{hi.load(order), lo.load(order)}; }
    void store(const key128& k, std::memory_order order) noexcept {
        hi.store(k.hi, order);
        lo.store(k.lo, order);
    }
};
template <>
struct atomic_key_for<key128> {
    using type = atomic_key128;
};
template <class K>
using atomic_key = typename atomic_key_for<K>::type;

// The greatest key (an unbounded scan's upper end).
template <class K>
constexpr K max_key() noexcept;
template <>
constexpr std::uint64_t max_key<std::uint64_t>() noexcept {
    return std::numeric_limits<std::uint64_t>::max();
}
template <>
constexpr key128 max_key<key128>() noexcept {
    return key128{std::numeric_limits<std::uint64_t>::max(), std::numeric_limits<std::uint64_t>::max()};
}

// Whether K is one of the index's key types (the tree is instantiated for these two only).
template <class K>
inline constexpr bool is_index_key = std::is_same_v<K, std::uint64_t> || std::is_same_v<K, key128>;

}  // namespace ferrite::index
