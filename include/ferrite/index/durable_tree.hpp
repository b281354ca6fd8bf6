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
struct incll_recovered {
    node_base* root;
    unsigned height;
    std::unique_ptr<lazy_recovery> lazy;  // null after an eager recovery
};
incll_recovered incll_recover(std::byte* region, std::uint64_t bytes, bool lazy);
// Read-only (pool check, the catalog's validation): what incll_recover validates before it
// writes anything, i.e. the geometry, the commit line, the log entries and the root's offset;
// throws damaged_pool as it does. Nodes are validated when recovery reaches them.
struct incll_summary {
    std::uint64_t durable_epoch, allocated_nodes, arena_nodes;
};
incll_summary incll_check(const std::byte* region, std::uint64_t bytes);

class durable_tree {
public:
    // The region bytes for `nodes` arena nodes (a leaf holds up to 14 keys) and the options'
    // shards and log entries.
    static std::uint64_t region_bytes(std::uint64_t nodes, const incll_options& options = {});
    // Formats [region, region + bytes) as an empty tree, durable when it returns.
    static std::unique_ptr<durable_tree> create(std::byte* region, std::uint64_t bytes, incll_options options = {});
    // Recovers and opens a region create() formatted (throws damaged_pool if it is not one).
    static std::unique_ptr<durable_tree> open(std::byte* region, std::uint64_t bytes, incll_options options = {});
    ~durable_tree();  // stops the ticker and syncs

    // Operations throw damaged_pool if lazy recovery finds a node they reach damaged.
    std::optional<std::uint64_t> get(std::uint64_t key) const { return tree_->get(key); }
    bool insert_or_assign(std::uint64_t key, std::uint64_t value) { return tree_->insert_or_assign(key, value); }
    bool insert(std::uint64_t key, std::uint64_t value) { return tree_->insert(key, value); }
    bool erase(std::uint64_t key) { return tree_->erase(key); }
    template <class F>
    std::size_t scan(std::uint64_t from, std::size_t limit, F&& f) const {
        return tree_->scan(from, limit, f);
    }
    template <class F>
    std::size_t scan_range(std::uint64_t lo, std::uint64_t hi, F&& f) const {
        return tree_->scan_range(lo, hi, f);
    }

    std::uint64_t sync() { return engine_->sync(); }
    std::uint64_t durable_epoch() const noexcept { return engine_->durable_epoch(); }
    std::uint64_t state_epoch() const noexcept { return engine_->state_epoch(); }
    std::uint64_t current_epoch() const noexcept { return engine_->current_epoch(); }
    incll::stats statistics() const noexcept { return engine_->statistics(); }
    tree::shape describe() const { return tree_->describe(); }  // recovers every node first
    // Lazy recovery: every node recovered and made durable, the pending epoch forgotten (as a
    // clean close does). With no operation running. No-op after an eager open.
    void finish_recovery() { engine_->finish_recovery(); }
    // Nodes recovered lazily so far (0 after an eager open), and whether any are left.
    std::uint64_t lazily_recovered() const noexcept { return engine_->lazily_recovered(); }

private:
    durable_tree(std::byte* region, const incll_options& options, incll_recovered r);

    std::unique_ptr<incll> engine_;
    std::unique_ptr<tree> tree_;
};

}  // namespace ferrite::index
