// ferrite/containers/vector_layout.hpp: the on-media layout of a persistent vector (format 3).
//
// A vector is one header block in the pool (allocated from the pool's heap) plus an element
// array (also from the heap, replaced when the vector grows). Offsets are pool offsets, so
// the pool may map anywhere. Eleven lines, each written by one kind of step:
//
//   line 0       identity: magic, element size and alignment, swap-log capacity (create)
//   line 1       array:    data offset, capacity                      (REPLACE installs)
//   lines 2-9    state records 0-7: epoch, size, redo count, redo values  (pass commit)
//   line 10      log control: tag (nop / swap / replace), swap entry count,
//                replace target {data, capacity}                    (log commit points)
//   line 11+     swap undo entries: {index, original element}, 8-byte aligned
//
// Putting the log's payload fields in the same line as its tag lets one pwb + pfence commit
// them together (stores to one line persist in order: the tag can only persist with them).
// The same rule makes a state record self-validating: a pass writes the record after the
// state's (in ring order, so the oldest: its epoch is the smallest), its epoch stored last,
// so an epoch on the media names a complete record, and the record with the largest epoch is
// the vector's state. Its redo values (up to vector_redo_room elements: 40 bytes) are the
// elements that pass pushed, last at size - 1: recovery copies them into the array, so a
// pass whose pushes fit the record needs no fence between its values and its size
// (persistent_vector_core.hpp).
//
// Why eight records, not two (format 3, issue 23): a store to a line whose write-back
// finished one or two passes ago costs more than one to a line left alone for longer. On the
// project's VM (AMD EPYC, clwb; bench/calibration/one_thread_cpu.cpp `parts`), store + pwb +
// pfence over a ring of k lines costs, in CPU ns per operation, about 210 (k = 1), 188
// (2), 179 (4), 167 (8) and 164 (16, 64). With two records a 1-thread pass rewrote the line
// written back two passes before; with eight, eight passes before.
//
// Format 1 (magic "Fvector1") had one size word in line 2 and the log in line 3; format 2
// ("Fvector2") two state records in lines 2-3 and the log in line 4. Both are refused with a
// message that names the format (vector_recovery.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include "ferrite/pmem/flow.hpp"

namespace ferrite::containers {

inline constexpr std::uint64_t vector_magic = 0x3372'6f74'6365'7646ull;     // "Fvector3"
inline constexpr std::uint64_t vector_magic_v2 = 0x3272'6f74'6365'7646ull;  // "Fvector2": refused
inline constexpr std::uint64_t vector_magic_v1 = 0x3172'6f74'6365'7646ull;  // "Fvector1": refused
inline constexpr std::uint64_t vector_format = 3;

// State records in a vector's header: a pass writes the one after the state's, in a ring.
inline constexpr std::uint64_t vector_state_records = 8;

// Redo values a state record holds: 40 bytes of elements of `size` bytes aligned to `align`
// (none for elements aligned beyond 8 bytes). Computed from the header, so recovery needs no T.
inline constexpr std::size_t vector_redo_bytes = 40;
constexpr std::uint64_t vector_redo_room(std::uint64_t size, std::uint64_t align) {
    return align > 8 || size == 0 ? 0 : vector_redo_bytes / size;
}

// Epochs from here on are refused as damage (a pass adds one: 2^63 passes are centuries).
inline constexpr std::uint64_t vector_epoch_limit = std::uint64_t{1} << 63;

// One state record: a cache line of its own.
struct alignas(64) vector_state {
    std::uint64_t epoch FERRITE_FLOW_SENTINEL;  // stored last; the record with the larger epoch is the state
    std::uint64_t size;   // elements
    std::uint64_t redo;   // redo values in use: the elements at [size - redo, size)
    alignas(8) std::byte redo_values[vector_redo_bytes];
};
static_assert(sizeof(vector_state) == 64);

enum class vector_log_tag : std::uint64_t { nop = 0, swap = 1, replace = 2 };

struct alignas(64) vector_header {
    // line 0
    std::uint64_t magic;
    std::uint64_t element_size;
    std::uint64_t swap_log_capacity;  // entries
    std::uint64_t element_align;      // with element_size, lets recovery run without the type
    std::uint64_t reserved0[4];
    // line 1
    alignas(64) std::uint64_t data;   // pool offset of the elements, 0 = none
    std::uint64_t capacity;           // elements
    // lines 2-9
    vector_state state[vector_state_records];
    // line 10
    alignas(64) vector_log_tag log_tag FERRITE_FLOW_SENTINEL FERRITE_FLOW_LOG;
    std::uint64_t log_entries;        // swap: undo entries in use
    std::uint64_t replace_data;       // replace: the new array
    std::uint64_t replace_capacity;
};
static_assert(sizeof(vector_header) == 704);

// The committed state record: the one with the largest epoch (create() writes epoch 1 into
// record 0, 0 into the others); the first of them if several share it (validation refuses
// that as damage). A core keeps the index in DRAM instead of reading eight lines a pass.
inline std::uint64_t vector_current(const vector_header& h) noexcept {
    std::uint64_t cur = 0;
    for (std::uint64_t i = 1; i < vector_state_records; ++i)
        if (h.state[i].epoch > h.state[cur].epoch) cur = i;
    return cur;
}
// The record a pass after state `cur` writes: the oldest.
constexpr std::uint64_t vector_next_record(std::uint64_t cur) noexcept { return (cur + 1) % vector_state_records; }
inline std::uint64_t vector_size(const vector_header& h) noexcept { return h.state[vector_current(h)].size; }

// One swap undo entry for elements of T: the index and the element before the batch.
template <class T>
struct swap_undo_entry {
    std::uint64_t index;
    T original;
};

// Where an undo entry's fields lie for elements of `size` bytes aligned to `align`: the
// layout of swap_undo_entry<T>, computed from the header so recovery needs no T.
struct undo_entry_layout {
    std::size_t original_offset;  // of `original` within the entry
    std::size_t stride;           // sizeof the entry
};
constexpr undo_entry_layout undo_layout(std::size_t size, std::size_t align) {
    const std::size_t a = align > 8 ? align : 8;
    const std::size_t offset = (8 + align - 1) / align * align;
    return {offset, (offset + size + a - 1) / a * a};
}

template <class T>
constexpr std::size_t vector_block_bytes(std::size_t swap_log_capacity) {
    return sizeof(vector_header) + swap_log_capacity * sizeof(swap_undo_entry<T>);
}

}  // namespace ferrite::containers
