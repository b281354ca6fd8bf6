// ferrite/sets/linkfree_list.hpp: the link-free list algorithm: find, contains, insert,
// remove, over linkfree_node (linkfree_node.hpp), starting at any sentinel.
//
// Paper: [SETS] (docs/references.md), section 3: trim and find (Listing 2, L164-195),
// contains (Listing 3, L197-220), insert (Listing 4, L222-268), remove (Listing 5,
// L270-296). A Harris list (mark bit on a node's own next) whose nodes carry validity bits
// and flush flags; links are never written back.
//
// One algorithm serves both layouts of linkfree_table: the list (one head sentinel, so_key 1
// for every node) and the split-ordered hash set (regular so_key odd, bucket sentinels even;
// an operation starts at its bucket's sentinel). Order: (so_key, key bytes by memcmp);
// the end of the list is nullptr instead of the paper's tail sentinel.
//
// What differs from the paper:
//   * Insert allocates its node once and keeps it across CAS failures (the paper restarts
//     the whole operation, which would take a fresh node each time and leak the old one).
//     A node that ends up unused (the key turned out present) is abandoned (valid and
//     deleted, linkfree_node.hpp) and returned to the node store; the listing omits this
//     ([SETS] defect #1).
//   * Unlinked nodes are retired to an epoch domain; its reclaim hands the slot back to the
//     node store (the paper's ssmem, L567-587).
//   * Sentinels (volatile, so_key even) are never marked and never written back; the hash
//     set inserts them with insert_sentinel().
//
// Crash consistency, flush by flush ([SETS] section 3, L227-231, L272-274, L298-304):
//   insert true   the node is linked while invalid and made valid after the CAS; the one
//                 pwb + pfence of flush_insert() makes "valid and unmarked" durable before
//                 the operation returns. A crash before it: invalid (lost, not reported) or
//                 valid (the insert took effect: it was linearized at the CAS).
//   insert false  the present node is made valid and flushed (flush_insert(), free if its
//                 flag is set): the failure is never durable without the insert behind it.
//   remove true   the node is made valid, then marked (one line: the media never holds it
//                 marked and invalid), and trim's flush_delete() writes the mark back
//                 before the unlinking CAS and before the operation returns.
//   contains      a marked node of the key: flush_delete() before answering false; an
//                 unmarked one: make_valid() + flush_insert() before answering true. At most
//                 one pwb + pfence, none once the flags are set.
//   find          trims every marked node it meets; trim flushes the deletion first, so no
//                 operation can pass a deleted node whose deletion is not durable (an insert
//                 of the same key behind it could otherwise survive a crash together with
//                 the old node).
// A slot is reused only after its epoch is over: its deletion is durable (trim flushed it)
// and no thread holds it; prepare_insert() makes it invalid before it gets a new key.
//
// Cost: one pwb + pfence per successful insert or remove, none for a failed one or a read
// whose node's flag is set, at most one for any contains (tests/unit/sets, Counts*). More
// only when an operation helps another (flushes a node someone else linked or marked).
//
// Flush mutation testing (crash targets linkfree-list, linkfree-hash): each caller's
// write-back is a site of its own (the flush helpers take the caller's location), the two
// fences one site each; all 7 are killed. Switching off contains' write-back of a deletion
// is caught by a duplicate member at recovery: it still sets the node's flag, so the
// remover's trim skips its own write-back, and an insert of the key behind the unlinked
// node makes a second member once the old mark is lost.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>

#include "ferrite/sets/linkfree_node.hpp"
#include "ferrite/sets/node_store.hpp"
#include "ferrite/sync/epoch_domain.hpp"

namespace ferrite::sets {

template <class K, class V>
class linkfree_list {
public:
    using node = linkfree_node<K, V>;
    static_assert(sizeof(node) == node_size, "a link-free node is one line");

    // Where nodes come from and go to: the table's node store and epoch domain.
    struct env {
        node_store* store;
        sync::epoch_domain* domain;
    };

    struct position {
        node* pred;
        node* curr;  // nullptr: end of the list
    };

    static node* ptr(std::uintptr_t w) noexcept { return reinterpret_cast<node*>(w & ~linkfree_mark); }

    // The order of a node against the search key (so, k): < 0 if the node comes first.
    static int compare(const node* n, std::uint64_t so, const K& k) noexcept {
        if (n->so_key != so) return n->so_key < so ? -1 : 1;
        return std::memcmp(&n->key, &k, sizeof(K));
    }

    // trim (L164, Listing 2 lines 1-5): make curr's deletion durable, then unlink it from pred. The thread
    // whose CAS unlinks a node retires it.
    FERRITE_FLOW_ROOT static bool trim(const env& e, node* pred, node* curr) noexcept {
        curr->flush_delete();
        const auto succ = reinterpret_cast<std::uintptr_t>(ptr(curr->load_next()));
        auto expected = reinterpret_cast<std::uintptr_t>(curr);
        if (!pred->a_next().compare_exchange_strong(expected, succ, std::memory_order_acq_rel,
                                                     std::memory_order_acquire))
            return false;
        e.domain->retire(curr->line(), &reclaim, e.store);
        return true;
    }

    // find (L166, Listing 2 lines 7-20) from `head` (a sentinel before every node of the key): pred is the
    // last unmarked node before (so, k), curr the first unmarked node not before it.
    static position find(const env& e, node* head, std::uint64_t so, const K& k) noexcept {
        node* pred = head;
        node* curr = ptr(head->load_next());
        while (curr != nullptr) {
            if (!curr->marked()) {
                if (compare(curr, so, k) >= 0) break;
                pred = curr;
            } else {
                trim(e, pred, curr);
            }
            curr = ptr(curr->load_next());
        }
        return {pred, curr};
    }

    // contains (L197-220), wait-free; `out` receives the value when the key is present.
    FERRITE_FLOW_ROOT static bool contains(node* head, std::uint64_t so, const K& k, V* out = nullptr) noexcept {
        node* curr = ptr(head->load_next());
        while (curr != nullptr && compare(curr, so, k) < 0) curr = ptr(curr->load_next());
        if (curr == nullptr || compare(curr, so, k) != 0) return false;
        if (curr->marked()) {
            curr->flush_delete();
            return false;
        }
        if (out != nullptr) std::memcpy(static_cast<void*>(out), &curr->value, sizeof(V));
        curr->make_valid();
        curr->flush_insert();
        return true;
    }

    // insert (L222-268). False: the key was present (made durable first).
    FERRITE_FLOW_ROOT static bool insert(const env& e, node* head, std::uint64_t so, const K& k, const V& v) {
        node* fresh = nullptr;
        while (true) {
            const auto [pred, curr] = find(e, head, so, k);
            if (curr != nullptr && compare(curr, so, k) == 0) {
                curr->make_valid();
                curr->flush_insert();
                if (fresh != nullptr) {
                    fresh->abandon();
                    e.store->free(fresh->line());
                }
                return false;
            }
            if (fresh == nullptr) {
                fresh = node::from(e.store->allocate());
                fresh->prepare_insert(so, k, v, curr);
            } else {
                fresh->a_next().store(reinterpret_cast<std::uintptr_t>(curr), std::memory_order_relaxed);
            }
            auto expected = reinterpret_cast<std::uintptr_t>(curr);
            if (pred->a_next().compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(fresh),
                                                        std::memory_order_acq_rel, std::memory_order_acquire)) {
                fresh->make_valid();
                fresh->flush_insert();
                return true;
            }
        }
    }

    // remove (L270-296). False: the key was absent.
    static bool remove(const env& e, node* head, std::uint64_t so, const K& k) noexcept {
        while (true) {
            const auto [pred, curr] = find(e, head, so, k);
            if (curr == nullptr || compare(curr, so, k) != 0) return false;
            auto succ = curr->load_next() & ~linkfree_mark;
            curr->make_valid();
            if (curr->a_next().compare_exchange_strong(succ, succ | linkfree_mark, std::memory_order_acq_rel,
                                                        std::memory_order_acquire)) {
                trim(e, pred, curr);
                return true;
            }
        }
    }

    // Links a new volatile sentinel of so-key `so` (even) after `start`, or returns the one a
    // concurrent initialiser linked first. Sentinels are never marked or written back.
    static node* insert_sentinel(const env& e, node* start, std::uint64_t so) {
        node* sentinel = new_sentinel(so);
        const K& k = sentinel->key;
        while (true) {
            const auto [pred, curr] = find(e, start, so, k);
            if (curr != nullptr && compare(curr, so, k) == 0) {
                delete sentinel;  // never published
                return curr;
            }
            sentinel->a_next().store(reinterpret_cast<std::uintptr_t>(curr), std::memory_order_relaxed);
            auto expected = reinterpret_cast<std::uintptr_t>(curr);
            if (pred->a_next().compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(sentinel),
                                                        std::memory_order_acq_rel, std::memory_order_acquire))
                return sentinel;
        }
    }

    // A volatile sentinel of the given so_key (even): valid, unmarked, key bytes zero.
    static node* new_sentinel(std::uint64_t so) {
        auto* n = new node;
        std::memset(static_cast<void*>(n), 0, sizeof(node));
        n->so_key = so;
        return n;
    }

private:
    // Epoch reclaim: the slot goes back to the node store (its state is valid and marked,
    // the free state, and its deletion is durable).
    static void reclaim(void* line, void* store) noexcept {
        static_cast<node_store*>(store)->free(static_cast<node_line*>(line));
    }
};

}  // namespace ferrite::sets
