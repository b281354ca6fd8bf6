// Thread-id claims seen from the containers (combining/dfc_tid_claims.hpp): the issue's
// scenario, two threads enqueueing as thread id 0, now fails loudly instead of losing
// acknowledged operations; a catalog object handed to many threads shares one set of claims;
// ids can be handed between the threads of a pool with release().
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "catalog_test_support.hpp"
#include "dfc_test_support.hpp"
#include "ferrite/containers/dfc_queue.hpp"

namespace ferrite {
namespace {

using ferrite_test::dfc_region_buffer;
using queue = dfc_queue<std::uint64_t>;
using ferrite_test::CatalogTest;
using u64 = std::uint64_t;

// Before the claims: 200,000 enqueue(0, ...) from two threads returned true and 112-126k
// were in the queue. Now one thread holds id 0 and the other's every attempt throws while it
// lives, so every enqueue that returned true is in the queue, in order.
TEST(DfcTidClaimQueue, TwoThreadsOnOneIdThrowInsteadOfLosingEnqueues) {
    constexpr u64 per_thread = 100'000;
    dfc_region_buffer buf(queue::required_bytes(2, 2 * per_thread));
    auto q = queue::create(buf.data(), buf.size(), 2);
    std::atomic<u64> acknowledged{0}, refused{0};
    std::latch both_done(2);
    auto worker = [&](u64 who) {
        for (u64 i = 0; i < per_thread; ++i) {
            try {
                if (q.enqueue(0, who << 32 | i)) acknowledged.fetch_add(1, std::memory_order_relaxed);
            } catch (const usage_error&) {
                refused.fetch_add(1, std::memory_order_relaxed);
            }
        }
        both_done.arrive_and_wait();  // both alive until both are done: no hand-over at exit
    };
    std::thread a(worker, 1), b(worker, 2);
    a.join();
    b.join();
    const auto contents = q.unsynchronized_contents();
    EXPECT_EQ(contents.size(), acknowledged.load()) << "an acknowledged enqueue was lost";
    EXPECT_EQ(acknowledged.load(), per_thread) << "one thread held id 0 throughout";
    EXPECT_EQ(refused.load(), per_thread) << "every attempt of the other thread was refused";
    for (u64 i = 0; i < contents.size(); ++i) ASSERT_EQ(contents[i] & 0xffffffffu, i) << "order";
    EXPECT_EQ(q.recover(0).seq, per_thread) << "refused attempts took no seq";
}

TEST(DfcTidClaimQueue, IdsHandedBetweenPoolThreadsWithRelease) {
    // A "thread pool": each task runs on some worker as thread id 0, then releases it.
    dfc_region_buffer buf(queue::required_bytes(1, 64));
    auto q = queue::create(buf.data(), buf.size(), 1);
    std::vector<std::thread> workers;
    std::atomic<u64> next{0};
    std::atomic_flag busy = ATOMIC_FLAG_INIT;  // one task at a time holds the id
    for (int w = 0; w < 4; ++w)
        workers.emplace_back([&] {
            for (;;) {
                while (busy.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
                const u64 task = next.fetch_add(1);
                if (task < 40) {
                    EXPECT_TRUE(q.enqueue(0, task));
                    q.release(0);
                }
                busy.clear(std::memory_order_release);
                if (task >= 40) return;
            }
        });
    for (auto& t : workers) t.join();
    const auto c = q.unsynchronized_contents();
    ASSERT_EQ(c.size(), 40u);
    for (u64 i = 0; i < 40; ++i) EXPECT_EQ(c[i], i);
}

TEST_F(CatalogTest, ACatalogObjectSharedByThreadsSharesItsClaims) {
    catalog names(*pool_, *heap_);
    auto q = names.open_dfc_queue<u64>("jobs", 2, 16);
    ASSERT_TRUE(q->enqueue(0, 1));
    std::string message;
    std::thread([&] {
        auto same = names.open_dfc_queue<u64>("jobs", 2);  // the same object for the same name
        EXPECT_EQ(same, q);
        try {
            (void)same->enqueue(0, 2);
        } catch (const usage_error& e) {
            message = e.what();
        }
        EXPECT_TRUE(same->enqueue(1, 3)) << "its own id is free";
    }).join();
    EXPECT_NE(message.find("dfc_queue: thread id 0 is in use by another thread"), std::string::npos) << message;
    EXPECT_EQ(q->unsynchronized_contents(), (std::vector<u64>{1, 3}));
}

}  // namespace
}  // namespace ferrite
