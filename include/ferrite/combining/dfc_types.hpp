// ferrite/combining/dfc_types.hpp: the value types the DFC engine (dfc.hpp) shares with its
// callers and its structures: options, what recovery tells a thread, one collected
// operation, the trace policy and the statistics. Volatile only (no algorithm of its own and
// nothing a crash can leave half-written); the persistent layout is dfc_layout.hpp. Split out
// of dfc.hpp to keep the engine's header to the engine.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/pmem/counters.hpp"
#include "ferrite/pmem/pool.hpp"

namespace ferrite::alloc {
class buddy_heap;
}

namespace ferrite::combining {

struct dfc_options {
    bool elimination = true;  // pair opposite operations inside a phase (stack, deque)
    // The heap the node pool grows into once the region's nodes are all in use (null: the
    // pool keeps the region's capacity and a push beyond it answers `full`). A structure
    // that grew must be opened with its heap, between heap.recover() and
    // heap.finish_recovery() (dfc_node_store.hpp).
    alloc::buddy_heap* grow_from = nullptr;
    // create() only: nodes in the first grown chunk; chunk k holds this << (k - 1).
    std::uint64_t first_growth_nodes = 4096;
    // One thread per thread id at a time, enforced (dfc_tid_claims.hpp). false: not
    // enforced, the caller guarantees it; the benchmarks' no-tid-claims ablation, which
    // measures what the check costs. Volatile: chosen at every create/open.
    bool tid_claims = true;
    // The pool the region lies in (the catalog sets it): every operation, query and
    // recovery then first checks that the pool is still open and throws usage_error naming
    // it once it was closed, instead of touching an unmapped region. Unset: a bare region
    // that its caller keeps mapped.
    std::optional<pmem::pool_ref> in_pool = std::nullopt;
};

// What recovered(tid) tells a thread about its latest operation.
struct dfc_recovered_op {
    std::uint64_t seq = 0;      // 0: the thread never announced an operation
    bool took_effect = false;   // its announcement was durable: it was executed, exactly once
    std::uint64_t name = 0;     // the structure's operation code
    std::uint64_t param = 0;
    dfc_response response;      // valid when took_effect
};

// One collected operation, as the structure's combine() sees it.
struct dfc_op {
    unsigned tid;
    unsigned slot;
    std::uint64_t name, param, seq;
    bool answered;
};

// Trace policy (tests and crash targets): every response in linearization order, and the
// end of each committed phase. Called by the combiner only.
struct dfc_no_trace {
    void respond(const dfc_op&, const dfc_response&, std::uint64_t /*epoch*/) noexcept {}
    void phase_done(std::uint64_t /*epoch*/) noexcept {}
};

// Statistics: phases, operations, and the combiner's own persistence instructions (the
// papers' "DFC" figures; the announcements' are the rest of "DFC-TOTAL").
class dfc_stats {
public:
    void on_phase(std::size_t ops, const pmem::counters& c) noexcept {  // combiner only
        bump(phases_, 1);
        bump(ops_, ops);
        bump(pwb_, c.pwb_lines);
        bump(pfence_, c.pfences);
    }
    std::uint64_t phases() const noexcept { return phases_.load(std::memory_order_relaxed); }
    std::uint64_t ops() const noexcept { return ops_.load(std::memory_order_relaxed); }
    std::uint64_t combiner_pwbs() const noexcept { return pwb_.load(std::memory_order_relaxed); }
    std::uint64_t combiner_pfences() const noexcept { return pfence_.load(std::memory_order_relaxed); }
    double mean_batch_size() const noexcept {
        const auto p = phases();
        return p ? static_cast<double>(ops()) / static_cast<double>(p) : 0;
    }

private:
    static void bump(std::atomic<std::uint64_t>& a, std::uint64_t n) noexcept {
        a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    std::atomic<std::uint64_t> phases_{0}, ops_{0}, pwb_{0}, pfence_{0};
};

}  // namespace ferrite::combining
