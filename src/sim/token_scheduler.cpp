// Deterministic one-at-a-time scheduling (see ferrite/sim/token_scheduler.hpp).
#include "ferrite/sim/token_scheduler.hpp"

namespace ferrite::sim {

token_scheduler::token_scheduler(unsigned threads, std::uint64_t seed)
    : finished_(threads, 0), running_(threads), random_(mix(seed, 0x5c4ed)) {
    holder_ = static_cast<unsigned>(random_.below(threads));
}

void token_scheduler::wait_for_token(std::unique_lock<std::mutex>& lock, unsigned tid) {
    turn_.wait(lock, [&] { return holder_ == tid; });
}

void token_scheduler::pass_locked() {
    if (running_ == 0) return;
    // Draw among the unfinished threads: the k-th unfinished one.
    auto k = random_.below(running_);
    for (unsigned t = 0; t < finished_.size(); ++t) {
        if (finished_[t]) continue;
        if (k-- == 0) {
            holder_ = t;
            break;
        }
    }
    turn_.notify_all();
}

void token_scheduler::enter(unsigned tid) {
    std::unique_lock lock(mutex_);
    wait_for_token(lock, tid);
}

void token_scheduler::yield(unsigned tid) {
    std::unique_lock lock(mutex_);
    pass_locked();
    wait_for_token(lock, tid);
}

void token_scheduler::leave(unsigned tid) {
    std::unique_lock lock(mutex_);
    finished_[tid] = 1;
    --running_;
    pass_locked();
}

}  // namespace ferrite::sim
