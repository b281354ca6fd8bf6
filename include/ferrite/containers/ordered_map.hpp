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
// Keys and values: 8-byte trivially copyable types (static_assert). Keys are ordered as
// unsigned 64-bit integers of their bytes, except signed integers, which are ordered
// numerically (their sign bit is flipped on the way in and out).
// It meets containers::ordered_map (concepts.hpp) but for that contract's "durable when it
// returns": an update is durable at its epoch's end, or at the sync() after it.
// Guarantee: after a crash the map is as it was at the end of some completed epoch, at least
// the one the last returned sync() made durable. Every operation may run concurrently with
// any other; get, insert, insert_or_assign and erase are linearizable, scans are weakly
// consistent per leaf (index/tree.hpp).
// What it does not do yet: grow. The tree's node arena is the block create() allocates
// (options.nodes nodes of 320 bytes; a leaf holds up to 14 keys); a full arena throws
// ferrite::out_of_memory and leaves the map unchanged.
#pragma once

#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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

namespace containers::ordered_map_detail {
// src/containers/ordered_map_kind.cpp. create: allocates and formats the tree's block,
// then the anchor names it (the commit point). open: validates the block and the tree's
// header (damaged_pool, nothing written), then recovers.
std::unique_ptr<index::durable_tree> create_tree(const pmem::pool_ref& pool, alloc::buddy_heap& heap,
                                                 std::uint64_t& anchor, const ordered_map_options& o);
std::unique_ptr<index::durable_tree> open_tree(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                               std::uint64_t anchor, const ordered_map_options& o);
}  // namespace containers::ordered_map_detail

template <class K, class V>
class ordered_map {
    static_assert(sizeof(K) == 8 && std::is_trivially_copyable_v<K>, "ordered_map keys are 8-byte trivially copyable types");
    static_assert(sizeof(V) == 8 && std::is_trivially_copyable_v<V>, "ordered_map values are 8-byte trivially copyable types");

public:
    using key_type = K;
    using mapped_type = V;
    using value_type = std::pair<K, V>;

    static ordered_map create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                              const ordered_map_options& o = {}) {
        return ordered_map(containers::ordered_map_detail::create_tree(pool, heap, anchor, o));
    }
    static ordered_map open(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor,
                            const ordered_map_options& o = {}) {
        return ordered_map(containers::ordered_map_detail::open_tree(pool, heap, anchor, o));
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
        return t_->scan(word_of(from), limit, [&](std::uint64_t k, std::uint64_t v) { f(key_of(k), std::bit_cast<V>(v)); });
    }
    // f(key, value) for the keys in [lo, hi) in order; returns how many.
    template <class F>
    std::size_t scan_range(const K& lo, const K& hi, F&& f) const {
        return t_->scan_range(word_of(lo), word_of(hi),
                              [&](std::uint64_t k, std::uint64_t v) { f(key_of(k), std::bit_cast<V>(v)); });
    }

    // Ends the current epoch and waits until it is durable (durable_tree::sync).
    std::uint64_t sync() { return t_->sync(); }
    index::durable_tree& tree() noexcept { return *t_; }

private:
    explicit ordered_map(std::unique_ptr<index::durable_tree> t) : t_(std::move(t)) {}

    static constexpr std::uint64_t flip = std::is_integral_v<K> && std::is_signed_v<K> ? std::uint64_t{1} << 63 : 0;
    static std::uint64_t word_of(const K& k) noexcept { return std::bit_cast<std::uint64_t>(k) ^ flip; }
    static K key_of(std::uint64_t w) noexcept { return std::bit_cast<K>(w ^ flip); }

    std::unique_ptr<index::durable_tree> t_;
};

}  // namespace ferrite
