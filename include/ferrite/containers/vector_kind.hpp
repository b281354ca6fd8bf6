// ferrite/containers/vector_kind.hpp: ferrite::vector as a named object of a catalog
// (kind 1, "vector"; the registry: object_kinds.hpp).
//
//   auto prices = names.open<ferrite::vector<double, ferrite::alloc::buddy_heap>>("prices");
//   // or names.open_vector<double>("prices"), the same call
//
// make(): the entry's anchor word is the vector's anchor, so vector::create's commit point
// (the anchor naming a durable header, persistent_vector_core.hpp) is the entry's too; open
// validates the header first (vector_recovery.hpp). Any engine selector opens the same
// stored vector: the engine is volatile.
#pragma once

#include <cstdint>

#include "ferrite/containers/concepts.hpp"
#include "ferrite/containers/object_kinds.hpp"
#include "ferrite/containers/vector.hpp"

namespace ferrite::containers {

extern const kind_ops vector_kind;  // src/containers/vector_kind.cpp

template <class T, class EngineSelector>
struct named_kind<ferrite::vector<T, alloc::buddy_heap, EngineSelector>>
    : named_by_anchor<ferrite::vector<T, alloc::buddy_heap, EngineSelector>, 1, vector_options> {};

static_assert(sequence_structure<ferrite::vector<std::uint64_t, alloc::buddy_heap>>);
static_assert(sequence_structure<ferrite::vector<double, alloc::buddy_heap, use_fpfc>>);

}  // namespace ferrite::containers
