// Damaged media: every value the heap reads from its region is validated before it is used
// as a size, an offset or a pointer. One test per kind of damage; each asserts heap_error
// (kind damaged_heap, the message naming the place and "restore the pool from a copy") and
// that not one byte of the region changed. The damage is done either before open (what open
// and recover() check) or to a running heap (what a hand-out, a release or an observer
// checks when it reaches the damaged word).
#include <algorithm>
#include <cstddef>
#include <random>

#include "ferrite/error.hpp"
#include "heap_test_support.hpp"

namespace {

using ferrite::alloc::block_state;
using ferrite::alloc::buddy_heap;
using ferrite::alloc::free_tag;
using ferrite::alloc::live_tag;
using ferrite::alloc::make_slot;
using ferrite::alloc::slot_kind;
using namespace ferrite_test;

constexpr std::uint8_t free_at(unsigned k) { return static_cast<std::uint8_t>(free_tag | k); }
constexpr std::uint8_t live_at(unsigned k) { return static_cast<std::uint8_t>(live_tag | k); }

class HeapDamage : public ::testing::Test {
protected:
    HeapDamage()
        : mem_(64 * 1024), heap_(buddy_heap::create_in(mem_.data(), mem_.size(), {.confirm_slots = 8})),
          raw_{mem_.data(), heap_.geometry()} {
        // Buddy pairs of orders 6, 8 and 10, allocated in a row (a split keeps the lower
        // half, so the pairs are buddies); the lower half of each freed, the upper kept live:
        // lists 6, 8 and 10 hold blocks that cannot merge.
        for (const unsigned k : {6u, 8u, 10u}) {
            std::vector<void*> got;
            for (int i = 0; i < 12; ++i) {
                void* p = heap_.allocate(std::size_t{1} << k);
                heap_.confirm_allocation(p);
                got.push_back(p);
            }
            for (void* p : got) {
                const auto rel = off(p) - raw_.g.arena_offset;
                const auto buddy = off(p) + (std::uint64_t{1} << k);
                const bool pair = std::any_of(got.begin(), got.end(), [&](void* q) { return off(q) == buddy; });
                if ((rel >> k & 1) == 0 && pair && k == 6 && !pair_lo_) {
                    pair_lo_ = p;  // a pair of live 64-byte buddies, both kept
                    pair_hi_ = ptr(buddy);
                } else if ((rel >> k & 1) == 0 && pair) {
                    heap_.deallocate(p);
                    heap_.confirm_deallocation(p);
                    freed_[k].push_back(off(p));
                    live_[k].push_back(buddy);
                }
            }
        }
        EXPECT_NE(pair_lo_, nullptr);
        for (const unsigned k : {6u, 8u, 10u}) EXPECT_GE(freed_[k].size(), 3u) << "order " << k;
        EXPECT_EQ(heap_.check(), std::vector<std::string>{});
    }

    std::uint64_t off(const void* p) const { return heap_.offset_of(p); }
    void* ptr(std::uint64_t o) const { return heap_.at(o); }
    // A free block on list k that has both a prev and a next, and whose buddy is live.
    std::uint64_t middle_of_list(unsigned k) const {
        for (const auto f : freed_[k])
            if (raw_.links(f).prev != 0 && raw_.links(f).next != 0) return f;
        ADD_FAILURE() << "no free block of order " << k << " in the middle of its list";
        return freed_[k].front();
    }
    void open_fresh() const { (void)buddy_heap::open_in(mem_.data(), mem_.size()); }

    // f must throw heap_error mentioning `needle`, and leave every byte of the region as it was.
    template <class F>
    void expect_damaged(F&& f, const std::string& needle) {
        const auto bytes = mem_.copy();
        try {
            f();
            ADD_FAILURE() << "no heap_error; wanted one mentioning '" << needle << "'";
        } catch (const ferrite::heap_error& e) {
            const std::string what = e.what();
            EXPECT_EQ(e.kind(), ferrite::pool_errc::damaged_heap);
            EXPECT_EQ(e.region(), "heap");
            EXPECT_NE(what.find(needle), std::string::npos) << what;
            EXPECT_NE(what.find("restore the pool from a copy"), std::string::npos) << what;
        }
        EXPECT_TRUE(mem_.copy() == bytes) << "the region's bytes changed";
    }
    // Damage done before open is found by open, and, done after open, by recover().
    template <class Damage>
    void expect_open_and_recover_reject(Damage&& damage, const std::string& needle) {
        const auto clean = mem_.copy();
        damage();
        expect_damaged([&] { open_fresh(); }, needle);
        std::memcpy(mem_.data(), clean.data(), clean.size());
        auto h = buddy_heap::open_in(mem_.data(), mem_.size());
        damage();
        expect_damaged([&] { h.recover(); }, needle);
        std::memcpy(mem_.data(), clean.data(), clean.size());
    }
    // An armed undo log (half 0) with these {offset, old value} entries.
    void arm(const std::vector<ferrite::alloc::log_entry>& entries, std::uint64_t kind = 1) {
        for (std::size_t i = 0; i < entries.size(); ++i) raw_.entry(0, i) = entries[i];
        raw_.tag() = kind | entries.size() << 8;
    }

    region mem_;
    buddy_heap heap_;
    raw_heap raw_;
    std::vector<std::uint64_t> freed_[11], live_[11];
    void* pair_lo_ = nullptr;
    void* pair_hi_ = nullptr;
};

// ---- free-list heads (open, and the hand-out) ------------------------------------------

TEST_F(HeapDamage, HeadPointsAtALiveBlock) {
    raw_.head(6) = live_[6][0];  // in the arena and aligned: only the map tells
    expect_damaged([&] { heap_.allocate(64); }, "free list 6: the block being unlinked is offset");
    expect_damaged([&] { heap_.allocate(64); }, "a live block of order 6");
    expect_damaged([&] { open_fresh(); }, "a live block of order 6");
}

TEST_F(HeapDamage, HeadPointsIntoTheMiddleOfABlock) {
    raw_.head(8) = freed_[8][0] + 64;
    expect_damaged([&] { heap_.allocate(256); }, "not aligned to the list's block size (256 bytes)");
    expect_damaged([&] { open_fresh(); }, "not aligned");
    raw_.head(6) = live_[8][0] + 64;  // 64-byte aligned, inside a live block
    expect_damaged([&] { heap_.allocate(64); }, "inside another block");
}

TEST_F(HeapDamage, HeadOutsideTheArena) {
    for (const std::uint64_t bad : {raw_.g.region_size + 64, std::uint64_t{64}, raw_.g.map_offset,
                                    raw_.g.slots_offset, ~std::uint64_t{63}}) {
        raw_.head(6) = bad;
        expect_damaged([&] { heap_.allocate(64); }, "outside the arena");
        expect_damaged([&] { open_fresh(); }, "outside the arena");
    }
}

TEST_F(HeapDamage, HeadOfAnOrderTheHeapDoesNotHave) {
    const auto arena = raw_.g.arena_offset;
    raw_.head(static_cast<unsigned>(raw_.g.max_order) + 1) = arena;
    expect_damaged([&] { open_fresh(); }, "has no blocks of order " + std::to_string(raw_.g.max_order + 1));
    raw_.head(static_cast<unsigned>(raw_.g.max_order) + 1) = 0;
    raw_.head(3) = arena;
    expect_damaged([&] { open_fresh(); }, "free list 3 has head");
}

TEST_F(HeapDamage, HeadHasAPrev) {
    raw_.links(raw_.head(6)).prev = middle_of_list(6);
    expect_damaged([&] { heap_.allocate(64); }, "exactly the head has no prev");
    expect_damaged([&] { open_fresh(); }, "(a list's head has none)");
}

TEST_F(HeapDamage, HeadsMapByteIsNotFreeAtItsOrder) {
    const auto h = raw_.head(6);
    for (const std::uint8_t bad : {live_at(6), free_at(7), free_at(63), std::uint8_t{0xc6}, std::uint8_t{0}}) {
        raw_.map(h) = bad;
        expect_damaged([&] { heap_.allocate(64); }, "not a free block of order 6");
        expect_damaged([&] { open_fresh(); }, "not a free block of order 6");
    }
}

// ---- links inside a list (the hand-out) -----------------------------------------------

TEST_F(HeapDamage, NextPointsAtALiveBlock) {
    raw_.links(raw_.head(6)).next = live_[6][1];
    expect_damaged([&] { heap_.allocate(64); }, "the next of");
    expect_damaged([&] { heap_.allocate(64); }, "a live block of order 6");
}

TEST_F(HeapDamage, NextAndPrevNotMirrored) {
    const auto second = raw_.links(raw_.head(6)).next;
    ASSERT_NE(second, 0u);
    raw_.links(second).prev = 0;
    expect_damaged([&] { heap_.allocate(64); }, "whose prev is 0x0 (links not mirrored)");
    raw_.links(second).prev = raw_.head(8);  // names another list's head
    expect_damaged([&] { heap_.allocate(64); }, "(links not mirrored)");
}

TEST_F(HeapDamage, CycleInAFreeList) {
    const auto h = raw_.head(6);
    const auto second = raw_.links(h).next;
    raw_.links(h).next = h;
    expect_damaged([&] { heap_.allocate(64); }, "(a cycle)");
    raw_.links(h).next = second;
    ASSERT_EQ(heap_.check(), std::vector<std::string>{});
    // A longer one, mirrored everywhere but at the wrap (the last block's next is the head):
    // the list's blocks are handed out one by one, and the wrap is caught before the first
    // block, live by then, comes round again.
    std::uint64_t last = h;
    while (raw_.links(last).next != 0) last = raw_.links(last).next;
    raw_.links(last).next = h;
    std::vector<void*> got;
    for (int i = 0;; ++i) {
        ASSERT_LT(i, 64) << "handed out more blocks than list 6 holds";
        const auto before = mem_.copy();
        try {
            got.push_back(heap_.allocate(64));
        } catch (const ferrite::heap_error& e) {
            EXPECT_NE(std::string(e.what()).find("a live block of order 6"), std::string::npos) << e.what();
            EXPECT_TRUE(mem_.copy() == before);
            break;
        }
        EXPECT_EQ(std::count(got.begin(), got.end(), got.back()), 1) << "a block handed out twice";
    }
    EXPECT_GE(got.size(), 3u);
}

TEST_F(HeapDamage, NoBlockMayStartWhereTheSplitWrites) {
    // allocate(2^(j-1)) with list j-1 empty takes the head of list j and splits it at +2^(j-1).
    unsigned j = 7;
    while (j <= raw_.g.max_order && !(raw_.head(j) != 0 && raw_.head(j - 1) == 0)) ++j;
    ASSERT_LE(j, raw_.g.max_order) << "no non-empty list above an empty one";
    const auto half = std::uint64_t{1} << (j - 1);
    raw_.map(raw_.head(j) + half) = live_at(j - 1);
    expect_damaged([&] { heap_.allocate(half); }, "starts inside it at");
}

// ---- the released block and its buddies (confirm_deallocation) --------------------------

TEST_F(HeapDamage, MapByteWithAnOrderBeyondTheMax) {
    void* b = ptr(live_[6][0]);
    heap_.deallocate(b);
    raw_.map(live_[6][0]) = live_at(63);
    expect_damaged([&] { heap_.confirm_deallocation(b); }, "not a live block of an order this heap has");
    expect_damaged([&] { (void)heap_.block_size(b); }, "not a block of this heap");
    expect_damaged([&] { (void)heap_.state(b); }, "not a block of this heap");
    void* c = ptr(live_[8][0]);
    raw_.map(live_[8][0]) = 0xc8;  // free and live at once
    expect_damaged([&] { heap_.deallocate(c); }, "damaged map byte 0xc8");
    expect_damaged([&] { heap_.confirm_allocation(c); }, "damaged map byte 0xc8");
}

TEST_F(HeapDamage, MapByteWhoseOrderGrew) {
    // pair_lo_ is aligned to 128 and its buddy is live: order 7 would free the buddy too.
    heap_.deallocate(pair_lo_);
    raw_.map(off(pair_lo_)) = live_at(7);
    expect_damaged([&] { heap_.confirm_deallocation(pair_lo_); }, "starts inside it at");
    expect_damaged([&] { (void)heap_.block_size(pair_lo_); }, "a live block of order 6 starts inside it");
}

TEST_F(HeapDamage, BuddyBeingMergedHasDamagedLinks) {
    const auto a = middle_of_list(6);  // free, with prev and next; its buddy is live
    const auto b = a + 64;
    ASSERT_EQ(heap_.state(ptr(b)), block_state::live);
    heap_.deallocate(ptr(b));
    const auto clean = mem_.copy();
    const auto restore = [&] { std::memcpy(mem_.data(), clean.data(), clean.size()); };
    raw_.links(a).prev = live_[6][1];
    expect_damaged([&] { heap_.confirm_deallocation(ptr(b)); }, "the prev of");
    restore();
    raw_.links(a).next = live_[6][1];
    expect_damaged([&] { heap_.confirm_deallocation(ptr(b)); }, "the next of");
    restore();
    raw_.links(raw_.links(a).next).prev = 0;
    expect_damaged([&] { heap_.confirm_deallocation(ptr(b)); }, "(links not mirrored)");
    restore();
    raw_.links(raw_.links(a).prev).next = raw_.head(6);
    expect_damaged([&] { heap_.confirm_deallocation(ptr(b)); }, "(links not mirrored)");
    restore();
    raw_.links(a).next = a;
    expect_damaged([&] { heap_.confirm_deallocation(ptr(b)); }, "(a cycle)");
    restore();
    raw_.links(a).prev = 0;
    expect_damaged([&] { heap_.confirm_deallocation(ptr(b)); }, "exactly the head has no prev");
    restore();
    heap_.confirm_deallocation(ptr(b));  // undamaged: merges
    EXPECT_EQ(heap_.state(ptr(a)), block_state::free);
    EXPECT_EQ(heap_.check(), std::vector<std::string>{});
}

TEST_F(HeapDamage, LiveBuddyMarkedFree) {
    // pair_lo_ is live; its map byte says free. Releasing its buddy must not merge it (and
    // so hand it out again later): its "links" are the client's data.
    heap_.deallocate(pair_hi_);
    raw_.map(off(pair_lo_)) = free_at(6);
    std::memset(pair_lo_, 0, 64);
    expect_damaged([&] { heap_.confirm_deallocation(pair_hi_); }, "exactly the head has no prev");
    std::mt19937_64 rng(7);
    for (int i = 0; i < 20; ++i) {
        for (std::size_t w = 0; w < 8; ++w) static_cast<std::uint64_t*>(pair_lo_)[w] = rng();
        expect_damaged([&] { heap_.confirm_deallocation(pair_hi_); }, "free list 6");
    }
}

TEST_F(HeapDamage, HeadTheReleasedBlockIsPushedOn) {
    const auto b = live_[6][0];  // its buddy is free: it merges at least once
    const auto& g = raw_.g;
    unsigned m = 6;
    for (auto cur = b;; ++m) {  // the order the merges end at
        const auto rel = (cur - g.arena_offset) ^ (std::uint64_t{1} << m);
        if (m == g.max_order || rel + (std::uint64_t{1} << m) > g.arena_size ||
            (m > 6 && raw_.map(g.arena_offset + rel) != free_at(m)))
            break;
        cur = std::min(cur, g.arena_offset + rel);
    }
    ASSERT_GT(m, 6u);
    heap_.deallocate(ptr(b));
    const auto needle = "free list " + std::to_string(m) + ": its head is offset";
    raw_.head(m) = live_[8][0];
    expect_damaged([&] { heap_.confirm_deallocation(ptr(b)); }, needle);
    raw_.head(m) = live_[8][0] + 128;  // inside a live block
    expect_damaged([&] { heap_.confirm_deallocation(ptr(b)); }, needle);
}

TEST_F(HeapDamage, FinishRecoveryValidatesEveryReleaseBeforeTheFirst) {
    // Two unconfirmed allocations when the "crash" comes: a 64-byte block (its release goes
    // to list 6) in slot 0, a 1 KiB one (to list 10) in slot 1. List 10's head is damaged
    // after recover(): the second release would fail; the first must not have happened.
    void* small = heap_.allocate(64);
    void* big = heap_.allocate(1024);
    auto h = buddy_heap::open_in(mem_.data(), mem_.size());
    h.recover();
    raw_.head(10) = live_[10][0];
    expect_damaged([&] { h.finish_recovery(); }, "free list 10");
    EXPECT_EQ(h.state(small), block_state::allocation_pending);
    EXPECT_EQ(h.state(big), block_state::allocation_pending);
}

// ---- confirm slots (open, recover) ------------------------------------------------------

TEST_F(HeapDamage, SlotNamingAFreeBlock) {
    expect_open_and_recover_reject([&] { raw_.slot(1) = make_slot(freed_[6][0], slot_kind::allocation); },
                                   "a free block of order 6 (a pending block is a live one)");
}

TEST_F(HeapDamage, SlotNamingNoBlockStart) {
    expect_open_and_recover_reject([&] { raw_.slot(1) = make_slot(live_[8][0] + 64, slot_kind::deallocation); },
                                   "inside another block");
    expect_open_and_recover_reject([&] { raw_.slot(1) = make_slot(raw_.g.arena_offset + 8, slot_kind::allocation); },
                                   "names no block start inside the arena");
    expect_open_and_recover_reject([&] { raw_.slot(1) = make_slot(raw_.g.region_size, slot_kind::allocation); },
                                   "names no block start inside the arena");
    expect_open_and_recover_reject([&] { raw_.slot(1) = make_slot(64, slot_kind::allocation); },
                                   "names no block start inside the arena");
}

TEST_F(HeapDamage, SlotOfAnUnknownKind) {
    expect_open_and_recover_reject([&] { raw_.slot(1) = live_[6][0] | 3; }, "neither allocation (1) nor deallocation (2)");
    expect_open_and_recover_reject([&] { raw_.slot(1) = live_[6][0]; }, "neither allocation (1) nor deallocation (2)");
}

TEST_F(HeapDamage, TwoSlotsNamingOneBlock) {
    expect_open_and_recover_reject(
        [&] {
            raw_.slot(2) = make_slot(live_[6][0], slot_kind::allocation);
            raw_.slot(5) = make_slot(live_[6][0], slot_kind::deallocation);
        },
        "confirm slots 2 and 5 both name the block");
}

// ---- the undo log (open, recover) -------------------------------------------------------

TEST_F(HeapDamage, OpenJudgesTheStateTheRollbackLeaves) {
    // The interrupted operation left head 6 naming a live block; its rollback restores it.
    const auto h6 = raw_.head(6);
    arm({{raw_.offset_of(raw_.head(6)), h6}});
    raw_.head(6) = live_[8][0];
    auto h = buddy_heap::open_in(mem_.data(), mem_.size());
    h.recover();
    EXPECT_EQ(raw_.head(6), h6);
    h.finish_recovery();
    EXPECT_EQ(h.check(), std::vector<std::string>{});
}

TEST_F(HeapDamage, LogControlWordOutOfRange) {
    arm({{raw_.offset_of(raw_.head(6)), raw_.head(6)}});
    const auto cap = raw_.g.log_capacity;
    expect_open_and_recover_reject([&] { raw_.tag() = 1 | (cap + 1) << 8; }, "control word");
    expect_open_and_recover_reject([&] { raw_.tag() = 3 | 1 << 8; }, "control word");
    expect_open_and_recover_reject([&] { raw_.tag() = 1; }, "control word");
    expect_open_and_recover_reject([&] { raw_.tag() = ~std::uint64_t{0}; }, "control word");
}

TEST_F(HeapDamage, LogEntryOutOfRange) {
    const auto head6 = raw_.offset_of(raw_.head(6));
    arm({{head6, raw_.head(6)}, {raw_.offset_of(raw_.slot(0)), raw_.slot(0)}});
    for (const std::uint64_t bad :
         {raw_.g.region_size, raw_.g.region_size - 8, raw_.g.log_offset, raw_.g.log_offset + 64 + 16,
          head6 + 4, std::uint64_t{8}, raw_.offset_of(raw_.head(static_cast<unsigned>(raw_.g.max_order) + 1)),
          raw_.g.arena_offset + 16, raw_.g.arena_offset + raw_.g.arena_size, ~std::uint64_t{7}}) {
        expect_open_and_recover_reject([&] { raw_.entry(0, 1).offset = bad; }, "which no heap operation writes");
    }
    expect_open_and_recover_reject([&] { raw_.entry(0, 1).offset = head6; }, "both name offset");
}

TEST_F(HeapDamage, LogWhoseRollbackLeavesADamagedHeap) {
    arm({{raw_.offset_of(raw_.head(6)), raw_.head(6)}, {raw_.offset_of(raw_.slot(0)), raw_.slot(0)}});
    expect_open_and_recover_reject([&] { raw_.entry(0, 0).old = live_[6][0]; }, "a live block of order 6");
    expect_open_and_recover_reject([&] { raw_.entry(0, 1).old = make_slot(freed_[8][0], slot_kind::allocation); },
                                   "confirm slot 0");
}

// ---- check() ---------------------------------------------------------------------------

TEST_F(HeapDamage, CheckEndsOnArbitraryBytes) {
    const auto& g = raw_.g;
    const auto header_end = offsetof(ferrite::alloc::heap_header, free_heads);
    std::mt19937_64 rng(2024);
    const auto blocks = g.arena_size / 64;
    for (int round = 0; round < 60; ++round) {
        if (round % 2 == 0) {
            // Uniform garbage after the identity.
            for (auto o = header_end; o + 8 <= g.region_size; o += 8)
                *reinterpret_cast<std::uint64_t*>(mem_.data() + o) = rng();
        } else {
            // Plausible garbage: heads and links naming granules of the arena (cycles,
            // shared tails), map bytes that are tags of random orders.
            const auto some_block = [&] { return g.arena_offset + rng() % blocks * 64; };
            for (unsigned k = 0; k < 64; ++k) raw_.head(k) = rng() % 4 ? some_block() : 0;
            for (std::uint64_t b = 0; b < blocks; ++b) {
                const auto o = g.arena_offset + b * 64;
                raw_.links(o).next = rng() % 8 ? some_block() : 0;
                raw_.links(o).prev = rng() % 8 ? some_block() : 0;
                const auto k = static_cast<unsigned>(6 + rng() % 12);
                raw_.map(o) = rng() % 3 == 0 ? 0 : static_cast<std::uint8_t>((rng() % 2 ? free_tag : live_tag) | k);
            }
            for (std::uint64_t i = 0; i < g.slot_count; ++i) raw_.slot(i) = rng() % 2 ? some_block() | (rng() % 4) : 0;
        }
        const auto problems = heap_.check();
        EXPECT_FALSE(problems.empty());
        EXPECT_LE(problems.size(), 100u);
        (void)heap_.usage();
        (void)heap_.blocks();
    }
}

TEST_F(HeapDamage, CheckReportsACycleOnce) {
    std::uint64_t last = raw_.head(6);
    while (raw_.links(last).next != 0) last = raw_.links(last).next;
    raw_.links(last).next = raw_.head(6);
    const auto problems = heap_.check();
    const auto text = join(problems);
    EXPECT_NE(text.find("is on a free list twice"), std::string::npos) << text;
    EXPECT_LE(problems.size(), 3u) << text;
}

}  // namespace
