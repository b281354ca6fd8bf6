// ferrite/sim/session.hpp: the crash simulator's view of one pool while a program runs.
//
// A session tracks one region (a mapped pool) with a shadow media image (media_image.hpp)
// and receives, through pmem's persistence_observer hook, every pwb / pfence / psync / NT
// store of the threads bound to it. Threads bind with session::binding (RAII; bindings nest,
// so a worker that reaches a crash point can bind itself to a second session, recover a crash
// image under it, and come back). Calls from threads bound to no session, or to addresses
// outside the region, have no effect on any image.
//
// Each observed call is one *persistence event*, numbered from 1 in the order the session
// sees them. Before event k takes effect the session calls the at_event hook (if any) with
// k: the campaign uses it to take crash point k. With a token_scheduler, every event is also
// a scheduling point, so the k-th event of a multi-threaded run is a function of the seed.
//
// Per call site (site_registry.hpp) the session counts calls, double flushes (a pwb of a
// line with nothing new since the last write-back this thread queued or the media holds) and
// empty fences (nothing queued), and skips calls from disabled sites (mutation testing).
//
// While the process has at least one session, the observer is installed: the primitives then
// issue no real instruction (this is a simulation: only the images matter).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "ferrite/sim/media_image.hpp"
#include "ferrite/sim/site_registry.hpp"
#include "ferrite/sim/token_scheduler.hpp"

namespace ferrite::sim {

class session {
public:
    struct options {
        token_scheduler* scheduler = nullptr;               // deterministic interleaving
        std::function<void(std::uint64_t event)> at_event;  // before event k takes effect
    };

    session(std::byte* base, std::size_t size, unsigned threads, site_registry& sites,
            options opts);
    ~session();
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    // Binds the calling thread as `tid` (< threads) for its lifetime, restoring the
    // previous binding after. A binding to nullptr unbinds the thread for its lifetime.
    class binding {
    public:
        binding(session* s, unsigned tid) noexcept;
        ~binding();
        binding(const binding&) = delete;
        binding& operator=(const binding&) = delete;

    private:
        session* prev_session_;
        unsigned prev_tid_;
    };

    std::uint64_t events() const noexcept { return events_.load(std::memory_order_relaxed); }

    // The region as it could be after a crash now (media_image::crash_image), drawn from
    // `seed`. No thread bound to the session may be running (stopped or parked by the
    // scheduler). Allocates only when `out` is smaller than the region.
    void crash_image(std::uint64_t seed, std::vector<std::byte>& out);

    // Observer entry points (called through the process-wide observer).
    void on_pwb(unsigned tid, const void* line, const pmem::site& where) noexcept;
    void on_fence(unsigned tid, const pmem::site& where, site_kind kind) noexcept;
    void on_nt_store(unsigned tid, void* dst, std::size_t bytes, const pmem::site& where) noexcept;
    // A bound thread spins waiting for another: pass the scheduler's token (no event).
    void on_wait(unsigned tid) noexcept;

private:
    std::uint64_t next_event(unsigned tid) noexcept;  // yield, count, run the hook
    void queue_locked(unsigned tid, std::size_t line, std::uint64_t mask, site_registry::site_id id,
                      bool check_redundant) noexcept;

    std::mutex mutex_;  // guards media_ and pending_
    media_image media_;
    std::vector<std::vector<line_snapshot>> pending_;  // per thread
    std::vector<const line_snapshot*> pending_view_;   // scratch for crash_image
    site_registry& sites_;
    options options_;
    std::atomic<std::uint64_t> events_{0};
};

}  // namespace ferrite::sim
