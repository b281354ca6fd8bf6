// ferrite/sim/token_scheduler.hpp: run a multi-threaded workload one thread at a time, in an
// order drawn from a seed, so that a multi-threaded crash is reproducible.
//
// Exactly one thread holds the token and runs; the others wait. The session calls yield()
// at every persistence event of a worker, which passes the token to a thread drawn at random
// (possibly the same one). The interleaving, and so the k-th persistence event of the whole
// run, is then a function of the seed alone, provided the workload's threads do not wait for
// each other outside persistence events (a spin loop must contain a persistence call or a
// yield point, or the run deadlocks: structures with waiting call pmem-level hooks that the
// session forwards here).
//
// Threads are numbered 0..threads-1. enter() blocks until the thread first holds the token;
// leave() marks it finished and passes the token on.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ferrite/sim/rng.hpp"

namespace ferrite::sim {

class token_scheduler {
public:
    token_scheduler(unsigned threads, std::uint64_t seed);

    void enter(unsigned tid);
    void yield(unsigned tid);
    void leave(unsigned tid);

private:
    void pass_locked();  // draw the next holder among unfinished threads
    void wait_for_token(std::unique_lock<std::mutex>& lock, unsigned tid);

    std::mutex mutex_;
    std::condition_variable turn_;
    std::vector<char> finished_;
    unsigned holder_ = 0;
    unsigned running_;
    rng random_;
};

}  // namespace ferrite::sim
