// index::tree, one thread: random operations and scans against std::map, with enough keys to
// split leaves and interior nodes several levels up, in sequential, reverse and random key
// orders; erase down to empty leaves and insert again.
#include "ferrite/index/tree.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

namespace {

using ferrite::index::tree;
using pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

pairs scan_all(const tree& t) {
    pairs out;
    t.scan(0, std::numeric_limits<std::size_t>::max(), [&](std::uint64_t k, std::uint64_t v) { out.emplace_back(k, v); });
    return out;
}

void expect_same(const tree& t, const std::map<std::uint64_t, std::uint64_t>& m) {
    const pairs got = scan_all(t);
    ASSERT_EQ(got.size(), m.size());
    auto it = m.begin();
    for (const auto& [k, v] : got) {
        ASSERT_EQ(k, it->first);
        ASSERT_EQ(v, it->second);
        ++it;
    }
}

// Checks a from-key scan and a range scan starting at `from` against the model.
void expect_scans(const tree& t, const std::map<std::uint64_t, std::uint64_t>& m, std::uint64_t from, std::size_t limit,
                  std::uint64_t hi) {
    pairs got;
    const std::size_t n = t.scan(from, limit, [&](std::uint64_t k, std::uint64_t v) { got.emplace_back(k, v); });
    ASSERT_EQ(n, got.size());
    auto it = m.lower_bound(from);
    for (std::size_t i = 0; i < got.size(); ++i, ++it) {
        ASSERT_NE(it, m.end());
        ASSERT_EQ(got[i].first, it->first);
        ASSERT_EQ(got[i].second, it->second);
    }
    ASSERT_TRUE(got.size() == limit || it == m.end()) << "stopped early";
    got.clear();
    t.scan_range(from, hi, [&](std::uint64_t k, std::uint64_t v) { got.emplace_back(k, v); });
    it = m.lower_bound(from);
    for (const auto& [k, v] : got) {
        ASSERT_NE(it, m.end());
        ASSERT_EQ(k, it->first);
        ASSERT_EQ(v, it->second);
        ++it;
    }
    ASSERT_TRUE(it == m.end() || it->first >= hi) << "range scan stopped early";
}

TEST(TreeModel, EmptyTree) {
    tree t;
    EXPECT_FALSE(t.get(0));
    EXPECT_FALSE(t.get(~std::uint64_t{0}));
    EXPECT_FALSE(t.erase(5));
    EXPECT_TRUE(scan_all(t).empty());
    EXPECT_EQ(t.scan_range(9, 3, [](std::uint64_t, std::uint64_t) {}), 0u);
    EXPECT_EQ(t.describe().height, 1u);
}

TEST(TreeModel, ExtremeKeys) {
    tree t;
    const std::uint64_t max = ~std::uint64_t{0};
    EXPECT_TRUE(t.insert_or_assign(max, 1));
    EXPECT_TRUE(t.insert_or_assign(0, 2));
    EXPECT_FALSE(t.insert_or_assign(max, 3));
    EXPECT_EQ(t.get(max), 3u);
    EXPECT_EQ(t.get(0), 2u);
    EXPECT_EQ(scan_all(t), (pairs{{0, 2}, {max, 3}}));
    pairs got;
    t.scan_range(1, max, [&](std::uint64_t k, std::uint64_t v) { got.emplace_back(k, v); });
    EXPECT_TRUE(got.empty()) << "hi is exclusive";
}

void sequential_fill(bool reverse, std::uint64_t n) {
    tree t;
    std::map<std::uint64_t, std::uint64_t> m;
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t k = reverse ? (n - i) * 3 : i * 3;
        ASSERT_TRUE(t.insert_or_assign(k, k + 1));
        m[k] = k + 1;
    }
    expect_same(t, m);
    for (std::uint64_t k = 0; k <= 3 * n + 3; ++k) {
        const auto v = t.get(k);
        const auto it = m.find(k);
        ASSERT_EQ(v.has_value(), it != m.end()) << k;
        if (v) {
            ASSERT_EQ(*v, it->second);
        }
    }
    const auto s = t.describe();
    EXPECT_GE(s.height, 3u) << "interior nodes split";
    EXPECT_GE(s.leaves, n / 14);
    for (std::uint64_t from = 0; from < 3 * n; from += 997) expect_scans(t, m, from, 50, from + 300);
}

TEST(TreeModel, SequentialKeysSplitEveryLevel) { sequential_fill(false, 20000); }
TEST(TreeModel, ReverseKeysSplitEveryLevel) { sequential_fill(true, 20000); }

void random_ops(std::uint64_t key_space, int ops, std::uint64_t seed) {
    tree t;
    std::map<std::uint64_t, std::uint64_t> m;
    std::mt19937_64 rng(seed);
    for (int i = 0; i < ops; ++i) {
        const std::uint64_t k = rng() % key_space * 0x9e3779b97f4a7c15ULL >> 8;  // spread over the key space
        const unsigned what = static_cast<unsigned>(rng() % 100);
        if (what < 35) {
            const std::uint64_t v = rng();
            ASSERT_EQ(t.insert_or_assign(k, v), !m.contains(k));
            m[k] = v;
        } else if (what < 45) {
            const std::uint64_t v = rng();
            ASSERT_EQ(t.insert(k, v), m.emplace(k, v).second) << "insert leaves a present key's value";
        } else if (what < 75) {
            ASSERT_EQ(t.erase(k), m.erase(k) == 1);
        } else if (what < 97) {
            const auto v = t.get(k);
            const auto it = m.find(k);
            ASSERT_EQ(v.has_value(), it != m.end());
            if (v) {
                ASSERT_EQ(*v, it->second);
            }
        } else {
            expect_scans(t, m, k, static_cast<std::size_t>(rng() % 40), k + (rng() % 4 == 0 ? 0 : rng() >> 20));
        }
        if (i % 5000 == 4999) expect_same(t, m);
    }
    expect_same(t, m);
    // erase everything (leaves stay, empty), then fill again through the empty leaves
    for (const auto& [k, v] : m) ASSERT_TRUE(t.erase(k));
    EXPECT_TRUE(scan_all(t).empty());
    for (const auto& [k, v] : m) ASSERT_TRUE(t.insert_or_assign(k, v + 1));
    for (auto& [k, v] : m) ++v;
    expect_same(t, m);
}

TEST(TreeModel, RandomOpsFewKeys) { random_ops(60, 20000, 1); }
TEST(TreeModel, RandomOpsManyKeys) { random_ops(40000, 60000, 2); }
TEST(TreeModel, RandomOpsDenseKeys) {
    tree t;
    std::map<std::uint64_t, std::uint64_t> m;
    std::mt19937_64 rng(3);
    for (int i = 0; i < 60000; ++i) {
        const std::uint64_t k = rng() % 5000;
        if (rng() % 3 == 0) {
            ASSERT_EQ(t.erase(k), m.erase(k) == 1);
        } else {
            ASSERT_EQ(t.insert_or_assign(k, i), !m.contains(k));
            m[k] = static_cast<std::uint64_t>(i);
        }
    }
    expect_same(t, m);
    for (std::uint64_t from = 0; from < 5000; from += 37) expect_scans(t, m, from, 20, from + 100);
}

}  // namespace
