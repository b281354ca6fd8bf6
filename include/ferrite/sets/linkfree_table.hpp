// ferrite/sets/linkfree_table.hpp: the link-free durable set / map (ordered list or
// split-ordered hash set), its API, creation, validation and O(n) recovery.
//
// Paper: [SETS] (docs/references.md): the link-free list (section 3, L140-304,
// the algorithm in linkfree_list.hpp), the hash set as buckets of link-free lists (L140),
// durable areas and recovery (L298-304, L567-587).
//
//   auto t = linkfree_table<std::uint64_t>::create(pool, heap, anchor, set_layout::hash);
//   // `anchor` (a word in the pool) is the commit point; node_store::create persists it
//   t.insert(7); t.contains(7); t.erase(7);
//   // after a restart, between heap.recover() and heap.finish_recovery():
//   linkfree_table<std::uint64_t>::recover(pool, heap, anchor);
//   auto u = linkfree_table<std::uint64_t>::open(pool, heap, anchor, set_layout::hash);
//
// Layouts (sets/split_order.hpp): `list` is one sorted list behind a head sentinel
// (so_key 0; every node so_key 1, ordered by key bytes); `hash` is one split-ordered list
// whose volatile bucket directory grows by doubling (Shalev & Shavit), bucket sentinels
// being volatile nodes (never in the node store). Nothing of the directory is persistent.
//
// What differs from the paper:
//   * the hash set grows (split ordering) instead of a fixed bucket array;
//   * recovery is O(n) and parallel instead of one insertion from the head per member
//     (O(n^2) for one long list, [SETS] defect #3): the areas are scanned in parallel
//     (members = valid and unmarked, as (so-key, node) pairs), sorted by their place in
//     list order by a two-level counting sort on the recomputed so-keys (place_sort in
//     split_order.hpp), each place's few members sorted and checked for duplicate keys by
//     ranges of places on the recovery threads (the list layout: one bucket, an O(n log n)
//     sort); after the dead-slot pass, the same ranges link sentinels (one block, not one
//     new each) and members without a traversal, prefetching the members ahead (they are
//     lines anywhere in the areas), and the ranges are stitched;
//   * nothing read from the media is trusted (below);
//   * no insert_or_assign. Replacing a present node X of the key by a new node Y in one
//     durable step (one fence) means that a crash may leave Y's line durable and X's not,
//     or the reverse, so neither line alone can say which one is the member:
//       - X cannot be marked deleted in the linking CAS: X.next lives in X's line, may
//         reach the media by eviction before Y is valid there, and then neither is a
//         member (the value is lost);
//       - so X needs a second mark ("replaced": a member unless a durable Y names it) and
//         Y a persistent record naming X, checked at recovery. That record must name X's
//         incarnation, not only its slot: once X is unlinked and its slot reused for the
//         same key (after Y was erased), Y's stale record would kill the new node while the
//         upsert replacing it is not yet durable. Slot offset + incarnation take 12 bytes
//         the line does not have beside a 40-byte payload (24 bytes are v1, v2, the flags,
//         next and the so-key), and the remover would have to mark X durably before its
//         slot is reclaimed.
//     That is the SOFT map's design (sets/soft_*: superseded_by + polarity), not this one;
//     the link-free map offers insert (absent only), erase, get and contains.
//
// Crash consistency: the list's argument (linkfree_list.hpp) for every operation; the node
// store's for areas (node_store.hpp). create() is the node store's (its header, then the
// anchor, written back and fenced: the commit point). open() issues no persistence
// instruction: every member it finds is durable already (it read it from the media), and
// what it writes to lines (links, so-keys, flags, dead nodes made "valid and deleted") is
// volatile state whose loss leaves the same membership: a dead node normalised or not is
// not a member, and its next user's first store (flipping v1) reaches the media only after
// the normalising stores of the same line. So open() is restartable and needs no flush;
// the persistent part of recovery is the node store's (recover()).
//
// Validation (never trust the media): open() validates the store (header, areas, shape
// against K, V, layout and the algorithm) and then every slot before writing anything:
// validity bits must be 0 or 1, and no two members may hold the same key (a crash cannot
// make that: an insert passes a node of its key only after the deletion was written back);
// failures throw damaged_pool naming the area offset. Keys and values are plain bytes; the
// next word's pointer bits and the so-key are never read (recomputed from the key).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sets/linkfree_list.hpp"
#include "ferrite/sets/linkfree_node.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sets/split_order.hpp"
#include "ferrite/sync/epoch_domain.hpp"

namespace ferrite::sets {

template <class K, class V = no_value>
class linkfree_table {
    using list = linkfree_list<K, V>;
    using node = typename list::node;

public:
    using key_type = K;
    using mapped_type = V;
    static constexpr std::uint32_t algorithm_id = 1;

    struct options {
        unsigned recovery_threads = 0;          // 0: hardware concurrency
        std::uint32_t area_bytes = 64 * 1024;   // create: node store areas (power of two, >= 4 KiB)
        std::uint64_t growth_check_interval = 64;  // hash: inserts of a stripe between load checks
        std::uint64_t expected_size = 0;  // create, hash: start with the buckets this many keys
                                          // grow to, every sentinel linked (0: one bucket)
    };

    static node_store_shape shape_for(set_layout l, const options& o) {
        node_store_shape s;
        s.algorithm = algorithm_id;
        s.layout = static_cast<std::uint32_t>(l);
        s.key_size = sizeof(K);
        s.value_size = std::is_empty_v<V> ? 0 : sizeof(V);
        s.area_bytes = o.area_bytes;
        s.blank_node = linkfree_blank_line();
        return s;
    }

    static linkfree_table create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                                 set_layout l, options o = {}) {
        require_layout(l);
        auto store = node_store::create(pool, heap, anchor, shape_for(l, o));
        auto s = std::make_unique<state>(pool, std::move(store), l, o);
        if (l == set_layout::hash) presize(*s, o.expected_size);
        return linkfree_table(std::move(s));
    }

    // Validates the store and every node, then rebuilds the volatile list in O(n).
    static linkfree_table open(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor,
                               set_layout l, options o = {}) {
        require_layout(l);
        // The area size is the creator's choice, not part of the type: take the recorded one.
        o.area_bytes = node_store::recorded_shape(pool, heap, anchor).area_bytes;
        auto store = node_store::open(pool, heap, anchor, shape_for(l, o));
        auto s = std::make_unique<state>(pool, std::move(store), l, o);
        rebuild(*s, o.recovery_threads);
        return linkfree_table(std::move(s));
    }

    // Read-only: the store's blocks, after checking that it holds a link-free set of K, V
    // and that every node passes open()'s checks (validity bits, no key twice).
    static std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                               std::uint64_t anchor) {
        auto owned = node_store::validate(pool, heap, anchor);
        const auto shape = node_store::recorded_shape(pool, heap, anchor);
        if (shape.algorithm != algorithm_id || shape.key_size != sizeof(K) ||
            shape.value_size != (std::is_empty_v<V> ? 0 : sizeof(V)) ||
            (shape.layout != static_cast<std::uint32_t>(set_layout::list) &&
             shape.layout != static_cast<std::uint32_t>(set_layout::hash)))
            throw pool_error(pool_errc::type_mismatch,
                             "the durable set at pool offset " + std::to_string(anchor) +
                                 " is not a link-free set of this key and value size");
        // The blocks are the header (at the anchor) and whole areas inside the pool
        // (node_store::validate checked them): line 0 is the area's header, then the slots.
        const auto l = static_cast<set_layout>(shape.layout);
        std::vector<slot_ref> members;
        for (const std::uint64_t off : owned) {
            if (off == anchor) continue;
            auto* first = node::from(reinterpret_cast<node_line*>(pool.base() + off) + 1);
            const std::size_t count = shape.area_bytes / node_size - 1;
            for (std::size_t i = 0; i < count; ++i) {
                node* n = first + i;
                check_bits(n, off, i);
                if (member(n)) members.push_back({so_key_of(n->key, l), n});
            }
        }
        std::sort(members.begin(), members.end(), slot_less);
        for (std::size_t i = 0; i + 1 < members.size(); ++i)
            if (same_key(members[i], members[i + 1]))
                duplicate(pool.base(), members[i].n, members[i + 1].n);
        return owned;
    }

    // Persistent recovery, between heap.recover() and heap.finish_recovery(): the node
    // store's (areas whose growth committed are confirmed). Restartable.
    static void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor) {
        node_store::recover(pool, heap, anchor);
    }

    linkfree_table(linkfree_table&&) noexcept = default;
    linkfree_table& operator=(linkfree_table&&) noexcept = default;
    ~linkfree_table() = default;

    bool insert(const K& key, const V& value = {}) {
        auto& s = *state_;
        auto pinned = s.domain.pin();
        const auto sk = make_search_key(key, s.lay);
        const bool done = list::insert(s.env(), s.start_for(sk), sk.so_key, key, value);
        if (done) s.dir.count(+1);
        return done;
    }

    bool erase(const K& key) {
        auto& s = *state_;
        auto pinned = s.domain.pin();
        const auto sk = make_search_key(key, s.lay);
        const bool done = list::remove(s.env(), s.start_for(sk), sk.so_key, key);
        if (done) s.dir.count(-1);
        return done;
    }

    bool contains(const K& key) const {
        auto& s = *state_;
        auto pinned = s.domain.pin();
        const auto sk = make_search_key(key, s.lay);
        return list::contains(s.start_for(sk), sk.so_key, key);
    }

    std::optional<V> get(const K& key) const {
        auto& s = *state_;
        auto pinned = s.domain.pin();
        const auto sk = make_search_key(key, s.lay);
        V v{};
        if (!list::contains(s.start_for(sk), sk.so_key, key, &v)) return std::nullopt;
        return v;
    }

    std::size_t size() const noexcept { return state_->dir.size(); }

    // f(key, value) for every unmarked node, in list order; weakly consistent.
    template <class F>
    void for_each(F&& f) const {
        auto& s = *state_;
        auto pinned = s.domain.pin();
        for (node* n = list::ptr(s.head->load_next()); n != nullptr; n = list::ptr(n->load_next()))
            if (!is_sentinel_so_key(n->so_key) && !n->marked())
                f(static_cast<const K&>(n->key), static_cast<const V&>(n->value));
    }

    set_layout table_layout() const noexcept { return state_->lay; }
    // Hash layout: the current bucket count (1 for the list layout).
    std::uint64_t bucket_count() const noexcept { return state_->dir.bucket_count(); }

private:
    struct state {
        pmem::pool_ref pool;
        node_store store;             // before domain: reclaim functions free into it
        sync::epoch_domain domain;
        set_layout lay;
        node* head;                   // list head / bucket 0's sentinel (so_key 0)
        bucket_directory<node> dir;
        std::unique_ptr<node[]> sentinels;  // recovery's sentinels (one block), or none
        std::uint64_t sentinel_count = 0;

        state(const pmem::pool_ref& p, node_store&& st, set_layout l, const options& o)
            : pool(p), store(std::move(st)), lay(l), head(list::new_sentinel(0)), dir(head, growth_of(l, o)) {}
        state(const state&) = delete;
        state& operator=(const state&) = delete;
        ~state() {
            domain.reclaim_all();
            // Sentinels are the only volatile nodes of the list, and every one is in the
            // directory (a linked sentinel is in its slot before its initialiser returns);
            // those of recovery's block go with the block.
            for (std::uint64_t b = 1, n = dir.bucket_count(); b < n; ++b) {
                node* x = dir.sentinel_if_initialised(b);
                if (x != nullptr && !in_sentinel_block(x)) delete x;
            }
            delete head;
        }
        // Recovery: `count` sentinels in one allocation instead of one new each (zeroed as
        // list::new_sentinel makes them; so_key set when linked).
        void make_sentinel_block(std::uint64_t count) {
            if (count == 0) return;
            sentinels.reset(new node[count]);
            std::memset(static_cast<void*>(sentinels.get()), 0, count * sizeof(node));
            sentinel_count = count;
        }
        bool in_sentinel_block(const node* x) const noexcept {
            const auto at = reinterpret_cast<std::uintptr_t>(x);
            const auto first = reinterpret_cast<std::uintptr_t>(sentinels.get());
            return sentinels && at >= first && at < first + sentinel_count * sizeof(node);
        }

        static typename bucket_directory<node>::growth growth_of(set_layout l, const options& o) {
            typename bucket_directory<node>::growth g;
            g.enabled = l == set_layout::hash;
            g.check_interval = o.growth_check_interval;
            return g;
        }
        typename list::env env() noexcept { return {&store, &domain}; }
        node* start_for(const search_key<K>& sk) {
            if (lay == set_layout::list) return head;
            return dir.start_for(sk.hash, [this](node* start, std::uint64_t so) {
                return list::insert_sentinel(env(), start, so);
            });
        }
    };

    explicit linkfree_table(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}

    static void require_layout(set_layout l) {
        if (l != set_layout::list && l != set_layout::hash)
            throw usage_error("linkfree_table: layout must be set_layout::list or set_layout::hash");
    }

    static bool member(node* n) noexcept { return n->v1 == n->v2 && (n->next & linkfree_mark) == 0; }

    static std::uint64_t so_key_of(const K& key, set_layout l) noexcept { return make_search_key(key, l).so_key; }

    struct slot_ref {
        std::uint64_t so;
        node* n;
    };
    static bool slot_less(const slot_ref& x, const slot_ref& y) noexcept {
        if (x.so != y.so) return x.so < y.so;
        return std::memcmp(&x.n->key, &y.n->key, sizeof(K)) < 0;
    }
    static bool same_key(const slot_ref& x, const slot_ref& y) noexcept {
        return x.so == y.so && std::memcmp(&x.n->key, &y.n->key, sizeof(K)) == 0;
    }

    // Validity bits are 0 or 1 on the media (flipV1 and makeValid write nothing else).
    static void check_bits(node* n, std::uint64_t area_offset, std::size_t index) {
        check_validity_bits(n->v1, n->v2, area_offset, index);
    }
    [[noreturn]] static void duplicate(const std::byte* base, node* a, node* b) {
        duplicate_members(static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(a) - base),
                          static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(b) - base));
    }

    // Recovery (see the header): read-only validation and collection, then the writes.
    static void rebuild(state& s, unsigned threads) {
        std::mutex m;
        std::vector<slot_ref> members;
        // 1. Read only: classify every slot, validate its bits, collect the members.
        s.store.scan_parallel(threads, [&](const area_view& a) {
            std::vector<slot_ref> mine;
            mine.reserve(a.count);
            for (std::size_t i = 0; i < a.count; ++i) {
                node* n = node::from(a.first + i);
                check_bits(n, s.store.pool_offset_of(a.first) - node_size, i);
                if (member(n)) mine.push_back({so_key_of(n->key, s.lay), n});
            }
            std::lock_guard g(m);
            members.insert(members.end(), mine.begin(), mine.end());
        });
        // 2. Still read only: sort by list place (split_order.hpp, place_sort), sort each
        // place's few members, no duplicate keys. Partitions split over the threads.
        const std::uint64_t buckets = s.lay == set_layout::hash ? recovered_bucket_count(members.size()) : 1;
        const auto so_of = [](const slot_ref& r) { return r.so; };
        place_sort<slot_ref, decltype(so_of)> ps(members, buckets, so_of);
        const std::size_t count = members.size();
        std::vector<slot_ref>().swap(members);
        std::vector<slot_ref>& sorted = ps.sorted();
        const unsigned chunks = recovery_chunks(threads, buckets, ps.parts());
        for_each_range(chunks, ps.parts(), [&](unsigned, std::uint64_t p0, std::uint64_t p1) {
            for (std::uint64_t p = p0; p < p1; ++p) {
                ps.sort_partition(p);
                for (std::uint64_t i = ps.first_place(p); i < ps.first_place(p + 1); ++i) {
                    const auto first = sorted.begin() + static_cast<std::ptrdiff_t>(ps.begin(i));
                    const auto last = sorted.begin() + static_cast<std::ptrdiff_t>(ps.end(i));
                    if (last - first > 1) std::sort(first, last, slot_less);
                    for (auto it = first; it != last && it + 1 != last; ++it)
                        if (same_key(*it, *(it + 1))) duplicate(s.pool.base(), it->n, (it + 1)->n);
                }
            }
        });
        // 3. Writes (volatile state only): dead nodes to the free state and the free lists,
        // members' flags (their state is durable: it was read from the media).
        s.store.scan_parallel(threads, [&](const area_view& a) {
            std::vector<node_line*> dead;
            for (std::size_t i = 0; i < a.count; ++i) {
                node* n = node::from(a.first + i);
                if (member(n)) {
                    n->insert_flushed = 1;
                    n->delete_flushed = 0;
                } else {
                    n->normalise();
                    dead.push_back(n->line());
                }
            }
            s.store.add_free(dead);
        });
        // 4. Sentinels and members linked in split order (link_in_split_order).
        link_in_split_order(s, ps, buckets, count, chunks);
    }

    // create's presizing (empty table, volatile state only: nothing persistent changes): the
    // bucket count `expected` keys would grow the table to, each bucket's sentinel linked at
    // once, so the first operations on a table that is filled to its expected size do not
    // pay the lazy initialisation of every bucket the growth left blank.
    static void presize(state& s, std::uint64_t expected) {
        const std::uint64_t buckets = recovered_bucket_count(expected);  // 1 for 0 or 1 key
        if (buckets <= 1) return;
        const std::vector<slot_ref> none;
        const auto so_of = [](const slot_ref& r) { return r.so; };
        place_sort<slot_ref, decltype(so_of)> ps(none, buckets, so_of);
        for (std::uint64_t p = 0; p < ps.parts(); ++p) ps.sort_partition(p);
        link_in_split_order(s, ps, buckets, 0, 1);
    }

    // Links one sentinel per bucket (one block: place i takes sentinel i - 1) and ps's
    // sorted members in split order, and resets the directory to `buckets` buckets holding
    // `count` members: each thread links a range of partitions (prefetching the members a
    // few places ahead: they sit anywhere in the areas), then the ranges are stitched.
    // Quiescent only: recovery, or create's presizing (no members).
    template <class PlaceSort>
    static void link_in_split_order(state& s, PlaceSort& ps, std::uint64_t buckets, std::size_t count, unsigned chunks) {
        std::vector<slot_ref>& sorted = ps.sorted();
        s.dir.reset(buckets, static_cast<std::int64_t>(count));
        s.make_sentinel_block(buckets - 1);
        struct piece {
            node* first = nullptr;
            node* last = nullptr;
        };
        std::vector<piece> pieces(chunks);
        constexpr std::uint64_t ahead = 8;
        for_each_range(chunks, ps.parts(), [&](unsigned c, std::uint64_t p0, std::uint64_t p1) {
            const std::uint64_t i0 = ps.first_place(p0), i1 = ps.first_place(p1);
            node* tail = nullptr;
            const auto link = [&](node* to) {
                if (tail == nullptr)
                    pieces[c].first = to;
                else
                    tail->next = reinterpret_cast<std::uintptr_t>(to);
                tail = to;
            };
            for (std::uint64_t i = i0; i < i1; ++i) {
                if (i + ahead < i1)
                    for (std::size_t k = ps.begin(i + ahead); k < ps.end(i + ahead); ++k)
                        __builtin_prefetch(sorted[k].n, 1);
                const std::uint64_t b = bucket_in_list_order(i, buckets);
                if (b != 0) {
                    node* sentinel = s.sentinels.get() + (i - 1);
                    sentinel->so_key = sentinel_so_key(b);
                    link(sentinel);
                    s.dir.set_sentinel(b, sentinel);
                } else {
                    link(s.head);
                }
                for (std::size_t j = ps.begin(i); j < ps.end(i); ++j) {
                    sorted[j].n->so_key = sorted[j].so;
                    link(sorted[j].n);
                }
            }
            pieces[c].last = tail;
        });
        for (unsigned c = 0; c < chunks; ++c)
            pieces[c].last->next = c + 1 < chunks ? reinterpret_cast<std::uintptr_t>(pieces[c + 1].first) : 0;
    }

    std::unique_ptr<state> state_;
};

}  // namespace ferrite::sets
