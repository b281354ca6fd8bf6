// ferrite/sets/node_check.hpp: the durable sets' node slots validated without K and V.
//
// The catalog validates, lists and recovers every named object without its element type
// (`pool check`, `pool info`, store::open's rehearsed recovery: containers/sets_kind.cpp).
// node_store::validate covers a set's header and areas; this covers its node slots with
// what the header records (algorithm, key size, area size), so that a damaged node fails
// the pool's validation and store::open instead of passing it and failing the typed open
// later. The rules are those the tables' recoveries enforce before they write anything:
//   SOFT (soft_pnode.hpp, soft_recovery.hpp classify): the four flag bytes are each 0 or 1;
//     a superseded PNode's superseded_by (less its polarity bit) is a node slot of this set
//     (line 1.. of one of its areas), not the PNode itself. Two complete PNodes of one key
//     are not damage (an interrupted upsert leaves them; recovery keeps one).
//   link-free (linkfree_node.hpp, linkfree_table.hpp check_bits / duplicate): the validity
//     bits are each 0 or 1, and no two member nodes (valid, next unmarked) hold the same key
//     bytes.
// Read only; throws damaged_pool (damaged_object, region "soft set" / "link-free set").
#pragma once

#include <cstdint>
#include <vector>

#include "ferrite/pmem/pool.hpp"
#include "ferrite/sets/node_store.hpp"

namespace ferrite::sets {

// `owned`: node_store::validate's result (the header block first, then the areas);
// `shape`: node_store::recorded_shape. An unknown algorithm is left alone (node_store
// validated what it knows).
void check_nodes(const pmem::pool_ref& pool, const std::vector<std::uint64_t>& owned, const node_store_shape& shape);

}  // namespace ferrite::sets
