// Property test: random allocate / confirm / deallocate / confirm sequences against a
// reference buddy model. After every step the heap's free blocks are exactly the model's.
#include <map>
#include <random>
#include <set>

#include "ferrite/error.hpp"
#include "heap_test_support.hpp"

namespace {

using ferrite::alloc::block_state;
using ferrite::alloc::buddy_heap;
using namespace ferrite_test;

// The reference: free blocks as (arena offset -> order), split and merged by the textbook rules.
class buddy_model {
public:
    explicit buddy_model(const ferrite::alloc::heap_geometry& g) : g_(g) {
        std::uint64_t off = 0;
        for (unsigned k = static_cast<unsigned>(g.max_order) + 1; k-- > ferrite::alloc::min_order;)
            if (g.arena_size & (std::uint64_t{1} << k)) {
                free_[off] = k;
                off += std::uint64_t{1} << k;
            }
    }

    // The heap returned block `off` (arena-relative) for order k: it must come from the
    // smallest non-empty order >= k; split the model's block around it.
    ::testing::AssertionResult allocated(std::uint64_t off, unsigned k) {
        unsigned best = 64;
        for (const auto& [o, ord] : free_)
            if (ord >= k && ord < best) best = ord;
        auto it = free_.upper_bound(off);
        if (it == free_.begin()) return ::testing::AssertionFailure() << "block " << off << " was not free";
        --it;
        const auto [start, j] = *it;
        if (off >= start + (std::uint64_t{1} << j))
            return ::testing::AssertionFailure() << "block " << off << " was not free";
        if (j != best)
            return ::testing::AssertionFailure() << "took a block of order " << j << " while order " << best << " had one";
        free_.erase(it);
        auto cur = start;
        for (unsigned m = j; m-- > k;) {
            const auto half = std::uint64_t{1} << m;
            if (off >= cur + half) {
                free_[cur] = m;
                cur += half;
            } else {
                free_[cur + half] = m;
            }
        }
        if (cur != off) return ::testing::AssertionFailure() << "block " << off << " is not aligned to order " << k;
        return ::testing::AssertionSuccess();
    }

    void freed(std::uint64_t off, unsigned k) {
        while (k < g_.max_order) {
            const auto buddy = off ^ (std::uint64_t{1} << k);
            if (buddy + (std::uint64_t{1} << k) > g_.arena_size) break;
            const auto it = free_.find(buddy);
            if (it == free_.end() || it->second != k) break;
            free_.erase(it);
            off = std::min(off, buddy);
            ++k;
        }
        free_[off] = k;
    }

    bool has_block_of_at_least(unsigned k) const {
        for (const auto& [o, ord] : free_)
            if (ord >= k) return true;
        return false;
    }
    const std::map<std::uint64_t, unsigned>& free_blocks() const { return free_; }

private:
    ferrite::alloc::heap_geometry g_;
    std::map<std::uint64_t, unsigned> free_;
};

std::map<std::uint64_t, unsigned> heap_free_blocks(const buddy_heap& h) {
    std::map<std::uint64_t, unsigned> out;
    for (const auto& b : h.blocks())
        if (b.state == block_state::free) out[b.offset - h.geometry().arena_offset] = b.order;
    return out;
}

unsigned order_of(std::size_t bytes) {
    unsigned k = 6;
    while ((std::size_t{1} << k) < bytes) ++k;
    return k;
}

class HeapProperty : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(HeapProperty, FreeBlocksAgreeExactlyWithAReferenceBuddyModel) {
    const auto seed = GetParam();
    std::mt19937_64 rng(seed);
    // An arena that is not a power of two, so the initial decomposition has several blocks.
    region mem(300 * 1024 + 4096 * (seed % 5));
    auto heap = buddy_heap::create_in(mem.data(), mem.size() - 64 * (seed % 3), {.confirm_slots = 8});
    buddy_model model(heap.geometry());
    const auto arena = heap.geometry().arena_offset;

    struct held {
        void* p;
        unsigned order;
        bool confirmed;
        bool deallocating;
    };
    std::vector<held> live;
    std::uint64_t pending = 0, ooms = 0;
    for (int step = 0; step < 4000; ++step) {
        const auto r = rng() % 100;
        if (r < 45 || live.empty()) {
            const auto bytes = 1 + rng() % (std::size_t{64} << (rng() % 12));
            const auto k = order_of(bytes);
            if (pending >= 8) continue;  // table full: covered by the bad-input test
            try {
                void* p = heap.allocate(bytes);
                ASSERT_TRUE(model.allocated(heap.offset_of(p) - arena, k)) << "step " << step;
                ASSERT_EQ(heap.block_size(p), std::size_t{1} << k);
                ASSERT_EQ(heap.state(p), block_state::allocation_pending);
                live.push_back({p, k, false, false});
                ++pending;
            } catch (const ferrite::out_of_memory&) {
                ++ooms;
                ASSERT_FALSE(model.has_block_of_at_least(k)) << "out_of_memory although a block was free";
            }
        } else {
            auto i = rng() % live.size();
            auto& b = live[i];
            if (!b.confirmed) {
                heap.confirm_allocation(b.p);
                b.confirmed = true;
                --pending;
            } else if (!b.deallocating) {
                if (pending >= 8) continue;
                heap.deallocate(b.p);
                ASSERT_EQ(heap.state(b.p), block_state::deallocation_pending);
                b.deallocating = true;
                ++pending;
            } else {
                heap.confirm_deallocation(b.p);
                model.freed(heap.offset_of(b.p) - arena, b.order);
                --pending;
                live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
            }
        }
        ASSERT_EQ(heap_free_blocks(heap), model.free_blocks()) << "step " << step;
        if (step % 97 == 0) {
            ASSERT_EQ(heap.check(), std::vector<std::string>{}) << "step " << step;
        }
    }
    EXPECT_GT(ooms + live.size(), 0u);
    // Free everything: the heap returns to its initial decomposition.
    for (auto& b : live) {  // first settle what is pending, then free the rest
        if (!b.confirmed) heap.confirm_allocation(b.p);
        if (b.deallocating) {
            heap.confirm_deallocation(b.p);
            model.freed(heap.offset_of(b.p) - arena, b.order);
        }
    }
    for (auto& b : live) {
        if (b.deallocating) continue;
        heap.deallocate(b.p);
        heap.confirm_deallocation(b.p);
        model.freed(heap.offset_of(b.p) - arena, b.order);
    }
    EXPECT_EQ(heap_free_blocks(heap), model.free_blocks());
    EXPECT_EQ(buddy_model(heap.geometry()).free_blocks(), model.free_blocks());
    EXPECT_EQ(heap.check(), std::vector<std::string>{});
    const auto u = heap.usage();
    EXPECT_EQ(u.bytes_free, u.arena_bytes);
    EXPECT_EQ(u.pending_allocations + u.pending_deallocations, 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, HeapProperty, ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8));

TEST(HeapUsage, ReportsPerOrderCountsAndFragmentation) {
    region mem(64 * 1024 + 8192);
    auto heap = buddy_heap::create_in(mem.data(), mem.size());
    const auto before = heap.usage();
    EXPECT_EQ(before.bytes_free, before.arena_bytes);
    EXPECT_EQ(before.bytes_used, 0u);
    void* a = heap.allocate(64);
    heap.confirm_allocation(a);
    const auto u = heap.usage();
    EXPECT_EQ(u.live_blocks[6], 1u);
    EXPECT_EQ(u.bytes_used, 64u);
    EXPECT_EQ(u.bytes_free, u.arena_bytes - 64);
    EXPECT_GT(u.fragmentation, 0.0);
    EXPECT_LT(u.fragmentation, 1.0);
    EXPECT_NEAR(u.fragmentation, 1.0 - static_cast<double>(u.largest_free) / static_cast<double>(u.bytes_free), 1e-12);
    std::uint64_t free_bytes = 0;
    for (unsigned k = 0; k < u.free_blocks.size(); ++k) free_bytes += u.free_blocks[k] << k;
    EXPECT_EQ(free_bytes, u.bytes_free);
}

}  // namespace
