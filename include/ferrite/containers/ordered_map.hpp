// ferrite/containers/ordered_map.hpp: ferrite::ordered_map<K, V>, a concurrent ordered map
// with buffered durability: the index's InCLL tree (index/durable_tree.hpp) in one heap
// block of a pool, with std-like names.
//
//   auto s = ferrite::store::open_or_create("orders", "orders-v1", {.size = 256 << 20});
//   auto m = s.names().open<ferrite::ordered_map<std::uint64_t, std::uint64_t>>("by-time", {.nodes = 1 << 16});
//   m->insert_or_assign(7, 70);     // durable at the end of the epoch (<= 64 ms) ...
//   m->sync();                      // ... or now
//   if (auto v = m->get(7)) ...;
//   m->scan(5, 100, [](std::uint64_t k, std::uint64_t v) { ... });       // from 5, at most 100
//   m->scan_range(5, 9, [](std::uint64_t k, std::uint64_t v) { ... });   // keys in [5, 9)
//   m->erase(7);
//
// Algorithm: [MASSTREE]'s tree made durable by InCLL ([NVM] ch. 3); the tree's and InCLL's
// headers (index/tree.hpp, index/incll.hpp) have the algorithm, what differs from the papers
// and the crash-consistency argument. This header only maps K and V onto the tree's 8-byte
// words and names the structure in a catalog (kind 11 "ordered_map", ordered_map_kind.hpp).
//
// Keys: 8-byte or 16-byte trivially copyable types (static_assert); values: 8-byte
// trivially copyable types. 8-byte keys are ordered as unsigned 64-bit integers of their
// bytes, except signed integers, which are ordered numerically (their sign bit is flipped on
// the way in and out). 16-byte keys go to the tree of 16-byte keys (index::key128) and are
// ordered
//   * ferrite::key16 (below): as its 16 bytes, lexicographically (big-endian words);
//     key16::from_string encodes a string of up to 15 bytes order-preservingly;
//   * index::key128: by hi, then lo, as unsigned integers;
//   * any other 16-byte type: as two unsigned 64-bit integers, the first 8 bytes of its
//     object representation first (a struct {std::uint64_t a, b;} is ordered by a, then b).
// The key width is part of the stored tree (its layout version) and of the catalog entry
// (kind 11 ordered_map for 8-byte keys, kind 14 ordered_map_k16 for 16-byte keys, and the
// element type): opening one as the other is refused before anything is written.
// It meets containers::ordered_map (concepts.hpp) but for that contract's "durable when it
// returns": an update is durable at its epoch's end, or at the sync() after it.
// Guarantee: after a crash the map is as it was at the end of some completed epoch, at least
// the one the last returned sync() made durable. Every operation may run concurrently with
// any other; get, insert, insert_or_assign and erase are linearizable, scans are weakly
// consistent per leaf (index/tree.hpp).
// What it does not do yet: grow. The tree's node arena is the block create() allocates
// (options.nodes nodes of 320 bytes, 448 with 16-byte keys; a leaf holds up to 14 keys); a full arena throws
// ferrite::out_of_memory and leaves the map unchanged.
#pragma once

#include <array>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/index/durable_tree.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite {

struct ordered_map_options {
    std::uint64_t nodes = 4096;  // create: arena nodes (fixed for the map's life); open: unused
    std::chrono::milliseconds epoch_length{64};  // 0: epochs end only at sync()
    unsigned shards = 16;                        // create: writer shards
    unsigned log_entries = 64;                   // create: external log entries per shard
    // Open: recover every node before open returns, instead of each node at its first access.
    bool eager_recovery = false;
};

// A 16-byte key ordered as its bytes (lexicographically, unsigned).
struct key16 {
    std::array<std::uint8_t, 16> bytes{};
    friend constexpr bool operator==(const key16&, const key16&) noexcept = default;
    friend constexpr auto operator<=>(const key16&, const key16&) noexcept = default;
    // A string of at most 15 bytes, order-preserving: the bytes, zeros, and the length in the
    // last byte (so "a" < "a\0" < "ab" as strings: a shorter string's padding ties with the
    // longer one's bytes only where those are zeros, and then its length is smaller).
    // Throws std::length_error for a longer string.
    static key16 from_string(std::string_view s) {
        if (s.size() > 15) throw std::length_error("key16::from_string: at most 15 bytes");
        key16 k;
        for (std::size_t i = 0; i < s.size(); ++i) k.bytes[i] = static_cast<std::uint8_t>(s[i]);
        k.bytes[15] = static_cast<std::uint8_t>(s.size());
        return k;
    }
    // The string from_string encoded (the length byte says how many bytes).
    std::string_view to_string_view() const noexcept {
        return {reinterpret_cast<const char*>(bytes.data()), bytes[15] <= 15 ? bytes[15] : std::size_t{15}};
    }
};

namespace containers::ordered_map_detail {
// src/containers/ordered_map_kind.cpp, for W = std::uint64_t and index::key128. create:
// allocates and formats the tree's block, then the anchor names it (the commit point). open:
// validates the block and the tree's header (damaged_pool, nothing written), then recovers.
template <class W>
std::unique_ptr<index::basic_durable_tree<W>> create_tree(const pmem::pool_ref& pool, alloc::buddy_heap& heap,
                                                          std::uint64_t& anchor, const ordered_map_options& o);
template <class W>
std::unique_ptr<index::basic_durable_tree<W>> open_tree(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                                        std::uint64_t anchor, const ordered_map_options& o);

// K <-> the tree's key word W (the orders above).
template <class K>
struct key_codec {
    static_assert(sizeof(K) == 8 || sizeof(K) == 16, "ordered_map keys are 8-byte or 16-byte trivially copyable types");
    using word = std::conditional_t<sizeof(K) == 8, std::uint64_t, index::key128>;
    static constexpr std::uint64_t flip = std::is_integral_v<K> && std::is_signed_v<K> ? std::uint64_t{1} << 63 : 0;
    static word to(const K& k) noexcept {
        if constexpr (sizeof(K) == 8) {
            return std::bit_cast<std::uint64_t>(k) ^ flip;
        } else if constexpr (std::is_same_v<K, index::key128>) {
            return k;
        } else if constexpr (std::is_same_v<K, key16>) {
            return index::key128{big_endian(k.bytes.data()), big_endian(k.bytes.data() + 8)};
        } else {
            const auto w = std::bit_cast<std::array<std::uint64_t, 2>>(k);
            return index::key128{w[0], w[1]};
        }
    }
    static K from(const word& w) noexcept {
        if constexpr (sizeof(K) == 8) {
            return std::bit_cast<K>(w ^ flip);
        } else if constexpr (std::is_same_v<K, index::key128>) {
            return w;
        } else if constexpr (std::is_same_v<K, key16>) {
            key16 k;
            for (unsigned i = 0; i < 8; ++i) {
                k.bytes[i] = static_cast<std::uint8_t>(w.hi >> (56 - 8 * i));
                k.bytes[8 + i] = static_cast<std::uint8_t>(w.lo >> (56 - 8 * i));
            }
            return k;
        } else {
            return std::bit_cast<K>(std::array<std::uint64_t, 2>{w.hi, w.lo});
        }
    }
    static std::uint64_t big_endian(const std::uint8_t* p) noexcept {
        std::uint64_t x = 0;
        for (unsigned i = 0; i < 8; ++i) x = (x << 8) | p[i];
        return x;
    }
};
}  // namespace containers::ordered_map_detail

template <class K, class V>
class ordered_map {
    static_assert((sizeof(K) == 8 || sizeof(K) == 16) && std::is_trivially_copyable_v<K>,
                  "ordered_map keys are 8-byte or 16-byte trivially copyable types (ferrite::key16 for byte strings)");
    static_assert(sizeof(V) == 8 && std::is_trivially_copyable_v<V>, "ordered_map values are 8-byte trivially copyable types");
    using codec = containers::ordered_map_detail::key_codec<K>;
    using word = typename codec::word;
    using tree_type = index::basic_durable_tree<word>;

public:
    using key_type = K;
    using mapped_type = V;
    using value_type = std::pair<K, V>;

    static ordered_map create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                              const ordered_map_options& o = {}) {
        return ordered_map(containers::ordered_map_detail::create_tree<word>(pool, heap, anchor, o));
    }
    static ordered_map open(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor,
                            const ordered_map_options& o = {}) {
        return ordered_map(containers::ordered_map_detail::open_tree<word>(pool, heap, anchor, o));
    }

    std::optional<V> get(const K& key) const {
        const auto v = t_->get(word_of(key));
        if (!v) return std::nullopt;
        return std::bit_cast<V>(*v);
    }
    bool contains(const K& key) const { return t_->get(word_of(key)).has_value(); }
    // true: inserted; false: the key was present and now maps to value.
    bool insert_or_assign(const K& key, const V& value) { return t_->insert_or_assign(word_of(key), std::bit_cast<std::uint64_t>(value)); }
    // true: inserted; false: present, unchanged.
    bool insert(const K& key, const V& value) { return t_->insert(word_of(key), std::bit_cast<std::uint64_t>(value)); }
    bool erase(const K& key) { return t_->erase(word_of(key)); }
    void put(const K& key, const V& value) { (void)insert_or_assign(key, value); }  // containers::durable_map's name

    // Appends the pairs of the keys >= from in order, at most `limit`; returns how many.
    std::size_t scan(const K& from, std::size_t limit, std::vector<value_type>& out) const {
        return scan(from, limit, [&](const K& k, const V& v) { out.emplace_back(k, v); });
    }

    // f(key, value) for the keys >= from in order, at most `limit`; returns how many.
    template <class F>
    std::size_t scan(const K& from, std::size_t limit, F&& f) const {
        return t_->scan(word_of(from), limit, [&](const word& k, std::uint64_t v) { f(key_of(k), std::bit_cast<V>(v)); });
    }
    // f(key, value) for the keys in [lo, hi) in order; returns how many.
    template <class F>
    std::size_t scan_range(const K& lo, const K& hi, F&& f) const {
        return t_->scan_range(word_of(lo), word_of(hi),
                              [&](const word& k, std::uint64_t v) { f(key_of(k), std::bit_cast<V>(v)); });
    }

    // Ends the current epoch and waits until it is durable (durable_tree::sync).
    std::uint64_t sync() { return t_->sync(); }
    tree_type& tree() noexcept { return *t_; }

private:
    explicit ordered_map(std::unique_ptr<tree_type> t) : t_(std::move(t)) {}

    static word word_of(const K& k) noexcept { return codec::to(k); }
    static K key_of(const word& w) noexcept { return codec::from(w); }

    std::unique_ptr<tree_type> t_;
};

}  // namespace ferrite
