// sync::rw_spin_lock: exclusion between writers and readers, shared readers, no writer
// starved by a stream of readers.
#include "ferrite/sync/rw_spin_lock.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace {

using ferrite::sync::rw_spin_lock;

TEST(RwSpinLock, ReadersShareWritersExclude) {
    rw_spin_lock lock;
    ASSERT_TRUE(lock.try_lock_shared());
    ASSERT_TRUE(lock.try_lock_shared());
    EXPECT_FALSE(lock.try_lock());
    lock.unlock_shared();
    lock.unlock_shared();
    ASSERT_TRUE(lock.try_lock());
    EXPECT_FALSE(lock.try_lock_shared());
    EXPECT_FALSE(lock.try_lock());
    lock.unlock();
    EXPECT_TRUE(lock.try_lock_shared());
    lock.unlock_shared();
}

TEST(RwSpinLock, WritersSeeConsistentPairsUnderContention) {
    rw_spin_lock lock;
    std::uint64_t a = 0, b = 0;  // guarded: always equal when the lock is free
    std::atomic<bool> torn{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 20000; ++i) {
                if ((i + t) % 3 == 0) {
                    std::unique_lock held(lock);
                    ++a;
                    ++b;
                } else {
                    std::shared_lock held(lock);
                    if (a != b) torn = true;
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_FALSE(torn.load());
    EXPECT_EQ(a, b);
    EXPECT_GT(a, 0u);
}

TEST(RwSpinLock, AWaitingWriterHoldsNewReadersBack) {
    rw_spin_lock lock;
    lock.lock_shared();
    std::atomic<bool> written{false};
    std::thread writer([&] {
        lock.lock();
        written = true;
        lock.unlock();
    });
    // Once the writer waits, a new reader is refused until it has written.
    while (lock.try_lock_shared()) {
        lock.unlock_shared();
        std::this_thread::yield();
    }
    lock.unlock_shared();
    writer.join();
    EXPECT_TRUE(written.load());
}

}  // namespace
