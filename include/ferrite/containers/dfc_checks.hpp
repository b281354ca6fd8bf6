// ferrite/containers/dfc_checks.hpp: a DFC structure named by a pool offset (a catalog
// entry's anchor), validated whole and read-only, and the heap blocks it owns.
//
// The catalog (catalog::validate, check_objects, so `ferrite pool check` and
// catalog::recover before its first write) knows a DFC structure by the pool offset of its
// region, a heap block. These are the pool-level entry points over the region-level ones of
// the handles (dfc_handle.hpp: validate, owned_blocks), which run the checks of
// combining/dfc_validation.hpp: the header, the chunk table against the heap, cEpoch, both
// root copies, every thread record and every link recovery would follow. Here, first, the
// anchor: not 0 (nothing created: ferrite::error), 64-byte aligned with a header inside the
// pool, and a heap block the structure can own (live, or allocation pending: a create or a
// growth whose confirmation a crash cut off), whose usable bytes, clipped to the pool, are
// the region's size. Offsets are compared as integers before a pointer is formed.
//
// Not an algorithm of the papers, and nothing here writes: the heap may be opened read-only
// and not yet recovered (a pending chunk then reads as allocation pending, as recovery
// would find it), so there is no crash-consistency argument to make beyond dfc_validation's
// (why no crash leaves a word outside its domain). Damage throws ferrite::damaged_pool,
// kind damaged_object, region the kind's name ("dfc_stack", "dfc_queue", "dfc_deque"),
// object "" (the catalog adds the entry's name).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/containers/media_checks.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::containers {

// Where the region of a DFC structure at pool offset `anchor` lies, and its size.
struct dfc_region_span {
    const void* region;
    std::size_t bytes;
};

// C is a DFC container (dfc_stack<T>, dfc_queue<T>, dfc_deque<T>; any T: the checks read
// elements as opaque words). Checks the anchor only (see above).
template <class C>
dfc_region_span dfc_region_at(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor) {
    const auto kind = C::structure::kind_name;
    const auto* h = header_in_pool<combining::dfc_header>(pool, kind, anchor);  // aligned to 64, in the pool
    const header_check c(pool, kind, anchor);
    return {h, c.header_block(heap, sizeof(combining::dfc_header))};
}

// Read-only: everything opening and recovering the structure at `anchor` would check
// (dfc_validation.hpp), with `heap` as the heap its node pool grows into. Throws
// damaged_pool (damaged_object, region the kind) at the first word out of its domain.
template <class C>
void validate_dfc(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor) {
    const auto span = dfc_region_at<C>(pool, heap, anchor);
    C::validate(span.region, span.bytes, &heap);
}

// Read-only: the pool offsets of every heap block the structure at `anchor` owns (its
// region, then each grown node chunk's block), after validating it whole (validate_dfc).
// No two objects of a pool may share one: the catalog compares these sets.
template <class C>
std::vector<std::uint64_t> dfc_owned_blocks(const pmem::pool_ref& pool, const alloc::buddy_heap& heap,
                                            std::uint64_t anchor) {
    const auto span = dfc_region_at<C>(pool, heap, anchor);
    C::validate(span.region, span.bytes, &heap);
    std::vector<std::uint64_t> out;
    for (const void* b : C::owned_blocks(span.region, span.bytes, &heap))
        out.push_back(static_cast<std::uint64_t>(static_cast<const std::byte*>(b) - pool.base()));
    return out;
}

}  // namespace ferrite::containers
