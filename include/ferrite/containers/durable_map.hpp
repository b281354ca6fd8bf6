// ferrite/containers/durable_map.hpp: ferrite::durable_map<K, V> and ferrite::durable_set<K>,
// lock-free durable hash maps and sets (and ordered lists) that persist no links.
//
//   auto store = ferrite::store::open_or_create("users", "users-v1", {.size = 256 << 20});
//   auto ages = store.names().open_map<std::uint64_t, std::uint32_t>("ages");  // SOFT hash map
//   ages->insert(42, 31);                   // durable when it returns (one pfence)
//   ages->insert_or_assign(42, 32);         // replace: one durable step, one pfence
//   if (auto a = ages->get(42)) ...;        // no persistence instruction
//   ages->erase(42);
//   auto seen = store.names().open_set<std::array<char, 16>, ferrite::use_link_free>("seen");
//
// Algorithms (docs/sets.md; paper: Zuriel, Friedman, Sheffi, Cohen, Petrank, "Efficient
// lock-free durable sets", OOPSLA 2019): `use_soft` (SOFT, the default: zero persistence
// instructions per read, one pfence per successful update) or `use_link_free` (link-free:
// one pfence per successful update, at most one per contains). Both keep every node in
// durable areas of the pool's heap (sets/node_store.hpp) and rebuild the volatile index
// (split-ordered buckets, sets/split_order.hpp) from them at every open, in parallel and in
// O(n). The table grows without a stop-the-world rehash: no bucket is ever persisted.
//
// Keys and values: any trivially copyable types with sizeof(K) + sizeof(V) <= 40 bytes
// (one 64-byte node line with the flags). Keys are equal when their bytes are equal, so a
// key type must not have padding bytes (has_unique_object_representations).
// Iteration (for_each) is a weakly consistent scan: it sees every key present throughout
// the scan, and any subset of the keys inserted or erased meanwhile; size() is approximate
// while threads update.
//
// What differs from the paper and the crash-consistency argument are the tables' own
// (sets/soft_table.hpp, sets/linkfree_table.hpp); this header only chooses one and gives
// it the std-like names. Catalog kinds (object_kinds.hpp): 8 "durable_set", 9 "durable_map";
// the algorithm and layout are recorded in the set's header and checked at every open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sets/linkfree_table.hpp"
#include "ferrite/sets/soft_table.hpp"

namespace ferrite {

// Algorithm selectors (like containers::use_pfc / use_fpfc for the vectors).
struct use_soft {};
struct use_link_free {};

namespace sets {
template <class Algorithm, class K, class V>
struct table_for;
template <class K, class V>
struct table_for<use_soft, K, V> {
    using type = soft_table<K, V>;
};
template <class K, class V>
struct table_for<use_link_free, K, V> {
    using type = linkfree_table<K, V>;
};
template <class Algorithm, class K, class V>
using table_for_t = typename table_for<Algorithm, K, V>::type;
}  // namespace sets

struct durable_set_options {
    sets::set_layout layout = sets::set_layout::hash;  // list: one sorted list (the paper's list; small sets)
    unsigned recovery_threads = 0;             // threads that rebuild the index at open (0: all cores)
    std::uint32_t area_bytes = 0;  // create: bytes per durable area, a power of two from 4 KiB to the heap's
                                   // largest block (0: 64 KiB); open uses the recorded size
    std::uint64_t expected_size = 0;  // create, hash layout: start with the buckets this many keys
                                      // grow to, all ready (like unordered_map::reserve; 0: one
                                      // bucket, grown as keys arrive); open sizes from the keys found
};

// The shared body of durable_map and durable_set: a table of one algorithm, opened the
// ferrite way (create fills in the anchor as its commit point, open validates first).
template <class K, class V, class Algorithm>
class durable_table_handle {
public:
    using key_type = K;
    using table_type = sets::table_for_t<Algorithm, K, V>;

    static_assert(std::has_unique_object_representations_v<K>,
                  "durable sets compare keys as bytes: a key type must have no padding bytes "
                  "(and no floating-point members, whose equal values can differ in bytes)");

    std::size_t size() const noexcept { return table_.size(); }
    bool contains(const K& key) const {
        require_open();
        return table_.contains(key);
    }
    bool erase(const K& key) {
        require_open();
        return table_.erase(key);
    }
    table_type& table() noexcept { return table_; }

protected:
    durable_table_handle(const pmem::pool_ref& pool, table_type t) : pool_(pool), table_(std::move(t)) {}
    // A handle kept past its pool's close: usage_error, not a read of the unmapped nodes.
    void require_open() const { pool_.require_open("ferrite::durable_map / durable_set"); }
    static typename table_type::options table_options(const durable_set_options& o) {
        typename table_type::options t{};
        t.recovery_threads = o.recovery_threads;
        if (o.area_bytes != 0) t.area_bytes = o.area_bytes;
        t.expected_size = o.expected_size;
        return t;
    }
    pmem::pool_ref pool_;
    table_type table_;
};

template <class K, class V, class Algorithm = use_soft>
class durable_map : public durable_table_handle<K, V, Algorithm> {
    using base = durable_table_handle<K, V, Algorithm>;

public:
    using mapped_type = V;
    using value_type = std::pair<K, V>;  // the catalog's element type
    using table_type = typename base::table_type;

    static durable_map create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                              durable_set_options o = {}) {
        return durable_map(pool, table_type::create(pool, heap, anchor, o.layout, base::table_options(o)));
    }
    static durable_map open(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor,
                            durable_set_options o = {}) {
        return durable_map(pool, table_type::open(pool, heap, anchor, o.layout, base::table_options(o)));
    }

    // false: the key was present (nothing changed).
    bool insert(const K& key, const V& value) {
        this->require_open();
        return this->table_.insert(key, value);
    }
    // Inserts or replaces, atomically and durably (one step). true: inserted, false: assigned.
    bool insert_or_assign(const K& key, const V& value)
        requires requires(table_type& t) { t.insert_or_assign(key, value); }
    {
        this->require_open();
        return this->table_.insert_or_assign(key, value);
    }
    // The durable_map concept's name for insert_or_assign.
    void put(const K& key, const V& value)
        requires requires(table_type& t) { t.insert_or_assign(key, value); }
    {
        (void)insert_or_assign(key, value);
    }
    std::optional<V> get(const K& key) const {
        this->require_open();
        return this->table_.get(key);
    }
    std::optional<V> find(const K& key) const { return get(key); }
    // f(const K&, const V&) for every key: a weakly consistent scan.
    template <class F>
    void for_each(F&& f) const {
        this->require_open();
        this->table_.for_each(std::forward<F>(f));
    }
    // f(const K&, const V&) for every key in storage order: several times faster than
    // for_each on a large map, but only while no thread updates it (SOFT only; e.g. to load
    // a map's contents right after open).
    template <class F>
    void for_each_at_rest(F&& f) const
        requires requires(const table_type& t) { t.for_each_at_rest(f); }
    {
        this->require_open();
        this->table_.for_each_at_rest(std::forward<F>(f));
    }

private:
    durable_map(const pmem::pool_ref& pool, table_type t) : base(pool, std::move(t)) {}
};

template <class K, class Algorithm = use_soft>
class durable_set : public durable_table_handle<K, sets::no_value, Algorithm> {
    using base = durable_table_handle<K, sets::no_value, Algorithm>;

public:
    using value_type = K;  // the catalog's element type
    using table_type = typename base::table_type;

    static durable_set create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                              durable_set_options o = {}) {
        return durable_set(pool, table_type::create(pool, heap, anchor, o.layout, base::table_options(o)));
    }
    static durable_set open(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor,
                            durable_set_options o = {}) {
        return durable_set(pool, table_type::open(pool, heap, anchor, o.layout, base::table_options(o)));
    }

    bool insert(const K& key) {
        this->require_open();
        return this->table_.insert(key, sets::no_value{});
    }
    // f(const K&) for every key: a weakly consistent scan.
    template <class F>
    void for_each(F&& f) const {
        this->require_open();
        this->table_.for_each([&](const K& k, const sets::no_value&) { f(k); });
    }

private:
    durable_set(const pmem::pool_ref& pool, table_type t) : base(pool, std::move(t)) {}
};

}  // namespace ferrite
