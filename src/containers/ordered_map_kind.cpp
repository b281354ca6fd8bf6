// ordered_map_kind.cpp: kind 11 "ordered_map" (ferrite/containers/ordered_map_kind.hpp) and the
// untyped half of ferrite::ordered_map: creating and opening the tree's block.
#include "ferrite/containers/ordered_map_kind.hpp"

#include <string>

#include "ferrite/containers/media_checks.hpp"
#include "ferrite/containers/publish.hpp"
#include "ferrite/index/incll_layout.hpp"

namespace ferrite::containers {
namespace {

namespace layout = index::incll_layout;
constexpr std::string_view kind = "ordered_map";

struct tree_block {
    std::byte* region;
    std::uint64_t bytes;
    index::incll_summary summary;
};

// Read-only: the block the anchor names and the tree's header in it.
tree_block check_block(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor) {
    auto* g = header_in_pool<layout::geometry>(pool, kind, anchor);
    const header_check c(pool, kind, anchor);
    if (anchor % 64 != 0) c.fail("anchor", anchor, "is not 64-byte aligned");
    const std::uint64_t usable = c.header_block(heap, layout::header_bytes);
    const std::uint64_t bytes = g->region_bytes;
    if (bytes < layout::header_bytes || bytes > usable)
        c.fail("region bytes", bytes, "do not fit the tree's block of " + std::to_string(usable) + " usable bytes");
    auto* region = pool.base() + anchor;
    return {region, bytes, index::incll_check(region, bytes)};
}

index::incll_options engine_options(const ordered_map_options& o) {
    index::incll_options e;
    e.epoch_length = o.epoch_length;
    e.shards = o.shards;
    e.log_entries = o.log_entries;
    e.lazy_recovery = !o.eager_recovery;
    return e;
}

std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    (void)check_block(pool, heap, e.anchor);
    return {e.anchor};
}

void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    (void)check_block(pool, heap, e.anchor);  // the tree recovers itself at open (restartable)
    // A crash between create's anchor and its confirmation leaves the block pending: confirm
    // it (idempotent), or the heap's finish_recovery would free the block the anchor names.
    heap.confirm_allocation(pool.base() + e.anchor);
}

std::string describe(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto b = check_block(pool, heap, e.anchor);
    return std::to_string(b.summary.allocated_nodes) + " of " + std::to_string(b.summary.arena_nodes) +
           " tree nodes in use, durable epoch " + std::to_string(b.summary.durable_epoch);
}

}  // namespace

namespace ordered_map_detail {

std::unique_ptr<index::durable_tree> create_tree(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                                                 const ordered_map_options& o) {
    if (anchor != 0) throw usage_error("the anchor already refers to an ordered_map; open it instead");
    if (o.nodes < 4) throw usage_error("ordered_map: options.nodes must be at least 4");
    const auto e = engine_options(o);
    const std::uint64_t bytes = index::durable_tree::region_bytes(o.nodes, e);
    void* block = heap.allocate(bytes);
    if (reinterpret_cast<std::uintptr_t>(block) % 64 != 0) {
        discard_pending_block(heap, block);
        throw usage_error("ordered_map: the heap's block is not 64-byte aligned");
    }
    std::unique_ptr<index::durable_tree> t;
    try {
        t = index::durable_tree::create(static_cast<std::byte*>(block), bytes, e);  // durable when it returns
    } catch (...) {
        discard_pending_block(heap, block);
        throw;
    }
    publish_block(pool, heap, anchor, block);
    return t;
}

std::unique_ptr<index::durable_tree> open_tree(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor,
                                               const ordered_map_options& o) {
    const auto b = check_block(pool, heap, anchor);
    return index::durable_tree::open(b.region, b.bytes, engine_options(o));
}

}  // namespace ordered_map_detail

const kind_ops ordered_map_kind{11, "ordered_map", validate, recover, describe};

}  // namespace ferrite::containers
