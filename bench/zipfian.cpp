// bench/zipfian.cpp: Gray et al.'s Zipfian generator and YCSB's scrambling (see the header).
#include "bench/zipfian.hpp"

#include <algorithm>
#include <cmath>

namespace ferrite::bench {

double zeta(std::uint64_t n, double theta) noexcept {
    double sum = 0;
    for (std::uint64_t i = 1; i <= n; ++i) sum += 1.0 / std::pow(static_cast<double>(i), theta);
    return sum;
}

std::uint64_t fnv1a64(std::uint64_t x) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV offset basis
    for (int i = 0; i < 8; ++i) {
        h ^= x & 0xff;
        h *= 0x100000001b3ULL;  // FNV prime
        x >>= 8;
    }
    return h;
}

zipfian_generator::zipfian_generator(std::uint64_t n, double theta)
    : zipfian_generator(n, theta, zeta(n, theta)) {}

zipfian_generator::zipfian_generator(std::uint64_t n, double theta, double zeta_n)
    : n_(std::max<std::uint64_t>(n, 1)),
      zeta_n_(zeta_n),
      alpha_(1.0 / (1.0 - theta)),
      eta_((1.0 - std::pow(2.0 / static_cast<double>(n_), 1.0 - theta)) / (1.0 - zeta(2, theta) / zeta_n)),
      second_edge_(1.0 + std::pow(0.5, theta)) {}

std::uint64_t zipfian_generator::next(double u) const noexcept {
    const double uz = u * zeta_n_;
    if (uz < 1.0) return 0;
    if (uz < second_edge_ || n_ == 2) return std::min<std::uint64_t>(1, n_ - 1);
    const double x = static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_);
    // u just below 1 gives x = n: the last item.
    return std::min(static_cast<std::uint64_t>(x), n_ - 1);
}

scrambled_zipfian::scrambled_zipfian(std::uint64_t n)
    : n_(std::max<std::uint64_t>(n, 1)),
      base_(scrambled_zipfian_items, ycsb_zipfian_theta, scrambled_zipfian_zeta) {}

}  // namespace ferrite::bench
