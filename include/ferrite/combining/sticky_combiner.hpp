// ferrite/combining/sticky_combiner.hpp: the sticky combiner, who runs the next phase of
// DFC (dfc.hpp) or the next pass of PFC (pfc.hpp).
//
// Not in the papers (docs/references.md, [DFC], [PFC]): there, whoever wins the combiner lock
// runs the phase. Here a thread whose operation is pending, and that did not run the last phase,
// leaves a free lock to the thread that did for up to `deferral` observations, so that this
// thread (back with its next announcement in a few hundred nanoseconds) collects both, and
// the combiner's lines (DFC: lock, epoch and roots, nodes, bitmap, scratch; PFC: lock, the
// structure's state record and lines, the list walk's scratch) stay in one core's
// cache. Adaptive: a deferral that saw the lock free and ended with the operation answered
// doubles the budget (up to max_deferral); one that runs out, nobody having taken the lock
// (the last combiner is busy elsewhere), halves it (down to min_deferral, a few, so that a
// deferral can still pay off and the budget grow again), so threads that take turns with
// pauses between operations soon wait for each other only briefly. Measured in
// docs/results.md and docs/dfc.md.
//
// Crash consistency: nothing here is persistent. It changes who combines, never what a
// phase does, and it only delays a waiter: it returns at the latest after 4 x max_deferral
// observations, and the wait goes on in the combiner lock (sync::futex_lock::wait_for).
#pragma once

#include <algorithm>
#include <atomic>

#include "ferrite/pmem/primitives.hpp"

namespace ferrite::combining {

struct sticky_combiner {
    static constexpr unsigned min_deferral = 8;
    static constexpr unsigned max_deferral = 256;
    static constexpr unsigned no_combiner = ~0u;  // no thread has run a phase since open

    // Wait while `done()` is false and the lock, when free, is left to the last combiner
    // (see the header); adapts `deferral`, the budget shared by the threads.
    template <class Lock, class Done>
    static void defer_to_last_combiner(const Lock& lock, std::atomic<unsigned>& deferral, Done& done) noexcept {
        const unsigned budget = deferral.load(std::memory_order_relaxed);
        unsigned free_seen = 0;
        // Bounded: a lock held throughout leaves the rest of the wait to lock.wait_for.
        for (unsigned i = 0; i < 4 * max_deferral; ++i) {
            if (done()) {  // answered; after leaving a free lock alone: the deferral paid
                if (free_seen > 0 && budget < max_deferral)
                    deferral.store(std::min(max_deferral, 2 * budget + 1), std::memory_order_relaxed);
                return;
            }
            if (!lock.is_locked() && ++free_seen > budget) {
                deferral.store(std::max(min_deferral, budget / 2), std::memory_order_relaxed);
                return;
            }
            pmem::wait_hint();
        }
    }
};

}  // namespace ferrite::combining
