// tests/bench/btree_concurrency_test.cpp: bench::btree (bench/trees/btree.hpp) under
// concurrent readers and writers (label `threads`: ThreadSanitizer runs it).
//
// Keys are split by residue mod 4: writer w (w < 3) alone updates the keys k % 4 == w,
// growing its set then shrinking it (insert, put, erase, against its own std::map), and
// the keys k % 4 == 3 are filled before the threads start and never change. The sets are
// disjoint but interleaved, so one writer's splits and merges move the others' keys and the
// stable ones between nodes. Every value is key * 16 + a 4-bit version, so a reader can
// tell a value that belongs to its key. While the writers run, readers check that every
// stable key is always found with its value, that any key found carries a value of its
// own, and that a scan returns keys in increasing order with no stable key of its window
// missing; a checker thread runs the invariant check (btree_check.hpp) over and over. At
// the end the tree holds exactly the stable keys and the writers' models.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/trees/btree.hpp"
#include "bench/trees/btree_check.hpp"

namespace fb = ferrite::bench;

namespace {

using u64 = std::uint64_t;
using model = std::map<u64, u64>;

constexpr unsigned writers = 3, readers = 2;
constexpr u64 key_space = 4 * 3000;  // keys below this; 3000 per residue class
constexpr unsigned writer_ops = 20'000;

bool stable(u64 k) { return k % 4 == 3; }
u64 stable_value(u64 k) { return k * 16; }
bool value_of(u64 k, u64 v) { return v / 16 == k; }

template <class Tree>
void writer(Tree& t, unsigned w, model& mine) {
    std::mt19937_64 rng(w + 1);
    for (unsigned i = 0; i < writer_ops; ++i) {
        const bool growing = i < writer_ops / 2;  // then shrinking
        const unsigned roll = static_cast<unsigned>(rng() % 100);
        const u64 key = (rng() % (key_space / 4)) * 4 + w;
        const u64 value = key * 16 + (i & 15);
        if (roll < (growing ? 60u : 20u)) {
            EXPECT_EQ(t.insert(key, value), mine.emplace(key, value).second);
        } else if (roll < 80) {
            EXPECT_EQ(t.erase(key), mine.erase(key) == 1);
        } else {
            const bool added = !mine.contains(key);
            mine.insert_or_assign(key, value);
            EXPECT_EQ(t.put(key, value), added);
        }
    }
}

template <class Tree>
void reader(const Tree& t, unsigned r, const std::atomic<bool>& stop, std::atomic<u64>& reads) {
    std::mt19937_64 rng(100 + r);
    u64 done = 0;
    while (!stop.load(std::memory_order_acquire)) {
        const u64 key = rng() % key_space;
        switch (rng() % 3) {
        case 0: {
            const auto v = t.get(key);
            if (stable(key)) {
                EXPECT_EQ(v, stable_value(key)) << "stable key " << key;
            } else if (v) {
                EXPECT_TRUE(value_of(key, *v)) << key << " -> " << *v;
            }
            break;
        }
        case 1:
            if (stable(key)) {
                EXPECT_TRUE(t.contains(key)) << "stable key " << key;
            }
            break;
        default: {
            const std::size_t count = 1 + rng() % 40;
            std::vector<u64> keys;
            const std::size_t n = t.scan(key, count, [&](u64 k, u64 v) {
                EXPECT_TRUE(value_of(k, v)) << k << " -> " << v;
                keys.push_back(k);
            });
            EXPECT_EQ(n, keys.size());
            EXPECT_LE(n, count);
            EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()) &&
                        std::adjacent_find(keys.begin(), keys.end()) == keys.end());
            if (!keys.empty()) {
                EXPECT_GE(keys.front(), key);
            }
            // Every stable key from `key` up to the last key seen was seen (all of them up
            // to the end of the key space when the scan stopped short of count).
            const u64 last = n < count ? key_space : keys.back() + 1;
            std::size_t stable_seen = 0, stable_expected = 0;
            for (u64 k : keys) stable_seen += stable(k);
            for (u64 k = key; k < last; ++k) stable_expected += stable(k);
            EXPECT_EQ(stable_seen, stable_expected) << "scan from " << key << " count " << count;
            break;
        }
        }
        ++done;
    }
    reads.fetch_add(done);
}

template <class Tree>
void run_concurrent() {
    Tree t;
    for (u64 k = 3; k < key_space; k += 4) ASSERT_TRUE(t.insert(k, stable_value(k)));
    std::atomic<bool> stop{false};
    std::atomic<u64> reads{0}, checks{0};
    std::vector<model> models(writers);
    std::vector<std::thread> update_threads, read_threads;
    for (unsigned r = 0; r < readers; ++r)
        read_threads.emplace_back([&, r] { reader(t, r, stop, reads); });
    read_threads.emplace_back([&] {
        while (!stop.load(std::memory_order_acquire)) {
            const auto rep = fb::check_btree(t);
            EXPECT_TRUE(rep.ok()) << rep.problem;
            checks.fetch_add(1);
            // A full walk holds the lock shared for long: back-to-back walks would leave
            // the writers (whom the tree's lock lets in first) little time between them.
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    for (unsigned w = 0; w < writers; ++w)
        update_threads.emplace_back([&, w] { writer(t, w, models[w]); });
    for (auto& th : update_threads) th.join();
    stop.store(true, std::memory_order_release);
    for (auto& th : read_threads) th.join();
    EXPECT_GT(reads.load(), 0u);
    EXPECT_GT(checks.load(), 0u);

    model want;
    for (u64 k = 3; k < key_space; k += 4) want.emplace(k, stable_value(k));
    for (const auto& m : models) want.insert(m.begin(), m.end());
    model got;
    t.scan(0, ~std::size_t{0}, [&](u64 k, u64 v) { got.emplace(k, v); });
    EXPECT_EQ(got, want);
    EXPECT_EQ(t.size(), want.size());
    const auto rep = fb::check_btree(t);
    EXPECT_TRUE(rep.ok()) << rep.problem;
    EXPECT_GE(rep.height, 3u);
}

}  // namespace

// Fanout 4: deep trees, so most updates split or merge something.
TEST(BTreeConcurrency, ReadersAndWritersFanout4) { run_concurrent<fb::btree<u64, u64, 4>>(); }

// The bench's fanout.
TEST(BTreeConcurrency, ReadersAndWritersFanout32) { run_concurrent<fb::btree<u64, u64, 32>>(); }
