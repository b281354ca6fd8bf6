// ferrite/combining/pfc_registry.hpp: how a thread finds its publication in each PFC instance.
//
// PFC allows many instances per process and threads that use an instance rarely or exit at
// any time (thesis L891: pthread keys are limited, so a thread-local map keyed by instance
// id). Each thread keeps a map instance id -> its publication node; ids come from a 64-bit
// counter and are never reused, so an entry can never be confused with a later instance.
//
// Ownership: a node is referenced by its thread (until the thread exits) and by the
// instance's list (while linked). The last to let go deletes it. A thread that exits marks
// its nodes abandoned: the combiner unlinks them at its next cleanup. An instance that is
// destroyed marks its nodes orphaned: the thread drops them the next time it adds an entry.
#pragma once

#include <atomic>
#include <cstdint>

namespace ferrite::combining {

struct pfc_node_base {
    std::atomic<int> refs{1};  // the thread's reference
    std::atomic<bool> abandoned{false};
    std::atomic<bool> orphaned{false};
    virtual ~pfc_node_base() = default;
    void acquire() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
};

std::uint64_t next_pfc_instance_id() noexcept;

// The calling thread's node for `instance`, or nullptr.
pfc_node_base* find_thread_node(std::uint64_t instance) noexcept;
// Record a new node for `instance` (taking over the thread's reference); drops orphans.
void add_thread_node(std::uint64_t instance, pfc_node_base* node);

}  // namespace ferrite::combining
