// crash/targets.hpp: every crash-test target ferrite ships, for `ferrite crashtest` and the
// crash tests. A target (ferrite/sim/target.hpp) is a structure, a workload and a checker;
// each lives in crash/<layer>/ beside the others of its layer and is registered here.
//
// This folder sits above every library layer (it uses the structures and the simulator);
// nothing in include/ or src/ includes it.
#pragma once

#include "ferrite/sim/target.hpp"

namespace ferrite::crash {

// Adds all built-in targets to `registry`.
void register_builtin_targets(sim::target_registry& registry);

// The built-in targets, registered once (for the CLI and tests).
const sim::target_registry& builtin_targets();

// Self-test targets of the simulator (crash/selftest/).
void register_selftest_targets(sim::target_registry& registry);

// The persistent buddy heap (crash/alloc/).
void register_alloc_targets(sim::target_registry& registry);
// ferrite::vector on PFC and FPFC (crash/containers/).
void register_vector_targets(sim::target_registry& registry);
// ferrite::stack (vector core), ferrite::deque and ferrite::queue (deque core) on PFC/FPFC.
void register_stack_targets(sim::target_registry& registry);
void register_deque_targets(sim::target_registry& registry);
// DFC stack, queue and deque (crash/containers/dfc_targets.cpp).
void register_dfc_targets(sim::target_registry& registry);
// The detectable PFC stack (crash/containers/dpfc_target.cpp).
void register_dpfc_targets(sim::target_registry& registry);
// Named vectors through ferrite::catalog (crash/containers/).
void register_catalog_targets(sim::target_registry& registry);
// Durable sets and maps and their node store (crash/sets/).
void register_sets_targets(sim::target_registry& registry);

}  // namespace ferrite::crash
