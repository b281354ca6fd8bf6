// index::tree, several threads (the threads tier: run under the thread sanitizer).
//   * Disjoint keys: each thread owns the keys k with k % threads == its id (neighbours in the
//     same leaves, so the threads split the same nodes), mixes inserts, upserts, erases, gets
//     and scans, and checks every get of its own keys against its own model; the final tree
//     must equal the union of the models.
//   * Shared keys: even keys are inserted before the threads start and never erased (their
//     values change, always encoding the key); odd keys are inserted and erased by every
//     thread. Scans must come out strictly increasing, show every even key of their range,
//     and only values that encode their key. Per key, the inserts that returned true minus the
//     erases that returned true must be 0 or 1 and say whether the key is in the final tree.
//
// index::tree16 (16-byte keys), several threads (the threads tier: run under the thread
// sanitizer): writers insert, update and erase keys that share their high word with other
// writers' keys (so they share leaves and split them concurrently) while readers get and scan.
// A value is always a function of its key and a version, so a reader that acted on a torn
// 16-byte key (the high word of one key, the low word of another) would return a value that
// does not belong to the key it asked for; scans must come out strictly increasing.
#include "ferrite/index/tree.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <vector>

namespace {

using ferrite::index::tree;

constexpr unsigned thread_count = 4;

std::uint64_t encode(std::uint64_t key, std::uint64_t tag) { return key << 20 | (tag & 0xfffff); }
std::uint64_t key_of(std::uint64_t value) { return value >> 20; }

TEST(TreeConcurrent, DisjointKeysMatchEachThreadsModel) {
    tree t;
    constexpr std::uint64_t keys_per_thread = 3000;
    constexpr int ops = 30000;
    std::vector<std::map<std::uint64_t, std::uint64_t>> models(thread_count);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    std::latch start(thread_count);  // all threads begin together: the operations overlap
    for (unsigned id = 0; id < thread_count; ++id) {
        threads.emplace_back([&, id] {
            start.arrive_and_wait();
            auto& m = models[id];
            std::mt19937_64 rng(100 + id);
            for (int i = 0; i < ops; ++i) {
                const std::uint64_t k = (rng() % keys_per_thread) * thread_count + id;
                const unsigned what = static_cast<unsigned>(rng() % 100);
                if (what < 50) {
                    const std::uint64_t v = encode(k, static_cast<std::uint64_t>(i));
                    if (t.insert_or_assign(k, v) != !m.contains(k)) ++failures;
                    m[k] = v;
                } else if (what < 70) {
                    if (t.erase(k) != (m.erase(k) == 1)) ++failures;
                } else if (what < 95) {
                    const auto v = t.get(k);
                    const auto it = m.find(k);
                    if (v.has_value() != (it != m.end()) || (v && *v != it->second)) ++failures;
                } else {
                    std::uint64_t last = 0;
                    bool first = true;
                    t.scan(k, 30, [&](std::uint64_t key, std::uint64_t value) {
                        if ((!first && key <= last) || key_of(value) != key) ++failures;
                        if (key % thread_count == id && m.find(key) == m.end()) ++failures;  // mine, absent
                        first = false;
                        last = key;
                    });
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    std::map<std::uint64_t, std::uint64_t> all;
    for (const auto& m : models) all.insert(m.begin(), m.end());
    std::vector<std::pair<std::uint64_t, std::uint64_t>> got;
    t.scan(0, ~std::size_t{0}, [&](std::uint64_t k, std::uint64_t v) { got.emplace_back(k, v); });
    ASSERT_EQ(got.size(), all.size());
    auto it = all.begin();
    for (const auto& [k, v] : got) {
        EXPECT_EQ(k, it->first);
        EXPECT_EQ(v, it->second);
        ++it;
    }
}

TEST(TreeConcurrent, SharedKeysScansSeeKeysPresentThroughout) {
    tree t;
    constexpr std::uint64_t key_space = 8000;  // keys 0..key_space-1; the even ones stay
    constexpr int ops = 30000;
    for (std::uint64_t k = 0; k < key_space; k += 2) t.insert_or_assign(k, encode(k, 0));
    std::vector<std::vector<std::int64_t>> balance(thread_count, std::vector<std::int64_t>(key_space, 0));
    std::atomic<int> failures{0};
    std::atomic<std::uint64_t> scanned{0};
    std::vector<std::thread> threads;
    std::latch start(thread_count);  // all threads begin together: the operations overlap
    for (unsigned id = 0; id < thread_count; ++id) {
        threads.emplace_back([&, id] {
            start.arrive_and_wait();
            std::mt19937_64 rng(200 + id);
            for (int i = 0; i < ops; ++i) {
                const std::uint64_t k = rng() % key_space;
                const unsigned what = static_cast<unsigned>(rng() % 100);
                if (what < 30) {  // insert or upsert
                    if (t.insert_or_assign(k, encode(k, id))) {
                        if (k % 2 == 0) ++failures;  // even keys are always present
                        ++balance[id][k];
                    }
                } else if (what < 55) {  // erase an odd key
                    const std::uint64_t odd = k | 1;
                    if (odd < key_space && t.erase(odd)) --balance[id][odd];
                } else if (what < 90) {
                    const auto v = t.get(k);
                    if (k % 2 == 0 && !v) ++failures;
                    if (v && key_of(*v) != k) ++failures;
                } else {
                    const std::uint64_t lo = k, hi = k + 1 + rng() % 400;
                    std::uint64_t expect_even = (lo + 1) / 2 * 2;  // the next even key to see
                    std::uint64_t last = 0;
                    bool first = true;
                    t.scan_range(lo, hi, [&](std::uint64_t key, std::uint64_t value) {
                        if ((!first && key <= last) || key < lo || key >= hi || key_of(value) != key) ++failures;
                        if (key > expect_even && expect_even < std::min(hi, key_space)) ++failures;  // skipped one
                        if (key == expect_even) expect_even += 2;
                        first = false;
                        last = key;
                        ++scanned;
                    });
                    if (expect_even < std::min(hi, key_space)) ++failures;  // stopped before the end
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GT(scanned.load(), 0u);
    for (std::uint64_t k = 0; k < key_space; ++k) {
        std::int64_t b = k % 2 == 0 ? 1 : 0;
        for (unsigned id = 0; id < thread_count; ++id) b += balance[id][k];
        ASSERT_TRUE(b == 0 || b == 1) << "key " << k << ": inserts minus erases " << b;
        ASSERT_EQ(t.get(k).has_value(), b == 1) << "key " << k;
    }
    std::uint64_t count = 0, last = 0;
    t.scan(0, ~std::size_t{0}, [&](std::uint64_t k, std::uint64_t) {
        EXPECT_TRUE(count == 0 || k > last);
        last = k;
        ++count;
    });
    std::uint64_t present = 0;
    for (std::uint64_t k = 0; k < key_space; ++k) present += t.get(k).has_value();
    EXPECT_EQ(count, present);
}

TEST(TreeConcurrent, ConcurrentAscendingInsertsGrowTheRoot) {
    tree t;
    constexpr std::uint64_t per_thread = 15000;
    std::vector<std::thread> threads;
    std::latch start(thread_count);  // all threads begin together: the operations overlap
    for (unsigned id = 0; id < thread_count; ++id)
        threads.emplace_back([&, id] {
            start.arrive_and_wait();
            for (std::uint64_t i = 0; i < per_thread; ++i) t.insert_or_assign(i * thread_count + id, i);
        });
    for (auto& th : threads) th.join();
    for (std::uint64_t k = 0; k < per_thread * thread_count; ++k) ASSERT_EQ(t.get(k), k / thread_count) << k;
    EXPECT_GE(t.describe().height, 3u);
}

namespace k16 {  // 16-byte keys (index::tree16)


using ferrite::index::key128;
using ferrite::index::tree16;

std::uint64_t tag(key128 k) noexcept { return (k.hi * 0x9E3779B97F4A7C15ull) ^ (k.lo * 0xC2B2AE3D27D4EB4Full); }
std::uint64_t value_for(key128 k, std::uint64_t version) noexcept { return (tag(k) & ~std::uint64_t{0xffff}) | (version & 0xffff); }
bool belongs(key128 k, std::uint64_t v) noexcept { return (v & ~std::uint64_t{0xffff}) == (tag(k) & ~std::uint64_t{0xffff}); }

TEST(Tree16Concurrent, WritersAndReadersOnSharedHighWords) {
    constexpr unsigned writers = 3, readers = 2;
    tree16 t;
    std::atomic<bool> stop{false};
    // Writers start once every reader has read once: on a loaded machine the writers' 30 ms
    // could otherwise pass before a reader runs at all, and the test would check nothing.
    std::atomic<unsigned> readers_started{0};
    std::vector<std::map<key128, std::uint64_t>> models(writers);
    std::vector<std::thread> ts;
    for (unsigned w = 0; w < writers; ++w)
        ts.emplace_back([&, w] {
            while (readers_started.load() < readers) std::this_thread::yield();
            std::mt19937_64 rng(w + 1);
            auto& m = models[w];
            for (std::uint64_t i = 0; i < 10000; ++i) {
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
            bool announced = false;
            do {
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
                if (!announced) readers_started.fetch_add(1);
                announced = true;
            } while (!stop.load(std::memory_order_relaxed));
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

}  // namespace k16

}  // namespace
