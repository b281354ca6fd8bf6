// ferrite/containers/pfc_kinds.hpp: the PFC stack, queue and deque as named objects of a
// catalog (kinds 5 "stack", 6 "queue", 7 "deque"; the registry: object_kinds.hpp).
//
//   using heap = ferrite::alloc::buddy_heap;
//   auto undo = names.open<ferrite::stack<std::uint64_t, heap>>("undo");
//   auto jobs = names.open<ferrite::queue<std::uint64_t, heap>>("jobs", /*initial capacity*/ 64);
//
// A stack is stored as a vector (stack.hpp) and a queue as a deque (queue.hpp), but each
// has a kind of its own, so a name keeps the interface it was created with: opening a stack
// as a vector, or a queue as a deque, is pool_error(type_mismatch). make(): as for the
// vector (vector_kind.hpp): the entry's anchor word is the structure's anchor and its
// create's commit point; open validates the header first.
#pragma once

#include <cstdint>

#include "ferrite/containers/concepts.hpp"
#include "ferrite/containers/deque.hpp"
#include "ferrite/containers/object_kinds.hpp"
#include "ferrite/containers/queue.hpp"
#include "ferrite/containers/stack.hpp"

namespace ferrite::containers {

extern const kind_ops stack_kind;  // src/containers/vector_kind.cpp (stored as a vector)
extern const kind_ops queue_kind;  // src/containers/deque_kind.cpp (stored as a deque)
extern const kind_ops deque_kind;  // src/containers/deque_kind.cpp

template <class T, class EngineSelector>
struct named_kind<ferrite::stack<T, alloc::buddy_heap, EngineSelector>>
    : named_by_anchor<ferrite::stack<T, alloc::buddy_heap, EngineSelector>, 5, vector_options> {};
template <class T, class EngineSelector>
struct named_kind<ferrite::queue<T, alloc::buddy_heap, EngineSelector>>
    : named_by_anchor<ferrite::queue<T, alloc::buddy_heap, EngineSelector>, 6, deque_options> {};
template <class T, class EngineSelector>
struct named_kind<ferrite::deque<T, alloc::buddy_heap, EngineSelector>>
    : named_by_anchor<ferrite::deque<T, alloc::buddy_heap, EngineSelector>, 7, deque_options> {};

static_assert(sequence_structure<ferrite::stack<std::uint64_t, alloc::buddy_heap>>);
static_assert(sequence_structure<ferrite::queue<std::uint64_t, alloc::buddy_heap>>);
static_assert(sequence_structure<ferrite::deque<std::uint64_t, alloc::buddy_heap>>);

}  // namespace ferrite::containers
