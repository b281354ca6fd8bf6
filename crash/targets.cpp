// The registry of built-in crash-test targets (see crash/targets.hpp).
#include "targets.hpp"

#include "checkpoint/checkpoint_targets.hpp"
#include "index/index_targets.hpp"
#include "kv/kv_targets.hpp"

namespace ferrite::crash {

void register_builtin_targets(sim::target_registry& registry) {
    register_selftest_targets(registry);
    register_alloc_targets(registry);
    register_vector_targets(registry);
    register_stack_targets(registry);
    register_deque_targets(registry);
    register_dfc_targets(registry);
    register_dpfc_targets(registry);
    register_catalog_targets(registry);
    register_sets_targets(registry);
    checkpoint_targets::register_cpnvm_counter_target(registry);
    checkpoint_targets::register_cpnvm_map_target(registry);
    kv_targets::register_kv_targets(registry);
    index_targets::register_incll_tree_target(registry);
}

const sim::target_registry& builtin_targets() {
    static const sim::target_registry registry = [] {
        sim::target_registry r;
        register_builtin_targets(r);
        return r;
    }();
    return registry;
}

}  // namespace ferrite::crash
