// ferrite/sets/soft_list.hpp: the SOFT lock-free list (volatile nodes over persistent
// PNodes), split-ordered so that one list serves the ordered-set layout and the hash layout.
//
// Paper: durable sets (Zuriel et al., OOPSLA 2019), SOFT (L306-563): find/trim (Listing 9),
// contains (Listing 10), insert (Listing 11), remove (Listing 12). A volatile node carries
// key, value, its PNode and the PNode's polarity; its state lives in the low bits of its own
// next word: INSERTED, INTEND_TO_INSERT, INTEND_TO_DELETE, DELETED. Every state a thread can
// observe is already durable, so a successful update costs one pfence and a read none.
//
// What differs from the paper:
//   * split order (split_order.hpp): a search starts at its bucket's sentinel (the list
//     layout has one bucket: the head); positions are (so_key, key bytes); the list ends in
//     nullptr (no tail: any so_key is possible for a regular node);
//   * the lookup path (measured at 1M keys, docs/results.md "SOFT lookups"): every position
//     begins with a 16-byte `link` {next, so_key}; a sentinel is nothing else and lives in
//     its bucket's slot of the directory (inline_directory), so reaching a bucket costs one
//     line, not a slot plus a separately allocated sentinel. A blank slot is claimed with
//     one CAS by the thread that links it (bucket_start); others start from the parent's
//     sentinel meanwhile, so bucket initialisation stays lock-free. Bit 63 of a next word
//     tags a sentinel successor, which lets a lookup stop at the end of its bucket without
//     reading the next bucket's sentinel (find_member). Load factor 1 by default (the
//     paper's fixed tables have one bucket per key);
//   * paper's `find` loop reads the successor of a nullptr-free list; here curr == nullptr
//     ends the search;
//   * an insert whose link CAS fails keeps its node for the retry, and frees it (never
//     published) when the key turns out present; the listing leaks it;
//   * remove only destroys a node whose state is INTEND_TO_DELETE or that it marked itself:
//     the listing's loser would also destroy a node another thread is replacing;
//   * reclamation by epochs (sync/epoch_domain.hpp): the thread whose trim CAS unlinks a
//     node retires it; its reclaim frees its PNodes to the node store and the node itself
//     to the reclaiming thread's spare list, which that thread's next insert takes from;
//   * volatile nodes come from the list's own chunks, not from new/delete (node_pool, below):
//     a node is one aligned cache line (alignas 64: a lookup reads one line per node, where
//     a 56-byte malloc'd node straddled two lines one time in four), chunks grow to 2 MiB
//     and are offered to transparent huge pages (a lookup's node access rarely walks the
//     page tables), and per-thread free lists replace the allocator's locks and
//     consolidation. Chunks die with the list (teardown frees chunks, not a million nodes);
//   * insert_or_assign (not in the paper), below;
//   * a persistence policy P: `durable` (the algorithm) or `no_persistence`, the same list
//     (nodes, states, helping, buckets, reclamation) with every PNode step compiled out: no
//     node store, no PNode, no pwb, no pfence. Not a durable set (nothing survives): the
//     volatile baseline that measures what durability costs (bench `volatile-hash`).
//
// insert_or_assign(k, v) on a present node X (state INSERTED) -> a new node Y, atomically:
//   1. intent: Y := {k, v, fresh PNode Py with polarity pY, prev_pnode = X.pnode, state
//      INSERTED, next = X's successor}; one CAS X.next: succ|INSERTED -> Y|INTEND_TO_REPLACE.
//      Y is linked but unreachable for a search of k (every search of k stops at X first:
//      same position, X not dead), so X is still the member; a search of a larger key
//      passes through X and Y, which is harmless.
//   2. durable step (help_replace; any thread that meets X in INTEND_TO_REPLACE runs it):
//      create(Py) + X.pnode.supersede(Py | pY) + (X.prev_pnode ? delete it : nothing);
//      pwb each line; ONE pfence.
//   3. LP: CAS X.next: Y|INTEND_TO_REPLACE -> Y|REPLACED (a dead state, like DELETED).
//      Now a search of k skips X and finds Y.
// remove of a node N with N.prev_pnode: deletes both PNodes (two pwb) with ONE pfence.
// Reclaim: a DELETED node frees pnode and prev_pnode; a REPLACED node only its prev_pnode
// (its pnode is owned by its replacement, whose prev_pnode it is).
//
// Crash consistency (recovery's rule, soft_pnode.hpp; PP = the one pfence of each update;
// nothing above changes it: sentinels, tags and directory are volatile and rebuilt):
//   insert   member iff Py's create persisted (valid_end written last in the line). PP: the
//            create fence; LP: ITI -> INSERTED after it. A crash before the PP leaves an
//            invalid or complete PNode; both outcomes are allowed for a pending insert, and
//            no thread saw the node as a member (ITI reads as absent).
//   remove   LP: ITD -> DELETED after the fence that persisted deleted (and prev's). Before
//            it the node reads as present, and its PNode may or may not be deleted at a crash.
//   replace  until the fence, each of {create(Py), supersede(Px), delete(Pw)} may or may not
//            have persisted, independently:
//              Py incomplete: Px member (superseded or not: its target is incomplete);
//              Py complete, Px superseded: Py member, Px not;
//              Py complete, Px not yet superseded: BOTH read as members (the lines are
//              unordered before the fence). The design this replaces claimed "exactly one
//              of X, Y at every crash"; the crash simulator refutes it (soft-map without the
//              duplicate rule: 1631 of 10,000 crash points recover a key twice). Recovery
//              keeps one of them and durably deletes the other (soft_recovery.hpp), which
//              is allowed because the upsert had not returned (its LP follows the fence)
//              and no thread had read Y (a search of k stops at X until the LP);
//              Pw (X's own predecessor) is superseded by a complete Px: not a member,
//              deleted or not.
//            After the fence exactly Py is a member.
//   reuse    superseded_by names a slot that could be freed and reused with flipped
//            polarity, after which a stale superseded PNode would read as a member again.
//            Never: a PNode P is freed when the node owning it as pnode (removed) or as
//            prev_pnode (whose replacement was removed or replaced) is reclaimed, and each of
//            those paths durably deleted every PNode naming P first: remove deletes
//            prev_pnode with pnode in its fence; the next replace deletes prev_pnode in its
//            fence, before its LP, before the reclaim; recovery durably deletes every dead
//            superseded PNode (one fence) before it frees any slot. Polarity flipping twice
//            (back to the original) cannot matter either: the namer is durably deleted by
//            then. A member whose target never completed (the crash came before the
//            replacement's create) keeps a stale superseded flag: its target slot, reused,
//            can only hold its key again as the member's own next replacement, which
//            supersedes it for real.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sets/soft_pnode.hpp"
#include "ferrite/sets/split_order.hpp"
#include "ferrite/sync/epoch_domain.hpp"
#include "ferrite/sync/thread_id.hpp"

namespace ferrite::sets::soft {

enum state : std::uintptr_t {
    inserted = 0,
    intend_to_insert = 1,
    intend_to_delete = 2,
    deleted = 3,
    intend_to_replace = 4,
    replaced = 5,
    // a bucket's sentinel (directory slot) only: not initialised yet (blank), and claimed by
    // the thread that links it (linked or not; usable as a start once it reads `inserted`)
    sentinel_blank = 6,
    sentinel_linking = 7,
};
inline constexpr std::uintptr_t state_mask = 7;
// Bit 63 of a next word: the successor is a sentinel (user-space pointers leave it clear).
// Set by whoever first writes a word naming a sentinel and kept by every state change, so a
// lookup can tell that it has reached the end of its bucket without reading the sentinel.
inline constexpr std::uintptr_t sentinel_tag = std::uintptr_t{1} << 63;

inline constexpr bool dead(std::uintptr_t s) noexcept { return s == deleted || s == replaced; }

// What every position in the list starts with: 16 bytes, so that the sentinels, which are
// nothing else, live four to a line in the bucket directory (split_order.hpp,
// inline_directory). The default is a directory slot whose bucket is not initialised.
struct link {
    std::atomic<std::uintptr_t> next FERRITE_FLOW_SKIP;  // DRAM, as the list: successor | sentinel_tag | state
    std::uint64_t so_key;              // a sentinel's is even, a regular node's odd
    constexpr link() noexcept : next(sentinel_blank), so_key(0) {}
    constexpr link(std::uintptr_t w, std::uint64_t so) noexcept : next(w), so_key(so) {}
};
static_assert(sizeof(link) == 16);

// A regular node: the link first, then key and value, so the lookup's fields share a line.
template <class K, class V>
struct alignas(64) node : link {
    // volatile (the heap); the only persistent state is *pptr
    node() noexcept : link(0, 0) {}
    K key{};
    [[no_unique_address]] V value{};
    pnode* pptr = nullptr;       // this node's PNode (nullptr: a sentinel)
    pnode* prev_pptr = nullptr;  // the PNode this node superseded, not yet deleted (owned)
    bool pvalidity = false;
    bool prev_validity = false;
};
// Nodes live in the list's chunks and are never destroyed one by one.
static_assert(std::is_trivially_destructible_v<node<std::uint64_t, std::uint64_t>>);

struct durable {
    static constexpr bool persistent = true;
};
struct no_persistence {
    static constexpr bool persistent = false;
};

// The volatile nodes of one list: chunks of cache-line nodes owned by the pool until it is
// destroyed, handed out per thread id without a lock. take(): the thread's spare list (nodes
// that came back: reclaimed, discarded, dropped by recovery), else the never-used rest of its
// current chunk, else a batch from the shared depot, else a new chunk (64 nodes at first,
// doubling to 32,768: 2 MiB, aligned and offered to transparent huge pages). A spare list
// past spill_at hands half to the depot, so a thread that only erases does not hoard what a
// thread that only inserts needs. Volatile only: recovery rebuilds every node.
template <class Node>
class node_pool {
    static_assert(std::is_trivially_destructible_v<Node> && sizeof(Node) % 64 == 0);
    static constexpr std::size_t first_chunk = 64;
    static constexpr std::size_t huge_page = std::size_t{2} << 20;
    static constexpr std::size_t max_chunk = huge_page / sizeof(Node) == 0 ? 1 : huge_page / sizeof(Node);
    static constexpr std::size_t spill_at = 4096;
    static constexpr std::size_t batch = spill_at / 2;

    // A thread's own entry (a line of its own: two threads' push and pop never share one).
    struct alignas(64) local {
        std::vector<Node*> spare;
        Node* bump = nullptr;
        Node* end = nullptr;
        std::size_t next_chunk = first_chunk;
    };
    struct chunk {
        void* raw;
        std::size_t align;
        ~chunk() { ::operator delete(raw, std::align_val_t{align}); }
        chunk(void* r, std::size_t a) noexcept : raw(r), align(a) {}
        chunk(chunk&& o) noexcept : raw(std::exchange(o.raw, nullptr)), align(o.align) {}
        chunk(const chunk&) = delete;
        chunk& operator=(const chunk&) = delete;
        chunk& operator=(chunk&&) = delete;
    };

public:
    node_pool() : locals_(new std::atomic<local*>[sync::max_thread_ids]) {
        for (unsigned i = 0; i < sync::max_thread_ids; ++i) locals_[i].store(nullptr, std::memory_order_relaxed);
    }
    ~node_pool() {
        for (unsigned i = 0; i < sync::max_thread_ids; ++i) delete locals_[i].load(std::memory_order_acquire);
    }
    node_pool(const node_pool&) = delete;
    node_pool& operator=(const node_pool&) = delete;

    // A default-state node for the calling thread.
    Node* take() {
        local& l = mine();
        if (!l.spare.empty()) [[likely]] {
            Node* n = l.spare.back();
            l.spare.pop_back();
            return new (n) Node;
        }
        if (l.bump == l.end) refill(l);
        if (!l.spare.empty()) {
            Node* n = l.spare.back();
            l.spare.pop_back();
            return new (n) Node;
        }
        return new (l.bump++) Node;
    }
    void release(Node* n) {
        local& l = mine();
        l.spare.push_back(n);
        if (l.spare.size() >= spill_at) [[unlikely]] {
            std::lock_guard g(mutex_);
            depot_.insert(depot_.end(), l.spare.end() - static_cast<std::ptrdiff_t>(batch), l.spare.end());
            l.spare.resize(l.spare.size() - batch);
        }
    }
    // `count` default nodes in one chunk of their own (recovery: one per area). Thread-safe.
    Node* block(std::size_t count) {
        if (count == 0) return nullptr;
        Node* first = allocate(count);
        for (std::size_t i = 0; i < count; ++i) new (first + i) Node;
        return first;
    }

private:
    local& mine() {
        std::atomic<local*>& slot = locals_[sync::this_thread_id()];
        local* l = slot.load(std::memory_order_relaxed);  // only this thread (id) writes it
        if (l == nullptr) [[unlikely]] {
            l = new local;
            slot.store(l, std::memory_order_release);
        }
        return *l;
    }
    // The depot's batch, else a new chunk for bump allocation.
    void refill(local& l) {
        {
            std::lock_guard g(mutex_);
            if (!depot_.empty()) {
                const std::size_t take = std::min(batch, depot_.size());
                l.spare.insert(l.spare.end(), depot_.end() - static_cast<std::ptrdiff_t>(take), depot_.end());
                depot_.resize(depot_.size() - take);
                return;
            }
        }
        const std::size_t count = l.next_chunk;
        l.bump = allocate(count);
        l.end = l.bump + count;
        l.next_chunk = std::min(count * 2, max_chunk);
    }
    Node* allocate(std::size_t count) {
        const std::size_t bytes = count * sizeof(Node);
        const std::size_t align = bytes >= huge_page ? huge_page : alignof(Node);
        void* raw = ::operator new(bytes, std::align_val_t{align});
        if (bytes >= huge_page) (void)::madvise(raw, bytes, MADV_HUGEPAGE);  // advice only
        std::lock_guard g(mutex_);
        try {
            chunks_.emplace_back(raw, align);
        } catch (...) {
            ::operator delete(raw, std::align_val_t{align});
            throw;
        }
        return static_cast<Node*>(raw);
    }

    std::unique_ptr<std::atomic<local*>[]> locals_;  // per thread id, made by its thread
    std::mutex mutex_;                               // chunks_ and depot_
    std::vector<chunk> chunks_;
    std::vector<Node*> depot_;
};

template <class K, class V, class P = durable>
class list {
    struct no_store {};

public:
    using node_t = node<K, V>;
    using link_t = link;
    using directory_t = inline_directory<link_t>;
    using io = payload_io<K, V>;
    static_assert(check_payload<K, V>());
    static_assert(std::is_default_constructible_v<K>, "durable set keys must be default constructible");

    list(node_store store, set_layout l, bucket_growth::growth g)
        requires(P::persistent)
        : store_(std::move(store)), layout_(l), dir_(grow_for(l, g)), head_(make_head(dir_)) {}
    list(set_layout l, bucket_growth::growth g)
        requires(!P::persistent)
        : layout_(l), dir_(grow_for(l, g)), head_(make_head(dir_)) {}
    ~list() {
        domain_.reclaim_all();
        // The directory frees the sentinels, pool_ every node (linked or spare): nodes are
        // trivially destructible and live in its chunks.
    }
    list(const list&) = delete;
    list& operator=(const list&) = delete;

    // A next word naming regular node n (or nullptr) in state s.
    static std::uintptr_t word(node_t* n, std::uintptr_t s) noexcept { return reinterpret_cast<std::uintptr_t>(n) | s; }
    // A next word naming any position (reads its so-key to tag a sentinel).
    static std::uintptr_t word_of(link_t* n, std::uintptr_t s) noexcept {
        if (n == nullptr) return s;
        return reinterpret_cast<std::uintptr_t>(n) | s | (regular(n) ? 0 : sentinel_tag);
    }
    // w's successor (and its tag) in state s.
    static std::uintptr_t with_state(std::uintptr_t w, std::uintptr_t s) noexcept { return (w & ~state_mask) | s; }
    static link_t* ptr(std::uintptr_t w) noexcept { return reinterpret_cast<link_t*>(w & ~(state_mask | sentinel_tag)); }
    static std::uintptr_t st(std::uintptr_t w) noexcept { return w & state_mask; }
    static bool regular(const link_t* n) noexcept { return !is_sentinel_so_key(n->so_key); }
    static node_t* as_node(link_t* n) noexcept { return static_cast<node_t*>(n); }
    static const node_t* as_node(const link_t* n) noexcept { return static_cast<const node_t*>(n); }

    // ---- operations ---------------------------------------------------------------------

    bool contains(const K& key) { return find_member(key).has_value(); }
    std::optional<V> get(const K& key) { return find_member(key); }

    bool insert(const K& key, const V& value) {
        auto pin = domain_.pin();
        const auto sk = make_search_key(key, layout_);
        node_t* fresh = nullptr;
        node_t* result_node = nullptr;
        bool result = false;
        while (true) {
            auto w = find(start(sk), sk);
            link_t* curr = ptr(w.curr);
            if (curr != nullptr && position(curr, sk) == 0) {
                if (w.curr_state != intend_to_insert) {
                    discard(fresh);
                    return false;
                }
                discard(fresh);
                result_node = as_node(curr);  // help its insert finish (Listing 11 L10-14)
                break;
            }
            if (fresh == nullptr) fresh = make_node(key, value, sk.so_key);
            fresh->prev_pptr = nullptr;
            fresh->next.store(with_state(w.curr, intend_to_insert), std::memory_order_relaxed);
            auto expected = w.curr;
            if (!w.pred->next.compare_exchange_strong(expected, word(fresh, st(w.curr)), std::memory_order_acq_rel))
                continue;
            result_node = fresh;
            result = true;
            break;
        }
        finish_insert(result_node);
        if (result) dir_.count(+1);
        return result;
    }

    bool erase(const K& key) {
        auto pin = domain_.pin();
        const auto sk = make_search_key(key, layout_);
        while (true) {
            auto w = find(start(sk), sk);
            node_t* curr = as_node(ptr(w.curr));
            if (curr == nullptr || position(curr, sk) != 0 || w.curr_state == intend_to_insert) return false;
            if (w.curr_state == intend_to_replace) {
                help_replace(curr);
                continue;
            }
            bool result = false;
            std::uintptr_t s = curr->next.load(std::memory_order_acquire);
            while (!result && st(s) == inserted) {
                // the one winner (Listing 12 L13-14)
                result = curr->next.compare_exchange_strong(s, (s & ~state_mask) | intend_to_delete,
                                                            std::memory_order_acq_rel);
            }
            if (!result) {
                if (st(s) == intend_to_replace) {  // an upsert won the race: help it, search again
                    help_replace(curr);
                    continue;
                }
                // Replaced since the search: the key lives on in the replacement. (Returning
                // false here, as for DELETED, lost a present key's erase: found by the
                // soft-map target in random crash moments, which switch threads anywhere.)
                if (st(s) == replaced) continue;
                if (st(s) == intend_to_delete) finish_remove(curr);  // help the winner
                return false;
            }
            finish_remove(curr);
            dir_.count(-1);
            trim(w.pred, w.curr);
            return true;
        }
    }

    // true: inserted; false: the present key's value was replaced.
    bool insert_or_assign(const K& key, const V& value) {
        auto pin = domain_.pin();
        const auto sk = make_search_key(key, layout_);
        node_t* fresh = nullptr;
        while (true) {
            auto w = find(start(sk), sk);
            node_t* curr = as_node(ptr(w.curr));
            if (fresh == nullptr) fresh = make_node(key, value, sk.so_key);
            if (curr != nullptr && position(curr, sk) == 0) {
                switch (w.curr_state) {
                    case intend_to_insert: finish_insert(curr); continue;
                    case intend_to_delete: finish_remove(curr); continue;
                    case intend_to_replace: help_replace(curr); continue;
                    default: break;
                }
                // intent: link Y after X and mark X INTEND_TO_REPLACE in one CAS
                fresh->prev_pptr = curr->pptr;
                fresh->prev_validity = curr->pvalidity;
                std::uintptr_t s = curr->next.load(std::memory_order_acquire);
                if (st(s) != inserted) continue;
                fresh->next.store(with_state(s, inserted), std::memory_order_relaxed);
                if (!curr->next.compare_exchange_strong(s, word(fresh, intend_to_replace), std::memory_order_acq_rel))
                    continue;
                help_replace(curr);
                return false;
            }
            fresh->prev_pptr = nullptr;
            fresh->next.store(with_state(w.curr, intend_to_insert), std::memory_order_relaxed);
            auto expected = w.curr;
            if (!w.pred->next.compare_exchange_strong(expected, word(fresh, st(w.curr)), std::memory_order_acq_rel))
                continue;
            finish_insert(fresh);
            dir_.count(+1);
            return true;
        }
    }

    std::size_t size() const noexcept { return dir_.size(); }

    // f(key, value) for every member, in list order; weakly consistent.
    template <class F>
    void for_each(F&& f) {
        auto pin = domain_.pin();
        link_t* n = ptr(head_->next.load(std::memory_order_acquire));
        while (n != nullptr) {
            const std::uintptr_t w = n->next.load(std::memory_order_acquire);
            const auto s = st(w);
            link_t* next = ptr(w);
            if (regular(n) && !dead(s) && s != intend_to_insert) {
                f(static_cast<const K&>(as_node(n)->key), static_cast<const V&>(as_node(n)->value));
                if (s == intend_to_replace && next != nullptr) next = ptr(next->next.load(std::memory_order_acquire));  // skip Y
            }
            n = next;
        }
    }

    // ---- recovery and tests -------------------------------------------------------------

    node_store& store() noexcept { return store_; }
    const node_store& store() const noexcept { return store_; }
    sync::epoch_domain& domain() noexcept { return domain_; }
    directory_t& directory() noexcept { return dir_; }
    link_t* head() const noexcept { return head_; }
    set_layout layout() const noexcept { return layout_; }

    // Recovery: `count` default nodes in one chunk, owned by the list until it is destroyed;
    // one allocation per area instead of one per recovered member. Thread-safe (recovery's
    // scan threads).
    node_t* node_block(std::size_t count) { return pool_.block(count); }
    // A node no thread can reach any more (reclaimed, never published, or a dropped
    // duplicate): to the calling thread's spare list, which its next insert takes from.
    void release(node_t* n) { pool_.release(n); }

private:
    struct window {
        link_t* pred;
        std::uintptr_t curr;  // pred's next as the CAS expects it: curr | pred's state
        std::uintptr_t curr_state;
    };

    static bucket_growth::growth grow_for(set_layout l, bucket_growth::growth g) {
        if (l == set_layout::list) g.enabled = false;
        return g;
    }
    // Bucket 0's slot is the head (so_key 0), initialised from the start.
    static link_t* make_head(directory_t& d) {
        link_t* h = &d.at(0);
        h->so_key = 0;
        h->next.store(word(nullptr, inserted), std::memory_order_release);
        return h;
    }

    // Order of n against sk (compare_position, reading a key only from a regular node).
    static int position(const link_t* n, const search_key<K>& sk) noexcept {
        if (n->so_key != sk.so_key) return n->so_key < sk.so_key ? -1 : 1;
        if (is_sentinel_so_key(n->so_key)) return 0;
        return compare_keys(as_node(n)->key, *sk.key);
    }

    link_t* start(const search_key<K>& sk) {
        if (layout_ == set_layout::list) return head_;
        return bucket_start(sk.hash & (dir_.bucket_count() - 1)).first;
    }

    // Where a search of bucket b starts: b's sentinel once it is linked (second: true), else
    // a sentinel before b's range: its parent's start (second: false). A blank slot is
    // claimed (one CAS: blank -> linking) and linked by the claiming thread alone, so no two
    // threads ever write a slot's next while it is unreachable; a thread that finds it
    // claimed does not wait, it starts from the parent (lock-free, as the lazy
    // initialisation of Shalev and Shavit, whose losers' sentinels are garbage instead).
    std::pair<link_t*, bool> bucket_start(std::uint64_t b) {
        link_t& s = dir_.at(b);
        std::uintptr_t w = s.next.load(std::memory_order_acquire);
        if (st(w) != sentinel_blank && st(w) != sentinel_linking) return {&s, true};
        link_t* from = bucket_start(bucket_growth::parent_of(b)).first;  // b != 0: the head is never blank
        if (st(w) == sentinel_blank &&
            s.next.compare_exchange_strong(w, sentinel_linking, std::memory_order_acq_rel)) {
            link_sentinel(s, b, from);
            return {&s, true};
        }
        return {from, false};
    }

    // The claimant links slot s (bucket b) after `from`: sets its so-key and next while no
    // thread can reach it, links it with one CAS (published by it: release), then clears its
    // linking state (others' inserts after s keep that state: they copy pred's bits).
    void link_sentinel(link_t& s, std::uint64_t b, link_t* from) {
        s.so_key = sentinel_so_key(b);
        const search_key<K> sk{s.so_key, nullptr, 0};
        while (true) {
            auto w = find(from, sk);
            s.next.store(with_state(w.curr, sentinel_linking), std::memory_order_relaxed);
            auto expected = w.curr;
            if (w.pred->next.compare_exchange_strong(
                    expected, reinterpret_cast<std::uintptr_t>(&s) | sentinel_tag | st(w.curr), std::memory_order_acq_rel))
                break;
        }
        std::uintptr_t x = s.next.load(std::memory_order_acquire);
        while (!s.next.compare_exchange_weak(x, with_state(x, inserted), std::memory_order_acq_rel)) {
        }
    }

    // find (Listing 9): the first node at or after sk that is not dead, and its predecessor.
    window find(link_t* from, const search_key<K>& sk) {
        link_t* pred = from;
        std::uintptr_t curr = pred->next.load(std::memory_order_acquire);
        std::uintptr_t pred_state = st(curr);
        std::uintptr_t c_state = inserted;
        while (true) {
            link_t* c = ptr(curr);
            if (c == nullptr) break;
            const std::uintptr_t succ = c->next.load(std::memory_order_acquire);
            c_state = st(succ);
            if (!dead(c_state)) {
                if (position(c, sk) >= 0) break;
                pred = c;
                pred_state = c_state;
            } else {
                trim(pred, curr);
            }
            curr = with_state(succ, pred_state);
        }
        return {pred, curr, c_state};
    }

    // trim (Listing 9): unlink a dead node; the thread whose CAS succeeds retires it.
    bool trim(link_t* pred, std::uintptr_t curr) {
        node_t* c = as_node(ptr(curr));  // dead: a regular node (sentinels never die)
        const std::uintptr_t succ = c->next.load(std::memory_order_acquire);
        std::uintptr_t expected = curr;
        if (!pred->next.compare_exchange_strong(expected, with_state(succ, st(curr)), std::memory_order_acq_rel))
            return false;
        domain_.retire(c, &list::reclaim, this);
        return true;
    }

    static void reclaim(void* p, void* ctx) {
        auto* n = static_cast<node_t*>(p);
        auto* self = static_cast<list*>(ctx);
        // A removed node owns both PNodes; a replaced one only the older (its pnode is now
        // its replacement's prev_pnode). Both were durably deleted before the LP.
        if constexpr (P::persistent) {
            if (st(n->next.load(std::memory_order_acquire)) == deleted) self->store_.free(as_line(n->pptr));
            if (n->prev_pptr != nullptr) self->store_.free(as_line(n->prev_pptr));
        }
        self->release(n);
    }

    // wait-free read (Listing 10), skipping dead nodes at the key (a replaced X is followed
    // by its replacement Y): present iff the first live node at the key is not ITI.
    //
    // End of bucket: when the search started at its own bucket's sentinel (of n buckets) and
    // the next word it follows is tagged (the successor is a sentinel), the key is absent
    // without reading that sentinel, provided the bucket count is still n: a sentinel after
    // bucket b's sentinel and before the key would be a child of b (index >= n), which exists
    // only after some thread read a count > n, and whoever linked it or passed its link on
    // did so after that read (release/acquire), so this thread's count load would see it.
    //
    // Not read-only: on a blank slot bucket_start links the bucket's sentinel, and its find
    // trims the dead nodes it meets and retires them. The pin covers that retire as well as
    // the reads (a build without it aborted soft-hash campaigns in retire, "not pinned";
    // unit test SoftLookup.ALookupThatInitialisesABucket...).
    std::optional<V> find_member(const K& key) {
        auto pin = domain_.pin();
        const auto sk = make_search_key(key, layout_);
        link_t* from = head_;
        bool own = false;  // started at the key's own bucket's sentinel
        std::uint64_t n = 1;
        if (layout_ == set_layout::hash) {
            n = dir_.bucket_count();
            std::tie(from, own) = bucket_start(sk.hash & (n - 1));
        }
        std::uintptr_t w = from->next.load(std::memory_order_acquire);
        while (true) {
            if ((w & sentinel_tag) != 0 && own && dir_.bucket_count() == n) return std::nullopt;
            link_t* c = ptr(w);
            if (c == nullptr) return std::nullopt;
            w = c->next.load(std::memory_order_acquire);
            const int pos = position(c, sk);
            if (pos > 0) return std::nullopt;
            if (pos == 0 && !dead(st(w))) {
                if (st(w) == intend_to_insert) return std::nullopt;
                return as_node(c)->value;
            }
        }
    }

    node_t* make_node(const K& key, const V& value, std::uint64_t so_key) {
        pnode* p = nullptr;
        if constexpr (P::persistent) p = as_pnode(store_.allocate());
        node_t* n = pool_.take();
        n->key = key;
        n->value = value;
        n->so_key = so_key;
        if constexpr (P::persistent) {
            n->pptr = p;
            n->pvalidity = prepare(p);
        }
        return n;
    }
    // A node that was never published: back at once.
    void discard(node_t* n) {
        if (n == nullptr) return;
        if constexpr (P::persistent) store_.free(as_line(n->pptr));
        release(n);
    }

    // Listing 11 L30-33: create (the PP) then INTEND_TO_INSERT -> INSERTED (the LP).
    FERRITE_FLOW_ROOT void finish_insert(node_t* n) {
        if constexpr (P::persistent) {
            create(n->pptr, n->key, n->value, n->pvalidity);
            pmem::pfence();  // PP of the insert: the PNode is complete before anyone sees INSERTED
        }
        std::uintptr_t s = n->next.load(std::memory_order_acquire);
        while (st(s) == intend_to_insert)
            n->next.compare_exchange_weak(s, (s & ~state_mask) | inserted, std::memory_order_acq_rel);
    }

    // Listing 12 L15-17: destroy (the PP), then INTEND_TO_DELETE -> DELETED (the LP).
    FERRITE_FLOW_ROOT void finish_remove(node_t* n) {
        if constexpr (P::persistent) {
            mark_deleted(n->pptr, n->pvalidity);
            if (n->prev_pptr != nullptr) mark_deleted(n->prev_pptr, n->prev_validity);
            pmem::pfence();  // PP of the remove: both PNodes deleted before DELETED is seen
        }
        std::uintptr_t s = n->next.load(std::memory_order_acquire);
        while (st(s) == intend_to_delete)
            n->next.compare_exchange_weak(s, (s & ~state_mask) | deleted, std::memory_order_acq_rel);
    }

    // The durable step and LP of a replacement announced on x (see the header comment).
    FERRITE_FLOW_ROOT void help_replace(node_t* x) {
        std::uintptr_t s = x->next.load(std::memory_order_acquire);
        if (st(s) != intend_to_replace) return;
        node_t* y = as_node(ptr(s));
        if constexpr (P::persistent) {
            create(y->pptr, y->key, y->value, y->pvalidity);
            supersede(x->pptr, store_.pool_offset_of(as_line(y->pptr)) | (y->pvalidity ? 1u : 0u));
            if (x->prev_pptr != nullptr) mark_deleted(x->prev_pptr, x->prev_validity);
            pmem::pfence();  // PP of the replacement: Y complete, X superseded, X's predecessor deleted
        }
        x->next.compare_exchange_strong(s, word(y, replaced), std::memory_order_acq_rel);  // LP
    }

    [[no_unique_address]] std::conditional_t<P::persistent, node_store, no_store> store_;
    set_layout layout_;
    directory_t dir_;
    link_t* head_;  // bucket 0's slot in dir_
    node_pool<node_t> pool_;  // every volatile node (before domain_: reclaim releases into it)
    sync::epoch_domain domain_;  // last member: destroyed (reclaiming) before the store
};

}  // namespace ferrite::sets::soft
