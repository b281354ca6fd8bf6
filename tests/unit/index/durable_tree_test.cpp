// index::durable_tree, one thread: the model's state survives a clean close; a crash image
// taken in the middle of an epoch (every line at its current contents: the worst case for
// an undo scheme, since every store of the failed epoch reached the media) recovers to the
// state of the last sync(), over every path InCLL has (permutation words, value undo words,
// insert after remove, two updates in one value line, values too wide for the undo word,
// leaf and interior splits, root growth); recovering twice, and crashing again after a
// recovery, give the same answer; the value words are scrubbed when the epoch's low bits wrap.
//
// index::durable_tree16 (16-byte keys), one thread: a crash image taken in the middle of an
// epoch (every line at its current contents) recovers to the state of the last sync(), lazily
// and eagerly, over the paths InCLL has (permutation words, value undo words, insert after
// remove, wide values, leaf and interior splits) with keys that mostly share their high word;
// a second crash after a recovery; a clean close and open. The key width is part of the
// region's layout: a region made for 8-byte keys opened as 16-byte (and the reverse) is
// refused with damaged_pool naming both widths, and not one byte of it is written.
#include "ferrite/index/durable_tree.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "durable_tree_support.hpp"
#include "ferrite/error.hpp"
#include "ferrite/index/incll_layout.hpp"
#include "ferrite/index/incll_words.hpp"

namespace {

using namespace ferrite::index;
using ferrite::index::testing::contents;
using ferrite::index::testing::manual_epochs;
using ferrite::index::testing::region;
using model = std::map<std::uint64_t, std::uint64_t>;

constexpr std::uint64_t nodes = 4096;
// Logs big enough that no epoch ends early (a full log ends its epoch: buffered durability
// allows it, but these tests compare with the state of the last sync() exactly).
incll_options big_logs() { return manual_epochs(4, 4096); }

// One random operation on the tree and the model: the keys and values are drawn so that every
// InCLL path is taken (wide values, reinserts of just-erased keys, neighbouring slots).
void random_op(durable_tree& t, model& m, std::mt19937_64& rng, std::uint64_t key_range) {
    const std::uint64_t key = rng() % key_range;
    const std::uint64_t r = rng();
    const std::uint64_t value = (r & 1) ? (r >> 1) : (r % 1000);  // half too wide for an undo word
    switch (r % 5) {
        case 0:
        case 1: {
            const bool inserted = t.insert_or_assign(key, value);
            ASSERT_EQ(inserted, !m.contains(key));
            m[key] = value;
            break;
        }
        case 2: {
            const bool inserted = t.insert(key, value);
            ASSERT_EQ(inserted, !m.contains(key));
            m.emplace(key, value);
            break;
        }
        default: {
            const bool erased = t.erase(key);
            ASSERT_EQ(erased, m.erase(key) == 1);
        }
    }
}

TEST(DurableTree, CreateInsertCloseOpen) {
    const auto o = big_logs();
    region r(durable_tree::region_bytes(nodes, o));
    model m;
    {
        auto t = durable_tree::create(r.data(), r.bytes(), o);
        EXPECT_TRUE(contents(*t).empty());
        std::mt19937_64 rng(1);
        for (int i = 0; i < 5000; ++i) random_op(*t, m, rng, 3000);
        EXPECT_EQ(contents(*t), m);
    }  // the destructor syncs
    auto t = durable_tree::open(r.data(), r.bytes(), o);
    EXPECT_EQ(contents(*t), m);
    EXPECT_GT(t->describe().height, 2u);
    for (const auto& [k, v] : m) ASSERT_EQ(t->get(k), v);
}

TEST(DurableTree, SyncWithNothingWrittenCommitsNothing) {
    const auto o = manual_epochs();
    region r(durable_tree::region_bytes(64, o));
    auto t = durable_tree::create(r.data(), r.bytes(), o);
    const std::uint64_t e = t->sync();
    EXPECT_EQ(t->sync(), e);
    EXPECT_EQ(t->statistics().commits, 0u);
    t->insert(1, 1);
    const std::uint64_t e1 = t->sync();
    EXPECT_GT(e1, e);
    EXPECT_EQ(t->state_epoch(), e1);
    EXPECT_EQ(t->current_epoch(), e1 + 1);
    EXPECT_EQ(t->statistics().commits, 1u);
}

class CrashImage : public ::testing::TestWithParam<int> {};

TEST_P(CrashImage, RecoversTheLastSyncedState) {
    const auto o = big_logs();
    region r(durable_tree::region_bytes(nodes, o));
    auto t = durable_tree::create(r.data(), r.bytes(), o);
    std::mt19937_64 rng(static_cast<std::uint64_t>(GetParam()));
    const std::uint64_t key_range = 200 + rng() % 2000;
    model m, synced;
    std::uint64_t synced_epoch = t->state_epoch();
    std::uint64_t syncs = 0;
    for (int round = 0; round < 24; ++round) {
        const int ops = static_cast<int>(rng() % 400);
        for (int i = 0; i < ops; ++i) random_op(*t, m, rng, key_range);
        if (round % 3 != 2) {
            synced_epoch = t->sync();
            ++syncs;
            synced = m;
            continue;
        }
        auto image = r.crash_image();
        auto u = durable_tree::open(image->data(), image->bytes(), o);
        ASSERT_EQ(contents(*u), synced) << "round " << round;
        ASSERT_EQ(u->state_epoch(), synced_epoch);
        ASSERT_LE(t->statistics().commits, syncs) << "an epoch ended early";
        for (const auto& [k, v] : synced) ASSERT_EQ(u->get(k), v);
        // A second life on the recovered image: more epochs, another crash.
        model m2 = synced, synced2 = synced;
        for (int i = 0; i < 300; ++i) random_op(*u, m2, rng, key_range);
        const std::uint64_t e2 = u->sync();
        synced2 = m2;
        for (int i = 0; i < 300; ++i) random_op(*u, m2, rng, key_range);
        auto image2 = image->crash_image();
        auto w = durable_tree::open(image2->data(), image2->bytes(), o);
        ASSERT_EQ(contents(*w), synced2) << "round " << round << ", second crash";
        ASSERT_EQ(w->state_epoch(), e2);
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, CrashImage, ::testing::Range(1, 13));

// Each InCLL path on its own, crash image in the middle of the epoch.
struct path_case {
    const char* name;
    void (*setup)(durable_tree&);   // then sync
    void (*failed)(durable_tree&);  // then crash
};

// Each path's failed epoch, crash image, recovery: the state of the setup's sync().
// Returns the external log entries each case's failed epoch wrote.
std::vector<std::uint64_t> each_path_rolls_back(const incll_options& o) {
    const path_case cases[] = {
        {"permutation: insert", [](durable_tree& t) { t.insert(1, 10); }, [](durable_tree& t) { t.insert(2, 20); }},
        {"permutation: erase", [](durable_tree& t) { t.insert(1, 10); }, [](durable_tree& t) { t.erase(1); }},
        {"value word", [](durable_tree& t) { t.insert(1, 10); }, [](durable_tree& t) { t.insert_or_assign(1, 11); }},
        {"value word, same slot twice",
         [](durable_tree& t) { t.insert(1, 10); },
         [](durable_tree& t) {
             t.insert_or_assign(1, 11);
             t.insert_or_assign(1, 12);
         }},
        {"two slots of one value line",
         [](durable_tree& t) {
             t.insert(1, 10);
             t.insert(2, 20);
         },
         [](durable_tree& t) {
             t.insert_or_assign(1, 11);
             t.insert_or_assign(2, 21);
         }},
        {"wide old value", [](durable_tree& t) { t.insert(1, ~std::uint64_t{0}); }, [](durable_tree& t) { t.insert_or_assign(1, 5); }},
        {"insert after remove",
         [](durable_tree& t) { t.insert(1, 10); },
         [](durable_tree& t) {
             t.erase(1);
             t.insert(2, 20);
         }},
        {"update of a key inserted in the epoch",
         [](durable_tree& t) { t.insert(1, 10); },
         [](durable_tree& t) {
             t.insert(2, 20);
             t.insert_or_assign(2, 21);
             t.insert_or_assign(1, 11);
         }},
        {"leaf split",
         [](durable_tree& t) {
             for (std::uint64_t k = 0; k < 14; ++k) t.insert(k * 10, k);
         },
         [](durable_tree& t) {
             t.insert_or_assign(30, 99);
             t.insert(35, 1);
             t.insert(36, 2);
         }},
        {"interior split and root growth",
         [](durable_tree& t) {
             for (std::uint64_t k = 0; k < 200; ++k) t.insert(k * 10, k);
         },
         [](durable_tree& t) {
             for (std::uint64_t k = 0; k < 600; ++k) t.insert(k * 10 + 5, k);
             for (std::uint64_t k = 0; k < 200; k += 3) t.erase(k * 10);
         }},
    };
    std::vector<std::uint64_t> logged;
    for (const auto& c : cases) {
        region r(durable_tree::region_bytes(nodes, o));
        auto t = durable_tree::create(r.data(), r.bytes(), o);
        c.setup(*t);
        t->sync();
        const model before = contents(*t);
        const std::uint64_t entries = t->statistics().external_entries;
        c.failed(*t);
        logged.push_back(t->statistics().external_entries - entries);
        EXPECT_NE(contents(*t), before) << c.name;
        auto image = r.crash_image();
        auto u = durable_tree::open(image->data(), image->bytes(), o);
        EXPECT_EQ(contents(*u), before) << c.name;
    }
    return logged;
}

TEST(DurableTree, EachPathRollsBack) {
    const auto logged = each_path_rolls_back(big_logs());
    EXPECT_EQ(logged.front(), 0u) << "an insert into a free slot needs no external entry";
}

// tree-undo's engine (incll_options::external_only): every path goes through the external
// log, one entry per node per epoch, and recovery rolls all of them back.
TEST(DurableTree, ExternalOnlyLogsEveryChangedNodeAndRollsBack) {
    auto o = big_logs();
    o.external_only = true;
    for (const std::uint64_t n : each_path_rolls_back(o)) EXPECT_GE(n, 1u);
}

// Regression tests for the thesis's pseudocode defects (notes, section 2): Fig. 3.5 line 14
// records the old epoch in nodeEpoch (here: the current one, which recovery compares with);
// the recovery pseudocode's valInCLL index typos (here: the undo word names the slot within
// its own line, and recovery restores that slot).
TEST(DurableTree, NodeEpochRecordsTheCurrentEpoch) {
    const auto o = big_logs();
    region r(durable_tree::region_bytes(64, o));
    auto t = durable_tree::create(r.data(), r.bytes(), o);
    t->insert(5, 50);
    t->sync();
    auto* l = reinterpret_cast<leaf*>(r.data() + reinterpret_cast<incll_layout::geometry*>(r.data())->arena_offset);
    const std::uint64_t before = l->perm.load();
    t->insert(6, 60);
    EXPECT_EQ(l->node_epoch.load(), t->current_epoch());
    EXPECT_EQ(l->permutation_incll.load(), before);
    t->insert(7, 70);  // same epoch: the undo copy keeps the permutation of the epoch's start
    EXPECT_EQ(l->permutation_incll.load(), before);
}

TEST(DurableTree, ValueUndoWordNamesTheSlotWithinItsLine) {
    const auto o = big_logs();
    region r(durable_tree::region_bytes(64, o));
    auto t = durable_tree::create(r.data(), r.bytes(), o);
    for (std::uint64_t k = 0; k < 10; ++k) t->insert(k, 100 + k);  // slots 0..9: key 8 in slot 8
    t->sync();
    auto* l = reinterpret_cast<leaf*>(r.data() + reinterpret_cast<incll_layout::geometry*>(r.data())->arena_offset);
    t->insert_or_assign(8, 1);
    const auto w = incll_words::decode(l->value_lines[1].value_incll.load());
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->index, 1u);  // slot 8 is index 1 of line 1
    EXPECT_EQ(w->old_value, 108u);
    EXPECT_EQ(l->value_lines[0].value_incll.load(), 0u);
    auto image = r.crash_image();
    auto u = durable_tree::open(image->data(), image->bytes(), o);
    for (std::uint64_t k = 0; k < 10; ++k) EXPECT_EQ(u->get(k), 100 + k);
}

TEST(DurableTree, RecoveringTwiceGivesTheSameTree) {
    const auto o = big_logs();
    region r(durable_tree::region_bytes(nodes, o));
    auto t = durable_tree::create(r.data(), r.bytes(), o);
    std::mt19937_64 rng(5);
    model m;
    for (int i = 0; i < 2000; ++i) random_op(*t, m, rng, 1500);
    t->sync();
    const model synced = m;
    for (int i = 0; i < 500; ++i) random_op(*t, m, rng, 1500);
    auto image = r.crash_image();
    // Lazy first (pending recorded, nodes untouched), then again: the pending epoch forces an
    // eager recovery of both; then eager twice more.
    (void)incll_recover(image->data(), image->bytes(), true);
    (void)incll_recover(image->data(), image->bytes(), true);
    (void)incll_recover(image->data(), image->bytes(), false);
    auto u = durable_tree::open(image->data(), image->bytes(), o);
    EXPECT_EQ(contents(*u), synced);
}

TEST(DurableTree, ValueWordsAreScrubbedWhenTheLowEpochBitsWrap) {
    const auto o = manual_epochs();
    region r(durable_tree::region_bytes(256, o));
    {
        auto t = durable_tree::create(r.data(), r.bytes(), o);
        for (std::uint64_t k = 0; k < 100; ++k) t->insert(k, 100);
    }
    // Move the epoch counter close to a wrap of its low 16 bits (as a long-lived pool would be).
    auto& c = ferrite::index::testing::commit(r);
    const std::uint64_t start = 65536 - 3;
    c.slots[start & 1] = c.slots[c.durable_epoch & 1];
    c.durable_epoch = start;
    auto t = durable_tree::open(r.data(), r.bytes(), o);
    const std::uint64_t e0 = t->current_epoch();
    t->insert_or_assign(0, 101);  // undo word (slot of key 0, 100, e0) in the first leaf
    ASSERT_EQ(t->sync(), e0);
    // 65,536 epochs later the low bits match e0's again; the first leaf is not touched since.
    while (t->current_epoch() < e0 + 65536) {
        t->insert_or_assign(99, t->current_epoch());
        t->sync();
    }
    ASSERT_EQ(t->current_epoch(), e0 + 65536);
    t->insert_or_assign(99, 7);
    auto image = r.crash_image();
    auto u = durable_tree::open(image->data(), image->bytes(), o);
    EXPECT_EQ(u->get(0), 101u) << "a stale undo word of epoch " << e0 << " was taken for epoch " << e0 + 65536;
    EXPECT_EQ(u->get(99), e0 + 65535);
}

namespace k16 {  // 16-byte keys (index::durable_tree16)


using namespace ferrite::index;
using ferrite::index::testing::manual_epochs;
using ferrite::index::testing::region;
using model = std::map<key128, std::uint64_t>;

model contents(const durable_tree16& t) {
    model m;
    t.scan(key128{}, std::numeric_limits<std::size_t>::max(), [&](key128 k, std::uint64_t v) { m.emplace(k, v); });
    return m;
}

// Most keys share high word 5 (their order is the low word's); a few have other high words
// and the same low words.
key128 draw(std::mt19937_64& rng, std::uint64_t range) {
    const std::uint64_t r = rng();
    const std::uint64_t hi = r % 8 == 0 ? (r >> 3) % 3 : 5;
    return key128{hi, (rng() % range) << 40};
}

void random_op(durable_tree16& t, model& m, std::mt19937_64& rng, std::uint64_t range) {
    const key128 key = draw(rng, range);
    const std::uint64_t r = rng();
    const std::uint64_t value = (r & 1) ? (r >> 1) : (r % 1000);  // half too wide for an undo word
    switch (r % 5) {
        case 0:
        case 1:
            ASSERT_EQ(t.insert_or_assign(key, value), !m.contains(key));
            m[key] = value;
            break;
        case 2:
            ASSERT_EQ(t.insert(key, value), !m.contains(key));
            m.emplace(key, value);
            break;
        default:
            ASSERT_EQ(t.erase(key), m.erase(key) == 1);
    }
}

TEST(DurableTree16, NodesAreSevenLines) {
    EXPECT_EQ(node_bytes_of<key128>, 448u);
    EXPECT_EQ(sizeof(incll_layout::basic_log_entry<key128>), 512u);
    EXPECT_EQ(incll_layout::version_of<key128>, incll_layout::layout_version_k16);
}

class Crash16 : public ::testing::TestWithParam<int> {};

TEST_P(Crash16, RecoversTheLastSyncedState) {
    const auto o = manual_epochs(4, 4096);
    region r(durable_tree16::region_bytes(4096, o));
    auto t = durable_tree16::create(r.data(), r.bytes(), o);
    std::mt19937_64 rng(static_cast<std::uint64_t>(GetParam()));
    const std::uint64_t range = 300 + rng() % 1500;
    model m, synced;
    for (int round = 0; round < 15; ++round) {
        const int ops = static_cast<int>(rng() % 500);
        for (int i = 0; i < ops; ++i) random_op(*t, m, rng, range);
        if (round % 3 != 2) {
            t->sync();
            synced = m;
            continue;
        }
        for (const bool lazy : {true, false}) {
            auto image = r.crash_image();
            auto lo = o;
            lo.lazy_recovery = lazy;
            auto u = durable_tree16::open(image->data(), image->bytes(), lo);
            for (const auto& [k, v] : synced) ASSERT_EQ(u->get(k), v);  // lazily: nodes at first access
            ASSERT_EQ(contents(*u), synced) << "round " << round << (lazy ? " lazy" : " eager");
            // A second life and a second crash on the recovered image.
            model m2 = synced;
            for (int i = 0; i < 200; ++i) random_op(*u, m2, rng, range);
            u->sync();
            const model synced2 = m2;
            for (int i = 0; i < 150; ++i) random_op(*u, m2, rng, range);
            auto image2 = image->crash_image();
            auto w = durable_tree16::open(image2->data(), image2->bytes(), lo);
            ASSERT_EQ(contents(*w), synced2);
        }
    }
    t.reset();  // a clean close: everything
    auto u = durable_tree16::open(r.data(), r.bytes(), o);
    EXPECT_EQ(contents(*u), m);
    EXPECT_GE(u->describe().height, 2u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, Crash16, ::testing::Values(1, 2));

// Opening with the wrong key width: damaged_pool whose message names both widths; nothing written.
template <class Made, class Opened>
void expect_width_refused(const std::string& made, const std::string& opened) {
    const auto o = manual_epochs();
    region r(Made::region_bytes(64, o));
    {
        auto t = Made::create(r.data(), r.bytes(), o);
        t->insert(typename Made::key_type{}, 1);
    }
    const std::vector<std::byte> before(r.data(), r.data() + r.bytes());
    for (const bool lazy : {true, false}) {
        auto lo = o;
        lo.lazy_recovery = lazy;
        try {
            (void)Opened::open(r.data(), r.bytes(), lo);
            ADD_FAILURE() << "opened a " << made << "-byte-key tree as " << opened;
        } catch (const ferrite::damaged_pool& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("holds " + made), std::string::npos) << what;
            EXPECT_NE(what.find("tree of " + opened), std::string::npos) << what;
        }
        EXPECT_THROW((void)incll_check<typename Opened::key_type>(r.data(), r.bytes()), ferrite::damaged_pool);
        EXPECT_EQ(std::memcmp(before.data(), r.data(), r.bytes()), 0) << "a refused open wrote";
    }
    auto t = Made::open(r.data(), r.bytes(), o);  // its own width still opens
    EXPECT_EQ(t->get(typename Made::key_type{}), 1u);
}

TEST(DurableTree16, EightByteRegionOpenedAsSixteenIsRefused) { expect_width_refused<durable_tree, durable_tree16>("8", "16"); }
TEST(DurableTree16, SixteenByteRegionOpenedAsEightIsRefused) { expect_width_refused<durable_tree16, durable_tree>("16", "8"); }

}  // namespace k16

}  // namespace
