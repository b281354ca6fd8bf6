// ferrite/containers/deque_recovery.hpp: recovery of a persistent deque from its header
// alone, without its element type, and the end of a ring replacement, which growth and
// recovery share.
//
// Nothing in a deque's recovery depends on the element type (the ring is replaced whole,
// never patched), so a pool's catalog can recover every deque it names without knowing the
// program's types, as vector_recovery.hpp does for vectors. The steps and their crash
// argument are in persistent_deque_core.hpp.
#pragma once

#include <string>

#include "ferrite/containers/deque_layout.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

// The header at pool offset `anchor`, validated as a deque (any element type).
inline deque_header* deque_header_at(pmem::pool& pool, std::uint64_t anchor) {
    if (anchor == 0 || anchor % alignof(deque_header) != 0 ||
        !pool.contains(pool.base() + anchor, sizeof(deque_header)))
        throw error("no deque at pool offset " + std::to_string(anchor) + " of '" + pool.path().string() +
                    "'; create it first");
    auto* h = reinterpret_cast<deque_header*>(pool.base() + anchor);
    if (h->magic != deque_magic || h->element_size == 0)
        throw error("the block at pool offset " + std::to_string(anchor) + " of '" + pool.path().string() +
                    "' is not a ferrite deque or queue; check the anchor or the pool file");
    return h;
}

// A committed REPLACE (tag = replace, durable): install the logged ring and let the old one
// go, the header naming the old ring until the install. Idempotent, so recovery simply runs
// it again (growth runs it once). The orders it keeps:
//   * the old ring's pending deallocation is durable before the install can reach the media
//     (the heap's confirm_replacement() ends with a pfence): after the install, nothing names
//     the old ring but the heap's confirm slot (the one that named the new ring: a heap whose
//     other slots are all taken cannot stop a growth that committed, or its recovery);
//   * the install is durable (pwb, pfence) before the tag is cleared: a cleared tag with the
//     old ring installed would have finish_recovery() free the live ring.
// The cleared tag itself needs no write-back: a REPLACE whose ring is installed is a no-op
// here, and the next growth rewrites the line (the clearing store precedes its new target in
// the same line, so the target never persists with the stale tag).
template <class Heap>
void deque_finish_replace(pmem::pool& pool, Heap& heap, deque_header* h) {
    const auto old = h->data;
    const bool replaced = old == h->replace_data;
    auto* fresh = pool.base() + h->replace_data;
    if (!replaced && old != 0)
        heap.confirm_replacement(fresh, pool.base() + old);  // needs no free slot; repeatable
    else
        heap.confirm_allocation(fresh);  // no-op if already confirmed
    // The capacity is compared too: it shares the line with the data offset, and a crash may
    // have persisted the first store of the install without the second.
    if (!replaced || h->capacity != h->replace_capacity) {
        h->data = h->replace_data;
        h->capacity = h->replace_capacity;
        pmem::pwb(&h->data);
        pmem::pfence();  // PP: the new ring is installed
    }
    h->log_tag = deque_log_tag::nop;
    if (!replaced && old != 0) heap.confirm_deallocation(pool.base() + old);
}

// Between the heap's recover() and finish_recovery() (see persistent_deque_core.hpp).
template <class Heap>
void recover_deque(pmem::pool& pool, Heap& heap, deque_header* h) {
    heap.confirm_allocation(h);  // create() may have crashed before confirming its blocks
    if (h->log_tag == deque_log_tag::replace)
        deque_finish_replace(pool, heap, h);
    else if (h->data != 0)
        heap.confirm_allocation(pool.base() + h->data);
}

}  // namespace ferrite::containers
