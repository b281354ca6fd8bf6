// sets::linkfree_table under threads: each thread owns some keys (checked exactly against its
// own model) and shares others (every answer must agree with the value each key maps to,
// and the contents afterwards with a restart); the hash table grows meanwhile and unlinked
// nodes are reclaimed and reused while others read.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "ferrite/sets/linkfree_table.hpp"
#include "linkfree_test_support.hpp"

namespace ferrite::sets {
namespace {

using u64 = std::uint64_t;
using map_table = linkfree_table<u64, u64>;

constexpr unsigned threads = 4;
constexpr u64 own_keys = 64;     // per thread: keys tid, tid + threads, ...
constexpr u64 shared_keys = 24;  // keys 1000.. shared by every thread
constexpr int ops = 3000;

u64 value_of(u64 k) { return k * 0x9e3779b97f4a7c15ull; }

class LinkfreeStress : public testing::LinkfreePool, public ::testing::WithParamInterface<set_layout> {};

TEST_P(LinkfreeStress, OwnKeysExactSharedKeysConsistentThenRestart) {
    auto o = map_table::options{};
    o.area_bytes = 4096;
    o.growth_check_interval = 4;
    std::vector<std::map<u64, u64>> own(threads);
    std::atomic<int> wrong{0};
    {
        auto t = map_table::create(*pool_, *heap_, anchor(), GetParam(), o);
        std::vector<std::thread> workers;
        for (unsigned tid = 0; tid < threads; ++tid)
            workers.emplace_back([&, tid] {
                std::mt19937_64 rng(100 + tid);
                auto& model = own[tid];
                for (int i = 0; i < ops; ++i) {
                    const bool shared = rng() % 3 == 0;
                    const u64 k = shared ? 1000 + rng() % shared_keys : tid + threads * (rng() % own_keys);
                    const auto what = rng() % 3;
                    if (shared) {
                        if (what == 0) t.insert(k, value_of(k));
                        else if (what == 1) t.erase(k);
                        else if (auto v = t.get(k); v && *v != value_of(k)) ++wrong;
                        continue;
                    }
                    bool ok = true;
                    if (what == 0) ok = t.insert(k, value_of(k)) == model.emplace(k, value_of(k)).second;
                    else if (what == 1) ok = t.erase(k) == (model.erase(k) == 1);
                    else ok = t.get(k) == (model.count(k) ? std::optional<u64>(value_of(k)) : std::nullopt);
                    if (!ok) ++wrong;
                }
            });
        for (auto& w : workers) w.join();
        EXPECT_EQ(wrong.load(), 0);
        if (GetParam() == set_layout::hash) {
            EXPECT_GT(t.bucket_count(), 1u);
        }
    }
    std::map<u64, u64> expect;
    for (const auto& m : own) expect.insert(m.begin(), m.end());
    for (int round = 0; round < 2; ++round) {
        auto t = restart<map_table>(GetParam(), o);
        std::map<u64, u64> seen, shared;
        std::size_t listed = 0;
        t.for_each([&](const u64& k, const u64& v) {
            ++listed;
            (k >= 1000 ? shared : seen).emplace(k, v);
        });
        EXPECT_EQ(listed, seen.size() + shared.size()) << "a key listed twice";
        EXPECT_EQ(seen, expect);
        for (const auto& [k, v] : shared) EXPECT_EQ(v, value_of(k));
        for (u64 k = 1000; k < 1000 + shared_keys; ++k) EXPECT_EQ(t.contains(k), shared.count(k) == 1);
    }
}

INSTANTIATE_TEST_SUITE_P(Layouts, LinkfreeStress, ::testing::Values(set_layout::list, set_layout::hash),
                         [](const ::testing::TestParamInfo<set_layout>& p) {
                             return p.param == set_layout::list ? "list" : "hash";
                         });

}  // namespace
}  // namespace ferrite::sets
