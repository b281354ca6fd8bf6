// index::durable_tree's lazy recovery (index/incll_lazy.hpp): the first get touches only its
// path; an epoch that commits while nodes are unrecovered, then a crash, recovers both epochs;
// the wrap scrub applies a pending undo word instead of clearing it; an open whose first
// epoch wraps recovers eagerly; a clean close leaves nothing pending; readers, writers and
// scans recover nodes concurrently (threads label).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "durable_tree_support.hpp"
#include "ferrite/index/durable_tree.hpp"
#include "ferrite/index/incll_layout.hpp"

namespace {

using namespace ferrite::index;
using ferrite::index::testing::contents;
using ferrite::index::testing::manual_epochs;
using ferrite::index::testing::region;
using model = std::map<std::uint64_t, std::uint64_t>;

using ferrite::index::testing::commit;

// A tree of 6,000 keys synced, then an unfinished epoch that updates, inserts and erases all
// over it (undo words and permutation copies in most leaves); `synced` is the last sync's state.
std::unique_ptr<region> crashed_tree(model& synced) {
    const auto o = manual_epochs(4, 4096);
    region r(durable_tree::region_bytes(4096, o));
    auto t = durable_tree::create(r.data(), r.bytes(), o);
    for (std::uint64_t k = 0; k < 6000; ++k) {
        t->insert(k * 3, k);
        synced[k * 3] = k;
    }
    t->sync();
    for (std::uint64_t k = 0; k < 6000; k += 4) t->insert_or_assign(k * 3, k + 7);
    for (std::uint64_t k = 1; k < 6000; k += 9) t->insert(k * 3 + 1, 1);
    for (std::uint64_t k = 2; k < 6000; k += 11) t->erase(k * 3);
    return r.crash_image();
}

TEST(DurableTreeLazy, TheFirstGetRecoversOnlyItsPath) {
    model synced;
    auto image = crashed_tree(synced);
    auto t = durable_tree::open(image->data(), image->bytes(), manual_epochs(4, 4096));
    const std::uint64_t height = 4;  // 6,000 keys in leaves of 7 to 14: about 600 leaves
    EXPECT_LE(t->lazily_recovered(), height) << "open recovers the leftmost path only";
    EXPECT_EQ(commit(*image).pending, commit(*image).durable_epoch) << "the failed epoch is pending";
    EXPECT_EQ(t->get(9000), synced.at(9000));
    EXPECT_LE(t->lazily_recovered(), 2 * height);
    EXPECT_EQ(contents(*t), synced);  // the scan recovers every leaf it reaches
    const auto d = t->describe();
    EXPECT_GT(d.leaves, 400u);
    EXPECT_EQ(t->lazily_recovered(), d.leaves + d.interiors);
    t.reset();  // a clean close finishes recovery
    EXPECT_EQ(commit(*image).pending, 0u);
}

TEST(DurableTreeLazy, AnEpochCommittedWithNodesUnrecoveredThenACrash) {
    model synced;
    auto image = crashed_tree(synced);
    auto t = durable_tree::open(image->data(), image->bytes(), manual_epochs(4, 4096));
    model want = synced;
    for (std::uint64_t k = 0; k < 40; ++k) {  // one corner of the tree, with a split or two
        t->insert_or_assign(k * 3, 1000 + k);
        t->insert_or_assign(k * 3 + 2, 2000 + k);
        want[k * 3] = 1000 + k;
        want[k * 3 + 2] = 2000 + k;
    }
    t->sync();
    ASSERT_LT(t->lazily_recovered(), 100u) << "most nodes are still unrecovered";
    t->insert_or_assign(5, 5);  // not synced: rolled back
    auto again = image->crash_image();
    EXPECT_NE(commit(*again).pending, 0u);
    for (const bool lazy : {true, false}) {
        auto copy = again->crash_image();
        auto o = manual_epochs(4, 4096);
        o.lazy_recovery = lazy;  // pending: recovered eagerly either way
        auto u = durable_tree::open(copy->data(), copy->bytes(), o);
        EXPECT_EQ(u->lazily_recovered(), 0u);
        EXPECT_EQ(contents(*u), want) << (lazy ? "lazy" : "eager");
        EXPECT_EQ(commit(*copy).pending, 0u);
    }
}

TEST(DurableTreeLazy, TheWrapScrubAppliesAPendingUndoWord) {
    const auto o = manual_epochs();
    region r(durable_tree::region_bytes(256, o));
    {
        auto t = durable_tree::create(r.data(), r.bytes(), o);
        for (std::uint64_t k = 0; k < 100; ++k) t->insert(k, 100);
    }
    auto& c = commit(r);
    const std::uint64_t start = 65536 - 6;
    c.slots[start & 1] = c.slots[c.durable_epoch & 1];
    c.durable_epoch = start;
    std::unique_ptr<region> crashed;
    {
        auto t = durable_tree::open(r.data(), r.bytes(), o);
        t->finish_recovery();  // nothing pending at the crash below: the next open is lazy
        t->insert_or_assign(50, 101);
        t->sync();
        t->insert_or_assign(50, 555);  // undo word (slot of key 50, 101, F); F fails
        crashed = r.crash_image();
    }
    // Lazy: F pending; key 50's leaf is neither on the leftmost path nor key 99's.
    auto t = durable_tree::open(crashed->data(), crashed->bytes(), o);
    ASSERT_EQ(t->lazily_recovered(), 2u) << "lazy: the root and the first leaf";
    ASSERT_GT(t->current_epoch() & 0xffff, 0xfff0u);
    while ((t->current_epoch() & 0xffff) != 2) {  // across the wrap, never reading key 0's leaf
        t->insert_or_assign(99, t->current_epoch());
        t->sync();
    }
    auto after = crashed->crash_image();
    auto u = durable_tree::open(after->data(), after->bytes(), o);
    EXPECT_EQ(u->get(50), 101u) << "the scrub cleared a pending undo word instead of applying it";
}

TEST(DurableTreeLazy, AnOpenWhoseFirstEpochWrapsIsEager) {
    const auto o = manual_epochs();
    region r(durable_tree::region_bytes(256, o));
    {
        auto t = durable_tree::create(r.data(), r.bytes(), o);
        for (std::uint64_t k = 0; k < 100; ++k) t->insert(k, k);
    }
    auto& c = commit(r);
    const std::uint64_t d = 65536 - 2;  // F = 65535: the run's first epoch, 65536, wraps
    c.slots[d & 1] = c.slots[c.durable_epoch & 1];
    c.durable_epoch = d;
    auto t = durable_tree::open(r.data(), r.bytes(), o);
    EXPECT_EQ(t->lazily_recovered(), 0u);
    EXPECT_EQ(c.pending, 0u);
    EXPECT_EQ(t->get(77), 77u);
}

TEST(DurableTreeLazy, ReadersWritersAndScansRecoverConcurrently) {
    model synced;
    auto image = crashed_tree(synced);
    auto o = manual_epochs(4, 4096);
    o.epoch_length = std::chrono::milliseconds(1);
    auto t = durable_tree::open(image->data(), image->bytes(), o);
    std::atomic<bool> wrong{false};
    std::vector<std::thread> ts;
    for (unsigned tid = 0; tid < 3; ++tid)
        ts.emplace_back([&, tid] {
            std::mt19937_64 rng(tid);
            for (int i = 0; i < 3000; ++i) {
                const std::uint64_t k = (rng() % 6000) * 3;
                if (tid == 0) {
                    if (t->get(k) != synced.at(k)) wrong = true;  // keys k*3: never written below
                } else if (tid == 1) {
                    std::uint64_t prev = 0, n = 0;
                    t->scan(k, 20, [&](std::uint64_t key, std::uint64_t) {
                        if (n++ != 0 && key <= prev) wrong = true;
                        prev = key;
                    });
                } else {
                    t->insert_or_assign(k + 2, i);  // new keys between the synced ones: splits
                }
            }
        });
    for (auto& th : ts) th.join();
    EXPECT_FALSE(wrong);
    const model all = contents(*t);
    for (const auto& [k, v] : synced) EXPECT_EQ(all.at(k), v);
}

}  // namespace
