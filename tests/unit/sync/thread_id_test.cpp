// thread ids: dense, distinct among live threads, reused after a thread exits.
#include "ferrite/sync/thread_id.hpp"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>
#include <mutex>

namespace ferrite::sync {
namespace {

TEST(ThreadId, DistinctAmongLiveThreadsAndStable) {
    const unsigned mine = this_thread_id();
    EXPECT_EQ(this_thread_id(), mine);
    std::mutex m;
    std::set<unsigned> ids{mine};
    std::atomic<int> arrived{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 8; ++t)
        ts.emplace_back([&] {
            const unsigned id = this_thread_id();
            {
                std::lock_guard lock(m);
                EXPECT_TRUE(ids.insert(id).second) << "id " << id << " given twice";
            }
            arrived.fetch_add(1);
            while (arrived.load() < 8) std::this_thread::yield();  // all alive at once
        });
    for (auto& th : ts) th.join();
    EXPECT_EQ(ids.size(), 9u);
    for (unsigned id : ids) EXPECT_LT(id, thread_id_high_water());
}

TEST(ThreadId, ReusedAfterThreadsExit) {
    (void)this_thread_id();
    for (int wave = 0; wave < 50; ++wave) {
        std::thread([] { (void)this_thread_id(); }).join();
    }
    EXPECT_LT(thread_id_high_water(), 20u) << "ids of exited threads must be reused";
}

}  // namespace
}  // namespace ferrite::sync
