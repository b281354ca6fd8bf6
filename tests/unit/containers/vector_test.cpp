// ferrite::vector: sequential semantics (std::vector-like), bad input (pop on empty, get and
// swap out of range, heap exhausted), growth through the heap's confirm protocol, the
// persistence cost of a batch, and concurrent use under both engines.
#include "ferrite/containers/vector.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>
#include <unistd.h>

#include "bump_heap.hpp"
#include "ferrite/pmem/counters.hpp"

namespace ferrite {
namespace {

using ferrite_test::bump_heap;
namespace c = containers;

class VectorTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = "/dev/shm/ferrite-vector-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::filesystem::remove(path_);
        pool_.emplace(pmem::pool::create(path_, "vector-test", 32 << 20));
        heap_.emplace(*pool_, 16 << 20);
    }
    void TearDown() override {
        pool_.reset();
        std::filesystem::remove(path_);
    }
    template <class Sel = c::use_pfc>
    vector<std::uint64_t, bump_heap, Sel> make(std::size_t capacity = 4, c::vector_options o = {}) {
        anchor_ = 0;
        return vector<std::uint64_t, bump_heap, Sel>::create(*pool_, *heap_, anchor_, capacity, o);
    }
    std::string path_;
    std::optional<pmem::pool> pool_;
    std::optional<bump_heap> heap_;
    std::uint64_t anchor_ = 0;
};

TEST_F(VectorTest, BehavesLikeStdVector) {
    auto v = make();
    std::vector<std::uint64_t> model;
    for (std::uint64_t i = 0; i < 100; ++i) {
        ASSERT_TRUE(v.push_back(i * 3));
        model.push_back(i * 3);
    }
    EXPECT_EQ(v.size(), 100u);
    EXPECT_GE(v.capacity(), 100u);
    EXPECT_TRUE(v.swap(0, 99));
    std::swap(model[0], model[99]);
    EXPECT_TRUE(v.swap(5, 5));
    for (std::uint64_t i = 0; i < 100; ++i) EXPECT_EQ(v.get(i), model[i]);
    auto view = v.unsynchronized_view();
    EXPECT_TRUE(std::equal(view.begin(), view.end(), model.begin(), model.end()));
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(v.pop_back(), model.back());
        model.pop_back();
    }
    EXPECT_EQ(v.size(), 0u);
}

TEST_F(VectorTest, BadInputFailsWithoutChangingAnything) {
    auto v = make();
    EXPECT_EQ(v.pop_back(), std::nullopt) << "pop on empty";
    EXPECT_EQ(v.get(0), std::nullopt) << "get out of range";
    v.push_back(1);
    EXPECT_EQ(v.get(1), std::nullopt);
    EXPECT_EQ(v.get(~0ull), std::nullopt);
    EXPECT_FALSE(v.swap(0, 1)) << "swap out of range";
    EXPECT_FALSE(v.swap(7, 0));
    EXPECT_EQ(v.size(), 1u);
    EXPECT_EQ(v.get(0), 1u);
}

TEST_F(VectorTest, GrowthUsesTheConfirmProtocol) {
    auto v = make(4);
    for (std::uint64_t i = 0; i < 4; ++i) v.push_back(i);
    EXPECT_TRUE(heap_->unconfirmed.empty());
    v.push_back(4);  // grows: new array allocated and confirmed, old one freed and confirmed
    EXPECT_GE(v.capacity(), 5u);
    EXPECT_TRUE(heap_->unconfirmed.empty());
    EXPECT_EQ(heap_->freed.size(), 1u);
    EXPECT_EQ(heap_->confirmed_free, heap_->freed);
    for (std::uint64_t i = 0; i < 5; ++i) EXPECT_EQ(v.get(i), i) << "elements survive growth";
    EXPECT_TRUE(v.reserve(1000));
    EXPECT_GE(v.capacity(), 1000u);
    EXPECT_EQ(v.get(4), 4u);
}

// A growth the heap refuses reaches the caller as the heap's exception (it used to be
// swallowed into `false`, which hid why), and changes nothing: the vector stays usable.
TEST_F(VectorTest, HeapExhaustedGrowthThrowsToTheCallerAndChangesNothing) {
    auto v = make(4);
    EXPECT_THROW(v.reserve(std::uint64_t{1} << 40), std::bad_alloc) << "reserve beyond the heap";
    EXPECT_THROW(v.reserve(~std::uint64_t{0}), ferrite::out_of_memory) << "a capacity whose bytes overflow, and ends";
    EXPECT_THROW(v.reserve((std::uint64_t{1} << 61) + 1), ferrite::out_of_memory) << "8 bytes each: overflows";
    EXPECT_TRUE(v.reserve(3)) << "a reserve the capacity covers needs no growth";
    EXPECT_EQ(v.capacity(), 4u);
    std::uint64_t pushed = 0;
    bool threw = false;
    try {
        for (; pushed < (1u << 22); ++pushed) ASSERT_TRUE(v.push_back(pushed));
    } catch (const std::bad_alloc&) {
        threw = true;
    }
    ASSERT_TRUE(threw) << "the 16 MiB heap must run out, and the push must say so";
    const auto cap = v.capacity();
    EXPECT_EQ(v.size(), pushed) << "the failed push changed nothing";
    EXPECT_EQ(cap, pushed) << "it failed growing a full array";
    EXPECT_TRUE(heap_->unconfirmed.empty()) << "no block left behind";
    auto view = v.unsynchronized_view();
    for (std::uint64_t i = 0; i < pushed; ++i) ASSERT_EQ(view[i], i);
    EXPECT_THROW(v.push_back(1), std::bad_alloc) << "still full: the same failure, again unchanged";
    EXPECT_EQ(v.size(), pushed);
    EXPECT_EQ(v.pop_back(), pushed - 1) << "usable: pops work";
    EXPECT_TRUE(v.push_back(7)) << "and a push that fits";
    EXPECT_EQ(v.get(pushed - 1), 7u);
    EXPECT_TRUE(v.swap(0, pushed - 1));
    EXPECT_EQ(v.get(0), 7u);
    EXPECT_EQ(v.size(), pushed);
    EXPECT_EQ(v.capacity(), cap);
}

// Not only exhaustion: whatever the heap throws (here an injected confirm_table_full) reaches
// the thread whose operation needed the growth, as that exception, under both engines.
TEST_F(VectorTest, InjectedGrowthFailureReachesTheCaller) {
    auto check = [&](auto v) {
        for (std::uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(v.push_back(i));
        heap_->fail_next = std::make_exception_ptr(ferrite::confirm_table_full("injected: every confirm slot is taken"));
        try {
            v.push_back(4);
            ADD_FAILURE() << "the failed growth was swallowed";
        } catch (const ferrite::confirm_table_full& e) {
            EXPECT_STREQ(e.what(), "injected: every confirm slot is taken");
        }
        EXPECT_EQ(v.size(), 4u);
        EXPECT_EQ(v.capacity(), 4u);
        EXPECT_TRUE(v.push_back(4)) << "the next growth succeeds";
        EXPECT_GE(v.capacity(), 5u);
        for (std::uint64_t i = 0; i < 5; ++i) EXPECT_EQ(v.get(i), i);
    };
    check(make<c::use_pfc>(4));
    check(make<c::use_fpfc>(4));
}

// Format 3: each pass writes the record after the state's, so the state walks the ring of
// eight records, one a pass; a vector opened at any point of the ring goes on from there.
TEST_F(VectorTest, PassesWalkTheRingOfStateRecords) {
    const auto* h = [&] {
        auto v = make(64);
        return c::vector_header_at(*pool_, anchor_);
    }();
    EXPECT_EQ(c::vector_current(*h), 0u) << "create() names record 0";
    std::uint64_t passes = 0;
    for (std::uint64_t round = 0; round < 2 * c::vector_state_records + 3; ++round) {
        auto v = vector<std::uint64_t, bump_heap>::open(*pool_, *heap_, anchor_);
        ASSERT_EQ(v.size(), round);
        for (std::uint64_t i = 0; i < round; ++i) ASSERT_EQ(v.get(i), i + 100) << "round " << round;
        // One push pass a round, by a core made on the header: it goes on from the record the header names.
        v.push_back(round + 100);
        ++passes;
        EXPECT_EQ(c::vector_current(*h), passes % c::vector_state_records) << "round " << round;
    }
}

TEST_F(VectorTest, ReopenSeesTheSameElements) {
    {
        auto v = make();
        for (std::uint64_t i = 0; i < 10; ++i) v.push_back(i + 100);
    }
    auto again = vector<std::uint64_t, bump_heap>::open(*pool_, *heap_, anchor_);
    EXPECT_EQ(again.size(), 10u);
    EXPECT_EQ(again.get(9), 109u);
    using u64_vector = vector<std::uint64_t, bump_heap>;
    using u32_vector = vector<std::uint32_t, bump_heap>;
    std::uint64_t bogus = 64;
    EXPECT_THROW(u64_vector::open(*pool_, *heap_, bogus), ferrite::error);
    EXPECT_THROW(u32_vector::open(*pool_, *heap_, anchor_), ferrite::error) << "another element type";
}

TEST_F(VectorTest, OnePfencePerPassOfPushesOrPops) {
    auto v = make(1024);
    auto before = pmem::thread_counters();
    v.push_back(1);
    const auto one = pmem::thread_counters() - before;
    EXPECT_EQ(one.pfences, 1u) << "values and the state record that repeats them, one fence";
    EXPECT_EQ(one.nt_stores, 0u) << "a value the record holds is stored through the cache (pops read it next)";
    EXPECT_EQ(one.pwb_lines, 1u) << "the state record's line: the value rides in it, its own line deferred";
    before = pmem::thread_counters();
    EXPECT_EQ(v.pop_back(), 1u);
    const auto pop = pmem::thread_counters() - before;
    EXPECT_EQ(pop.pfences, 1u);
    EXPECT_EQ(pop.pwb_lines, 1u) << "the popped value's line is never written back";
    // Pushes that stay: the next pass carries the deferred value in its record and writes
    // its line back; the one after no longer needs it.
    v.push_back(2);
    before = pmem::thread_counters();
    v.push_back(3);
    const auto carry = pmem::thread_counters() - before;
    EXPECT_EQ(carry.pfences, 1u);
    EXPECT_EQ(carry.pwb_lines, 2u) << "the record and the deferred value 2's line";
    const auto* h = c::vector_header_at(*pool_, anchor_);
    EXPECT_EQ(h->state[c::vector_current(*h)].redo, 2u) << "the record holds 2 and 3";
    c::vector_options plain;
    plain.nt_stores = false;  // governs the values outside the record: here, the two-fence ablation's
    plain.one_fence = false;
    auto w = make(1024, plain);
    const auto b2 = pmem::thread_counters();
    w.push_back(1);
    const auto two = pmem::thread_counters() - b2;
    EXPECT_EQ(two.nt_stores, 0u);
    EXPECT_EQ(two.pwb_lines, 2u) << "value line and state record line";
    EXPECT_EQ(two.pfences, 2u);
}

TEST_F(VectorTest, TwoFenceAblationOrdersValuesBeforeTheRecord) {
    c::vector_options old;
    old.one_fence = false;
    auto v = make(1024, old);
    const auto before = pmem::thread_counters();
    v.push_back(1);
    const auto one = pmem::thread_counters() - before;
    EXPECT_EQ(one.pfences, 2u) << "values, then the state record (format 1's protocol)";
    EXPECT_EQ(one.nt_stores, 1u) << "a value outside the record goes by NT store";
    EXPECT_EQ(one.pwb_lines, 1u);
    const auto& h = *c::vector_header_at(*pool_, anchor_);
    EXPECT_EQ(h.state[c::vector_current(h)].redo, 0u) << "the values are durable before the record: no redo";
}

// A pass of more pushes than a state record's redo room (5 elements of 8 bytes) falls back
// to a fence between the values and the record; up to the room, one fence and the values in
// the record, last element at size - 1.
TEST_F(VectorTest, PushesBeyondTheRedoRoomTakeTwoFences) {
    using core_t = c::persistent_vector_core<std::uint64_t, bump_heap>;
    anchor_ = 0;
    auto* h = core_t::create(*pool_, *heap_, anchor_, 64);
    core_t core(*pool_, *heap_, h);
    const auto pass = [&](std::size_t n, std::uint64_t first) {
        std::vector<core_t::slot_type> slots(n);
        std::vector<core_t::slot_type*> batch;
        for (std::size_t i = 0; i < n; ++i) {
            slots[i].request = {c::vector_op::push_back, 0, 0, first + i};
            batch.push_back(&slots[i]);
        }
        const auto before = pmem::thread_counters();
        core.combine(std::span(batch));
        return pmem::thread_counters() - before;
    };
    ASSERT_EQ(c::vector_redo_room(8, 8), 5u);
    EXPECT_EQ(pass(5, 100).pfences, 1u);
    const auto& st = h->state[c::vector_current(*h)];
    EXPECT_EQ(st.size, 5u);
    ASSERT_EQ(st.redo, 5u);
    std::uint64_t redo[5];
    std::memcpy(redo, st.redo_values, sizeof redo);
    for (std::uint64_t i = 0; i < 5; ++i) EXPECT_EQ(redo[i], 100 + i);
    EXPECT_EQ(pass(6, 200).pfences, 2u);
    EXPECT_EQ(core.size(), 11u);
    EXPECT_EQ(h->state[c::vector_current(*h)].redo, 0u);
    for (std::uint64_t i = 0; i < 6; ++i) EXPECT_EQ(core.data()[5 + i], 200 + i);
}

// Recovery copies the state record's redo values into the array: the pass's NT stores may
// not have reached the media before the crash.
TEST_F(VectorTest, RecoveryCopiesTheRedoValuesIntoTheArray) {
    {
        auto v = make(64);
        for (std::uint64_t i = 0; i < 3; ++i) v.push_back(10 + i);
    }
    auto* h = c::vector_header_at(*pool_, anchor_);
    auto* data = reinterpret_cast<std::uint64_t*>(pool_->base() + h->data);
    data[2] = 0xdead;  // the last push's element lost, its record durable
    c::recover_vector(*pool_, *heap_, anchor_);
    EXPECT_EQ(data[2], 12u);
    EXPECT_EQ(data[1], 11u);
    EXPECT_EQ(c::vector_size(*h), 3u);
}

template <class Sel>
void concurrent_push_pop(vector<std::uint64_t, bump_heap, Sel>& v, int threads, int ops) {
    std::vector<std::thread> ts;
    std::atomic<int> ready{0};
    std::vector<std::vector<std::uint64_t>> popped(threads);
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            ready.fetch_add(1);
            while (ready.load() < threads) std::this_thread::yield();
            for (int i = 0; i < ops; ++i) {
                ASSERT_TRUE(v.push_back(std::uint64_t(t) << 32 | std::uint64_t(i)));
                auto x = v.pop_back();
                ASSERT_TRUE(x.has_value()) << "a pop after my own push cannot find the vector empty";
                popped[t].push_back(*x);
            }
        });
    for (auto& th : ts) th.join();
    std::vector<std::uint64_t> all;
    for (auto& p : popped) all.insert(all.end(), p.begin(), p.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a value popped twice";
    EXPECT_EQ(all.size(), std::size_t(threads) * ops);
    EXPECT_EQ(v.size(), 0u);
}

TEST_F(VectorTest, ConcurrentPushPopPfc) {
    auto v = make<c::use_pfc>(1024);
    concurrent_push_pop(v, 8, 2000);
}

TEST_F(VectorTest, ConcurrentPushPopFpfc) {
    auto v = make<c::use_fpfc>(1024);
    concurrent_push_pop(v, 8, 2000);
}

TEST_F(VectorTest, ConcurrentPushPopPureSpin) {
    auto v = make<c::use_fpfc_spin>(1024);
    concurrent_push_pop(v, 4, 1000);
}

TEST_F(VectorTest, ConcurrentGrowthAndSwaps) {
    auto v = make<c::use_pfc>(2);
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) {
                v.push_back(std::uint64_t(t) * 1000 + i);
                v.swap(static_cast<std::uint64_t>(i) % 7, static_cast<std::uint64_t>(i * 3) % 11);
                (void)v.get(static_cast<std::uint64_t>(i));
            }
        });
    for (auto& th : ts) th.join();
    EXPECT_EQ(v.size(), 2000u);
    auto view = v.unsynchronized_view();
    std::vector<std::uint64_t> all(view.begin(), view.end());
    std::sort(all.begin(), all.end());
    for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 500; ++i)
            EXPECT_TRUE(std::binary_search(all.begin(), all.end(), std::uint64_t(t) * 1000 + i));
}

}  // namespace
}  // namespace ferrite
