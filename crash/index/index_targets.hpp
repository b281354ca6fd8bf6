// crash/index/index_targets.hpp: crash-test targets of the index layer (ferrite/index).
#pragma once

#include "ferrite/sim/target.hpp"

namespace ferrite::crash::index_targets {

// incll-tree: the durable tree (InCLL) under writers, splits and epoch ends (incll_tree_target.cpp).
void register_incll_tree_target(sim::target_registry&);

}  // namespace ferrite::crash::index_targets
