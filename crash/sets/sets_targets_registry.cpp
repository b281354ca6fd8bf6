// Registration of the sets layer's crash-test targets.
#include "sets_targets.hpp"
#include "targets.hpp"

namespace ferrite::crash {

void register_sets_targets(sim::target_registry& registry) {
    sets_targets::register_node_store_target(registry);
    sets_targets::register_linkfree_targets(registry);
}

}  // namespace ferrite::crash
