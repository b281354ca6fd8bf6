// Registration of the alloc layer's crash-test targets.
#include "alloc_targets.hpp"
#include "targets.hpp"

namespace ferrite::crash {

void register_alloc_targets(sim::target_registry& registry) {
    alloc_targets::register_alloc_target(registry);
}

}  // namespace ferrite::crash
