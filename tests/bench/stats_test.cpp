// tests/bench/stats_test.cpp: median / min / max of repetitions (bench/stats.hpp).
#include "bench/stats.hpp"

#include <gtest/gtest.h>

#include <vector>

using ferrite::bench::summarize;

TEST(BenchStats, OddCountTakesTheMiddleValue) {
    const std::vector<double> v{5, 1, 4, 2, 3};
    const auto s = summarize(v);
    EXPECT_DOUBLE_EQ(s.median, 3);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 5);
}

TEST(BenchStats, EvenCountAveragesTheTwoMiddleValues) {
    const std::vector<double> v{10, 2, 8, 4};
    const auto s = summarize(v);
    EXPECT_DOUBLE_EQ(s.median, 6);
    EXPECT_DOUBLE_EQ(s.min, 2);
    EXPECT_DOUBLE_EQ(s.max, 10);
}

TEST(BenchStats, OneValueIsItsOwnSummary) {
    const std::vector<double> v{7.5};
    const auto s = summarize(v);
    EXPECT_DOUBLE_EQ(s.median, 7.5);
    EXPECT_DOUBLE_EQ(s.min, 7.5);
    EXPECT_DOUBLE_EQ(s.max, 7.5);
}

TEST(BenchStats, EmptyIsAllZero) {
    const auto s = summarize({});
    EXPECT_EQ(s.median, 0);
    EXPECT_EQ(s.min, 0);
    EXPECT_EQ(s.max, 0);
}

TEST(BenchStats, MedianIgnoresOneOutlier) {
    const std::vector<double> v{100, 101, 1, 99, 100};
    EXPECT_DOUBLE_EQ(summarize(v).median, 100);
}
