// tests/bench/latency_histogram_test.cpp: the HdrHistogram-layout latency histogram
// (bench/latency_histogram.hpp): the index layout round-trips and is monotonic, percentiles
// match the nearest-rank sample of a sorted array of known samples to within the layout's
// precision, and merging per-thread histograms equals recording everything in one.
#include "bench/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace fb = ferrite::bench;
using hist = fb::latency_histogram;

namespace {

// Nearest rank of p/1000 (per mille) over n sorted samples: ceil(n * p / 1000), at least 1.
std::uint64_t nearest_rank_value(const std::vector<std::uint64_t>& sorted, std::uint64_t per_mille) {
    const std::uint64_t n = sorted.size();
    const std::uint64_t rank = std::max<std::uint64_t>(1, (n * per_mille + 999) / 1000);
    return sorted[rank - 1];
}

// The histogram reports the highest value equivalent to the exact sample: never below it,
// and above it by less than 1/1024 of it (exact below 2048).
void expect_close(std::uint64_t reported, std::uint64_t exact, const char* what) {
    EXPECT_GE(reported, exact) << what;
    EXPECT_LE(reported, exact + exact / 1024) << what;
}

}  // namespace

TEST(BenchLatencyHistogram, SmallValuesAreExactAndLargeOnesWithin1In1024) {
    for (std::uint64_t v = 0; v < hist::sub_bucket_count; ++v) {
        const auto i = hist::index_of(v);
        ASSERT_EQ(hist::lowest_equivalent(i), v);
        ASSERT_EQ(hist::highest_equivalent(i), v);
    }
    std::size_t last = 0;
    for (std::uint64_t v = 1; v < hist::highest_trackable; v = v + v / 7 + 1) {
        const auto i = hist::index_of(v);
        ASSERT_LT(i, hist::counts_length()) << v;
        ASSERT_GE(i, last) << v;  // monotonic
        last = i;
        ASSERT_LE(hist::lowest_equivalent(i), v) << v;
        ASSERT_GE(hist::highest_equivalent(i), v) << v;
        ASSERT_LE(hist::highest_equivalent(i) - hist::lowest_equivalent(i), v / 1024) << v;
    }
    // Buckets double: the first value of each bucket starts a new index, sub-buckets widen by 2.
    EXPECT_EQ(hist::index_of(2048), 2048u);
    EXPECT_EQ(hist::index_of(2049), 2048u);
    EXPECT_EQ(hist::index_of(2050), 2049u);
    EXPECT_EQ(hist::index_of(4096), 3072u);
    EXPECT_EQ(hist::highest_equivalent(hist::index_of(4096)), 4099u);
    EXPECT_EQ(hist::index_of(hist::highest_trackable), hist::counts_length() - 1);
    EXPECT_EQ(hist::index_of(~std::uint64_t{0}), hist::counts_length() - 1);  // clamped
}

TEST(BenchLatencyHistogram, PercentilesMatchTheSortedSamples) {
    std::mt19937_64 rng(17);
    // Log-uniform over 10 ns .. 10 ms, like operation latencies with a long tail.
    std::uniform_real_distribution<double> exponent(1.0, 7.0);
    for (std::size_t n : {1u, 7u, 1000u, 12345u}) {
        std::vector<std::uint64_t> samples(n);
        hist h;
        for (auto& s : samples) {
            s = static_cast<std::uint64_t>(std::pow(10.0, exponent(rng)));
            h.record(s);
        }
        std::sort(samples.begin(), samples.end());
        ASSERT_EQ(h.count(), n);
        for (std::uint64_t pm : {1u, 250u, 500u, 900u, 990u, 999u, 1000u}) {
            SCOPED_TRACE(testing::Message() << "n " << n << " per mille " << pm);
            expect_close(h.value_at_percentile(static_cast<double>(pm) / 10.0), nearest_rank_value(samples, pm),
                         "percentile");
        }
    }
}

TEST(BenchLatencyHistogram, KnownSmallDistribution) {
    hist h;
    for (std::uint64_t v = 1; v <= 1000; ++v) h.record(v);  // exact below 2048
    EXPECT_EQ(h.value_at_percentile(50), 500u);
    EXPECT_EQ(h.value_at_percentile(99), 990u);
    EXPECT_EQ(h.value_at_percentile(99.9), 999u);
    EXPECT_EQ(h.value_at_percentile(100), 1000u);
    EXPECT_EQ(h.value_at_percentile(0), 1u);
    EXPECT_EQ(hist().value_at_percentile(50), 0u);  // empty
    hist many;
    many.record_n(100, 999);
    many.record(1'000'000);
    EXPECT_EQ(many.value_at_percentile(99.9), 100u);
    expect_close(many.value_at_percentile(100), 1'000'000, "max");
}

TEST(BenchLatencyHistogram, MergeEqualsRecordingInOne) {
    std::mt19937_64 rng(3);
    std::uniform_int_distribution<std::uint64_t> v(0, 5'000'000);
    hist all, parts[4];
    for (int i = 0; i < 40000; ++i) {
        const auto x = v(rng);
        all.record(x);
        parts[i % 4].record(x);
    }
    hist merged;
    for (const auto& p : parts) merged.merge(p);
    EXPECT_EQ(merged.count(), all.count());
    for (double p : {0.0, 10.0, 50.0, 99.0, 99.9, 100.0}) EXPECT_EQ(merged.value_at_percentile(p), all.value_at_percentile(p)) << p;
    merged.clear();
    EXPECT_EQ(merged.count(), 0u);
    EXPECT_EQ(merged.value_at_percentile(50), 0u);
}
