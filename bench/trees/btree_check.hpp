// bench/trees/btree_check.hpp: the structural invariants of bench::btree (btree.hpp),
// checked by walking the whole tree under its shared lock. Used by the tests, and meant for
// the CpNvm port, which checks the tree a restart hands back.
//
// check_btree(t) reports the first broken invariant of:
//   - order: a leaf's keys strictly increase; an inner node's keys 1..count strictly
//     increase, and every key under child i lies in [key i, key i+1), within the bounds
//     the node's own parent gave it; an inner node's key 0 equals the lower bound its
//     parent holds for it (where it has one: not on the leftmost path);
//   - fill: every node holds at most fanout entries; every node but the root at least
//     min_fill; an inner root at least two children;
//   - shape: every leaf at the same depth;
//   - leaf chain: following `next` from the leftmost leaf meets the leaves in key order,
//     each once, and ends with nullptr after the rightmost;
//   - size: the leaves hold size() keys.
// It also reports the height and the node counts (the tests check that a run reached deep
// trees and shrank them again).
#pragma once

#include <cstddef>
#include <optional>
#include <shared_mutex>
#include <string>

#include "bench/trees/btree.hpp"

namespace ferrite::bench {

struct btree_report {
    std::string problem;  // empty when every invariant holds
    std::size_t height = 0;  // levels: 1 for a lone root leaf
    std::size_t leaves = 0;
    std::size_t inner_nodes = 0;
    std::size_t keys = 0;  // counted in the leaves
    bool ok() const { return problem.empty(); }
};

template <class K, class V, std::size_t Fanout>
class btree_checker {
    using tree = btree<K, V, Fanout>;
    using node_base = typename tree::node_base;
    using leaf_node = typename tree::leaf_node;
    using inner_node = typename tree::inner_node;

public:
    static btree_report check(const tree& t) {
        std::shared_lock lock(t.mutex_);
        btree_checker c(t);
        if (t.root_ == nullptr) {
            c.fail("the root is null");
        } else {
            c.walk(t.root_, 1, std::nullopt, std::nullopt);
            if (c.r_.ok() && c.last_leaf_ != nullptr && c.last_leaf_->next != nullptr)
                c.fail("the rightmost leaf's next is not null");
            if (c.r_.ok() && c.r_.keys != t.size_)
                c.fail("size() is " + std::to_string(t.size_) + " but the leaves hold " + std::to_string(c.r_.keys));
        }
        return c.r_;
    }

private:
    explicit btree_checker(const tree& t) : t_(t) {}

    void fail(const std::string& what) {
        if (r_.ok()) r_.problem = what;
    }
    static std::string where(const char* kind, std::size_t depth) {
        return std::string(kind) + " at depth " + std::to_string(depth) + ": ";
    }

    // Keys under n lie in [lo, hi) (no bound where nullopt).
    void walk(const node_base* n, std::size_t depth, const std::optional<K>& lo, const std::optional<K>& hi) {
        if (!r_.ok()) return;
        if (depth > tree::max_height) return fail("deeper than max_height: a cycle?");
        const bool root = n == t_.root_;
        const char* kind = n->leaf ? "leaf" : "inner node";
        if (n->count > Fanout) return fail(where(kind, depth) + std::to_string(n->count) + " entries > fanout");
        if (!root && n->count < tree::min_fill)
            return fail(where(kind, depth) + std::to_string(n->count) + " entries < min_fill");
        if (n->leaf)
            check_leaf(static_cast<const leaf_node*>(n), depth, lo, hi);
        else
            check_inner(static_cast<const inner_node*>(n), depth, root, lo, hi);
    }

    void check_leaf(const leaf_node* leaf, std::size_t depth, const std::optional<K>& lo, const std::optional<K>& hi) {
        ++r_.leaves;
        r_.keys += leaf->count;
        if (r_.height == 0) r_.height = depth;
        if (depth != r_.height)
            return fail(where("leaf", depth) + "not at the depth of the first leaf, " + std::to_string(r_.height));
        if (last_leaf_ != nullptr && last_leaf_->next != leaf)
            return fail(where("leaf", depth) + "leaf " + std::to_string(r_.leaves) +
                        " is not its left neighbour's next");
        last_leaf_ = leaf;
        for (std::size_t i = 0; i < leaf->count; ++i) {
            const K& k = leaf->keys[i];
            if (i > 0 && !(leaf->keys[i - 1] < k))
                return fail(where("leaf", depth) + "keys not increasing at entry " + std::to_string(i));
            if ((lo && k < *lo) || (hi && !(k < *hi)))
                return fail(where("leaf", depth) + "entry " + std::to_string(i) + " outside its parent's bounds");
        }
    }

    void check_inner(const inner_node* n, std::size_t depth, bool root, const std::optional<K>& lo,
                     const std::optional<K>& hi) {
        ++r_.inner_nodes;
        if (root && n->count < 2) return fail(where("inner root", depth) + "fewer than two children");
        if (lo && !(n->keys[0] == *lo)) return fail(where("inner node", depth) + "key 0 is not its lower bound");
        for (std::size_t i = 1; i < n->count; ++i) {
            const K& k = n->keys[i];
            if (i > 1 && !(n->keys[i - 1] < k))
                return fail(where("inner node", depth) + "separators not increasing at entry " + std::to_string(i));
            if ((lo && !(*lo < k)) || (hi && !(k < *hi)))
                return fail(where("inner node", depth) + "separator " + std::to_string(i) +
                            " outside its parent's bounds");
        }
        for (std::size_t i = 0; i < n->count && r_.ok(); ++i) {
            if (n->slots[i] == nullptr) return fail(where("inner node", depth) + "null child " + std::to_string(i));
            const std::optional<K> child_lo = i == 0 ? lo : std::optional<K>(n->keys[i]);
            const std::optional<K> child_hi = i + 1 < n->count ? std::optional<K>(n->keys[i + 1]) : hi;
            walk(n->slots[i], depth + 1, child_lo, child_hi);
        }
    }

    const tree& t_;
    btree_report r_;
    const leaf_node* last_leaf_ = nullptr;
};

// The invariants of t (see the header comment); takes t's lock shared.
template <class K, class V, std::size_t Fanout>
btree_report check_btree(const btree<K, V, Fanout>& t) {
    return btree_checker<K, V, Fanout>::check(t);
}

}  // namespace ferrite::bench
