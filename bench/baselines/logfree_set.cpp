// bench/baselines/logfree_set.cpp: the log-free list / hash set (see the header).
#include "bench/baselines/logfree_set.hpp"

#include <bit>
#include <new>
#include <vector>

namespace ferrite::bench::logfree {

logfree_set::logfree_set(const options& o)
    : arena_(o.pool_dir, o.threads,
             std::bit_ceil(std::max<std::uint64_t>(o.buckets, 1)) * sizeof(link) +
                 (o.expected_nodes + o.expected_nodes / 4) * sizeof(node),
             o.segment_bytes),
      mask_(std::bit_ceil(std::max<std::uint64_t>(o.buckets, 1)) - 1),
      use_cache_(o.use_link_cache) {
    const auto n = mask_ + 1;
    heads_ = static_cast<link*>(arena_.allocate_shared(n * sizeof(link)));
    for (std::uint64_t i = 0; i < n; ++i) new (&heads_[i]) link(0);
    pmem::pwb_range(heads_, n * sizeof(link));
    pmem::pfence();
}

void logfree_set::prefill(std::uint64_t n) {
    // Keys arrive in increasing order, so each one is appended at its bucket's tail; every
    // line is written back once at the end and one pfence makes the whole prefill durable.
    std::vector<link*> tails(mask_ + 1);
    for (std::uint64_t b = 0; b <= mask_; ++b) tails[b] = &heads_[b];
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t key = 2 * i;
        auto* x = new (arena_.allocate(0)) node{key, i, link(0)};
        link*& t = tails[mix(key) & mask_];
        t->store(word(x), std::memory_order_relaxed);
        t = &x->next;
    }
    for (std::uint64_t b = 0; b <= mask_; ++b)
        for (node* x = ptr(heads_[b].load(std::memory_order_relaxed)); x; x = ptr(x->next.load(std::memory_order_relaxed)))
            pmem::pwb(x);
    pmem::pwb_range(heads_, (mask_ + 1) * sizeof(link));
    pmem::pfence();
}

bool logfree_set::change(std::uint64_t h, link& l, std::uintptr_t expected, std::uintptr_t desired) {
    return use_cache_ ? cache_.park_link(h, l, expected, desired) : link_and_persist(l, expected, desired);
}

logfree_set::window logfree_set::find(std::uint64_t key, std::uint64_t h, path_batch& path) {
retry:
    path.finish();  // what an abandoned traversal wrote back is made durable, not forgotten
    link* left = &head(h);
    for (;;) {
        const auto lv = left->load(std::memory_order_acquire);
        if (lv & deleted_bit) goto retry;  // left's node was removed meanwhile
        if (lv & unpersisted_bit) path.add(left);
        node* right = ptr(lv);
        if (!right) return {left, lv, nullptr};
        const auto rv = right->next.load(std::memory_order_acquire);
        if (rv & deleted_bit) {  // unlink the marked node, then read left again
            if (!change(mix(right->key), *left, lv, rv & ~flag_bits)) goto retry;
            continue;
        }
        if (right->key >= key) {
            if (rv & unpersisted_bit) path.add(&right->next);
            return {left, lv, right};
        }
        left = &right->next;
    }
}

bool logfree_set::insert(unsigned tid, std::uint64_t key, std::uint64_t value) {
    const auto h = mix(key);
    node* x = nullptr;
    path_batch path;
    for (;;) {
        const window w = find(key, h, path);
        if (w.right && w.right->key == key) {
            path.finish();
            if (use_cache_) cache_.settle(h);
            return false;  // x, if allocated, is never linked (no reclamation)
        }
        if (!x) x = new (arena_.allocate(tid)) node{key, value, link(0)};
        x->next.store(word(w.right), std::memory_order_relaxed);
        pmem::pwb(x);
        pmem::pfence();  // the node, and the path to it, are durable before the link is
        path.fenced();
        if (change(h, *w.left, w.left_value, word(x))) return true;
    }
}

bool logfree_set::erase(std::uint64_t key) {
    const auto h = mix(key);
    path_batch path;
    for (;;) {
        const window w = find(key, h, path);
        if (!w.right || w.right->key != key) {
            path.finish();
            if (use_cache_) cache_.settle(h);
            return false;
        }
        const auto rv = w.right->next.load(std::memory_order_acquire);
        if (rv & deleted_bit) continue;
        if (!change(h, w.right->next, rv, (rv & ~flag_bits) | deleted_bit)) continue;
        path.finish();
        // Logically removed: unlink it now, or let a traversal do it.
        if (!change(h, *w.left, w.left_value, rv & ~flag_bits)) {
            (void)find(key, h, path);
            path.finish();
        }
        return true;
    }
}

std::optional<std::uint64_t> logfree_set::get(std::uint64_t key) {
    const auto h = mix(key);
    path_batch path;
    link* left = &head(h);
    for (;;) {
        const auto lv = left->load(std::memory_order_acquire);
        if (lv & unpersisted_bit) path.add(left);
        node* cur = ptr(lv);
        if (!cur || cur->key > key) break;
        if (cur->key == key) {
            const auto cv = cur->next.load(std::memory_order_acquire);
            if (cv & unpersisted_bit) path.add(&cur->next);
            path.finish();
            if (use_cache_) cache_.settle(h);
            if (cv & deleted_bit) return std::nullopt;
            return cur->value;
        }
        left = &cur->next;
    }
    path.finish();
    if (use_cache_) cache_.settle(h);
    return std::nullopt;
}

std::uint64_t logfree_set::size() const {
    std::uint64_t n = 0;
    for (std::uint64_t b = 0; b <= mask_; ++b)
        for (node* x = ptr(heads_[b].load()); x; x = ptr(x->next.load()))
            if (!(x->next.load() & deleted_bit)) ++n;
    return n;
}

std::uint64_t logfree_set::unpersisted_links() const {
    std::uint64_t n = 0;
    for (std::uint64_t b = 0; b <= mask_; ++b) {
        const link* l = &heads_[b];
        for (;;) {
            const auto v = l->load();
            n += (v & unpersisted_bit) != 0;
            if (!ptr(v)) break;
            l = &ptr(v)->next;
        }
    }
    return n;
}

bool logfree_set::path_persisted(std::uint64_t key) const {
    const link* l = &head(mix(key));
    for (;;) {
        const auto v = l->load();
        if (v & unpersisted_bit) return false;
        const node* x = ptr(v);
        if (!x || x->key > key) return true;
        if (x->key == key) return !(x->next.load() & unpersisted_bit);
        l = &x->next;
    }
}

}  // namespace ferrite::bench::logfree
