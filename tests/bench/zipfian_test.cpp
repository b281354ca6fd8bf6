// tests/bench/zipfian_test.cpp: the Zipfian key generators (bench/zipfian.hpp): the most
// popular items get the shares Zipf's law gives them, the precomputed zeta of YCSB's 10^10
// items is right, scrambling spreads the popular keys over the range while the hottest key
// keeps its share, and every draw lies in range.
#include "bench/zipfian.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace fb = ferrite::bench;

namespace {

constexpr int draws = 1'000'000;

std::vector<std::uint64_t> histogram_of(auto&& next, std::uint64_t n, int samples = draws) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<std::uint64_t> h(n);
    for (int i = 0; i < samples; ++i) {
        const auto k = next(u(rng));
        EXPECT_LT(k, n);
        if (k < n) ++h[k];
    }
    return h;
}

double share(std::uint64_t count) { return static_cast<double>(count) / draws; }

}  // namespace

TEST(BenchZipfian, MostPopularItemsGetZipfsShares) {
    const std::uint64_t n = 1000;
    const fb::zipfian_generator z(n, fb::ycsb_zipfian_theta);
    const auto h = histogram_of([&](double u) { return z.next(u); }, n);
    const double zn = fb::zeta(n, fb::ycsb_zipfian_theta);
    EXPECT_DOUBLE_EQ(z.zeta_n(), zn);
    // Items 0 and 1 are drawn exactly with Zipf's probabilities: 1/zeta and 2^-theta/zeta.
    EXPECT_NEAR(share(h[0]), 1.0 / zn, 0.003);
    EXPECT_NEAR(share(h[1]), std::pow(2.0, -fb::ycsb_zipfian_theta) / zn, 0.003);
    // Beyond them Gray's method approximates the law: the 10 most popular items together
    // within 10 % of their Zipf share, and popularity falls with the rank.
    double top10 = 0;
    for (int i = 1; i <= 10; ++i) top10 += std::pow(i, -fb::ycsb_zipfian_theta) / zn;
    std::uint64_t got10 = 0;
    for (int i = 0; i < 10; ++i) got10 += h[static_cast<std::size_t>(i)];
    EXPECT_NEAR(share(got10), top10, top10 * 0.1);
    EXPECT_GT(h[0], h[1]);
    EXPECT_GT(h[1], h[10]);
    EXPECT_GT(h[10], h[500]);
}

TEST(BenchZipfian, YcsbZetaOfTenBillionItemsIsRight) {
    // Euler-Maclaurin: the sum up to m directly, the rest as integral plus end corrections.
    const double s = fb::ycsb_zipfian_theta;
    const double m = 1e6, n = static_cast<double>(fb::scrambled_zipfian_items);
    double sum = fb::zeta(static_cast<std::uint64_t>(m), s);
    auto f = [&](double x) { return std::pow(x, -s); };
    auto df = [&](double x) { return -s * std::pow(x, -s - 1); };
    sum += (std::pow(n, 1 - s) - std::pow(m, 1 - s)) / (1 - s) + (f(n) - f(m)) / 2 + (df(n) - df(m)) / 12;
    EXPECT_NEAR(sum, fb::scrambled_zipfian_zeta, 1e-6);
}

TEST(BenchZipfian, ScramblingSpreadsThePopularKeysAndKeepsTheHottestShare) {
    const std::uint64_t n = 1000;
    const fb::scrambled_zipfian z(n);
    const auto h = histogram_of([&](double u) { return z.next(u); }, n);
    // The hottest key is where item 0 of the underlying Zipfian hashes to: its share is
    // 1/zeta(10^10) = 3.8 %, plus the ~0.1 % every key gets from the long tail.
    const auto hottest = fb::fnv1a64(0) % n;
    const double first = 1.0 / fb::scrambled_zipfian_zeta;
    EXPECT_EQ(static_cast<std::uint64_t>(std::max_element(h.begin(), h.end()) - h.begin()), hottest);
    EXPECT_GT(share(h[hottest]), first);
    EXPECT_LT(share(h[hottest]), first + 0.01);
    EXPECT_GT(share(h[fb::fnv1a64(1) % n]), std::pow(0.5, fb::ycsb_zipfian_theta) / fb::scrambled_zipfian_zeta);
    // The 10 hottest keys are scattered: they fall in at least 5 of the 10 tenths of the
    // range (unscrambled, all 10 would be keys 0..9).
    std::vector<std::uint64_t> order(n);
    for (std::uint64_t i = 0; i < n; ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + 10, order.end(),
                      [&](auto a, auto b) { return h[a] > h[b]; });
    std::set<std::uint64_t> tenths;
    for (int i = 0; i < 10; ++i) tenths.insert(order[static_cast<std::size_t>(i)] * 10 / n);
    EXPECT_GE(tenths.size(), 5u);
    // Still skewed: the hottest key is drawn far more often than a uniform key (0.1 %), and
    // yet nearly every key is drawn.
    EXPECT_GT(h[hottest], 20u * draws / n);
    EXPECT_GT(std::count_if(h.begin(), h.end(), [](auto c) { return c > 0; }), 990);
}

TEST(BenchZipfian, EdgesStayInRange) {
    for (std::uint64_t n : {1u, 2u, 3u, 100u}) {
        const fb::zipfian_generator z(n, fb::ycsb_zipfian_theta);
        const fb::scrambled_zipfian s(n);
        for (double u : {0.0, 1e-12, 0.5, 0.999999, std::nextafter(1.0, 0.0)}) {
            EXPECT_LT(z.next(u), n) << n << " " << u;
            EXPECT_LT(s.next(u), n) << n << " " << u;
        }
    }
    EXPECT_EQ(fb::zipfian_generator(1, 0.99).next(0.7), 0u);
}

TEST(BenchZipfian, FnvIsFnv1aOverTheLittleEndianBytes) {
    // FNV-1a of eight zero bytes, and of the bytes 01 00 .. 00, computed by hand from the
    // definition (xor the byte, multiply by the prime).
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < 8; ++i) h *= 0x100000001b3ULL;
    EXPECT_EQ(fb::fnv1a64(0), h);
    h = (0xcbf29ce484222325ULL ^ 1) * 0x100000001b3ULL;
    for (int i = 1; i < 8; ++i) h *= 0x100000001b3ULL;
    EXPECT_EQ(fb::fnv1a64(1), h);
}
