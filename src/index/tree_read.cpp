// src/index/tree_read.cpp: the index's optimistic readers (tree.hpp, [MASSTREE]'s readers):
// the descent to a leaf, get, and the per-leaf copy that scans are made of. No lock, no
// shared write; every load of a node's contents is an acquire load (node_version.hpp says why
// that orders it before the validating load of the version).
#include <cstdint>
#include <optional>

#include "ferrite/error.hpp"
#include "ferrite/index/tree.hpp"

namespace ferrite::index {
namespace {

template <class K>
const basic_leaf<K>* as_leaf(const node_base* n) noexcept {
    return static_cast<const basic_leaf<K>*>(n);
}
template <class K>
const basic_interior<K>* as_interior(const node_base* n) noexcept {
    return static_cast<const basic_interior<K>*>(n);
}

// A node's five lines requested at once, before the version is read, so the misses overlap
// instead of following one another through the search ([MASSTREE] prefetches nodes the same way).
template <class K>
void prefetch_node(const node_base* n) noexcept {
    static_assert(sizeof(basic_leaf<K>) == sizeof(basic_interior<K>) && sizeof(basic_leaf<K>) % 64 == 0);
    const char* p = reinterpret_cast<const char*>(n);
    for (unsigned line = 0; line < sizeof(basic_leaf<K>) / 64; ++line) __builtin_prefetch(p + 64 * line);
}

}  // namespace

// After the leaf l changed under a reader: its stable version again, and, if it split, the
// leaf to its right that now holds `key` (keys only ever move right: a split moves the upper
// half to a new next leaf, and leaves never merge).
template <class K>
auto basic_tree<K>::settle(const leaf* l, K key, std::uint64_t& v) const -> const leaf* {
    v = l->version.stable();
    for (;;) {
        const leaf* next = l->next.load(std::memory_order_acquire);
        if (next == nullptr || key < next->low_key) return l;  // low_key: fixed, readable before recovery
        l = reached_by_next(next);
        v = l->version.stable();
    }
}

template <class K>
auto basic_tree<K>::reached_by_next(const leaf* l) const -> const leaf* {
    if (d_ == nullptr || d_->is_recovered(l)) return l;
    // Not yet recovered (lazy recovery): the descent to its low key recovers it with its
    // parent (an old leaf's range still starts at its low key; only its parent can be split).
    std::uint64_t v;
    (void)find_leaf(l->low_key, v);
    if (!d_->is_recovered(l))
        throw_damaged(pool_errc::damaged_object, "incll tree", "",
                      "a leaf's next link names a leaf that no descent from the root reaches");
    return l;
}

template <class K>
auto basic_tree<K>::find_leaf(K key, std::uint64_t& v) const -> const leaf* {
retry:
    const node_base* n = root_.load(std::memory_order_acquire);
    prefetch_node<K>(n);
    v = n->version.stable();
    if (!node_version::is_root(v)) goto retry;  // a new root is being published above it
    for (unsigned depth = 0; !node_version::is_leaf(v);) {
        const interior* in = as_interior<K>(n);
        const node_base* child = in->child_for(key);
        if (child == nullptr) goto retry;  // read in the middle of a change
        if (d_ != nullptr) {
            // Lazy recovery: the child rolled back before its version is read. A damaged
            // pool could make a cycle of links: the depth bounds the descent.
            if (++depth > 64)
                throw_damaged(pool_errc::damaged_object, "incll tree", "", "a descent is deeper than 64 levels");
            d_->recovered(const_cast<node_base*>(child), const_cast<interior*>(in));
        }
        prefetch_node<K>(child);
        const std::uint64_t cv = child->version.stable();
        if (!in->version.has_changed(v)) {  // the pointer was right when the child's version was taken
            n = child;
            v = cv;
            continue;
        }
        const std::uint64_t now = in->version.stable();
        if (node_version::has_split(v, now)) goto retry;  // the key may have left this subtree
        v = now;                                           // an insert: read the node again
    }
    return as_leaf<K>(n);
}

template <class K>
std::optional<std::uint64_t> basic_tree<K>::get(K key) const {
    std::uint64_t v;
    const leaf* l = find_leaf(key, v);
    for (;;) {
        const permutation perm(l->perm.load(std::memory_order_acquire));
        const unsigned n = perm.size();
        bool found = false;
        std::uint64_t value = 0;
        for (unsigned p = 0; p < n; ++p) {
            const unsigned slot = perm[p];
            const K k = l->keys[slot].load(std::memory_order_acquire);
            if (k == key) {
                value = l->value(slot).load(std::memory_order_acquire);
                found = true;
                break;
            }
            if (k > key) break;
        }
        if (!l->version.has_changed(v)) return found ? std::optional<std::uint64_t>(value) : std::nullopt;
        l = settle(l, key, v);
    }
}

template <class K>
void basic_tree<K>::read_batch(const leaf* l, K from, batch& out) const {
    std::uint64_t v;
    l = settle(l, from, v);
    for (;;) {
        const leaf* next = l->next.load(std::memory_order_acquire);
        const permutation perm(l->perm.load(std::memory_order_acquire));
        const unsigned n = perm.size();
        unsigned count = 0;
        for (unsigned p = 0; p < n; ++p) {
            const unsigned slot = perm[p];
            const K k = l->keys[slot].load(std::memory_order_acquire);
            if (k < from) continue;
            out.keys[count] = k;
            out.values[count] = l->value(slot).load(std::memory_order_acquire);
            ++count;
        }
        if (!l->version.has_changed(v)) {  // the copy, and `next`, are one state of the leaf
            out.count = count;
            out.next = next;
            return;
        }
        l = settle(l, from, v);
    }
}

template <class K>
tree_shape basic_tree<K>::describe() const {
    if (d_ != nullptr) d_->recover_all();  // lazy recovery: every node, before it is counted
    shape s;
    const node_base* n = root_.load(std::memory_order_acquire);
    while (!n->is_leaf()) {
        ++s.height;
        n = as_interior<K>(n)->children[0].load(std::memory_order_acquire);
    }
    ++s.height;
    for (const leaf* l = as_leaf<K>(n); l != nullptr; l = l->next.load(std::memory_order_acquire)) ++s.leaves;
    // interior nodes: count level by level from the root down, through the children arrays
    struct walker {
        static std::size_t count(const node_base* n) {
            if (n->is_leaf()) return 0;
            const interior* in = as_interior<K>(n);
            std::size_t c = 1;
            const std::uint64_t k = in->nkeys.load(std::memory_order_acquire);
            for (std::uint64_t i = 0; i <= k; ++i) c += count(in->children[i].load(std::memory_order_acquire));
            return c;
        }
    };
    s.interiors = walker::count(root_.load(std::memory_order_acquire));
    return s;
}

// The members defined here, for both key widths (tree.hpp's extern templates).
#define FERRITE_INDEX_TREE_READ(K)                                                                      \
    template const basic_leaf<K>* basic_tree<K>::settle(const basic_leaf<K>*, K, std::uint64_t&) const; \
    template const basic_leaf<K>* basic_tree<K>::reached_by_next(const basic_leaf<K>*) const;           \
    template const basic_leaf<K>* basic_tree<K>::find_leaf(K, std::uint64_t&) const;                    \
    template std::optional<std::uint64_t> basic_tree<K>::get(K) const;                                  \
    template void basic_tree<K>::read_batch(const basic_leaf<K>*, K, batch&) const;                     \
    template tree_shape basic_tree<K>::describe() const;
FERRITE_INDEX_TREE_READ(std::uint64_t)
FERRITE_INDEX_TREE_READ(key128)
#undef FERRITE_INDEX_TREE_READ

}  // namespace ferrite::index
