// tests/bench/btree_test.cpp: bench::btree (bench/trees/btree.hpp) against a std::map, one
// thread. Random operation streams (insert, put, erase, get, contains, scan; 100k per run,
// several seeds, growing then shrinking the tree), sequential and reverse-sequential keys,
// and deleting everything down to an empty root leaf, each with the structural invariants
// of btree_check.hpp checked along the way, for fanouts 4 (deep trees, every borrow and
// merge path on inner nodes), 7 (odd: the halves of a split differ) and 32 (the bench's).
// The concurrent test is btree_concurrency_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "bench/trees/btree.hpp"
#include "bench/trees/btree_check.hpp"

namespace fb = ferrite::bench;

namespace {

using u64 = std::uint64_t;
using model = std::map<u64, u64>;

template <class Tree>
class BTree : public ::testing::Test {};
using fanouts = ::testing::Types<fb::btree<u64, u64, 4>, fb::btree<u64, u64, 7>, fb::btree<u64, u64, 32>>;
TYPED_TEST_SUITE(BTree, fanouts);

template <class Tree>
model contents(const Tree& t) {
    model m;
    u64 prev = 0;
    bool first = true;
    t.scan(0, ~std::size_t{0}, [&](u64 k, u64 v) {
        EXPECT_TRUE(first || prev < k) << "scan out of order at " << k;
        first = false;
        prev = k;
        m.emplace(k, v);
    });
    return m;
}

// The invariants hold and the tree holds exactly m.
template <class Tree>
fb::btree_report expect_matches(const Tree& t, const model& m) {
    const auto r = fb::check_btree(t);
    EXPECT_TRUE(r.ok()) << r.problem;
    EXPECT_EQ(t.size(), m.size());
    EXPECT_EQ(contents(t), m);
    return r;
}

// One scan of the tree against the model's.
template <class Tree>
void expect_same_scan(const Tree& t, const model& m, u64 from, std::size_t count) {
    std::vector<std::pair<u64, u64>> got, want;
    const std::size_t n = t.scan(from, count, [&](u64 k, u64 v) { got.emplace_back(k, v); });
    for (auto it = m.lower_bound(from); it != m.end() && want.size() < count; ++it) want.emplace_back(*it);
    EXPECT_EQ(n, got.size());
    EXPECT_EQ(got, want) << "scan from " << from << " count " << count;
}

// `ops` random operations on keys below key_range, in four phases: mostly inserts, mixed,
// mostly erases, mixed, so the tree grows towards key_range keys and shrinks again.
// Sets max_height to the greatest height seen.
template <class Tree>
void run_random(std::uint64_t seed, u64 key_range, unsigned ops, std::size_t& max_height) {
    Tree t;
    model m;
    std::mt19937_64 rng(seed);
    max_height = 0;
    for (unsigned i = 0; i < ops; ++i) {
        const unsigned phase = 4 * i / ops;
        const unsigned insert_weight = phase == 0 ? 60 : phase == 2 ? 10 : 30;
        const unsigned erase_weight = phase == 0 ? 10 : phase == 2 ? 60 : 30;
        const unsigned roll = static_cast<unsigned>(rng() % 100);
        const u64 key = rng() % key_range, value = rng();
        if (roll < insert_weight) {
            const bool added = m.emplace(key, value).second;
            ASSERT_EQ(t.insert(key, value), added) << "insert " << key << " op " << i;
        } else if (roll < insert_weight + erase_weight) {
            ASSERT_EQ(t.erase(key), m.erase(key) == 1) << "erase " << key << " op " << i;
        } else if (roll < insert_weight + erase_weight + 10) {
            const bool added = !m.contains(key);
            m.insert_or_assign(key, value);
            ASSERT_EQ(t.put(key, value), added) << "put " << key << " op " << i;
        } else if (roll < insert_weight + erase_weight + 20) {
            const auto it = m.find(key);
            ASSERT_EQ(t.get(key), it == m.end() ? std::nullopt : std::optional<u64>(it->second)) << "get " << key;
        } else if (roll < insert_weight + erase_weight + 25) {
            ASSERT_EQ(t.contains(key), m.contains(key)) << "contains " << key;
        } else {
            expect_same_scan(t, m, key, static_cast<std::size_t>(rng() % 40));
        }
        if (i % 997 == 0 || i + 1 == ops) {
            const auto r = fb::check_btree(t);
            ASSERT_TRUE(r.ok()) << r.problem << " after op " << i << ", seed " << seed;
            ASSERT_EQ(r.keys, m.size());
            max_height = std::max(max_height, r.height);
        }
    }
    expect_matches(t, m);
}

}  // namespace

TYPED_TEST(BTree, EmptyTree) {
    TypeParam t;
    EXPECT_EQ(t.size(), 0u);
    EXPECT_FALSE(t.contains(0));
    EXPECT_EQ(t.get(5), std::nullopt);
    EXPECT_FALSE(t.erase(5));
    bool called = false;
    EXPECT_EQ(t.scan(0, 10, [&](u64, u64) { called = true; }), 0u);
    EXPECT_FALSE(called);
    const auto r = fb::check_btree(t);
    EXPECT_TRUE(r.ok()) << r.problem;
    EXPECT_EQ(r.height, 1u);
    EXPECT_EQ(r.leaves, 1u);
}

TYPED_TEST(BTree, InsertPutEraseSayWhatTheyDid) {
    TypeParam t;
    EXPECT_TRUE(t.insert(10, 1));
    EXPECT_FALSE(t.insert(10, 2)) << "present: insert changes nothing";
    EXPECT_EQ(t.get(10), 1u);
    EXPECT_FALSE(t.put(10, 3)) << "present: put assigns";
    EXPECT_EQ(t.get(10), 3u);
    EXPECT_TRUE(t.put(20, 4)) << "absent: put inserts";
    EXPECT_EQ(t.size(), 2u);
    EXPECT_TRUE(t.erase(10));
    EXPECT_FALSE(t.erase(10));
    EXPECT_FALSE(t.contains(10));
    EXPECT_TRUE(t.contains(20));
    EXPECT_EQ(t.size(), 1u);
}

TYPED_TEST(BTree, ScanBoundsAndCounts) {
    TypeParam t;
    model m;
    for (u64 k = 10; k < 3000; k += 10) {
        t.insert(k, k * 7);
        m.emplace(k, k * 7);
    }
    expect_matches(t, m);
    for (u64 from : {u64{0}, u64{10}, u64{11}, u64{1500}, u64{2990}, u64{2991}, ~u64{0}})
        for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{100}, std::size_t{1000}})
            expect_same_scan(t, m, from, count);
    EXPECT_EQ(t.scan(2991, 10, [](u64, u64) {}), 0u) << "nothing at or above from";
    EXPECT_EQ(t.scan(0, 1000, [](u64, u64) {}), m.size()) << "the whole tree, fewer than asked";
}

TYPED_TEST(BTree, RandomOperationsMatchAMap) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        SCOPED_TRACE(seed);
        std::size_t height = 0;
        run_random<TypeParam>(seed, 64, 100'000, height);  // small: one or two levels, constant churn
        ASSERT_FALSE(this->HasFatalFailure());
        run_random<TypeParam>(seed + 100, 8192, 100'000, height);
        ASSERT_FALSE(this->HasFatalFailure());
        // 8192 keys need three levels even at fanout 32 (a leaf holds at most 32 keys, an
        // inner node at most 32 leaves), so splits and merges reached inner nodes.
        EXPECT_GE(height, 3u);
    }
}

TYPED_TEST(BTree, SequentialAndReverseSequentialKeys) {
    constexpr u64 n = 5000;
    std::vector<u64> up(n);
    std::iota(up.begin(), up.end(), 0);
    std::vector<u64> down(up.rbegin(), up.rend());
    // (insert order, erase order): each of the four pairs, down to an empty tree.
    for (const auto* ins : {&up, &down}) {
        for (const auto* del : {&up, &down}) {
            SCOPED_TRACE(testing::Message() << "insert " << (ins == &up ? "up" : "down") << ", erase "
                                            << (del == &up ? "up" : "down"));
            TypeParam t;
            model m;
            std::size_t i = 0;
            for (u64 k : *ins) {
                ASSERT_TRUE(t.insert(k, ~k));
                m.emplace(k, ~k);
                if (++i % 251 == 0) {
                    const auto r = fb::check_btree(t);
                    ASSERT_TRUE(r.ok()) << r.problem << " with " << m.size() << " keys";
                }
            }
            const auto full = expect_matches(t, m);
            EXPECT_GE(full.height, 3u);
            for (u64 k : *del) {
                ASSERT_TRUE(t.erase(k)) << k;
                m.erase(k);
                if (++i % 251 == 0 || m.size() < 100) {
                    const auto r = fb::check_btree(t);
                    ASSERT_TRUE(r.ok()) << r.problem << " with " << m.size() << " keys left";
                }
            }
            const auto empty = expect_matches(t, m);
            EXPECT_EQ(empty.height, 1u) << "the root collapsed to one leaf";
            EXPECT_EQ(empty.inner_nodes, 0u);
        }
    }
}

TYPED_TEST(BTree, DeletingEverythingInRandomOrderLeavesAnEmptyLeaf) {
    std::mt19937_64 rng(42);
    TypeParam t;
    model m;
    while (m.size() < 3000) {
        const u64 k = rng() % 1'000'000;
        EXPECT_EQ(t.insert(k, k + 1), m.emplace(k, k + 1).second);
    }
    expect_matches(t, m);
    std::vector<u64> keys;
    for (const auto& [k, v] : m) keys.push_back(k);
    std::shuffle(keys.begin(), keys.end(), rng);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        ASSERT_TRUE(t.erase(keys[i]));
        ASSERT_FALSE(t.contains(keys[i]));
        m.erase(keys[i]);
        if (i % 7 == 0 || m.size() < 200) {
            const auto r = fb::check_btree(t);
            ASSERT_TRUE(r.ok()) << r.problem << " after erasing " << i + 1;
            ASSERT_EQ(r.keys, m.size());
        }
    }
    const auto r = expect_matches(t, m);
    EXPECT_EQ(r.height, 1u);
    EXPECT_EQ(r.leaves, 1u);
    // An emptied tree works as a new one.
    for (u64 k = 0; k < 100; ++k) EXPECT_TRUE(t.insert(k, k));
    EXPECT_EQ(t.size(), 100u);
    EXPECT_TRUE(fb::check_btree(t).ok());
}

// Keys and values need only be trivially copyable (and keys ordered): signed keys, a
// two-field value.
TEST(BTreeTypes, SignedKeysAndAStructValue) {
    struct pair_value {
        std::int32_t a = 0;
        std::uint16_t b = 0;
    };
    fb::btree<std::int32_t, pair_value, 6> t;
    for (std::int32_t k = -500; k <= 500; k += 3)
        EXPECT_TRUE(t.insert(k, {k * 2, static_cast<std::uint16_t>(k & 0xff)}));
    EXPECT_TRUE(fb::check_btree(t).ok());
    const auto v = t.get(-497);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->a, -994);
    std::vector<std::int32_t> seen;
    EXPECT_EQ(t.scan(-10, 4, [&](std::int32_t k, const pair_value&) { seen.push_back(k); }), 4u);
    EXPECT_EQ(seen, (std::vector<std::int32_t>{-8, -5, -2, 1}));
    for (std::int32_t k = -500; k <= 500; k += 3) EXPECT_TRUE(t.erase(k));
    EXPECT_EQ(t.size(), 0u);
    EXPECT_TRUE(fb::check_btree(t).ok());
}
