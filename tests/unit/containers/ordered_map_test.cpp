// ferrite::ordered_map (containers/ordered_map.hpp, ordered_map_kind.hpp) through a store's
// catalog: the operations against a std::map model, ordered scans (from a key with a limit,
// and a range), signed keys in numeric order, a reopen keeping what sync() made durable (lazy
// and eager recovery), the kind's description, and a damaged tree header refused by
// store::open with the pool file unchanged.
#include "ferrite/containers/ordered_map.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <map>
#include <string>
#include <vector>

#include "ferrite/containers/ordered_map_kind.hpp"
#include "ferrite/alloc/name_directory.hpp"
#include "ferrite/containers/store.hpp"

namespace {

using ferrite::ordered_map;
using ferrite::ordered_map_options;
using ferrite::store;
using u64 = std::uint64_t;

class OrderedMapTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-ordered-map-test-" + std::to_string(::getpid());
        std::filesystem::remove(path_);
    }
    void TearDown() override { std::filesystem::remove(path_); }
    store open() { return store::open_or_create(path_, "ordered-map-test", {.size = 4 << 20}); }
    std::string bytes() const {
        std::ifstream in(path_, std::ios::binary);
        std::ostringstream out;
        out << in.rdbuf();
        return out.str();
    }
    static ordered_map_options opts(bool eager = false) {
        return {.nodes = 2048, .epoch_length = std::chrono::milliseconds(0), .eager_recovery = eager};
    }
    std::string path_;
};

TEST_F(OrderedMapTest, OperationsScansAndReopenMatchAModel) {
    std::map<u64, u64> model;
    {
        auto s = open();
        auto m = s.names().open_ordered_map<u64, u64>("m", opts());
        for (u64 i = 0; i < 3000; ++i) {
            const u64 k = (i * 7919) % 5003;
            EXPECT_EQ(m->insert_or_assign(k, i), !model.contains(k));
            model[k] = i;
        }
        EXPECT_FALSE(m->insert(model.begin()->first, 1)) << "present: unchanged";
        for (u64 k = 0; k < 5003; k += 5) EXPECT_EQ(m->erase(k), model.erase(k) == 1);
        for (u64 k = 0; k < 5010; ++k) {
            const auto it = model.find(k);
            ASSERT_EQ(m->get(k), it == model.end() ? std::nullopt : std::optional<u64>(it->second)) << k;
        }
        std::vector<std::pair<u64, u64>> got;
        EXPECT_EQ(m->scan(100, 50, [&](u64 k, u64 v) { got.emplace_back(k, v); }), 50u);
        std::vector<std::pair<u64, u64>> want(model.lower_bound(100), std::next(model.lower_bound(100), 50));
        EXPECT_EQ(got, want);
        got.clear();
        EXPECT_EQ(m->scan(100, 50, got), 50u);  // the containers::ordered_map form: pairs appended
        EXPECT_EQ(got, want);
        got.clear();
        m->put(1, 11);
        model[1] = 11;
        m->scan_range(200, 900, [&](u64 k, u64 v) { got.emplace_back(k, v); });
        want.assign(model.lower_bound(200), model.lower_bound(900));
        EXPECT_EQ(got, want);
        m->sync();
        m->insert_or_assign(1 << 20, 5);  // after the last sync: may or may not survive the close
        model[1 << 20] = 5;               // (the close syncs: it does)
    }
    for (const bool eager : {false, true}) {
        auto s = open();
        bool described = false;
        for (const auto& c : s.names().check_objects())
            if (c.name == "m") {
                EXPECT_EQ(c.kind, "ordered_map");
                EXPECT_TRUE(c.problem.empty()) << c.problem;
                EXPECT_NE(c.detail.find("tree nodes in use"), std::string::npos) << c.detail;
                described = true;
            }
        EXPECT_TRUE(described);
        auto m = s.names().open_ordered_map<u64, u64>("m", opts(eager));
        std::map<u64, u64> seen;
        m->scan(0, ~std::size_t{0}, [&](u64 k, u64 v) { seen.emplace(k, v); });
        EXPECT_EQ(seen, model) << (eager ? "eager" : "lazy");
    }
}

TEST_F(OrderedMapTest, SignedKeysAreOrderedNumerically) {
    auto s = open();
    auto m = s.names().open_ordered_map<std::int64_t, double>("signed", opts());
    for (std::int64_t k = -50; k <= 50; ++k) m->insert_or_assign(k, static_cast<double>(k) / 2);
    std::vector<std::int64_t> keys;
    m->scan(-3, 6, [&](std::int64_t k, double v) {
        keys.push_back(k);
        EXPECT_EQ(v, static_cast<double>(k) / 2);
    });
    EXPECT_EQ(keys, (std::vector<std::int64_t>{-3, -2, -1, 0, 1, 2}));
    EXPECT_EQ(m->get(-50), std::optional<double>(-25.0));
}

TEST_F(OrderedMapTest, Key16StringsAreOrderedAsStringsAndSurviveReopen) {
    using ferrite::key16;
    std::vector<std::string> words;
    for (const char* w : {"", "a", "ab", "abc", "b", "ba", "zzzzzzzzzzzzzzz", "hello", "help", "hel"}) words.emplace_back(w);
    words.push_back(std::string("a\0", 2));  // embedded zero: between "a" and "ab"
    for (int i = 0; i < 1500; ++i) words.push_back("k" + std::to_string(i * 7919 % 10007));  // share their first 8 bytes often
    std::map<std::string, u64> model;
    {
        auto s = open();
        auto m = s.names().open_ordered_map<key16, u64>("words", opts());
        for (std::size_t i = 0; i < words.size(); ++i) {
            EXPECT_EQ(m->insert_or_assign(key16::from_string(words[i]), i), !model.contains(words[i]));
            model[words[i]] = i;
        }
        EXPECT_EQ(m->get(key16::from_string("help")), model["help"]);
        EXPECT_FALSE(m->get(key16::from_string("he")));
        EXPECT_TRUE(m->erase(key16::from_string("hel")));
        model.erase("hel");
    }
    EXPECT_THROW((void)key16::from_string("0123456789abcdef"), std::length_error);
    auto s = open();
    for (const auto& c : s.names().check_objects())
        if (c.name == "words") {
            EXPECT_EQ(c.kind, "ordered_map_k16");
            EXPECT_TRUE(c.problem.empty()) << c.problem;
        }
    auto m = s.names().open_ordered_map<key16, u64>("words", opts());
    std::vector<std::pair<std::string, u64>> got;
    m->scan(key16::from_string(""), ~std::size_t{0}, [&](const key16& k, u64 v) { got.emplace_back(std::string(k.to_string_view()), v); });
    EXPECT_EQ(got, (std::vector<std::pair<std::string, u64>>(model.begin(), model.end())));
    got.clear();
    m->scan_range(key16::from_string("a"), key16::from_string("b"),
                  [&](const key16& k, u64 v) { got.emplace_back(std::string(k.to_string_view()), v); });
    EXPECT_EQ(got, (std::vector<std::pair<std::string, u64>>(model.lower_bound("a"), model.lower_bound("b"))));
}

TEST_F(OrderedMapTest, AKeyWidthMismatchIsRefusedWritingNothing) {
    auto opts = [] { return ordered_map_options{.nodes = 256, .epoch_length = std::chrono::milliseconds(0), .shards = 2}; };
    {
        auto s = open();
        s.names().open_ordered_map<u64, u64>("narrow", opts())->insert(1, 1);
        s.names().open_ordered_map<ferrite::key16, u64>("wide", opts())->insert(ferrite::key16::from_string("x"), 2);
    }
    const auto before = bytes();
    {
        auto s = open();
        EXPECT_THROW(((void)s.names().open_ordered_map<ferrite::key16, u64>("narrow", opts())), ferrite::pool_error);
        EXPECT_THROW(((void)s.names().open_ordered_map<u64, u64>("wide", opts())), ferrite::pool_error);
    }
    EXPECT_EQ(bytes(), before) << "a refused open writes nothing";
    // 16-byte keys of another type are ordered as two words, the first 8 bytes first.
    struct pair_key {
        u64 a, b;
    };
    auto s = open();
    auto m = s.names().open_ordered_map<pair_key, u64>("pairs", opts());
    m->insert({2, 0}, 1);
    m->insert({1, ~u64{0}}, 2);
    m->insert({1, 3}, 3);
    std::vector<u64> order;
    m->scan({0, 0}, 10, [&](const pair_key&, u64 v) { order.push_back(v); });
    EXPECT_EQ(order, (std::vector<u64>{3, 2, 1}));
}

TEST_F(OrderedMapTest, ADamagedTreeHeaderFailsTheStoreOpenWritingNothing) {
    {
        auto s = open();
        auto m = s.names().open_ordered_map<u64, u64>("m", opts());
        for (u64 k = 0; k < 100; ++k) m->insert(k, k);
    }
    u64 anchor = 0;
    {
        auto ro = ferrite::pmem::pool::inspect(path_);
        auto h = ferrite::alloc::buddy_heap::open(ro, ro.heap_offset());
        auto dir = ferrite::alloc::name_directory::open_or_create(ro, h);
        const auto* e = dir.find("m");
        ASSERT_NE(e, nullptr);
        anchor = e->anchor;
    }
    {
        std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(anchor + 24));  // the geometry's shard count
        const u64 shards = 0;
        f.write(reinterpret_cast<const char*>(&shards), 8);
    }
    const auto before = bytes();
    try {
        auto s = open();
        ADD_FAILURE() << "a store with a damaged ordered_map opened";
    } catch (const ferrite::damaged_pool& e) {
        EXPECT_EQ(e.object(), "m") << e.what();
        EXPECT_NE(std::string(e.what()).find("shard count"), std::string::npos) << e.what();
    }
    EXPECT_EQ(bytes(), before) << "a refused open writes nothing";
}

}  // namespace
