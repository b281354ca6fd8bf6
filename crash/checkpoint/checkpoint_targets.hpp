// crash/checkpoint/checkpoint_targets.hpp: crash-test targets of the checkpoint layer
// (ferrite/checkpoint: CpNvm).
#pragma once

#include <algorithm>
#include <cstdint>

#include "ferrite/sim/target.hpp"

namespace ferrite::crash::checkpoint_targets {

// Lockstep workloads (every operation ends in a checkpoint that commits): the epochs a
// crash image may hold, counted in operations. `low`: the most operations any thread had
// returned (a returned checkpoint committed its epoch); `high`: the most any had invoked.
struct epoch_bounds {
    std::uint64_t low = 0, high = 0;
};
inline epoch_bounds operation_bounds(const sim::progress_snapshot& at_crash, unsigned threads) {
    epoch_bounds b;
    for (unsigned t = 0; t < threads; ++t) {
        b.low = std::max(b.low, at_crash[t].completed);
        b.high = std::max(b.high, at_crash[t].completed + (at_crash[t].pending ? 1 : 0));
    }
    return b;
}

// cpnvm-counter: the epoch protocol under a program that checkpoints after every operation
// (cpnvm_counter_target.cpp).
void register_cpnvm_counter_target(sim::target_registry&);
// cpnvm-map: the B+-tree ported to CpNvm in a program image (cpnvm_map_target.cpp).
void register_cpnvm_map_target(sim::target_registry&);

}  // namespace ferrite::crash::checkpoint_targets
