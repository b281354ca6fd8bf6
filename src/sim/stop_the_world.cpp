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
// Read by the signal handler on the same thread: atomics, with signal fences where order matters.
thread_local std::atomic<bool> tls_in_critical{false};

void futex_wait(std::atomic<int>* word, int expected) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<int>* word) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Honour the stop request in the calling worker's slot, if any, by parking until the
// controller resumes. Runs with the stop signal blocked (in the handler, or masked by the
// caller), so it is never re-entered. The request names the generation of its stop: taking
// it clears it, so each request parks at most once, and a request whose stop is already over
// (re-sent while the worker was parking for it) is dropped. Async-signal-safe: atomics + futex.
void honour_stop_request() noexcept {
    auto* s = tls_slot;
    if (s == nullptr || s->state.load(std::memory_order_relaxed) != 1) return;
    const int request = s->requested.exchange(0, std::memory_order_acq_rel);
    if (request == 0) return;
    const int generation = request - 1;
    if (g_resume_generation.load(std::memory_order_acquire) != generation) return;  // stale
    s->state.store(2, std::memory_order_release);
    while (g_resume_generation.load(std::memory_order_acquire) == generation)
        futex_wait(&g_resume_generation, generation);
    s->state.store(1, std::memory_order_release);
}

void on_stop_signal(int) {
    const int saved = errno;
    // Inside a critical section the request stays in the slot: the section's end honours it.
    if (!tls_in_critical.load(std::memory_order_relaxed)) honour_stop_request();
    errno = saved;
}

}  // namespace

world_stopper::world_stopper(unsigned workers, unsigned resend_every)
    : slots_(std::make_unique<slot[]>(workers)), workers_(workers),
      resend_every_(resend_every == 0 ? 1 : resend_every) {
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
    // so often; the request carries this stop's generation, so a second signal for it is
    // harmless whenever it lands.
    const int request = g_resume_generation.load(std::memory_order_acquire) + 1;
    bool any = false;
    for (unsigned round = 0;; ++round) {
        bool running = false;
        for (unsigned t = 0; t < workers_; ++t) {
            if (slots_[t].state.load(std::memory_order_acquire) != 1) continue;
            running = any = true;
            if (round % resend_every_ == 0) {
                slots_[t].requested.store(request, std::memory_order_release);
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

world_stopper::critical_section::critical_section() noexcept {
    tls_in_critical.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // set before the section's first store
}

world_stopper::critical_section::~critical_section() {
    std::atomic_signal_fence(std::memory_order_seq_cst);  // cleared after the section's last store
    tls_in_critical.store(false, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    // A request that arrived inside the section is still in the slot (one arriving from here
    // on is taken by the handler, and then it is gone from the slot or stale). Honour it with
    // the signal masked, so a re-sent signal cannot park this worker a second time for it.
    if (tls_slot == nullptr || tls_slot->requested.load(std::memory_order_acquire) == 0) return;
    sigset_t block, previous;
    sigemptyset(&block);
    sigaddset(&block, stop_signal);
    ::pthread_sigmask(SIG_BLOCK, &block, &previous);
    honour_stop_request();
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace ferrite::sim
