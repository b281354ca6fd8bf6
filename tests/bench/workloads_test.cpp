// tests/bench/workloads_test.cpp: the workload table and its operation streams
// (bench/workloads.hpp): alternation, index ranges, unique values, determinism, and that a
// stream only issues the operations its workload declares.
#include "bench/workloads.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace fb = ferrite::bench;
using fb::op;

namespace {

const fb::workload& wl(const char* name) {
    const auto* w = fb::find_workload(name);
    EXPECT_NE(w, nullptr) << name;
    return *w;
}

}  // namespace

TEST(BenchWorkloads, TableHasTheThesisAndNextIssueWorkloads) {
    for (const char* n : {"push-pop", "swap-push-pop", "swap", "get-push-pop", "get", "rand-op", "enq-deq",
                          "deque-pairs"})
        EXPECT_NE(fb::find_workload(n), nullptr) << n;
    EXPECT_EQ(fb::find_workload("no-such"), nullptr);
    for (const auto& w : fb::workloads()) {
        EXPECT_FALSE(w.needs.empty()) << w.name;
        EXPECT_FALSE(w.summary.empty()) << w.name;
    }
}

TEST(BenchWorkloads, GetAndSwapWorkloadsStartFilled) {
    EXPECT_EQ(wl("push-pop").initial_size, 0u);
    EXPECT_EQ(wl("get").initial_size, fb::default_initial_size);
    EXPECT_EQ(wl("swap").initial_size, fb::default_initial_size);
    EXPECT_EQ(wl("get-push-pop").initial_size, fb::default_initial_size);
    EXPECT_EQ(wl("swap-push-pop").initial_size, fb::default_initial_size);
}

TEST(BenchWorkloads, PushPopAlternatesWithUniqueValues) {
    fb::op_stream s(wl("push-pop"), 3, 1, 0);
    for (std::uint64_t i = 0; i < 1000; ++i) {
        const auto st = s.next();
        if (i % 2 == 0) {
            ASSERT_EQ(st.o, op::push_back) << i;
            EXPECT_EQ(st.a, (std::uint64_t{4} << 40) | (i / 2));
        } else {
            ASSERT_EQ(st.o, op::pop_back) << i;
        }
    }
}

TEST(BenchWorkloads, GetIndicesStayBelowTheInitialSize) {
    fb::op_stream s(wl("get"), 0, 7, 1024);
    std::set<std::uint64_t> seen;
    for (int i = 0; i < 10000; ++i) {
        const auto st = s.next();
        ASSERT_EQ(st.o, op::get);
        ASSERT_LT(st.a, 1024u);
        seen.insert(st.a);
    }
    EXPECT_GT(seen.size(), 900u);  // spread over the range, not stuck
}

TEST(BenchWorkloads, SwapDrawsTwoIndicesBelowTheInitialSize) {
    fb::op_stream s(wl("swap"), 1, 7, 100);
    int distinct = 0;
    for (int i = 0; i < 1000; ++i) {
        const auto st = s.next();
        ASSERT_EQ(st.o, op::swap);
        ASSERT_LT(st.a, 100u);
        ASSERT_LT(st.b, 100u);
        distinct += st.a != st.b;
    }
    EXPECT_GT(distinct, 900);
}

TEST(BenchWorkloads, MixedWorkloadsInterleaveHalfAndHalf) {
    fb::op_stream s(wl("swap-push-pop"), 0, 1, 64);
    const op want[] = {op::push_back, op::swap, op::pop_back, op::swap};
    for (int i = 0; i < 400; ++i) ASSERT_EQ(s.next().o, want[i % 4]) << i;
    fb::op_stream g(wl("get-push-pop"), 0, 1, 64);
    const op gwant[] = {op::push_back, op::get, op::pop_back, op::get};
    for (int i = 0; i < 400; ++i) {
        const auto st = g.next();
        ASSERT_EQ(st.o, gwant[i % 4]) << i;
        if (st.o == op::get) {
            ASSERT_LT(st.a, 64u);
        }
    }
}

TEST(BenchWorkloads, RandOpIsAboutHalfPushes) {
    fb::op_stream s(wl("rand-op"), 2, 5, 0);
    int pushes = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
        const auto o = s.next().o;
        ASSERT_TRUE(o == op::push_back || o == op::pop_back);
        pushes += o == op::push_back;
    }
    EXPECT_GT(pushes, n * 45 / 100);
    EXPECT_LT(pushes, n * 55 / 100);
}

TEST(BenchWorkloads, EnqDeqPairsPushBackWithPopFront) {
    fb::op_stream s(wl("enq-deq"), 0, 1, 0);
    for (int i = 0; i < 200; ++i) ASSERT_EQ(s.next().o, i % 2 ? op::pop_front : op::push_back) << i;
}

TEST(BenchWorkloads, DequePairsPopTheSideTheyPushed) {
    fb::op_stream s(wl("deque-pairs"), 0, 9, 0);
    int front = 0;
    for (int i = 0; i < 2000; ++i) {
        const auto push = s.next().o;
        const auto pop = s.next().o;
        if (push == op::push_front) {
            ASSERT_EQ(pop, op::pop_front);
            ++front;
        } else {
            ASSERT_EQ(push, op::push_back);
            ASSERT_EQ(pop, op::pop_back);
        }
    }
    EXPECT_GT(front, 800);
    EXPECT_LT(front, 1200);
}

TEST(BenchWorkloads, StreamsAreDeterministicPerSeedAndThread) {
    const auto& w = wl("rand-op");
    fb::op_stream a(w, 1, 42, 0), b(w, 1, 42, 0), other_thread(w, 2, 42, 0), other_seed(w, 1, 43, 0);
    bool thread_differs = false, seed_differs = false;
    for (int i = 0; i < 256; ++i) {
        const auto x = a.next(), y = b.next(), t = other_thread.next(), s = other_seed.next();
        ASSERT_EQ(x.o, y.o);
        ASSERT_EQ(x.a, y.a);
        thread_differs = thread_differs || t.o != x.o;
        seed_differs = seed_differs || s.o != x.o;
    }
    EXPECT_TRUE(thread_differs);
    EXPECT_TRUE(seed_differs);
}

TEST(BenchWorkloads, StreamsIssueOnlyTheOperationsTheyNeed) {
    for (const auto& w : fb::workloads()) {
        fb::op_stream s(w, 0, 3, 16);
        for (int i = 0; i < 2000; ++i) {
            const auto o = s.next().o;
            ASSERT_NE(std::find(w.needs.begin(), w.needs.end(), o), w.needs.end())
                << w.name << " issued " << fb::to_string(o);
        }
    }
}

TEST(BenchWorkloads, CanRunNamesTheMissingOperations) {
    std::vector<op> missing;
    EXPECT_TRUE(fb::can_run({op::push_back, op::pop_back}, wl("push-pop")));
    EXPECT_FALSE(fb::can_run({op::push_back, op::pop_back}, wl("get-push-pop"), &missing));
    EXPECT_EQ(missing, std::vector<op>{op::get});
}
