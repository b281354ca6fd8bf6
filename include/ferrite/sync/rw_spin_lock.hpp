// ferrite/sync/rw_spin_lock.hpp: a reader-writer spin lock for short critical sections
// (ferrite-kv's key stripes: copy a value out, or write and publish one item).
//
// One word: bit 0 says a writer holds it, bit 1 that a writer waits (new readers then hold
// back, so a stream of readers cannot starve a writer), the rest counts readers in units
// of 4. Waiters spin with pmem::wait_hint() (the point where the crash simulator's scheduler
// passes its token: a thread blocked in the kernel on a lock a parked thread holds would
// never wake there) and give up their time slice now and then, so oversubscribed machines
// make progress. Meets the standard Lockable and SharedLockable requirements
// (std::unique_lock, std::shared_lock). Volatile only.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "ferrite/pmem/primitives.hpp"

namespace ferrite::sync {

class rw_spin_lock {
public:
    bool try_lock() noexcept {
        std::uint64_t seen = word_.load(std::memory_order_relaxed);
        return (seen & ~waiting) == 0 &&
               word_.compare_exchange_strong(seen, writer, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void lock() noexcept {
        for (unsigned spins = 0;; ++spins) {
            if (try_lock()) return;
            if ((word_.load(std::memory_order_relaxed) & waiting) == 0) word_.fetch_or(waiting, std::memory_order_relaxed);
            pause(spins);
        }
    }
    void unlock() noexcept { word_.fetch_and(~(writer | waiting), std::memory_order_release); }

    bool try_lock_shared() noexcept {
        std::uint64_t seen = word_.load(std::memory_order_relaxed);
        return (seen & (writer | waiting)) == 0 &&
               word_.compare_exchange_strong(seen, seen + reader, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void lock_shared() noexcept {
        for (unsigned spins = 0;; ++spins) {
            if (try_lock_shared()) return;
            pause(spins);
        }
    }
    void unlock_shared() noexcept { word_.fetch_sub(reader, std::memory_order_release); }

private:
    static constexpr std::uint64_t writer = 1, waiting = 2, reader = 4;

    static void pause(unsigned spins) noexcept {
        pmem::wait_hint();
        if (spins % 64 == 63) std::this_thread::yield();
    }

    std::atomic<std::uint64_t> word_{0};
};

}  // namespace ferrite::sync
