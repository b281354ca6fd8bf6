// ferrite::catalog: vectors by name in a pool (several per pool, found again after reopen,
// one object per name in a process), element types of every width (8, 24 and 32-byte
// aligned, 3 bytes), bad input refused without changes, and recovery without the types: a
// swap interrupted by a crash is undone for a 24-byte element that straddles cache lines.
#include "ferrite/containers/catalog.hpp"

#include <gtest/gtest.h>

#include "catalog_test_support.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>
#include <unistd.h>

namespace ferrite {
namespace {

struct rgb {  // 3 bytes, alignment 1
    std::uint8_t r, g, b;
    bool operator==(const rgb&) const = default;
};
struct wide {  // 24 bytes: every other element straddles a cache line
    std::uint64_t a, b, c;
    bool operator==(const wide&) const = default;
    static wide of(std::uint64_t x) { return {x, ~x, x * 3}; }
    bool intact() const { return b == ~a && c == a * 3; }
};
struct alignas(32) aligned32 {
    std::array<std::uint32_t, 5> v;
    bool operator==(const aligned32&) const = default;
};

using ferrite_test::CatalogTest;

TEST_F(CatalogTest, SeveralNamedVectorsPersistAcrossReopen) {
    {
        catalog names(*pool_, *heap_);
        auto prices = names.open_vector<double>("prices");
        auto colours = names.open_vector<rgb>("colours", 1);
        auto rows = names.open_vector<wide>("rows");
        auto blocks = names.open_vector<aligned32>("blocks");
        for (int i = 0; i < 100; ++i) {
            prices->push_back(i * 0.5);
            colours->push_back({std::uint8_t(i), std::uint8_t(i + 1), std::uint8_t(i + 2)});
            rows->push_back(wide::of(i));
            blocks->push_back({{std::uint32_t(i), 1, 2, 3, 4}});
        }
        EXPECT_TRUE(rows->swap(1, 98));
        EXPECT_EQ(names.open_vector<double>("prices"), prices) << "one object per name";
        EXPECT_THROW((names.open_vector<double, containers::use_fpfc>("prices")), usage_error)
            << "a second engine over a live vector would combine concurrently";
    }
    reopen();
    catalog names(*pool_, *heap_);
    const auto list = names.list();
    ASSERT_EQ(list.size(), 4u);
    EXPECT_EQ(list[0].name, "prices");
    EXPECT_EQ(list[0].kind, "vector");
    EXPECT_EQ(list[1].element_size, 3u);
    EXPECT_EQ(list[3].element_align, 32u);
    auto prices = names.open_vector<double>("prices");
    auto colours = names.open_vector<rgb>("colours");
    auto rows = names.open_vector<wide>("rows");
    auto blocks = names.open_vector<aligned32>("blocks");
    ASSERT_EQ(prices->size(), 100u);
    EXPECT_EQ(prices->get(7), 3.5);
    EXPECT_EQ(colours->get(9), (rgb{9, 10, 11}));
    EXPECT_EQ(rows->get(1), wide::of(98));
    EXPECT_EQ(rows->get(98), wide::of(1));
    EXPECT_EQ(blocks->pop_back(), (aligned32{{99, 1, 2, 3, 4}}));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(blocks->unsynchronized_view().data()) % 32, 0u);
}

TEST_F(CatalogTest, WrongTypeOrBadNameIsRefusedAndChangesNothing) {
    catalog names(*pool_, *heap_);
    names.open_vector<std::uint64_t>("ids")->push_back(5);
    try {
        names.open_vector<std::uint32_t>("ids");
        ADD_FAILURE() << "opening with another element type must throw";
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("8-byte"), std::string::npos) << e.what();
    }
    EXPECT_THROW(names.open_vector<std::uint64_t>("has space"), usage_error);
    EXPECT_THROW(names.open_vector<std::uint64_t>(""), usage_error);
    EXPECT_EQ(names.list().size(), 1u);
    EXPECT_EQ(names.open_vector<std::uint64_t>("ids")->get(0), 5u);
}

// A pool opened for inspection (pool::inspect, read-only) lists its objects but refuses to
// open them: their operations would store into a read-only mapping.
TEST_F(CatalogTest, AnInspectedPoolListsButRefusesToOpenAndChangesNothing) {
    {
        catalog names(*pool_, *heap_);
        names.open_vector<std::uint64_t>("ids")->push_back(5);
        names.open_dfc_stack<std::uint64_t>("jobs", 2)->push(0, 7);
    }
    heap_.reset();
    pool_.reset();
    const auto bytes = [&] {
        std::ifstream in(path_, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const auto before = bytes();
    {
        auto ro = pmem::pool::inspect(path_);
        auto heap = alloc::buddy_heap::open(ro, ro.heap_offset());
        catalog names(ro, heap);
        EXPECT_EQ(names.list().size(), 2u);
        const auto refused = [](auto&& open, const char* what) {
            try {
                open();
                ADD_FAILURE() << what << ": opened on a read-only pool";
            } catch (const usage_error& e) {
                EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
            }
        };
        refused([&] { names.open_vector<std::uint64_t>("ids"); }, "existing vector");
        refused([&] { names.open_vector<std::uint64_t>("new"); }, "new vector");
        refused([&] { names.open_dfc_stack<std::uint64_t>("jobs", 2); }, "existing DFC stack");
        refused([&] { names.open_dfc_queue<std::uint64_t>("new", 2); }, "new DFC queue");
    }
    EXPECT_EQ(bytes(), before) << "the pool file changed";
    reopen();
    catalog names(*pool_, *heap_);
    EXPECT_EQ(names.open_vector<std::uint64_t>("ids")->get(0), 5u);
}

TEST_F(CatalogTest, ThreadsOpeningOneNameShareOneVector) {
    catalog names(*pool_, *heap_);
    constexpr int threads = 4, per_thread = 2000;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            auto v = names.open_vector<wide>("shared");
            for (int i = 0; i < per_thread; ++i) ASSERT_TRUE(v->push_back(wide::of(std::uint64_t(t) << 32 | i)));
        });
    for (auto& t : pool) t.join();
    auto v = names.open_vector<wide>("shared");
    ASSERT_EQ(v->size(), std::uint64_t{threads * per_thread});
    std::vector<bool> seen(threads * per_thread);
    for (const auto& w : v->unsynchronized_view()) {
        ASSERT_TRUE(w.intact()) << "a torn 24-byte element";
        const auto k = (w.a >> 32) * per_thread + (w.a & 0xffffffff);
        ASSERT_FALSE(seen[k]);
        seen[k] = true;
    }
}

TEST_F(CatalogTest, RecoveryUndoesAnInterruptedSwapWithoutKnowingTheType) {
    std::uint64_t anchor = 0;
    {
        catalog names(*pool_, *heap_);
        auto rows = names.open_vector<wide>("rows");
        for (int i = 0; i < 8; ++i) rows->push_back(wide::of(i));
        anchor = names.list().size();  // one object
    }
    ASSERT_EQ(anchor, 1u);
    // What a crash in the middle of swap(1, 6) leaves: the undo log committed (tag SWAP,
    // the two originals logged, the state record without redo values) and the elements
    // already swapped.
    auto* dir_entry = alloc::name_directory::open_or_create(*pool_, *heap_).find("rows");
    auto* h = containers::vector_header_at(*pool_, dir_entry->anchor);
    auto* data = reinterpret_cast<wide*>(pool_->base() + h->data);
    auto* log = reinterpret_cast<containers::swap_undo_entry<wide>*>(reinterpret_cast<std::byte*>(h) + sizeof *h);
    log[0] = {1, data[1]};
    log[1] = {6, data[6]};
    std::swap(data[1], data[6]);
    h->state[containers::vector_current(*h)].redo = 0;  // a swap pass first commits a record without redo
    h->log_entries = 2;
    h->log_tag = containers::vector_log_tag::swap;
    reopen(false);
    EXPECT_THROW(catalog(*pool_, *heap_), usage_error) << "an unrecovered heap would fail every growth";
    catalog::recover_pool(*pool_, *heap_);
    catalog names(*pool_, *heap_);
    auto rows = names.open_vector<wide>("rows");
    for (std::uint64_t i = 0; i < 8; ++i) EXPECT_EQ(rows->get(i), wide::of(i)) << i;
    EXPECT_TRUE(heap_->check().empty());
}

}  // namespace
}  // namespace ferrite
