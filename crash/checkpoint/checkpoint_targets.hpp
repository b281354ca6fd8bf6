// crash/checkpoint/checkpoint_targets.hpp: crash-test targets of the checkpoint layer
// (ferrite/checkpoint: CpNvm).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

#include "ferrite/pmem/primitives.hpp"
#include "ferrite/sim/target.hpp"

namespace ferrite::crash::checkpoint_targets {

// Lockstep workloads (every operation ends in a checkpoint that commits): the epochs a
// crash image may hold, counted in operations. `low`: the most operations any thread had
// returned (a returned checkpoint committed its epoch); `high`: the most any had invoked.
struct epoch_bounds {
    std::uint64_t low = 0, high = 0;
};
inline epoch_bounds operation_bounds(const sim::progress_snapshot& at_crash, unsigned threads) {
    epoch_bounds b;
    for (unsigned t = 0; t < threads; ++t) {
        b.low = std::max(b.low, at_crash[t].completed);
        b.high = std::max(b.high, at_crash[t].completed + (at_crash[t].pending ? 1 : 0));
    }
    return b;
}

// Replay modes (checkpoint/checkpointer.hpp): a run of an odd seed with two threads or more
// replays in the background, and its last thread is the replayer (replay_pending() until
// every worker finished and nothing committed is left); the other runs replay in line. So
// one campaign crashes both, the background runs also during a replay that overlaps the next
// epoch's operations, marks and barrier.
inline bool background_run(const sim::run_config& c) { return c.threads >= 2 && c.seed % 2 == 1; }
inline unsigned workers_of(const sim::run_config& c) { return background_run(c) ? c.threads - 1 : c.threads; }

// The replayer thread of a background run: `step` is replay_pending(); `finished` counts the
// workers that returned (after their last checkpoint). Spins through wait_hint(), a yield
// point under the crash simulator.
template <class Step>
void run_replayer(Step&& step, const std::atomic<unsigned>& finished, unsigned workers) {
    for (unsigned idle = 1;; ++idle) {
        const bool done = finished.load(std::memory_order_acquire) == workers;
        if (step()) continue;
        if (done) return;  // every commit came before `done` was read: all replayed
        pmem::wait_hint();
        // Free-running (--moments random) the hint is a pause: let the workers have the core
        // now and then. (At every spin it cost 4x the time of an events campaign: under the
        // token scheduler a yield only hands the CPU to other processes.)
        if (idle % 64 == 0) std::this_thread::yield();
    }
}

// cpnvm-counter: the epoch protocol under a program that checkpoints after every operation
// (cpnvm_counter_target.cpp).
void register_cpnvm_counter_target(sim::target_registry&);
// cpnvm-map: the B+-tree ported to CpNvm in a program image (cpnvm_map_target.cpp).
void register_cpnvm_map_target(sim::target_registry&);

}  // namespace ferrite::crash::checkpoint_targets
