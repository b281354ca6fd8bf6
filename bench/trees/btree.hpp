// bench/trees/btree.hpp: a plain, lock-based, in-memory B+-tree: issue 19's `volatile-tree`,
// and the program that CpNvm, the checkpointing library of [NVM] ch. 4 (docs/references.md),
// will checkpoint.
//
// The algorithm is the textbook B+-tree. Every node holds up to Fanout entries, each a key
// and a slot: in a leaf the slot is the key's value, in an inner node it is a child and the
// key is the lower bound of the child's range: every key under child i is at or above key
// i and below key i+1. Search reads keys 1..count of an inner node; key 0 repeats the bound
// the parent holds for the node (kept equal by every split, move and merge, so leaves and
// inner nodes move entries the same way), and the leftmost node of each level, which has
// no lower bound, has a key 0 that nothing reads. Leaves are linked left to right by
// `next`, so a scan walks the leaf chain. Every node but the root holds at least
// min_fill = Fanout / 2 entries, every leaf is at the same depth, and an inner root has at
// least two children.
//
//   get, contains  descend from the root (a binary search per node), then search the leaf
//   insert, put    descend, remembering the path; a full node is split in two halves
//                  before the entry goes in, and the right half's first key goes up to the
//                  parent, splitting it in turn if full; a split root grows the tree
//   erase          descend, remove the entry; a node left below min_fill borrows one entry
//                  from a sibling that has more, or, when the two fit in one node, the
//                  right one is merged into the left one and its parent loses an entry,
//                  which may underflow in turn; an inner root left with one child is
//                  replaced by that child (the tree shrinks)
//   scan           descend to the first key >= from, then follow the leaf chain
//
// Why it is plain: it is the "lock-based B+-tree, ours, not tuned for NVM" of issue 19, a
// baseline that shows what whole-program checkpointing costs an ordinary program, so it has
// none of the tuning of a persistent tree (no unsorted leaves, no fingerprints, no slot
// permutation, no lock coupling). One reader-writer lock guards the whole tree: get,
// contains, scan (and the invariant check, btree_check.hpp) take it shared, insert, put and
// erase exclusive. A scan calls its function with the lock held shared: the function must
// not update the tree. The lock is ferrite's sync::rw_spin_lock, which prefers writers: a
// writer that waits holds back new readers. It was std::shared_mutex, glibc's rwlock, which
// prefers readers: at two threads under YCSB A the writer slept in the kernel while the
// other thread kept reading, and each run fell into a fast or a 4x slower mode by chance
// (docs/checkpointing.md). Choosing a lock that is fair to writers is no NVM tuning: both
// trees take the same one, and it has nothing to do with persistence.
//
// What the CpNvm port changes (a few lines, by construction): CpNvm wants every store to
// checkpointed memory announced with mark() before it happens, and the memory to come from
// its allocator. So:
//   - all node memory comes from allocate_node<N>() and goes back through free_node(): the
//     port makes them call CpNvm's allocator;
//   - every write to a node happens in one of seven functions, named for what they write:
//     write_entry (one key and slot), write_slot (one slot: a put of a present key changes
//     only its value, and a key and its slot lie in different lines), shift_right / shift_left (entries moved one place
//     to open or close a gap), copy_entries (a run of entries into another node: splits
//     and merges), set_count, set_next (the leaf chain). Nothing else assigns to a node
//     after allocate_node() has built it;
//   - the tree's own two words are written only by set_root and set_size.
// The port adds a mark() of the written range at the top of each of those nine functions,
// and nothing else in the tree changes. The lock stays: CpNvm checkpoints a lock-based
// program as it is, and its checkpoint() calls go in the code that drives the tree, between
// operations, where no lock is held. free_node knows each node's type, hence its size, for
// an allocator whose free takes one.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <type_traits>

#include "ferrite/sync/rw_spin_lock.hpp"

namespace ferrite::bench {

// Keys and values are plain words: copied with memcpy semantics (what CpNvm's log and a
// checkpoint copy), default-constructible (node arrays), keys totally ordered by <.
template <class T>
concept btree_word = std::is_trivially_copyable_v<T> && std::default_initializable<T>;

template <class K, class V, std::size_t Fanout>
class btree_checker;  // btree_check.hpp: the invariant check, a friend

template <class K, class V, std::size_t Fanout = 32>
    requires btree_word<K> && btree_word<V> && std::totally_ordered<K>
class btree {
    static_assert(Fanout >= 4, "a B+-tree node splits into two halves of at least two entries");

public:
    static constexpr std::size_t fanout = Fanout;
    static constexpr std::size_t min_fill = Fanout / 2;  // entries of every node but the root
    using lock_type = sync::rw_spin_lock;  // writer-preferring (see the header comment)

    btree() : root_(allocate_node<leaf_node>()) {}
    ~btree() { free_subtree(root_); }
    btree(const btree&) = delete;
    btree& operator=(const btree&) = delete;

    // Adds key -> value if key is absent; false (and no change) if present.
    bool insert(const K& key, const V& value) {
        std::unique_lock lock(mutex_);
        return upsert(key, value, false);
    }

    // Adds key -> value, or assigns value if key is present; true if it added the key.
    bool put(const K& key, const V& value) {
        std::unique_lock lock(mutex_);
        return upsert(key, value, true);
    }

    std::optional<V> get(const K& key) const {
        std::shared_lock lock(mutex_);
        const leaf_node* leaf = descend(key, nullptr);
        const std::size_t i = lower_index(leaf, key);
        if (i < leaf->count && leaf->keys[i] == key) return leaf->slots[i];
        return std::nullopt;
    }

    bool contains(const K& key) const { return get(key).has_value(); }

    // Removes key; false if it was absent.
    bool erase(const K& key) {
        std::unique_lock lock(mutex_);
        path p;
        leaf_node* leaf = descend(key, &p);
        const std::size_t i = lower_index(leaf, key);
        if (i == leaf->count || !(leaf->keys[i] == key)) return false;
        shift_left(leaf, i);
        set_count(leaf, leaf->count - 1);
        set_size(size_ - 1);
        rebalance(leaf, p);
        return true;
    }

    // Calls f(key, value) for the up to `count` smallest keys >= from, in key order, and
    // returns how many it visited. f runs under the shared lock: it must not update the tree.
    template <class F>
    std::size_t scan(const K& from, std::size_t count, F&& f) const {
        std::shared_lock lock(mutex_);
        std::size_t visited = 0;
        const leaf_node* leaf = descend(from, nullptr);
        std::size_t i = lower_index(leaf, from);
        while (leaf != nullptr && visited < count) {
            for (; i < leaf->count && visited < count; ++i, ++visited) f(leaf->keys[i], leaf->slots[i]);
            leaf = leaf->next;
            i = 0;
        }
        return visited;
    }

    std::size_t size() const {
        std::shared_lock lock(mutex_);
        return size_;
    }

private:
    friend class btree_checker<K, V, Fanout>;

    struct node_base {
        explicit node_base(bool is_leaf) : leaf(is_leaf) {}
        std::size_t count = 0;  // entries in use: keys[0..count), slots[0..count)
        const bool leaf;
    };
    struct leaf_node : node_base {
        using slot_type = V;
        leaf_node() : node_base(true) {}
        std::array<K, Fanout> keys{};
        std::array<V, Fanout> slots{};
        leaf_node* next = nullptr;  // the leaf to the right, nullptr for the last
    };
    struct inner_node : node_base {
        using slot_type = node_base*;
        inner_node() : node_base(false) {}
        std::array<K, Fanout> keys{};  // keys[i]: lower bound of slots[i]'s range
        std::array<node_base*, Fanout> slots{};
    };

    // The inner nodes from the root down to a leaf's parent, and the child taken in each.
    // Deep enough for any tree memory can hold: with min_fill >= 2, height h holds at least
    // 2^(h-1) keys.
    static constexpr std::size_t max_height = 64;
    struct step {
        inner_node* node;
        std::size_t child;
    };
    struct path {
        std::array<step, max_height> steps;
        std::size_t depth = 0;
        void push(inner_node* n, std::size_t child) {
            assert(depth < max_height);
            steps[depth++] = {n, child};
        }
        step pop() { return steps[--depth]; }
    };

    // ---- memory: the two functions the CpNvm port replaces ----------------------------

    template <class N>
    static N* allocate_node() {
        return new N();
    }
    static void free_node(node_base* n) {
        if (n->leaf)
            delete static_cast<leaf_node*>(n);
        else
            delete static_cast<inner_node*>(n);
    }

    // ---- node writes: every store to a node after allocate_node is in one of these ----

    template <class N>
    static void write_entry(N* n, std::size_t i, const K& key, const typename N::slot_type& slot) {
        n->keys[i] = key;
        n->slots[i] = slot;
    }
    template <class N>
    static void write_slot(N* n, std::size_t i, const typename N::slot_type& slot) {
        n->slots[i] = slot;
    }
    // Entries [from, count) move to [from + 1, count + 1), opening a gap at `from`.
    template <class N>
    static void shift_right(N* n, std::size_t from) {
        assert(n->count < Fanout);
        std::copy_backward(n->keys.data() + from, n->keys.data() + n->count, n->keys.data() + n->count + 1);
        std::copy_backward(n->slots.data() + from, n->slots.data() + n->count, n->slots.data() + n->count + 1);
    }
    // Entries (from, count) move to [from, count - 1), overwriting entry `from`.
    template <class N>
    static void shift_left(N* n, std::size_t from) {
        std::copy(n->keys.data() + from + 1, n->keys.data() + n->count, n->keys.data() + from);
        std::copy(n->slots.data() + from + 1, n->slots.data() + n->count, n->slots.data() + from);
    }
    // src's entries [from, from + n) go to dst's [at, at + n).
    template <class N>
    static void copy_entries(N* dst, std::size_t at, const N* src, std::size_t from, std::size_t n) {
        std::copy(src->keys.data() + from, src->keys.data() + from + n, dst->keys.data() + at);
        std::copy(src->slots.data() + from, src->slots.data() + from + n, dst->slots.data() + at);
    }
    static void set_count(node_base* n, std::size_t count) { n->count = count; }
    static void set_next(leaf_node* leaf, leaf_node* next) { leaf->next = next; }

    // ---- the tree's own words ----------------------------------------------------------

    void set_root(node_base* n) { root_ = n; }
    void set_size(std::size_t n) { size_ = n; }

    // ---- search --------------------------------------------------------------------------

    // The first entry of a leaf whose key is >= key (count if none).
    static std::size_t lower_index(const leaf_node* leaf, const K& key) {
        return static_cast<std::size_t>(std::lower_bound(leaf->keys.data(), leaf->keys.data() + leaf->count, key) -
                                        leaf->keys.data());
    }
    // The child of an inner node whose key range holds key: the last i with keys[i] <= key,
    // 0 if none (keys[0] is not consulted).
    static std::size_t child_index(const inner_node* n, const K& key) {
        const K* first = n->keys.data() + 1;
        return static_cast<std::size_t>(std::upper_bound(first, n->keys.data() + n->count, key) - first);
    }
    // The leaf whose key range holds key; records the way down in *p when p is given.
    leaf_node* descend(const K& key, path* p) const {
        node_base* n = root_;
        while (!n->leaf) {
            auto* in = static_cast<inner_node*>(n);
            const std::size_t i = child_index(in, key);
            if (p != nullptr) p->push(in, i);
            n = in->slots[i];
        }
        return static_cast<leaf_node*>(n);
    }

    // ---- insert ----------------------------------------------------------------------------

    bool upsert(const K& key, const V& value, bool assign) {
        path p;
        leaf_node* leaf = descend(key, &p);
        const std::size_t i = lower_index(leaf, key);
        if (i < leaf->count && leaf->keys[i] == key) {
            if (assign) write_slot(leaf, i, value);
            return false;
        }
        insert_entry_split(leaf, i, key, value, p);
        set_size(size_ + 1);
        return true;
    }

    // Puts (key, slot) at entry i of n, which has room.
    template <class N>
    static void insert_entry(N* n, std::size_t i, const K& key, const typename N::slot_type& slot) {
        shift_right(n, i);
        write_entry(n, i, key, slot);
        set_count(n, n->count + 1);
    }

    // Moves n's upper half into a new right sibling and returns it (linked after n if a leaf).
    template <class N>
    static N* split(N* n) {
        N* right = allocate_node<N>();
        const std::size_t keep = Fanout / 2;
        copy_entries(right, 0, n, keep, Fanout - keep);
        set_count(right, Fanout - keep);
        set_count(n, keep);
        if constexpr (std::is_same_v<N, leaf_node>) {
            set_next(right, n->next);
            set_next(n, right);
        }
        return right;
    }

    // Puts (key, slot) at entry i of n; if n is full, splits it first and hands the new
    // right half to n's parent (the last step of p), and so on up to the root.
    template <class N>
    void insert_entry_split(N* n, std::size_t i, const K& key, const typename N::slot_type& slot, path& p) {
        if (n->count < Fanout) {
            insert_entry(n, i, key, slot);
            return;
        }
        N* right = split(n);
        // Entry i goes where it keeps key order; never at right's entry 0 (i - keep >= 1),
        // so right->keys[0], a key of right's range, stays the bound for the parent.
        if (i <= n->count)
            insert_entry(n, i, key, slot);
        else
            insert_entry(right, i - n->count, key, slot);
        add_to_parent(n, right, right->keys[0], p);
    }

    // `right` was split off `left`, its keys >= sep: give it a parent entry.
    void add_to_parent(node_base* left, node_base* right, const K& sep, path& p) {
        if (p.depth == 0) {  // left was the root: the tree grows by one level
            auto* root = allocate_node<inner_node>();
            write_entry(root, 0, sep, left);  // the leftmost node's key 0: never read
            write_entry(root, 1, sep, right);
            set_count(root, 2);
            set_root(root);
            return;
        }
        const step parent = p.pop();
        insert_entry_split(parent.node, parent.child + 1, sep, right, p);
    }

    // ---- erase -----------------------------------------------------------------------------

    // n lost an entry; p leads to its parent. Restores min_fill from n upwards, then
    // collapses an inner root left with one child.
    void rebalance(node_base* n, path& p) {
        while (p.depth > 0 && n->count < min_fill) {
            const step parent = p.pop();
            if (n->leaf)
                fix_underflow<leaf_node>(parent.node, parent.child);
            else
                fix_underflow<inner_node>(parent.node, parent.child);
            n = parent.node;
        }
        if (n == root_ && !n->leaf && n->count == 1) {
            set_root(static_cast<inner_node*>(n)->slots[0]);
            free_node(n);
        }
    }

    // Child `child` of parent, of type N, is one entry below min_fill: it and a neighbour
    // (the left one if it has one) are merged if they fit in one node, else the neighbour,
    // which then has more than min_fill, gives it one entry.
    template <class N>
    static void fix_underflow(inner_node* parent, std::size_t child) {
        const std::size_t li = child > 0 ? child - 1 : 0;  // the pair is li, li + 1
        auto* left = static_cast<N*>(parent->slots[li]);
        auto* right = static_cast<N*>(parent->slots[li + 1]);
        if (left->count + right->count <= Fanout)
            merge(parent, li, left, right);
        else if (left->count > right->count)
            move_last_to_right(parent, li, left, right);
        else
            move_first_to_left(parent, li, left, right);
    }

    // An entry keeps its key wherever it moves: a leaf's key is the key, an inner node's is
    // its child's lower bound. Only the parent's bound for `right` changes on a move.
    template <class N>
    static void merge(inner_node* parent, std::size_t li, N* left, N* right) {
        copy_entries(left, left->count, right, 0, right->count);
        set_count(left, left->count + right->count);
        if constexpr (std::is_same_v<N, leaf_node>) set_next(left, right->next);
        shift_left(parent, li + 1);
        set_count(parent, parent->count - 1);
        free_node(right);
    }

    template <class N>
    static void move_last_to_right(inner_node* parent, std::size_t li, N* left, N* right) {
        const std::size_t last = left->count - 1;
        shift_right(right, 0);
        write_entry(right, 0, left->keys[last], left->slots[last]);
        set_count(right, right->count + 1);
        set_count(left, last);
        write_entry(parent, li + 1, right->keys[0], parent->slots[li + 1]);
    }

    template <class N>
    static void move_first_to_left(inner_node* parent, std::size_t li, N* left, N* right) {
        write_entry(left, left->count, right->keys[0], right->slots[0]);
        set_count(left, left->count + 1);
        shift_left(right, 0);
        set_count(right, right->count - 1);
        write_entry(parent, li + 1, right->keys[0], parent->slots[li + 1]);
    }

    static void free_subtree(node_base* n) {
        if (!n->leaf) {
            const auto* in = static_cast<inner_node*>(n);
            for (std::size_t i = 0; i < in->count; ++i) free_subtree(in->slots[i]);
        }
        free_node(n);
    }

    mutable lock_type mutex_;
    node_base* root_;  // a leaf (empty when the tree is) or an inner node of >= 2 children
    std::size_t size_ = 0;
};

}  // namespace ferrite::bench
