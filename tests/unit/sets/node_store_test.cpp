// sets::node_store: create/open, slot allocation and reuse, growth, node_at, validation of
// damaged media (nothing written), concurrent allocation, recovery of a pending area.
#include "ferrite/sets/node_store.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/error.hpp"
#include "ferrite/pmem/pool.hpp"
#include "ferrite/sets/node_store_layout.hpp"
#include "ferrite/sync/thread_id.hpp"

namespace {

using ferrite::damaged_pool;
using ferrite::pool_errc;
using ferrite::pool_error;
using ferrite::usage_error;
using ferrite::alloc::block_state;
using ferrite::alloc::buddy_heap;
using ferrite::sets::area_header;
using ferrite::sets::node_line;
using ferrite::sets::node_store;
using ferrite::sets::node_store_header;
using ferrite::sets::node_store_shape;

constexpr std::uint64_t heap_bytes = 1 << 20;
constexpr std::uint32_t slots_per_area = 4096 / 64 - 1;

node_store_shape test_shape() {
    node_store_shape s;
    s.algorithm = 1;
    s.layout = 2;
    s.key_size = 8;
    s.value_size = 8;
    s.area_bytes = 4096;
    std::memset(s.blank_node.bytes, 0xa5, sizeof s.blank_node.bytes);
    s.blank_node.bytes[0] = std::byte{1};
    return s;
}

bool is_blank(const node_line* n) {
    const auto blank = test_shape().blank_node;
    return std::memcmp(n, &blank, sizeof(node_line)) == 0;
}

class NodeStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-node-store-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::filesystem::remove(path_);
        pool_ = std::make_unique<ferrite::pmem::pool>(ferrite::pmem::pool::create(path_, "node-store-test", 2 << 20));
        root_ = static_cast<std::byte*>(pool_->root_bytes(64 + heap_bytes));
        heap_offset_ = static_cast<std::uint64_t>(root_ - pool_->base()) + 64;
        heap_.reset(new buddy_heap(buddy_heap::create(*pool_, heap_offset_, heap_bytes)));
    }
    void TearDown() override {
        heap_.reset();
        pool_.reset();
        std::filesystem::remove(path_);
    }

    std::uint64_t& anchor() { return *reinterpret_cast<std::uint64_t*>(root_); }
    node_store create() { return node_store::create(*pool_, *heap_, anchor(), test_shape()); }
    node_store open() { return node_store::open(*pool_, *heap_, anchor(), test_shape()); }
    // A restart: the heap opened again over the same bytes, then recover() (as after a crash).
    void restart_heap() {
        heap_.reset();
        heap_.reset(new buddy_heap(buddy_heap::open(*pool_, heap_offset_)));
        heap_->recover();
    }
    std::vector<std::byte> bytes() const { return {pool_->base(), pool_->base() + pool_->size()}; }
    node_store_header& header() { return *reinterpret_cast<node_store_header*>(pool_->base() + anchor()); }
    area_header& area_at(std::uint64_t heap_off) { return *static_cast<area_header*>(heap_->at(heap_off)); }

    // Every entry point that reads the media refuses it with damaged_pool, and writes nothing.
    void expect_refused(const std::string& says) {
        const auto before = bytes();
        const std::vector<std::pair<const char*, std::function<void()>>> calls{
            {"validate", [&] { node_store::validate(*pool_, *heap_, anchor()); }},
            {"open", [&] { open(); }},
            {"recorded_shape", [&] { node_store::recorded_shape(*pool_, *heap_, anchor()); }},
            {"recover", [&] { node_store::recover(*pool_, *heap_, anchor()); }},
        };
        for (const auto& [name, call] : calls) {
            try {
                call();
                ADD_FAILURE() << name << " accepted damaged media (" << says << ")";
            } catch (const damaged_pool& e) {
                EXPECT_EQ(e.kind(), pool_errc::damaged_object) << name;
                EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << name << ": " << e.what();
            }
            EXPECT_TRUE(bytes() == before) << name << " wrote to the pool";
        }
    }

    std::string path_;
    std::unique_ptr<ferrite::pmem::pool> pool_;
    std::byte* root_ = nullptr;
    std::uint64_t heap_offset_ = 0;
    std::unique_ptr<buddy_heap> heap_;
};

TEST_F(NodeStoreTest, CreateOpenRoundTrip) {
    {
        auto s = create();
        ASSERT_NE(anchor(), 0u);
        EXPECT_EQ(s.capacity(), 0u);
        EXPECT_TRUE(s.areas().empty());
    }
    EXPECT_EQ(heap_->state(pool_->base() + anchor()), block_state::live);
    const auto shape = node_store::recorded_shape(*pool_, *heap_, anchor());
    EXPECT_EQ(shape.algorithm, 1u);
    EXPECT_EQ(shape.layout, 2u);
    EXPECT_EQ(shape.key_size, 8u);
    EXPECT_EQ(shape.value_size, 8u);
    EXPECT_EQ(shape.area_bytes, 4096u);
    EXPECT_EQ(node_store::validate(*pool_, *heap_, anchor()), std::vector<std::uint64_t>{anchor()});
    auto s = open();
    EXPECT_TRUE(s.areas().empty());
    EXPECT_EQ(s.shape().area_bytes, 4096u);
}

TEST_F(NodeStoreTest, CreateRefusesBadShapesAndLeavesTheAnchor) {
    auto shape = test_shape();
    shape.area_bytes = 4096 + 64;
    EXPECT_THROW(node_store::create(*pool_, *heap_, anchor(), shape), usage_error);
    shape.area_bytes = 2048;
    EXPECT_THROW(node_store::create(*pool_, *heap_, anchor(), shape), usage_error);
    shape = test_shape();
    shape.key_size = 40;
    shape.value_size = 40;
    EXPECT_THROW(node_store::create(*pool_, *heap_, anchor(), shape), usage_error);
    EXPECT_EQ(anchor(), 0u);
    EXPECT_EQ(heap_->usage().bytes_used, 0u);
}

TEST_F(NodeStoreTest, FreshSlotsEqualBlankNodeAndAreDistinct) {
    auto s = create();
    std::set<node_line*> seen;
    for (int i = 0; i < 20; ++i) {
        auto* n = s.allocate();
        EXPECT_TRUE(is_blank(n)) << i;
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(n) % 64, 0u);
        EXPECT_TRUE(seen.insert(n).second);
        EXPECT_EQ(s.node_at(s.pool_offset_of(n)), n);
    }
    EXPECT_EQ(s.areas().size(), 1u);
    EXPECT_EQ(s.capacity(), slots_per_area);
}

TEST_F(NodeStoreTest, AllocateBeyondOneAreaGrowsAndOpenFindsEveryArea) {
    std::vector<node_line*> got;
    {
        auto s = create();
        for (std::uint32_t i = 0; i < 2 * slots_per_area + 1; ++i) got.push_back(s.allocate());
        EXPECT_EQ(s.areas().size(), 3u);
        EXPECT_EQ(s.capacity(), 3 * slots_per_area);
        for (auto* n : got) std::memset(n, 0x11, sizeof(node_line));
    }
    EXPECT_EQ(std::set<node_line*>(got.begin(), got.end()).size(), got.size());
    const auto owned = node_store::validate(*pool_, *heap_, anchor());
    ASSERT_EQ(owned.size(), 4u);
    for (auto off : owned) EXPECT_EQ(heap_->state(pool_->base() + off), block_state::live);
    auto s = open();
    ASSERT_EQ(s.areas().size(), 3u);
    std::size_t slots = 0;
    for (const auto& a : s.areas()) {
        EXPECT_EQ(a.count, slots_per_area);
        slots += a.count;
    }
    EXPECT_EQ(slots, 3 * slots_per_area);
    for (auto* n : got) EXPECT_EQ(s.node_at(s.pool_offset_of(n)), n);
}

TEST_F(NodeStoreTest, FreeThenAllocateReuses) {
    auto s = create();
    auto* a = s.allocate();
    auto* b = s.allocate();
    s.free(a);
    EXPECT_EQ(s.allocate(), a);
    s.free(b);
    s.free(a);
    EXPECT_EQ(s.allocate(), a);
    EXPECT_EQ(s.allocate(), b);
    EXPECT_EQ(s.areas().size(), 1u);
}

TEST_F(NodeStoreTest, AddFreeRefillsBeforeGrowing) {
    auto s = create();
    std::vector<node_line*> got;
    for (std::uint32_t i = 0; i < slots_per_area; ++i) got.push_back(s.allocate());
    const std::vector<node_line*> back{got[3], got[7]};
    s.add_free(back);
    std::set<node_line*> again{s.allocate(), s.allocate()};
    EXPECT_EQ(again, std::set<node_line*>(back.begin(), back.end()));
    EXPECT_EQ(s.areas().size(), 1u);
    auto* fresh = s.allocate();  // depot empty, area used up: a new area
    EXPECT_EQ(s.areas().size(), 2u);
    EXPECT_TRUE(is_blank(fresh));
    // Another thread's add_free reaches this thread's cache too.
    std::thread([&] {
        const std::vector<node_line*> one{got[9]};
        s.add_free(one);
    }).join();
    for (std::uint32_t i = 1; i < slots_per_area; ++i) s.allocate();
    EXPECT_EQ(s.allocate(), got[9]);
    EXPECT_EQ(s.areas().size(), 2u);
}

TEST_F(NodeStoreTest, NodeAtAcceptsEverySlotAndRefusesEverythingElse) {
    auto s = create();
    for (std::uint32_t i = 0; i < slots_per_area + 1; ++i) s.allocate();
    std::size_t checked = 0;
    for (const auto& a : s.areas()) {
        const auto first = s.pool_offset_of(a.first);
        for (std::size_t i = 0; i < a.count; ++i, ++checked) EXPECT_EQ(s.node_at(first + 64 * i), a.first + i);
        EXPECT_EQ(s.node_at(first - 64), nullptr) << "line 0 is the area header";
        EXPECT_EQ(s.node_at(first + 1), nullptr);
        EXPECT_EQ(s.node_at(first + 32), nullptr);
        EXPECT_EQ(s.node_at(first + 64 * a.count), nullptr) << "the next block's line 0";
    }
    EXPECT_EQ(checked, 2 * std::size_t{slots_per_area});
    void* foreign = heap_->allocate(4096);
    heap_->confirm_allocation(foreign);
    const auto foreign_off = static_cast<std::uint64_t>(static_cast<std::byte*>(foreign) - pool_->base());
    EXPECT_EQ(s.node_at(foreign_off + 64), nullptr);
    EXPECT_EQ(s.node_at(anchor()), nullptr);
    EXPECT_EQ(s.node_at(anchor() + 64), nullptr);
    EXPECT_EQ(s.node_at(0), nullptr);
    EXPECT_EQ(s.node_at(64), nullptr);
    EXPECT_EQ(s.node_at(~std::uint64_t{0} - 63), nullptr);
    EXPECT_EQ(s.node_at(pool_->size() + 64), nullptr);
}

class NodeStoreDamageTest : public NodeStoreTest {
protected:
    void SetUp() override {
        NodeStoreTest::SetUp();
        auto s = create();
        for (std::uint32_t i = 0; i < 2 * slots_per_area; ++i) s.allocate();  // two areas on one list
        list_ = 0;
        while (header().heads[list_] == 0) ++list_;
        first_ = header().heads[list_];
        second_ = area_at(first_).next;
        ASSERT_NE(second_, 0u);
        ASSERT_EQ(area_at(second_).next, 0u);
    }
    unsigned list_ = 0;
    std::uint64_t first_ = 0, second_ = 0;  // heap offsets of the areas, newest first
};

TEST_F(NodeStoreDamageTest, UndamagedValidates) {
    EXPECT_EQ(node_store::validate(*pool_, *heap_, anchor()).size(), 3u);
}

TEST_F(NodeStoreDamageTest, HeaderMagic) {
    header().identity.magic ^= 1;
    expect_refused("bad magic");
}

TEST_F(NodeStoreDamageTest, HeaderChecksum) {
    header().identity.area_bytes = 8192;
    expect_refused("checksum");
}

TEST_F(NodeStoreDamageTest, HeaderAreaBytesOutOfRange) {
    header().identity.area_bytes = 100;
    header().identity.checksum = header().identity.compute_checksum();
    expect_refused("area_bytes = 100");
}

TEST_F(NodeStoreDamageTest, AnchorNamesNoBlock) {
    anchor() += 64;
    expect_refused("names no block");
    anchor() -= 64;
}

TEST_F(NodeStoreDamageTest, CycleInAList) {
    auto& last = area_at(second_);
    last.next = first_;
    last.checksum = last.compute_checksum();
    expect_refused("appears twice");
}

TEST_F(NodeStoreDamageTest, SelfLoop) {
    auto& a = area_at(first_);
    a.next = first_;
    a.checksum = a.compute_checksum();
    expect_refused("appears twice");
}

TEST_F(NodeStoreDamageTest, TwoListsShareAnArea) {
    header().heads[(list_ + 1) % 64] = second_;
    expect_refused("appears twice");
}

TEST_F(NodeStoreDamageTest, AreaChecksum) {
    area_at(second_).nodes = 1000;
    expect_refused("checksum does not match");
}

TEST_F(NodeStoreDamageTest, AreaMagic) {
    area_at(first_).magic = 0;
    expect_refused("bad magic");
}

TEST_F(NodeStoreDamageTest, OwnerMismatch) {
    auto& a = area_at(second_);
    a.owner += 1024;
    a.checksum = a.compute_checksum();
    expect_refused("belongs to the node store at heap offset");
}

TEST_F(NodeStoreDamageTest, WrongListIndex) {
    auto& a = area_at(second_);
    a.list = (list_ + 1) % 64;
    a.checksum = a.compute_checksum();
    expect_refused("says it is on list");
}

TEST_F(NodeStoreDamageTest, AreaOfTheWrongSize) {
    // A well-formed area header in a heap block of 8 KiB, linked at the head of a list.
    void* big = heap_->allocate(8192);
    heap_->confirm_allocation(big);
    const unsigned other = (list_ + 1) % 64;
    auto* a = static_cast<area_header*>(big);
    *a = area_header{ferrite::sets::area_magic, anchor() - heap_offset_, 0, other, slots_per_area, 0};
    a->checksum = a->compute_checksum();
    header().heads[other] = heap_->offset_of(big);
    expect_refused("a heap block of 8192 bytes, not 4096");
}

TEST_F(NodeStoreDamageTest, AreaNotAnAreaPosition) {
    auto& a = area_at(first_);
    a.next = second_ + 64;
    a.checksum = a.compute_checksum();
    expect_refused("not an area position");
}

TEST_F(NodeStoreDamageTest, AreaThatIsAFreeBlock) {
    void* b = heap_->allocate(4096);
    heap_->confirm_allocation(b);
    heap_->deallocate(b);
    heap_->confirm_deallocation(b);
    header().heads[(list_ + 1) % 64] = heap_->offset_of(b);
    expect_refused("not a live block");
}

TEST_F(NodeStoreDamageTest, ShapeMismatchIsATypeMismatchAndWritesNothing) {
    const auto before = bytes();
    auto other = test_shape();
    other.key_size = 16;
    try {
        node_store::open(*pool_, *heap_, anchor(), other);
        ADD_FAILURE() << "opened with another shape";
    } catch (const pool_error& e) {
        EXPECT_EQ(e.kind(), pool_errc::type_mismatch);
        EXPECT_NE(std::string(e.what()).find("key_size 8"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(bytes() == before);
}

TEST_F(NodeStoreTest, RecoverConfirmsAPendingLinkedAreaAndTheHeapFreesAnUnlinkedOne) {
    {
        auto s = create();
        s.allocate();
    }
    // Growth cut off after its commit (linked, not confirmed) on list 9, and another one cut
    // off before its commit (filled, not linked).
    auto& h = header();
    const auto shape = test_shape();
    auto fill = [&](unsigned list) {
        void* block = heap_->allocate(4096);  // pending
        auto* a = static_cast<area_header*>(block);
        *a = area_header{ferrite::sets::area_magic, anchor() - heap_offset_, h.heads[list], list, slots_per_area, 0};
        a->checksum = a->compute_checksum();
        auto* slots = reinterpret_cast<node_line*>(a + 1);
        for (std::uint32_t i = 0; i < slots_per_area; ++i) slots[i] = shape.blank_node;
        return block;
    };
    void* linked = fill(9);
    h.heads[9] = heap_->offset_of(linked);
    void* unlinked = fill(10);
    restart_heap();
    EXPECT_EQ(heap_->state(linked), block_state::allocation_pending);
    EXPECT_EQ(node_store::validate(*pool_, *heap_, anchor()).size(), 3u);  // pending areas are the store's
    node_store::recover(*pool_, *heap_, anchor());
    node_store::recover(*pool_, *heap_, anchor());  // restartable
    EXPECT_EQ(heap_->state(linked), block_state::live);
    heap_->finish_recovery();
    EXPECT_EQ(heap_->state(linked), block_state::live);
    EXPECT_EQ(heap_->state(unlinked), block_state::free);
    auto s = open();
    EXPECT_EQ(s.areas().size(), 2u);
    EXPECT_NE(s.node_at(s.pool_offset_of(static_cast<node_line*>(linked) + 1)), nullptr);
    EXPECT_EQ(heap_->check(), std::vector<std::string>{});
}

TEST_F(NodeStoreTest, RecoverConfirmsAPendingHeader) {
    // create() cut off after its anchor persisted, before the header's confirmation: done by
    // hand with the layout, then a restart.
    void* block = heap_->allocate(sizeof(node_store_header));
    auto* h = static_cast<node_store_header*>(block);
    std::memset(static_cast<void*>(h), 0, sizeof *h);
    h->identity = {ferrite::sets::node_store_magic, ferrite::sets::node_store_version, 64, 1, 2, 8, 8, 4096, 0, 0};
    h->identity.checksum = h->identity.compute_checksum();
    anchor() = static_cast<std::uint64_t>(static_cast<std::byte*>(block) - pool_->base());
    restart_heap();
    node_store::recover(*pool_, *heap_, anchor());
    heap_->finish_recovery();
    EXPECT_EQ(heap_->state(block), block_state::live);
    auto s = open();
    EXPECT_TRUE(is_blank(s.allocate()));
}

TEST_F(NodeStoreTest, AFinishedHeapThatFreedALinkedAreaIsRefused) {
    {
        auto s = create();
        s.allocate();
    }
    void* block = heap_->allocate(4096);
    auto* a = static_cast<area_header*>(block);
    *a = area_header{ferrite::sets::area_magic, anchor() - heap_offset_, 0, 3, slots_per_area, 0};
    a->checksum = a->compute_checksum();
    header().heads[3] = heap_->offset_of(block);
    restart_heap();
    heap_->finish_recovery();  // node_store::recover() was not called: the area is gone
    expect_refused("heap finished its recovery");
}

TEST_F(NodeStoreTest, ScanParallelVisitsEveryAreaOnceAndRethrows) {
    auto s = create();
    for (std::uint32_t i = 0; i < 5 * slots_per_area; ++i) s.allocate();
    for (unsigned threads : {0u, 1u, 3u, 16u}) {
        std::atomic<std::size_t> slots{0}, areas{0};
        s.scan_parallel(threads, [&](const ferrite::sets::area_view& a) {
            areas.fetch_add(1);
            slots.fetch_add(a.count);
        });
        EXPECT_EQ(areas.load(), 5u) << threads;
        EXPECT_EQ(slots.load(), s.capacity()) << threads;
    }
    for (unsigned threads : {1u, 4u})
        EXPECT_THROW(s.scan_parallel(threads,
                                     [&](const ferrite::sets::area_view& a) {
                                         if (a.first == s.areas()[2].first) throw std::runtime_error("area 2");
                                     }),
                     std::runtime_error);
}

TEST_F(NodeStoreTest, ConcurrentAllocationYieldsDistinctSlots) {
    auto s = create();
    constexpr unsigned threads = 4;
    constexpr unsigned per_thread = 300;
    std::vector<std::vector<node_line*>> got(threads);
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            std::vector<node_line*> held;
            for (unsigned i = 0; i < per_thread; ++i) {
                auto* n = s.allocate();
                std::memset(n, static_cast<int>(t + 1), sizeof(node_line));
                held.push_back(n);
                if (i % 5 == 4) {  // give some back, to this thread's list or the shared depot
                    auto* back = held[held.size() / 2];
                    held.erase(held.begin() + static_cast<std::ptrdiff_t>(held.size() / 2));
                    if (i % 10 == 4) {
                        s.free(back);
                    } else {
                        const std::vector<node_line*> one{back};
                        s.add_free(one);
                    }
                }
            }
            got[t] = std::move(held);
        });
    for (auto& w : workers) w.join();
    std::set<node_line*> all;
    for (unsigned t = 0; t < threads; ++t)
        for (auto* n : got[t]) {
            EXPECT_TRUE(all.insert(n).second) << "a slot handed out twice";
            EXPECT_EQ(static_cast<int>(n->bytes[0]), static_cast<int>(t + 1)) << "a slot written by two threads";
            EXPECT_EQ(s.node_at(s.pool_offset_of(n)), n);
        }
    EXPECT_EQ(all.size(), threads * (per_thread - per_thread / 5));
    EXPECT_EQ(node_store::validate(*pool_, *heap_, anchor()).size(), s.areas().size() + 1);
    EXPECT_EQ(s.capacity(), s.areas().size() * slots_per_area);
}

TEST_F(NodeStoreTest, ThreadsSharingAListLinkTheirAreasInTurn) {
    // More threads alive at once than there are lists: ids i and i + 64 share list i, so
    // their growths serialise on its lock and chain their areas on one list.
    auto s = create();
    constexpr unsigned threads = ferrite::sets::area_list_count + 6;
    std::atomic<unsigned> ready{0};
    std::vector<std::vector<node_line*>> got(threads);
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            ferrite::sync::this_thread_id();  // taken while every worker is alive: distinct
            ready.fetch_add(1);
            while (ready.load() < threads) std::this_thread::yield();
            for (std::uint32_t i = 0; i < slots_per_area + 1; ++i) got[t].push_back(s.allocate());
        });
    for (auto& w : workers) w.join();
    std::set<node_line*> all;
    for (const auto& v : got) all.insert(v.begin(), v.end());
    EXPECT_EQ(all.size(), std::size_t{threads} * (slots_per_area + 1));
    EXPECT_EQ(s.areas().size(), 2 * std::size_t{threads});
    const auto owned = node_store::validate(*pool_, *heap_, anchor());
    EXPECT_EQ(owned.size(), 2 * std::size_t{threads} + 1);
    unsigned longer = 0;
    for (unsigned i = 0; i < ferrite::sets::area_list_count; ++i) {
        unsigned n = 0;
        for (auto off = header().heads[i]; off != 0; off = area_at(off).next) ++n;
        if (n > 2) ++longer;
    }
    EXPECT_GE(longer, 1u) << "no list holds the areas of two threads";
}

}  // namespace
