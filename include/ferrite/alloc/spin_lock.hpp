// ferrite/alloc/spin_lock.hpp: the lock of the heap and of the name directory, a
// test-and-test-and-set spin lock.
//
// Every heap operation is short (a few dozen stores and three or four fences), so waiters
// spin. Each iteration calls pmem::wait_hint(): a pause instruction normally, and under the
// crash simulator's one-thread-at-a-time scheduler the point where the token passes on (a
// thread spinning on a lock held by a parked thread would otherwise wait forever). After a
// while a waiter also gives up its time slice, so oversubscribed machines make progress.
// Volatile only; a crash releases it.
#pragma once

#include <atomic>
#include <thread>

#include "ferrite/pmem/primitives.hpp"

namespace ferrite::alloc {

class spin_lock {
public:
    void lock() noexcept {
        for (unsigned spins = 0;; ++spins) {
            if (!held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire))
                return;
            pmem::wait_hint();
            if (spins % 128 == 127) std::this_thread::yield();
        }
    }
    bool try_lock() noexcept {
        return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> held_{false};
};

namespace detail {
using alloc::spin_lock;  // the heap's name for it
}

}  // namespace ferrite::alloc
