// ferrite::dpfc_stack and dpfc_queue (dpfc_stack.hpp, dpfc_layout.hpp): semantics against a model,
// full and empty, one pfence per pass, detectability (recover(tid) and next_seq), the crash
// images a pass can leave (a state record without its results, orphan results, redo values
// not yet in the array) and their recovery, validation of damaged regions (nothing
// written), and concurrent exactly-once use.
#include "ferrite/containers/dpfc_stack.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "dfc_test_support.hpp"
#include "ferrite/pmem/counters.hpp"

namespace ferrite {
namespace {

namespace c = containers;
using u64 = std::uint64_t;
using stk = dpfc_stack<u64>;
using ferrite_test::dfc_region_buffer;
using combining::dfc_status;

struct fixture {
    explicit fixture(unsigned n_threads = 2, u64 n_capacity = 64)
        : threads(n_threads), capacity(n_capacity), buf(stk::required_bytes(n_threads, n_capacity)) {}
    stk create(c::dpfc_options o = {}) { return stk::create(buf.data(), buf.size(), threads, capacity, o); }
    stk open() { return stk::open(buf.data(), buf.size()); }
    c::dpfc_region r() { return c::dpfc_region::at(buf.data(), threads); }
    unsigned threads;
    u64 capacity;
    dfc_region_buffer buf;
};

TEST(DpfcStack, BehavesLikeAStackUpToItsCapacity) {
    fixture f(1, 64);
    auto s = f.create();
    std::vector<u64> model;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
        if (rng() % 3 != 0) {
            const bool ok = s.push(0, u64(i));
            EXPECT_EQ(ok, model.size() < 64);
            if (ok) model.push_back(u64(i));
        } else {
            const auto v = s.pop(0);
            if (model.empty()) {
                EXPECT_FALSE(v);
            } else {
                ASSERT_TRUE(v);
                EXPECT_EQ(*v, model.back());
                model.pop_back();
            }
        }
    }
    std::vector<u64> top_first(model.rbegin(), model.rend());
    EXPECT_EQ(s.unsynchronized_contents(), top_first);
    auto again = f.open();
    EXPECT_EQ(again.unsynchronized_contents(), top_first);
}

TEST(DpfcStack, OnePfencePerPassResultsIncluded) {
    fixture f(1);
    auto s = f.create();
    auto before = pmem::thread_counters();
    s.push(0, 5);
    auto d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pfences, 1u) << "result record and state record (the value in its redo) under one fence";
    EXPECT_EQ(d.pwb_lines, 2u) << "the value's line is deferred to the next pass that keeps it";
    before = pmem::thread_counters();
    EXPECT_EQ(s.pop(0), 5u);
    d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pfences, 1u);
    EXPECT_EQ(d.pwb_lines, 2u) << "result record and state record: the popped value is never written back";
    s.push(0, 6);
    before = pmem::thread_counters();
    s.push(0, 7);
    d = pmem::thread_counters() - before;
    EXPECT_EQ(d.pwb_lines, 3u) << "the previous pass's value (kept) is written back by this pass";
    EXPECT_EQ(f.r().committed().redo, 2u) << "and repeated in this pass's record";
    s.push(0, 8);
    EXPECT_EQ(f.r().committed().redo, 2u) << "a value written back by an earlier, fenced pass is not repeated";
    auto two = fixture(1);
    auto t = two.create({.elimination = true, .one_fence = false});
    before = pmem::thread_counters();
    t.push(0, 5);
    EXPECT_EQ((pmem::thread_counters() - before).pfences, 2u) << "the two-fence ablation";
}

TEST(DpfcStack, RecoverReportsEachThreadsLatestOperation) {
    fixture f(3);
    auto s = f.create();
    EXPECT_EQ(s.recover(0).seq, 0u);
    EXPECT_EQ(s.next_seq(1), 1u);
    s.push(1, 10);
    s.push(1, 11);
    EXPECT_EQ(s.pop(2), 11u);
    EXPECT_EQ(s.pop(2), 10u);
    auto r = s.recover(1);
    EXPECT_EQ(r.seq, 2u);
    EXPECT_TRUE(r.took_effect);
    EXPECT_EQ(r.name, u64(stk::push_op));
    EXPECT_EQ(r.param, 11u);
    EXPECT_EQ(r.response.status, dfc_status::ack);
    auto again = f.open();
    r = again.recover(2);
    EXPECT_EQ(r.seq, 2u);
    EXPECT_TRUE(r.took_effect);
    EXPECT_EQ(r.response.status, dfc_status::value);
    EXPECT_EQ(r.response.value, 10u);
    EXPECT_EQ(again.next_seq(2), 3u);
    EXPECT_EQ(again.next_seq(0), 1u);
    EXPECT_THROW((void)again.recover(3), usage_error);
}

// A pass that crashed with its state record durable but not its result record did not
// commit: the older record is the state, and the thread recovers its previous operation.
TEST(DpfcStack, AStateRecordWithoutItsResultsIsNotCommitted) {
    fixture f(2);
    {
        auto s = f.create();
        s.push(0, 1);
    }
    const auto image = f.buf.snapshot();
    {
        auto s = f.open();
        s.push(0, 2);
    }
    // Keep the new state record, lose thread 0's new result record.
    const auto res = c::dpfc_region::results_offset;
    f.buf.restore_range(image, res, 64);
    auto s = f.open();
    EXPECT_EQ(s.unsynchronized_contents(), std::vector<u64>{1});
    const auto r = s.recover(0);
    EXPECT_EQ(r.seq, 1u);
    EXPECT_TRUE(r.took_effect);
    EXPECT_EQ(r.param, 1u);
    EXPECT_EQ(s.next_seq(0), 2u);
    EXPECT_TRUE(s.push(0, 3));
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{3, 1}));
    EXPECT_EQ(f.open().recover(0).seq, 2u);
}

// The other way round: the result record durable, the state record not: the operation did
// not take effect, recovery says so, and that stays so after later passes.
TEST(DpfcStack, AnOrphanResultIsClearedAndStaysNotTaken) {
    fixture f(2);
    {
        auto s = f.create();
        s.push(1, 7);
    }
    (void)f.open();  // recovery moves the redo value into the array: the next open writes nothing
    const auto image = f.buf.snapshot();
    {
        auto s = f.open();
        s.push(0, 8);
    }
    f.buf.restore_range(image, 64, 128);  // both state records as before the pass
    {
        auto s = f.open();
        EXPECT_EQ(s.unsynchronized_contents(), std::vector<u64>{7});
        auto r = s.recover(0);
        EXPECT_EQ(r.seq, 1u);
        EXPECT_FALSE(r.took_effect);
        EXPECT_EQ(r.param, 8u);
        EXPECT_EQ(s.next_seq(0), 2u);
        s.push(1, 9);  // a later pass with the epoch the orphan had
        s.push(1, 10);
    }
    auto s = f.open();
    EXPECT_FALSE(s.recover(0).took_effect);
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{10, 9, 7}));
}

TEST(DpfcStack, RecoveryCopiesRedoValuesIntoTheArray) {
    fixture f(1);
    {
        auto s = f.create();
        s.push(0, 41);
        s.push(0, 42);
    }
    auto r = f.r();
    ASSERT_EQ(r.committed().redo, 2u) << "42, and 41, deferred by the pass before";
    r.elements[0] = 0xdead;  // the elements' stores lost, their record durable
    r.elements[1] = 0xbeef;
    auto s = f.open();
    EXPECT_EQ(s.unsynchronized_contents(), (std::vector<u64>{42, 41}));
    EXPECT_EQ(f.r().committed().redo, 0u) << "recovery commits the state again without redo";
}

struct damage {
    const char* name;
    void (*apply)(c::dpfc_region);
};

TEST(DpfcStack, DamagedRegionsAreRefusedWithNothingWritten) {
    const damage cases[] = {
        {"magic", [](c::dpfc_region r) { r.header->magic ^= 1; }},
        {"threads", [](c::dpfc_region r) { r.header->threads = 0; }},
        {"capacity", [](c::dpfc_region r) { r.header->capacity = u64{1} << 60; }},
        {"element_size", [](c::dpfc_region r) { r.header->element_size = 4; }},
        {"epochs equal", [](c::dpfc_region r) { r.state[0].epoch = r.state[1].epoch; }},
        {"epoch limit", [](c::dpfc_region r) { r.state[r.newest()].epoch = u64{1} << 63; }},
        {"size", [](c::dpfc_region r) { r.state[r.newest()].size = 65; }},
        {"redo", [](c::dpfc_region r) { r.state[r.newest()].redo = 5; }},
        {"head", [](c::dpfc_region r) { r.state[r.newest()].head = 1; }},
        {"served", [](c::dpfc_region r) { r.state[r.newest()].served = 3; }},
        {"result epoch", [](c::dpfc_region r) { r.results[0].epoch = r.state[r.newest()].epoch + 2; }},
        {"result name", [](c::dpfc_region r) { r.results[0].name = 9; }},
        {"result status", [](c::dpfc_region r) { r.results[0].response.status = dfc_status::value; }},
        {"result seq", [](c::dpfc_region r) { r.results[1].param = 5; }},
    };
    for (const auto& k : cases) {
        fixture f(2);
        {
            auto s = f.create();
            s.push(0, 1);
            s.push(0, 2);
        }
        k.apply(f.r());
        const auto before = f.buf.snapshot();
        try {
            (void)f.open();
            ADD_FAILURE() << k.name << ": accepted";
        } catch (const damaged_pool& e) {
            EXPECT_EQ(e.kind(), pool_errc::damaged_object) << k.name;
            EXPECT_EQ(e.region(), "dpfc_stack") << k.name;
        }
        EXPECT_EQ(std::memcmp(before.data(), f.buf.data(), f.buf.size()), 0) << k.name << ": wrote";
    }
}

TEST(DpfcStack, ConcurrentExactlyOnce) {
    constexpr unsigned threads = 4;
    constexpr u64 ops = 3000;
    fixture f(threads, threads * ops);
    auto s = f.create();
    std::vector<std::vector<u64>> popped(threads);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            for (u64 i = 0; i < ops; ++i) {
                ASSERT_TRUE(s.push(t, u64(t) << 32 | i));
                if (i % 3 == 0) continue;
                if (auto v = s.pop(t)) popped[t].push_back(*v);
            }
        });
    for (auto& th : ts) th.join();
    std::vector<u64> all;
    for (auto& p : popped) all.insert(all.end(), p.begin(), p.end());
    for (auto v : s.unsynchronized_contents()) all.push_back(v);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a value popped twice";
    EXPECT_EQ(all.size(), threads * ops) << "a value lost";
    for (unsigned t = 0; t < threads; ++t) EXPECT_EQ(s.next_seq(t), 1 + ops + ops - (ops + 2) / 3);
}

using que = dpfc_queue<u64>;

TEST(DpfcQueue, BehavesLikeAQueueAcrossTheRingsWrap) {
    constexpr u64 cap = 7;  // not a power of two: positions wrap by modulo
    dfc_region_buffer buf(que::required_bytes(1, cap));
    auto q = que::create(buf.data(), buf.size(), 1, cap);
    std::deque<u64> model;
    std::mt19937_64 rng(11);
    for (int i = 0; i < 3000; ++i) {
        if (rng() % 2 == 0) {
            const bool ok = q.enqueue(0, u64(i));
            EXPECT_EQ(ok, model.size() < cap);
            if (ok) model.push_back(u64(i));
        } else {
            const auto v = q.dequeue(0);
            if (model.empty()) {
                EXPECT_FALSE(v);
            } else {
                ASSERT_TRUE(v);
                EXPECT_EQ(*v, model.front());
                model.pop_front();
            }
        }
        if (i % 500 == 0) {
            auto again = que::open(buf.data(), buf.size());  // recovery replays the redo values
            EXPECT_EQ(again.unsynchronized_contents(), std::vector<u64>(model.begin(), model.end()));
        }
    }
    EXPECT_EQ(q.unsynchronized_contents(), std::vector<u64>(model.begin(), model.end()));
    const auto r = q.recover(0);
    EXPECT_EQ(r.seq, 3000u);
    EXPECT_TRUE(r.took_effect);
}

TEST(DpfcQueue, RecoveryCopiesRedoValuesAcrossTheWrap) {
    constexpr u64 cap = 4;
    dfc_region_buffer buf(que::required_bytes(1, cap));
    {
        auto q = que::create(buf.data(), buf.size(), 1, cap);
        for (u64 i = 0; i < 3; ++i) q.enqueue(0, i);
        for (u64 i = 0; i < 3; ++i) EXPECT_EQ(q.dequeue(0), i);
        q.enqueue(0, 10);  // slot 3
        q.enqueue(0, 11);  // slot 0: wrapped
    }
    auto r = c::dpfc_region::at(buf.data(), 1);
    ASSERT_EQ(r.committed().redo, 2u) << "11, and 10, deferred by the pass before";
    r.elements[3] = 0xbeef;  // both elements' stores lost, across the wrap; their record durable
    r.elements[0] = 0xdead;
    auto q = que::open(buf.data(), buf.size());
    EXPECT_EQ(q.unsynchronized_contents(), (std::vector<u64>{10, 11}));
}

TEST(DpfcQueue, AQueueIsNoStackAndDamageIsRefused) {
    dfc_region_buffer buf(que::required_bytes(2, 8));
    { (void)que::create(buf.data(), buf.size(), 2, 8).enqueue(1, 5); }
    EXPECT_THROW((void)stk::open(buf.data(), buf.size()), damaged_pool);
    c::dpfc_region::at(buf.data(), 2).state[c::dpfc_region::at(buf.data(), 2).newest()].head = 8;
    const auto before = buf.snapshot();
    try {
        (void)que::open(buf.data(), buf.size());
        ADD_FAILURE() << "a head beyond the capacity was accepted";
    } catch (const damaged_pool& e) {
        EXPECT_EQ(e.region(), "dpfc_queue");
        EXPECT_NE(std::string(e.what()).find("head"), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(before.data(), buf.data(), buf.size()), 0);
}

TEST(DpfcQueue, ConcurrentExactlyOnceInEachProducersOrder) {
    constexpr unsigned threads = 4;
    constexpr u64 ops = 3000;
    dfc_region_buffer buf(que::required_bytes(threads, 64));
    auto q = que::create(buf.data(), buf.size(), threads, 64);  // small: full and empty both happen
    std::vector<std::vector<u64>> got(threads);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            u64 i = 0;
            while (i < ops) {
                if (q.enqueue(t, u64(t) << 32 | i)) ++i;
                if (auto v = q.dequeue(t)) got[t].push_back(*v);
            }
        });
    for (auto& th : ts) th.join();
    while (auto v = q.dequeue(0)) got[0].push_back(*v);
    std::vector<u64> all;
    for (auto& g : got) {
        std::vector<u64> last(threads, 0);  // per producer, the order a consumer saw
        for (auto v : g) {
            const auto p = v >> 32, i = v & 0xffffffff;
            EXPECT_TRUE(i == 0 || i >= last[p]) << "out of order";
            last[p] = i;
        }
        all.insert(all.end(), g.begin(), g.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a value dequeued twice";
    EXPECT_EQ(all.size(), threads * ops) << "a value lost";
}

}  // namespace
}  // namespace ferrite
