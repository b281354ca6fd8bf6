// ferrite/containers/dpfc_kinds.hpp: the detectable PFC stack and queue as named objects of
// a catalog (kinds 12 "dpfc_stack", 13 "dpfc_queue"; the registry: object_kinds.hpp).
//
//   auto undo = names.open<ferrite::dpfc_stack<std::uint64_t>>("undo", /*threads*/ 4, /*capacity*/ 1024);
//   // after a crash and recover_pool: names.open<...>("undo", 4)->recover(tid)
//
// Arguments: thread ids (0..threads-1), the element capacity (fixed: `full` past it),
// dpfc_options. An existing structure keeps the thread count and capacity it was created
// with: asking for more thread ids than it has is a usage_error that changes nothing (those
// ids do not exist); the capacity argument is used by create only.
//
// Not from a paper (the structure's algorithm: dpfc_stack.hpp). Crash consistency of
// make(), as the DFC kinds' (dfc_kinds.hpp): the region is a heap block, allocated
// (pending), formatted by create() (durable: its magic written back last), then named by the
// entry's anchor (publish_block: the commit point) and confirmed. A crash before the anchor
// leaves a pending block the heap's recovery frees; after it, the kind's recover
// (src/containers/dpfc_kinds.cpp) confirms the block, validates the region and runs
// dpfc_recover, so recover(tid) answers through the catalog as through open(). Validation
// (dpfc_region_at, then dpfc_validate) runs before anything is written: the anchor names a
// 64-byte aligned block the structure can own, the region is that block's usable bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferrite/containers/dfc_kinds.hpp"
#include "ferrite/containers/dpfc_stack.hpp"
#include "ferrite/containers/media_checks.hpp"
#include "ferrite/containers/object_kinds.hpp"
#include "ferrite/containers/publish.hpp"

namespace ferrite::containers {

extern const kind_ops dpfc_stack_kind;  // src/containers/dpfc_kinds.cpp
extern const kind_ops dpfc_queue_kind;

// Where the region of the dpfc structure of kind `magic` at pool offset `anchor` lies, and
// its size; checks the anchor only (aligned header in the pool, a block it can own).
inline dfc_region_span dpfc_region_at(const pmem::pool_ref& pool, const alloc::buddy_heap& heap, std::uint64_t anchor,
                                      std::uint64_t magic) {
    const std::string_view kind = dpfc_detail::kind_name(magic);
    const auto* h = header_in_pool<dpfc_header>(pool, kind, anchor);
    const header_check c(pool, kind, anchor);
    return {h, c.header_block(heap, sizeof(dpfc_header))};
}

template <class C, std::uint32_t Id, std::uint64_t Magic>
struct named_dpfc {
    static constexpr std::uint32_t id = Id;
    using element_type = typename C::value_type;
    static C make(const named_context& c, std::uint64_t& anchor, unsigned threads, std::uint64_t capacity = 1024,
                  dpfc_options o = {}) {
        check_arguments(c.name, threads, capacity);
        if (anchor != 0) {
            const auto span = dpfc_region_at(c.pool, c.heap, anchor, Magic);
            dpfc_validate(span.region, span.bytes, Magic);  // before reading the thread count
            check_dfc_threads(c.name, static_cast<const dpfc_header*>(span.region)->threads, threads);
            return C::open(const_cast<void*>(span.region), span.bytes, o);
        }
        const std::size_t bytes = C::required_bytes(threads, capacity);
        if (bytes == 0)
            throw usage_error("catalog: '" + std::string(c.name) + "': " + std::to_string(threads) + " thread ids and " +
                              std::to_string(capacity) + " elements are more than a " +
                              dpfc_detail::kind_name(Magic) + " holds");
        void* region = c.heap.allocate(bytes);  // pending until the anchor names it
        try {
            C made = C::create(region, bytes, threads, capacity, o);  // durable before the anchor
            publish_block(c.pool, c.heap, anchor, region);
            return made;
        } catch (...) {
            if (anchor == 0) discard_pending_block(c.heap, region);  // nothing names it
            throw;
        }
    }
    static void check_shared(std::string_view name, const C& open, unsigned threads, std::uint64_t capacity = 1024,
                             const dpfc_options& = {}) {
        check_arguments(name, threads, capacity);
        check_dfc_threads(name, open.threads(), threads);
    }

private:
    static void check_arguments(std::string_view name, unsigned threads, std::uint64_t capacity) {
        if (threads == 0 || capacity == 0)
            throw usage_error("catalog: '" + std::string(name) + "': a " + dpfc_detail::kind_name(Magic) +
                              " needs at least one thread id and one element of capacity");
    }
};

template <class T, class EngineSelector>
struct named_kind<dpfc_stack<T, EngineSelector>> : named_dpfc<dpfc_stack<T, EngineSelector>, 12, dpfc_stack_magic> {};
template <class T, class EngineSelector>
struct named_kind<dpfc_queue<T, EngineSelector>> : named_dpfc<dpfc_queue<T, EngineSelector>, 13, dpfc_queue_magic> {};

}  // namespace ferrite::containers
