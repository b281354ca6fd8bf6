// ferrite/combining/dfc_format.hpp: formatting a fresh DFC region (combining::dfc::create).
//
// Lays out the region (dfc_layout.hpp) for `threads` threads with as many nodes as fit (at
// most 2^32 - 1: a node index has 32 bits, dfc_node_store.hpp): cEpoch 0, both root copies
// empty, the chunk table with no grown chunk, and every announcement slot unused (op name 0,
// "none": never collected or re-armed, DFC defect #2 in docs/references.md). The papers
// assume zero-filled memory ("all fields initially 0"); here the region may hold anything.
//
// Crash consistency: everything but the header is written, written back and fenced before
// the header's magic is stored (PP: the magic's write-back and fence). A region whose magic is
// durable is a complete empty structure; one whose magic is not is refused by open() as not
// a DFC region (dfc_validation.hpp), and create() can simply run again.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/dfc_node_store.hpp"
#include "ferrite/combining/dfc_types.hpp"
#include "ferrite/combining/dfc_validation.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::combining {

struct dfc_formatted {
    dfc_region region;
    dfc_chunk_map chunks;  // chunk 0: the region's own nodes
};

// Format `bytes` bytes at `region` (64-byte aligned) for `threads` threads and a structure
// with `root_count` root words. Throws usage_error, having written nothing, if nothing fits
// or an argument is out of range.
inline dfc_formatted dfc_format(void* region, std::size_t bytes, unsigned threads, unsigned root_count,
                                const dfc_options& o) {
    dfc_validation::check_region(region);
    if (threads == 0) throw usage_error("dfc: at least one thread id is needed");
    // At most 2^32 - 1 nodes in the region: a node index has 32 bits (dfc_node_store.hpp).
    const auto cap = std::min(dfc_region::capacity_for(bytes, threads), dfc_index_mask);
    if (cap == 0)
        throw usage_error("dfc: " + std::to_string(bytes) + " bytes hold no node for " + std::to_string(threads) +
                          " threads; give at least " + std::to_string(dfc_region::bytes(threads, 64)));
    auto r = dfc_region::at(region, threads);
    // Everything but the header is zeroed and written back before the header's magic:
    // a region whose magic is durable is a complete empty structure.
    if (o.first_growth_nodes == 0 || o.first_growth_nodes > dfc_node_store::index_mask)
        throw usage_error("dfc: first_growth_nodes must be between 1 and 2^32 - 1");
    r.epoch->epoch.store(0, std::memory_order_relaxed);
    r.chunks->first_growth_nodes = o.first_growth_nodes;
    for (auto& off : r.chunks->offset) off = 0;
    for (auto* rc : {&r.roots[0], &r.roots[1]})
        for (auto& w : rc->node) w.store(0, std::memory_order_relaxed);
    for (unsigned t = 0; t < threads; ++t) {
        auto& rec = r.threads[t];
        rec.valid.store(0, std::memory_order_relaxed);
        for (auto& a : rec.ann) {
            a.status.store(0, std::memory_order_relaxed);
            a.value.store(0, std::memory_order_relaxed);
            a.epoch.store(0, std::memory_order_relaxed);
            a.param.store(0, std::memory_order_relaxed);
            a.name.store(dfc_none_op, std::memory_order_relaxed);
            a.seq.store(0, std::memory_order_relaxed);
        }
    }
    pmem::pwb_range(r.epoch, static_cast<std::size_t>(reinterpret_cast<std::byte*>(r.nodes) -
                                                      reinterpret_cast<std::byte*>(r.epoch)));
    pmem::pfence();
    r.header->threads = threads;
    r.header->capacity = cap;
    r.header->roots = root_count;
    r.header->magic = dfc_magic;  // PP: create's commit point
    pmem::pwb(r.header);
    pmem::pfence();
    dfc_formatted f{r, {}};
    f.chunks.count = 1;
    f.chunks.base[0] = r.nodes + 1;
    f.chunks.nodes[0] = cap;
    return f;
}

}  // namespace ferrite::combining
