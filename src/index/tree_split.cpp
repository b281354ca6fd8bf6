// src/index/tree_split.cpp: splits ([MASSTREE]'s splits, docs/references.md): a full
// leaf splits into itself and a new right sibling, and the separator goes up hand over hand.
//
// Leaf split, under the leaf's lock: mark it "splitting" (readers spin in stable() or fail
// validation), build the new right leaf (locked, unreachable until linked), link it as `next`
// with a release store (a reader that walks right sees it whole), then rewrite the left leaf
// with its lower half and the new key. Its low key stays; the right leaf's low key is the
// separator, which is also the key the parent gets, so a leaf's range is always
// [low_key, next->low_key).
// Upward (insert_upward): the left node and the new right node stay locked until their
// parent holds the separator: the parent is locked (locked_parent: the parent pointer is
// re-read under the parent's lock, since a split of the parent may move the child) and
// marked before the child is unlocked, so a reader that takes the child's stable version
// after the split sees the parent changed and re-reads it. A full parent splits the same way
// (the middle key goes up, the children that move get their parent pointer under the
// parent's lock) and the loop goes one level up with the two halves still locked. A node
// without a parent is the root: a new root holding both halves is published (root_, release)
// and the old root's root bit cleared before the halves are unlocked.
// Sequential inserts: a key appended to the rightmost leaf leaves the full leaf full and
// starts the new one with the key alone ([MASSTREE] does the same), so ascending loads fill
// leaves; otherwise the left keeps 8 of the 15 keys.
//
// What differs from Masstree: the right leaf's low key is a field; interior nodes are
// rewritten whole under the splitting mark (readers restart from the root when an interior
// node split). Allocation: the new leaf, and interior nodes for as many levels as the tree
// has, are allocated before anything is marked, so std::bad_alloc leaves the tree unchanged;
// interior nodes come from a small per-thread stock that is refilled before each split and
// kept between splits. The durable tree takes them from its engine's arena instead (reserve()
// before anything is marked, the same guarantee), and logs every node it rewrites first.
#include <cstdint>
#include <new>
#include <vector>

#include "ferrite/index/tree.hpp"

namespace ferrite::index {
namespace {


// Raw storage for interior nodes, one stock per thread (shared by every tree: it is memory).
template <class K>
struct interior_stock {
    using interior = basic_interior<K>;
    std::vector<void*> blocks;
    ~interior_stock() {
        for (void* p : blocks) ::operator delete(p, std::align_val_t{alignof(interior)});
    }
    void fill(std::size_t n) {
        if (blocks.capacity() < n) blocks.reserve(n + 4);
        while (blocks.size() < n) blocks.push_back(::operator new(sizeof(interior), std::align_val_t{alignof(interior)}));
    }
    // Only after fill() for this split; the tree grew by more than one level since (another
    // thread's splits) if the stock is empty: then a plain allocation, and its failure ends
    // the process (std::terminate through noexcept), the one allocation that cannot throw cleanly.
    interior* make(std::uint64_t version) noexcept {
        if (blocks.empty()) return new interior(version);
        void* p = blocks.back();
        blocks.pop_back();
        return new (p) interior(version);
    }
};
// A function's thread_local, not a thread_local variable template: GCC 12 never ran the
// destructor of a thread_local variable template's instantiation at thread exit (every
// thread's leftover stock leaked; LeakSanitizer in the ASan build).
template <class K>
interior_stock<K>& stock() noexcept {
    thread_local interior_stock<K> s;
    return s;
}

// Children are never null here; saying so keeps GCC 12 from a false -Wstringop-overflow on the
// link's store (it cannot see that the copied children arrays hold no null).
void set_parent(node_base* child, node_base* parent) noexcept {
    if (child == nullptr) __builtin_unreachable();
    child->parent.store(parent, std::memory_order_release);
}
template <class K>
basic_interior<K>* parent_of(node_base* n) noexcept {
    return static_cast<basic_interior<K>*>(n->parent.load(std::memory_order_acquire));
}

}  // namespace

template <class K>
void basic_tree<K>::split_and_insert(leaf* l, unsigned p, K key, std::uint64_t value) {
    leaf* const old_next = l->next.load(std::memory_order_relaxed);
    const permutation perm(l->perm.load(std::memory_order_relaxed));
    K ks[leaf::width + 1];
    std::uint64_t vs[leaf::width + 1];
    for (unsigned q = 0, j = 0; q <= leaf::width; ++q) {
        if (q == p) {
            ks[j] = key;
            vs[j++] = value;
        }
        if (q == leaf::width) break;
        const unsigned slot = perm[q];
        ks[j] = l->keys[slot].load(std::memory_order_relaxed);
        vs[j++] = l->value(slot).load(std::memory_order_relaxed);
    }
    const unsigned left_n = (old_next == nullptr && p == leaf::width) ? leaf::width : 8;
    const unsigned right_n = leaf::width + 1 - left_n;

    leaf* right;
    try {
        if (d_ != nullptr) {
            d_->reserve(height_.load(std::memory_order_relaxed) + 2);
            right = d_->make_leaf(node_version::lock_bit, ks[left_n]);
        } else {
            stock<K>().fill(height_.load(std::memory_order_relaxed) + 1);
            right = new leaf(node_version::lock_bit, ks[left_n]);
        }
    } catch (...) {
        l->version.unlock();  // nothing changed
        throw;
    }
    if (d_ != nullptr) d_->before_rewrite(l);  // the split rewrites l: external log
    l->version.mark_split();
    for (unsigned i = 0; i < right_n; ++i) {
        right->keys[i].store(ks[left_n + i], std::memory_order_relaxed);
        right->value(i).store(vs[left_n + i], std::memory_order_relaxed);
    }
    right->perm.store(permutation::identity(leaf::width, right_n).value(), std::memory_order_relaxed);
    right->next.store(old_next, std::memory_order_relaxed);
    right->parent.store(l->parent.load(std::memory_order_relaxed), std::memory_order_relaxed);
    l->next.store(right, std::memory_order_release);  // the right leaf whole before it is reachable
    for (unsigned i = 0; i < left_n; ++i) {
        l->keys[i].store(ks[i], std::memory_order_release);
        l->value(i).store(vs[i], std::memory_order_release);
    }
    l->perm.store(permutation::identity(leaf::width, left_n).value(), std::memory_order_release);
    l->modstate = leaf::modstate_insert;  // the split's version change covers every old copy
    insert_upward(l, right, ks[left_n]);
}

template <class K>
auto basic_tree<K>::new_interior(std::uint64_t version) noexcept -> interior* {
    return d_ != nullptr ? d_->make_interior(version) : stock<K>().make(version);
}

template <class K>
auto basic_tree<K>::locked_parent(node_base* n) noexcept -> interior* {
    for (;;) {
        interior* p = parent_of<K>(n);
        if (p == nullptr) return nullptr;  // n is the root, and stays it: growth needs n's lock
        p->version.lock();
        if (parent_of<K>(n) == p) return p;
        p->version.unlock();  // p split and n moved to its new sibling
    }
}

template <class K>
void basic_tree<K>::insert_upward(node_base* left, node_base* right, K separator) {
    for (;;) {
        interior* p = locked_parent(left);
        if (p == nullptr) {  // left was the root: grow
            interior* root = new_interior(node_version::root_bit);
            root->keys[0].store(separator, std::memory_order_relaxed);
            root->children[0].store(left, std::memory_order_relaxed);
            root->children[1].store(right, std::memory_order_relaxed);
            root->nkeys.store(1, std::memory_order_relaxed);
            set_parent(left, root);
            set_parent(right, root);
            height_.fetch_add(1, std::memory_order_relaxed);
            root_.store(root, std::memory_order_release);
            left->version.clear_root();
            left->version.unlock();
            right->version.unlock();
            return;
        }
        if (d_ != nullptr) d_->before_rewrite(p);  // external log before p changes
        const unsigned n = static_cast<unsigned>(p->nkeys.load(std::memory_order_relaxed));
        unsigned at = 0;  // the new key's index: after every key <= separator
        while (at < n && p->keys[at].load(std::memory_order_relaxed) <= separator) ++at;
        if (n < interior::max_keys) {
            p->version.mark_insert();
            for (unsigned i = n; i > at; --i) {
                p->keys[i].store(p->keys[i - 1].load(std::memory_order_relaxed), std::memory_order_release);
                p->children[i + 1].store(p->children[i].load(std::memory_order_relaxed), std::memory_order_release);
            }
            p->keys[at].store(separator, std::memory_order_release);
            p->children[at + 1].store(right, std::memory_order_release);
            p->nkeys.store(n + 1, std::memory_order_release);
            set_parent(right, p);
            left->version.unlock();
            right->version.unlock();
            p->version.unlock();
            return;
        }
        // p is full: 16 keys and 17 children with the new pair, split 8 | middle | 7.
        // Lazy recovery: every child of p is recovered (with p as its parent) before any
        // moves, so that a late first access cannot set a moved child's parent back to p.
        if (d_ != nullptr)
            for (unsigned i = 0; i <= n; ++i) d_->recovered_nothrow(p->children[i].load(std::memory_order_relaxed), p);
        K ks[interior::max_keys + 1];
        node_base* cs[interior::max_keys + 2];
        for (unsigned i = 0, j = 0; i < n; ++i) {
            if (i == at) ks[j++] = separator;
            ks[j++] = p->keys[i].load(std::memory_order_relaxed);
        }
        if (at == n) ks[n] = separator;
        for (unsigned i = 0, j = 0; i <= n; ++i) {
            cs[j++] = p->children[i].load(std::memory_order_relaxed);
            if (i == at) cs[j++] = right;
        }
        constexpr unsigned left_keys = 8, right_keys = interior::max_keys - left_keys;  // 8 and 7
        interior* sibling = new_interior(node_version::lock_bit);
        p->version.mark_split();
        for (unsigned i = 0; i < right_keys; ++i) sibling->keys[i].store(ks[left_keys + 1 + i], std::memory_order_relaxed);
        for (unsigned i = 0; i <= right_keys; ++i) {
            sibling->children[i].store(cs[left_keys + 1 + i], std::memory_order_relaxed);
            set_parent(cs[left_keys + 1 + i], sibling);
        }
        sibling->nkeys.store(right_keys, std::memory_order_relaxed);
        sibling->parent.store(p->parent.load(std::memory_order_relaxed), std::memory_order_relaxed);
        for (unsigned i = 0; i < left_keys; ++i) p->keys[i].store(ks[i], std::memory_order_release);
        for (unsigned i = 0; i <= left_keys; ++i) {
            p->children[i].store(cs[i], std::memory_order_release);
            set_parent(cs[i], p);
        }
        p->nkeys.store(left_keys, std::memory_order_release);
        left->version.unlock();
        right->version.unlock();
        left = p;
        right = sibling;
        separator = ks[left_keys];
    }
}

// The members defined here, for both key widths (tree.hpp's extern templates).
#define FERRITE_INDEX_TREE_SPLIT(K)                                                              \
    template void basic_tree<K>::split_and_insert(basic_leaf<K>*, unsigned, K, std::uint64_t); \
    template basic_interior<K>* basic_tree<K>::new_interior(std::uint64_t) noexcept;           \
    template basic_interior<K>* basic_tree<K>::locked_parent(node_base*) noexcept;             \
    template void basic_tree<K>::insert_upward(node_base*, node_base*, K);
FERRITE_INDEX_TREE_SPLIT(std::uint64_t)
FERRITE_INDEX_TREE_SPLIT(key128)
#undef FERRITE_INDEX_TREE_SPLIT

}  // namespace ferrite::index
