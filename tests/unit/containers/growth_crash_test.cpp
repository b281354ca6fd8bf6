// Growth of ferrite::vector and ferrite::deque through the buddy heap's confirm protocol,
// cut at every persistence event of a growing push (crash images from the simulator, every
// queued write-back durable or not at random): recovery must give the contents before or
// after the push, a consistent heap with nothing pending, and a structure that works.
// Each case runs twice: on a roomy confirm table, and on one whose every other slot holds
// another client's unconfirmed block, so that the growth (and its recovery) must replace
// the old array without a free slot (heap confirm_replacement).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/deque.hpp"
#include "ferrite/containers/vector.hpp"
#include "ferrite/sim/session.hpp"
#include "ferrite/sim/site_registry.hpp"

namespace ferrite {
namespace {

using u64 = std::uint64_t;

// How to fill each structure to capacity 2, grow it, read it, and use it after recovery.
struct vector_case {
    using type = vector<u64, alloc::buddy_heap>;
    static void fill(type& v) { v.push_back(1), v.push_back(2); }
    static bool grow(type& v) { return v.push_back(3); }
    static std::vector<u64> contents(const type& v) {
        const auto view = v.unsynchronized_view();
        return {view.begin(), view.end()};
    }
    static bool works(type& v) { return v.push_back(0) && v.get(v.size() - 1) == 0u; }
};
struct deque_case {
    using type = deque<u64, alloc::buddy_heap>;
    static void fill(type& d) { d.push_back(2), d.push_front(1); }  // full and wrapped
    static bool grow(type& d) { return d.push_back(3); }
    static std::vector<u64> contents(const type& d) { return d.unsynchronized_contents(); }
    static bool works(type& d) { return d.push_front(0) && d.front() == 0u; }
};

template <class Case>
class GrowthCrash : public ::testing::Test {
protected:
    using structure = typename Case::type;
    static constexpr u64 heap_offset = 4096 + 64, heap_bytes = 192 * 1024;

    void SetUp() override {
        path_ = "/dev/shm/ferrite-growth-crash-test-" + std::to_string(::getpid());
        std::filesystem::remove(path_);
    }
    void TearDown() override {
        std::filesystem::remove(path_);
        std::filesystem::remove(path_ + "-image");
    }

    // Runs the growing push under a session; returns the crash images taken before each of
    // its events (4 per event, different random subsets of the queued write-backs).
    std::vector<std::vector<std::byte>> images_of_growth(pmem::pool& p, structure& s) {
        sim::site_registry sites;
        std::vector<std::vector<std::byte>> images;
        sim::session::options opts;
        sim::session* self = nullptr;
        opts.at_event = [&](u64 e) {
            for (u64 seed = 0; seed < 4; ++seed) {
                images.emplace_back();
                self->crash_image(seed * 7919 + e, images.back());
            }
        };
        sim::session session(p.base(), p.size(), 1, sites, std::move(opts));
        self = &session;
        sim::session::binding bind(&session, 0);
        EXPECT_TRUE(Case::grow(s));
        return images;
    }

    void recovers_from_every_crash_point(alloc::heap_options heap_options, unsigned foreign_pending) {
        auto p = pmem::pool::create(path_, "growth-crash", 256 * 1024);
        auto& anchor = *static_cast<u64*>(p.root_bytes(64 + heap_bytes));
        auto heap = alloc::buddy_heap::create(p, heap_offset, heap_bytes, heap_options);
        auto s = structure::create(p, heap, anchor, 2);
        Case::fill(s);
        for (unsigned i = 0; i < foreign_pending; ++i) heap.allocate(64);  // another client's, unconfirmed
        const auto images = images_of_growth(p, s);
        ASSERT_EQ(Case::contents(s), (std::vector<u64>{1, 2, 3}));
        ASSERT_GT(images.size(), 4u * 6) << "a growing push has more than 6 persistence events";

        const std::vector<u64> before{1, 2}, after{1, 2, 3};
        std::size_t saw_before = 0, saw_after = 0;
        for (const auto& img : images) {
            {
                std::ofstream out(path_ + "-image", std::ios::binary | std::ios::trunc);
                out.write(reinterpret_cast<const char*>(img.data()), static_cast<std::streamsize>(img.size()));
            }
            auto q = pmem::pool::open(path_ + "-image", "growth-crash");
            const auto a = *static_cast<u64*>(q.root_bytes(64 + heap_bytes));
            auto h = alloc::buddy_heap::open(q, heap_offset);
            h.recover();
            ASSERT_NO_THROW(structure::recover(q, h, a));
            h.finish_recovery();
            ASSERT_EQ(h.check(), std::vector<std::string>{});
            EXPECT_EQ(h.usage().pending_allocations + h.usage().pending_deallocations, 0u);
            auto r = structure::open(q, h, a);
            const auto got = Case::contents(r);
            ASSERT_TRUE(got == before || got == after) << "recovered " << got.size() << " elements";
            (got == before ? saw_before : saw_after)++;
            EXPECT_TRUE(Case::works(r)) << "the recovered structure works";
        }
        EXPECT_GT(saw_before, 0u);
        EXPECT_GT(saw_after, 0u);
    }

    std::string path_;
};

using cases = ::testing::Types<vector_case, deque_case>;
TYPED_TEST_SUITE(GrowthCrash, cases);

TYPED_TEST(GrowthCrash, RecoversFromEveryCrashPointOfAGrowingPush) {
    this->recovers_from_every_crash_point({}, 0);
}

// 2 slots: create() needs both (header and array), then confirms them; another client then
// holds one, and the growth's new array takes the last. Deallocating the old array would
// need a third: before confirm_replacement the push ended the process (confirm_table_full
// thrown from a noexcept combiner) and recovery failed on every image after the commit.
TYPED_TEST(GrowthCrash, GrowsAndRecoversWhenNoConfirmSlotIsFree) {
    this->recovers_from_every_crash_point({.confirm_slots = 2}, 1);
}

}  // namespace
}  // namespace ferrite
