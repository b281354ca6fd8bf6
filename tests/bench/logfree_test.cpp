// tests/bench/logfree_test.cpp: the log-free list / hash set baseline (bench/baselines/
// logfree_set.hpp, link_cache.hpp, scratch_arena.hpp): every operation against a model,
// list and hash, with and without the link cache; the persistence each operation issues
// (link-and-persist: node then link; the cache: parked links written back before an
// operation on their key returns); concurrent updates on a few shared keys explained by
// the per-key counts of successful inserts and erases; the arena across several segments.
// Runs threads (label `threads`: also under ThreadSanitizer); small sizes, well under a
// second.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/baselines/logfree_set.hpp"
#include "ferrite/pmem/counters.hpp"

namespace lf = ferrite::bench::logfree;
namespace fs = std::filesystem;
using ferrite::pmem::thread_counters;

namespace {

struct scratch_dir {
    fs::path path;
    scratch_dir() {
        path = fs::path("/dev/shm") / ("ferrite-logfree-test-" + std::to_string(::getpid()));
        fs::create_directories(path);
    }
    ~scratch_dir() { fs::remove_all(path); }
};

lf::logfree_set::options opts(const scratch_dir& d, std::uint64_t buckets, bool cache, unsigned threads = 1) {
    lf::logfree_set::options o;
    o.buckets = buckets;
    o.use_link_cache = cache;
    o.threads = threads;
    o.pool_dir = d.path;
    o.segment_bytes = 1 << 20;  // small pool files: the tests hold a few thousand nodes
    return o;
}

struct layout {
    const char* name;
    std::uint64_t buckets;
    bool cache;
};

void PrintTo(const layout& l, std::ostream* os) { *os << l.name; }

class LogfreeModel : public testing::TestWithParam<layout> {};

}  // namespace

// Every answer equals std::map's; after every operation that is not a successful update under
// the cache, the links on the key's path are durable (no operation returns having observed an
// unpersisted link); with the cache written back nothing is left unpersisted.
TEST_P(LogfreeModel, EveryOperationAgreesWithAModel) {
    scratch_dir d;
    const auto p = GetParam();
    lf::logfree_set s(opts(d, p.buckets, p.cache));
    s.prefill(20);  // keys 0, 2, ..., 38
    std::map<std::uint64_t, std::uint64_t> model;
    for (std::uint64_t i = 0; i < 20; ++i) model[2 * i] = i;
    EXPECT_EQ(s.size(), 20u);
    EXPECT_EQ(s.unpersisted_links(), 0u);

    std::mt19937_64 rng(7);
    const std::uint64_t range = p.buckets == 1 ? 64 : 512;
    for (int i = 0; i < 20000; ++i) {
        const std::uint64_t k = rng() % range;
        const std::uint64_t v = rng();
        bool updated = false;
        switch (rng() % 4) {
            case 0: {
                const bool ins = s.insert(0, k, v);
                ASSERT_EQ(ins, model.emplace(k, v).second) << "insert " << k << " at op " << i;
                updated = ins;
                break;
            }
            case 1: {
                const bool er = s.erase(k);
                ASSERT_EQ(er, model.erase(k) == 1) << "erase " << k << " at op " << i;
                updated = er;
                break;
            }
            case 2: ASSERT_EQ(s.contains(k), model.contains(k)) << "contains " << k << " at op " << i; break;
            default: {
                const auto it = model.find(k);
                const auto got = s.get(k);
                ASSERT_EQ(got.has_value(), it != model.end()) << "get " << k << " at op " << i;
                if (got) {
                    ASSERT_EQ(*got, it->second) << "get " << k << " at op " << i;
                }
            }
        }
        if (!updated || !p.cache) {
            ASSERT_TRUE(s.path_persisted(k)) << "op " << i << " on key " << k;
        }
        if (i % 1000 == 0) {
            ASSERT_EQ(s.size(), model.size()) << "at op " << i;
        }
    }
    EXPECT_EQ(s.size(), model.size());
    if (p.cache) {
        EXPECT_LE(s.parked_links(), std::size_t{lf::link_cache::buckets * lf::link_cache::entries});
        s.write_back_cache();
        EXPECT_EQ(s.parked_links(), 0u);
    }
    EXPECT_EQ(s.unpersisted_links(), 0u);
    for (const auto& [k, v] : model) ASSERT_EQ(s.get(k), v) << k;
}

INSTANTIATE_TEST_SUITE_P(Layouts, LogfreeModel,
                         testing::Values(layout{"list_cache", 1, true}, layout{"list_direct", 1, false},
                                         layout{"hash_cache", 16, true}, layout{"hash_direct", 16, false}),
                         [](const testing::TestParamInfo<layout>& i) { return std::string(i.param.name); });

// Without the cache: a successful update persists its node and its link(s), 2 pwb and 2
// pfence each; reads and failed updates on a durable structure issue nothing.
TEST(Logfree, LinkAndPersistCostsTwoRoundsPerUpdateAndNothingPerRead) {
    scratch_dir d;
    lf::logfree_set s(opts(d, 1, false));
    s.prefill(8);
    auto before = thread_counters();
    ASSERT_TRUE(s.insert(0, 5, 50));
    auto c = thread_counters() - before;
    EXPECT_EQ(c.pwb_lines, 2u);  // the node, the link to it
    EXPECT_EQ(c.pfences, 2u);

    before = thread_counters();
    ASSERT_TRUE(s.erase(4));
    c = thread_counters() - before;
    EXPECT_EQ(c.pwb_lines, 2u);  // the deletion mark, the unlink
    EXPECT_EQ(c.pfences, 2u);

    before = thread_counters();
    EXPECT_TRUE(s.contains(5));
    EXPECT_FALSE(s.contains(4));
    EXPECT_FALSE(s.insert(0, 6, 1));
    EXPECT_FALSE(s.erase(7));
    EXPECT_EQ(s.get(5), 50u);
    c = thread_counters() - before;
    EXPECT_EQ(c.pwb_lines, 0u);
    EXPECT_EQ(c.pfences, 0u);
    EXPECT_EQ(s.unpersisted_links(), 0u);
}

// With the cache: the insert persists only its node and parks its link (unpersisted); the
// next operation on that key writes the parked link back (one fence) before it returns.
TEST(Logfree, TheLinkCacheParksALinkUntilAnOperationOnItsKey) {
    scratch_dir d;
    lf::logfree_set s(opts(d, 1, true));
    s.prefill(8);
    auto before = thread_counters();
    ASSERT_TRUE(s.insert(0, 5, 50));
    auto c = thread_counters() - before;
    EXPECT_EQ(c.pwb_lines, 1u);  // the node only
    EXPECT_EQ(c.pfences, 1u);
    EXPECT_EQ(s.parked_links(), 1u);
    EXPECT_FALSE(s.path_persisted(5));

    before = thread_counters();
    EXPECT_TRUE(s.contains(5));
    c = thread_counters() - before;
    EXPECT_GE(c.pwb_lines, 1u);
    EXPECT_EQ(c.pfences, 1u);
    EXPECT_TRUE(s.path_persisted(5));
    EXPECT_EQ(s.parked_links(), 0u);

    // A remove parks both its mark and its unlink: no fence at once.
    before = thread_counters();
    ASSERT_TRUE(s.erase(5));
    c = thread_counters() - before;
    EXPECT_EQ(c.pfences, 0u);
    EXPECT_EQ(s.parked_links(), 2u);
    EXPECT_FALSE(s.contains(5));
    EXPECT_TRUE(s.path_persisted(5));
    EXPECT_EQ(s.unpersisted_links(), 0u);
}

// Many inserts: the cache batches their links (well under one fence per link), never holds
// more than its 64 x 6 entries, and written back it leaves nothing unpersisted.
TEST(Logfree, TheLinkCacheWritesBackInBatches) {
    scratch_dir d;
    lf::logfree_set s(opts(d, 4096, true));
    const auto before = thread_counters();
    for (std::uint64_t k = 0; k < 3000; ++k) ASSERT_TRUE(s.insert(0, k, k));
    const auto c = thread_counters() - before;
    EXPECT_LE(s.parked_links(), std::size_t{lf::link_cache::buckets * lf::link_cache::entries});
    EXPECT_GE(c.pfences, 3000u);            // one per node
    EXPECT_LT(c.pfences, 3000u + 3000u / 2);  // links: at most one fence per batch of >= 2
    s.write_back_cache();
    EXPECT_EQ(s.unpersisted_links(), 0u);
    EXPECT_EQ(s.size(), 3000u);
}

// Threads insert and erase a few shared keys at random (list and hash, cache on and off).
// Per key, the successful inserts and erases alternate, so initial + inserts - erases must be
// 0 or 1 and equal final membership; nothing is unpersisted once the cache is written back.
TEST(Logfree, ConcurrentUpdatesOfSharedKeysAreExplainedByTheirCounts) {
    for (const auto& p : {layout{"list", 1, true}, layout{"list", 1, false}, layout{"hash", 4, true},
                          layout{"hash", 4, false}}) {
        SCOPED_TRACE(std::string(p.name) + (p.cache ? " cache" : " direct"));
        scratch_dir d;
        constexpr unsigned threads = 3;
        constexpr std::uint64_t keys = 16;
        lf::logfree_set s(opts(d, p.buckets, p.cache, threads));
        s.prefill(keys / 2);  // the even keys below `keys`
        std::vector<std::vector<std::int64_t>> delta(threads, std::vector<std::int64_t>(keys, 0));
        std::atomic<bool> go{false};
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < threads; ++t)
            ts.emplace_back([&, t] {
                std::mt19937_64 rng(t + 1);
                while (!go.load()) std::this_thread::yield();
                for (int i = 0; i < 3000; ++i) {
                    const auto k = rng() % keys;
                    switch (rng() % 3) {
                        case 0: delta[t][k] += s.insert(t, k, t); break;
                        case 1: delta[t][k] -= s.erase(k); break;
                        default: (void)s.contains(k);
                    }
                }
            });
        go = true;
        for (auto& th : ts) th.join();
        std::uint64_t present = 0;
        for (std::uint64_t k = 0; k < keys; ++k) {
            std::int64_t n = k % 2 == 0 ? 1 : 0;
            for (unsigned t = 0; t < threads; ++t) n += delta[t][k];
            ASSERT_TRUE(n == 0 || n == 1) << "key " << k << ": " << n;
            EXPECT_EQ(s.contains(k), n == 1) << "key " << k;
            present += static_cast<std::uint64_t>(n);
        }
        EXPECT_EQ(s.size(), present);
        s.write_back_cache();
        EXPECT_EQ(s.unpersisted_links(), 0u);
    }
}

// The arena gives each thread distinct 64-byte aligned slots, adds segments (pool files)
// when one is used up, and removes every file when destroyed.
TEST(Logfree, TheArenaGrowsBySegmentsAndRemovesThem) {
    scratch_dir d;
    {
        ferrite::bench::scratch_arena a(d.path, 2, 0, 128 << 10);  // 2048 slots a segment
        std::vector<std::vector<void*>> got(2);
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < 2; ++t)
            ts.emplace_back([&, t] {
                for (int i = 0; i < 5000; ++i) {
                    auto* p = static_cast<std::uint64_t*>(a.allocate(t));
                    ASSERT_EQ(*p, 0u);  // fresh pool memory is zero
                    *p = t + 1;
                    got[t].push_back(p);
                }
            });
        for (auto& th : ts) th.join();
        std::set<void*> all;
        for (const auto& v : got)
            for (void* p : v) {
                EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
                all.insert(p);
            }
        EXPECT_EQ(all.size(), 10000u);
        EXPECT_GE(a.segments(), 5u);
        EXPECT_THROW(a.allocate(2), ferrite::usage_error);
    }
    EXPECT_TRUE(fs::is_empty(d.path));
}

// A set whose nodes outgrow the first segment keeps working across segments.
TEST(Logfree, TheSetKeepsWorkingAcrossPoolSegments) {
    scratch_dir d;
    auto o = opts(d, 256, true);
    o.segment_bytes = 128 << 10;  // 2048 nodes a segment
    lf::logfree_set s(o);
    s.prefill(1000);
    for (std::uint64_t k = 1; k < 8000; k += 2) ASSERT_TRUE(s.insert(0, k, k));
    EXPECT_GE(s.pool_segments(), 3u);
    EXPECT_EQ(s.size(), 1000u + 4000u);
    for (std::uint64_t k = 0; k < 2000; ++k) ASSERT_EQ(s.contains(k), true) << k;
    EXPECT_FALSE(s.contains(8001));
}
