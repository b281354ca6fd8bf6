// Bad input: every case throws a clear, std-derived exception and leaves the heap unchanged
// (its bytes, its check(), its usage and its block list).
#include <new>

#include "ferrite/error.hpp"
#include "heap_test_support.hpp"

namespace {

using ferrite::alloc::block_state;
using ferrite::alloc::buddy_heap;
using namespace ferrite_test;

class HeapBadInput : public ::testing::Test {
protected:
    HeapBadInput() : mem_(128 * 1024), heap_(buddy_heap::create_in(mem_.data(), mem_.size(), {.confirm_slots = 4})) {
        live_ = heap_.allocate(100);
        heap_.confirm_allocation(live_);
        pending_ = heap_.allocate(1000);
    }

    // Runs f, which must throw E with `needle` in its message, and checks nothing changed.
    template <class E, class F>
    void expect_rejected(F&& f, const std::string& needle) {
        const auto bytes = mem_.copy();
        const auto before = snapshot(heap_);
        try {
            f();
            ADD_FAILURE() << "no exception; wanted one mentioning '" << needle << "'";
        } catch (const E& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
        EXPECT_EQ(snapshot(heap_), before);
        EXPECT_EQ(mem_.copy(), bytes) << "the heap's bytes changed";
        EXPECT_EQ(heap_.check(), std::vector<std::string>{});
    }

    region mem_;
    buddy_heap heap_;
    void* live_ = nullptr;
    void* pending_ = nullptr;
};

TEST_F(HeapBadInput, SizeZero) {
    expect_rejected<ferrite::usage_error>([&] { heap_.allocate(0); }, "at least 1 byte");
}

TEST_F(HeapBadInput, SizeBeyondTheLargestOrder) {
    expect_rejected<ferrite::usage_error>([&] { heap_.allocate(heap_.max_allocation() + 1); }, "largest block");
}

TEST_F(HeapBadInput, HeapExhaustedIsABadAlloc) {
    std::vector<void*> all;
    try {
        for (;;) {
            void* p = heap_.allocate(heap_.max_allocation() / 4);
            heap_.confirm_allocation(p);
            all.push_back(p);
        }
    } catch (const ferrite::out_of_memory&) {
    }
    ASSERT_FALSE(all.empty());
    expect_rejected<std::bad_alloc>([&] { heap_.allocate(heap_.max_allocation() / 4); }, "exhausted");
}

TEST_F(HeapBadInput, ConfirmTableFull) {
    std::vector<void*> unconfirmed;
    for (int i = 0; i < 3; ++i) unconfirmed.push_back(heap_.allocate(64));  // 4 slots, 1 used
    expect_rejected<ferrite::confirm_table_full>([&] { heap_.allocate(64); }, "confirm_allocation");
    expect_rejected<ferrite::confirm_table_full>([&] { heap_.deallocate(live_); }, "confirm slots");
    heap_.confirm_allocation(unconfirmed[0]);
    EXPECT_NO_THROW(heap_.deallocate(live_));
}

// confirm_replacement(fresh, old) reuses fresh's slot for old: a full table cannot stop it.
TEST_F(HeapBadInput, ConfirmReplacementNeedsNoFreeSlot) {
    std::vector<void*> unconfirmed;
    for (int i = 0; i < 2; ++i) unconfirmed.push_back(heap_.allocate(64));
    void* fresh = heap_.allocate(200);  // the last of the 4 slots
    expect_rejected<ferrite::confirm_table_full>([&] { heap_.deallocate(live_); }, "confirm slots");
    heap_.confirm_replacement(fresh, live_);
    EXPECT_EQ(heap_.state(fresh), block_state::live);
    EXPECT_EQ(heap_.state(live_), block_state::deallocation_pending);
    EXPECT_EQ(heap_.usage().pending_allocations, 3u) << "pending_ and the two others; fresh confirmed";
    heap_.confirm_replacement(fresh, live_);  // repeated (as a recovery would): no-op
    EXPECT_EQ(heap_.usage().pending_deallocations, 1u);
    heap_.confirm_deallocation(live_);
    EXPECT_EQ(heap_.state(live_), block_state::free);
    EXPECT_EQ(heap_.check(), std::vector<std::string>{});
}

TEST_F(HeapBadInput, ConfirmReplacementRejectsBadBlocks) {
    void* fresh = heap_.allocate(64);
    int local = 0;
    expect_rejected<ferrite::usage_error>([&] { heap_.confirm_replacement(fresh, fresh); }, "replace itself");
    expect_rejected<ferrite::usage_error>([&] { heap_.confirm_replacement(fresh, &local); }, "not a live block");
    expect_rejected<ferrite::usage_error>([&] { heap_.confirm_replacement(&local, live_); }, "not a block");
    void* gone = heap_.allocate(64);
    heap_.confirm_allocation(gone);
    heap_.deallocate(gone);
    heap_.confirm_deallocation(gone);
    expect_rejected<ferrite::usage_error>([&] { heap_.confirm_replacement(fresh, gone); }, "double free");
    expect_rejected<ferrite::usage_error>([&] { heap_.confirm_replacement(gone, live_); }, "free");
}

TEST_F(HeapBadInput, DoubleFree) {
    void* p = heap_.allocate(64);
    heap_.confirm_allocation(p);
    heap_.deallocate(p);
    heap_.confirm_deallocation(p);
    expect_rejected<ferrite::usage_error>([&] { heap_.deallocate(p); }, "double free");
}

TEST_F(HeapBadInput, PointerIntoTheMiddleOfABlock) {
    expect_rejected<ferrite::usage_error>([&] { heap_.deallocate(static_cast<std::byte*>(live_) + 64); },
                                          "not a live block");
    expect_rejected<ferrite::usage_error>([&] { heap_.deallocate(static_cast<std::byte*>(live_) + 8); },
                                          "not a live block");
}

TEST_F(HeapBadInput, PointerFromElsewhere) {
    int local = 0;
    expect_rejected<ferrite::usage_error>([&] { heap_.deallocate(&local); }, "not a live block");
    expect_rejected<ferrite::usage_error>([&] { heap_.deallocate(nullptr); }, "not a live block");
    expect_rejected<ferrite::usage_error>([&] { heap_.deallocate(heap_.base()); }, "not a live block");
    expect_rejected<ferrite::usage_error>([&] { heap_.confirm_allocation(&local); }, "not a block");
    expect_rejected<ferrite::usage_error>([&] { heap_.confirm_deallocation(&local); }, "not a block");
}

TEST_F(HeapBadInput, ConfirmingAFreeBlock) {
    void* p = heap_.allocate(64);
    heap_.confirm_allocation(p);
    heap_.deallocate(p);
    heap_.confirm_deallocation(p);
    expect_rejected<ferrite::usage_error>([&] { heap_.confirm_allocation(p); }, "free");
}

TEST_F(HeapBadInput, FinishRecoveryBeforeRecover) {
    auto reopened = buddy_heap::open_in(mem_.data(), mem_.size());
    const auto bytes = mem_.copy();
    EXPECT_THROW(reopened.finish_recovery(), ferrite::usage_error);
    EXPECT_THROW(reopened.allocate(64), ferrite::usage_error);
    EXPECT_EQ(mem_.copy(), bytes);
}

TEST(HeapOpen, RejectsGarbageWithAClearError) {
    region mem(64 * 1024);
    try {
        (void)buddy_heap::open_in(mem.data(), mem.size());
        ADD_FAILURE() << "opened zeroes";
    } catch (const ferrite::heap_error& e) {
        EXPECT_NE(std::string(e.what()).find("no ferrite heap"), std::string::npos) << e.what();
    }
    for (std::size_t i = 0; i < mem.size(); ++i) mem.data()[i] = static_cast<std::byte>(i * 131 + 7);
    EXPECT_THROW((void)buddy_heap::open_in(mem.data(), mem.size()), ferrite::heap_error);
    EXPECT_THROW((void)buddy_heap::open_in(mem.data(), 16), ferrite::heap_error);
}

TEST(HeapOpen, RejectsADamagedHeader) {
    region mem(64 * 1024);
    { auto h = buddy_heap::create_in(mem.data(), mem.size()); }
    auto* geometry_word = reinterpret_cast<std::uint64_t*>(mem.data() + 16);
    *geometry_word += 64;
    try {
        (void)buddy_heap::open_in(mem.data(), mem.size());
        ADD_FAILURE() << "opened a damaged header";
    } catch (const ferrite::heap_error& e) {
        EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    }
    *geometry_word -= 64;
    EXPECT_NO_THROW((void)buddy_heap::open_in(mem.data(), mem.size()));
    EXPECT_THROW((void)buddy_heap::open_in(mem.data(), mem.size() / 2), ferrite::heap_error) << "truncated";
}

TEST(HeapCreate, RejectsRegionsTooSmallOrMisaligned) {
    region mem(64 * 1024);
    EXPECT_THROW((void)buddy_heap::create_in(mem.data(), 1024), ferrite::usage_error);
    EXPECT_THROW((void)buddy_heap::create_in(mem.data() + 8, 32 * 1024), ferrite::usage_error);
    EXPECT_THROW((void)buddy_heap::create_in(mem.data(), 32 * 1024, {.confirm_slots = 0}), ferrite::usage_error);
}

TEST(HeapCheck, ReportsDamage) {
    region mem(64 * 1024);
    auto h = buddy_heap::create_in(mem.data(), mem.size());
    void* p = h.allocate(64);
    h.confirm_allocation(p);
    ASSERT_EQ(h.check(), std::vector<std::string>{});
    // Break the map byte of the live block: it now looks free but is on no list.
    auto* map = reinterpret_cast<std::uint8_t*>(h.base() + h.geometry().map_offset);
    const auto gi = (h.offset_of(p) - h.geometry().arena_offset) / 64;
    const auto saved = map[gi];
    map[gi] = static_cast<std::uint8_t>(ferrite::alloc::free_tag | 6);
    const auto problems = h.check();
    ASSERT_FALSE(problems.empty());
    EXPECT_NE(join(problems).find("on no free list"), std::string::npos) << join(problems);
    map[gi] = saved;
    // Break a free-list back link.
    std::uint64_t head = 0;
    for (auto off : reinterpret_cast<ferrite::alloc::heap_header*>(h.base())->free_heads)
        if (off != 0) head = off;
    ASSERT_NE(head, 0u);
    reinterpret_cast<ferrite::alloc::free_links*>(h.base() + head)->prev = 64;
    EXPECT_NE(join(h.check()).find("has prev"), std::string::npos) << join(h.check());
}

}  // namespace
