// sets::linkfree_table on one thread: random operations against std::set / std::map (list
// and hash layouts, several key sizes), reopen and crash-state recovery, growth, the
// persistence instructions per operation, and validation of damaged media.
#include "ferrite/sets/linkfree_table.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "ferrite/error.hpp"
#include "ferrite/pmem/counters.hpp"
#include "linkfree_test_support.hpp"

namespace ferrite::sets {
namespace {

using u64 = std::uint64_t;
using set_table = linkfree_table<u64>;
using map_table = linkfree_table<u64, u64>;

struct wide_key {  // 40 bytes: the largest key of a set
    std::array<std::uint64_t, 5> w;
};

class LinkfreeTable : public testing::LinkfreePool, public ::testing::WithParamInterface<set_layout> {};

template <class Table, class K>
std::vector<K> contents(const Table& t) {
    std::vector<K> out;
    t.for_each([&](const K& k, const auto&) { out.push_back(k); });
    return out;
}

// The keys of a set in the table's own order (hash: split order) sorted for comparison.
template <class Table>
std::set<u64> members(const Table& t) {
    std::set<u64> out;
    std::size_t n = 0;
    t.for_each([&](const u64& k, const auto&) {
        out.insert(k);
        ++n;
    });
    EXPECT_EQ(n, out.size()) << "a key listed twice";
    return out;
}

TEST_P(LinkfreeTable, RandomSetOperationsMatchStdSet) {
    auto t = create<set_table>(GetParam());
    std::set<u64> model;
    std::mt19937_64 rng(11);
    for (int i = 0; i < 20000; ++i) {
        const u64 k = rng() % 700;
        switch (rng() % 3) {
            case 0: ASSERT_EQ(t.insert(k), model.insert(k).second) << "insert " << k; break;
            case 1: ASSERT_EQ(t.erase(k), model.erase(k) == 1) << "erase " << k; break;
            default: ASSERT_EQ(t.contains(k), model.count(k) == 1) << "contains " << k;
        }
        if (i % 4000 == 0) {
            ASSERT_EQ(members(t), model);
        }
    }
    EXPECT_EQ(members(t), model);
    EXPECT_EQ(t.size(), model.size());
    if (GetParam() == set_layout::list) {  // the list layout is ordered by key bytes
        auto v = contents<set_table, u64>(t);
        std::vector<u64> expect;
        for (u64 k : model) expect.push_back(k);
        std::sort(expect.begin(), expect.end(), [](u64 a, u64 b) { return std::memcmp(&a, &b, 8) < 0; });
        EXPECT_EQ(v, expect);
    }
}

TEST_P(LinkfreeTable, RandomMapOperationsMatchStdMap) {
    auto t = create<map_table>(GetParam());
    std::map<u64, u64> model;
    std::mt19937_64 rng(12);
    for (int i = 0; i < 20000; ++i) {
        const u64 k = rng() % 500, v = rng();
        switch (rng() % 3) {
            case 0: ASSERT_EQ(t.insert(k, v), model.emplace(k, v).second); break;
            case 1: ASSERT_EQ(t.erase(k), model.erase(k) == 1); break;
            default: {
                const auto got = t.get(k);
                const auto it = model.find(k);
                ASSERT_EQ(got.has_value(), it != model.end());
                if (got) {
                    ASSERT_EQ(*got, it->second) << "get " << k;
                }
            }
        }
    }
    std::map<u64, u64> seen;
    t.for_each([&](const u64& k, const u64& v) { seen.emplace(k, v); });
    EXPECT_EQ(seen, model);
}

TEST_P(LinkfreeTable, WideKeysAndCloseKeys) {
    auto t = create<linkfree_table<wide_key>>(GetParam());
    std::vector<wide_key> keys;
    for (u64 i = 0; i < 300; ++i) keys.push_back({{1, 2, 3, 4, i % 7 == 0 ? 0 : i}});  // differ in the last word only
    std::set<u64> in;
    for (u64 i = 0; i < keys.size(); ++i) EXPECT_EQ(t.insert(keys[i]), in.insert(keys[i].w[4]).second);
    for (u64 i = 0; i < keys.size(); i += 2) t.erase(keys[i]), in.erase(keys[i].w[4]);
    for (u64 i = 0; i < keys.size(); ++i) EXPECT_EQ(t.contains(keys[i]), in.count(keys[i].w[4]) == 1);
}

TEST_P(LinkfreeTable, AnExpectedSizeStartsWithItsBucketsAndStillGrowsPastIt) {
    map_table::options o = small();
    o.expected_size = 3000;
    std::map<u64, u64> model;
    {
        auto t = create<map_table>(GetParam(), o);
        const u64 buckets = GetParam() == set_layout::hash ? recovered_bucket_count(3000) : 1;
        EXPECT_EQ(t.bucket_count(), buckets) << "hash: ready for 3000 keys; list: one bucket";
        for (u64 k = 0; k < 3000; ++k) {
            ASSERT_TRUE(t.insert(k * 7, k));
            model.emplace(k * 7, k);
        }
        EXPECT_EQ(t.bucket_count(), buckets) << "filled to its expected size: no doubling";
        for (u64 k = 0; k < 3000; k += 3) {
            ASSERT_TRUE(t.erase(k * 7));
            model.erase(k * 7);
        }
        for (u64 k = 3000; k < 9000; ++k) {
            ASSERT_TRUE(t.insert(k * 7, k));
            model.emplace(k * 7, k);
        }
        if (GetParam() == set_layout::hash) {
            EXPECT_GT(t.bucket_count(), buckets) << "grows past it";
        }
        std::map<u64, u64> seen;
        t.for_each([&](const u64& k, const u64& v) { seen.emplace(k, v); });
        ASSERT_EQ(seen, model);
    }
    auto t = restart<map_table>(GetParam());
    std::map<u64, u64> seen;
    t.for_each([&](const u64& k, const u64& v) { seen.emplace(k, v); });
    EXPECT_EQ(seen, model);
    for (const auto& [k, v] : model) ASSERT_EQ(t.get(k), std::optional<u64>(v));
}

TEST_P(LinkfreeTable, ReopenKeepsContentsAndGoesOn) {
    std::map<u64, u64> model;
    {
        auto t = create<map_table>(GetParam());
        for (u64 k = 0; k < 3000; ++k) t.insert(k * 7, k);
        for (u64 k = 0; k < 3000; k += 3) t.erase(k * 7);
    }
    for (u64 k = 0; k < 3000; ++k)
        if (k % 3 != 0) model.emplace(k * 7, k);
    for (int round = 0; round < 3; ++round) {
        auto t = restart<map_table>(GetParam());
        std::map<u64, u64> seen;
        t.for_each([&](const u64& k, const u64& v) { seen.emplace(k, v); });
        ASSERT_EQ(seen, model) << "round " << round;
        EXPECT_EQ(t.size(), model.size());
        // The free slots of the previous run are reused: the heap does not grow.
        const auto used_before = heap_->usage().bytes_used;
        for (u64 k = 0; k < 300; ++k) {
            EXPECT_EQ(t.insert(100000 + round * 1000 + k, k), true);
            model.emplace(100000 + round * 1000 + k, k);
        }
        EXPECT_EQ(heap_->usage().bytes_used, used_before) << "dead slots were not reused";
        for (u64 k = 0; k < 3000; k += 5) EXPECT_EQ(t.erase(k * 7), model.erase(k * 7) == 1);
    }
}

constexpr u64 tag = 0x5a5a000000000000ull;  // keys that no other line of the pool holds at offset 24

TEST_P(LinkfreeTable, RecoveryKeepsValidUnmarkedNodesOnly) {
    {
        auto t = create<set_table>(GetParam());
        for (u64 k = 1; k <= 200; ++k) t.insert(tag + k);
    }
    // Crash states, written into the lines as the media could hold them:
    //   key 10: linked but never made valid (v1 flipped)
    //   key 20: valid and marked, not yet unlinked
    //   key 30: a half-initialised reuse: invalid, key written, next unmarked
    auto line = [&](u64 k) {
        const auto found = lines_with_key(tag + k);
        EXPECT_EQ(found.size(), 1u) << k;
        return found.front();
    };
    line(10)[0] = static_cast<std::byte>(static_cast<std::uint8_t>(line(10)[0]) ^ 1);
    line(20)[8] = static_cast<std::byte>(static_cast<std::uint8_t>(line(20)[8]) | 1);
    line(30)[1] = static_cast<std::byte>(static_cast<std::uint8_t>(line(30)[1]) ^ 1);
    std::set<u64> expect;
    for (u64 k = 1; k <= 200; ++k)
        if (k != 10 && k != 20 && k != 30) expect.insert(tag + k);
    for (unsigned threads : {1u, 3u}) {
        auto o = set_table::options{};
        o.area_bytes = 4096;
        o.recovery_threads = threads;
        auto t = restart<set_table>(GetParam(), o);
        ASSERT_EQ(members(t), expect) << threads << " recovery threads";
        EXPECT_FALSE(t.contains(tag + 10));
        EXPECT_FALSE(t.erase(tag + 20));
        // The dead nodes were normalised ("valid and deleted") and are reused safely: many
        // inserts take every free slot, and after the next restart exactly these are members.
        const u64 base = 1000 * threads;
        for (u64 k = base; k < base + 300; ++k) EXPECT_TRUE(t.insert(tag + k));
        for (u64 k = base; k < base + 300; ++k) expect.insert(tag + k);
        EXPECT_EQ(members(t), expect);
    }
}

TEST_P(LinkfreeTable, CountsOnePfencePerSuccessfulUpdateAndAtMostOnePerRead) {
    // One area of 1023 slots holds every node of the test: area growth is the store's cost.
    auto t = create<set_table>(GetParam(), set_table::options{});
    for (u64 k = 0; k < 64; ++k) t.insert(k * 3);
    auto fences = [](auto&& op) {
        const auto before = pmem::thread_counters();
        op();
        const auto d = pmem::thread_counters() - before;
        return d.pfences + d.psyncs;
    };
    for (u64 k = 1000; k < 1100; ++k) {
        EXPECT_EQ(fences([&] { EXPECT_TRUE(t.insert(k)); }), 1u) << "insert";
        EXPECT_EQ(fences([&] { EXPECT_FALSE(t.insert(k)); }), 0u) << "insert present, flushed";
        EXPECT_EQ(fences([&] { EXPECT_TRUE(t.contains(k)); }), 0u) << "contains, flushed";
        EXPECT_EQ(fences([&] { EXPECT_TRUE(t.erase(k)); }), 1u) << "erase";
        EXPECT_EQ(fences([&] { EXPECT_FALSE(t.erase(k)); }), 0u) << "erase absent";
        EXPECT_EQ(fences([&] { EXPECT_FALSE(t.contains(k)); }), 0u) << "contains absent";
    }
    // After a restart nothing is flushed twice: recovered members are durable.
    { auto closed = std::move(t); }  // one table per pool at a time
    auto u = restart<set_table>(GetParam(), set_table::options{});
    EXPECT_EQ(fences([&] { EXPECT_TRUE(u.contains(3)); }), 0u);
    EXPECT_EQ(fences([&] { EXPECT_FALSE(u.insert(3)); }), 0u);
    EXPECT_EQ(fences([&] { EXPECT_TRUE(u.erase(3)); }), 1u);
}

TEST_P(LinkfreeTable, AReadOfAnUnflushedNodeFlushesItOnce) {
    {
        auto t = create<set_table>(GetParam());
        t.insert(tag + 5);
        t.insert(tag + 6);
    }
    // A node linked and made valid whose flush flag is clear (the inserter crashed before
    // its write-back is impossible to stage here; clearing the flag after a restart is the
    // same state as far as readers go).
    auto t = restart<set_table>(GetParam());
    lines_with_key(tag + 5).front()[2] = std::byte{0};
    const auto before = pmem::thread_counters();
    EXPECT_TRUE(t.contains(tag + 5));
    EXPECT_TRUE(t.contains(tag + 5));
    const auto d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pfences + d.psyncs, 1u);
    EXPECT_EQ(d.pwb_lines, 1u);
}

TEST_P(LinkfreeTable, ValidityBitsOtherThanZeroOrOneAreRefusedAndNothingIsWritten) {
    {
        auto t = create<set_table>(GetParam());
        for (u64 k = 1; k <= 50; ++k) t.insert(tag + k);
    }
    lines_with_key(tag + 17).front()[1] = std::byte{7};
    recover_all<set_table>();
    const auto image = bytes();
    EXPECT_THROW((void)set_table::validate(*pool_, *heap_, anchor()), damaged_pool);
    try {
        (void)set_table::open(*pool_, *heap_, anchor(), GetParam(), small());
        FAIL() << "opened a set whose node has validity bit 7";
    } catch (const damaged_pool& e) {
        EXPECT_NE(std::string(e.what()).find("validity bits"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(bytes() == image);
}

TEST_P(LinkfreeTable, TwoMembersWithOneKeyAreRefusedAndNothingIsWritten) {
    {
        auto t = create<set_table>(GetParam());
        for (u64 k = 1; k <= 50; ++k) t.insert(tag + k);
        t.erase(tag + 40);  // its slot is free ("valid and deleted")
    }
    auto* victim = lines_with_key(tag + 40).front();
    std::memcpy(victim, lines_with_key(tag + 41).front(), 64);  // a second valid unmarked key 41
    recover_all<set_table>();
    const auto image = bytes();
    EXPECT_THROW((void)set_table::validate(*pool_, *heap_, anchor()), damaged_pool);
    EXPECT_THROW((void)set_table::open(*pool_, *heap_, anchor(), GetParam(), small()), damaged_pool);
    EXPECT_TRUE(bytes() == image);
}

TEST_P(LinkfreeTable, OpeningAsAnotherShapeIsATypeMismatch) {
    { auto t = create<set_table>(GetParam()); t.insert(1); }
    const set_layout other = GetParam() == set_layout::list ? set_layout::hash : set_layout::list;
    EXPECT_THROW((void)restart<set_table>(other), pool_error);
    EXPECT_THROW((void)restart<map_table>(GetParam()), pool_error);
    EXPECT_THROW((void)map_table::validate(*pool_, *heap_, anchor()), pool_error);
    EXPECT_FALSE(set_table::validate(*pool_, *heap_, anchor()).empty());
    EXPECT_EQ(members(restart<set_table>(GetParam(), set_table::options{})), std::set<u64>{1})
        << "the area size is the recorded one, whatever the options say";
    EXPECT_THROW((void)set_table::open(*pool_, *heap_, anchor(), static_cast<set_layout>(9)), usage_error);
}

INSTANTIATE_TEST_SUITE_P(Layouts, LinkfreeTable, ::testing::Values(set_layout::list, set_layout::hash),
                         [](const ::testing::TestParamInfo<set_layout>& p) {
                             return p.param == set_layout::list ? "list" : "hash";
                         });

class LinkfreeHash : public testing::LinkfreePool {};

TEST_F(LinkfreeHash, GrowsWhileInsertingAndRecoversAtTheSizeOfItsContents) {
    auto o = set_table::options{};
    o.area_bytes = 4096;
    o.growth_check_interval = 8;
    std::set<u64> model;
    {
        auto t = create<set_table>(set_layout::hash, o);
        EXPECT_EQ(t.bucket_count(), 1u);
        for (u64 k = 0; k < 5000; ++k) t.insert(k), model.insert(k);
        EXPECT_GE(t.bucket_count(), 1024u);
        EXPECT_LE(t.bucket_count(), 4096u);
        for (u64 k = 0; k < 5000; k += 2) t.erase(k), model.erase(k);
        EXPECT_EQ(members(t), model);
    }
    auto t = restart<set_table>(set_layout::hash, o);
    EXPECT_EQ(t.bucket_count(), recovered_bucket_count(model.size()));
    EXPECT_EQ(members(t), model);
    for (u64 k = 0; k < 5000; ++k) EXPECT_EQ(t.contains(k), model.count(k) == 1);
    for (u64 k = 5000; k < 20000; ++k) t.insert(k), model.insert(k);
    EXPECT_GT(t.bucket_count(), recovered_bucket_count(2500));
    EXPECT_EQ(members(t), model);
}

TEST_F(LinkfreeHash, RecoveryOnSeveralThreadsRebuildsTheSameTable) {
    // 40000 keys: 32768 buckets in 16 partitions, sorted, checked and linked in 2 and 3
    // ranges stitched together; the table goes on growing after each rebuild.
    std::set<u64> model;
    {
        auto t = create<set_table>(set_layout::hash);
        for (u64 k = 0; k < 40000; ++k) t.insert(k * 2654435761u), model.insert(k * 2654435761u);
    }
    for (unsigned threads : {2u, 3u, 1u}) {
        auto o = set_table::options{};
        o.recovery_threads = threads;
        auto t = restart<set_table>(set_layout::hash, o);
        EXPECT_EQ(t.bucket_count(), recovered_bucket_count(model.size())) << threads;
        EXPECT_EQ(members(t), model);
        for (u64 k = 0; k < 40000; k += 97) EXPECT_TRUE(t.contains(k * 2654435761u));
        for (u64 k = 0; k < 2000; ++k) {
            const u64 key = (1000000 + 3 * k + threads) * 2654435761u;
            EXPECT_TRUE(t.insert(key));
            model.insert(key);
        }
        EXPECT_EQ(members(t), model);
    }
}

TEST_F(LinkfreeHash, AnEmptySetRecoversEmpty) {
    { auto t = create<set_table>(set_layout::hash); }
    auto t = restart<set_table>(set_layout::hash);
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.bucket_count(), 1u);
    EXPECT_TRUE(members(t).empty());
    EXPECT_TRUE(t.insert(3));
}

}  // namespace
}  // namespace ferrite::sets
