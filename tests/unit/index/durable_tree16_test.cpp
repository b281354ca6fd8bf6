// index::durable_tree16 (16-byte keys), one thread: a crash image taken in the middle of an
// epoch (every line at its current contents) recovers to the state of the last sync(), lazily
// and eagerly, over the paths InCLL has (permutation words, value undo words, insert after
// remove, wide values, leaf and interior splits) with keys that mostly share their high word;
// a second crash after a recovery; a clean close and open. The key width is part of the
// region's layout: a region made for 8-byte keys opened as 16-byte (and the reverse) is
// refused with damaged_pool naming both widths, and not one byte of it is written.
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
#include "ferrite/index/durable_tree.hpp"
#include "ferrite/index/incll_layout.hpp"

namespace {

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

INSTANTIATE_TEST_SUITE_P(Seeds, Crash16, ::testing::Values(1, 2, 3));

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

}  // namespace
