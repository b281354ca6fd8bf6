// index::tree, one thread: random operations and scans against std::map, with enough keys to
// split leaves and interior nodes several levels up, in sequential, reverse and random key
// orders; erase down to empty leaves and insert again.
//
// index::tree16 (16-byte keys, key128), one thread: random operations and scans against
// std::map, with keys that share their high word (so the order is decided by the low word)
// and keys that differ only in the high word, enough of them to split leaves and interior
// nodes several levels up; erase down to empty leaves and insert again.
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

namespace k16 {  // 16-byte keys (index::tree16)


using ferrite::index::key128;
using ferrite::index::tree16;
using model = std::map<key128, std::uint64_t>;
using pairs = std::vector<std::pair<key128, std::uint64_t>>;

pairs scan_from(const tree16& t, key128 from, std::size_t limit = std::numeric_limits<std::size_t>::max()) {
    pairs out;
    const std::size_t n = t.scan(from, limit, [&](key128 k, std::uint64_t v) { out.emplace_back(k, v); });
    EXPECT_EQ(n, out.size());
    return out;
}

void expect_same(const tree16& t, const model& m) {
    const pairs got = scan_from(t, key128{});
    ASSERT_EQ(got, pairs(m.begin(), m.end()));
}

void expect_range(const tree16& t, const model& m, key128 lo, key128 hi) {
    pairs got;
    t.scan_range(lo, hi, [&](key128 k, std::uint64_t v) { got.emplace_back(k, v); });
    pairs want;
    for (auto it = m.lower_bound(lo); it != m.end() && it->first < hi; ++it) want.push_back(*it);
    ASSERT_EQ(got, want);
}

// Keys from a few high words (many share one) and low words that cross the high word's
// boundary in value (so a comparison of the low word alone would order them wrongly).
key128 draw(std::mt19937_64& rng) {
    static constexpr std::uint64_t highs[] = {0, 1, 7, 0x8000000000000000ull, ~std::uint64_t{0}};
    const std::uint64_t hi = highs[rng() % 5];
    const std::uint64_t lo = (rng() % 4 == 0) ? ~std::uint64_t{0} - rng() % 300 : rng() % 600;
    return key128{hi, lo};
}

TEST(Tree16Model, KeyOrderIsHighWordThenLowWord) {
    EXPECT_LT((key128{0, ~std::uint64_t{0}}), (key128{1, 0}));
    EXPECT_LT((key128{5, 1}), (key128{5, 2}));
    EXPECT_LT((key128{0x7fffffffffffffffull, 9}), (key128{0x8000000000000000ull, 0}));  // unsigned words
    EXPECT_EQ((key128{3, 4}), (key128{3, 4}));
}

TEST(Tree16Model, KeysDifferingInOneWordOnly) {
    tree16 t;
    model m;
    // 600 keys with one high word and 600 with the same low words under other high words:
    // every leaf split separates keys that differ only in the low word, and the separators
    // between high words differ only in the high word.
    for (std::uint64_t lo = 0; lo < 600; ++lo)
        for (std::uint64_t hi : {std::uint64_t{2}, std::uint64_t{1}, std::uint64_t{3}}) {
            const key128 k{hi, lo * 0x9E3779B97F4A7C15ull};
            ASSERT_TRUE(t.insert(k, hi * 1000 + lo));
            m[k] = hi * 1000 + lo;
        }
    expect_same(t, m);
    EXPECT_GE(t.describe().height, 3u);
    for (const auto& [k, v] : m) {
        ASSERT_EQ(t.get(k), v);
        ASSERT_FALSE(t.get(key128{k.hi + 3, k.lo}));   // same low word, absent high word
        ASSERT_FALSE(t.get(key128{k.hi, k.lo + 1}) && !m.contains(key128{k.hi, k.lo + 1}));
    }
    expect_range(t, m, key128{1, 0}, key128{2, 0});           // exactly high word 1
    expect_range(t, m, key128{2, 0x8000000000000000ull}, key128{3, 0x10});
    EXPECT_EQ(scan_from(t, key128{3, 0}, 5).front().first.hi, 3u);
    // erase one high word entirely: the others are untouched
    for (std::uint64_t lo = 0; lo < 600; ++lo) {
        const key128 k{2, lo * 0x9E3779B97F4A7C15ull};
        ASSERT_TRUE(t.erase(k));
        m.erase(k);
    }
    expect_same(t, m);
    expect_range(t, m, key128{2, 0}, key128{3, 0});
}

class Tree16Random : public ::testing::TestWithParam<int> {};

TEST_P(Tree16Random, AgreesWithStdMap) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(GetParam()));
    tree16 t;
    model m;
    for (int round = 0; round < 4; ++round) {
        for (int i = 0; i < 4000; ++i) {
            const key128 k = draw(rng);
            const std::uint64_t v = rng();
            switch (v % 4) {
                case 0:
                case 1:
                    ASSERT_EQ(t.insert_or_assign(k, v), !m.contains(k));
                    m[k] = v;
                    break;
                case 2:
                    ASSERT_EQ(t.insert(k, v), !m.contains(k));
                    m.emplace(k, v);
                    break;
                default:
                    ASSERT_EQ(t.erase(k), m.erase(k) == 1);
            }
        }
        expect_same(t, m);
        for (int i = 0; i < 50; ++i) {
            const key128 a = draw(rng), b = draw(rng);
            expect_range(t, m, a, b);
            const pairs got = scan_from(t, a, 1 + rng() % 40);
            auto it = m.lower_bound(a);
            for (const auto& p : got) {
                ASSERT_NE(it, m.end());
                ASSERT_TRUE(p.first == it->first && p.second == it->second);
                ++it;
            }
        }
        if (round == 2) {  // down to empty leaves, then up again
            for (auto it = m.begin(); it != m.end();) {
                ASSERT_TRUE(t.erase(it->first));
                it = m.erase(it);
            }
            expect_same(t, m);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, Tree16Random, ::testing::Values(1, 2));

TEST(Tree16Model, AscendingAndDescendingLoads) {
    for (bool ascending : {true, false}) {
        tree16 t;
        model m;
        for (std::uint64_t i = 0; i < 3000; ++i) {
            const std::uint64_t j = ascending ? i : 2999 - i;
            const key128 k{j / 100, j % 100};  // 100 keys per high word
            ASSERT_TRUE(t.insert(k, j));
            m[k] = j;
        }
        expect_same(t, m);
        for (const auto& [k, v] : m) ASSERT_EQ(t.get(k), v);
    }
}

}  // namespace k16

}  // namespace
