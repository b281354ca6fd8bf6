// index::tree16 (16-byte keys), several threads (the threads tier: run under the thread
// sanitizer): writers insert, update and erase keys that share their high word with other
// writers' keys (so they share leaves and split them concurrently) while readers get and scan.
// A value is always a function of its key and a version, so a reader that acted on a torn
// 16-byte key (the high word of one key, the low word of another) would return a value that
// does not belong to the key it asked for; scans must come out strictly increasing.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "ferrite/index/tree.hpp"

namespace {

using ferrite::index::key128;
using ferrite::index::tree16;

std::uint64_t tag(key128 k) noexcept { return (k.hi * 0x9E3779B97F4A7C15ull) ^ (k.lo * 0xC2B2AE3D27D4EB4Full); }
std::uint64_t value_for(key128 k, std::uint64_t version) noexcept { return (tag(k) & ~std::uint64_t{0xffff}) | (version & 0xffff); }
bool belongs(key128 k, std::uint64_t v) noexcept { return (v & ~std::uint64_t{0xffff}) == (tag(k) & ~std::uint64_t{0xffff}); }

TEST(Tree16Concurrent, WritersAndReadersOnSharedHighWords) {
    constexpr unsigned writers = 3, readers = 2;
    tree16 t;
    std::atomic<bool> stop{false};
    std::vector<std::map<key128, std::uint64_t>> models(writers);
    std::vector<std::thread> ts;
    for (unsigned w = 0; w < writers; ++w)
        ts.emplace_back([&, w] {
            std::mt19937_64 rng(w + 1);
            auto& m = models[w];
            for (std::uint64_t i = 0; i < 15000; ++i) {
                // high words 0..3 shared by every writer; the low word names the writer
                const key128 k{rng() % 4, (rng() % 2000) * writers + w};
                if (rng() % 4 == 0) {
                    if (t.erase(k) != (m.erase(k) == 1)) ADD_FAILURE() << "erase";
                } else {
                    const std::uint64_t v = value_for(k, i);
                    if (t.insert_or_assign(k, v) == m.contains(k)) ADD_FAILURE() << "put";
                    m[k] = v;
                }
            }
        });
    std::atomic<std::uint64_t> reads{0};
    for (unsigned r = 0; r < readers; ++r)
        ts.emplace_back([&, r] {
            std::mt19937_64 rng(100 + r);
            while (!stop.load(std::memory_order_relaxed)) {
                const key128 k{rng() % 4, rng() % (2000 * writers)};
                if (const auto v = t.get(k); v && !belongs(k, *v)) ADD_FAILURE() << "a value of another key";
                bool first = true;
                key128 last{};
                t.scan(k, 64, [&](key128 sk, std::uint64_t v) {
                    if (!belongs(sk, v)) ADD_FAILURE() << "scan: a value of another key";
                    if (!first && !(last < sk)) ADD_FAILURE() << "scan out of order";
                    if (sk < k) ADD_FAILURE() << "scan below its start";
                    first = false;
                    last = sk;
                });
                reads.fetch_add(1, std::memory_order_relaxed);
            }
        });
    for (unsigned w = 0; w < writers; ++w) ts[w].join();
    stop.store(true);
    for (unsigned r = 0; r < readers; ++r) ts[writers + r].join();
    std::map<key128, std::uint64_t> all;
    for (const auto& m : models) all.insert(m.begin(), m.end());
    std::vector<std::pair<key128, std::uint64_t>> got;
    t.scan(key128{}, ~std::size_t{0}, [&](key128 k, std::uint64_t v) { got.emplace_back(k, v); });
    EXPECT_EQ(got, (std::vector<std::pair<key128, std::uint64_t>>(all.begin(), all.end())));
    EXPECT_GT(reads.load(), 0u);
}

}  // namespace
