// ferrite/sets/soft_recovery.hpp: validating SOFT's PNodes and rebuilding the volatile list
// from them in O(n) (paper: durable sets, Zuriel et al., OOPSLA 2019, SOFT recovery L540-563).
//
// The paper re-inserts every member from the head, one by one: O(n^2) for one list. Here:
//   1. scan (read only, in parallel over the areas: node_store::scan_parallel): every slot
//      is validated (flags 0/1; a set superseded flag names a node slot of this store, by
//      node_store::node_at) and classified: member, free (valid and deleted), invalid,
//      superseded (valid, not deleted, its superseded_by target complete; node_at, a hash
//      lookup, only for slots whose superseded flag is set). Members get their volatile
//      node (so_key recomputed from the key: never read from the media), all of an area's
//      from one block (list::node_block: one allocation per area instead of one per
//      member; the list owns the blocks until it dies, and a block node that is reclaimed
//      later goes to its thread's spare list for the next insert instead of delete).
//      A damaged slot throws damaged_pool before anything is written.
//   2. rebuild (split_order.hpp, rebuild_split_ordered): bucket count for n at the table's
//      load factor, the members sorted by bucket in two cache-friendly counting passes
//      (place_sort), each bucket's sentinel its directory slot (inline_directory; a next word
//      naming a sentinel carries the sentinel tag, soft_list.hpp), each bucket's few members
//      sorted and linked, in bucket order (the directory written in address order), ranges
//      of buckets split over the recovery threads: O(n) for the hash layout; the list layout
//      is one bucket, so one O(n log n) sort by key bytes. Two members at one position are the
//      trace of an interrupted upsert whose new PNode completed before the old one was
//      marked superseded (soft_list.hpp, "replace"): one is kept, the other dropped.
//   3. writes: invalid PNodes normalised to "valid and deleted" (no write-back: the next
//      create stores to the same line after this); superseded PNodes and dropped duplicates
//      durably deleted (pwb each, ONE pfence for all) before any slot goes back to the free
//      lists, because a superseded PNode whose target slot is reused with flipped polarity
//      would read as a member again. Then every dead slot goes to the free lists.
// Restartable: every write is idempotent and a crash in step 3 leaves a state that step 1
// classifies the same way (a duplicate may be resolved the other way the next time, which
// is allowed: the upsert it comes from had not returned, and recovery had not finished).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sets/soft_list.hpp"

namespace ferrite::sets::soft {

// Recovery only (quiescent): a dead PNode made "valid and deleted" in its current polarity.
// Invalid ones need no write-back (the next create stores to the same line after this);
// valid, not deleted ones (superseded) must be durably deleted before their target can be
// freed and reused, so they are written back (the caller fences once).
inline bool normalise_dead(pnode* p) noexcept {
    const auto f = read_flags(p);
    if (!f.valid()) {
        detail::store8(p->valid_end, f.valid_start);
        detail::store8(p->deleted, f.valid_start);
        return false;
    }
    if (f.deleted != f.valid_start) {
        detail::store8(p->deleted, f.valid_start);
        pmem::pwb(p);  // durable at recovery's fence, before any slot is reused
        return true;
    }
    return false;
}

enum class verdict { member, free, invalid, superseded };

// Finds a node slot by pool offset (nullptr: not a slot of this set).
using slot_locator = std::function<const pnode*(std::uint64_t pool_offset)>;

// The store's slots as PNodes (node_store::node_at: nullptr for an offset that is no slot).
inline slot_locator locator_of(const node_store& store) {
    return [&store](std::uint64_t off) -> const pnode* { return reinterpret_cast<const pnode*>(store.node_at(off)); };
}

// Validates one slot and says what it is. `at` is its pool offset (for messages).
template <class K, class V>
verdict classify(const pnode* p, std::uint64_t at, const slot_locator& locate) {
    const auto f = read_flags(p);
    const pnode* target = nullptr;
    checked_supersede_target(f, at, [&](std::uint64_t off) { return (target = locate(off)) != nullptr; });
    if (!f.valid()) return verdict::invalid;
    if (f.deleted == f.valid_start) return verdict::free;
    if (target != nullptr) {
        const auto t = read_flags(target);
        const std::uint8_t polarity = static_cast<std::uint8_t>(f.superseded_by & 1);
        if (t.valid_start == polarity && t.valid_end == polarity &&
            payload_io<K, V>::same_key(target, payload_io<K, V>::key(p)))
            return verdict::superseded;
    }
    return verdict::member;
}

// f(key, value) for every member, read from the durable areas in address order: no pointer
// is chased, so at a million keys it runs several times faster than list::for_each, whose
// nodes lie in hash order all over memory. Only while no update runs (after open, in a
// single-threaded tool): an upsert in flight has two complete PNodes for a moment, which
// classify reads as two members. At rest the PNodes say exactly what the list holds:
// open's rebuild deleted the superseded and duplicate ones, and each later update
// finished its durable step before it returned.
template <class K, class V, class F>
void for_each_member_at_rest(const list<K, V>& l, F&& f) {
    using io = payload_io<K, V>;
    const node_store& store = l.store();
    const slot_locator locate = locator_of(store);
    for (const area_view& a : store.areas()) {
        for (std::size_t i = 0; i < a.count; ++i) {
            const pnode* p = as_pnode(a.first + i);
            if (classify<K, V>(p, store.pool_offset_of(a.first + i), locate) == verdict::member)
                f(static_cast<const K&>(io::key(p)), static_cast<const V&>(io::value(p)));
        }
    }
}

// rebuild_split_ordered's policy for a SOFT list (split_order.hpp): bucket b's sentinel is
// its directory slot; duplicates (an interrupted upsert's two complete PNodes) are collected
// for the caller to delete.
template <class K, class V, class P = durable>
struct rebuild_policy {
    using node_t = node<K, V>;
    using link_t = soft::link;
    typename list<K, V, P>::directory_t& dir;  // bucket b's sentinel is its slot
    std::mutex dropped_mutex{};
    std::vector<node_t*> dropped{};
    bool less(const link_t* a, const link_t* b) const {
        if (a->so_key != b->so_key) return a->so_key < b->so_key;
        return compare_keys(static_cast<const node_t*>(a)->key, static_cast<const node_t*>(b)->key) < 0;
    }
    link_t* sentinel(std::uint64_t b) { return &dir.at(b); }  // the address only
    void init_sentinel(link_t* s, std::uint64_t so) { s->so_key = so; }
    // The tag from the caller: reading to's so-key would race with its initialiser.
    void link(link_t* from, link_t* to, bool to_sentinel) {
        const std::uintptr_t w = reinterpret_cast<std::uintptr_t>(to) | (to_sentinel ? sentinel_tag : 0) | inserted;
        from->next.store(w, std::memory_order_relaxed);
    }
    void drop_duplicate(link_t*, link_t* gone) {
        std::lock_guard g(dropped_mutex);
        dropped.push_back(static_cast<node_t*>(gone));
    }
};

// create's presizing (an empty list, before any thread uses it; volatile state only): the
// bucket count for `expected` members at the list's load factor, every bucket's sentinel
// linked in one pass, as recovery leaves a table of that size. A table filled to its expected
// size then starts with no blank bucket whose first access must link its sentinel (the lazy
// initialisation costs a search from the parent bucket: 1.6x the throughput of a table
// filled from one bucket on the next 200,000 operations at 1M keys, docs/results.md).
template <class K, class V, class P>
void presize(list<K, V, P>& l, std::uint64_t expected) {
    if (l.layout() != set_layout::hash) return;
    auto& dir = l.directory();
    const std::uint64_t buckets = recovered_bucket_count(expected, dir.load_factor());  // 1 for 0 keys
    if (buckets <= 1) return;
    rebuild_policy<K, V, P> pol{dir};
    const std::vector<hashed_member<soft::link>> none;
    rebuild_split_ordered(dir, l.head(), none, buckets, pol, 1);
}

// What one recovery found: counts for tests and `pool info`.
struct recovery_report {
    std::size_t members = 0, free = 0, invalid = 0, superseded = 0, duplicates = 0;
};

template <class K, class V>
FERRITE_FLOW_ROOT recovery_report rebuild(list<K, V>& l, unsigned threads) {
    using node_t = node<K, V>;
    using link_t = link;
    using io = payload_io<K, V>;
    node_store& store = l.store();
    const slot_locator locate = locator_of(store);
    struct part {
        std::vector<hashed_member<link_t>> members;
        std::vector<pnode*> dead_superseded;
        std::vector<pnode*> invalid;
        std::vector<node_line*> dead;
    };
    std::mutex m;
    std::vector<part> parts;
    const bool hashed = l.layout() == set_layout::hash;
    store.scan_parallel(threads, [&](const area_view& a) {
        part local;
        std::vector<pnode*> found;
        found.reserve(a.count);
        for (std::size_t i = 0; i < a.count; ++i) {
            auto* p = as_pnode(a.first + i);
            const auto v = classify<K, V>(p, store.pool_offset_of(a.first + i), locate);
            if (v == verdict::member) {
                found.push_back(p);
                continue;
            }
            local.dead.push_back(a.first + i);
            if (v == verdict::superseded) local.dead_superseded.push_back(p);
            if (v == verdict::invalid) local.invalid.push_back(p);
        }
        // The area's members get their volatile nodes from one block (the list owns it,
        // so nothing leaks if another area throws: nothing was written to the media).
        node_t* block = l.node_block(found.size());
        local.members.reserve(found.size());
        for (std::size_t j = 0; j < found.size(); ++j) {
            pnode* p = found[j];
            node_t* n = block + j;
            n->key = io::key(p);
            n->value = io::value(p);
            const std::uint64_t h = hashed ? hash_key(n->key) : 0;
            n->so_key = hashed ? regular_so_key(h) : list_so_key;
            n->pptr = p;
            n->pvalidity = p->valid_start != 0;
            local.members.push_back({h, n});
        }
        std::lock_guard g(m);
        parts.push_back(std::move(local));
    });
    // Nothing was written so far; from here on nothing throws but allocation.
    recovery_report r;
    std::vector<hashed_member<link_t>> members;
    std::vector<node_line*> dead;
    std::vector<pnode*> to_delete, invalid;
    {
        std::size_t nm = 0, nd = 0, ns = 0, ni = 0;
        for (const auto& pt : parts) {
            nm += pt.members.size();
            nd += pt.dead.size();
            ns += pt.dead_superseded.size();
            ni += pt.invalid.size();
        }
        members.reserve(nm);
        dead.reserve(nd);
        to_delete.reserve(ns);
        invalid.reserve(ni);
    }
    for (auto& pt : parts) {
        members.insert(members.end(), pt.members.begin(), pt.members.end());
        dead.insert(dead.end(), pt.dead.begin(), pt.dead.end());
        to_delete.insert(to_delete.end(), pt.dead_superseded.begin(), pt.dead_superseded.end());
        invalid.insert(invalid.end(), pt.invalid.begin(), pt.invalid.end());
        pt.members.clear();
    }
    r.superseded = to_delete.size();
    r.invalid = invalid.size();
    r.free = dead.size() - r.superseded - r.invalid;

    auto& dir = l.directory();
    const std::uint64_t buckets = hashed ? recovered_bucket_count(members.size(), dir.load_factor()) : 1;
    rebuild_policy<K, V> pol{dir};
    r.members = rebuild_split_ordered(dir, l.head(), members, buckets, pol, threads);
    r.duplicates = pol.dropped.size();
    for (node_t* n : pol.dropped) {
        to_delete.push_back(n->pptr);
        dead.push_back(as_line(n->pptr));
        l.release(n);
    }

    for (pnode* p : invalid) normalise_dead(p);
    bool wrote_back = false;
    for (pnode* p : to_delete) wrote_back |= normalise_dead(p);
    // Superseded PNodes and dropped duplicates are deleted for good before any slot is
    // handed out again (a reused target would revive its superseded PNode).
    if (wrote_back) pmem::pfence();
    store.add_free(dead);
    return r;
}

}  // namespace ferrite::sets::soft
