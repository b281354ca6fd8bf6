// ferrite/sim/rng.hpp: the simulator's deterministic random numbers.
//
// Everything random in a crash campaign (which thread runs next, which unpersisted lines a
// crash keeps, whether recovery is crashed too) is drawn from splitmix64 streams derived from
// the campaign seed with mix(), so that one (seed, crash point) pair always rebuilds the same
// crash. splitmix64 (Steele, Lea, Flood 2014) is tiny, fast and passes BigCrush; we need
// reproducibility and decent spread, not cryptographic quality.
#pragma once

#include <cstdint>

namespace ferrite::sim {

// A stateless 64-bit finaliser: derive an independent stream seed from (a, b).
constexpr std::uint64_t mix(std::uint64_t a, std::uint64_t b = 0) noexcept {
    std::uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

class rng {
public:
    explicit constexpr rng(std::uint64_t seed) noexcept : state_(seed) {}
    constexpr std::uint64_t next() noexcept {
        state_ += 0x9e3779b97f4a7c15ull;
        return mix(state_);
    }
    // Uniform in [0, n); n > 0. (Modulo bias is < 2^-40 for the n we use.)
    constexpr std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }
    // True with probability p.
    constexpr bool chance(double p) noexcept {
        return static_cast<double>(next() >> 11) * 0x1.0p-53 < p;
    }

private:
    std::uint64_t state_;
};

}  // namespace ferrite::sim
