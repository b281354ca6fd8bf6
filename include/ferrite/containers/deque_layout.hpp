// ferrite/containers/deque_layout.hpp: the on-media layout of a persistent deque.
//
// A deque is one header block in the pool (from the pool's heap) plus a ring of elements
// (also from the heap, replaced when the deque grows). Offsets are pool offsets. Element
// k of the deque (0 = front) lives in ring slot (head + k) mod capacity, where head is a
// free-running 64-bit counter (push_front decrements it, pop_front increments it) and the
// capacity a power of two, so the mapping survives both wrap-around of the counter and a
// change of capacity (growth copies each element to its slot under the new capacity and
// leaves {head, size} as they are). Four lines, each written by one kind of step:
//
//   line 0  identity: magic, element size                                 (written at create)
//   line 1  ring:     data offset, capacity                               (REPLACE installs)
//   line 2  state:    epoch, two copies of {head, size}                   (batch commit)
//   line 3  log:      tag (nop / replace), replace target {data, capacity}  (REPLACE commit)
//
// The state copies and the epoch share one line, the epoch stored last: stores to one line
// persist in program order, so an epoch that reached the media names a complete copy. The
// copy the epoch selects, copy[epoch & 1], is the committed state; a batch writes the other.
#pragma once

#include <cstddef>
#include <cstdint>
#include "ferrite/pmem/flow.hpp"

namespace ferrite::containers {

inline constexpr std::uint64_t deque_magic = 0x3165'7571'6544'7246ull;  // "FrDeque1"

enum class deque_log_tag : std::uint64_t { nop = 0, replace = 1 };

struct deque_state {
    std::uint64_t head;  // ring position of the front element (mod capacity)
    std::uint64_t size;
};

struct alignas(64) deque_header {
    // line 0
    std::uint64_t magic;
    std::uint64_t element_size;
    std::uint64_t reserved0[6];
    // line 1
    alignas(64) std::uint64_t data;  // pool offset of the ring, 0 = none
    std::uint64_t capacity;          // elements, a power of two (0 with no ring)
    // line 2
    alignas(64) std::uint64_t epoch FERRITE_FLOW_SENTINEL;  // commit point: copy[epoch & 1] is the state
    deque_state copy[2];
    // line 3
    alignas(64) deque_log_tag log_tag FERRITE_FLOW_SENTINEL;
    std::uint64_t replace_data;      // replace: the new ring
    std::uint64_t replace_capacity;
};
static_assert(sizeof(deque_header) == 256);
static_assert(offsetof(deque_header, copy) + sizeof(deque_state[2]) <= offsetof(deque_header, log_tag),
              "the state copies must share the epoch's line");

}  // namespace ferrite::containers
