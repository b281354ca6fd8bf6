// ferrite/checkpoint/image_store.hpp: where a CpNvm program image lives in a pool: one heap
// block holding a header line and the epoch_log region (its logs and its persistent image).
//
//   line 0   magic "FECPIMG1", version, the volatile image's base address, the log geometry
//            (threads, log_bytes, image_bytes), FNV-1a 64 checksum of those fields
//   line 1.. the epoch_log region (epoch_log.hpp)
//
// Crash consistency: create writes the header and a fresh epoch_log region, one pfence, then
// the caller's anchor (the commit point: pwb, pfence), then confirms the block; a crash
// before the anchor leaves a pending block the heap's recovery frees. The header never
// changes after create; everything after it is the epoch_log's (its own argument).
//
// Validation (open, validate): the anchor must name a live block of the heap inside the
// pool, big enough for the header and the region the header describes; the header's magic,
// version and checksum must match; then epoch_log::open checks the region and, for validate
// and recover, every committed record (offsets, lengths, checksums). A failure throws
// damaged_pool and writes nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/checkpoint/epoch_log.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::checkpoint {

struct image_shape {
    std::uint64_t base = 0;  // the volatile image's address (page-aligned)
    log_geometry geometry;
};

class image_store {
public:
    // A new image block; fills in `anchor` (a pool offset) as the commit point.
    static image_store create(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t& anchor,
                              const image_shape& shape);
    // An existing one, validated (header and log region; not the records: recover() does).
    static image_store open(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor);
    // Read-only validation including every committed record; returns the heap blocks the
    // image owns (pool offsets), for the catalog's one-owner check.
    static std::vector<std::uint64_t> validate(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                               std::uint64_t anchor);

    // Recovery: confirms the image's block if a crash came between the anchor and the
    // confirmation (idempotent).
    static void confirm(const pmem::pool_ref& pool, alloc::buddy_heap& heap, std::uint64_t anchor);

    const image_shape& shape() const noexcept { return shape_; }
    epoch_log& log() noexcept { return log_; }
    const epoch_log& log() const noexcept { return log_; }

private:
    image_store(const image_shape& s, epoch_log log) : shape_(s), log_(std::move(log)) {}
    image_shape shape_;
    epoch_log log_;
};

}  // namespace ferrite::checkpoint
