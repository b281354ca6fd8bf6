// crash/checkpoint/checkpoint_targets.hpp: crash-test targets of the checkpoint layer
// (ferrite/checkpoint: CpNvm).
#pragma once

#include "ferrite/sim/target.hpp"

namespace ferrite::crash::checkpoint_targets {

// cpnvm-counter: the epoch protocol under a program that checkpoints after every operation
// (cpnvm_counter_target.cpp).
void register_cpnvm_counter_target(sim::target_registry&);
// cpnvm-map: the B+-tree ported to CpNvm in a program image (cpnvm_map_target.cpp).
void register_cpnvm_map_target(sim::target_registry&);

}  // namespace ferrite::crash::checkpoint_targets
