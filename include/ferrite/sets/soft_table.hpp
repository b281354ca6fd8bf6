// ferrite/sets/soft_table.hpp: a durable set or map on SOFT (Zuriel et al., OOPSLA 2019,
// L306-563), as an ordered list (set_layout::list) or a split-ordered hash table
// (set_layout::hash), with the table API shared with the link-free tables.
//
//   alloc::buddy_heap& heap = ...;  std::uint64_t anchor = 0;
//   auto t = sets::soft_table<std::uint64_t, std::uint64_t>::create(pool, heap, anchor, set_layout::hash);
//   (create persists the anchor word itself: node_store::create's commit point)
//   t.insert(1, 10); t.insert_or_assign(1, 11); t.get(1) == 11; t.erase(1);
//   ... crash ...
//   heap.recover(); soft_table<..>::recover(pool, heap, anchor); heap.finish_recovery();
//   auto t2 = soft_table<..>::open(pool, heap, anchor, set_layout::hash);   // O(n) rebuild
//
// Modules: soft_pnode.hpp (the persistent line and its member rule), soft_list.hpp (the
// lock-free algorithm, insert_or_assign and the crash-consistency argument),
// soft_recovery.hpp (validation and the O(n) rebuild), split_order.hpp (keys, hashing,
// buckets), node_store.hpp (durable areas), sync/epoch_domain.hpp (reclamation).
//
// Costs: insert, erase and insert_or_assign: one pfence when they change the set (plus
// what helping another thread's pending update costs), 1-3 pwb; contains and get: none.
//
// Crash consistency: the persistent state is the node store (header + areas) and nothing
// else; a PNode's line says whether it is a member. create() commits with the anchor
// (written back and fenced by node_store::create); recover() only confirms the store's
// pending areas; open() validates every slot
// before it writes anything and rebuilds the volatile list and buckets (soft_recovery.hpp).
// A close needs no write: open always rebuilds from the areas.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sets/soft_list.hpp"
#include "ferrite/sets/soft_recovery.hpp"
#include "ferrite/sets/split_order.hpp"

namespace ferrite::sets {

// P: soft::durable, or soft::no_persistence for the same table with every PNode step
// compiled out (soft_list.hpp; made with create_volatile only: the bench's volatile-hash).
template <class K, class V = no_value, class P = soft::durable>
class soft_table {
    using list_t = soft::list<K, V, P>;

public:
    struct options {
        unsigned recovery_threads = 0;          // open(): scan threads (0: hardware concurrency)
        std::uint32_t area_bytes = 64 * 1024;   // create(): durable area size (power of two >= 4 KiB)
        std::uint64_t growth_check_interval = 64;  // hash: inserts of a thread between load checks
        std::uint64_t load_factor = 1;             // hash: members per bucket before the count doubles
        std::uint64_t expected_size = 0;  // create, hash: start with the buckets this many members
                                          // grow to, every sentinel linked (0: one bucket)
    };
    using key_type = K;
    using mapped_type = V;
    static constexpr std::uint32_t algorithm_id = soft::algorithm_id;
    static_assert(check_payload<K, V>());

    static node_store_shape shape(set_layout l, std::uint32_t area_bytes) {
        node_store_shape s;
        s.algorithm = algorithm_id;
        s.layout = static_cast<std::uint32_t>(l);
        s.key_size = sizeof(K);
        s.value_size = static_cast<std::uint32_t>(soft::payload_io<K, V>::value_bytes);
        s.area_bytes = area_bytes;
        // blank_node: all zero = valid and deleted with polarity 0: not a member.
        return s;
    }

    // The persistence-off table (P = soft::no_persistence): no pool, nothing survives.
    static soft_table create_volatile(set_layout l, options o = {})
        requires(!P::persistent)
    {
        auto list = std::make_unique<list_t>(l, growth(o));
        soft::presize(*list, o.expected_size);
        return soft_table(std::move(list));
    }

    static soft_table create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                             set_layout l, options o = {}) {
        auto store = node_store::create(pool, heap, anchor, shape(l, o.area_bytes));
        auto list = std::make_unique<list_t>(std::move(store), l, growth(o));
        soft::presize(*list, o.expected_size);
        return soft_table(std::move(list));
    }

    // Validates the store and every PNode, then rebuilds (O(n)). Writes only after validation.
    static soft_table open(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor, set_layout l,
                           options o = {}) {
        const auto recorded = node_store::recorded_shape(pool, heap, anchor);
        auto store = node_store::open(pool, heap, anchor, shape(l, recorded.area_bytes));
        soft_table t(std::make_unique<list_t>(std::move(store), l, growth(o)));
        t.report_ = soft::rebuild(*t.list_, o.recovery_threads);
        return t;
    }

    // Read-only: the store and every PNode; returns the pool offsets of the heap blocks the
    // set owns. Throws damaged_pool (or pool_error(type_mismatch) for another algorithm).
    static std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                               std::uint64_t anchor) {
        auto blocks = node_store::validate(pool, heap, anchor);
        const auto s = node_store::recorded_shape(pool, heap, anchor);
        if (s.algorithm != algorithm_id || s.key_size != sizeof(K) ||
            s.value_size != soft::payload_io<K, V>::value_bytes)
            throw pool_error(pool_errc::type_mismatch,
                             "the durable set at anchor " + std::to_string(anchor) + " holds algorithm " +
                                 std::to_string(s.algorithm) + " with " + std::to_string(s.key_size) + "-byte keys and " +
                                 std::to_string(s.value_size) + "-byte values, not a SOFT set of this type");
        std::byte* base = pool.base();
        const std::uint64_t header = anchor;  // the header block's pool offset
        std::vector<std::uint64_t> areas;  // sorted pool offsets of the area blocks
        for (auto off : blocks)
            if (off != header) areas.push_back(off);
        std::sort(areas.begin(), areas.end());
        const std::uint64_t area_bytes = s.area_bytes;
        const soft::slot_locator locate = [&](std::uint64_t off) -> const soft::pnode* {
            auto it = std::upper_bound(areas.begin(), areas.end(), off);
            if (it == areas.begin()) return nullptr;
            const std::uint64_t a = *(it - 1);
            const std::uint64_t within = off - a;
            if (within < node_size || within >= area_bytes || within % node_size != 0) return nullptr;
            return reinterpret_cast<const soft::pnode*>(base + off);
        };
        for (auto a : areas)
            for (std::uint64_t off = a + node_size; off < a + area_bytes; off += node_size)
                soft::classify<K, V>(reinterpret_cast<const soft::pnode*>(base + off), off, locate);
        return blocks;
    }

    // Crash recovery of the store, between heap.recover() and heap.finish_recovery(). The
    // members are rebuilt by open().
    static void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor) {
        node_store::recover(pool, heap, anchor);
    }

    soft_table(soft_table&&) noexcept = default;
    soft_table& operator=(soft_table&&) noexcept = default;

    bool insert(const K& key, const V& value = {}) { return list_->insert(key, value); }
    bool erase(const K& key) { return list_->erase(key); }
    bool contains(const K& key) const { return list_->contains(key); }
    std::optional<V> get(const K& key) const { return list_->get(key); }
    bool insert_or_assign(const K& key, const V& value) { return list_->insert_or_assign(key, value); }
    std::size_t size() const noexcept { return list_->size(); }
    template <class F>
    void for_each(F&& f) const {
        list_->for_each(std::forward<F>(f));
    }
    // f(key, value) for every member in storage order, much faster than for_each on a large
    // table; only while no thread updates it (soft_recovery.hpp, for_each_member_at_rest).
    template <class F>
    void for_each_at_rest(F&& f) const
        requires P::persistent
    {
        soft::for_each_member_at_rest(*list_, std::forward<F>(f));
    }

    // What the last open() found (members, dead slots by kind, dropped duplicates).
    const soft::recovery_report& last_recovery() const noexcept { return report_; }
    std::uint64_t bucket_count() const noexcept { return list_->directory().bucket_count(); }
    const node_store& store() const noexcept { return list_->store(); }

private:
    explicit soft_table(std::unique_ptr<list_t> l) : list_(std::move(l)) {}
    static bucket_growth::growth growth(const options& o) {
        return {true, o.growth_check_interval, o.load_factor};
    }

    std::unique_ptr<list_t> list_;
    soft::recovery_report report_{};
};

}  // namespace ferrite::sets
