// ferrite/containers/sets_kind.hpp: durable sets and maps as named objects of a catalog
// (kinds 8 "durable_set" and 9 "durable_map"; the registry: object_kinds.hpp).
//
//   auto seen = names.open<ferrite::durable_set<std::uint64_t>>("seen");
//   auto ages = names.open_map<std::uint64_t, std::uint32_t>("ages");   // the same as open<durable_map<...>>
//
// make(): the entry's anchor word is the set's anchor: the table's create writes a durable
// header (sets/node_store.hpp) and fills in the anchor as its commit point; open validates
// the header and every area before it reads a node, and checks that the recorded algorithm,
// layout and key/value sizes are the ones asked for (pool_error(type_mismatch) otherwise:
// a SOFT map is not opened as a link-free one). The catalog checks the element type
// (K for a set, std::pair<K, V> for a map).
//
// Without the element type (pool check, pool info, crash recovery) the kind's functions
// work on the node store: its header and area lists are validated, its pending areas
// confirmed, and its node slots checked with what the header records (sets/node_check.hpp:
// flag bytes, SOFT supersede targets, link-free duplicate members), so that a damaged node
// fails `pool check` and store::open, not only the typed open that rebuilds the table.
#pragma once

#include <cstdint>

#include "ferrite/containers/concepts.hpp"
#include "ferrite/containers/durable_map.hpp"
#include "ferrite/containers/object_kinds.hpp"

namespace ferrite::containers {

extern const kind_ops durable_set_kind;  // src/containers/sets_kind.cpp
extern const kind_ops durable_map_kind;

template <class Structure, std::uint32_t Id>
struct named_durable_table {
    static constexpr std::uint32_t id = Id;
    using element_type = typename Structure::value_type;
    static Structure make(const named_context& c, std::uint64_t& anchor, durable_set_options o = {}) {
        return anchor == 0 ? Structure::create(c.pool, c.heap, anchor, o) : Structure::open(c.pool, c.heap, anchor, o);
    }
};

template <class K, class Algorithm>
struct named_kind<ferrite::durable_set<K, Algorithm>> : named_durable_table<ferrite::durable_set<K, Algorithm>, 8> {};
template <class K, class V, class Algorithm>
struct named_kind<ferrite::durable_map<K, V, Algorithm>>
    : named_durable_table<ferrite::durable_map<K, V, Algorithm>, 9> {};

static_assert(durable_set<ferrite::durable_set<std::uint64_t>>);
static_assert(durable_set<ferrite::durable_set<std::uint64_t, use_link_free>>);
static_assert(durable_map<ferrite::durable_map<std::uint64_t, std::uint64_t>>);

}  // namespace ferrite::containers
