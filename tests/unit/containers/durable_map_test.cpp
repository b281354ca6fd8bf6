// The public durable sets and maps (containers/durable_map.hpp, sets_kind.hpp) through a
// ferrite::store's catalog, for both algorithms and both layouts: the std-like operations,
// a reopen keeping everything, refused opens (another algorithm, layout, kind, K or V:
// pool_error(type_mismatch), nothing written), wide keys and values, the kinds' descriptions
// (`pool info` / `pool check`), a damaged node refused by store::open, and link-free maps
// having no insert_or_assign.
#include "ferrite/containers/durable_map.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ferrite/containers/sets_kind.hpp"
#include "ferrite/containers/store.hpp"
#include "ferrite/alloc/name_directory.hpp"
#include "ferrite/sets/node_store.hpp"

namespace {

using ferrite::durable_set_options;
using ferrite::pool_errc;
using ferrite::pool_error;
using ferrite::store;
using ferrite::use_link_free;
using ferrite::use_soft;
using ferrite::sets::set_layout;
using u64 = std::uint64_t;

struct wide_value {
    u64 a, b, c;
    friend bool operator==(const wide_value&, const wide_value&) = default;
};
using wide_key = std::array<char, 16>;
static_assert(sizeof(wide_key) + sizeof(wide_value) == 40, "the largest payload a node takes");

// A link-free map has no insert_or_assign (linkfree_table.hpp: no atomic one-step upsert).
template <class M>
concept has_upsert = requires(M& m, const typename M::key_type& k, const typename M::mapped_type& v) {
    m.insert_or_assign(k, v);
};
static_assert(has_upsert<ferrite::durable_map<u64, u64, use_soft>>);
static_assert(!has_upsert<ferrite::durable_map<u64, u64, use_link_free>>,
              "a link-free durable_map must not offer insert_or_assign");

struct params {
    bool soft;
    set_layout layout;
};

class DurableMapTest : public ::testing::TestWithParam<params> {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-durable-map-test-" + std::to_string(::getpid()) + "-" +
                std::to_string(reinterpret_cast<std::uintptr_t>(this));
        std::filesystem::remove(path_);
    }
    void TearDown() override { std::filesystem::remove(path_); }
    store open() { return store::open_or_create(path_, "durable-map-test", {.size = 32 << 20}); }
    durable_set_options opts() const { return {.layout = GetParam().layout, .recovery_threads = 2}; }
    std::vector<char> bytes() const {
        std::ifstream in(path_, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    template <class F>
    pool_errc error_kind(F f) {
        try {
            f();
        } catch (const pool_error& e) {
            return e.kind();
        }
        ADD_FAILURE() << "expected a pool_error";
        return pool_errc::io;
    }
    // The map/set operations for algorithm A, checked against a std::map model.
    template <class A>
    void exercise_and_reopen();
    std::string path_;
};

template <class A>
void DurableMapTest::exercise_and_reopen() {
    std::map<u64, u64> model;
    std::set<u64> set_model;
    {
        auto s = open();
        auto m = s.names().open_map<u64, u64, A>("m", opts());
        auto st = s.names().open_set<u64, A>("s", opts());
        EXPECT_EQ(m->size(), 0u);
        for (u64 k = 0; k < 2000; ++k) {
            ASSERT_TRUE(m->insert(k, k * 10));
            model[k] = k * 10;
            if (k % 3 == 0) {
                ASSERT_TRUE(st->insert(k));
                set_model.insert(k);
            }
        }
        EXPECT_FALSE(m->insert(5, 99)) << "present: nothing changed";
        EXPECT_EQ(m->get(5), std::optional<u64>(50));
        EXPECT_FALSE(st->insert(3));
        for (u64 k = 0; k < 2000; k += 7) {
            ASSERT_TRUE(m->erase(k));
            model.erase(k);
            if (k % 3 == 0) {
                ASSERT_TRUE(st->erase(k));
                set_model.erase(k);
            }
        }
        EXPECT_FALSE(m->erase(7));
        EXPECT_FALSE(st->erase(7));
        if constexpr (std::is_same_v<A, use_soft>) {
            EXPECT_FALSE(m->insert_or_assign(1, 111)) << "assigned";
            model[1] = 111;
            EXPECT_TRUE(m->insert_or_assign(7, 777)) << "inserted";
            model[7] = 777;
            m->put(2, 222);
            model[2] = 222;
        }
        EXPECT_EQ(m->size(), model.size());
        EXPECT_EQ(st->size(), set_model.size());
        for (u64 k = 0; k < 2010; ++k) {
            const auto it = model.find(k);
            ASSERT_EQ(m->get(k), it == model.end() ? std::nullopt : std::optional<u64>(it->second)) << k;
            ASSERT_EQ(m->find(k), m->get(k));
            ASSERT_EQ(m->contains(k), it != model.end());
            ASSERT_EQ(st->contains(k), set_model.contains(k));
        }
        std::map<u64, u64> seen;
        m->for_each([&](const u64& k, const u64& v) { EXPECT_TRUE(seen.emplace(k, v).second) << "twice: " << k; });
        EXPECT_EQ(seen, model);
        std::set<u64> seen_set;
        st->for_each([&](const u64& k) { EXPECT_TRUE(seen_set.insert(k).second); });
        EXPECT_EQ(seen_set, set_model);
    }  // closed
    auto s = open();
    EXPECT_FALSE(s.recovered_from_crash());
    auto m = s.names().open_map<u64, u64, A>("m", opts());
    auto st = s.names().open_set<u64, A>("s", opts());
    EXPECT_EQ(m->size(), model.size());
    std::map<u64, u64> seen;
    m->for_each([&](const u64& k, const u64& v) { seen.emplace(k, v); });
    EXPECT_EQ(seen, model);
    std::set<u64> seen_set;
    st->for_each([&](const u64& k) { seen_set.insert(k); });
    EXPECT_EQ(seen_set, set_model);
    // Still working after the reopen.
    EXPECT_TRUE(m->erase(1));
    EXPECT_TRUE(m->insert(1, 5));
    EXPECT_EQ(m->get(1), std::optional<u64>(5));
}

TEST_P(DurableMapTest, OperationsMatchAModelAndSurviveAReopen) {
    if (GetParam().soft) exercise_and_reopen<use_soft>();
    else exercise_and_reopen<use_link_free>();
}

TEST_P(DurableMapTest, RefusedOpensAreTypeMismatchesAndWriteNothing) {
    const bool soft = GetParam().soft;
    {
        auto s = open();
        if (soft) {
            s.names().open_map<u64, u64, use_soft>("m", opts())->insert(1, 2);
            s.names().open_set<u64, use_soft>("s", opts())->insert(1);
        } else {
            s.names().open_map<u64, u64, use_link_free>("m", opts())->insert(1, 2);
            s.names().open_set<u64, use_link_free>("s", opts())->insert(1);
        }
    }
    auto s = open();
    const auto before = bytes();
    auto& n = s.names();
    const durable_set_options other_layout{
        .layout = GetParam().layout == set_layout::hash ? set_layout::list : set_layout::hash, .recovery_threads = 1};
    if (soft) {
        EXPECT_EQ(error_kind([&] { (void)n.open_map<u64, u64, use_link_free>("m", opts()); }), pool_errc::type_mismatch)
            << "a SOFT map opened as link-free";
        EXPECT_EQ(error_kind([&] { (void)n.open_set<u64, use_link_free>("s", opts()); }), pool_errc::type_mismatch);
        EXPECT_EQ(error_kind([&] { (void)n.open_map<u64, u64, use_soft>("m", other_layout); }), pool_errc::type_mismatch)
            << "another layout";
    } else {
        EXPECT_EQ(error_kind([&] { (void)n.open_map<u64, u64, use_soft>("m", opts()); }), pool_errc::type_mismatch)
            << "a link-free map opened as SOFT";
        EXPECT_EQ(error_kind([&] { (void)n.open_set<u64, use_soft>("s", opts()); }), pool_errc::type_mismatch);
        EXPECT_EQ(error_kind([&] { (void)n.open_map<u64, u64, use_link_free>("m", other_layout); }),
                  pool_errc::type_mismatch)
            << "another layout";
    }
    EXPECT_EQ(error_kind([&] { (void)n.open_map<u64, u64, use_soft>("s", opts()); }), pool_errc::type_mismatch)
        << "a set opened as a map";
    EXPECT_EQ(error_kind([&] { (void)n.open_set<u64, use_soft>("m", opts()); }), pool_errc::type_mismatch)
        << "a map opened as a set";
    EXPECT_EQ(error_kind([&] { (void)n.open_map<u64, std::uint32_t, use_soft>("m", opts()); }), pool_errc::type_mismatch)
        << "another V";
    EXPECT_EQ(error_kind([&] { (void)n.open_map<std::uint32_t, u64, use_soft>("m", opts()); }), pool_errc::type_mismatch)
        << "another K";
    EXPECT_EQ(error_kind([&] { (void)n.open_set<std::uint32_t, use_soft>("s", opts()); }), pool_errc::type_mismatch)
        << "a set of another K";
    EXPECT_EQ(error_kind([&] { (void)n.open_vector<u64>("m"); }), pool_errc::type_mismatch) << "another kind";
    EXPECT_EQ(bytes(), before) << "a refused open writes nothing";
    // The right open still works.
    const auto right = soft ? (n.open_map<u64, u64, use_soft>("m", opts())->get(1))
                            : (n.open_map<u64, u64, use_link_free>("m", opts())->get(1));
    EXPECT_EQ(right, std::optional<u64>(2));
}

TEST_P(DurableMapTest, SixteenByteKeysAndTwentyFourByteValues) {
    const auto key = [](u64 i) {
        wide_key k{};
        const std::string text = "user-" + std::to_string(i * 7919);
        std::copy(text.begin(), text.end(), k.begin());
        return k;
    };
    const auto value = [](u64 i) { return wide_value{i, ~i, i * i}; };
    const auto run = [&]<class A>(A) {
        {
            auto s = open();
            auto m = s.names().open_map<wide_key, wide_value, A>("wide", opts());
            for (u64 i = 0; i < 500; ++i) ASSERT_TRUE(m->insert(key(i), value(i)));
            for (u64 i = 0; i < 500; i += 5) ASSERT_TRUE(m->erase(key(i)));
            if constexpr (std::is_same_v<A, use_soft>) {
                EXPECT_FALSE(m->insert_or_assign(key(1), value(1000)));
            }
        }
        auto s = open();
        auto m = s.names().open_map<wide_key, wide_value, A>("wide", opts());
        EXPECT_EQ(m->size(), 400u);
        for (u64 i = 0; i < 500; ++i) {
            const bool soft_assigned = std::is_same_v<A, use_soft> && i == 1;
            const auto expected = i % 5 == 0 ? std::nullopt : std::optional<wide_value>(value(soft_assigned ? 1000 : i));
            ASSERT_EQ(m->get(key(i)), expected) << i;
        }
        u64 visited = 0;
        m->for_each([&](const wide_key&, const wide_value&) { ++visited; });
        EXPECT_EQ(visited, 400u);
    };
    if (GetParam().soft) run(use_soft{});
    else run(use_link_free{});
}

TEST_P(DurableMapTest, KindsListAndDescribeThemselves) {
    const bool soft = GetParam().soft;
    const bool hash = GetParam().layout == set_layout::hash;
    {
        auto s = open();
        if (soft) {
            s.names().open_map<u64, u64, use_soft>("m", opts())->insert(1, 2);
            s.names().open_set<wide_key, use_soft>("s", opts());
        } else {
            s.names().open_map<u64, u64, use_link_free>("m", opts())->insert(1, 2);
            s.names().open_set<wide_key, use_link_free>("s", opts());
        }
    }
    auto s = open();
    std::map<std::string, std::string> kinds;
    for (const auto& o : s.names().list()) kinds[o.name] = o.kind;
    EXPECT_EQ(kinds["m"], "durable_map");
    EXPECT_EQ(kinds["s"], "durable_set");
    const std::string algorithm = soft ? "SOFT" : "link-free";
    const std::string layout = hash ? " hash table" : " list";
    std::map<std::string, std::string> detail;
    for (const auto& c : s.names().check_objects()) {
        EXPECT_EQ(c.problem, "") << c.name;
        detail[c.name] = c.detail;
    }
    EXPECT_EQ(detail["m"], algorithm + layout + ", 8-byte keys, 8-byte values, 1 area(s) of 64 KiB (1023 node slots)");
    EXPECT_EQ(detail["s"], algorithm + layout + ", 16-byte keys, 0 area(s) of 64 KiB (0 node slots)")
        << "an empty set has no area yet";
    // The registry finds kinds 8 and 9 by id (what `pool info` uses without the element type).
    const auto* set_kind = ferrite::containers::find_kind(8);
    const auto* map_kind = ferrite::containers::find_kind(9);
    ASSERT_NE(set_kind, nullptr);
    ASSERT_NE(map_kind, nullptr);
    EXPECT_EQ(std::string(set_kind->name), "durable_set");
    EXPECT_EQ(std::string(map_kind->name), "durable_map");
}

// A damaged node slot (a flag byte of 7 in the first slot of the first area) is found by the
// catalog's validation without K and V (sets/node_check.hpp): store::open refuses it, naming
// the object, and writes nothing.
TEST_P(DurableMapTest, ADamagedNodeFailsTheStoreOpenWritingNothing) {
    {
        auto s = open();
        if (GetParam().soft) s.names().open_map<u64, u64, use_soft>("m", opts())->insert(1, 2);
        else s.names().open_map<u64, u64, use_link_free>("m", opts())->insert(1, 2);
    }
    u64 area = 0;
    {
        auto ro = ferrite::pmem::pool::inspect(path_);
        auto h = ferrite::alloc::buddy_heap::open(ro, ro.heap_offset());
        auto dir = ferrite::alloc::name_directory::open_or_create(ro, h);
        const auto* e = dir.find("m");
        ASSERT_NE(e, nullptr);
        const auto owned = ferrite::sets::node_store::validate(ro, h, e->anchor);
        ASSERT_EQ(owned.size(), 2u) << "the header and one area";
        area = owned[1];
    }
    {
        std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(area + 64 + 1));  // valid_end (SOFT) / v2 (link-free)
        f.put('\x07');
    }
    const auto before = bytes();
    try {
        auto s = open();
        ADD_FAILURE() << "a store with a damaged node opened";
    } catch (const ferrite::damaged_pool& e) {
        EXPECT_EQ(e.object(), "m") << e.what();
        EXPECT_NE(std::string(e.what()).find("0 or 1"), std::string::npos) << e.what();
    }
    EXPECT_EQ(bytes(), before) << "a refused open writes nothing";
}

INSTANTIATE_TEST_SUITE_P(Algorithms, DurableMapTest,
                         ::testing::Values(params{true, set_layout::hash}, params{true, set_layout::list},
                                           params{false, set_layout::hash}, params{false, set_layout::list}),
                         [](const ::testing::TestParamInfo<params>& p) {
                             return std::string(p.param.soft ? "soft" : "linkfree") +
                                    (p.param.layout == set_layout::hash ? "_hash" : "_list");
                         });

}  // namespace
