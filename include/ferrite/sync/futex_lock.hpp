// ferrite/sync/futex_lock.hpp: the combiner lock of PFC (thesis Alg 5.5), a futex word with
// three states: FREE, TAKEN (held, nobody sleeps), CONTENDED (held, someone may sleep).
//
//   try_lock   CAS FREE -> TAKEN
//   lock       try; spin `spin_count` iterations re-trying; then mark CONTENDED and sleep on
//              the word until it is FREE (Drepper's "Futexes Are Tricky", mutex #2, which
//              the thesis follows)
//   unlock     exchange(FREE); if it was CONTENDED, wake every sleeper
//
// Unlike a plain mutex, a combining waiter does not only wait for the lock: it waits for
// "my result is ready OR the lock is free". wait_for(ready) implements that: it returns
// true holding the lock, or false when ready() became true (someone combined for us). The
// combiner's unlock wakes all sleepers, and each re-checks its own result first.
//
// Under the crash simulator (an observer is installed) nothing sleeps: the futex phase
// becomes spinning with pmem::wait_hint(), which passes the simulator's token.
#pragma once

#include <atomic>
#include <cstdint>

#include "ferrite/pmem/observer.hpp"
#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sync/futex.hpp"
#include "ferrite/sync/wait_policy.hpp"

namespace ferrite::sync {

template <class WaitPolicy = spin_then_futex<>>
class futex_lock {
public:
    bool try_lock() noexcept {
        std::uint32_t expected = word_free;
        return word_.compare_exchange_strong(expected, word_taken, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }

    void lock() noexcept {
        wait_for([] { return false; });
    }

    // Returns true holding the lock, false once ready() is true (not holding it).
    template <class Ready>
    bool wait_for(Ready&& ready) noexcept {
        if constexpr (!WaitPolicy::uses_futex) {
            for (;;) {
                if (ready()) return false;
                if (word_.load(std::memory_order_relaxed) == word_free && try_lock()) return true;
                pmem::wait_hint();
            }
        } else {
            for (unsigned i = 0; i < WaitPolicy::spin_count; ++i) {
                if (ready()) return false;
                if (word_.load(std::memory_order_relaxed) == word_free && try_lock()) return true;
                pmem::wait_hint();
            }
            const bool simulated = pmem::installed_observer() != nullptr;
            for (;;) {
                if (ready()) return false;
                // Take the lock as CONTENDED (we may have sleepers to wake at unlock), or
                // announce a sleeper on a held lock and sleep until the word changes.
                std::uint32_t w = word_.exchange(word_contended, std::memory_order_acquire);
                if (w == word_free) return true;
                if (ready()) return false;
                if (simulated)
                    pmem::wait_hint();
                else
                    futex_wait(word_, word_contended);
            }
        }
    }

    void unlock() noexcept {
        if (word_.exchange(word_free, std::memory_order_release) == word_contended)
            futex_wake_all(word_);
    }

    bool is_locked() const noexcept { return word_.load(std::memory_order_relaxed) != word_free; }

private:
    std::atomic<std::uint32_t> word_{word_free};
};

}  // namespace ferrite::sync
