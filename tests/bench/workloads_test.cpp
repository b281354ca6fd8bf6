// tests/bench/workloads_test.cpp: the workload table and its operation streams
// (bench/workloads.hpp): alternation, index ranges, unique values, determinism, and that a
// stream only issues the operations its workload declares; for the keyed workloads, the
// operation proportions of each mix, the keys they draw (present, new, in range) and the
// key distribution.
#include "bench/registry.hpp"
#include "bench/workloads.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
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
        EXPECT_TRUE(!w.needs.empty() || w.needs_reopen) << w.name;  // set-recovery needs a reopen, no op
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
        if (w.kind == fb::pattern::set_recovery || w.kind == fb::pattern::tree_recovery)
            continue;  // not a stream: the harness times an open
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

namespace {

// Operation counts of n draws of a stream.
std::array<std::uint64_t, fb::op_count> mix_of(fb::op_stream& s, int n) {
    std::array<std::uint64_t, fb::op_count> c{};
    for (int i = 0; i < n; ++i) ++c[static_cast<std::size_t>(s.next().o)];
    return c;
}

double share(const std::array<std::uint64_t, fb::op_count>& c, op o, int n) {
    return static_cast<double>(c[static_cast<std::size_t>(o)]) / n;
}

}  // namespace

TEST(BenchWorkloads, KeyedWorkloadsAreKeyedWithTheirDefaults) {
    for (const char* n : {"set-mix", "ycsb-load", "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-e"}) {
        const auto& w = wl(n);
        EXPECT_EQ(w.family, fb::op_family::keyed) << n;
        EXPECT_EQ(w.initial_size, std::string(n) == "ycsb-load" ? 0u : fb::default_keys) << n;
        EXPECT_EQ(w.distribution, std::string(n) == "set-mix" ? fb::key_distribution::uniform
                                                              : fb::key_distribution::zipfian) << n;
    }
    EXPECT_EQ(wl("push-pop").family, fb::op_family::sequence);
    EXPECT_EQ(fb::key_distribution_from_string("zipfian"), fb::key_distribution::zipfian);
    EXPECT_EQ(fb::key_distribution_from_string("uniform"), fb::key_distribution::uniform);
    EXPECT_FALSE(fb::key_distribution_from_string("normal"));
}

TEST(BenchWorkloads, SetMixIsReadsPercentContainsAndTheRestHalfInsertHalfErase) {
    const int n = 200000;
    for (unsigned reads : {90u, 50u, 0u, 100u}) {
        fb::key_options k;
        k.reads_percent = reads;
        fb::op_stream s(wl("set-mix"), 1, 5, 1000, k);
        const auto c = mix_of(s, n);
        const double r = reads / 100.0;
        EXPECT_NEAR(share(c, op::contains, n), r, 0.01) << reads;
        EXPECT_NEAR(share(c, op::insert, n), (1 - r) / 2, 0.01) << reads;
        EXPECT_NEAR(share(c, op::erase, n), (1 - r) / 2, 0.01) << reads;
    }
    // Keys in [0, 2N): half of them are prefilled (even), so about half the draws are present.
    fb::op_stream s(wl("set-mix"), 0, 5, 1000);
    int present = 0;
    for (int i = 0; i < n; ++i) {
        const auto st = s.next();
        ASSERT_LT(st.a, 2000u);
        present += st.a % 2 == 0;
    }
    EXPECT_NEAR(static_cast<double>(present) / n, 0.5, 0.01);
}

TEST(BenchWorkloads, YcsbMixesHaveYcsbsProportions) {
    const int n = 200000;
    fb::op_stream a(wl("ycsb-a"), 0, 1, 1000), b(wl("ycsb-b"), 0, 1, 1000), c(wl("ycsb-c"), 0, 1, 1000),
        e(wl("ycsb-e"), 0, 1, 1000), load(wl("ycsb-load"), 0, 1, 0);
    const auto ma = mix_of(a, n), mb = mix_of(b, n), mc = mix_of(c, n), me = mix_of(e, n), ml = mix_of(load, n);
    EXPECT_NEAR(share(ma, op::get, n), 0.50, 0.01);
    EXPECT_NEAR(share(ma, op::put, n), 0.50, 0.01);
    EXPECT_NEAR(share(mb, op::get, n), 0.95, 0.005);
    EXPECT_NEAR(share(mb, op::put, n), 0.05, 0.005);
    EXPECT_EQ(share(mc, op::get, n), 1.0);
    EXPECT_NEAR(share(me, op::scan, n), 0.95, 0.005);
    EXPECT_NEAR(share(me, op::insert, n), 0.05, 0.005);
    EXPECT_EQ(share(ml, op::insert, n), 1.0);
}

TEST(BenchWorkloads, YcsbReadsPresentKeysAndInsertsNewOnes) {
    const std::uint64_t keys = 500;
    fb::op_stream e(wl("ycsb-e"), 2, 3, keys);
    std::set<std::uint64_t> inserted;
    std::uint64_t longest = 0, shortest = ~std::uint64_t{0};
    for (int i = 0; i < 100000; ++i) {
        const auto st = e.next();
        if (st.o == op::scan) {
            ASSERT_EQ(st.a % 2, 0u);  // a prefilled key, prefill_key(r) with r < keys
            ASSERT_LT(st.a, fb::prefill_key(keys));
            longest = std::max(longest, st.b);
            shortest = std::min(shortest, st.b);
        } else {
            ASSERT_EQ(st.a % 2, 1u);  // new keys are odd: never prefilled
            ASSERT_TRUE(inserted.insert(st.a).second) << "a new key twice";
        }
    }
    EXPECT_EQ(shortest, 1u);
    EXPECT_EQ(longest, fb::max_scan_length);
    // Other threads' new keys differ too.
    fb::op_stream load0(wl("ycsb-load"), 0, 3, 0), load1(wl("ycsb-load"), 1, 3, 0);
    std::set<std::uint64_t> seen;
    for (int i = 0; i < 1000; ++i) {
        ASSERT_TRUE(seen.insert(load0.next().a).second);
        ASSERT_TRUE(seen.insert(load1.next().a).second);
    }
    fb::op_stream a(wl("ycsb-a"), 0, 3, keys);
    for (int i = 0; i < 10000; ++i) {
        const auto st = a.next();
        ASSERT_EQ(st.a % 2, 0u);
        ASSERT_LT(st.a, fb::prefill_key(keys));
    }
}

TEST(BenchWorkloads, ZipfianKeysAreSkewedAndUniformOnesAreNot) {
    const std::uint64_t keys = 1000;
    const int n = 200000;
    auto hottest_share = [&](fb::key_distribution d) {
        fb::key_options k;
        k.distribution = d;
        fb::op_stream s(wl("ycsb-c"), 0, 9, keys, k);
        std::map<std::uint64_t, int> count;
        for (int i = 0; i < n; ++i) ++count[s.next().a];
        int top = 0;
        for (const auto& [key, c] : count) top = std::max(top, c);
        return static_cast<double>(top) / n;
    };
    EXPECT_GT(hottest_share(fb::key_distribution::zipfian), 0.03);  // 1/zeta(10^10) = 3.8 %
    EXPECT_LT(hottest_share(fb::key_distribution::uniform), 0.002);  // 1/1000 plus noise
}

// The durable-set workloads: set-growth's stream inserts the thread's new keys in order (its
// steady phase erases them by new_key_of in the same order); set-recovery is offered only to
// kinds that can reopen.
TEST(BenchWorkloads, SetGrowthInsertsEachThreadsNewKeysInOrder) {
    const auto& g = wl("set-growth");
    EXPECT_EQ(g.family, fb::op_family::keyed);
    for (unsigned tid : {0u, 3u}) {
        fb::op_stream s(g, tid, 5, 1024);
        for (std::uint64_t seq = 0; seq < 100; ++seq) {
            const auto st = s.next();
            ASSERT_EQ(st.o, op::insert);
            ASSERT_EQ(st.a, fb::new_key_of(tid, seq));
            ASSERT_EQ(st.a % 2, 1u);  // never a prefilled key
        }
    }
    EXPECT_NE(fb::new_key_of(0, 7), fb::new_key_of(1, 7));
}

TEST(BenchWorkloads, SetRecoveryRunsOnlyOnKindsThatReopen) {
    const auto& r = wl("set-recovery");
    EXPECT_TRUE(r.needs_reopen);
    EXPECT_EQ(r.initial_size, fb::default_keys);
    fb::subject_kind k{"k", "a keyed kind", {op::insert, op::erase}, nullptr, fb::op_family::keyed};
    EXPECT_FALSE(fb::can_run(k, r));
    EXPECT_TRUE(fb::can_run(k, wl("set-growth")));
    k.reopens = true;
    EXPECT_TRUE(fb::can_run(k, r));
    k.family = fb::op_family::sequence;
    EXPECT_FALSE(fb::can_run(k, r));
}

// tree-recovery: a reopen and a lookup, so only kinds that reopen and have get.
TEST(BenchWorkloads, TreeRecoveryRunsOnlyOnKindsThatReopenAndGet) {
    const auto& r = wl("tree-recovery");
    EXPECT_TRUE(r.needs_reopen);
    EXPECT_EQ(r.family, fb::op_family::keyed);
    fb::subject_kind k{"k", "a keyed kind", {op::insert, op::erase, op::get}, nullptr, fb::op_family::keyed};
    EXPECT_FALSE(fb::can_run(k, r));
    k.reopens = true;
    EXPECT_TRUE(fb::can_run(k, r));
    k.supports = {op::insert, op::erase, op::contains};
    EXPECT_FALSE(fb::can_run(k, r)) << "no get";
    for (const char* s : {"cpnvm-tree", "cpnvm-tree-lazy"}) EXPECT_TRUE(fb::can_run(*fb::find_subject(s), r)) << s;
    EXPECT_FALSE(fb::can_run(*fb::find_subject("volatile-tree"), r));
}
