// crash/alloc/alloc_targets.hpp: crash-test targets of the alloc layer (ferrite/alloc).
#pragma once

#include <memory>

#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/target.hpp"

namespace ferrite::crash::alloc_targets {

void register_alloc_target(sim::target_registry&);

}  // namespace ferrite::crash::alloc_targets
