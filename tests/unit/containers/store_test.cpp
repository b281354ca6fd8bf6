// ferrite::store and the catalog's guards against misuse: create-or-open, a second catalog,
// element types on media (type tags), failed creates, unknown kinds, recovery by hand.
#include "ferrite/containers/store.hpp"

#include "ferrite/pmem/pool_header.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using ferrite::pool_errc;
using ferrite::pool_error;
using ferrite::store;
using ferrite::usage_error;

struct price_level {
    double price;
    std::uint64_t volume;
};
struct other_pair {
    std::uint64_t a;
    std::uint64_t b;
};

}  // namespace

FERRITE_PERSISTENT_TYPE(price_level, "price_level");

namespace {

class StoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-store-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::filesystem::remove(path_);
    }
    void TearDown() override { std::filesystem::remove(path_); }
    std::vector<char> bytes() const {
        std::ifstream in(path_, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), {}};
    }
    template <class F>
    pool_errc error_kind(F f) {
        try {
            f();
        } catch (const pool_error& e) {
            last_message_ = e.what();
            return e.kind();
        }
        ADD_FAILURE() << "expected a pool_error";
        return pool_errc::io;
    }
    std::string path_;
    std::string last_message_;
    static constexpr ferrite::store_options small{.size = 4 << 20};
};

TEST_F(StoreTest, OpenOrCreateMakesAReadyPoolThenReopensIt) {
    {
        auto s = store::open_or_create(path_, "store-test", small);
        EXPECT_TRUE(s.created());
        EXPECT_NE(s.pool().heap_offset(), 0u);
        EXPECT_NE(s.pool().catalog_offset(), 0u);
        EXPECT_EQ(s.pool().profile(), ferrite::pmem::pool_profile::store);
        s.names().open_vector<std::uint64_t>("ids")->push_back(7);
    }
    auto s = store::open_or_create(path_, "store-test", small);
    EXPECT_FALSE(s.created());
    EXPECT_FALSE(s.recovered_from_crash());
    EXPECT_EQ(s.names().open_vector<std::uint64_t>("ids")->get(0), std::optional<std::uint64_t>(7));
}

TEST_F(StoreTest, AStoreMayMoveAndItsUserAreaPersists) {
    struct progress {
        std::uint64_t done;
    };
    {
        auto s = store::create(path_, "store-test", {.size = 4 << 20, .user_bytes = sizeof(progress)});
        auto moved = std::move(s);
        moved.user_root<progress>().done = 41;
        ferrite::pmem::pwb(&moved.user_root<progress>().done);
        ferrite::pmem::pfence();
        moved.names().open_vector<std::uint64_t>("v")->push_back(1);
    }
    auto s = store::open(path_, "store-test");
    EXPECT_EQ(s.user_root<progress>().done, 41u);
    using too_big = std::array<char, 4096>;
    EXPECT_THROW((void)s.user_root<too_big>(), usage_error) << "bigger than the area";
}

TEST_F(StoreTest, AnUnfinishedSetupIsFinishedByTheNextOpen) {
    {  // a blank pool, as a killed pmem::pool::create + setup of older versions left one
        auto p = ferrite::pmem::pool::create(path_, "store-test", 4 << 20);
    }
    auto s = store::open(path_, "store-test");
    EXPECT_TRUE(s.finished_setup());
    EXPECT_NE(s.pool().catalog_offset(), 0u);
    s.close();
    auto again = store::open(path_, "store-test");
    EXPECT_FALSE(again.finished_setup());
}

// The roots table has no checksum (it changes while the pool is open), so a damaged catalog
// entry reads as "no catalog yet", like a setup killed before its catalog step. Finishing the
// setup then made a new, empty catalog: every named object silently gone. Now the heap tells
// the two apart (an interrupted setup leaves no allocated block) and the open is refused.
TEST_F(StoreTest, ALostCatalogEntryIsRefusedInsteadOfReplacedByAnEmptyCatalog) {
    {
        auto s = store::create(path_, "store-test", small);
        auto v = s.names().open_vector<std::uint64_t>("v", 2);
        for (std::uint64_t i = 0; i < 10; ++i) v->push_back(i);
    }
    std::uint64_t entry_at = 0;
    {
        auto p = ferrite::pmem::pool::inspect(path_);
        for (const auto& e : p.roots().entries)
            if (ferrite::pmem::root_entry_id(e) == ferrite::pmem::root_ids::catalog)
                entry_at = static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(&e) - p.base());
    }
    ASSERT_NE(entry_at, 0u);
    auto image = bytes();
    std::memset(image.data() + entry_at, 0, 8);
    std::ofstream(path_, std::ios::binary | std::ios::trunc).write(image.data(), static_cast<std::streamsize>(image.size()));
    EXPECT_EQ(error_kind([&] { (void)store::open(path_, "store-test"); }), pool_errc::damaged_catalog);
    EXPECT_NE(last_message_.find("restore the pool from a copy"), std::string::npos) << last_message_;
    EXPECT_EQ(bytes(), image) << "a refused open writes nothing";
    EXPECT_EQ(error_kind([&] { (void)store::open_or_create(path_, "store-test", small); }), pool_errc::damaged_catalog);
}

// A roots entry whose id was damaged, in a pool whose setup was killed before its catalog
// step (here: the catalog's entry cleared): the heap's entry names another root id, so the
// store looks as if its setup had not registered a heap yet. Finishing the setup collided with the
// damaged entry at the heap's offset (a usage_error, found by the pool fuzzer with seed 7),
// after the open had marked the pool in use. Now it is damage, refused with nothing written.
TEST_F(StoreTest, AHeapEntryWithADamagedIdIsRefusedUnchanged) {
    {
        auto s = store::create(path_, "store-test", small);
        auto v = s.names().open_vector<std::uint64_t>("v", 2);
        v->push_back(7);
    }
    std::uint64_t entry_at = 0;
    std::uint64_t entry = 0;
    std::uint64_t catalog_at = 0;
    {
        auto p = ferrite::pmem::pool::inspect(path_);
        for (const auto& e : p.roots().entries) {
            const auto at = static_cast<std::uint64_t>(reinterpret_cast<const std::byte*>(&e) - p.base());
            if (ferrite::pmem::root_entry_id(e) == ferrite::pmem::root_ids::heap) {
                entry_at = at;
                entry = e;
            }
            if (ferrite::pmem::root_entry_id(e) == ferrite::pmem::root_ids::catalog) catalog_at = at;
        }
    }
    ASSERT_NE(entry_at, 0u);
    ASSERT_NE(catalog_at, 0u);
    auto image = bytes();
    std::memset(image.data() + catalog_at, 0, 8);
    const std::uint64_t damaged = ferrite::pmem::root_entry(29697, ferrite::pmem::root_entry_offset(entry));
    std::memcpy(image.data() + entry_at, &damaged, 8);
    std::ofstream(path_, std::ios::binary | std::ios::trunc).write(image.data(), static_cast<std::streamsize>(image.size()));
    EXPECT_EQ(error_kind([&] { (void)store::open(path_, "store-test"); }), pool_errc::damaged_state);
    EXPECT_NE(last_message_.find("root id 29697"), std::string::npos) << last_message_;
    EXPECT_EQ(bytes(), image) << "a refused open writes nothing";
    EXPECT_EQ(error_kind([&] { (void)store::open_or_create(path_, "store-test", small); }), pool_errc::damaged_state);
    EXPECT_EQ(bytes(), image);
}

// The other reading of a heap without a catalog entry: the setup was killed inside the
// catalog's step, its first block allocated (pending) but not registered. The heap's recovery
// frees that block, and the open finishes the setup.
TEST_F(StoreTest, ASetupKilledInsideTheCatalogStepIsFinished) {
    {
        auto p = ferrite::pmem::pool::create(path_, "store-test", 4 << 20);
        p.set_profile(ferrite::pmem::pool_profile::store);
        auto* root = static_cast<std::byte*>(p.root_bytes(2 << 20));
        auto heap = ferrite::alloc::buddy_heap::create(p, static_cast<std::uint64_t>(root - p.base()), 2 << 20);
        (void)heap.allocate(4096);  // the catalog's first block, pending: then the kill
    }
    auto s = store::open(path_, "store-test");
    EXPECT_TRUE(s.finished_setup());
    EXPECT_NE(s.pool().catalog_offset(), 0u);
    auto v = s.names().open_vector<std::uint64_t>("v", 2);
    v->push_back(7);
}

TEST_F(StoreTest, APlainPoolWithARootIsNotTakenForAStore) {
    {
        auto p = ferrite::pmem::pool::create(path_, "store-test", 4 << 20);
        (void)p.root_bytes(4096);
    }
    const auto before = bytes();
    EXPECT_EQ(error_kind([&] { (void)store::open(path_, "store-test"); }), pool_errc::unfinished);
    EXPECT_EQ(bytes(), before) << "a refused open writes nothing";
}

TEST_F(StoreTest, ASecondCatalogOverOnePoolIsRefused) {
    auto s = store::create(path_, "store-test", small);
    EXPECT_THROW(ferrite::catalog(s.pool(), s.heap()), usage_error);
    auto v = s.names().open_vector<std::uint64_t>("v");
    v->push_back(1);
    EXPECT_EQ(v->size(), 1u) << "the first catalog keeps working";
}

TEST_F(StoreTest, ElementTypesAreToldApartBeyondSizeAndAlignment) {
    {
        auto s = store::create(path_, "store-test", small);
        s.names().open_vector<double>("prices")->push_back(9.5);
        s.names().open_dfc_queue<std::uint64_t>("jobs", 2);
        s.names().open_vector<price_level>("book");
    }
    const auto before = bytes();
    {
        auto s = store::open(path_, "store-test");
        EXPECT_EQ(error_kind([&] { (void)s.names().open_vector<std::uint64_t>("prices"); }), pool_errc::type_mismatch);
        EXPECT_NE(last_message_.find("f64"), std::string::npos) << last_message_;
        EXPECT_NE(last_message_.find("asked for a vector of u64"), std::string::npos) << last_message_;
        EXPECT_EQ(error_kind([&] { (void)s.names().open_dfc_queue<double>("jobs", 2); }), pool_errc::type_mismatch);
        EXPECT_EQ(error_kind([&] { (void)s.names().open_dfc_stack<std::uint64_t>("jobs", 2); }), pool_errc::type_mismatch)
            << "another kind";
        EXPECT_EQ(error_kind([&] { (void)s.names().open_vector<other_pair>("book"); }), pool_errc::type_mismatch)
            << "a user type of the same size and alignment";
        EXPECT_EQ(s.names().open_vector<double>("prices")->get(0), std::optional<double>(9.5));
        EXPECT_NO_THROW((void)s.names().open_vector<price_level>("book"));
        for (const auto& o : s.names().list()) {
            if (o.name == "prices") {
                EXPECT_EQ(o.element_type, "f64");
            }
        }
    }
    (void)before;
}

TEST_F(StoreTest, AFailedCreateLeavesNoEntryAndNoBlock) {
    auto s = store::create(path_, "store-test", small);
    const auto used = s.heap().usage().bytes_used;
    EXPECT_ANY_THROW((void)s.names().open_vector<std::uint64_t>("huge", std::size_t{1} << 40));
    EXPECT_TRUE(s.names().list().empty()) << "the name was not kept";
    EXPECT_EQ(s.heap().usage().bytes_used, used) << "no block left behind";
    EXPECT_ANY_THROW((void)s.names().open_dfc_queue<std::uint64_t>("q", 2, std::uint64_t{1} << 40));
    EXPECT_TRUE(s.names().list().empty());
    EXPECT_EQ(s.heap().usage().bytes_used, used);
    EXPECT_NO_THROW((void)s.names().open_vector<std::uint64_t>("huge", 4)) << "the name is free for a real create";
}

TEST_F(StoreTest, AnUnknownKindIsAClearError) {
    {
        auto s = store::create(path_, "store-test", small);
        s.names().open_vector<std::uint64_t>("future");
        // What a newer ferrite would write: the entry's kind word set to a kind we do not know.
        auto* first_block = s.pool().base() + s.pool().catalog_offset();
        auto* entry = reinterpret_cast<ferrite::alloc::directory_entry*>(first_block + 64);
        ASSERT_EQ(entry->name_view(), "future");
        entry->kind = 99;
        ferrite::pmem::pwb(entry);
        ferrite::pmem::pfence();
    }
    const auto before = bytes();
    EXPECT_EQ(error_kind([&] { (void)store::open(path_, "store-test"); }), pool_errc::unknown_kind);
    EXPECT_NE(last_message_.find("kind 99"), std::string::npos) << last_message_;
    EXPECT_EQ(bytes(), before) << "a refused open writes nothing";
}

// catalog::recover() where its comment says: between the heap's recover() and finish_recovery().
TEST_F(StoreTest, CatalogRecoverWorksBetweenTheHeapsTwoSteps) {
    {
        auto s = store::create(path_, "store-test", small);
        s.names().open_vector<std::uint64_t>("v")->push_back(3);
    }
    auto pool = ferrite::pmem::pool::open(path_, "store-test");
    auto heap = ferrite::alloc::buddy_heap::open(pool, pool.heap_offset());
    heap.recover();
    {
        ferrite::catalog c(pool, heap);
        c.recover();
        EXPECT_THROW((void)c.open_vector<std::uint64_t>("v"), usage_error) << "not before the heap finished";
    }
    heap.finish_recovery();
    ferrite::catalog c(pool, heap);
    EXPECT_EQ(c.open_vector<std::uint64_t>("v")->get(0), std::optional<std::uint64_t>(3));
}

// Found by the pool-file fuzzer (tests/fuzz): the heap validates its free lists and block map
// only where an operation uses them, so a store with such damage opened, recovered and was
// marked clean, and `pool check` then reported it. Open now refuses it, writing nothing.
TEST_F(StoreTest, DamageInTheHeapsListsOrMapIsRefusedByOpen) {
    {
        auto s = store::create(path_, "store-test", small);
        auto v = s.names().open_vector<std::uint64_t>("v", 2);
        for (std::uint64_t i = 0; i < 100; ++i) v->push_back(i);  // grown: arrays freed
    }
    std::uint64_t heap_at = 0, map_at = 0, free_block = 0, inner = 0;
    {
        auto p = ferrite::pmem::pool::inspect(path_);
        auto heap = ferrite::alloc::buddy_heap::open(p, p.heap_offset());
        heap_at = p.heap_offset();
        map_at = heap_at + heap.geometry().map_offset;
        for (const auto& b : heap.blocks()) {
            if (b.order <= ferrite::alloc::min_order) continue;
            if (b.state == ferrite::alloc::block_state::free && free_block == 0) free_block = b.offset;
            if (inner == 0) inner = b.offset + ferrite::alloc::granule;  // a granule inside a block
        }
        ASSERT_NE(free_block, 0u);
        ASSERT_TRUE(heap.check().empty());
        map_at += (inner - heap.geometry().arena_offset) / ferrite::alloc::granule;
    }
    const auto clean = bytes();
    auto damaged = [&](std::uint64_t at, std::uint64_t word, std::size_t width) {
        auto image = clean;
        std::memcpy(image.data() + at, &word, width);
        std::ofstream(path_, std::ios::binary | std::ios::trunc).write(image.data(), static_cast<std::streamsize>(image.size()));
        try {
            (void)store::open(path_, "store-test");
            ADD_FAILURE() << "no error for the word at " << at;
        } catch (const ferrite::damaged_pool& e) {
            EXPECT_EQ(e.kind(), pool_errc::damaged_heap) << e.what();
            EXPECT_NE(std::string(e.what()).find("restore the pool from a copy"), std::string::npos) << e.what();
        }
        EXPECT_EQ(bytes(), image) << "a refused open writes nothing";
    };
    damaged(heap_at + free_block, std::uint64_t{1} << 40, 8);                      // a free block's next link
    damaged(map_at, ferrite::alloc::free_tag | ferrite::alloc::min_order, 1);      // a block start inside a block
    std::ofstream(path_, std::ios::binary | std::ios::trunc).write(clean.data(), static_cast<std::streamsize>(clean.size()));
    EXPECT_NO_THROW((void)store::open(path_, "store-test")) << "the undamaged pool opens";
}

// Found by the pool-file fuzzer: catalog::validate read a vector's data word raw and made a
// pointer of it (base + garbage: undefined behaviour, stopped by UBSan) before the vector's
// own validation ran. Now the header is validated first; the open is refused, nothing written.
TEST_F(StoreTest, AVectorsDamagedDataWordIsRefusedBeforeItIsUsed) {
    std::uint64_t data_word = 0;
    {
        auto s = store::create(path_, "store-test", small);
        auto v = s.names().open_vector<std::uint64_t>("v", 4);
        v->push_back(1);
    }
    {
        auto p = ferrite::pmem::pool::inspect(path_);
        auto heap = ferrite::alloc::buddy_heap::open(p, p.heap_offset());
        auto dir = ferrite::alloc::name_directory::open_or_create(p, heap);
        ASSERT_EQ(dir.entries().size(), 1u);
        data_word = dir.entries()[0].anchor + offsetof(ferrite::containers::vector_header, data);
    }
    auto image = bytes();
    image[data_word + 7] = static_cast<char>(0x93);  // the top byte: far outside the pool
    std::ofstream(path_, std::ios::binary | std::ios::trunc).write(image.data(), static_cast<std::streamsize>(image.size()));
    try {
        (void)store::open(path_, "store-test");
        ADD_FAILURE() << "no error";
    } catch (const ferrite::damaged_pool& e) {
        EXPECT_EQ(e.kind(), pool_errc::damaged_object) << e.what();
        EXPECT_EQ(e.region(), "vector") << e.what();
        EXPECT_EQ(e.object(), "v") << e.what();
    }
    EXPECT_EQ(bytes(), image) << "a refused open writes nothing";
}

// Found by the pool-file fuzzer: a vector header whose element alignment no longer matched
// its catalog entry (8 -> 1: still a valid shape for 8-byte elements) passed the open and
// `pool check`, then the typed open_vector failed after the pool had been recovered. The
// catalog now validates each vector against its entry's shape: the open is refused.
TEST_F(StoreTest, AVectorHeaderThatDisagreesWithItsEntryIsRefusedByOpen) {
    {
        auto s = store::create(path_, "store-test", small);
        s.names().open_vector<std::uint64_t>("v", 4)->push_back(1);
    }
    std::uint64_t align_word = 0;
    {
        auto p = ferrite::pmem::pool::inspect(path_);
        auto heap = ferrite::alloc::buddy_heap::open(p, p.heap_offset());
        auto dir = ferrite::alloc::name_directory::open_or_create(p, heap);
        ASSERT_EQ(dir.entries().size(), 1u);
        align_word = dir.entries()[0].anchor + offsetof(ferrite::containers::vector_header, element_align);
    }
    auto image = bytes();
    image[align_word] = 1;
    std::ofstream(path_, std::ios::binary | std::ios::trunc).write(image.data(), static_cast<std::streamsize>(image.size()));
    try {
        (void)store::open(path_, "store-test");
        ADD_FAILURE() << "no error";
    } catch (const ferrite::damaged_pool& e) {
        EXPECT_EQ(e.kind(), pool_errc::damaged_object) << e.what();
        EXPECT_EQ(e.object(), "v") << e.what();
    }
    EXPECT_EQ(bytes(), image) << "a refused open writes nothing";
}

TEST_F(StoreTest, NamesUpToTheFileSystemLimitWork) {
    const auto dir = std::filesystem::path(path_).parent_path();
    const std::string name(255, 'n');
    const auto long_path = dir / name;
    std::filesystem::remove(long_path);
    { auto s = store::create(long_path, "store-test", small); }
    EXPECT_TRUE(std::filesystem::exists(long_path));
    std::filesystem::remove(long_path);
}

}  // namespace
