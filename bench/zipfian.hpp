// bench/zipfian.hpp: Zipfian key choice for the keyed workloads, as YCSB draws it.
//
// zipfian_generator is the method of Gray et al., "Quickly generating billion-record
// synthetic databases" (SIGMOD 1994), as YCSB's ZipfianGenerator uses it: item i of n
// (0 = most popular) is drawn with probability about 1 / ((i + 1)^theta * zeta(n, theta)),
// items 0 and 1 exactly, from one uniform u in [0, 1) and two pow() calls; zeta(n, theta)
// = sum 1/i^theta for i = 1..n is computed once.
//
// scrambled_zipfian is YCSB's ScrambledZipfianGenerator with its default constant
// (theta 0.99): a Zipfian over 10^10 items, with zeta taken as the precomputed constant
// (checked in the tests), whose item is hashed with 64-bit FNV-1a and reduced modulo n.
// So the popular keys are scattered over the key range instead of being 0, 1, 2..., and the
// most popular key receives the share of the 10^10-item Zipfian's first item, 1/zeta
// (3.8 %), whatever n is. (YCSB takes the absolute value of a signed hash before the modulo;
// here the hash is unsigned, which changes which keys are hot, not how hot.)
#pragma once

#include <cstdint>

namespace ferrite::bench {

inline constexpr double ycsb_zipfian_theta = 0.99;
// YCSB's ScrambledZipfianGenerator: items of the underlying Zipfian, and zeta(10^10, 0.99).
inline constexpr std::uint64_t scrambled_zipfian_items = 10'000'000'000ULL;
inline constexpr double scrambled_zipfian_zeta = 26.46902820178302;

// sum_{i=1}^{n} 1 / i^theta, summed directly (O(n)).
double zeta(std::uint64_t n, double theta) noexcept;

// 64-bit FNV-1a over the 8 bytes of x, least significant first.
std::uint64_t fnv1a64(std::uint64_t x) noexcept;

class zipfian_generator {
public:
    // n >= 1 items; theta in (0, 1). The first form sums zeta(n, theta).
    zipfian_generator(std::uint64_t n, double theta);
    zipfian_generator(std::uint64_t n, double theta, double zeta_n);

    // u uniform in [0, 1): an item in [0, n), 0 the most popular.
    std::uint64_t next(double u) const noexcept;

    std::uint64_t items() const noexcept { return n_; }
    double zeta_n() const noexcept { return zeta_n_; }

private:
    std::uint64_t n_;
    double zeta_n_;
    double alpha_;       // 1 / (1 - theta)
    double eta_;
    double second_edge_; // 1 + 0.5^theta: below it (times zeta) item 1 is drawn
};

class scrambled_zipfian {
public:
    explicit scrambled_zipfian(std::uint64_t n);  // n >= 1 keys
    std::uint64_t next(double u) const noexcept { return fnv1a64(base_.next(u)) % n_; }

private:
    std::uint64_t n_;
    zipfian_generator base_;
};

}  // namespace ferrite::bench
