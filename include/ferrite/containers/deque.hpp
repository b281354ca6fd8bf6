// ferrite/containers/deque.hpp: ferrite::deque<T>, a durably linearizable double-ended queue
// that many threads use at once: persistent flat combining (PFC) applied to a deque, the
// direction the PFC thesis (Stuttgart 2025, ch. 7) names for future work.
//
// Every operation is a request to a flat-combining engine (ferrite/combining): one thread at
// a time, the combiner, serves the pending requests of all threads as one batch on a
// persistent ring buffer (persistent_deque_core.hpp: per-side push/pop elimination, one
// fence pair per batch, growth through the heap's confirm protocol). An operation that
// returned is durable; after a crash, recover() brings the deque back to a state that holds
// every returned operation and each interrupted one entirely or not at all. The guarantee is
// durable linearizability, not detectability: after a crash a thread cannot ask whether its
// interrupted operation took effect (ferrite's DFC structures can; compare their price).
//
//   using dq = ferrite::deque<std::uint64_t, ferrite::alloc::buddy_heap>;
//   dq d = dq::create(pool, heap, root.anchor);
//   d.push_back(1); d.push_front(0);          // any thread
//   std::optional<std::uint64_t> x = d.pop_front(), y = d.pop_back();
//   d.front(); d.back(); d.size();
//   // after a restart: heap.recover(); dq::recover(pool, heap, root.anchor);
//   //                  heap.finish_recovery(); dq d = dq::open(pool, heap, root.anchor);
//
// Engine selectors (vector.hpp): use_pfc (publication list: threads may come and go, many
// instances), use_fpfc (a slot per thread id), use_pfc_spin / use_fpfc_spin (pure spinning).
//
// Crash consistency: see persistent_deque_core.hpp. recover() must run after the heap's
// recover() and before its finish_recovery() (the deque confirms the blocks it keeps).
// open() and recover() validate the header first (deque_recovery.hpp): a damaged one throws
// damaged_pool (kind damaged_object, region "deque") and the pool is left as it was.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "ferrite/containers/open_checks.hpp"
#include "ferrite/containers/persistent_deque_core.hpp"
#include "ferrite/containers/vector.hpp"

namespace ferrite {

template <class T, class Heap, class EngineSelector = containers::use_pfc,
          class Trace = containers::no_trace>
class deque {
    using core = containers::persistent_deque_core<T, Heap, Trace>;
    using request = typename core::request;
    using handle = containers::combined<core, EngineSelector>;
    using op = containers::deque_op;

public:
    using value_type = T;
    using size_type = std::uint64_t;

    // Constructors ------------------------------------------------------------------------
    // A new deque whose header offset is stored in `anchor` (a persistent word of yours).
    static deque create(const pmem::pool_ref& pool, Heap& heap, std::uint64_t& anchor, std::size_t initial_capacity = 16,
                        containers::deque_options opts = {}, Trace trace = {}) {
        auto* h = core::create(pool, heap, anchor, initial_capacity);
        return deque(pool, heap, h, opts, std::move(trace));
    }
    // The deque `anchor` refers to (after recover() if the pool was not shut down cleanly).
    static deque open(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor, containers::deque_options opts = {},
                      Trace trace = {}) {
        containers::require_changeable(pool, heap, "ferrite::deque::open");
        return deque(pool, heap, core::open(pool, heap, anchor), opts, std::move(trace));
    }
    // After a crash: finish or undo what the interrupted combining pass left.
    static void recover(const pmem::pool_ref& pool, Heap& heap, std::uint64_t anchor) { core::recover(pool, heap, anchor); }

    deque(deque&&) noexcept = default;

    // Element access ----------------------------------------------------------------------
    std::optional<T> front() { return value_if(apply({op::front, {}, 0})); }
    std::optional<T> back() { return value_if(apply({op::back, {}, 0})); }

    // Capacity ----------------------------------------------------------------------------
    size_type size() { return apply({op::size, {}, 0}).n; }
    bool empty() { return size() == 0; }
    // Grow the ring to at least n elements now. True, or throws what made the growth fail
    // (the heap's exception: std::bad_alloc / ferrite::out_of_memory, confirm_table_full,
    // usage_error), having changed nothing.
    bool reserve(size_type n) { return apply({op::reserve, {}, n}).ok; }

    // Modifiers (pushes: true, or they throw as reserve does; pops: nullopt when empty) ----
    bool push_back(const T& v) { return apply({op::push_back, v, 0}).ok; }
    bool push_front(const T& v) { return apply({op::push_front, v, 0}).ok; }
    std::optional<T> pop_back() { return value_if(apply({op::pop_back, {}, 0})); }
    std::optional<T> pop_front() { return value_if(apply({op::pop_front, {}, 0})); }

    // Single-threaded use (after recovery, or with no other thread using the deque).
    std::vector<T> unsynchronized_contents() const {
        c_.core().require_open("ferrite::deque::unsynchronized_contents");
        return c_.core().contents();
    }
    size_type unsynchronized_capacity() const {
        c_.core().require_open("ferrite::deque::unsynchronized_capacity");
        return c_.core().capacity();
    }
    combining::combining_stats stats() const noexcept { return c_.stats(); }  // combining/stats.hpp
    double mean_batch_size() const noexcept { return c_.mean_batch_size(); }
    Trace& trace() noexcept { return c_.core().trace(); }

private:
    deque(const pmem::pool_ref& pool, Heap& heap, containers::deque_header* h, containers::deque_options opts, Trace trace)
        : c_(pool, heap, h, opts, std::move(trace)) {}

    typename core::response apply(const request& r) {
        c_.core().require_open("ferrite::deque");
        return c_.apply(r);
    }
    static auto value_if(const typename core::response& r) { return handle::value_if(r); }

    handle c_;  // the engine, which holds the core
};

}  // namespace ferrite
