// src/index/tree_write.cpp: the index's writers that change one leaf (tree.hpp, [MASSTREE]
// inserts and removes): insert_or_assign, insert and erase under the leaf's lock, and the tree's
// life (construction; destruction frees every node, since none is freed before).
#include <cstdint>
#include <new>
#include <optional>

#include "ferrite/index/tree.hpp"

namespace ferrite::index {
namespace {

template <class K>
void free_subtree(node_base* n) noexcept {
    if (n->is_leaf()) {
        delete static_cast<basic_leaf<K>*>(n);
        return;
    }
    auto* in = static_cast<basic_interior<K>*>(n);
    const std::uint64_t k = in->nkeys.load(std::memory_order_relaxed);
    for (std::uint64_t i = 0; i <= k; ++i) free_subtree<K>(in->children[i].load(std::memory_order_relaxed));
    delete in;
}

// The position of the first live key >= key in the locked leaf l, and whether it equals key.
template <class K>
unsigned position_of(const basic_leaf<K>* l, permutation perm, K key, bool& equal) noexcept {
    const unsigned n = perm.size();
    for (unsigned p = 0; p < n; ++p) {
        const K k = l->keys[perm[p]].load(std::memory_order_relaxed);
        if (k >= key) {
            equal = k == key;
            return p;
        }
    }
    equal = false;
    return n;
}

}  // namespace

template <class K>
basic_tree<K>::basic_tree() : root_(new leaf(node_version::root_bit, K{})) {}

template <class K>
basic_tree<K>::basic_tree(engine& e, node_base* root, unsigned height) : root_(root), height_(height), d_(&e) {
    e.attach(&root_, &height_);
}

template <class K>
basic_tree<K>::~basic_tree() {
    if (d_ == nullptr) free_subtree<K>(root_.load(std::memory_order_relaxed));  // a pool's nodes stay
}

template <class K>
auto basic_tree<K>::lock_leaf(K key) -> leaf* {
    std::uint64_t v;
    auto* l = const_cast<leaf*>(find_leaf(key, v));
    l->version.lock();
    // Under l's lock its `next` cannot change (only l's split changes it), and low keys never
    // change: the key belongs to l unless it is >= the next leaf's low key.
    for (;;) {
        leaf* next = l->next.load(std::memory_order_acquire);
        if (next == nullptr || key < next->low_key) return l;
        l->version.unlock();
        l = const_cast<leaf*>(reached_by_next(next));  // no lock held if it throws
        l->version.lock();
    }
}

template <class K>
bool basic_tree<K>::put(K key, std::uint64_t value, bool assign) {
    std::optional<typename engine::op_scope> scope;
    if (d_ != nullptr) scope.emplace(d_);
    leaf* l = lock_leaf(key);
    permutation perm(l->perm.load(std::memory_order_relaxed));
    bool equal = false;
    const unsigned p = position_of(l, perm, key, equal);
    if (equal) {  // LP: the value's store (a reader sees the old or the new value, both whole)
        if (assign) {
            if (d_ != nullptr) d_->before_value_store(l, perm[p]);
            l->value(perm[p]).store(value, std::memory_order_release);
        }
        l->version.unlock();
        return false;
    }
    if (perm.size() == leaf::width) {
        split_and_insert(l, p, key, value);  // unlocks
        return true;
    }
    const unsigned slot = perm.back();
    if (l->modstate == leaf::modstate_remove) {
        // The free slot may have been freed by an erase that a reader's copy of the
        // permutation predates: that reader could read this slot's new key in its old
        // position. Marking the version makes it retry ([MASSTREE]'s removes).
        l->version.mark_insert();
        l->modstate = leaf::modstate_insert;
    }
    if (d_ != nullptr) d_->before_slot_write(l, slot);
    l->keys[slot].store(key, std::memory_order_release);
    l->value(slot).store(value, std::memory_order_release);
    perm.insert_from_back(p);
    if (d_ != nullptr) d_->before_perm_store(l);
    l->perm.store(perm.value(), std::memory_order_release);  // LP: the key set's one store
    l->version.unlock();
    return true;
}

template <class K>
bool basic_tree<K>::erase(K key) {
    std::optional<typename engine::op_scope> scope;
    if (d_ != nullptr) scope.emplace(d_);
    leaf* l = lock_leaf(key);
    permutation perm(l->perm.load(std::memory_order_relaxed));
    bool equal = false;
    const unsigned p = position_of(l, perm, key, equal);
    if (!equal) {
        l->version.unlock();
        return false;
    }
    perm.remove(p);
    if (d_ != nullptr) d_->before_perm_store(l);
    l->perm.store(perm.value(), std::memory_order_release);  // LP
    l->modstate = leaf::modstate_remove;
    l->version.unlock();
    return true;
}

// The members defined here, and the header's inline ones (the extern templates keep an
// unoptimised build from instantiating them anywhere else), for both key widths.
#define FERRITE_INDEX_TREE_WRITE(K)                                      \
    template basic_tree<K>::basic_tree();                                \
    template basic_tree<K>::basic_tree(basic_incll<K>&, node_base*, unsigned); \
    template basic_tree<K>::~basic_tree();                               \
    template basic_leaf<K>* basic_tree<K>::lock_leaf(K);                 \
    template bool basic_tree<K>::put(K, std::uint64_t, bool);            \
    template bool basic_tree<K>::erase(K);                              \
    template bool basic_tree<K>::insert_or_assign(K, std::uint64_t);    \
    template bool basic_tree<K>::insert(K, std::uint64_t);
FERRITE_INDEX_TREE_WRITE(std::uint64_t)
FERRITE_INDEX_TREE_WRITE(key128)
#undef FERRITE_INDEX_TREE_WRITE

}  // namespace ferrite::index
