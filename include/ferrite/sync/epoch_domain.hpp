// ferrite/sync/epoch_domain.hpp: epoch-based memory reclamation (volatile only).
//
// INTERFACE FIXED BY THE DURABLE-SETS PLAN (issue 18); implementation in src/sync/epoch_domain.cpp.
//
// Lock-free structures unlink a node while other threads may still be reading it. A thread
// pins the domain around every operation that dereferences shared nodes; an unlinked node is
// retired, and its reclaim function runs only when no thread that could hold a reference
// (every thread pinned when it was retired) is still pinned. Fraser's scheme (K. Fraser,
// "Practical lock-freedom", 2004, ch. 5), as ssmem (ASCYLIB) uses it in the durable-sets
// paper (L567-587): a global epoch, per-thread announced epochs, per-thread limbo lists by
// epoch; a list retired in epoch e is reclaimed once the global epoch reached e + 2.
//
//   ferrite::sync::epoch_domain domain;
//   {
//       auto pinned = domain.pin();                    // cheap: no lock, no persistence
//       ... read shared nodes, unlink one ...
//       domain.retire(node, [](void* p, void* ctx) { ... }, ctx);   // reclaimed later
//   }
//
// Rules (what the crash simulator and the structures rely on):
//   * pin(), retire() and the guard's destructor never wait for another thread (no lock, no
//     spin on another thread's progress): under the simulator's token scheduler only one
//     thread runs at a time. Advancing the epoch is a try: it fails and returns when some
//     pinned thread lags.
//   * Reclaim functions run on the retiring thread (inside retire() or the guard's
//     destructor, after a threshold of retired nodes), or in reclaim_all() / the destructor.
//   * pin() nests (a guard inside a guard on the same thread is allowed and cheap).
//   * Thread records are per domain, indexed by sync::this_thread_id(): at most
//     max_thread_ids threads pinned at once. A thread that exits leaves its limbo lists
//     behind; they are reclaimed by later threads with the same id or by the destructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ferrite::sync {

class epoch_domain {
public:
    using reclaim_fn = void (*)(void* node, void* context);

    epoch_domain();
    // Runs every pending reclaim function. No thread may be pinned.
    ~epoch_domain();
    epoch_domain(const epoch_domain&) = delete;
    epoch_domain& operator=(const epoch_domain&) = delete;

    class guard {
    public:
        guard(guard&& other) noexcept;
        guard& operator=(guard&&) = delete;
        ~guard();  // unpins (if outermost); may reclaim this thread's old limbo lists
    private:
        friend class epoch_domain;
        explicit guard(epoch_domain* d) noexcept : domain_(d) {}
        epoch_domain* domain_;
    };

    // Enter a critical section on the calling thread.
    [[nodiscard]] guard pin();

    // `node` is unreachable for threads that pin from now on; reclaim(node, context) runs
    // once no thread that was pinned at this call is still in that critical section.
    // The calling thread must be pinned.
    void retire(void* node, reclaim_fn reclaim, void* context);

    // Quiescent use only (no thread pinned, e.g. tests, shutdown): runs every pending
    // reclaim function now.
    void reclaim_all();

    // Retired nodes whose reclaim function has not run yet (approximate while threads run).
    std::size_t pending() const noexcept;

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace ferrite::sync
