// crash/kv/kv_targets.hpp: crash targets of ferrite-kv's durable engines (apps/kv).
#pragma once

#include "ferrite/sim/target.hpp"

namespace ferrite::crash::kv_targets {

void register_kv_targets(sim::target_registry& registry);  // kv-soft, and:
void register_kv_cpnvm_target(sim::target_registry& registry);

}  // namespace ferrite::crash::kv_targets
