// ferrite/sim/stop_the_world.hpp: stop every worker thread at an arbitrary instruction.
//
// For crash points at "a random moment" (as opposed to the k-th persistence event), the
// campaign's controller thread stops all workers with a signal (SIGUSR2), takes the crash
// image while they are parked, and lets them go on. A worker can be stopped between any two
// instructions, mid-operation, mid-combine, between two stores to one line, except inside
// the simulator's own bookkeeping: a signal that arrives inside a critical section (the
// session's observer callbacks) is honoured when the section ends, so the controller never
// finds the shadow media image half-updated.
//
// Rules for code running in stopped workers: the controller allocates nothing and takes no
// lock a worker could hold while the world is stopped (a worker may be parked inside malloc);
// it copies the pool, the session state (after the critical section) and the workload's
// lock-free progress words, and does everything else after resume().
//
// One world_stopper at a time per process. Not usable under ThreadSanitizer (which delays
// asynchronous signals to its own safe points); the event-mode crashes cover TSan builds.
#pragma once

#include <atomic>
#include <memory>
#include <pthread.h>
#include <vector>

namespace ferrite::sim {

class world_stopper {
public:
    // A worker that has not parked after `resend_every` polling rounds of stop() is signalled
    // again (its signal may have been lost to a race with registration). Tests lower it to
    // make the re-sent signals, and their races with the first one, frequent.
    explicit world_stopper(unsigned workers, unsigned resend_every = 1024);
    ~world_stopper();
    world_stopper(const world_stopper&) = delete;
    world_stopper& operator=(const world_stopper&) = delete;

    // Worker side: register before running, finish when done (never stopped afterwards).
    void register_worker(unsigned tid) noexcept;
    void finish_worker(unsigned tid) noexcept;

    // Controller side. stop() returns false when no worker is running (nothing stopped).
    bool stop() noexcept;
    void resume() noexcept;

    // Observer side: a stop that arrives inside a critical section parks at its end.
    struct critical_section {
        critical_section() noexcept;
        ~critical_section();
        critical_section(const critical_section&) = delete;
        critical_section& operator=(const critical_section&) = delete;
    };

    struct slot {
        pthread_t thread{};
        std::atomic<int> state{0};  // 0 not started, 1 running, 2 parked, 3 finished
        // Set by the controller before each signal to its stop's generation + 1, taken (and
        // cleared) by the one that parks for it: a signal that arrives after its stop was
        // honoured finds it clear, or naming a stop already resumed, and is ignored.
        std::atomic<int> requested{0};
    };

private:
    std::unique_ptr<slot[]> slots_;
    unsigned workers_;
    unsigned resend_every_;
};

}  // namespace ferrite::sim
