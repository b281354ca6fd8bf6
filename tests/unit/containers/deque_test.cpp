// ferrite::deque and ferrite::queue (persistent_deque_core.hpp): sequential semantics against
// std::deque (seeded property test), empty ends, growth through the heap's confirm protocol
// (and its failures, which reach the caller) and wrap-around of the ring, reopening, the
// persistence cost of a batch, and concurrent use under both engines with threads that come
// and go. Recovery from every crash point of a growing push: growth_crash_test.cpp.
#include "ferrite/containers/deque.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <unistd.h>

#include "bump_heap.hpp"
#include "ferrite/alloc/buddy_heap.hpp"
#include "ferrite/containers/queue.hpp"
#include "ferrite/pmem/counters.hpp"
#include "ferrite/sim/session.hpp"
#include "ferrite/sim/site_registry.hpp"

namespace ferrite {
namespace {

using ferrite_test::bump_heap;
namespace c = containers;
using u64 = std::uint64_t;

std::string scratch_path(const char* what) {
    return "/dev/shm/ferrite-" + std::string(what) + "-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

class DequeTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = scratch_path("deque");
        std::filesystem::remove(path_);
        pool_.emplace(pmem::pool::create(path_, "deque-test", 32 << 20));
        heap_.emplace(*pool_, 16 << 20);
    }
    void TearDown() override {
        pool_.reset();
        std::filesystem::remove(path_);
    }
    template <class Sel = c::use_pfc>
    deque<u64, bump_heap, Sel> make(std::size_t capacity = 4, c::deque_options o = {}) {
        anchor_ = 0;
        return deque<u64, bump_heap, Sel>::create(*pool_, *heap_, anchor_, capacity, o);
    }
    std::string path_;
    std::optional<pmem::pool> pool_;
    std::optional<bump_heap> heap_;
    u64 anchor_ = 0;
};

TEST_F(DequeTest, BehavesLikeStdDequeForManySeeds) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
        auto d = make(seed % 3 == 0 ? 0 : seed % 5 + 1);  // capacity 0 too: the first push allocates
        std::deque<u64> model;
        std::mt19937_64 rng(seed);
        for (int i = 0; i < 600; ++i) {
            const auto r = rng();
            const u64 v = u64{seed} << 32 | static_cast<u64>(i);
            switch (r % 8) {
                case 0: case 1: ASSERT_TRUE(d.push_back(v)); model.push_back(v); break;
                case 2: case 3: ASSERT_TRUE(d.push_front(v)); model.push_front(v); break;
                case 4: {
                    const auto x = d.pop_back();
                    ASSERT_EQ(x.has_value(), !model.empty()) << "seed " << seed << " op " << i;
                    if (x) {
                        ASSERT_EQ(*x, model.back());
                        model.pop_back();
                    }
                    break;
                }
                case 5: {
                    const auto x = d.pop_front();
                    ASSERT_EQ(x.has_value(), !model.empty()) << "seed " << seed << " op " << i;
                    if (x) {
                        ASSERT_EQ(*x, model.front());
                        model.pop_front();
                    }
                    break;
                }
                case 6:
                    ASSERT_EQ(d.front(), model.empty() ? std::nullopt : std::optional<u64>(model.front()));
                    ASSERT_EQ(d.back(), model.empty() ? std::nullopt : std::optional<u64>(model.back()));
                    break;
                default: ASSERT_EQ(d.size(), model.size()); break;
            }
        }
        const auto all = d.unsynchronized_contents();
        ASSERT_TRUE(std::equal(all.begin(), all.end(), model.begin(), model.end())) << "seed " << seed;
    }
}

TEST_F(DequeTest, EmptyEndsFailWithoutChangingAnything) {
    auto d = make();
    EXPECT_EQ(d.pop_back(), std::nullopt);
    EXPECT_EQ(d.pop_front(), std::nullopt);
    EXPECT_EQ(d.front(), std::nullopt);
    EXPECT_EQ(d.back(), std::nullopt);
    EXPECT_TRUE(d.empty());
    d.push_back(1);
    EXPECT_EQ(d.pop_front(), 1u);
    EXPECT_EQ(d.pop_back(), std::nullopt);
    EXPECT_EQ(d.size(), 0u);
}

TEST_F(DequeTest, GrowthAcrossWrapAroundKeepsOrderAndUsesTheConfirmProtocol) {
    auto d = make(4);
    // Wrap the ring: the front moves below slot 0.
    d.push_back(2);
    d.push_back(3);
    d.push_front(1);
    d.push_front(0);
    EXPECT_EQ(d.unsynchronized_capacity(), 4u);
    EXPECT_TRUE(heap_->unconfirmed.empty());
    d.push_back(4);  // grows: new ring allocated and confirmed, old one freed and confirmed
    EXPECT_EQ(d.unsynchronized_capacity(), 8u);
    EXPECT_TRUE(heap_->unconfirmed.empty());
    EXPECT_EQ(heap_->freed.size(), 1u);
    EXPECT_EQ(heap_->confirmed_free, heap_->freed);
    EXPECT_EQ(d.unsynchronized_contents(), (std::vector<u64>{0, 1, 2, 3, 4}));
    for (u64 i = 1; i <= 40; ++i) d.push_front(100 + i);  // many wraps of the head counter
    EXPECT_EQ(d.size(), 45u);
    EXPECT_EQ(d.back(), 4u);
    EXPECT_EQ(d.front(), 140u);
    EXPECT_TRUE(d.reserve(1000));
    EXPECT_GE(d.unsynchronized_capacity(), 1000u);
    EXPECT_EQ(d.pop_front(), 140u);
    EXPECT_EQ(d.pop_back(), 4u);
}

// A growth the heap refuses reaches the caller as the heap's exception (it used to be
// swallowed into `false`) and changes nothing; the deque and a queue stay usable.
TEST_F(DequeTest, GrowthFailureThrowsToTheCallerAndChangesNothing) {
    auto d = make(4);
    EXPECT_THROW(d.reserve(u64{1} << 40), std::bad_alloc) << "reserve beyond the heap";
    EXPECT_THROW(d.reserve(~u64{0}), ferrite::out_of_memory) << "a capacity whose bytes overflow";
    EXPECT_TRUE(d.reserve(4));
    for (u64 i = 0; i < 4; ++i) ASSERT_TRUE(d.push_back(i));
    heap_->fail_next = std::make_exception_ptr(ferrite::confirm_table_full("injected: every confirm slot is taken"));
    try {
        d.push_front(9);
        ADD_FAILURE() << "the failed growth was swallowed";
    } catch (const ferrite::confirm_table_full& e) {
        EXPECT_STREQ(e.what(), "injected: every confirm slot is taken");
    }
    EXPECT_EQ(d.unsynchronized_capacity(), 4u);
    EXPECT_EQ(d.unsynchronized_contents(), (std::vector<u64>{0, 1, 2, 3})) << "unchanged";
    EXPECT_TRUE(heap_->unconfirmed.empty()) << "no block left behind";
    EXPECT_EQ(d.pop_front(), 0u) << "usable";
    EXPECT_TRUE(d.push_front(9));
    EXPECT_TRUE(d.push_back(4)) << "the next growth succeeds";
    EXPECT_EQ(d.unsynchronized_contents(), (std::vector<u64>{9, 1, 2, 3, 4}));

    anchor_ = 0;
    auto q = queue<u64, bump_heap>::create(*pool_, *heap_, anchor_, 2);
    ASSERT_TRUE(q.push(1));
    ASSERT_TRUE(q.push(2));
    heap_->fail_next = std::make_exception_ptr(std::bad_alloc());
    EXPECT_THROW(q.push(3), std::bad_alloc) << "the queue's push too";
    EXPECT_EQ(q.size(), 2u);
    EXPECT_EQ(q.pop(), 1u);
    EXPECT_TRUE(q.push(3));
    EXPECT_EQ(q.pop(), 2u);
    EXPECT_EQ(q.pop(), 3u);
}

TEST_F(DequeTest, ReopenSeesTheSameElements) {
    {
        auto d = make(2);
        for (u64 i = 0; i < 10; ++i) d.push_front(i);
    }
    auto again = deque<u64, bump_heap>::open(*pool_, *heap_, anchor_);
    EXPECT_EQ(again.size(), 10u);
    EXPECT_EQ(again.front(), 9u);
    EXPECT_EQ(again.back(), 0u);
    using q64 = queue<u64, bump_heap>;
    auto q = q64::open(*pool_, *heap_, anchor_);  // a queue is stored as a deque
    EXPECT_EQ(q.pop(), 9u);
    using u32_deque = deque<std::uint32_t, bump_heap>;
    u64 bogus = 64;
    EXPECT_THROW(q64::open(*pool_, *heap_, bogus), ferrite::error);
    EXPECT_THROW(u32_deque::open(*pool_, *heap_, anchor_), ferrite::error) << "another element type";
}

TEST_F(DequeTest, OnePfencePerPassOfPushesOrPops) {
    auto d = make(1024);
    auto before = pmem::thread_counters();
    d.push_front(1);
    const auto push = pmem::thread_counters() - before;
    EXPECT_EQ(push.pfences, 1u) << "the value and the state record that repeats it, one fence";
    EXPECT_EQ(push.nt_stores, 0u) << "the value is stored through the cache for the pops";
    EXPECT_EQ(push.pwb_lines, 2u) << "the value's line and the state record's";
    before = pmem::thread_counters();
    d.pop_back();
    const auto pop = pmem::thread_counters() - before;
    EXPECT_EQ(pop.pfences, 1u);
    EXPECT_EQ(pop.pwb_lines, 1u);
    before = pmem::thread_counters();
    (void)d.size();
    (void)d.front();
    (void)d.pop_back();  // empty: nothing changes, nothing is written
    const auto reads = pmem::thread_counters() - before;
    EXPECT_EQ(reads.pfences, 0u);
    EXPECT_EQ(reads.pwb_lines, 0u);
}

TEST_F(DequeTest, TwoFenceAblationOrdersValuesBeforeTheRecord) {
    auto d = make(1024, {.one_fence = false});
    const auto before = pmem::thread_counters();
    d.push_back(1);
    const auto push = pmem::thread_counters() - before;
    EXPECT_EQ(push.pfences, 2u) << "value, then the state record (format 1's protocol)";
    EXPECT_EQ(push.nt_stores, 1u);
    EXPECT_EQ(push.pwb_lines, 1u);
    const auto& st = c::deque_committed(*c::deque_header_at(*pool_, anchor_));
    EXPECT_EQ(st.redo_front + st.redo_back, 0u) << "the value is durable before the record: no redo";
}

// One combining pass of `ops` (operation, value) through `core`; the persistence
// instructions it issued.
using deque_ops = std::vector<std::pair<c::deque_op, u64>>;
template <class Core>
pmem::counters combine_counted(Core& core, const deque_ops& ops) {
    std::vector<typename Core::slot_type> slots(ops.size());
    std::vector<typename Core::slot_type*> batch;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        slots[i].request = {ops[i].first, ops[i].second, 0};
        batch.push_back(&slots[i]);
    }
    const auto before = pmem::thread_counters();
    core.combine(std::span(batch));
    return pmem::thread_counters() - before;
}

// One pass through the core: kept pushes up to the record's redo room (4 elements of 8
// bytes) ride in the record, front ones in deque order, then back ones, with one fence;
// beyond the room a fence orders the values before a record without redo.
TEST_F(DequeTest, KeptPushesBeyondTheRedoRoomTakeTwoFences) {
    using core_t = c::persistent_deque_core<u64, bump_heap>;
    anchor_ = 0;
    auto* h = core_t::create(*pool_, *heap_, anchor_, 64);
    core_t core(*pool_, *heap_, h);
    const auto pass = [&](const deque_ops& ops) { return combine_counted(core, ops); };
    const auto pb = c::deque_op::push_back, pf = c::deque_op::push_front, qf = c::deque_op::pop_front;
    ASSERT_EQ(c::deque_redo_room(8), 4u);
    // Five pushes, one eliminated by the pop: four kept, one fence.
    EXPECT_EQ(pass({{pb, 10}, {pb, 11}, {pf, 1}, {pf, 2}, {pf, 3}, {qf, 0}}).pfences, 1u);
    const auto& st = c::deque_committed(*h);
    EXPECT_EQ(st.size, 4u);
    ASSERT_EQ(st.redo_front, 2u);
    ASSERT_EQ(st.redo_back, 2u);
    u64 redo[4];
    std::memcpy(redo, st.redo_values, sizeof redo);
    EXPECT_EQ(std::vector<u64>(redo, redo + 4), (std::vector<u64>{3, 2, 10, 11}));
    EXPECT_EQ(core.contents(), (std::vector<u64>{3, 2, 10, 11}));
    EXPECT_EQ(pass({{pb, 20}, {pb, 21}, {pb, 22}, {pf, 0}, {pf, 9}}).pfences, 2u);
    EXPECT_EQ(c::deque_committed(*h).redo_front + c::deque_committed(*h).redo_back, 0u);
    EXPECT_EQ(core.contents(), (std::vector<u64>{9, 0, 3, 2, 10, 11, 20, 21, 22}));
}

// Coalesced deferral of back pushes: a back value is stored through the cache and not written
// back while the deferred range fits the record's redo room; every record lists the whole
// range; at three values the pass writes their lines back and still lists them; pops shrink
// the range; a core made on a header whose state has back redo treats it as deferred; past
// the room the carried values are written back before a record without redo.
TEST_F(DequeTest, BackPushesAreWrittenBackCoalesced) {
    using core_t = c::persistent_deque_core<u64, bump_heap>;
    anchor_ = 0;
    auto* h = core_t::create(*pool_, *heap_, anchor_, 64);
    ASSERT_EQ(h->data % 64, 0u) << "the ring's slots 0-7 share a line";
    auto core = std::make_unique<core_t>(*pool_, *heap_, h);
    const auto pass = [&](const deque_ops& ops) { return combine_counted(*core, ops); };
    const auto redo = [&] {
        const auto& st = c::deque_committed(*h);
        std::vector<u64> v(st.redo_front + st.redo_back);
        if (!v.empty()) std::memcpy(v.data(), st.redo_values, v.size() * sizeof(u64));
        return std::pair{st.redo_back, v};
    };
    const auto pb = c::deque_op::push_back, qf = c::deque_op::pop_front;
    auto k = pass({{pb, 1}});
    EXPECT_EQ(k.pwb_lines, 1u) << "the record's line only: the value is deferred";
    EXPECT_EQ(k.pfences, 1u);
    EXPECT_EQ(redo(), (std::pair{1u, std::vector<u64>{1}}));
    k = pass({{pb, 2}});
    EXPECT_EQ(k.pwb_lines, 1u);
    EXPECT_EQ(redo(), (std::pair{2u, std::vector<u64>{1, 2}})) << "the record repeats the deferred value";
    k = pass({{pb, 3}});
    EXPECT_EQ(k.pwb_lines, 2u) << "three deferred values: their one line and the record's";
    EXPECT_EQ(k.pfences, 1u);
    EXPECT_EQ(redo(), (std::pair{3u, std::vector<u64>{1, 2, 3}})) << "listed until the pass's fence";
    k = pass({{pb, 4}});
    EXPECT_EQ(k.pwb_lines, 1u);
    EXPECT_EQ(redo(), (std::pair{1u, std::vector<u64>{4}})) << "written back: no longer carried";
    pass({{pb, 5}});
    k = pass({{qf, 0}, {qf, 0}, {qf, 0}, {qf, 0}});
    EXPECT_EQ(k.pwb_lines, 1u);
    EXPECT_EQ(redo(), (std::pair{1u, std::vector<u64>{5}})) << "a pop into the deferred range shrinks it";
    // A new core on the header (open after a clean exit): the state's back redo stays deferred.
    core = std::make_unique<core_t>(*pool_, *heap_, h);
    pass({{pb, 6}});
    EXPECT_EQ(redo(), (std::pair{2u, std::vector<u64>{5, 6}}));
    core = std::make_unique<core_t>(*pool_, *heap_, h);
    k = pass({{pb, 7}, {pb, 8}, {pb, 9}});
    EXPECT_EQ(k.pfences, 2u) << "two carried and three new values do not fit: two fences";
    EXPECT_EQ(k.pwb_lines, 2u) << "the carried values' line and the record's (the new ones by NT stores)";
    EXPECT_EQ(redo(), (std::pair{0u, std::vector<u64>{}}));
    EXPECT_EQ(core->contents(), (std::vector<u64>{5, 6, 7, 8, 9}));
    auto* ring = reinterpret_cast<u64*>(pool_->base() + h->data);
    EXPECT_EQ(ring[4], 5u);
    EXPECT_EQ(ring[5], 6u);
}

// Recovery copies the state record's redo values into their ring slots (both ends, across
// the ring's wrap): the pass's stores may not have reached the media before the crash.
TEST_F(DequeTest, RecoveryCopiesTheRedoValuesIntoTheRing) {
    using core_t = c::persistent_deque_core<u64, bump_heap>;
    anchor_ = 0;
    auto* h = core_t::create(*pool_, *heap_, anchor_, 8);
    core_t core(*pool_, *heap_, h);
    std::vector<core_t::slot_type> slots(4);
    const std::pair<c::deque_op, u64> ops[] = {
        {c::deque_op::push_front, 1}, {c::deque_op::push_front, 2}, {c::deque_op::push_back, 3}, {c::deque_op::push_back, 4}};
    std::vector<core_t::slot_type*> batch;
    for (std::size_t i = 0; i < 4; ++i) {
        slots[i].request = {ops[i].first, ops[i].second, 0};
        batch.push_back(&slots[i]);
    }
    core.combine(std::span(batch));
    ASSERT_EQ(core.contents(), (std::vector<u64>{2, 1, 3, 4}));
    auto* ring = reinterpret_cast<u64*>(pool_->base() + h->data);
    for (u64 i = 0; i < 8; ++i) ring[i] = 0xdead;  // every store lost, the record durable
    c::recover_deque(*pool_, *heap_, anchor_);
    EXPECT_EQ(core.contents(), (std::vector<u64>{2, 1, 3, 4}));
    EXPECT_EQ(ring[7], 1u) << "the front wrapped below slot 0";
    const auto& st = c::deque_committed(*h);
    EXPECT_EQ(st.redo_front + st.redo_back, 0u) << "recovery commits the state again without redo";
    EXPECT_EQ(st.size, 4u);
}

// Waves of threads (each wave joins before the next starts, so publications of exited
// threads are cleaned up and new ones linked) push unique values at both ends and pop at
// both ends; every value pushed is popped exactly once, during the run or by the final drain.
template <class Sel>
void concurrent_exactly_once(deque<u64, bump_heap, Sel>& d, int waves, int threads, int ops) {
    std::vector<std::vector<u64>> popped(static_cast<std::size_t>(waves * threads));
    for (int w = 0; w < waves; ++w) {
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
            ts.emplace_back([&, w, t] {
                const int id = w * threads + t;
                auto& mine = popped[static_cast<std::size_t>(id)];
                for (int i = 0; i < ops; ++i) {
                    const u64 v = u64(id) << 32 | u64(i);
                    ASSERT_TRUE(i % 2 ? d.push_back(v) : d.push_front(v));
                    if (i % 3 == 0) continue;  // leave some behind for the drain
                    auto x = (i / 2) % 2 ? d.pop_back() : d.pop_front();
                    if (x) mine.push_back(*x);
                }
            });
        for (auto& th : ts) th.join();
    }
    std::vector<u64> all;
    for (auto& p : popped) all.insert(all.end(), p.begin(), p.end());
    while (auto x = d.pop_front()) all.push_back(*x);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a value popped twice";
    ASSERT_EQ(all.size(), std::size_t(waves * threads * ops)) << "a value lost";
    EXPECT_EQ(d.size(), 0u);
}

TEST_F(DequeTest, ConcurrentExactlyOncePfc) {
    auto d = make<c::use_pfc>(2);
    concurrent_exactly_once(d, 3, 4, 1500);
}

TEST_F(DequeTest, ConcurrentExactlyOnceFpfc) {
    auto d = make<c::use_fpfc>(2);
    concurrent_exactly_once(d, 3, 4, 1500);
}

TEST_F(DequeTest, ConcurrentExactlyOncePureSpinNoNtNoElimination) {
    auto d = make<c::use_fpfc_spin>(2, {.nt_stores = false, .elimination = false});
    concurrent_exactly_once(d, 2, 3, 800);
}

TEST_F(DequeTest, ConcurrentExactlyOnceTwoFence) {
    auto d = make<c::use_pfc>(2, {.one_fence = false});
    concurrent_exactly_once(d, 2, 3, 800);
}

// Queue: FIFO against std::queue, and per-producer order seen by every consumer.
TEST_F(DequeTest, QueueIsFifo) {
    anchor_ = 0;
    auto q = queue<u64, bump_heap>::create(*pool_, *heap_, anchor_, 2);
    std::deque<u64> model;
    std::mt19937_64 rng(7);
    for (u64 i = 0; i < 2000; ++i) {
        if (rng() % 3) {
            ASSERT_TRUE(q.push(i));
            model.push_back(i);
        } else {
            const auto x = q.pop();
            ASSERT_EQ(x.has_value(), !model.empty());
            if (x) {
                        ASSERT_EQ(*x, model.front());
                        model.pop_front();
                    }
        }
    }
    EXPECT_EQ(q.size(), model.size());
    EXPECT_EQ(q.front(), model.front());
    EXPECT_EQ(q.back(), model.back());
}

TEST_F(DequeTest, QueueKeepsEachProducersOrderConcurrently) {
    anchor_ = 0;
    auto q = queue<u64, bump_heap, c::use_pfc>::create(*pool_, *heap_, anchor_, 2);
    constexpr int producers = 2, consumers = 2, per = 3000;
    std::atomic<int> done{0};
    std::vector<std::vector<u64>> got(consumers);
    std::vector<std::thread> ts;
    for (int p = 0; p < producers; ++p)
        ts.emplace_back([&, p] {
            for (int i = 0; i < per; ++i) ASSERT_TRUE(q.push(u64(p) << 32 | u64(i)));
            done.fetch_add(1);
        });
    for (int k = 0; k < consumers; ++k)
        ts.emplace_back([&, k] {
            while (true) {
                const bool finished = done.load() == producers;
                auto x = q.pop();
                if (x) got[static_cast<std::size_t>(k)].push_back(*x);
                else if (finished) break;
            }
        });
    for (auto& th : ts) th.join();
    std::size_t total = 0;
    for (const auto& g : got) {
        total += g.size();
        std::vector<u64> last(producers, 0);
        std::vector<bool> seen(producers, false);
        for (u64 v : g) {
            const auto p = static_cast<std::size_t>(v >> 32);
            if (seen[p]) {
                EXPECT_GT(v & 0xffffffff, last[p]) << "a consumer saw a producer's values out of order";
            }
            seen[p] = true;
            last[p] = v & 0xffffffff;
        }
    }
    EXPECT_EQ(total, std::size_t(producers * per));
}

}  // namespace
}  // namespace ferrite
