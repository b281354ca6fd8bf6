// world_stopper: workers stop at arbitrary instructions and resume; a stop that arrives in a
// critical section waits for its end. Not built for ThreadSanitizer (see the header).
#include "ferrite/sim/stop_the_world.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ferrite::sim {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif

TEST(StopTheWorld, StoppedWorkersMakeNoProgressUntilResumed) {
    if (under_tsan) GTEST_SKIP() << "TSan delays asynchronous signals";
    constexpr unsigned n = 3;
    world_stopper stopper(n);
    std::vector<std::atomic<std::uint64_t>> counters(n);
    std::atomic<bool> quit{false};
    std::atomic<unsigned> registered{0};
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < n; ++t)
        ts.emplace_back([&, t] {
            stopper.register_worker(t);
            registered.fetch_add(1);
            while (!quit.load(std::memory_order_relaxed)) counters[t].fetch_add(1, std::memory_order_relaxed);
            stopper.finish_worker(t);
        });
    while (registered.load() < n) std::this_thread::yield();
    for (int round = 0; round < 50; ++round) {
        EXPECT_TRUE(stopper.stop());
        std::vector<std::uint64_t> before;
        for (auto& c : counters) before.push_back(c.load());
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        for (unsigned t = 0; t < n; ++t) EXPECT_EQ(counters[t].load(), before[t]) << "round " << round;
        stopper.resume();
    }
    quit = true;
    for (auto& th : ts) th.join();
    EXPECT_FALSE(stopper.stop()) << "finished workers are not stopped";
}

TEST(StopTheWorld, StopInsideCriticalSectionWaitsForItsEnd) {
    if (under_tsan) GTEST_SKIP() << "TSan delays asynchronous signals";
    world_stopper stopper(1);
    std::atomic<int> phase{0};
    std::atomic<bool> left_section{false};
    std::thread worker([&] {
        stopper.register_worker(0);
        {
            world_stopper::critical_section cs;
            phase = 1;
            while (phase.load() != 2) {}  // the controller is stopping us meanwhile
        }
        left_section = true;  // parked right at the end of the section, before this store
        stopper.finish_worker(0);
    });
    while (phase.load() != 1) {}
    std::thread controller([&] {
        stopper.stop();
        EXPECT_FALSE(left_section.load()) << "stop returned before the worker parked";
        stopper.resume();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    phase = 2;
    controller.join();
    worker.join();
    EXPECT_TRUE(left_section.load());
}

}  // namespace
}  // namespace ferrite::sim
