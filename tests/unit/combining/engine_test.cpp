// Both engines (PFC, FPFC) with both wait policies (and PFC without its sticky combiner), on a fetch-and-add structure: every
// request is applied exactly once, responses are those of some sequential order, batches
// form under contention (threads > cores), and threads may start and exit during use.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "counting_structure.hpp"
#include "ferrite/combining/fpfc.hpp"
#include "ferrite/combining/pfc.hpp"

namespace ferrite::combining {
namespace {

using ferrite_test::counting_structure;

template <class Engine>
class EngineTest : public ::testing::Test {};
using engines = ::testing::Types<pfc<counting_structure>, pfc<counting_structure, sync::pure_spin>,
                                 pfc<counting_structure, sync::not_sticky<sync::spin_then_futex<>>>,
                                 fpfc<counting_structure>, fpfc<counting_structure, sync::pure_spin>>;
TYPED_TEST_SUITE(EngineTest, engines);

// Runs `threads` threads of `ops` fetch-and-add(1) each; returns every response.
template <class Engine>
std::vector<std::uint64_t> hammer(Engine& e, int threads, int ops) {
    std::vector<std::vector<std::uint64_t>> got(threads);
    std::vector<std::thread> ts;
    std::atomic<int> ready{0};
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            ready.fetch_add(1);  // start together: contention is what the tests are about
            while (ready.load() < threads) std::this_thread::yield();
            for (int i = 0; i < ops; ++i) got[t].push_back(e.apply(1));
        });
    for (auto& th : ts) th.join();
    std::vector<std::uint64_t> all;
    for (auto& g : got) all.insert(all.end(), g.begin(), g.end());
    return all;
}

TYPED_TEST(EngineTest, EveryRequestAppliedExactlyOnce) {
    TypeParam e;
    auto all = hammer(e, 8, 3000);
    std::sort(all.begin(), all.end());
    for (std::uint64_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i) << "responses are a permutation of 0..n-1";
    EXPECT_EQ(e.structure().value, 8u * 3000u);
    EXPECT_FALSE(e.structure().overlap) << "two combiners at once";
}

TYPED_TEST(EngineTest, PerThreadResponsesIncrease) {
    // Linearizability of one thread's own requests: each sees a later state than its previous.
    TypeParam e;
    std::vector<std::thread> ts;
    std::atomic<bool> ok{true};
    for (int t = 0; t < 6; ++t)
        ts.emplace_back([&] {
            std::uint64_t last = 0;
            for (int i = 0; i < 2000; ++i) {
                auto r = e.apply(1);
                if (i > 0 && r <= last) ok = false;
                last = r;
            }
        });
    for (auto& th : ts) th.join();
    EXPECT_TRUE(ok.load());
}

TYPED_TEST(EngineTest, BatchesFormUnderOversubscription) {
    // Batching depends on preemption; a few rounds make a batch of one alone vanishingly rare.
    TypeParam e;
    for (int round = 0; round < 5 && e.structure().largest_batch < 2; ++round) hammer(e, 16, 2000);
    EXPECT_GT(e.structure().largest_batch, 1u);
    EXPECT_GE(e.stats().mean_batch_size(), 1.0);
}

TYPED_TEST(EngineTest, ThreadsJoiningAndExitingDuringUse) {
    TypeParam e;
    std::atomic<std::uint64_t> applied{0};
    std::vector<std::thread> longlived;
    std::atomic<bool> stop{false};
    for (int t = 0; t < 2; ++t)
        longlived.emplace_back([&] {
            while (!stop.load()) {
                e.apply(1);
                applied.fetch_add(1);
            }
        });
    for (int wave = 0; wave < 30; ++wave) {  // short-lived threads come and go
        std::vector<std::thread> ts;
        for (int t = 0; t < 3; ++t)
            ts.emplace_back([&] {
                for (int i = 0; i < 50; ++i) e.apply(1);
                applied.fetch_add(50);
            });
        for (auto& th : ts) th.join();
    }
    stop = true;
    for (auto& th : longlived) th.join();
    EXPECT_EQ(e.structure().value, applied.load());
}

TEST(EngineSingleThread, NoWaitingNoBatching) {
    pfc<counting_structure> e;
    for (int i = 0; i < 100; ++i) EXPECT_EQ(e.apply(2), 2u * i);
    EXPECT_DOUBLE_EQ(e.stats().mean_batch_size(), 1.0);
}

// PFC's sticky combiner (sticky_combiner.hpp): a thread that did not run the last pass leaves
// a free lock alone for a while, waiting for the last combiner. Threads that take turns (one
// operation each, never together) find the last combiner absent every time: each deferral
// runs out and halves the budget, down to its floor, and every operation still completes.
// Without the sticky combiner nobody defers and the budget stays where it started.
template <class Engine>
void take_turns(Engine& e, unsigned turns) {
    for (unsigned i = 0; i < turns; ++i) std::thread([&] { (void)e.apply(1); }).join();
}

TEST(PfcStickyCombiner, DeferralToAnAbsentLastCombinerShrinksToItsFloor) {
    using engine = pfc<counting_structure>;
    engine e;
    EXPECT_EQ(e.deferral_budget(), sticky_combiner::max_deferral);
    take_turns(e, 1);
    EXPECT_EQ(e.deferral_budget(), sticky_combiner::max_deferral) << "no deferral: nobody ran a pass before";
    take_turns(e, 1);  // waits for the first thread, which has exited
    EXPECT_EQ(e.deferral_budget(), sticky_combiner::max_deferral / 2);
    (void)e.apply(1);  // this thread now, twice: the second is the last combiner itself
    (void)e.apply(1);
    EXPECT_EQ(e.deferral_budget(), sticky_combiner::max_deferral / 4);
    take_turns(e, 16);
    EXPECT_EQ(e.deferral_budget(), sticky_combiner::min_deferral);
    EXPECT_EQ(e.structure().value, 20u);
}

TEST(PfcStickyCombiner, NotStickyNeverDefers) {
    pfc<counting_structure, sync::not_sticky<sync::spin_then_futex<>>> e;
    take_turns(e, 8);
    EXPECT_EQ(e.deferral_budget(), sticky_combiner::max_deferral);
    EXPECT_EQ(e.structure().value, 8u);
}

}  // namespace
}  // namespace ferrite::combining
