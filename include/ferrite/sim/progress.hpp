// ferrite/sim/progress.hpp: what each worker had done when the crash came.
//
// Workloads generate every thread's operations from the run seed before the run, so the
// only dynamic history a checker needs is, per thread, how many operations had returned and
// whether the next one had been invoked. Both live in one atomic word per thread
// (2 * completed + pending), so a worker stopped by a signal at any instruction leaves a
// consistent value, and the controller reads it without locks or allocation.
//
// Per-operation results (what a pop returned, say) are written by the workload into its
// own preallocated arrays *before* end() publishes the operation as completed.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

namespace ferrite::sim {

inline constexpr unsigned max_threads = 256;

struct thread_progress {
    std::uint64_t completed = 0;  // operations 0..completed-1 returned before the crash
    bool pending = false;         // operation `completed` was invoked, had not returned
};

struct progress_snapshot {
    unsigned threads = 0;
    std::array<thread_progress, max_threads> per_thread{};
    const thread_progress& operator[](unsigned tid) const noexcept { return per_thread[tid]; }
};

class op_progress {
public:
    explicit op_progress(unsigned threads)
        : threads_(threads), words_(std::make_unique<std::atomic<std::uint64_t>[]>(threads)) {}

    void begin(unsigned tid) noexcept {  // operation `completed` is invoked
        auto w = words_[tid].load(std::memory_order_relaxed);
        words_[tid].store(w | 1, std::memory_order_release);
    }
    void end(unsigned tid) noexcept {  // ...and has returned
        auto w = words_[tid].load(std::memory_order_relaxed);
        words_[tid].store((w | 1) + 1, std::memory_order_release);
    }
    std::uint64_t completed(unsigned tid) const noexcept {
        return words_[tid].load(std::memory_order_acquire) >> 1;
    }
    progress_snapshot snapshot() const noexcept {
        progress_snapshot s;
        s.threads = threads_;
        for (unsigned t = 0; t < threads_; ++t) {
            const auto w = words_[t].load(std::memory_order_acquire);
            s.per_thread[t] = {w >> 1, (w & 1) != 0};
        }
        return s;
    }

private:
    unsigned threads_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> words_;
};

}  // namespace ferrite::sim
