// ferrite/containers/deque_layout.hpp: the on-media layout of a persistent deque (format 2).
//
// A deque is one header block in the pool (from the pool's heap) plus a ring of elements
// (also from the heap, replaced when the deque grows). Offsets are pool offsets. Element
// k of the deque (0 = front) lives in ring slot (head + k) mod capacity, where head is a
// free-running 64-bit counter (push_front decrements it, pop_front increments it) and the
// capacity a power of two, so the mapping survives both wrap-around of the counter and a
// change of capacity (growth copies each element to its slot under the new capacity and
// leaves {head, size} as they are). Five lines, each written by one kind of step:
//
//   line 0  identity: magic, element size                                 (written at create)
//   line 1  ring:     data offset, capacity                               (REPLACE installs)
//   line 2  state record 0: epoch, head, size, redo counts, redo values   (pass commit)
//   line 3  state record 1: the same                                      (pass commit)
//   line 4  log:      tag (nop / replace), replace target {data, capacity}  (REPLACE commit)
//
// A state record is self-validating, as the vector's (vector_layout.hpp): a pass writes the
// record that does NOT hold the larger epoch, its epoch stored last, and stores to one line
// persist in program order, so an epoch on the media names a complete record; the record
// with the larger epoch is the deque's state. Its redo values (up to deque_redo_room
// elements: 32 bytes) are elements whose ring copy may not be durable: redo_front values at
// the front (deque positions [0, redo_front): that pass's kept front pushes), then
// redo_back values at the back ([size - redo_back, size): its kept back pushes and the back
// values earlier passes deferred). Recovery copies them into their ring slots, so a pass
// whose values fit the record needs no fence between its values and its state, and back
// values may stay unwritten-back for several passes (persistent_deque_core.hpp).
//
// Format 1 (magic "FrDeque1") kept one epoch word and two {head, size} copies in line 2 and
// ordered a pass's pushed values with a fence of their own; it is refused with pool_error
// wrong_version (deque_recovery.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ferrite/pmem/flow.hpp"

namespace ferrite::containers {

inline constexpr std::uint64_t deque_magic = 0x3265'7571'6544'7246ull;     // "FrDeque2"
inline constexpr std::uint64_t deque_magic_v1 = 0x3165'7571'6544'7246ull;  // "FrDeque1": refused
inline constexpr std::uint64_t deque_format = 2;

// Redo values a state record holds: 32 bytes of elements of `size` bytes. They are copied
// as bytes (never accessed as elements in the record), so the element's alignment does not
// matter and recovery needs no T.
inline constexpr std::size_t deque_redo_bytes = 32;
constexpr std::uint64_t deque_redo_room(std::uint64_t size) { return size == 0 ? 0 : deque_redo_bytes / size; }

// Epochs from here on are refused as damage (a pass adds one: 2^63 passes are centuries).
inline constexpr std::uint64_t deque_epoch_limit = std::uint64_t{1} << 63;

enum class deque_log_tag : std::uint64_t { nop = 0, replace = 1 };

// One state record: a cache line of its own.
struct alignas(64) deque_state {
    std::uint64_t epoch FERRITE_FLOW_SENTINEL;  // stored last; the record with the larger epoch is the state
    std::uint64_t head;        // ring position of the front element (mod capacity)
    std::uint64_t size;
    std::uint32_t redo_front;  // redo values for deque positions [0, redo_front)
    std::uint32_t redo_back;   // then for [size - redo_back, size)
    alignas(8) std::byte redo_values[deque_redo_bytes];
};
static_assert(sizeof(deque_state) == 64);

struct alignas(64) deque_header {
    // line 0
    std::uint64_t magic;
    std::uint64_t element_size;
    std::uint64_t reserved0[6];
    // line 1
    alignas(64) std::uint64_t data;  // pool offset of the ring, 0 = none
    std::uint64_t capacity;          // elements, a power of two (0 with no ring)
    // lines 2, 3
    deque_state state[2];
    // line 4
    alignas(64) deque_log_tag log_tag FERRITE_FLOW_SENTINEL FERRITE_FLOW_LOG;
    std::uint64_t replace_data;      // replace: the new ring
    std::uint64_t replace_capacity;
};
static_assert(sizeof(deque_header) == 320);

// The committed state record: the one with the larger epoch (create() writes epochs 1 and 0).
inline std::uint64_t deque_current(const deque_header& h) noexcept { return h.state[1].epoch > h.state[0].epoch ? 1 : 0; }
inline const deque_state& deque_committed(const deque_header& h) noexcept { return h.state[deque_current(h)]; }

}  // namespace ferrite::containers
