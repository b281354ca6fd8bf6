// ferrite/containers/vector_recovery.hpp: recovery of a persistent vector from its header
// alone, without its element type, and the two log steps that forward operations share.
//
// The header records the element size and alignment (vector_layout.hpp), which fix where the
// swap undo entries' fields lie; so a vector is recovered by copying bytes, and the pool's
// catalog (containers/catalog.hpp) can recover every vector it names without knowing the
// program's types. The steps and their crash argument are in persistent_vector_core.hpp.
#pragma once

#include <cstring>
#include <string>

#include "ferrite/containers/vector_layout.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

inline void vector_install(vector_header* h, std::uint64_t data, std::uint64_t capacity) noexcept {
    h->data = data;
    h->capacity = capacity;
    pmem::pwb(&h->data);
    pmem::pfence();  // PP: the new array is installed
}

inline void vector_clear_log(vector_header* h) noexcept {
    h->log_tag = vector_log_tag::nop;
    pmem::pwb(&h->log_tag);
    pmem::pfence();  // PP: the log is free for the next pass (a later swap batch rewrites
                     // the entries before re-committing the tag, so the cleared tag must be
                     // durable first)
}

// After a REPLACE: the tag goes back to nop without a write-back. A REPLACE left in the
// media whose target is installed does nothing at recovery, and the next log commit (swap
// or REPLACE) rewrites the line with its payload before its tag; flush mutation testing of
// the stack targets (growth, no swaps) found the write-back unobservable. Swaps need the
// durable clear (vector_clear_log): their next batch rewrites the undo entries first.
inline void vector_drop_replace_log(vector_header* h) noexcept { h->log_tag = vector_log_tag::nop; }

// The header at pool offset `anchor`, validated as a vector (any element type).
inline vector_header* vector_header_at(pmem::pool& pool, std::uint64_t anchor) {
    if (anchor == 0 || anchor % alignof(vector_header) != 0 ||
        !pool.contains(pool.base() + anchor, sizeof(vector_header)))
        throw error("no vector at pool offset " + std::to_string(anchor) + " of '" + pool.path().string() +
                    "'; create it first");
    auto* h = reinterpret_cast<vector_header*>(pool.base() + anchor);
    if (h->magic != vector_magic || h->element_size == 0 || h->element_align == 0)
        throw error("the block at pool offset " + std::to_string(anchor) + " of '" + pool.path().string() +
                    "' is not a ferrite vector; check the anchor or the pool file");
    return h;
}

// Between the heap's recover() and finish_recovery() (see persistent_vector_core.hpp).
template <class Heap>
void recover_vector(pmem::pool& pool, Heap& heap, vector_header* h) {
    // create() may have crashed between persisting the anchor and confirming its blocks.
    heap.confirm_allocation(h);
    if (h->log_tag != vector_log_tag::replace && h->data != 0) heap.confirm_allocation(pool.base() + h->data);
    if (h->log_tag == vector_log_tag::swap) {
        const auto layout = undo_layout(h->element_size, h->element_align);
        const auto* entries = reinterpret_cast<const std::byte*>(h) + sizeof(vector_header);
        auto* data = pool.base() + h->data;
        for (std::uint64_t i = 0; i < h->log_entries; ++i) {
            const auto* e = entries + i * layout.stride;
            std::uint64_t index;
            std::memcpy(&index, e, sizeof index);
            if (index >= h->capacity)
                throw error("vector at pool offset " + std::to_string(reinterpret_cast<std::byte*>(h) - pool.base()) +
                            " has a damaged swap log (index " + std::to_string(index) +
                            " beyond its capacity); restore the pool from a backup");
            auto* element = data + index * h->element_size;
            std::memcpy(element, e + layout.original_offset, h->element_size);
            pmem::pwb_range(element, h->element_size);
        }
        pmem::pfence();  // PP: the interrupted swaps are undone
        vector_clear_log(h);
    } else if (h->log_tag == vector_log_tag::replace) {
        const auto old = h->data;
        if (old != h->replace_data) {
            auto* fresh = pool.base() + h->replace_data;
            if (old != 0)
                heap.confirm_replacement(fresh, pool.base() + old);  // needs no free slot
            else
                heap.confirm_allocation(fresh);
        }
        // Both words: a crash may have persisted the new data offset without the capacity
        // (stores to one line persist in order), which would leave a stale, smaller capacity.
        if (h->data != h->replace_data || h->capacity != h->replace_capacity)
            vector_install(h, h->replace_data, h->replace_capacity);
        vector_drop_replace_log(h);
        if (old != 0 && old != h->data) heap.confirm_deallocation(pool.base() + old);
    }
}

}  // namespace ferrite::containers
