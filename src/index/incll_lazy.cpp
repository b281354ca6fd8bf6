// src/index/incll_lazy.cpp: InCLL's per-node recovery and its lazy driver
// (ferrite/index/incll_lazy.hpp has the algorithm and the crash-consistency argument).
#include "ferrite/index/incll_lazy.hpp"

#include <algorithm>
#include <string>
#include <thread>

#include "ferrite/error.hpp"
#include "ferrite/index/incll_words.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::index {
namespace {

namespace layout = incll_layout;
namespace words = incll_words;

[[noreturn]] void fail(const std::string& what) { throw_damaged(pool_errc::damaged_object, "incll tree", "", what); }
std::string num(std::uint64_t v) { return std::to_string(v); }

// Waits through pmem::wait_hint (the crash simulator passes its token there; incll.cpp's).
void spin_lock(std::atomic<std::uint32_t>& lock) noexcept {
    for (unsigned spins = 0; lock.exchange(1, std::memory_order_acquire) != 0;) {
        while (lock.load(std::memory_order_relaxed) != 0) {
            pmem::wait_hint();
            if (++spins % 64 == 0) std::this_thread::yield();
        }
    }
}

}  // namespace

template <class K>
node_base* basic_node_recovery<K>::node_at(std::uint64_t off, const char* what) const {
    if (!is_node_offset(off)) fail(std::string(what).append(" is at offset ").append(num(off)).append(", not an allocated node"));
    return reinterpret_cast<node_base*>(region_ + off);
}

template <class K>
bool basic_node_recovery<K>::pending_low(std::uint64_t low) const noexcept {
    return (a_ != 0 && words::same_epoch(low, a_)) || (b_ != 0 && words::same_epoch(low, b_));
}

template <class K>
bool basic_node_recovery<K>::recover(node_base* n, interior* parent) const {
    const std::uint64_t index = index_of(n);
    const bool root = parent == nullptr;
    if (node_version::is_leaf(n->version.peek())) {
        auto* l = static_cast<leaf*>(n);
        const bool wrote = recover_leaf(l, index);
        l->parent.store(parent, std::memory_order_relaxed);
        l->version.reset(node_version::leaf_bit | (root ? node_version::root_bit : 0));
        l->modstate = leaf::modstate_insert;
        l->dirty_epoch = l->logged_epoch = 0;
        return wrote;
    }
    auto* in = static_cast<interior*>(n);
    check_interior(in, index);
    in->parent.store(parent, std::memory_order_relaxed);
    in->version.reset(root ? node_version::root_bit : 0);
    in->dirty_epoch = in->logged_epoch = 0;
    return false;
}

template <class K>
void basic_node_recovery<K>::check_interior(const interior* in, std::uint64_t index) const {
    const std::uint64_t k = in->nkeys.load(std::memory_order_relaxed);
    if (k == 0 || k > interior::max_keys) fail("interior node " + num(index) + " holds " + num(k) + " keys");
    for (std::uint64_t i = 1; i < k; ++i)
        if (in->keys[i - 1].load(std::memory_order_relaxed) >= in->keys[i].load(std::memory_order_relaxed))
            fail("interior node " + num(index) + "'s keys are out of order");
    for (std::uint64_t i = 0; i <= k; ++i) {
        const std::int64_t d = in->children[i].raw();
        const auto from = static_cast<std::int64_t>(reinterpret_cast<const std::byte*>(&in->children[i]) - region_);
        if (d == 0) fail("interior node " + num(index) + "'s child link " + num(i) + " is null");
        const node_base* c = node_at(static_cast<std::uint64_t>(from + d), "a child link");
        if (c == in) fail("interior node " + num(index) + " is its own child");
    }
}

template <class K>
bool basic_node_recovery<K>::recover_leaf(leaf* l, std::uint64_t index) const {
    // Everything is checked before anything is written.
    const std::uint64_t ne = l->node_epoch.load(std::memory_order_relaxed);
    if (ne > std::max(a_, b_)) fail("leaf " + num(index) + " has node epoch " + num(ne) + " after the running one");
    const bool roll = pending(ne);
    const std::uint64_t perm = roll ? l->permutation_incll.load(std::memory_order_relaxed) : l->perm.load(std::memory_order_relaxed);
    if (!words::valid_permutation(perm, leaf::width))
        fail("leaf " + num(index) + (roll ? "'s permutation undo word" : "'s permutation") + " is not a permutation");
    for (const auto& line : l->value_lines) {
        const std::uint64_t w = line.value_incll.load(std::memory_order_relaxed);
        if (w == 0) continue;
        const auto u = words::decode(w);
        if (!u || u->index >= leaf::values_per_line) fail("leaf " + num(index) + " has an undo word for slot index " + num(u ? u->index : 0));
    }
    if (const std::int64_t d = l->next.raw(); d != 0) {
        const auto from = static_cast<std::int64_t>(reinterpret_cast<const std::byte*>(&l->next) - region_);
        const node_base* next = node_at(static_cast<std::uint64_t>(from + d), "a leaf's next link");
        if (!node_version::is_leaf(next->version.peek())) fail("leaf " + num(index) + "'s next link names an interior node");
        if (static_cast<const leaf*>(next)->low_key <= l->low_key) fail("leaf " + num(index) + "'s next leaf has a lower low key");
    }
    bool wrote = false;
    if (roll) {
        l->perm.store(perm, std::memory_order_relaxed);
        l->node_epoch.store(0, std::memory_order_release);  // after the permutation, in its line
        wrote = true;
    }
    for (auto& line : l->value_lines) {
        const std::uint64_t w = line.value_incll.load(std::memory_order_relaxed);
        if (w == 0) continue;
        const auto u = words::decode(w);
        if (pending_low(u->low_epoch)) line.values[u->index].store(u->old_value, std::memory_order_relaxed);
        line.value_incll.store(0, std::memory_order_release);  // after the value, in its line
        wrote = true;
    }
    return wrote;
}

template <class K>
basic_lazy_recovery<K>::basic_lazy_recovery(std::byte* region, const layout::geometry& g, std::uint64_t allocated, std::uint64_t pending)
    : region_(region),
      nodes_(region, g, allocated, pending, 0),
      pending_(pending),
      state_(std::make_unique<std::atomic<std::uint8_t>[]>(allocated)),
      locks_(std::make_unique<std::atomic<std::uint32_t>[]>(lock_count)) {}

template <class K>
basic_lazy_recovery<K>::~basic_lazy_recovery() = default;

template <class K>
void basic_lazy_recovery<K>::slow(node_base* n, interior* parent, bool may_throw) {
    const std::uint64_t i = nodes_.index_of(n);
    auto& lock = locks_[i % lock_count];
    spin_lock(lock);
    std::uint8_t s = state_[i].load(std::memory_order_relaxed);
    if (s == unrecovered) {
        try {
            s = nodes_.recover(n, parent) ? changed : recovered;
            count_.fetch_add(1, std::memory_order_relaxed);
        } catch (const damaged_pool&) {
            state_[i].store(damaged, std::memory_order_release);
            lock.store(0, std::memory_order_release);
            if (may_throw) throw;
            return;
        }
        state_[i].store(s, std::memory_order_release);  // the rolled-back node, published
    }
    lock.store(0, std::memory_order_release);
    if (s == damaged && may_throw) fail("node " + num(i) + " of the arena is damaged (found at an earlier access)");
}

template <class K>
void basic_lazy_recovery<K>::ensure_nothrow(node_base* n, interior* parent) noexcept {
    if (is_recovered(n)) return;
    try {
        slow(n, parent, false);
    } catch (...) {  // a string's bad_alloc in a damage message: the node stays unrecovered
    }
}

template <class K>
void basic_lazy_recovery<K>::walk(node_base* n, interior* parent, unsigned depth) {
    if (depth > 64) fail("the tree is deeper than 64 levels");
    ensure(n, parent);
    if (n->is_leaf()) return;
    auto* in = static_cast<interior*>(n);
    const std::uint64_t k = std::min<std::uint64_t>(in->nkeys.load(std::memory_order_acquire), interior::max_keys);
    for (std::uint64_t i = 0; i <= k; ++i)
        if (node_base* c = in->children[i].load(std::memory_order_acquire)) walk(c, in, depth + 1);
}

template <class K>
void basic_lazy_recovery<K>::recover_all(node_base* root) {
    if (!finished()) walk(root, nullptr, 0);
}

template <class K>
void basic_lazy_recovery<K>::finish(node_base* root) {
    if (finished()) return;
    walk(root, nullptr, 0);
    bool wrote = false;
    for (std::uint64_t i = 0; i < nodes_.allocated(); ++i)
        if (state_[i].load(std::memory_order_relaxed) == changed) {
            const auto* node = reinterpret_cast<const std::byte*>(nodes_.node_of(i));
            for (const unsigned line : rolled_back_lines_of<K>) {
                // ensure() rolled it back (walk, or an operation's first access on any thread)
                FERRITE_FLOW_STORED_ELSEWHERE(node + line * pmem::cache_line_size, pmem::cache_line_size);
                pmem::pwb(node + line * pmem::cache_line_size);
            }
            wrote = true;
        }
    if (wrote) pmem::pfence();  // every rollback is durable before the commit line forgets the epoch
    // No write-back of its own: pending := 0 only spares the next open an eager recovery, and
    // it reaches the media with the next commit's write-back of this line (or by eviction,
    // which is safe after the fence above). Lost, the next open recovers eagerly: correct.
    auto& c = *reinterpret_cast<layout::commit_line*>(region_ + 64);
    std::atomic_ref<std::uint64_t>(c.pending).store(0, std::memory_order_release);
    finished_.store(true, std::memory_order_release);
}

template class basic_node_recovery<std::uint64_t>;
template class basic_node_recovery<key128>;
template class basic_lazy_recovery<std::uint64_t>;
template class basic_lazy_recovery<key128>;

}  // namespace ferrite::index
