// ferrite/index/durable_tree.hpp: the index's durable tree: the Masstree-style tree
// (tree.hpp) with its nodes in a pool region, made crash-consistent by InCLL (incll.hpp).
//
//   auto* region = static_cast<std::byte*>(pool.root_bytes(bytes));   // or a heap block
//   auto t = durable_tree::create(region, bytes, {});                 // formats, durable
//   t->insert_or_assign(7, 70);            // durable at the end of the epoch (<= 64 ms)
//   t->sync();                             // ... or now
//   // after a crash, in a new process:
//   auto u = durable_tree::open(region, bytes, {});  // validates, rolls back, answers
//
// Algorithm: the tree's ([MASSTREE]) with InCLL's undo words, external log and user-space
// epochs ([NVM] ch. 3); incll.hpp has the protocol and the crash-consistency argument,
// incll_layout.hpp the region, incll_recovery.cpp the recovery.
// Guarantee (buffered durability): after a crash, open() yields the tree as it was at the
// end of some completed epoch, and that epoch is at least the one the last returned sync()
// made durable. state_epoch() names it.
//
// Recovery is lazy by default (incll_lazy.hpp: open rolls back the external log and the
// leftmost path, every other node is rolled back at its first access); incll_options::
// lazy_recovery = false recovers every node at open. ferrite::ordered_map
// (containers/ordered_map.hpp) is the public, catalog-named face of this tree.
//
// Keys: basic_durable_tree<K> for K = std::uint64_t (durable_tree) or key128 (durable_tree16,
// 16-byte keys, nodes of seven lines). The region records its key width as its layout version
// (incll_layout.hpp); open() refuses a region of the other width with damaged_pool before it
// writes anything.
//
// Concurrency: as tree.hpp; sync() may be called by any thread at any time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "ferrite/index/incll.hpp"
#include "ferrite/index/incll_lazy.hpp"
#include "ferrite/index/tree.hpp"

namespace ferrite::index {

// Recovery (incll_recovery.cpp): validates the region (throws damaged_pool, region "incll
// tree", for anything it cannot use), rolls back the failed epoch's external log and then
// either every node (eager; made durable) or the root and leftmost path, leaving the rest to
// `lazy` (incll_lazy.hpp). Restartable. Returns the root and the height.
// K: the key type the region must have been made for (its layout version says; the other
// width is refused with damaged_pool before anything is written).
template <class K>
struct basic_incll_recovered {
    node_base* root;
    unsigned height;
    std::unique_ptr<basic_lazy_recovery<K>> lazy;  // null after an eager recovery
};
using incll_recovered = basic_incll_recovered<std::uint64_t>;
template <class K = std::uint64_t>
basic_incll_recovered<K> incll_recover(std::byte* region, std::uint64_t bytes, bool lazy);
// Read-only (pool check, the catalog's validation): what incll_recover validates before it
// writes anything, i.e. the geometry, the commit line, the log entries and the root's offset;
// throws damaged_pool as it does. Nodes are validated when recovery reaches them.
struct incll_summary {
    std::uint64_t durable_epoch, allocated_nodes, arena_nodes;
};
template <class K = std::uint64_t>
incll_summary incll_check(const std::byte* region, std::uint64_t bytes);

// K: std::uint64_t (durable_tree) or key128 (durable_tree16), explicitly instantiated in
// durable_tree.cpp.
template <class K>
class basic_durable_tree {
public:
    using key_type = K;
    using durable_tree = basic_durable_tree;  // the names below read as for the 8-byte tree

    // The region bytes for `nodes` arena nodes (a leaf holds up to 14 keys) and the options'
    // shards and log entries.
    static std::uint64_t region_bytes(std::uint64_t nodes, const incll_options& options = {});
    // Formats [region, region + bytes) as an empty tree, durable when it returns.
    static std::unique_ptr<durable_tree> create(std::byte* region, std::uint64_t bytes, incll_options options = {});
    // Recovers and opens a region create() formatted (throws damaged_pool if it is not one).
    static std::unique_ptr<durable_tree> open(std::byte* region, std::uint64_t bytes, incll_options options = {});
    ~basic_durable_tree();  // stops the ticker and syncs

    // Operations throw damaged_pool if lazy recovery finds a node they reach damaged.
    std::optional<std::uint64_t> get(K key) const { return tree_->get(key); }
    bool insert_or_assign(K key, std::uint64_t value) { return tree_->insert_or_assign(key, value); }
    bool insert(K key, std::uint64_t value) { return tree_->insert(key, value); }
    bool erase(K key) { return tree_->erase(key); }
    template <class F>
    std::size_t scan(K from, std::size_t limit, F&& f) const {
        return tree_->scan(from, limit, f);
    }
    template <class F>
    std::size_t scan_range(K lo, K hi, F&& f) const {
        return tree_->scan_range(lo, hi, f);
    }

    std::uint64_t sync() { return engine_->sync(); }
    std::uint64_t durable_epoch() const noexcept { return engine_->durable_epoch(); }
    std::uint64_t state_epoch() const noexcept { return engine_->state_epoch(); }
    std::uint64_t current_epoch() const noexcept { return engine_->current_epoch(); }
    incll_stats statistics() const noexcept { return engine_->statistics(); }
    tree_shape describe() const { return tree_->describe(); }  // recovers every node first
    // Lazy recovery: every node recovered and made durable, the pending epoch forgotten (as a
    // clean close does). With no operation running. No-op after an eager open.
    void finish_recovery() { engine_->finish_recovery(); }
    // Nodes recovered lazily so far (0 after an eager open), and whether any are left.
    std::uint64_t lazily_recovered() const noexcept { return engine_->lazily_recovered(); }

private:
    basic_durable_tree(std::byte* region, const incll_options& options, basic_incll_recovered<K> r);

    std::unique_ptr<basic_incll<K>> engine_;
    std::unique_ptr<basic_tree<K>> tree_;
};

extern template class basic_durable_tree<std::uint64_t>;
extern template class basic_durable_tree<key128>;
using durable_tree = basic_durable_tree<std::uint64_t>;
using durable_tree16 = basic_durable_tree<key128>;

}  // namespace ferrite::index
