// ferrite/containers/ordered_map_kind.hpp: ferrite::ordered_map as a named object of a
// catalog (kind 11, "ordered_map", for 8-byte keys; kind 14, "ordered_map_k16", for 16-byte
// keys; the registry: object_kinds.hpp).
//
// Why a second kind rather than kind 11 for both widths: the width is already checked twice
// at open (the entry's element type, and the tree's layout version before anything is
// written), but a ferrite built before 16-byte keys knows only layout version 1 and would
// call a kind-11 entry holding a 16-byte-key tree damaged; under kind 14 it reports the entry
// as unknown_kind ("from a newer ferrite"), which is what it is. The two kinds share every
// function (the tree's key type is their one parameter), and each checks that the region's
// layout version is its own width's.
//
//   auto m = names.open<ferrite::ordered_map<std::uint64_t, std::uint64_t>>("m", {.nodes = 1 << 16});
//
// make(): the entry's anchor word names the heap block that is the tree's whole region
// (index/incll_layout.hpp). create formats the block, makes it durable, then stores the
// anchor (the commit point) and confirms the block. open validates before it writes: the
// block (live, large enough for the region the tree's geometry records), the geometry, the
// commit line, the log entries and the root (index::incll_check); damage is
// ferrite::damaged_pool and nothing is written. Nodes are validated when recovery reaches
// them: all at open with eager_recovery, else each at its first access (a damaged node is
// damaged_pool from the operation that reached it).
//
// Without the element type (pool check, pool info, crash recovery) the kind's functions do
// the same read-only checks; its recover() only confirms the tree's block (a crash between
// create's anchor and the confirmation leaves it pending, and the heap's finish_recovery
// would free it: the catalog crash target found that): the tree recovers itself when it is
// opened (its recovery is restartable, and lazy: docs/index.md).
#pragma once

#include <cstdint>

#include "ferrite/containers/concepts.hpp"
#include "ferrite/containers/object_kinds.hpp"
#include "ferrite/containers/ordered_map.hpp"

namespace ferrite::containers {

extern const kind_ops ordered_map_kind;      // src/containers/ordered_map_kind.cpp
extern const kind_ops ordered_map_k16_kind;  // the same, 16-byte keys

template <class K, class V>
struct named_kind<ferrite::ordered_map<K, V>> {
    static constexpr std::uint32_t id = sizeof(K) == 8 ? 11 : 14;
    using element_type = std::pair<K, V>;
    static ferrite::ordered_map<K, V> make(const named_context& c, std::uint64_t& anchor, const ordered_map_options& o = {}) {
        return anchor == 0 ? ferrite::ordered_map<K, V>::create(c.pool, c.heap, anchor, o)
                           : ferrite::ordered_map<K, V>::open(c.pool, c.heap, anchor, o);
    }
};

static_assert(containers::ordered_map<ferrite::ordered_map<std::uint64_t, std::uint64_t>>);
static_assert(containers::ordered_map<ferrite::ordered_map<ferrite::key16, std::uint64_t>>);

}  // namespace ferrite::containers
