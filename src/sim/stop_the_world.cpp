// Signal-based stop-the-world (see ferrite/sim/stop_the_world.hpp).
#include "ferrite/sim/stop_the_world.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace ferrite::sim {
namespace {

constexpr int stop_signal = SIGUSR2;

std::atomic<int> g_resume_generation{0};  // futex word: bumped by resume()
thread_local world_stopper::slot* tls_slot = nullptr;
thread_local bool tls_in_critical = false;
thread_local bool tls_park_deferred = false;

void futex_wait(std::atomic<int>* word, int expected) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<int>* word) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Park the calling worker until the controller resumes. Async-signal-safe: atomics + futex.
void park() noexcept {
    auto* s = tls_slot;
    const int generation = g_resume_generation.load(std::memory_order_acquire);
    s->state.store(2, std::memory_order_release);
    while (g_resume_generation.load(std::memory_order_acquire) == generation)
        futex_wait(&g_resume_generation, generation);
    s->requested.store(0, std::memory_order_relaxed);  // a re-sent signal for this stop is stale
    s->state.store(1, std::memory_order_release);
}

void on_stop_signal(int) {
    const int saved = errno;
    if (tls_slot != nullptr && tls_slot->state.load(std::memory_order_relaxed) == 1 &&
        tls_slot->requested.exchange(0, std::memory_order_acq_rel) == 1) {
        if (tls_in_critical)
            tls_park_deferred = true;
        else
            park();
    }
    errno = saved;
}

}  // namespace

world_stopper::world_stopper(unsigned workers)
    : slots_(std::make_unique<slot[]>(workers)), workers_(workers) {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(stop_signal, &sa, nullptr);
}

world_stopper::~world_stopper() {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    ::sigaction(stop_signal, &sa, nullptr);
}

void world_stopper::register_worker(unsigned tid) noexcept {
    slots_[tid].thread = ::pthread_self();
    tls_slot = &slots_[tid];
    slots_[tid].state.store(1, std::memory_order_release);
}

void world_stopper::finish_worker(unsigned tid) noexcept {
    // Block the signal first: a stop sent from now on stays pending and is never delivered,
    // and the controller, seeing "finished", does not wait for this thread.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, stop_signal);
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    slots_[tid].state.store(3, std::memory_order_release);
    tls_slot = nullptr;
}

bool world_stopper::stop() noexcept {
    // Signal every running worker, then wait until each is parked or finished. A worker that
    // registers meanwhile, or whose signal is still being delivered, is signalled again every
    // so often (a second signal while parked or in a critical section is harmless).
    bool any = false;
    for (unsigned round = 0;; ++round) {
        bool running = false;
        for (unsigned t = 0; t < workers_; ++t) {
            if (slots_[t].state.load(std::memory_order_acquire) != 1) continue;
            running = any = true;
            if (round % 1024 == 0) {
                slots_[t].requested.store(1, std::memory_order_release);
                ::pthread_kill(slots_[t].thread, stop_signal);
            }
        }
        if (!running) return any;
        ::sched_yield();
    }
}

void world_stopper::resume() noexcept {
    g_resume_generation.fetch_add(1, std::memory_order_acq_rel);
    futex_wake_all(&g_resume_generation);
    // Wait until every parked worker has left park(): otherwise the next stop() could take a
    // stale "parked" for a worker that is about to run again.
    for (unsigned t = 0; t < workers_; ++t)
        while (slots_[t].state.load(std::memory_order_acquire) == 2) ::sched_yield();
}

world_stopper::critical_section::critical_section() noexcept { tls_in_critical = true; }

world_stopper::critical_section::~critical_section() {
    tls_in_critical = false;
    if (tls_park_deferred) {
        tls_park_deferred = false;
        if (tls_slot != nullptr) park();
    }
}

}  // namespace ferrite::sim
