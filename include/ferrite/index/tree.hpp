// ferrite/index/tree.hpp: a concurrent ordered index of 8-byte or 16-byte keys and 8-byte
// values, the Masstree-style B+-tree that InCLL makes durable (issue 21). This is the volatile
// tree (benchmark subjects tree-volatile, tree-volatile-k16); the durable one adds undo words
// to the same nodes. basic_tree<K>: K is std::uint64_t (`tree`) or key128 (`tree16`, key.hpp).
//
//   ferrite::index::tree t;
//   t.insert_or_assign(7, 70);                       // true: inserted
//   t.insert(7, 71);                                 // false: present, unchanged
//   std::optional<std::uint64_t> v = t.get(7);       // 70
//   t.scan(5, 100, [](std::uint64_t k, std::uint64_t v) { ... });   // from a key, at most 100
//   t.scan_range(5, 9, [](std::uint64_t k, std::uint64_t v) { ... });  // keys in [5, 9)
//   t.erase(7);                                       // true: was present
//
// Algorithm: [MASSTREE] (Mao, Kohler, Morris, EuroSys 2012; docs/references.md), its
// concurrency control for one layer of the tree (8-byte keys); [NVM] ch. 3 describes the same
// leaf (section 3.2.1):
//   * readers take no lock and write nothing shared (tree_read.cpp): they descend from the
//     root, validating each interior node's version after reading the child pointer and
//     taking the child's stable version, hand over hand; at the leaf they read the
//     permutation, the key and the value, and accept them if the leaf's version did not
//     change; if it split they walk right along `next` while the key is >= the next leaf's
//     low key, and read again.
//   * writers find the leaf as readers do, lock it, and walk right while the key is >= the
//     next leaf's low key (unlocking one leaf before locking the next: low keys never
//     change; tree_write.cpp), and change it under the lock: an update stores the value
//     in place; an insert writes a free slot and publishes it with one store of the
//     permutation (marking the version "inserting" only when the slot may have been freed by
//     an erase that a reader's copy of the permutation predates); an erase stores the
//     permutation without the key.
//   * a full leaf splits (tree_split.cpp): marked "splitting", the upper keys move to a new
//     right sibling, linked as `next` before the leaf drops them; then the separator goes up
//     hand over hand: the child stays locked until its parent (locked, marked) holds the new
//     sibling, an interior node that is full splits the same way, and a root that splits
//     gets a new root above it.
//   * scans (below, and read_batch in tree_read.cpp) copy one leaf at a time into a buffer
//     under its version, then follow `next` from the next leaf's low key. A scan is not one
//     atomic snapshot (as in Masstree): each leaf's part is, keys come out in increasing
//     order, and every key present for the whole scan is seen.
//
// What differs from Masstree, and why:
//   * no layers, no suffixes: keys are 8 bytes (one Masstree layer) or 16 bytes as one wide
//     key (key128 compared as two unsigned words, stored as two atomic words). Masstree would
//     make a 16-byte key two layers (a slot whose value is the next layer's tree). Wide keys
//     keep every concurrency and crash argument of the 8-byte tree as it is: the algorithms
//     are one template (definitions in the .cpp files, explicitly instantiated for the two
//     widths, so the 8-byte tree compiles to the code it had), the nodes grow from five lines
//     to seven (nodes.hpp) and a torn 16-byte key read is caught by the version validation
//     readers already do (key.hpp). The cost against layers: every key of a leaf takes 16
//     bytes even when most keys share their first 8 (layers would store that prefix once),
//     and comparisons read two words.
//   * no node is ever freed while the tree lives: erase never merges or removes nodes (an
//     empty leaf stays linked and is skipped by scans), and a split keeps the node it splits
//     (the left half stays in place). Nothing a reader holds can be unlinked, so there is no
//     reclamation (sync/epoch_domain.hpp is not needed); the destructor frees every node.
//     The cost: a tree that shrinks keeps its nodes.
//   * each leaf stores its lower bound (nodes.hpp), so slot 0 needs no special rule.
//   * a reader that finds an interior node split since it was read restarts from the root
//     (Masstree restarts only if the key is past the node's last key).
//   * the root is a pointer in the tree object, read with acquire; a reader that reads a
//     node that is no longer the root (the root bit is cleared under the old root's lock
//     while the new root is published) reads the pointer again.
//
// Concurrency contract: every member function may run concurrently with any other on the same
// tree except the constructor and destructor. insert_or_assign, insert, erase and get are
// linearizable; scans are as described above. The scan callback runs with no lock held and
// may call back into the tree.
//
// Crash consistency: none in tree-volatile (d_ null). The durable tree (durable_tree.hpp)
// constructs it over an InCLL engine (incll.hpp, where the argument is): every store to a node
// is preceded by the engine's hook for it (one predictable branch each in tree-volatile).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "ferrite/index/incll.hpp"
#include "ferrite/index/key.hpp"
#include "ferrite/index/nodes.hpp"

namespace ferrite::index {

// Shape, for tests and statistics (not linearizable with concurrent writers).
struct tree_shape {
    std::size_t leaves = 0, interiors = 0, height = 0;
};

template <class K>
class basic_tree {
    static_assert(is_index_key<K>, "the index's keys are std::uint64_t or index::key128");

public:
    using key_type = K;
    using leaf = basic_leaf<K>;
    using interior = basic_interior<K>;
    using engine = basic_incll<K>;

    basic_tree();
    // The durable tree's (durable_tree.hpp): adopts a recovered root in the engine's pool
    // region; every write goes through the engine's hooks; the destructor frees nothing.
    basic_tree(engine& e, node_base* root, unsigned height);
    ~basic_tree();
    basic_tree(const basic_tree&) = delete;
    basic_tree& operator=(const basic_tree&) = delete;

    // The value of `key`, if present.
    // (Durable tree with lazy recovery: every operation throws damaged_pool if a node it
    // reaches is found damaged at its first access.)
    std::optional<std::uint64_t> get(K key) const;
    // Sets key -> value; true if the key was not present (inserted), false if it was (updated).
    // Throws std::bad_alloc (the tree unchanged) if a split cannot allocate.
    bool insert_or_assign(K key, std::uint64_t value) { return put(key, value, true); }
    // Sets key -> value only if the key is absent; true if it inserted. Throws as insert_or_assign.
    bool insert(K key, std::uint64_t value) { return put(key, value, false); }
    // Removes `key`; true if it was present. (Durable tree: may end a full log's epoch first.)
    bool erase(K key);

    // Calls f(key, value) for the keys >= from in increasing order, at most `limit` of them;
    // returns how many it called f for.
    template <class F>
    std::size_t scan(K from, std::size_t limit, F&& f) const {
        return scan_impl(from, max_key<K>(), true, limit, f);
    }
    // Calls f(key, value) for the keys in [lo, hi) in increasing order; returns the count.
    template <class F>
    std::size_t scan_range(K lo, K hi, F&& f) const {
        if (lo >= hi) return 0;
        return scan_impl(lo, hi, false, std::numeric_limits<std::size_t>::max(), f);
    }

    using shape = tree_shape;
    shape describe() const;

    // One leaf's keys >= from, copied under the leaf's version (read_batch).
    struct batch {
        K keys[leaf::width];
        std::uint64_t values[leaf::width];
        unsigned count = 0;
        const leaf* next = nullptr;  // the leaf after the copied one, or null
    };

private:
    bool put(K key, std::uint64_t value, bool assign);
    // The leaf whose range held `key` when its stable version `v` was taken.
    const leaf* find_leaf(K key, std::uint64_t& v) const;
    // After l changed under a reader: its stable version, and the leaf right of it holding key.
    const leaf* settle(const leaf* l, K key, std::uint64_t& v) const;
    // l, read from a `next` link, recovered (lazy recovery: by a descent to its low key).
    const leaf* reached_by_next(const leaf* l) const;
    // Copies the pairs of the leaf holding `from` (reached from l, whose low key is <= from).
    void read_batch(const leaf* l, K from, batch& out) const;
    // The leaf holding `key`, locked.
    leaf* lock_leaf(K key);
    // Inserts into the full, locked leaf l at position p by splitting it; unlocks everything.
    void split_and_insert(leaf* l, unsigned p, K key, std::uint64_t value);
    // Puts (separator, right) above left and right (both locked, marked); unlocks them.
    void insert_upward(node_base* left, node_base* right, K separator);
    interior* locked_parent(node_base* n) noexcept;
    interior* new_interior(std::uint64_t version) noexcept;

    template <class F>
    std::size_t scan_impl(K lo, K hi, bool limited, std::size_t limit, F& f) const {
        std::size_t done = 0;
        if (limited && limit == 0) return 0;
        std::uint64_t v;
        const leaf* l = find_leaf(lo, v);
        K from = lo;
        batch b;
        for (;;) {
            read_batch(l, from, b);
            for (unsigned i = 0; i < b.count; ++i) {
                if (!limited && b.keys[i] >= hi) return done;
                f(b.keys[i], b.values[i]);
                if (++done == limit) return done;
            }
            if (b.next == nullptr) return done;
            l = reached_by_next(b.next);
            from = l->low_key;
            if (!limited && from >= hi) return done;
        }
    }

    std::atomic<node_base*> root_;
    std::atomic<unsigned> height_{1};  // levels; grows under the old root's lock (the stock's size)
    engine* const d_ = nullptr;        // the durable tree's engine; null: tree-volatile
};

extern template class basic_tree<std::uint64_t>;
extern template class basic_tree<key128>;
using tree = basic_tree<std::uint64_t>;
using tree16 = basic_tree<key128>;

}  // namespace ferrite::index
