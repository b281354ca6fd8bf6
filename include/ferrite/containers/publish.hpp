// ferrite/containers/publish.hpp: the last steps of creating a container in a pool, shared by
// every container whose blocks come from the heap's confirm protocol (persistent_vector_core,
// persistent_deque_core, and the DFC structures the catalog creates).
//
// Crash consistency: the header is durable before the anchor names it; the anchor is the
// commit point; only then are the blocks confirmed. A crash before the anchor persists
// leaves two unconfirmed blocks that the heap's finish_recovery() frees; a crash between the
// anchor and the confirmations is finished by the container's recover(), which confirms the
// blocks it reaches (confirm_allocation is idempotent).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

// `block` was allocated from `heap`, is pending, and its contents are durable; `anchor` is the
// caller's persistent word that will name it. The anchor is the commit point.
template <class Heap>
FERRITE_FLOW_ROOT void publish_block(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor, void* block) {
    FERRITE_FLOW_SENTINEL_AT(&anchor); anchor = static_cast<std::uint64_t>(static_cast<std::byte*>(block) - pool.base());
    pmem::pwb(&anchor);
    pmem::pfence();  // PP: reachable from the caller's root: the block may be confirmed
    heap.confirm_allocation(block);
}

// `header` (header_bytes written) and `data` (may be null) were allocated from `heap` and are
// pending; `anchor` is the caller's persistent word that will name the header.
template <class Heap>
FERRITE_FLOW_ROOT void publish_new(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor, void* header, std::size_t header_bytes,
                 void* data) {
    pmem::pwb_range(header, header_bytes);
    pmem::pfence();  // PP: the header is complete before the anchor names it
    publish_block(pool, heap, anchor, header);
    if (data) heap.confirm_allocation(data);
}

// A block allocated for a create that failed before any anchor named it: given back now
// (confirm, free, confirm) rather than at the heap's next recovery. A failure here leaves it
// pending, and that recovery frees it.
template <class Heap>
void discard_pending_block(Heap& heap, void* block) noexcept {
    try {
        heap.confirm_allocation(block);
        heap.deallocate(block);
        heap.confirm_deallocation(block);
    } catch (...) {
        // Left pending: the heap's next recovery frees it.
    }
}

}  // namespace ferrite::containers
