// token_scheduler: one thread at a time, and the interleaving is a function of the seed.
#include "ferrite/sim/token_scheduler.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

namespace ferrite::sim {
namespace {

// The order in which `threads` threads of `steps` yields each ran.
std::vector<unsigned> interleaving(unsigned threads, unsigned steps, std::uint64_t seed) {
    token_scheduler sched(threads, seed);
    std::vector<unsigned> order;
    int running = 0;
    bool overlap = false;
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
            sched.enter(t);
            for (unsigned i = 0; i < steps; ++i) {
                if (++running != 1) overlap = true;  // token holder only: no data race
                order.push_back(t);
                --running;
                sched.yield(t);
            }
            sched.leave(t);
        });
    for (auto& th : ts) th.join();
    EXPECT_FALSE(overlap) << "two threads ran at once";
    return order;
}

TEST(TokenScheduler, SameSeedSameInterleaving) {
    const auto a = interleaving(4, 50, 7);
    EXPECT_EQ(a.size(), 200u);
    EXPECT_EQ(interleaving(4, 50, 7), a);
}

TEST(TokenScheduler, DifferentSeedsInterleaveDifferently) {
    EXPECT_NE(interleaving(4, 50, 1), interleaving(4, 50, 2));
}

TEST(TokenScheduler, ThreadsReallyInterleave) {
    const auto order = interleaving(3, 40, 3);
    std::size_t switches = 0;
    for (std::size_t i = 1; i < order.size(); ++i) switches += order[i] != order[i - 1];
    EXPECT_GT(switches, 20u);
}

TEST(TokenScheduler, SingleThreadRunsThrough) {
    EXPECT_EQ(interleaving(1, 10, 9), std::vector<unsigned>(10, 0));
}

}  // namespace
}  // namespace ferrite::sim
