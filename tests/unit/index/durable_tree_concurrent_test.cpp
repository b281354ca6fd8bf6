// index::durable_tree, several threads: writers on interleaved keys (so they share leaves and
// split them concurrently) while the ticker ends epochs every millisecond and one thread calls
// sync(); after the threads stop, a crash image holds exactly what the last sync made durable,
// and a clean reopen holds everything.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "durable_tree_support.hpp"
#include "ferrite/index/durable_tree.hpp"

namespace {

using namespace ferrite::index;
using ferrite::index::testing::contents;
using ferrite::index::testing::region;
using model = std::map<std::uint64_t, std::uint64_t>;

TEST(DurableTreeConcurrent, WritersTickerAndSync) {
    constexpr unsigned threads = 4;
    incll_options o;
    o.epoch_length = std::chrono::milliseconds(1);
    o.shards = 3;  // fewer shards than threads: two writers share one
    o.log_entries = 24;
    region r(durable_tree::region_bytes(1 << 14, o));
    auto t = durable_tree::create(r.data(), r.bytes(), o);
    std::vector<model> models(threads);
    std::vector<std::thread> ts;
    for (unsigned tid = 0; tid < threads; ++tid)
        ts.emplace_back([&, tid] {
            std::mt19937_64 rng(tid + 1);
            model& m = models[tid];
            for (int i = 0; i < 20000; ++i) {
                const std::uint64_t key = (rng() % 4000) * threads + tid;
                const std::uint64_t v = rng();
                switch (v % 4) {
                    case 0:
                        if (t->erase(key) != (m.erase(key) == 1)) ADD_FAILURE() << "erase " << key;
                        break;
                    default:
                        if (t->insert_or_assign(key, v) == m.contains(key)) ADD_FAILURE() << "put " << key;
                        m[key] = v;
                }
                if (tid == 0 && i % 1000 == 0) t->sync();
            }
        });
    for (auto& th : ts) th.join();
    model all;
    for (const auto& m : models) all.insert(m.begin(), m.end());
    EXPECT_EQ(contents(*t), all);
    EXPECT_GT(t->statistics().commits, 5u);
    t->sync();
    auto image = r.crash_image();
    auto u = durable_tree::open(image->data(), image->bytes(), o);
    EXPECT_EQ(contents(*u), all);
}

}  // namespace
