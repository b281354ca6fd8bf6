// ferrite/containers/vector_layout.hpp: the on-media layout of a persistent vector.
//
// A vector is one header block in the pool (allocated from the pool's heap) plus an element
// array (also from the heap, replaced when the vector grows). Offsets are pool offsets, so
// the pool may map anywhere. Four lines, each written by one kind of step:
//
//   line 0  identity: magic, element size and alignment, swap-log capacity (written at create)
//   line 1  array:    data offset, capacity                              (REPLACE installs)
//   line 2  size                                                         (push/pop commit)
//   line 3  log control: tag (nop / swap / replace), swap entry count,
//           replace target {data, capacity}                             (log commit points)
//   line 4+ swap undo entries: {index, original element}, 8-byte aligned
//
// Putting the log's payload fields in the same line as its tag lets one pwb + pfence commit
// them together (stores to one line persist in order: the tag can only persist with them).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ferrite::containers {

inline constexpr std::uint64_t vector_magic = 0x3172'6f74'6365'7646ull;  // "Fvector1"

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
    // line 2
    alignas(64) std::uint64_t size;
    // line 3
    alignas(64) vector_log_tag log_tag;
    std::uint64_t log_entries;        // swap: undo entries in use
    std::uint64_t replace_data;       // replace: the new array
    std::uint64_t replace_capacity;
};
static_assert(sizeof(vector_header) == 256);

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
