// ferrite-kv-load's latency histogram: buckets tile the 64-bit range without gaps or overlap,
// no bucket is wider than 1/128 of its values, and quantiles are never below the true value
// and at most 0.78% above it; merging equals recording everything in one histogram.
#include "load/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace ferrite::kv::load {
namespace {

TEST(Histogram, BucketsTileTheWholeRange) {
  EXPECT_EQ(histogram::bucket_low(0), 0u);
  for (std::size_t i = 0; i + 1 < histogram::bucket_count; ++i) {
    ASSERT_LE(histogram::bucket_low(i), histogram::bucket_high(i)) << i;
    ASSERT_EQ(histogram::bucket_high(i) + 1, histogram::bucket_low(i + 1)) << i;
  }
  EXPECT_EQ(histogram::bucket_high(histogram::bucket_count - 1), UINT64_MAX);
}

TEST(Histogram, EveryValueLandsInTheBucketThatHoldsIt) {
  std::mt19937_64 random(7);
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 0; v < 70000; ++v) values.push_back(v);
  for (int bits = 1; bits <= 64; ++bits) {
    const std::uint64_t top = bits == 64 ? UINT64_MAX : (std::uint64_t{1} << bits) - 1;
    values.push_back(top);
    values.push_back(top / 2 + 1);
    for (int i = 0; i < 200; ++i) values.push_back(random() & top);
  }
  for (const std::uint64_t v : values) {
    const std::size_t b = histogram::bucket_of(v);
    ASSERT_LT(b, histogram::bucket_count) << v;
    ASSERT_LE(histogram::bucket_low(b), v) << v;
    ASSERT_GE(histogram::bucket_high(b), v) << v;
  }
}

TEST(Histogram, ExactBelow256AndWithinOneIn128Above) {
  for (std::size_t i = 0; i < 256; ++i) EXPECT_EQ(histogram::bucket_low(i), histogram::bucket_high(i));
  for (std::size_t i = 256; i < histogram::bucket_count; ++i) {
    const double width = static_cast<double>(histogram::bucket_high(i) - histogram::bucket_low(i)) + 1;
    ASSERT_LE(width / static_cast<double>(histogram::bucket_low(i)), 1.0 / 128) << i;
  }
}

TEST(Histogram, QuantilesAreNeverLowAndAtMostOnePercentHigh) {
  auto h = std::make_unique<histogram>();
  std::mt19937_64 random(11);
  std::lognormal_distribution<double> latency(11.0, 1.0);  // around 60 us, a long tail
  std::vector<std::uint64_t> values;
  for (int i = 0; i < 200000; ++i) values.push_back(static_cast<std::uint64_t>(latency(random)));
  for (const std::uint64_t v : values) h->record(v);
  std::sort(values.begin(), values.end());
  for (const double q : {0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    // The ceil(q * n)-th smallest value.
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    const std::uint64_t truth = values[std::max<std::size_t>(rank, 1) - 1];
    const std::uint64_t got = h->value_at(q);
    EXPECT_GE(got, truth) << q;
    EXPECT_LE(static_cast<double>(got), static_cast<double>(truth) * (1 + 1.0 / 128)) << q;
  }
  EXPECT_EQ(h->count(), values.size());
  EXPECT_EQ(h->max(), values.back());
  EXPECT_EQ(h->min(), values.front());
  EXPECT_EQ(h->value_at(1.0), values.back());
}

TEST(Histogram, SmallValuesAreExact) {
  auto h = std::make_unique<histogram>();
  for (std::uint64_t v = 1; v <= 100; ++v) h->record(v);
  EXPECT_EQ(h->value_at(0.5), 50u);
  EXPECT_EQ(h->value_at(0.99), 99u);
  EXPECT_EQ(h->value_at(0.0), 1u);  // the smallest value, not 0
  EXPECT_DOUBLE_EQ(h->mean(), 50.5);
}

TEST(Histogram, EmptyReadsZero) {
  const auto h = std::make_unique<histogram>();
  EXPECT_EQ(h->count(), 0u);
  EXPECT_EQ(h->value_at(0.99), 0u);
  EXPECT_EQ(h->max(), 0u);
  EXPECT_EQ(h->min(), 0u);
  EXPECT_EQ(h->mean(), 0.0);
}

TEST(Histogram, MergeEqualsRecordingEverythingInOne) {
  auto a = std::make_unique<histogram>();
  auto b = std::make_unique<histogram>();
  auto both = std::make_unique<histogram>();
  std::mt19937_64 random(3);
  for (int i = 0; i < 50000; ++i) {
    const std::uint64_t v = random() % 10'000'000;
    (i % 3 == 0 ? *a : *b).record(v);
    both->record(v);
  }
  a->merge(*b);
  EXPECT_EQ(a->count(), both->count());
  EXPECT_EQ(a->max(), both->max());
  EXPECT_EQ(a->min(), both->min());
  EXPECT_DOUBLE_EQ(a->mean(), both->mean());
  for (const double q : {0.1, 0.5, 0.9, 0.99, 0.999}) EXPECT_EQ(a->value_at(q), both->value_at(q)) << q;
}

}  // namespace
}  // namespace ferrite::kv::load
