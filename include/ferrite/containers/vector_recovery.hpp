// ferrite/containers/vector_recovery.hpp: validation and recovery of a persistent vector from
// its header alone, without its element type, and the two log steps that forward operations
// share.
//
// The header records the element size and alignment (vector_layout.hpp), which fix where the
// swap undo entries' fields lie; so a vector is recovered by copying bytes, and the pool's
// catalog (containers/catalog.hpp) can recover every vector it names without knowing the
// program's types. The steps and their crash argument are in persistent_vector_core.hpp.
//
// Validation (validate_vector; open and recovery run it first, the catalog and `ferrite pool
// check` call it on their own, over a pool and heap that may be read-only). Every header word
// that open, an operation or recovery uses as a size, an offset or a pointer is put in its
// domain first; a header that fails throws damaged_pool (damaged_object, region "vector")
// naming the word and its value, and nothing has been written (recovery validates all it
// will read before its first store, including the heap states its confirm calls need, so
// none of them can throw half way). Checked, in this order:
//   identity: the anchor is a 64-byte aligned offset with the header inside the pool; magic
//     (the format version is its last byte: a format-1 or format-2 vector is refused with
//     pool_error wrong_version, not as damage); element size in [1, pool size]; alignment a
//     power of two dividing the size (so the undo entries' layout cannot overflow); both as
//     the caller's type asks, when it names one;
//   the header's block: a heap block the vector keeps (live, or allocation pending: create()
//     confirms after the anchor), holding the header and swap_log_capacity (>= 2: a swap
//     logs two entries) undo entries;
//   log_tag one of nop / swap / replace;
//   the array: data = 0 exactly when capacity = 0; otherwise a heap block other than the
//     header's, kept (or, under an uninstalled REPLACE, live or deallocation pending: the
//     old array), whose usable bytes hold capacity x element size (overflow checked) inside
//     the pool;
//   the state records: no other record has the largest epoch (that one names the state, and
//     is below 2^63, so the next pass's epoch cannot wrap); in that record size <= capacity
//     and redo <= min(size, vector_redo_room) (the other records are never read: a pass may
//     have left one torn);
//   REPLACE (tag = replace): replace_capacity >= capacity and >= size, replace_data a kept
//     heap block other than the header's that holds it; if not yet installed (data differs),
//     the pair of states a growth leaves: old live with new allocation pending (before
//     confirm_replacement), or old deallocation pending with new live (after). A crash may
//     leave data installed but not capacity (one line, stores in order), so with data equal
//     to replace_data the capacity may be the old one (even 0);
//   SWAP (tag = swap): the state record holds no redo values, log_entries <=
//     swap_log_capacity, and every logged index < size (the
//     swaps of a pass touch elements below the size, which no step of that pass changes
//     before the log is cleared durably).
// Words the tag does not name (a stale entry count or REPLACE target) are never read, so not
// checked. What one header cannot show: a block that another object also names (of the right
// size). vector_owned_blocks() lists the blocks for the catalog to prove them disjoint.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ferrite/containers/media_checks.hpp"
#include "ferrite/containers/vector_layout.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/pmem/primitives.hpp"

namespace ferrite::containers {

FERRITE_FLOW_ROOT inline void vector_install(vector_header* h, std::uint64_t data, std::uint64_t capacity) noexcept {
    h->data = data;
    h->capacity = capacity;
    pmem::pwb(&h->data);
    pmem::pfence();  // PP: the new array is installed
}

FERRITE_FLOW_ROOT inline void vector_clear_log(vector_header* h) noexcept {
    h->log_tag = vector_log_tag::nop;
    pmem::pwb(&h->log_tag);
    pmem::pfence();  // PP: the log is free for the next pass (a later swap batch rewrites
                     // the entries before re-committing the tag, so the cleared tag must be
                     // durable first)
}

// Store `bytes` of elements at `dst` (NT stores, or stores + pwb: the no-nt ablation) and
// order them, with every write-back the caller queued before, by one pfence. A push pass's
// values with their state record, and recovery's copy of the redo values, share it.
FERRITE_FLOW_ROOT inline void vector_store_elements(void* dst, const void* src, std::size_t bytes, bool nt) noexcept {
    if (nt) {
        pmem::nt_memcpy(dst, src, bytes);
    } else {
        std::memcpy(dst, src, bytes);
        pmem::pwb_range(dst, bytes);
    }
    pmem::pfence();  // PP: the elements (and the caller's queued lines) are durable
}

// Recovery: copy the committed state record's redo values into the array, at [size - redo,
// size) (validated: redo <= size <= capacity). The pass that wrote the record may have
// crashed before its values reached the array; if it did not, the copy rewrites equal bytes.
// Not written back: the record keeps holding them, and a core made on this header treats the
// state's redo elements as deferred (persistent_vector_core.hpp), so the first pass that keeps
// them repeats them in its record and writes their lines back before the record that holds
// them now can be overwritten. (Format 2 as first merged wrote them back here, with a pfence.)
inline void vector_replay_redo(const pmem::pool_ref& pool, vector_header* h) noexcept {
    const auto& st = h->state[vector_current(*h)];
    if (st.redo == 0) return;
    auto* element = pool.base() + h->data + (st.size - st.redo) * h->element_size;
    std::memcpy(element, st.redo_values, st.redo * h->element_size);
}

// After a REPLACE: the tag goes back to nop without a write-back. A REPLACE left in the
// media whose target is installed does nothing at recovery, and the next log commit (swap
// or REPLACE) rewrites the line with its payload before its tag; flush mutation testing of
// the stack targets (growth, no swaps) found the write-back unobservable. Swaps need the
// durable clear (vector_clear_log): their next batch rewrites the undo entries first.
inline void vector_drop_replace_log(vector_header* h) noexcept { h->log_tag = vector_log_tag::nop; }

// The element type a caller asks for (size and alignment); 0: any (recovery from the header
// alone, `ferrite pool check`).
struct element_shape {
    std::uint64_t size = 0;
    std::uint64_t align = 0;
};

// The header at pool offset `anchor`, its identity checked (in the pool, magic): the other
// words are not; validate_vector() checks them. Throws error for anchor 0 (no vector there),
// damaged_pool for the rest.
inline vector_header* vector_header_at(const pmem::pool_ref& pool, std::uint64_t anchor) {
    auto* h = header_in_pool<vector_header>(pool, "vector", anchor);
    if (h->magic == vector_magic_v1 || h->magic == vector_magic_v2) {
        std::string what = "vector: header at pool offset ";
        what.append(std::to_string(anchor)).append(" of '").append(pool.path().string());
        what.append(h->magic == vector_magic_v1
                        ? "' is a ferrite vector of format 1 (one size word, two fences per push pass)"
                        : "' is a ferrite vector of format 2 (two state records)");
        what.append("; this build reads format 3 (eight state records, one fence per pass) and does not convert "
                    "it: read the elements with the ferrite release that wrote the pool and push them into a "
                    "new vector");
        throw pool_error(pool_errc::wrong_version, what);
    }
    if (h->magic != vector_magic)
        header_check(pool, "vector", anchor)
            .fail("magic", h->magic, "is not a ferrite vector's (format 3)",
                  "check the anchor; if it is right, restore the pool from a copy");
    return h;
}

// Read-only: the vector at `anchor`, every word it uses checked (see above). Throws
// damaged_pool (damaged_object, region "vector", object "") naming the first bad word.
template <class Heap>
const vector_header& validate_vector(const pmem::pool_ref& pool, const Heap& heap, std::uint64_t anchor,
                                     element_shape expected = {}) {
    const vector_header& h = *vector_header_at(pool, anchor);
    const header_check c(pool, "vector", anchor);
    const auto esz = h.element_size, align = h.element_align;
    if (esz == 0 || esz > pool.size()) c.fail("element_size", esz, "is no element size in this pool");
    if (align == 0 || (align & (align - 1)) != 0 || esz % align != 0)
        c.fail("element_align", align, "is not a power of two dividing the element size " + std::to_string(esz));
    if (expected.size != 0 && (esz != expected.size || align != expected.align))
        c.fail("element_size", esz,
               "(aligned to " + std::to_string(align) + ") is not the size of the element type asked for (" +
                   std::to_string(expected.size) + " bytes aligned to " + std::to_string(expected.align) + ")",
               "open it with the element type that created it; if that is the type, restore the pool from a copy");

    const auto header_bytes = c.header_block(heap, sizeof(vector_header));
    const auto layout = undo_layout(esz, align);  // esz <= pool size: no overflow
    if (h.swap_log_capacity < 2) c.fail("swap_log_capacity", h.swap_log_capacity, "is below 2 (a swap logs two entries)");
    const auto log_bytes = c.bytes("swap_log_capacity", h.swap_log_capacity, layout.stride);
    if (log_bytes > header_bytes - sizeof(vector_header))
        c.fail("swap_log_capacity", h.swap_log_capacity,
               "undo entries do not fit the header's block of " + std::to_string(header_bytes) + " bytes");

    const auto tag = h.log_tag;
    if (tag != vector_log_tag::nop && tag != vector_log_tag::swap && tag != vector_log_tag::replace)
        c.fail("log_tag", static_cast<std::uint64_t>(tag), "is none of nop (0), swap (1), replace (2)");
    const bool replacing = tag == vector_log_tag::replace;
    const bool installed = replacing && h.data == h.replace_data;  // capacity may still be the old one

    auto old_state = alloc::block_state::live;
    if (h.data == 0) {
        if (h.capacity != 0) c.fail("data", 0, "names no array, but the capacity is " + std::to_string(h.capacity));
    } else {
        if (h.capacity == 0 && !installed)
            c.fail("capacity", 0, "with an array at pool offset " + std::to_string(h.data));
        const block_states allowed = replacing && !installed
                                         ? states(alloc::block_state::live) | states(alloc::block_state::deallocation_pending)
                                         : kept_states;
        old_state = c.block(heap, "data", h.data, allowed, "capacity", h.capacity, esz);
    }
    const auto cur = vector_current(h);
    const auto& st = h.state[cur];
    const std::string rec = "state[" + std::to_string(cur) + "]";
    for (std::uint64_t i = cur + 1; i < vector_state_records; ++i)  // vector_current took the first
        if (h.state[i].epoch == st.epoch) {
            std::string which = "state[";
            which.append(std::to_string(i)).append("].epoch");
            c.fail(which, st.epoch, "equals " + rec + ".epoch, the largest (no pass writes two records with one epoch)");
        }
    if (st.epoch >= vector_epoch_limit)  // the next pass's epoch + 1 must not wrap to the other record's
        c.fail(rec + ".epoch", st.epoch, "is 2^63 or more (no vector makes that many passes)");
    if (st.size > h.capacity) c.fail(rec + ".size", st.size, "exceeds the capacity " + std::to_string(h.capacity));
    if (st.redo > std::min(st.size, vector_redo_room(esz, align)))
        c.fail(rec + ".redo", st.redo,
               "exceeds the size " + std::to_string(st.size) + " or the record's room of " +
                   std::to_string(vector_redo_room(esz, align)) + " elements");

    if (replacing) {
        const auto rcap = h.replace_capacity;
        if (rcap == 0 || rcap < h.capacity)  // so also >= size
            c.fail("replace_capacity", rcap,
                   "is 0 or below the capacity " + std::to_string(h.capacity) + " (a growth only grows)");
        const auto fresh = c.block(heap, "replace_data", h.replace_data, kept_states, "replace_capacity", rcap, esz);
        // The two states a growth moves through in one confirm-slot store (confirm_replacement).
        if (!installed && h.data != 0 &&
            fresh != (old_state == alloc::block_state::live ? alloc::block_state::allocation_pending
                                                            : alloc::block_state::live))
            c.fail("replace_data", h.replace_data,
                   std::string("names a block the heap has ") + alloc::to_string(fresh) + " while the array it replaces is " +
                       alloc::to_string(old_state) + ", a pair no growth leaves");
    }

    if (tag == vector_log_tag::swap) {
        if (st.redo != 0)  // a swap pass commits a record without redo before its log
            c.fail(rec + ".redo", st.redo, "is not 0 under a committed swap log");
        if (h.log_entries > h.swap_log_capacity)
            c.fail("log_entries", h.log_entries, "exceeds swap_log_capacity " + std::to_string(h.swap_log_capacity));
        const auto* entries = reinterpret_cast<const std::byte*>(&h) + sizeof(vector_header);
        for (std::uint64_t i = 0; i < h.log_entries; ++i) {
            std::uint64_t index;
            std::memcpy(&index, entries + i * layout.stride, sizeof index);
            if (index >= st.size)
                c.fail("the index of swap undo entry " + std::to_string(i), index,
                       "is not below the size " + std::to_string(st.size));
        }
    }
    return h;
}

// Read-only: the pool offsets of every heap block the vector at `anchor` owns (its header,
// its array, the array an unfinished REPLACE installs), validated first (validate_vector).
// No two objects of a pool may share one: the catalog compares these sets.
template <class Heap>
std::vector<std::uint64_t> vector_owned_blocks(const pmem::pool_ref& pool, const Heap& heap, std::uint64_t anchor) {
    const auto& h = validate_vector(pool, heap, anchor);
    std::vector<std::uint64_t> blocks{anchor};
    if (h.data != 0) blocks.push_back(h.data);
    if (h.log_tag == vector_log_tag::replace && h.replace_data != h.data) blocks.push_back(h.replace_data);
    return blocks;
}

// Between the heap's recover() and finish_recovery() (see persistent_vector_core.hpp).
// Validates the whole header (validate_vector) before its first store.
template <class Heap>
FERRITE_FLOW_ROOT void recover_vector(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) {
    (void)validate_vector(pool, heap, anchor);
    auto* h = vector_header_at(pool, anchor);
    // create() may have crashed between persisting the anchor and confirming its blocks.
    heap.confirm_allocation(h);
    if (h->log_tag != vector_log_tag::replace && h->data != 0) heap.confirm_allocation(pool.base() + h->data);
    if (h->log_tag == vector_log_tag::swap) {
        const auto layout = undo_layout(h->element_size, h->element_align);
        const auto* entries = reinterpret_cast<const std::byte*>(h) + sizeof(vector_header);
        auto* data = pool.base() + h->data;
        for (std::uint64_t i = 0; i < h->log_entries; ++i) {
            const auto* e = entries + i * layout.stride;
            std::uint64_t index;  // below the size (validated)
            std::memcpy(&index, e, sizeof index);
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
    vector_replay_redo(pool, h);
}

}  // namespace ferrite::containers
