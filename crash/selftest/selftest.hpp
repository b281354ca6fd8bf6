// crash/selftest/selftest.hpp: tiny persistent structures written correctly and with seeded
// bugs, to test the crash simulator itself (issue: "the simulator must catch a data-then-flag
// write without pwb+pfence between, a missing fence, a flush of the wrong line, a reordered
// flag, and a recovery that is not restartable"). Each file defines one structure and its
// flavours; targets named buggy-* are expected to fail.
#pragma once

#include <cstdint>
#include <memory>

#include "ferrite/sim/rng.hpp"
#include "ferrite/sim/target.hpp"

namespace ferrite::crash::selftest {

// The operand of operation `op` of thread `tid` in a run: deterministic, never zero.
inline std::uint64_t operand(std::uint64_t seed, unsigned tid, std::uint64_t op) noexcept {
    return sim::mix(seed, (std::uint64_t{tid} << 40) ^ op) | 1;
}

inline std::uint64_t round_up_to_line(std::uint64_t n) noexcept { return (n + 63) & ~std::uint64_t{63}; }

void register_log_targets(sim::target_registry&);
void register_transfer_targets(sim::target_registry&);

}  // namespace ferrite::crash::selftest
