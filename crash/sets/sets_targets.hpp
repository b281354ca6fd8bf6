// crash/sets/sets_targets.hpp: crash-test targets of the sets layer (ferrite/sets).
#pragma once

#include "ferrite/sim/target.hpp"

namespace ferrite::crash::sets_targets {

// node-store: sets::node_store's areas under concurrent allocation (node_store_target.cpp).
void register_node_store_target(sim::target_registry&);
// linkfree-list, linkfree-hash: the link-free durable set (linkfree_targets.cpp).
void register_linkfree_targets(sim::target_registry&);

}  // namespace ferrite::crash::sets_targets
