// ordered_map_kind.cpp: kinds 11 "ordered_map" and 14 "ordered_map_k16"
// (ferrite/containers/ordered_map_kind.hpp) and the untyped half of ferrite::ordered_map:
// creating and opening the tree's block. Everything is a template on the tree's key type W
// (std::uint64_t for kind 11, index::key128 for kind 14).
#include "ferrite/containers/ordered_map_kind.hpp"

#include <string>

#include "ferrite/containers/media_checks.hpp"
#include "ferrite/containers/publish.hpp"
#include "ferrite/index/incll_layout.hpp"

namespace ferrite::containers {
namespace {

namespace layout = index::incll_layout;
template <class W>
constexpr std::string_view kind = sizeof(W) == 8 ? "ordered_map" : "ordered_map_k16";

struct tree_block {
    std::byte* region;
    std::uint64_t bytes;
    index::incll_summary summary;
};

// Read-only: the block the anchor names and the tree's header in it (incll_check<W> refuses
// a tree of the other key width).
template <class W>
tree_block check_block(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor) {
    auto* g = header_in_pool<layout::geometry>(pool, kind<W>, anchor);
    const header_check c(pool, kind<W>, anchor);
    if (anchor % 64 != 0) c.fail("anchor", anchor, "is not 64-byte aligned");
    const std::uint64_t usable = c.header_block(heap, layout::header_bytes);
    const std::uint64_t bytes = g->region_bytes;
    if (bytes < layout::header_bytes || bytes > usable)
        c.fail("region bytes", bytes, "do not fit the tree's block of " + std::to_string(usable) + " usable bytes");
    auto* region = pool.base() + anchor;
    return {region, bytes, index::incll_check<W>(region, bytes)};
}

index::incll_options engine_options(const ordered_map_options& o) {
    index::incll_options e;
    e.epoch_length = o.epoch_length;
    e.shards = o.shards;
    e.log_entries = o.log_entries;
    e.lazy_recovery = !o.eager_recovery;
    return e;
}

template <class W>
std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    (void)check_block<W>(pool, heap, e.anchor);
    return {e.anchor};
}

template <class W>
void recover(const pmem::pool_ref& pool, alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    (void)check_block<W>(pool, heap, e.anchor);  // the tree recovers itself at open (restartable)
    // A crash between create's anchor and its confirmation leaves the block pending: confirm
    // it (idempotent), or the heap's finish_recovery would free the block the anchor names.
    heap.confirm_allocation(pool.base() + e.anchor);
}

template <class W>
std::string describe(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, const alloc::directory_entry& e) {
    const auto b = check_block<W>(pool, heap, e.anchor);
    return std::to_string(b.summary.allocated_nodes) + " of " + std::to_string(b.summary.arena_nodes) +
           " tree nodes in use, durable epoch " + std::to_string(b.summary.durable_epoch);
}

}  // namespace

namespace ordered_map_detail {

template <class W>
std::unique_ptr<index::basic_durable_tree<W>> create_tree(const pmem::pool_ref& pool, alloc::buddy_heap& heap,
                                                          std::uint64_t& anchor, const ordered_map_options& o) {
    if (anchor != 0) throw usage_error("the anchor already refers to an ordered_map; open it instead");
    if (o.nodes < 4) throw usage_error("ordered_map: options.nodes must be at least 4");
    const auto e = engine_options(o);
    const std::uint64_t bytes = index::basic_durable_tree<W>::region_bytes(o.nodes, e);
    void* block = heap.allocate(bytes);
    if (reinterpret_cast<std::uintptr_t>(block) % 64 != 0) {
        discard_pending_block(heap, block);
        throw usage_error("ordered_map: the heap's block is not 64-byte aligned");
    }
    std::unique_ptr<index::basic_durable_tree<W>> t;
    try {
        t = index::basic_durable_tree<W>::create(static_cast<std::byte*>(block), bytes, e);  // durable when it returns
    } catch (...) {
        discard_pending_block(heap, block);
        throw;
    }
    publish_block(pool, heap, anchor, block);
    return t;
}

template <class W>
std::unique_ptr<index::basic_durable_tree<W>> open_tree(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                                        std::uint64_t anchor, const ordered_map_options& o) {
    const auto b = check_block<W>(pool, heap, anchor);
    return index::basic_durable_tree<W>::open(b.region, b.bytes, engine_options(o));
}

template std::unique_ptr<index::durable_tree> create_tree<std::uint64_t>(const pmem::pool_ref&, alloc::buddy_heap&, std::uint64_t&,
                                                                         const ordered_map_options&);
template std::unique_ptr<index::durable_tree16> create_tree<index::key128>(const pmem::pool_ref&, alloc::buddy_heap&,
                                                                           std::uint64_t&, const ordered_map_options&);
template std::unique_ptr<index::durable_tree> open_tree<std::uint64_t>(const pmem::pool_ref&, const alloc::buddy_heap&, std::uint64_t,
                                                                       const ordered_map_options&);
template std::unique_ptr<index::durable_tree16> open_tree<index::key128>(const pmem::pool_ref&, const alloc::buddy_heap&,
                                                                         std::uint64_t, const ordered_map_options&);

}  // namespace ordered_map_detail

const kind_ops ordered_map_kind{11, kind<std::uint64_t>, validate<std::uint64_t>, recover<std::uint64_t>,
                                describe<std::uint64_t>};
const kind_ops ordered_map_k16_kind{14, kind<index::key128>, validate<index::key128>, recover<index::key128>,
                                    describe<index::key128>};

}  // namespace ferrite::containers
