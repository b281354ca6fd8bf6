// ferrite/combining/dfc_types.hpp: the value types the DFC engine (dfc.hpp) shares with its
// callers and its structures: options, what recovery tells a thread, one collected
// operation, and the trace policy's default (statistics and traces: stats.hpp). Volatile only (no algorithm of its own and
// nothing a crash can leave half-written); the persistent layout is dfc_layout.hpp. Split out
// of dfc.hpp to keep the engine's header to the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "ferrite/combining/dfc_layout.hpp"
#include "ferrite/combining/stats.hpp"
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

// The trace policy's default (the one vocabulary of stats.hpp: applied(dfc_op, dfc_response)
// for every response in linearization order, pass_done() after each committed phase).
using dfc_no_trace = no_trace;

}  // namespace ferrite::combining
