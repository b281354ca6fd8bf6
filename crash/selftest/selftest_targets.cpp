// Registration of the simulator's self-test targets.
#include "selftest.hpp"
#include "targets.hpp"

namespace ferrite::crash {

void register_selftest_targets(sim::target_registry& registry) {
    selftest::register_log_targets(registry);
    selftest::register_transfer_targets(registry);
}

}  // namespace ferrite::crash
